//! Hostile clients against a real server on loopback: history readers by the thousand, a client that
//! creates games until refused, concurrent creates at the game limit, absurd setups, trickled and
//! oversized bodies, one address holding every connection, a store whose log has a hole. Each test
//! names what it proves; none depends on timing for its verdict beyond generous bounds.

use std::io::{Read as _, Write as _};
use std::net::{IpAddr, Ipv4Addr, TcpStream};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use coffer_server::{SqliteConfig, SqliteStore};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

use crate::bad_input::{charges_game, client, create};
use crate::long_game::{Lcg, play_and_store, stored_game, write_long_game};
use crate::support::{Server, game_and_tokens, get_json, metric};

// Linked so that `Registry::with_static` finds them: the long game is played in process.
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

/// Limits raised out of the way of tests that play as fast as the server answers.
pub(crate) const FAST: [&str; 4] = [
    "--actions-per-second",
    "1000000",
    "--action-burst",
    "1000000",
];

/// A server on the store `db` with the [`FAST`] limits, finished games leaving memory 0.2 s after they
/// end, and the `serve` option `extra` (a flag and its value).
pub(crate) fn start_lingering(db: &Path, extra: [&str; 2]) -> Server {
    Server::start(
        db,
        &[
            FAST[0],
            FAST[1],
            FAST[2],
            FAST[3],
            "--finished-linger",
            "0.2",
            extra[0],
            extra[1],
        ],
    )
}

/// Checks that the server at `base` answers `/healthz` with 200, as `http` reaches it.
async fn assert_healthy(http: &Client, base: &str) {
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

/// The value of the counter `name` in the server's metrics.
/// Plays random legal actions on a two-seat game until `stop`, counting what was applied; panics on
/// any answer but success, a stale sequence (the other seat's client acted first) or the game's end.
pub(crate) async fn keep_acting(
    client: Client,
    base: String,
    game: u64,
    tokens: Vec<String>,
    stop: Arc<AtomicBool>,
) -> u64 {
    let mut applied = 0;
    let mut rng = Lcg(game);
    'play: while !stop.load(Ordering::Relaxed) {
        let mut anyone = false;
        for token in &tokens {
            let legal: Value = client
                .get(format!("{base}/api/games/{game}/legal"))
                .bearer_auth(token)
                .send()
                .await
                .expect("legal answers")
                .json()
                .await
                .expect("legal is JSON");
            let actions = legal["actions"].as_array().expect("actions");
            if actions.is_empty() {
                continue;
            }
            anyone = true;
            let action = &actions[rng.below(actions.len())];
            let response = client
                .post(format!("{base}/api/games/{game}/actions"))
                .bearer_auth(token)
                .json(&json!({"action": action, "expected_seq": legal["seq"]}))
                .send()
                .await
                .expect("act answers");
            let status = response.status();
            let body = response.text().await.unwrap();
            match status {
                StatusCode::OK => applied += 1,
                StatusCode::CONFLICT if body.contains("\"stale\"") => {}
                StatusCode::CONFLICT if body.contains("\"finished\"") => break 'play,
                _ => panic!("game {game}: an action was answered {status}: {body}"),
            }
        }
        if !anyone {
            let summary: Value = client
                .get(format!("{base}/api/games/{game}"))
                .send()
                .await
                .expect("the game answers")
                .json()
                .await
                .expect("JSON");
            if summary["finished"] == true {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    applied
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifteen_hundred_history_readers_of_a_100000_action_game_stop_no_game_and_replay_a_bounded_stretch_each()
 {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let every = 64u64;
    let long = write_long_game(&db, 100_000, every);
    let server = Server::start(
        &db,
        &[
            FAST[0],
            FAST[1],
            FAST[2],
            FAST[3],
            "--snapshot-every",
            "64",
            // Out of the way, so that every reader reaches the replays and their bound is what holds.
            "--reads-per-second",
            "1000000",
            "--read-burst",
            "1000000",
            "--max-connections-per-client",
            "4000",
        ],
    );
    let base = server.base.clone();
    let http = Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap();
    let summary: Value = get_json(&http, format!("{base}/api/games/{long}")).await;
    assert_eq!(
        summary["seq"], 100_000,
        "the long game is recovered: {summary}"
    );
    assert!(summary.get("stopped").is_none(), "{summary}");

    // The first 100 and the last 100 cost the same replay: a snapshot interval at most, plus the page.
    let replayed = "coffer_history_replayed_actions_total";
    for since in [0u64, 99_900] {
        let before = metric(&http, &base, replayed).await;
        let page: Vec<Value> = get_json(
            &http,
            format!("{base}/api/games/{long}/events?since={since}&limit=100"),
        )
        .await;
        let seqs: Vec<u64> = page.iter().map(|m| m["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, ((since + 1)..=(since + 100)).collect::<Vec<_>>());
        let cost = metric(&http, &base, replayed).await - before;
        assert!(
            cost <= (every - 1 + 100) as f64,
            "reading 100 actions after {since} replayed {cost} actions"
        );
    }

    // Two other games keep acting through the storm.
    let stop = Arc::new(AtomicBool::new(false));
    let mut players = Vec::new();
    let mut others = Vec::new();
    for seed in [1u64, 2] {
        let (game, tokens) = charges_game(&client(), &base, seed).await;
        others.push(game);
        players.push(tokio::spawn(keep_acting(
            client(),
            base.clone(),
            game,
            tokens,
            Arc::clone(&stop),
        )));
    }

    let readers = 1_500u64;
    let served = Arc::new(AtomicU64::new(0));
    let saturated = Arc::new(AtomicU64::new(0));
    let replayed_before = metric(&http, &base, replayed).await;
    let mut tasks = Vec::new();
    for reader in 0..readers {
        let http = http.clone();
        let url = format!(
            "{base}/api/games/{long}/events?since={}&limit=100",
            (reader * 7919) % 99_900
        );
        let (served, saturated) = (Arc::clone(&served), Arc::clone(&saturated));
        tasks.push(tokio::spawn(async move {
            let response = http
                .get(url)
                .send()
                .await
                .expect("every reader is answered");
            let status = response.status();
            let body = response.text().await.unwrap();
            match status {
                StatusCode::OK => {
                    let page: Vec<Value> = serde_json::from_str(&body).unwrap();
                    assert_eq!(page.len(), 100);
                    served.fetch_add(1, Ordering::Relaxed);
                }
                StatusCode::SERVICE_UNAVAILABLE => {
                    assert!(body.contains("\"saturated\""), "{body}");
                    assert!(
                        !body.contains("ruleset"),
                        "a saturated server blames no ruleset: {body}"
                    );
                    saturated.fetch_add(1, Ordering::Relaxed);
                }
                _ => panic!("a reader was answered {status}: {body}"),
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    let mut applied = 0;
    for player in players {
        applied += player.await.unwrap();
    }
    let served = served.load(Ordering::Relaxed);
    let saturated = saturated.load(Ordering::Relaxed);
    println!(
        "{served} readers served, {saturated} answered saturated, {applied} actions applied meanwhile"
    );
    assert_eq!(served + saturated, readers);
    assert!(served > 0, "some readers are served");
    assert!(applied > 0, "the other games acted during the storm");
    let cost = metric(&http, &base, replayed).await - replayed_before;
    assert!(
        cost <= (served * (every - 1 + 100)) as f64,
        "{served} reads replayed {cost} actions: more than a snapshot interval plus a page each"
    );
    for game in std::iter::once(long).chain(others) {
        let summary: Value = get_json(&http, format!("{base}/api/games/{game}")).await;
        assert!(
            summary.get("stopped").is_none(),
            "game {game} stopped: {summary}"
        );
    }
    assert_eq!(
        metric(&http, &base, "coffer_games_stopped_total").await,
        0.0
    );
}

/// The resident and peak resident sizes of process `pid`, in bytes.
fn memory_of(pid: u32) -> (u64, u64) {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the server's status");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map(|kib| kib * 1024)
            .unwrap_or_else(|| panic!("no {name} in the server's status"))
    };
    (field("VmRSS:"), field("VmHWM:"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_creating_games_until_refused_keeps_the_server_within_its_memory_budget() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    // Started once to learn what an empty server holds, then with a budget 24 MiB above it.
    let probe = Server::start(&dir.path().join("probe.db"), &[]);
    let (empty, _) = memory_of(probe.pid());
    drop(probe);
    let budget_mib = (empty >> 20) + 24;
    let budget = budget_mib << 20;
    let server = Server::start(
        &db,
        &[
            "--max-memory-mib",
            &budget_mib.to_string(),
            "--max-games-per-client",
            "1000000",
            "--durability",
            "process-crash",
        ],
    );
    let http = client();
    // A game larger than the per-game budget is refused before it is hosted.
    let deck = vec!["militia"; 1000];
    let response = http
        .post(format!("{}/api/games", server.base))
        .json(&json!({"ruleset": "story-acts", "players": 4, "config": {"deck": deck}}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "too_large");
    assert!(
        body["message"].as_str().unwrap().contains("KiB of state"),
        "{body}"
    );
    let mut created = 0u64;
    let refusal = loop {
        let response = http
            .post(format!("{}/api/games", server.base))
            .json(&json!({"ruleset": "story-acts", "players": 2, "config": {}}))
            .send()
            .await
            .unwrap();
        match response.status() {
            StatusCode::CREATED => created += 1,
            status => break (status, response.json::<Value>().await.unwrap()),
        }
        assert!(created < 200_000, "no refusal after {created} games");
    };
    assert_eq!(refusal.0, StatusCode::SERVICE_UNAVAILABLE, "{refusal:?}");
    assert_eq!(refusal.1["error"], "full");
    assert!(
        refusal.1["message"]
            .as_str()
            .unwrap()
            .contains("memory budget"),
        "{refusal:?}"
    );
    let (resident, peak) = memory_of(server.pid());
    println!(
        "{created} games created; resident {} MiB, peak {} MiB, budget {budget_mib} MiB (empty: {} MiB)",
        resident >> 20,
        peak >> 20,
        empty >> 20
    );
    assert!(created > 100, "the budget leaves room for games: {created}");
    // One create is checked at a time here: the peak passes the budget by at most one game's work.
    assert!(
        peak <= budget + (4 << 20),
        "peak {peak} past the budget {budget}"
    );
    // The server still answers, and reads still work.
    assert_healthy(&http, &server.base).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_gets_its_quota_of_games_and_another_address_still_creates() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("coffer.db"),
        &["--max-games-per-client", "5"],
    );
    let body = json!({"ruleset": "charges", "players": 2});
    let http = client();
    for _ in 0..5 {
        create(&http, &server.base, body.clone()).await;
    }
    let response = http
        .post(format!("{}/api/games", server.base))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(response.headers()["retry-after"], "1");
    let refused: Value = response.json().await.unwrap();
    assert_eq!(refused["error"], "quota", "{refused}");
    // Another loopback address is another client.
    let other = Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)))
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    create(&other, &server.base, body.clone()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_games_holds_exactly_under_sixty_concurrent_creates() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &["--max-games", "20"]);
    let http = client();
    let mut tasks = Vec::new();
    for _ in 0..60 {
        let (http, base) = (http.clone(), server.base.clone());
        tasks.push(tokio::spawn(async move {
            let response = http
                .post(format!("{base}/api/games"))
                .json(&json!({"ruleset": "charges", "players": 2}))
                .send()
                .await
                .unwrap();
            let status = response.status();
            let body: Value = response.json().await.unwrap();
            (status, body)
        }));
    }
    let mut created = 0;
    for task in tasks {
        let (status, body) = task.await.unwrap();
        match status {
            StatusCode::CREATED => created += 1,
            StatusCode::SERVICE_UNAVAILABLE => assert_eq!(body["error"], "full", "{body}"),
            _ => panic!("{status} {body}"),
        }
    }
    assert_eq!(created, 20);
    let health: Value = get_json(&http, format!("{}/healthz", server.base)).await;
    assert_eq!(health["games"], 20);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn absurd_player_and_seat_counts_are_refused_by_the_rulesets_range_before_any_token_is_drawn()
{
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &[]);
    let http = client();
    let open: Vec<u32> = (0..9_000).collect();
    for body in [
        json!({"ruleset": "charges", "players": 65_535}),
        json!({"ruleset": "charges", "players": 0}),
        json!({"ruleset": "story-acts", "players": 9_000, "open_seats": open}),
    ] {
        let started = Instant::now();
        let response = http
            .post(format!("{}/api/games", server.base))
            .json(&body)
            .send()
            .await
            .unwrap();
        let elapsed = started.elapsed();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let refused: Value = response.json().await.unwrap();
        let message = refused["message"].as_str().unwrap();
        assert!(message.contains("players: this ruleset takes"), "{message}");
        // Generous: the refusal reads the request and compares two numbers.
        assert!(elapsed < Duration::from_secs(2), "{elapsed:?}");
    }
    let duplicates = json!({"ruleset": "charges", "players": 2, "open_seats": [1, 1, 1, 1]});
    let created = create(&http, &server.base, duplicates).await;
    assert_eq!(created["tokens"][1], Value::Null);
    assert!(created["tokens"][0].is_string());
}

/// Sends `head` on a raw connection and reads what the server answers within `wait`.
fn raw_exchange(addr: std::net::SocketAddr, head: &str, wait: Duration) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.set_read_timeout(Some(wait)).unwrap();
    stream.write_all(head.as_bytes()).unwrap();
    let mut answer = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                answer.extend_from_slice(&buf[..n]);
                if answer.windows(4).any(|w| w == b"\r\n\r\n")
                    && String::from_utf8_lossy(&answer).contains('}')
                {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn a_body_announced_past_the_limit_is_refused_before_it_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &[]);
    let started = Instant::now();
    let answer = raw_exchange(
        server.addr,
        "POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10000000000\r\n\r\n",
        Duration::from_secs(10),
    );
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"too_large\""), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_trickled_body_is_answered_408_after_the_body_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &["--body-timeout", "1"]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"POST /api/games HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        .unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let mut buf = [0u8; 1024];
    // One byte every 200 ms: never the whole body.
    while started.elapsed() < Duration::from_secs(8) {
        let _ = stream.write_all(b" ");
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        if let Ok(n) = stream.read(&mut buf)
            && n > 0
        {
            answer.extend_from_slice(&buf[..n]);
            if String::from_utf8_lossy(&answer).contains('}') {
                break;
            }
        }
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"timeout\""), "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_holding_its_share_of_connections_leaves_the_rest_to_others() {
    let dir = tempfile::tempdir().unwrap();
    // 32 connections, so 8 per address.
    let server = Server::start(&dir.path().join("coffer.db"), &["--max-connections", "32"]);
    let (game, _) = charges_game(&client(), &server.base, 3).await;
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..31 {
        match tokio_tungstenite::connect_async(server.ws(&format!("/api/games/{game}/ws"))).await {
            Ok((socket, _)) => held.push(socket),
            Err(_) => refused += 1,
        }
    }
    assert_eq!(
        held.len(),
        8,
        "an address holds a quarter of the connections"
    );
    assert_eq!(refused, 23);
    // Another address is served at once.
    let other = Client::builder()
        .local_address(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 3)))
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    assert_healthy(&other, &server.base).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ruleset_name_of_60_kb_is_quoted_back_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &[]);
    let name = "x".repeat(60_000);
    let response = client()
        .post(format!("{}/api/games", server.base))
        .json(&json!({"ruleset": name, "players": 2}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let body = response.text().await.unwrap();
    assert!(body.len() < 400, "{} bytes: {}", body.len(), &body[..200]);
    assert!(body.contains("60000 bytes"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_reads_past_the_per_address_rate_are_refused_429_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("coffer.db"),
        &["--reads-per-second", "1", "--read-burst", "3"],
    );
    let http = client();
    let (game, _) = charges_game(&http, &server.base, 4).await;
    let mut statuses = Vec::new();
    for _ in 0..5 {
        let response = http
            .get(format!("{}/api/games/{game}/events", server.base))
            .send()
            .await
            .unwrap();
        statuses.push(response.status());
        if response.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(response.headers().contains_key("retry-after"));
            let body: Value = response.json().await.unwrap();
            assert_eq!(body["error"], "rate_limited");
            assert!(
                body["message"].as_str().unwrap().contains("reads"),
                "{body}"
            );
        }
    }
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::OK,
            StatusCode::TOO_MANY_REQUESTS,
            StatusCode::TOO_MANY_REQUESTS
        ]
    );
}

/// A store holding a finished-in-part charges game of `n` actions, played in process.
fn write_short_game(db: &Path, n: u64) -> u64 {
    let store = SqliteStore::open(db, SqliteConfig::default()).expect("the store opens");
    let id = 77u64;
    let mut game = stored_game(&store, id, "charges", (2, 5), json!({"max_rounds": 1000}));
    for seq in 1..=n {
        let chosen = (0..2)
            .find_map(|p| game.legal_actions(p).first().cloned().map(|a| (p, a)))
            .expect("someone may act");
        play_and_store(&store, id, &mut game, seq, chosen);
    }
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_stops_a_game_whose_last_action_was_deleted_or_whose_seq_was_bumped() {
    for (case, tamper) in [
        ("deleted", "DELETE FROM actions WHERE seq = 6"),
        ("bumped", "UPDATE games SET seq = seq + 1"),
        ("hole", "DELETE FROM actions WHERE seq = 3"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("coffer.db");
        let id = write_short_game(&db, 6);
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(tamper).unwrap();
        drop(conn);
        let server = Server::start(&db, &[]);
        let summary: Value = get_json(&client(), format!("{}/api/games/{id}", server.base)).await;
        let stopped = summary["stopped"]
            .as_str()
            .unwrap_or_else(|| panic!("{case}: the game is hosted as if whole: {summary}"));
        assert!(
            stopped.contains("action 6") || stopped.contains("no action 3"),
            "{case}: {stopped}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untampered_store_recovers_its_game_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let id = write_short_game(&db, 6);
    let server = Server::start(&db, &[]);
    let summary: Value = get_json(&client(), format!("{}/api/games/{id}", server.base)).await;
    assert_eq!(summary["seq"], 6);
    assert!(summary.get("stopped").is_none(), "{summary}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_leaves_memory_after_its_linger_and_frees_its_creators_quota() {
    let dir = tempfile::tempdir().unwrap();
    let server = start_lingering(
        &dir.path().join("coffer.db"),
        ["--max-games-per-client", "1"],
    );
    let http = client();
    let (game, tokens) = charges_game_short(&http, &server.base).await;
    // Played to its end by both seats.
    let stop = Arc::new(AtomicBool::new(false));
    keep_acting(http.clone(), server.base.clone(), game, tokens, stop).await;
    let summary: Value = get_json(&http, format!("{}/api/games/{game}", server.base)).await;
    assert_eq!(summary["finished"], true, "{summary}");
    // Finished, it no longer counts against its creator: another game can be created at once.
    create(
        &http,
        &server.base,
        json!({"ruleset": "charges", "players": 2}),
    )
    .await;
    let started = Instant::now();
    loop {
        let status = http
            .get(format!("{}/api/games/{game}", server.base))
            .send()
            .await
            .unwrap()
            .status();
        if status == StatusCode::NOT_FOUND {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the finished game is still hosted"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A two-seat charges game of one round.
pub(crate) async fn charges_game_short(http: &Client, base: &str) -> (u64, Vec<String>) {
    let created = create(
        http,
        base,
        json!({"ruleset": "charges", "players": 2, "seed": 9, "config": {"max_rounds": 1}}),
    )
    .await;
    game_and_tokens(&created)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_past_its_websockets_is_refused_429_while_spectators_still_connect() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &dir.path().join("coffer.db"),
        &["--max-sockets-per-token", "3"],
    );
    let (game, tokens) = charges_game(&client(), &server.base, 5).await;
    let seated = server.ws(&format!("/api/games/{game}/ws?token={}", tokens[0]));
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(tokio_tungstenite::connect_async(&seated).await.unwrap().0);
    }
    match tokio_tungstenite::connect_async(&seated).await {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
            assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
            let body = String::from_utf8_lossy(response.body().as_deref().unwrap_or_default())
                .into_owned();
            assert!(body.contains("\"quota\""), "{body}");
        }
        other => panic!("a fourth socket for seat 0: {:?}", other.map(|_| ())),
    }
    // The other seat and spectators are not held to seat 0's sockets.
    let other = server.ws(&format!("/api/games/{game}/ws?token={}", tokens[1]));
    held.push(tokio_tungstenite::connect_async(&other).await.unwrap().0);
    let spectator = server.ws(&format!("/api/games/{game}/ws"));
    for _ in 0..4 {
        held.push(
            tokio_tungstenite::connect_async(&spectator)
                .await
                .unwrap()
                .0,
        );
    }
    // A closed socket gives its place back.
    let mut first = held.remove(0);
    first.close(None).await.unwrap();
    drop(first);
    let mut again = None;
    for _ in 0..50 {
        if let Ok((socket, _)) = tokio_tungstenite::connect_async(&seated).await {
            again = Some(socket);
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(again.is_some(), "seat 0's closed socket freed its place");
}

#[test]
fn the_answers_hyper_writes_itself_400_414_431_carry_json_bodies() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &[]);
    let long_target = format!("GET /{} HTTP/1.1\r\nhost: x\r\n\r\n", "a".repeat(70_000));
    let many_headers = format!(
        "GET /healthz HTTP/1.1\r\nhost: x\r\n{}\r\n",
        (0..200)
            .map(|i| format!("x-{i}: 1\r\n"))
            .collect::<String>()
    );
    for (what, head, status) in [
        ("garbage", "NOT HTTP AT ALL\r\n\r\n".to_owned(), "400"),
        ("a 70 KB target", long_target, "414"),
        ("200 headers", many_headers, "431"),
    ] {
        let answer = raw_exchange(server.addr, &head, Duration::from_secs(5));
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {status} ")),
            "{what}: {answer}"
        );
        let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
        assert!(
            head.contains("content-type: application/json"),
            "{what}: {head}"
        );
        let body: Value =
            serde_json::from_str(body).unwrap_or_else(|e| panic!("{what}: {e}: {body}"));
        assert!(
            body["error"].is_string() && body["message"].is_string(),
            "{what}: {body}"
        );
    }
    // The server still answers.
    let ok = raw_exchange(
        server.addr,
        "GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        Duration::from_secs(5),
    );
    assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bundled_ruleset_at_its_most_players_fits_the_default_game_size() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &[]);
    let http = client();
    let rulesets: Value = get_json(&http, format!("{}/api/rulesets", server.base)).await;
    let rulesets = rulesets.as_array().expect("a list of rulesets");
    assert_eq!(rulesets.len(), 3, "{rulesets:?}");
    for ruleset in rulesets {
        let key = ruleset["key"].as_str().unwrap();
        let most = ruleset["description"]["max_players"].as_u64().unwrap();
        let response = http
            .post(format!("{}/api/games", server.base))
            .json(&json!({"ruleset": key, "players": most}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        assert_eq!(
            status,
            StatusCode::CREATED,
            "{key} at {most} players: {}",
            response.text().await.unwrap()
        );
    }
}

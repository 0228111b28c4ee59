//! Clocks (liveness), on real servers on loopback with time controls of 150-300 ms: a seat that lets its
//! clock run out has its move played by the random bot, once per decision, soon after the deadline; a
//! seat that acts in time never times out and its bank grows by its increment; the logs replay to every
//! stored hash without any clock; a restarted server runs the clocks of the games it recovers; and
//! malformed time controls are refused in words.

use std::collections::BTreeSet;
use std::time::Instant;

use coffer_core::Setup as CoreSetup;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::client::{
    Api, FAST, GAME_WAIT, Ws, play_first_legal, replay_log, stored_actions, until_finished, ws_path,
};
use crate::support::Server;

/// How late after its deadline a timeout may fire in these tests (the server's timer wheel has 1 ms
/// slots; the rest is a loaded test machine's scheduling).
const LATE: u64 = 50;

/// Creates a game from `body`; answers its id and seat tokens (`None` for bot seats).
async fn create(api: &Api, body: Value) -> (u64, Vec<Option<String>>) {
    let reply = api.post("/api/games", None, body.to_string()).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let created = reply.json();
    let tokens = created["tokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().map(str::to_owned))
        .collect();
    (created["game"].as_u64().unwrap(), tokens)
}

/// The stored log of `game` replays in this process to every stored hash; answers the sequence numbers
/// of the moves its timeouts played.
fn replayed_timeouts(db: &std::path::Path, game: u64, setup: CoreSetup) -> BTreeSet<u64> {
    let mut timeouts = BTreeSet::new();
    for action in replay_log(db, game, "charges", setup) {
        if let Some(key) = &action.key
            && let Some(at) = key.strip_prefix("~timeout@")
        {
            assert_eq!(at.parse::<u64>().unwrap(), action.seq - 1, "{key}");
            timeouts.insert(action.seq - 1);
        }
    }
    timeouts
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_whose_clock_runs_out_has_its_move_played_once_soon_after_the_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 2});
    let (game, tokens) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 21, "config": config,
               "clock": {"per_action_ms": 200, "abandon_after": 0}, "on_timeout": "bot"}),
    )
    .await;
    assert!(
        tokens.iter().all(Option::is_some),
        "both seats are people's"
    );
    // A spectator sees every timeout as it fires.
    let mut ws = Ws::connect(&server.ws(&ws_path(game, None, None))).await;
    let mut fired = Vec::new();
    let started = Instant::now();
    loop {
        let message = ws.json().await;
        match message["type"].as_str() {
            Some("timeout") => fired.push(message),
            Some("action") if message["by"] != "timeout" => {
                panic!("a move nobody made was not the timeout's: {message}")
            }
            Some("action") if message["view"]["table"]["outcome"] != "Ongoing" => break,
            Some("clock" | "action" | "view" | "hello") => {}
            other => panic!("unexpected {other:?}: {message}"),
        }
        assert!(started.elapsed() < GAME_WAIT, "the game did not end");
    }
    until_finished(&api, game).await;
    assert!(!fired.is_empty());
    let mut lateness = Vec::new();
    for timeout in &fired {
        let late = timeout["fired_unix_ms"].as_u64().unwrap() as i64
            - timeout["deadline_unix_ms"].as_u64().unwrap() as i64;
        assert!(late >= 0, "fired before its deadline: {timeout}");
        lateness.push(late as u64);
    }
    lateness.sort_unstable();
    eprintln!("timeouts fired this late after their deadlines (ms, sorted): {lateness:?}");
    assert!(
        *lateness.last().unwrap() <= LATE,
        "timeouts fired late (ms, sorted): {lateness:?}"
    );
    assert!(server.terminate().success());
    // Every move was a timeout's, once per decision, and the log replays without any clock.
    let timeouts = replayed_timeouts(&db, game, CoreSetup::new(2, 21).config(config));
    let announced: BTreeSet<u64> = fired.iter().map(|t| t["seq"].as_u64().unwrap()).collect();
    assert_eq!(announced.len(), fired.len(), "one timeout per decision");
    // The spectator connected after the game was made: it may have missed the first timeout.
    let first = *announced.first().unwrap();
    assert!(first <= 1, "the spectator missed timeouts up to {first}");
    let seen: BTreeSet<u64> = timeouts.iter().copied().filter(|&s| s >= first).collect();
    assert_eq!(seen, announced, "each announced timeout played one move");
    assert_eq!(
        timeouts.len() as u64,
        stored_actions(&db, game).len() as u64,
        "nobody but the timeouts acted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_acting_in_time_never_times_out_and_its_bank_grows_by_the_increment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let (game, tokens) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 4, "config": {"max_rounds": 2},
               "bots": {"1": "random"}, "clock": {"bank_ms": 300, "increment_ms": 200}}),
    )
    .await;
    let token = tokens[0].clone().expect("seat 0 is a person's");
    let summary = api.summary(game).await;
    assert_eq!(
        summary["clock"],
        json!({"bank_ms": 300, "increment_ms": 200})
    );
    // Three quick actions: the bank gained 3 x 200 ms and lost far less.
    let mut acted = play_first_legal(&api, game, &token, 3).await;
    assert_eq!(acted, 3, "seat 0 acted {acted} times before the end");
    let view = api
        .get(&format!("/api/games/{game}/view"), Some(&token))
        .await
        .json();
    assert!(
        view["clock"]["seats"][0]["remaining_ms"].as_u64().unwrap() > 300,
        "the bank did not grow: {view}"
    );
    acted += play_first_legal(&api, game, &token, usize::MAX).await;
    assert!(acted >= 3, "seat 0 acted {acted} times");
    assert!(server.terminate().success());
    let timeouts = replayed_timeouts(
        &db,
        game,
        CoreSetup::new(2, 4).config(json!({"max_rounds": 2})),
    );
    assert!(timeouts.is_empty(), "timeouts at {timeouts:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restarted_server_runs_the_clocks_of_the_games_it_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 2});
    let (game, _) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 6, "config": config,
               "clock": {"per_action_ms": 150, "abandon_after": 0}}),
    )
    .await;
    assert!(server.terminate().success());
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    until_finished(&api, game).await;
    assert!(server.terminate().success());
    let timeouts = replayed_timeouts(&db, game, CoreSetup::new(2, 6).config(config));
    assert_eq!(timeouts.len(), stored_actions(&db, game).len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_a_timeout_that_fell_due_while_the_server_was_down_fires_at_once_after_the_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let per_action = 2_000;
    let (game, _) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 6,
               "clock": {"per_action_ms": per_action, "abandon_after": 0}}),
    )
    .await;
    let created = api.summary(game).await["created_unix_ms"].as_u64().unwrap();
    assert!(server.terminate().success());
    // The first decision's deadline passes while no server runs.
    tokio::time::sleep(std::time::Duration::from_millis(per_action + 500)).await;
    let restarted = Instant::now();
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let started = restarted.elapsed().as_millis() as u64;
    let mut ws = Ws::connect(&server.ws(&ws_path(game, None, None))).await;
    // The overdue timeout fires as the game is resumed, not a whole decision later.
    while stored_actions(&db, game).is_empty() {
        assert!(
            restarted.elapsed().as_millis() as u64 <= started + per_action / 2,
            "no timeout within {} ms of the restart",
            per_action / 2
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    let first = &stored_actions(&db, game)[0];
    assert!(
        first.key.as_deref().is_some_and(|k| k == "~timeout@0"),
        "{:?}",
        first.key
    );
    assert!(
        first.at_unix_ms >= created + per_action,
        "{} {created}",
        first.at_unix_ms
    );
    // The next decision has its whole time again.
    let clock = loop {
        let message = ws.json().await;
        if message["type"] == "clock" && message["seq"].as_u64() >= Some(1) {
            break message;
        }
    };
    let running = clock["clock"]["seats"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["running"] == true)
        .map(|s| s["remaining_ms"].as_u64().unwrap())
        .min()
        .expect("a clock runs");
    assert!(running > per_action / 2, "{clock}");
    assert!(server.terminate().success());
    let _ = api;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_controls_that_are_malformed_or_out_of_bounds_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &FAST);
    let api = Api::new(&server.base);
    for (extra, words) in [
        (
            json!({"clock": {"per_action_ms": 100, "bank_ms": 100}}),
            "either per_action_ms",
        ),
        (json!({"clock": {}}), "either per_action_ms"),
        (
            json!({"clock": {"per_action_ms": 10}}),
            "per_action_ms is 10 ms",
        ),
        (
            json!({"clock": {"bank_ms": 1000000000000u64}}),
            "bank_ms is",
        ),
        (
            json!({"clock": {"per_action_ms": 100, "increment_ms": 5}}),
            "increment_ms goes with bank_ms",
        ),
        (
            json!({"on_timeout": "forfeit"}),
            "forfeit goes with a clock",
        ),
        (
            json!({"clock": {"per_action_ms": 100}, "on_timeout": "pray"}),
            "'pray' is not a policy",
        ),
    ] {
        let mut body = json!({"ruleset": "charges", "players": 2});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        let reply = api.post("/api/games", None, body.to_string()).await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{extra}: {}",
            reply.body
        );
        assert!(reply.body.contains(words), "{extra}: {}", reply.body);
    }
    assert_eq!(api.get("/api/games", None).await.json(), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_whose_clock_runs_out_twice_in_a_row_is_abandoned_to_the_random_bot() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 3});
    let (game, tokens) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 8, "config": config,
               "clock": {"per_action_ms": 150, "abandon_after": 2}}),
    )
    .await;
    let mut ws = Ws::connect(&server.ws(&ws_path(game, None, None))).await;
    let mut abandoned = Vec::new();
    let started = Instant::now();
    loop {
        let message = ws.json().await;
        match message["type"].as_str() {
            Some("abandoned") => abandoned.push(message),
            Some("action") if message["view"]["table"]["outcome"] != "Ongoing" => break,
            _ => {}
        }
        assert!(started.elapsed() < GAME_WAIT, "the game did not end");
    }
    assert!(
        !abandoned.is_empty(),
        "nobody played, and no seat was abandoned"
    );
    let seats: BTreeSet<u64> = abandoned
        .iter()
        .map(|m| {
            assert!(
                m["why"].as_str().unwrap().contains("2 times in a row") && m["bot"] == "random",
                "{m}"
            );
            m["seat"].as_u64().unwrap()
        })
        .collect();
    let summary = api.summary(game).await;
    let bots: BTreeSet<u64> = summary["bots"]
        .as_object()
        .expect("the abandoned seats are listed as bots")
        .keys()
        .map(|k| k.parse().unwrap())
        .collect();
    assert_eq!(bots, seats, "{summary}");
    // The seat's token takes no more actions.
    let seat = *seats.first().unwrap() as usize;
    let refused = api
        .act(
            game,
            tokens[seat].as_deref().unwrap(),
            r#"{"type":"pass","ship":0}"#,
            None,
            None,
        )
        .await;
    assert_eq!(refused.status, StatusCode::CONFLICT, "{}", refused.body);
    assert!(
        refused.body.contains("handed to the server's bot"),
        "{}",
        refused.body
    );
    assert!(server.terminate().success());
    // Two timeouts in a row, then the bot: no seat's timeout moves go past its second in a row.
    let log = replay_log(&db, game, "charges", CoreSetup::new(2, 8).config(config));
    for seat in seats {
        let timeouts = log
            .iter()
            .filter(|a| u64::from(a.seat) == seat)
            .take_while(|a| a.key.as_deref().is_some_and(|k| k.starts_with("~timeout@")))
            .count();
        let all = log
            .iter()
            .filter(|a| {
                u64::from(a.seat) == seat
                    && a.key.as_deref().is_some_and(|k| k.starts_with("~timeout@"))
            })
            .count();
        assert_eq!(
            (timeouts, all),
            (2, 2),
            "seat {seat}: timeouts before the bot took over"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_disconnected_past_its_grace_is_abandoned_and_one_back_in_time_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &FAST);
    let api = Api::new(&server.base);
    // Decisions of a minute: no timeout interferes; disconnections of 300 ms are the test.
    let (game, tokens) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 2,
               "clock": {"per_action_ms": 60000, "disconnect_grace_ms": 300}}),
    )
    .await;
    let (t0, t1) = (tokens[0].clone().unwrap(), tokens[1].clone().unwrap());
    let mut watcher = Ws::connect(&server.ws(&ws_path(game, None, None))).await;
    // Seat 0 drops and comes back within its grace; seat 1 drops for good.
    let first = Ws::connect(&server.ws(&ws_path(game, Some(&t0), None))).await;
    let second = Ws::connect(&server.ws(&ws_path(game, Some(&t1), None))).await;
    first.close().await;
    let _back = Ws::connect(&server.ws(&ws_path(game, Some(&t0), None))).await;
    second.close().await;
    let started = Instant::now();
    let abandoned = loop {
        let message = watcher.json().await;
        if message["type"] == "abandoned" {
            break message;
        }
        assert!(started.elapsed() < GAME_WAIT, "nobody was abandoned");
    };
    assert_eq!(abandoned["seat"], 1, "{abandoned}");
    assert!(
        abandoned["why"]
            .as_str()
            .unwrap()
            .contains("disconnected for 0.3 s"),
        "{abandoned}"
    );
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let summary = api.summary(game).await;
    assert_eq!(
        summary["bots"],
        json!({"1": "random"}),
        "seat 0 stays its player's: {summary}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_a_timeout_plays_the_rulesets_default_move_where_it_has_one() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 2});
    let (game, _) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 4, "config": config,
               "clock": {"per_action_ms": 60, "abandon_after": 0}}),
    )
    .await;
    until_finished(&api, game).await;
    assert!(server.terminate().success());
    let log = replay_log(&db, game, "charges", CoreSetup::new(2, 4).config(config));
    assert!(
        log.iter()
            .all(|a| a.key.as_deref().is_some_and(|k| k.starts_with("~timeout@"))),
        "every move was a timeout's"
    );
    // Where charges has a default (a ship passes, a seat is done) the timeout played it; elsewhere (a
    // dial to plan) the random bot chose.
    let defaults = log
        .iter()
        .filter(|a| a.action.get() == coffer_core::DEFAULT)
        .count();
    assert!(
        defaults > 0 && defaults < log.len(),
        "{defaults} of {} timeouts played the default",
        log.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_with_the_forfeit_policy_a_seat_out_of_time_forfeits_and_the_other_wins() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    // Charges starts with dials to plan: no default move, so the first timeout forfeits.
    let (game, _) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 6,
               "clock": {"per_action_ms": 80}, "on_timeout": "forfeit"}),
    )
    .await;
    let mut ws = Ws::connect(&server.ws(&ws_path(game, None, None))).await;
    let message = loop {
        let message = ws.json().await;
        if message["type"] == "action" {
            break message;
        }
    };
    let seat = message["actor"].as_u64().unwrap();
    assert_eq!(message["action"], format!("p{seat} forfeited"), "{message}");
    assert_eq!(message["by"], "timeout", "{message}");
    let outcome = &message["view"]["table"]["outcome"]["Finished"];
    assert_eq!(outcome["winners"], json!([1 - seat]), "{message}");
    assert_eq!(api.summary(game).await["finished"], true);
    assert!(server.terminate().success());
    let log = replay_log(&db, game, "charges", CoreSetup::new(2, 6));
    assert_eq!(log.len(), 1);
    assert_eq!(log[0].action.get(), coffer_core::FORFEIT);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_with_the_forfeit_policy_a_seat_that_resigns_forfeits_where_the_ruleset_can() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let clock = json!({"per_action_ms": 600_000});
    let resign = |game: u64, token: String| {
        let api = &api;
        async move {
            api.post(
                &format!("/api/games/{game}/resign"),
                Some(&token),
                String::new(),
            )
            .await
        }
    };
    // Two seats of charges: the resigning seat forfeits and the game is over.
    let (game, tokens) = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 2, "clock": clock,
               "on_timeout": "forfeit"}),
    )
    .await;
    let reply = resign(game, tokens[0].clone().unwrap()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.json()["forfeited"], true, "{}", reply.body);
    assert_eq!(api.summary(game).await["finished"], true);
    // Three seats of command-tokens: no elimination, so the bot takes the seat.
    let (game, tokens) = create(
        &api,
        json!({"ruleset": "command-tokens", "players": 3, "seed": 2, "clock": clock,
               "on_timeout": "forfeit"}),
    )
    .await;
    let reply = resign(game, tokens[2].clone().unwrap()).await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    assert_eq!(reply.json()["bot"], "random", "{}", reply.body);
    let summary = api.summary(game).await;
    assert_eq!(summary["finished"], false);
    assert_eq!(summary["bots"]["2"], "random", "{summary}");
    assert!(server.terminate().success());
}

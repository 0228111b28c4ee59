//! Crash test of the whole server: clients play many games of every ruleset through the HTTP API as fast
//! as they can, the server is killed with SIGKILL mid-play, and restarted on the same file. Every action
//! a client saw acknowledged (200) is in the store at its sequence number, nothing unacknowledged is
//! half there (each log is gapless, agrees with its game's sequence and holds only submitted actions),
//! every game is recovered replaying to its stored hashes (none stopped), its history replays from
//! the start, and play goes on.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

use coffer_server::{GameId, SqliteConfig, SqliteStore, Store};

use crate::bad_input::{client as http_client, create};
use crate::support::{FAST_ARGS, Server, game_and_tokens, get_json, legal};

/// How long the clients play before the kill.
const PLAY: Duration = Duration::from_millis(2500);
/// Every wait is bounded by this.
const WAIT: Duration = Duration::from_secs(20);

/// One game's players and what they saw.
#[derive(Debug, Default)]
struct Played {
    game: u64,
    /// Which of the game's two clients: part of every key it sends, so no two clients share a key.
    client: u8,
    tokens: Vec<String>,
    /// Acknowledged actions: sequence number, idempotency key and the token of the seat that sent it.
    acked: Vec<(u64, String, String)>,
    /// Every key submitted (acknowledged or not).
    sent: BTreeSet<String>,
}

/// The games: every ruleset, most long enough not to end during the test (a charges game may end when a
/// ship is destroyed).
fn setups() -> Vec<Value> {
    let mut setups = Vec::new();
    for seed in 0..2u64 {
        setups.push(json!({"ruleset": "charges", "players": 2, "seed": seed,
            "config": {"max_rounds": 1000}}));
    }
    for seed in 0..3u64 {
        setups.push(
            json!({"ruleset": "command-tokens", "players": 3, "seed": seed,
            "config": {"rounds": 1000}}),
        );
    }
    for seed in 0..3u64 {
        setups.push(json!({"ruleset": "story-acts", "players": 2, "seed": seed}));
    }
    setups
}

/// Plays `played`'s game until `stop` or until the server stops answering: asks each seat's legal
/// actions, submits one chosen at random with `expected_seq` and a unique key, records what is
/// acknowledged.
async fn play(
    client: Client,
    base: String,
    mut played: Played,
    stop: Arc<AtomicBool>,
    acks: Arc<AtomicU64>,
) -> Played {
    let game = played.game;
    let mut chooser = game.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut n = 0u64;
    'play: while !stop.load(Ordering::Relaxed) {
        let mut anyone = false;
        for seat in 0..played.tokens.len() {
            let token = played.tokens[seat].clone();
            let Ok(response) = client
                .get(format!("{base}/api/games/{game}/legal"))
                .bearer_auth(&token)
                .send()
                .await
            else {
                break 'play;
            };
            let Ok(legal) = response.json::<Value>().await else {
                break 'play;
            };
            let Some(actions) = legal["actions"].as_array().filter(|a| !a.is_empty()) else {
                continue;
            };
            anyone = true;
            let seq = legal["seq"].as_u64().expect("a sequence number");
            chooser ^= chooser << 13;
            chooser ^= chooser >> 7;
            chooser ^= chooser << 17;
            let action = &actions[(chooser % actions.len() as u64) as usize];
            n += 1;
            let key = format!("g{game}-c{}-{n}", played.client);
            played.sent.insert(key.clone());
            let Ok(response) = client
                .post(format!("{base}/api/games/{game}/actions"))
                .bearer_auth(&token)
                .json(&json!({"action": action, "expected_seq": seq, "key": key}))
                .send()
                .await
            else {
                break 'play;
            };
            let status = response.status();
            let Ok(text) = response.text().await else {
                break 'play;
            };
            match status {
                StatusCode::OK => {
                    let answer: Value =
                        serde_json::from_str(&text).expect("an acknowledged action is JSON");
                    let acked = answer["seq"].as_u64().expect("its sequence number");
                    assert_eq!(acked, seq + 1, "game {game}: {text}");
                    played.acked.push((acked, key, token.clone()));
                    acks.fetch_add(1, Ordering::Relaxed);
                }
                // Another seat acted first: ask again.
                StatusCode::CONFLICT if text.contains("\"stale\"") => {}
                StatusCode::CONFLICT if text.contains("\"finished\"") => break 'play,
                _ => {
                    panic!("game {game}: a legal action at its sequence answered {status}: {text}")
                }
            }
        }
        if !anyone {
            // Nobody could act when asked: the other client acted in between, or the game is over (the
            // next submission says so). Ask again.
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    played
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_actions_survive_sigkill_of_the_server_and_play_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("games.db");
    let mut server = Server::start(&path, &FAST_ARGS);
    let base = server.base.clone();
    let client = http_client();
    let mut games = Vec::new();
    for setup in setups() {
        let created = create(&client, &base, setup).await;
        let (game, tokens) = game_and_tokens(&created);
        games.push(Played {
            game,
            tokens,
            ..Played::default()
        });
    }

    // Play every game at once, two clients per game (each seat asked in turn by both), as fast as the
    // server answers; kill it mid-play.
    let stop = Arc::new(AtomicBool::new(false));
    let acks = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for played in games {
        let twin = Played {
            game: played.game,
            client: 1,
            tokens: played.tokens.iter().rev().cloned().collect(),
            ..Played::default()
        };
        for played in [played, twin] {
            tasks.push(tokio::spawn(play(
                client.clone(),
                base.clone(),
                played,
                Arc::clone(&stop),
                Arc::clone(&acks),
            )));
        }
    }
    let started = Instant::now();
    while acks.load(Ordering::Relaxed) == 0 {
        assert!(
            started.elapsed() < WAIT,
            "no action acknowledged within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    tokio::time::sleep(PLAY).await;
    let before_kill = acks.load(Ordering::Relaxed);
    server.kill();
    stop.store(true, Ordering::Relaxed);
    let mut by_game: BTreeMap<u64, Played> = BTreeMap::new();
    for task in tasks {
        let played = tokio::time::timeout(WAIT, task)
            .await
            .expect("every client ends once the server is gone")
            .expect("no client panicked");
        let entry = by_game.entry(played.game).or_insert_with(|| Played {
            game: played.game,
            ..Played::default()
        });
        entry.acked.extend(played.acked);
        entry.sent.extend(played.sent);
        // The first client of each game holds the tokens in seat order.
        if entry.tokens.is_empty() {
            entry.tokens = played.tokens;
        }
    }
    let total: usize = by_game.values().map(|p| p.acked.len()).sum();
    assert!(total as u64 >= before_kill);
    assert!(
        by_game.values().all(|p| !p.acked.is_empty()),
        "every game was played before the kill"
    );

    // The file after the kill.
    let mut stored_seq = BTreeMap::new();
    let mut stored_finished = BTreeSet::new();
    {
        let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
        for (game, played) in &by_game {
            let log = store.actions_after(GameId(*game), 0).unwrap();
            let seqs: Vec<u64> = log.iter().map(|a| a.seq).collect();
            let gapless: Vec<u64> = (1..=log.len() as u64).collect();
            assert_eq!(seqs, gapless, "game {game}'s log is gapless");
            let acked_max = played.acked.iter().map(|(s, _, _)| *s).max().unwrap_or(0);
            assert!(
                log.len() as u64 >= acked_max,
                "game {game}: acknowledged up to {acked_max}, stored {}",
                log.len()
            );
            for (seq, key, _) in &played.acked {
                assert_eq!(
                    log[*seq as usize - 1].key.as_deref(),
                    Some(key.as_str()),
                    "game {game}: acknowledged action {seq} is stored at its place"
                );
            }
            let mut keys = BTreeSet::new();
            for action in &log {
                let key = action
                    .key
                    .clone()
                    .expect("every action was sent with a key");
                assert!(
                    played.sent.contains(&key),
                    "game {game}: stored action {key} was never sent"
                );
                assert!(keys.insert(key), "game {game}: a key stored twice");
            }
            let record = store.game(GameId(*game)).unwrap();
            assert_eq!(
                record.seq,
                log.len() as u64,
                "game {game}'s sequence agrees with its log"
            );
            stored_seq.insert(*game, log.len() as u64);
            if record.finished {
                stored_finished.insert(*game);
                continue;
            }
            let recovery = store.recover(GameId(*game)).unwrap();
            let snapshot = recovery.snapshot.as_ref().map_or(0, |s| s.seq);
            assert!(snapshot <= log.len() as u64);
            assert_eq!(recovery.tail.len() as u64, log.len() as u64 - snapshot);
        }
    }
    let unacknowledged: u64 = by_game
        .iter()
        .map(|(game, p)| stored_seq[game] - p.acked.iter().map(|(s, _, _)| *s).max().unwrap_or(0))
        .sum();
    eprintln!(
        "{total} actions acknowledged over {} games before SIGKILL, all stored; {unacknowledged} committed but unanswered",
        by_game.len()
    );

    // Restarted on the same file: every game back, none stopped, its history replaying from the start
    // to the stored hashes, and play goes on.
    let server = Server::start(&path, &FAST_ARGS);
    let base = server.base.clone();
    let client = http_client();
    let listed: Vec<Value> = get_json(&client, format!("{base}/api/games?limit=1000")).await;
    // Every game not marked finished in the store is back (a game whose last action ended it may be
    // marked finished only at recovery).
    let recovered: BTreeSet<u64> = listed.iter().map(|s| s["game"].as_u64().unwrap()).collect();
    let expected: BTreeSet<u64> = by_game
        .keys()
        .copied()
        .filter(|g| !stored_finished.contains(g))
        .collect();
    assert_eq!(recovered, expected, "{listed:?}");
    let mut over = BTreeSet::new();
    for summary in &listed {
        let game = summary["game"].as_u64().unwrap();
        assert!(
            summary.get("stopped").is_none(),
            "game {game} is stopped after recovery: {summary}"
        );
        assert_eq!(
            summary["seq"].as_u64(),
            Some(stored_seq[&game]),
            "{summary}"
        );
        if summary["finished"] == true {
            over.insert(game);
        }
    }
    let unfinished: Vec<&Played> = by_game
        .values()
        .filter(|p| recovered.contains(&p.game) && !over.contains(&p.game))
        .collect();
    assert!(!unfinished.is_empty(), "some games go on");
    for played in unfinished {
        let game = played.game;
        let seq = stored_seq[&game];
        let events: Vec<Value> = client
            .get(format!("{base}/api/games/{game}/events?since=0"))
            .bearer_auth(&played.tokens[0])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap_or_else(|e| panic!("game {game}'s history: {e}"));
        let seqs: Vec<u64> = events.iter().map(|e| e["seq"].as_u64().unwrap()).collect();
        assert_eq!(seqs, (1..=seq).collect::<Vec<_>>(), "game {game}'s history");
        // One more action, by whoever may act.
        let mut acted = false;
        for token in &played.tokens {
            let (at, actions) = legal(&client, &base, game, token).await;
            assert_eq!(at, seq);
            let Some(action) = actions.first() else {
                continue;
            };
            let response = client
                .post(format!("{base}/api/games/{game}/actions"))
                .bearer_auth(token)
                .json(&json!({"action": action, "expected_seq": seq}))
                .send()
                .await
                .unwrap();
            let status = response.status();
            let text = response.text().await.unwrap();
            assert_eq!(status, StatusCode::OK, "game {game} after restart: {text}");
            let answer: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(answer["seq"].as_u64(), Some(seq + 1));
            acted = true;
            break;
        }
        assert!(acted, "someone may act in unfinished game {game}");
        // A key acknowledged before the crash is still known: its retry answers the first result and
        // applies nothing.
        let (first, key, token) = played.acked.first().expect("acknowledged actions");
        let response = client
            .post(format!("{base}/api/games/{game}/actions"))
            .bearer_auth(token)
            .json(&json!({"action": {"type": "anything"}, "key": key}))
            .send()
            .await
            .unwrap();
        let status = response.status();
        let text = response.text().await.unwrap();
        assert_eq!(
            status,
            StatusCode::OK,
            "game {game}: retry of {key}: {text}"
        );
        let answer: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(answer["seq"].as_u64(), Some(*first), "{text}");
        let summary: Value = get_json(&client, format!("{base}/api/games/{game}")).await;
        assert_eq!(
            summary["seq"].as_u64(),
            Some(seq + 1),
            "the retry applied nothing"
        );
    }
    let log = server.log_text();
    assert!(!log.contains("stopped:"), "{log}");
    assert!(!log.contains("panicked"), "{log}");
}

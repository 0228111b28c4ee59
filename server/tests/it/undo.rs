//! L-undo on a real server on loopback: a seat takes back its own last action with the action
//! `"~undo"`; every audience's view returns to what it was; another seat's undo, and an undo of a move
//! the server played (a timeout's), are refused in words; the stored log (undos included) replays to
//! every hash; an undo window survives a restart (no snapshot falls inside it); and taking back never
//! gives a seat time.

use std::time::{Duration, Instant};

use coffer_core::Setup as CoreSetup;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::client::{Api, FAST, GAME_WAIT, Reply, Ws, stored_actions, ws_path};
use crate::support::Server;

const UNDO: &str = "\"~undo\"";

/// Each seat's view and the spectator's, without the undo window (which the undo itself changes).
async fn views(api: &Api, game: u64, tokens: &[String]) -> Vec<Value> {
    let mut out = Vec::new();
    for token in tokens.iter().map(Some).chain([None]) {
        let reply = api
            .get(
                &format!("/api/games/{game}/view"),
                token.map(String::as_str),
            )
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let mut view = reply.json();
        view["view"]["table"]
            .as_object_mut()
            .map(|t| t.remove("undo"));
        view.as_object_mut().map(|v| v.remove("seq"));
        out.push(view);
    }
    out
}

/// The seat (index into `tokens`) with a legal action, and its first one.
async fn acting(api: &Api, game: u64, tokens: &[String]) -> (usize, String) {
    let started = Instant::now();
    loop {
        for (seat, token) in tokens.iter().enumerate() {
            let legal = api
                .get(&format!("/api/games/{game}/legal"), Some(token))
                .await
                .json();
            if let Some(first) = legal["actions"].as_array().and_then(|a| a.first()) {
                return (seat, first.to_string());
            }
        }
        assert!(started.elapsed() < GAME_WAIT, "nobody may act");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn body(reply: &Reply) -> Value {
    reply.json()
}

/// `reply` is a refusal (422) whose words hold `words` and no kernel type's rendering.
fn assert_refused(reply: &Reply, words: &str) {
    assert_eq!(
        reply.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        reply.body
    );
    let message = body(reply)["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(message.contains(words), "{message}");
    assert!(
        !message.contains("Owner(") && !message.contains("CannotUndo"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_undo_takes_back_a_seats_action_for_every_audience_and_the_log_replays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let (game, tokens) = api
        .create(&json!({"ruleset": "command-tokens", "players": 3, "seed": 5}))
        .await;
    let mut undos = 0;
    for _ in 0..12 {
        let (seat, action) = acting(&api, game, &tokens).await;
        let before = views(&api, game, &tokens).await;
        let reply = api.act(game, &tokens[seat], &action, None, None).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let view = api
            .get(&format!("/api/games/{game}/view"), Some(&tokens[seat]))
            .await
            .json();
        let Some(window) = view["view"]["table"]
            .get("undo")
            .filter(|u| !u.is_null())
            .cloned()
        else {
            continue;
        };
        assert_eq!(window["seat"], seat, "{window}");
        // Another seat may not take it back: refused in words, nothing changes.
        let other = (seat + 1) % tokens.len();
        let after = views(&api, game, &tokens).await;
        let refused = api.act(game, &tokens[other], UNDO, None, None).await;
        assert_refused(&refused, "cannot take back");
        assert_eq!(views(&api, game, &tokens).await, after);
        // The seat's own undo: every audience sees the game as before the action.
        let undone = api.act(game, &tokens[seat], UNDO, None, None).await;
        assert_eq!(undone.status, StatusCode::OK, "{}", undone.body);
        let answer = body(&undone);
        assert_eq!(answer["undo"], true, "{answer}");
        assert!(
            answer["action"].as_str().unwrap().contains("took back"),
            "{answer}"
        );
        assert_eq!(views(&api, game, &tokens).await, before);
        undos += 1;
        // And the game goes on with the same action.
        let again = api.act(game, &tokens[seat], &action, None, None).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
    }
    assert!(undos >= 3, "only {undos} actions could be taken back");
    // History tells of the undos as the live feed did.
    let history = api
        .get(
            &format!("/api/games/{game}/events?since=0"),
            Some(&tokens[0]),
        )
        .await
        .json();
    let told = history
        .as_array()
        .map_or(0, |a| a.iter().filter(|m| m["undo"] == true).count());
    assert_eq!(told, undos, "history: {history}");
    assert!(server.terminate().success());
    let log = stored_actions(&db, game);
    assert_eq!(log.iter().filter(|a| a.action.get() == UNDO).count(), undos);
    replay_prefix(&log, CoreSetup::new(3, 5));
}

/// The stored log replays in this process to every stored hash (the game need not be finished).
fn replay_prefix(log: &[coffer_server::Action], setup: CoreSetup) {
    let registry = coffer_host::Registry::with_static().unwrap();
    let entry = registry.get("command-tokens").unwrap();
    let mut game = coffer_host::HostedGame::start(entry.ruleset.clone(), setup).unwrap();
    for action in log {
        game.apply_json(action.seat as u16, action.action.get())
            .unwrap_or_else(|e| panic!("action {}: {e}", action.seq));
        assert_eq!(game.state_hash().0, action.hash.0, "action {}", action.seq);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_undo_window_survives_a_restart_because_no_snapshot_falls_inside_it() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    // A snapshot after every action: each one due inside an undo window must wait for it to close.
    let args: Vec<&str> = FAST
        .iter()
        .copied()
        .chain(["--snapshot-every", "1"])
        .collect();
    let mut server = Server::start(&db, &args);
    let api = Api::new(&server.base);
    let (game, tokens) = api
        .create(&json!({"ruleset": "command-tokens", "players": 3, "seed": 8}))
        .await;
    let seat = loop {
        let (seat, action) = acting(&api, game, &tokens).await;
        let reply = api.act(game, &tokens[seat], &action, None, None).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let view = api
            .get(&format!("/api/games/{game}/view"), None)
            .await
            .json();
        if !view["view"]["table"]["undo"].is_null() {
            break seat;
        }
    };
    let before_restart = views(&api, game, &tokens).await;
    assert!(server.terminate().success());
    let mut server = Server::start(&db, &args);
    let api = Api::new(&server.base);
    assert_eq!(views(&api, game, &tokens).await, before_restart);
    let undone = api.act(game, &tokens[seat], UNDO, None, None).await;
    assert_eq!(
        undone.status,
        StatusCode::OK,
        "after a restart: {}",
        undone.body
    );
    assert!(server.terminate().success());
    replay_prefix(&stored_actions(&db, game), CoreSetup::new(3, 8));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn l_undo_refuses_a_timeouts_move_and_never_gives_time_back() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let per_action = 1_500;
    let (game, tokens) = api
        .create(
            &json!({"ruleset": "command-tokens", "players": 3, "seed": 3,
               "clock": {"per_action_ms": per_action, "abandon_after": 0}}),
        )
        .await;
    let mut ws = Ws::connect(&server.ws(&ws_path(game, None, None))).await;
    // A seat that thinks 600 ms, plays, and takes it back has 900 ms left, not a new 1.5 s.
    let seat = loop {
        let (seat, action) = acting(&api, game, &tokens).await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        let reply = api.act(game, &tokens[seat], &action, None, None).await;
        assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
        let undone = api.act(game, &tokens[seat], UNDO, None, None).await;
        if undone.status == StatusCode::OK {
            break seat;
        }
    };
    let clock = loop {
        let message = ws.json().await;
        if message["type"] == "clock" && message["clock"]["seats"][seat]["running"] == true {
            let undone = stored_actions(&db, game).last().map(|a| a.seq);
            if Some(message["seq"].as_u64().unwrap()) == undone {
                break message;
            }
        }
    };
    let left = clock["clock"]["seats"][seat]["remaining_ms"]
        .as_u64()
        .unwrap();
    assert!(
        left <= per_action - 500,
        "taking back gave time: {left} ms left of {per_action}: {clock}"
    );
    // Let the clock run out: the timeout's move cannot be taken back by the seat.
    let timeout = loop {
        let message = ws.json().await;
        if message["type"] == "action" && message["by"] == "timeout" {
            break message;
        }
    };
    let who = timeout["actor"].as_u64().unwrap() as usize;
    let refused = api.act(game, &tokens[who], UNDO, None, None).await;
    assert_refused(&refused, "when its clock ran out");
    assert!(server.terminate().success());
}

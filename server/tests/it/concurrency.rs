//! Many clients on one game at once. Optimistic concurrency (`expected_seq`): of the submissions at one
//! sequence number exactly one is applied and every other is told the game moved on, so no update is lost
//! and none is applied twice, and the store's log is exactly the accepted answers. Idempotency keys: the
//! same key sent by many clients at once, or again after a restart, is applied once and answered alike.

use std::collections::BTreeMap;
use std::sync::Arc;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Barrier;

use crate::client::{Api, FAST, GAME_WAIT, Ws, act_message, stored_actions, ws_path};
use crate::play::{Script, assert_stored_script, play_lines, raw_elements};
use crate::support::Server;

/// How many clients race.
const TASKS: usize = 16;

/// One racing client's record: the sequence numbers it won (with the HTTP answer's body; a WebSocket's
/// `acted` has none), how many stale submissions it made, and how many were refused as finished.
#[derive(Default)]
struct Record {
    won: Vec<(u64, Option<String>)>,
    stale: usize,
    finished: usize,
}

/// What one submission of a racing client was answered, read from an HTTP reply or a WebSocket
/// message.
fn outcome(
    known: u64,
    total: u64,
    line: &crate::play::Line,
    ok: bool,
    body: &Value,
    text: String,
    record: &mut Record,
) -> u64 {
    match (ok, body["error"].as_str()) {
        (true, _) => {
            assert_eq!(body["seq"], known + 1, "{text}");
            if body["type"] == "action" {
                assert_eq!(body["actor"], line.player, "{text}");
                record.won.push((known + 1, Some(text)));
            } else {
                assert_eq!(
                    (&body["type"], &body["first"]),
                    (&json!("acted"), &json!(true)),
                    "{text}"
                );
                record.won.push((known + 1, None));
            }
            known + 1
        }
        (false, Some("stale")) => {
            let current = body["current_seq"]
                .as_u64()
                .unwrap_or_else(|| panic!("a stale answer says where the game is: {text}"));
            assert!(current > known, "told {current} after expecting {known}");
            record.stale += 1;
            current
        }
        // The game ended while this one was on its way (`finished` is answered before the
        // staleness check, without current_seq).
        (false, Some("finished")) => {
            record.finished += 1;
            total
        }
        _ => panic!("expected a success, stale or finished at {known}: {text}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_clients_with_expected_seq_get_exactly_one_success_per_seq_and_the_losers_409_with_current_seq()
 {
    let script = Arc::new(Script::load("charges"));
    let (_, hashes) = script.reference();
    let total = script.len();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("games.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let (game, tokens) = api.create(&script.create_body()).await;
    let tokens = Arc::new(tokens);
    let start = Arc::new(Barrier::new(TASKS + 1));

    // p0 watches on its WebSocket from the start: it must get every action once, in order, even while
    // submissions collide.
    let mut watcher = Ws::connect(&server.ws(&ws_path(game, Some(&tokens[0]), None))).await;
    assert_eq!(watcher.head().await["type"], "hello");
    assert_eq!(watcher.head().await["type"], "view");
    let mut watcher = Some(tokio::spawn(async move {
        let mut seen = Vec::new();
        while seen.last().is_none_or(|m: &Value| m["seq"] != total) {
            seen.push(watcher.json().await);
        }
        seen
    }));

    // Each client submits the next line of the script at the sequence number it believes current, with
    // the acting seat's token (shared by several clients), and learns the current one from the 409 (or
    // the WebSocket's error). Three clients in four post over HTTP; every fourth sends `act` on one
    // WebSocket per seat. (A WebSocket answer takes fewer steps to turn into the next submission than
    // an HTTP one, so on a loaded machine evenly split clients can leave HTTP winning nothing.)
    // The first action is submitted over HTTP before the race, so the check of HTTP answers against
    // the log below always has one to check, however the race goes.
    let first = &script.lines[0];
    let reply = api
        .act(
            game,
            &tokens[usize::from(first.player)],
            &first.action,
            Some(0),
            None,
        )
        .await;
    assert_eq!(reply.status, StatusCode::OK, "{}", reply.body);
    let mut before_the_race = Record::default();
    outcome(
        0,
        total,
        first,
        true,
        &reply.json(),
        reply.body,
        &mut before_the_race,
    );
    let mut clients = Vec::new();
    for i in 0..TASKS {
        let (script, tokens, start) = (script.clone(), tokens.clone(), start.clone());
        let api = Api::new(&server.base);
        let mut sockets = Vec::new();
        if i % 4 == 3 {
            for token in tokens.iter() {
                let mut ws = Ws::connect(&server.ws(&ws_path(game, Some(token), None))).await;
                assert_eq!(ws.head().await["type"], "hello");
                assert_eq!(ws.head().await["type"], "view");
                sockets.push(ws);
            }
        }
        clients.push(tokio::spawn(async move {
            let mut record = Record::default();
            let mut known = 0;
            start.wait().await;
            while known < total {
                let line = &script.lines[known as usize];
                let seat = usize::from(line.player);
                known = if sockets.is_empty() {
                    let reply = api
                        .act(game, &tokens[seat], &line.action, Some(known), None)
                        .await;
                    let ok = reply.status == StatusCode::OK;
                    if !ok {
                        assert_eq!(reply.status, StatusCode::CONFLICT, "{}", reply.body);
                    }
                    let body = reply.json();
                    outcome(known, total, line, ok, &body, reply.body, &mut record)
                } else {
                    let ws = &mut sockets[seat];
                    ws.send(act_message(&line.action, Some(known), None)).await;
                    // Skip the feed's actions to the answer.
                    let text = loop {
                        let text = ws.text().await;
                        if !text.starts_with(r#"{"type":"action""#) {
                            break text;
                        }
                    };
                    let body: Value = serde_json::from_str(&text).expect("JSON");
                    let ok = body["type"] == "acted";
                    outcome(known, total, line, ok, &body, text, &mut record)
                };
            }
            for ws in sockets {
                ws.close().await;
            }
            record
        }));
    }
    start.wait().await;
    let mut won: BTreeMap<u64, Option<String>> = before_the_race.won.into_iter().collect();
    let (mut stale, mut finished) = (0, 0);
    for client in clients {
        let record = tokio::time::timeout(GAME_WAIT, client)
            .await
            .expect("the race ended in time")
            .expect("a client failed");
        for (seq, body) in record.won {
            assert!(
                won.insert(seq, body).is_none(),
                "action {seq} was accepted twice"
            );
        }
        stale += record.stale;
        finished += record.finished;
    }
    assert_eq!(
        won.keys().copied().collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>(),
        "exactly one accepted submission per sequence number"
    );
    assert!(
        stale > 0,
        "{TASKS} clients never collided: this test raced nothing"
    );
    eprintln!(
        "{total} actions accepted, {stale} stale submissions answered 409 with current_seq, {finished} after the end"
    );

    // Each accepted HTTP answer is the action the log holds, as its seat reads it; so is each message
    // of p0's WebSocket, without its view.
    let summary = api.summary(game).await;
    assert_eq!(
        (&summary["seq"], &summary["finished"]),
        (&json!(total), &json!(true))
    );
    let mut answers = 0;
    for (seat, token) in tokens.iter().enumerate() {
        let events = api
            .get(&format!("/api/games/{game}/events?since=0"), Some(token))
            .await;
        let history = raw_elements(&events.body);
        assert_eq!(history.len() as u64, total);
        for (i, line) in script.lines.iter().enumerate() {
            if let (true, Some(answer)) = (usize::from(line.player) == seat, &won[&(i as u64 + 1)])
            {
                assert_eq!(
                    &history[i],
                    answer,
                    "the accepted answer of {} is the logged action",
                    i + 1
                );
                answers += 1;
            }
        }
        if seat == 0 {
            let watcher = watcher.take().expect("one watcher");
            let live = tokio::time::timeout(GAME_WAIT, watcher)
                .await
                .expect("p0 saw the end")
                .expect("p0's watcher");
            assert_eq!(
                live.iter()
                    .map(|m| m["seq"].as_u64().expect("seq"))
                    .collect::<Vec<_>>(),
                (1..=total).collect::<Vec<_>>(),
                "p0's WebSocket delivered every action once, in order"
            );
            for (mut message, logged) in live.into_iter().zip(&history) {
                assert_eq!(message["type"], "action", "{message}");
                // What a push adds to the action: the view after it, and the seat's legal actions.
                let object = message.as_object_mut().expect("an object");
                object.remove("view");
                object.remove("legal");
                let logged: Value = serde_json::from_str(logged).expect("JSON");
                assert_eq!(message, logged, "p0's live message is the logged action");
            }
        }
    }
    assert!(answers > 0, "no HTTP client won anything");
    let status = server.terminate();
    assert!(status.success(), "SIGTERM: {status}");
    assert_stored_script(&db, game, &script, &hashes);
}

/// How each racing client submits.
#[derive(Clone, Copy, Debug)]
enum Via {
    Http,
    Ws,
}

/// `TASKS` clients (half over HTTP, half over their own WebSockets) submit the same action with the same
/// idempotency key at once, all with `expected_seq` or all without; answers each reply (HTTP: the body;
/// WebSocket: the `acted` or `error` message).
async fn same_key_at_once(
    server: &Server,
    game: u64,
    token: &str,
    action: &str,
    expected_seq: Option<u64>,
    key: &str,
) -> Vec<(Via, String)> {
    let start = Arc::new(Barrier::new(TASKS));
    let clients: Vec<_> = (0..TASKS)
        .map(|i| {
            let via = if i % 2 == 0 { Via::Http } else { Via::Ws };
            let api = Api::new(&server.base);
            let url = server.ws(&ws_path(game, Some(token), None));
            let (start, token, action, key) = (
                start.clone(),
                token.to_owned(),
                action.to_owned(),
                key.to_owned(),
            );
            tokio::spawn(async move {
                match via {
                    Via::Http => {
                        start.wait().await;
                        let reply = api
                            .act(game, &token, &action, expected_seq, Some(&key))
                            .await;
                        (via, format!("{} {}", reply.status.as_u16(), reply.body))
                    }
                    Via::Ws => {
                        let mut ws = Ws::connect(&url).await;
                        let hello = ws.json().await;
                        assert_eq!(hello["type"], "hello");
                        assert_eq!(ws.json().await["type"], "view");
                        start.wait().await;
                        ws.send(act_message(&action, expected_seq, Some(&key)))
                            .await;
                        loop {
                            let message = ws.json().await;
                            // The action's own broadcast may come first when another client won.
                            if message["type"] != "action" {
                                ws.close().await;
                                return (via, message.to_string());
                            }
                        }
                    }
                }
            })
        })
        .collect();
    let mut replies = Vec::new();
    for client in clients {
        replies.push(
            tokio::time::timeout(GAME_WAIT, client)
                .await
                .expect("every client was answered in time")
                .expect("a client failed"),
        );
    }
    replies
}

/// Checks that `replies` to one keyed submission all say the one action `seq` was applied: HTTP replies
/// all the same 200 body, WebSocket replies all `acted` at `seq`, at most one of them the first.
fn assert_one_answer(replies: &[(Via, String)], seq: u64) -> String {
    let http: Vec<&String> = replies
        .iter()
        .filter(|(via, _)| matches!(via, Via::Http))
        .map(|(_, r)| r)
        .collect();
    let first = http[0].clone();
    assert!(first.starts_with("200 "), "HTTP: {first}");
    for reply in &http {
        assert_eq!(*reply, &first, "every HTTP client got the same answer");
    }
    let mut firsts = 0;
    for (via, reply) in replies {
        if let Via::Ws = via {
            let message: Value = serde_json::from_str(reply).expect("JSON");
            assert_eq!(message["type"], "acted", "WebSocket: {reply}");
            assert_eq!(message["seq"], seq, "WebSocket: {reply}");
            firsts += usize::from(message["first"] == true);
        }
    }
    assert!(
        firsts <= 1,
        "{firsts} WebSocket clients were told they applied it"
    );
    first["200 ".len()..].to_owned()
}

/// A game of the charges script played to its fourth line on a server with a new store: the script,
/// its reference state hashes, the directory holding the store (dropped last), the store's path, the
/// server, a client of it, the game and its seats' tokens.
type FourPlayed = (
    Script,
    Vec<u64>,
    tempfile::TempDir,
    std::path::PathBuf,
    Server,
    Api,
    u64,
    Vec<String>,
);

/// Starts a server and plays the first four lines of the charges script on a new game.
async fn four_lines_played() -> FourPlayed {
    let script = Script::load("charges");
    let (_, hashes) = script.reference();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("games.db");
    let server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let (game, tokens) = api.create(&script.create_body()).await;
    play_lines(&api, game, &tokens, &script, 0..4).await;
    (script, hashes, dir, db, server, api, game, tokens)
}

/// Plays the first four lines, then has `TASKS` clients submit line five with one key at once.
async fn one_key_at_once(with_expected_seq: bool) {
    let (script, hashes, _dir, db, mut server, api, game, tokens) = four_lines_played().await;
    let line = &script.lines[4];
    let token = &tokens[usize::from(line.player)];
    let expected_seq = with_expected_seq.then_some(4);
    let replies = same_key_at_once(&server, game, token, &line.action, expected_seq, "once").await;

    // Applied once: the game is at 5, and the next line applies at 5.
    assert_eq!(api.summary(game).await["seq"], 5, "applied exactly once");
    play_lines(&api, game, &tokens, &script, 5..6).await;
    let status = server.terminate();
    assert!(status.success(), "SIGTERM: {status}");
    assert_stored_script(&db, game, &script.first(6), &hashes);
    let keyed: Vec<u64> = stored_actions(&db, game)
        .iter()
        .filter(|a| a.key.as_deref() == Some("once"))
        .map(|a| a.seq)
        .collect();
    assert_eq!(keyed, [5], "the key is stored once, with action 5");

    let answer = assert_one_answer(&replies, 5);
    let answer: Value = serde_json::from_str(&answer).expect("JSON");
    assert_eq!((&answer["seq"], &answer["actor"]), (&json!(5), &json!(0)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_idempotency_key_sent_by_many_clients_at_once_is_applied_once_and_all_get_the_same_answer()
 {
    one_key_at_once(false).await;
}

/// A retry repeats its request, `expected_seq` included: it must get the first answer too, not a 409
/// because its own first attempt moved the game on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_keyed_requests_with_expected_seq_sent_at_once_are_applied_once_and_all_get_the_same_answer()
 {
    one_key_at_once(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_retry_after_a_restart_answers_the_first_result_and_applies_nothing() {
    let (script, hashes, _dir, db, mut server, api, game, tokens) = four_lines_played().await;
    let line = &script.lines[4];
    let token = &tokens[usize::from(line.player)];
    let first = api
        .act(game, token, &line.action, Some(4), Some("before-restart"))
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    let status = server.terminate();
    assert!(status.success(), "SIGTERM: {status}");

    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    assert_eq!(api.summary(game).await["seq"], 5);
    // The retry as a client that lost the answer sends it: the same request, then without
    // `expected_seq`, then over the WebSocket.
    let same = api
        .act(game, token, &line.action, Some(4), Some("before-restart"))
        .await;
    let keyed = api
        .act(game, token, &line.action, None, Some("before-restart"))
        .await;
    let mut ws = Ws::connect(&server.ws(&ws_path(game, Some(token), None))).await;
    assert_eq!(ws.json().await["type"], "hello");
    assert_eq!(ws.json().await["type"], "view");
    ws.send(act_message(&line.action, None, Some("before-restart")))
        .await;
    let acted = ws.json().await;
    assert_eq!(
        api.summary(game).await["seq"],
        5,
        "no retry applied anything"
    );
    play_lines(&api, game, &tokens, &script, 5..6).await;
    let status = server.terminate();
    assert!(status.success(), "SIGTERM: {status}");
    assert_stored_script(&db, game, &script.first(6), &hashes);

    assert_eq!(
        (keyed.status, &keyed.body),
        (StatusCode::OK, &first.body),
        "a retry with the key answers the first result"
    );
    assert_eq!(
        (&acted["type"], &acted["seq"], &acted["first"]),
        (&json!("acted"), &json!(5), &json!(false)),
        "over the WebSocket: {acted}"
    );
    assert_eq!(
        (same.status, &same.body),
        (StatusCode::OK, &first.body),
        "the identical request (expected_seq 4, key) answers the first result"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_keyed_retry_of_the_games_last_action_answers_the_first_result_not_finished() {
    let script = Script::load("charges");
    let last = script.lines.len() - 1;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&dir.path().join("games.db"), &FAST);
    let api = Api::new(&server.base);
    let (game, tokens) = api.create(&script.create_body()).await;
    play_lines(&api, game, &tokens, &script, 0..last).await;
    let line = &script.lines[last];
    let token = &tokens[usize::from(line.player)];
    let first = api
        .act(game, token, &line.action, None, Some("the-end"))
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    assert_eq!(api.summary(game).await["finished"], true);
    let retry = api
        .act(game, token, &line.action, None, Some("the-end"))
        .await;
    assert_eq!(
        (retry.status, &retry.body),
        (StatusCode::OK, &first.body),
        "the retry of the final action answers its first result"
    );
}

/// Clients racing to join one game: exactly one gets a given seat, and clients asking for any free seat
/// get every free seat, each once, while one is left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_racing_to_join_get_each_free_seat_exactly_once() {
    const JOINERS: usize = 8;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&dir.path().join("games.db"), &FAST);
    let api = Api::new(&server.base);
    let create = json!({"ruleset": "charges", "players": 4, "seed": 1, "config": {}, "open_seats": [1, 2, 3]});
    for body in [json!({"seat": 2}), json!({})] {
        let reply = api.post("/api/games", None, create.to_string()).await;
        assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
        let game = reply.json()["game"].as_u64().expect("an id");
        let start = Arc::new(Barrier::new(JOINERS));
        let joiners: Vec<_> = (0..JOINERS)
            .map(|_| {
                let (api, start, body) = (Api::new(&server.base), start.clone(), body.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    api.post(&format!("/api/games/{game}/join"), None, body.to_string())
                        .await
                })
            })
            .collect();
        let mut seats = BTreeMap::new();
        let mut refused = Vec::new();
        for joiner in joiners {
            let reply = tokio::time::timeout(GAME_WAIT, joiner)
                .await
                .expect("answered in time")
                .expect("a joiner failed");
            match reply.status {
                StatusCode::OK => {
                    let joined = reply.json();
                    let seat = joined["seat"].as_u64().expect("a seat");
                    let token = joined["token"].as_str().expect("a token").to_owned();
                    assert!(
                        seats.insert(seat, token).is_none(),
                        "seat {seat} was given twice"
                    );
                }
                StatusCode::CONFLICT => refused.push(reply.body),
                other => panic!("join: {other} {}", reply.body),
            }
        }
        let expected: Vec<u64> = if body["seat"] == 2 {
            vec![2]
        } else {
            vec![1, 2, 3]
        };
        assert_eq!(
            seats.keys().copied().collect::<Vec<_>>(),
            expected,
            "{body}: the seats given; the refusals: {refused:?}"
        );
        for (seat, token) in &seats {
            let view = api
                .get(&format!("/api/games/{game}/view"), Some(token))
                .await;
            assert_eq!(view.status, StatusCode::OK, "{}", view.body);
            assert_eq!(view.json()["seat"], *seat);
        }
    }
}

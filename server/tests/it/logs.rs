//! The server's logs never carry a seat's hidden state, at any level. Two servers, each logging at
//! `COFFER_LOG=trace`, each host a charges game and a story-acts game, seated, played and read alike
//! over HTTP and WebSockets (every seat and a spectator); the games differ only in hidden state: p0's
//! planned dial (white in one, blue in the other) and p0's hand and deck (two seeds that deal p1 alike).
//! After removing what differs on purpose (game ids, tokens, addresses, paths, times), the two logs are
//! the same lines; and they hold DEBUG and TRACE lines, so the comparison is not empty.

use std::collections::BTreeMap;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::client::{Api, FAST, Ws, act_message};
use crate::play::create_watched;
use crate::secrecy::{story_acts_config, story_acts_seeds};
use crate::support::Server;

/// One seated game on one server, with a WebSocket per seat and one for the spectators.
struct Game {
    id: u64,
    tokens: Vec<String>,
    sockets: Vec<Ws>,
    seq: u64,
}

impl Game {
    async fn start(server: &Server, api: &Api, create: &Value) -> Game {
        let (id, tokens, mut sockets) = create_watched(server, api, create).await;
        for ws in &mut sockets {
            ws.text().await; // hello
            ws.text().await; // view
        }
        Game {
            id,
            tokens,
            sockets,
            seq: 0,
        }
    }

    /// Plays `action` as `seat` over HTTP; every WebSocket reads up to it; every audience reads its
    /// view and the history over HTTP.
    async fn act(&mut self, api: &Api, seat: usize, action: &str) {
        let reply = api
            .act(self.id, &self.tokens[seat], action, Some(self.seq), None)
            .await;
        assert_eq!(reply.status, StatusCode::OK, "{action}: {}", reply.body);
        self.seq += 1;
        for ws in &mut self.sockets {
            loop {
                let message = ws.json().await;
                if message["type"] == "action" && message["seq"] == self.seq {
                    break;
                }
            }
        }
        for token in self.tokens.iter().map(Some).chain([None]) {
            for path in ["view", "legal", "events?since=0"] {
                let path = format!("/api/games/{}/{path}", self.id);
                api.get(&path, token.map(String::as_str)).await;
            }
        }
    }

    /// Tries an action the rules refuse, over HTTP and over the seat's WebSocket.
    async fn try_refused(&mut self, api: &Api, seat: usize, action: &str) {
        let reply = api
            .act(self.id, &self.tokens[seat], action, None, None)
            .await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            reply.body
        );
        let ws = &mut self.sockets[seat];
        ws.send(act_message(action, None, None)).await;
        assert_eq!(ws.json().await["type"], "error");
    }
}

/// What one server logged while its two games were played, normalized.
async fn played(charges_plan: &str, story_acts_seed: u64) -> (Vec<String>, String) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut server = Server::start_with_env(
        &dir.path().join("games.db"),
        &FAST,
        &[("COFFER_LOG", "trace")],
    );
    let api = Api::new(&server.base);
    let mut charges = Game::start(
        &server,
        &api,
        &json!({"ruleset": "charges", "players": 2, "seed": 1, "config": {}}),
    )
    .await;
    let mut story = Game::start(
        &server,
        &api,
        &json!({"ruleset": "story-acts", "players": 2, "seed": story_acts_seed,
            "config": story_acts_config()}),
    )
    .await;
    let p1_touches_luke = [
        r#"{"type":"execute","ship":0}"#,
        r#"{"type":"plan","ship":0,"maneuver":"red"}"#,
    ];
    for tried in p1_touches_luke {
        charges.try_refused(&api, 1, tried).await;
    }
    charges.act(&api, 0, charges_plan).await;
    for tried in p1_touches_luke {
        charges.try_refused(&api, 1, tried).await;
    }
    charges
        .act(&api, 1, r#"{"type":"plan","ship":1,"maneuver":"purple"}"#)
        .await;
    charges.act(&api, 0, r#"{"type":"pass","ship":0}"#).await;
    charges.act(&api, 1, r#"{"type":"pass","ship":1}"#).await;
    // p0's cards are #1 to #4: p1 names them; p0 draws in its Draw Phase, then again a turn later.
    for card in 1..=4 {
        story
            .try_refused(&api, 1, &format!(r#"{{"type":"deploy","card":{card}}}"#))
            .await;
    }
    story
        .act(&api, 0, r#"{"type":"commit_votes","card":0}"#)
        .await;
    story.act(&api, 0, r#"{"type":"end_turn"}"#).await;
    story
        .act(&api, 1, r#"{"type":"commit_votes","card":5}"#)
        .await;
    for seat in [1, 0, 1, 0] {
        story.act(&api, seat, r#"{"type":"end_turn"}"#).await;
    }
    for game in [&mut charges, &mut story] {
        for ws in game.sockets.drain(..) {
            ws.close().await;
        }
    }
    let status = tokio::task::block_in_place(|| server.terminate());
    assert!(status.success(), "{status:?}");
    let log = server.log_text();
    let mut known = BTreeMap::new();
    for (game, name) in [(&charges, "charges"), (&story, "story")] {
        known.insert(game.id.to_string(), format!("<{name} game>"));
        for (seat, token) in game.tokens.iter().enumerate() {
            known.insert(token.clone(), format!("<{name} token {seat}>"));
        }
    }
    known.insert(server.addr.to_string(), "<addr>".to_owned());
    known.insert(dir.path().display().to_string(), "<dir>".to_owned());
    let lines = log.lines().map(|line| normalize(line, &known)).collect();
    (lines, log)
}

/// `line` without its time, with every known id, token, address and path replaced by its name.
fn normalize(line: &str, known: &BTreeMap<String, String>) -> String {
    // `2026-01-01T00:00:00.000000Z  INFO target: message`: the time is the first word.
    let mut line = line
        .split_once(' ')
        .map_or(line, |(_, rest)| rest)
        .trim_start()
        .to_owned();
    for (text, name) in known {
        line = line.replace(text, name);
    }
    line
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_at_trace_of_games_that_differ_only_in_hidden_state_are_the_same() {
    let (seed_a, seed_b) = story_acts_seeds();
    let (mut a, log_a) = played(r#"{"type":"plan","ship":0,"maneuver":"white"}"#, seed_a).await;
    let (mut b, log_b) = played(r#"{"type":"plan","ship":0,"maneuver":"blue"}"#, seed_b).await;
    for level in ["TRACE", "DEBUG"] {
        assert!(
            a.iter().any(|line| line.starts_with(level)),
            "the log holds {level} lines, or this test shows nothing:\n{log_a}"
        );
    }
    assert!(
        a.iter().any(|line| line.contains("coffer::event")),
        "the rulesets' events are logged (as a spectator sees them):\n{log_a}"
    );
    // Lines of concurrent tasks (a WebSocket's push, an HTTP answer) may come in either order: the
    // logs are compared as lists of lines, sorted.
    a.sort();
    b.sort();
    let only_a: Vec<&String> = a.iter().filter(|line| !b.contains(line)).collect();
    let only_b: Vec<&String> = b.iter().filter(|line| !a.contains(line)).collect();
    assert!(
        only_a.is_empty() && only_b.is_empty() && a == b,
        "the hidden state shows in the logs: {} lines only with white and the first deal, {} only \
         with blue and the second:\n{}\n--- against ---\n{}\n(whole logs: {} and {} lines)",
        only_a.len(),
        only_b.len(),
        only_a
            .iter()
            .take(20)
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        only_b
            .iter()
            .take(20)
            .map(|l| l.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        log_a.lines().count(),
        log_b.lines().count(),
    );
    println!(
        "two logs at trace, {} lines each ({} TRACE, {} DEBUG), the same after normalizing",
        a.len(),
        a.iter().filter(|l| l.starts_with("TRACE")).count(),
        a.iter().filter(|l| l.starts_with("DEBUG")).count()
    );
}

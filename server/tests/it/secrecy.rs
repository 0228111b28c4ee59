//! Hidden information stays hidden over the API. Two games on one server differ only in one seat's
//! hidden state; the same public actions are played in both. Every other seat and a spectator must be
//! sent byte-identical messages from the first to the last: everything their WebSocket delivers (the
//! hello, the views, every live action, the answers to `legal`, `view` and refused `act` requests), and
//! the HTTP answers to `GET view`, `GET events`, `GET legal`, their own actions and their refused
//! actions. The seat whose hidden state differs must be sent different messages, which shows the
//! comparison can tell.
//!
//! The only text that differs on purpose is the game's id (random per game, and in `hello` and a few
//! messages); it is replaced by `<game>` before comparing.
//!
//! Command-tokens has no hidden state (its README: "Nothing in this game is hidden"; every seat and the
//! spectators see the same), so there is nothing to test for it here.

use coffer_core::{Format, Setup};
use coffer_host::Registry;
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::client::{Api, FAST, Reply, Ws, act_message, submit_body, ws_path};
use crate::play::create_watched;
use crate::support::Server;

/// What a test does, in both games at once.
enum Step {
    /// A seat plays an action: the first in game A, the second in game B (the same, except where the
    /// hidden state is made).
    Act(u16, &'static str, &'static str),
    /// A seat tries an action the rules refuse (over HTTP, then over its WebSocket); the spectator tries
    /// it too (it may not act).
    Try(u16, String),
}

/// One audience of one game: a seat (its token) or the spectators (none), with its WebSocket and, in
/// order, everything it was sent.
struct Audience {
    name: String,
    token: Option<String>,
    ws: Ws,
    log: Vec<String>,
}

/// One of the two games.
struct Game {
    id: u64,
    tokens: Vec<String>,
    /// Seats `0..players`, then the spectator.
    audiences: Vec<Audience>,
    seq: u64,
}

impl Game {
    async fn start(server: &Server, api: &Api, create: &Value) -> Game {
        let (id, tokens, sockets) = create_watched(server, api, create).await;
        // Seats in order, then the spectator.
        let audiences = sockets
            .into_iter()
            .enumerate()
            .map(|(i, ws)| {
                let token = tokens.get(i);
                Audience {
                    name: token.map_or("the spectator".to_owned(), |_| format!("p{i}")),
                    token: token.cloned(),
                    ws,
                    log: Vec::new(),
                }
            })
            .collect();
        let mut game = Game {
            id,
            tokens,
            audiences,
            seq: 0,
        };
        for i in 0..game.audiences.len() {
            // hello, then the view.
            game.read(i, 2).await;
        }
        game
    }

    /// Normalizes and logs a message `audience` was sent.
    fn record(&mut self, audience: usize, text: &str) {
        let text = text.replace(&self.id.to_string(), "<game>");
        self.audiences[audience].log.push(text);
    }

    fn record_reply(&mut self, audience: usize, what: &str, reply: &Reply) {
        let text = format!("{what}: {} {}", reply.status.as_u16(), reply.body);
        self.record(audience, &text);
    }

    /// Reads `n` WebSocket messages of `audience` into its log.
    async fn read(&mut self, audience: usize, n: usize) {
        for _ in 0..n {
            let text = self.audiences[audience].ws.text().await;
            self.record(audience, &text);
        }
    }

    /// Reads `audience`'s WebSocket into its log until the `action` message of `seq`.
    async fn read_until(&mut self, audience: usize, seq: u64) {
        loop {
            let text = self.audiences[audience].ws.text().await;
            self.record(audience, &text);
            let message: Value = serde_json::from_str(&text).expect("JSON");
            if message["type"] == "action" && message["seq"] == seq {
                return;
            }
        }
    }

    /// Sends `request` on `audience`'s WebSocket and logs the answer (the game is quiet: the next
    /// message is the answer).
    async fn ask(&mut self, audience: usize, request: String) {
        self.audiences[audience].ws.send(request).await;
        self.read(audience, 1).await;
    }

    async fn act(&mut self, api: &Api, seat: u16, action: &str) {
        let token = self.tokens[usize::from(seat)].clone();
        let reply = api.act(self.id, &token, action, Some(self.seq), None).await;
        assert_eq!(reply.status, StatusCode::OK, "{action}: {}", reply.body);
        self.seq += 1;
        self.record_reply(usize::from(seat), "my action", &reply);
        for i in 0..self.audiences.len() {
            self.read_until(i, self.seq).await;
        }
    }

    async fn try_refused(&mut self, api: &Api, seat: u16, action: &str) {
        let token = self.tokens[usize::from(seat)].clone();
        let reply = api.act(self.id, &token, action, None, None).await;
        assert_eq!(
            reply.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "p{seat} {action} is meant to be refused by the rules: {}",
            reply.body
        );
        self.record_reply(usize::from(seat), "refused over HTTP", &reply);
        self.ask(usize::from(seat), act_message(action, None, None))
            .await;
        let answer = self.audiences[usize::from(seat)]
            .log
            .last()
            .expect("logged");
        let answer: Value = serde_json::from_str(answer).expect("JSON");
        assert_eq!(
            (&answer["type"], &answer["error"]),
            (&json!("error"), &json!("refused")),
            "p{seat} {action} over the WebSocket is meant to be refused by the rules: {answer}"
        );
        // The spectator may not act at all.
        let spectator = self.audiences.len() - 1;
        let reply = api
            .post(
                &format!("/api/games/{}/actions", self.id),
                None,
                submit_body(action, None, None),
            )
            .await;
        self.record_reply(spectator, "spectator acts over HTTP", &reply);
        self.ask(spectator, act_message(action, None, None)).await;
    }

    /// Each audience connects again with `since=0`: its hello, the whole history as it reads it, and
    /// its view.
    async fn replay(&mut self, server: &Server) {
        for i in 0..self.audiences.len() {
            let token = self.audiences[i].token.clone();
            let mut ws =
                Ws::connect(&server.ws(&ws_path(self.id, token.as_deref(), Some(0)))).await;
            for _ in 0..self.seq + 2 {
                let text = ws.text().await;
                self.record(i, &text);
            }
            let last: Value =
                serde_json::from_str(self.audiences[i].log.last().expect("logged")).expect("JSON");
            assert_eq!(
                (&last["type"], &last["seq"]),
                (&json!("view"), &json!(self.seq))
            );
            ws.close().await;
        }
    }

    /// Everything an audience may ask for now, over HTTP and its WebSocket.
    async fn probe(&mut self, api: &Api) {
        for i in 0..self.audiences.len() {
            let token = self.audiences[i].token.clone();
            let token = token.as_deref();
            for path in ["view", "events?since=0", "legal"] {
                let reply = api
                    .get(&format!("/api/games/{}/{path}", self.id), token)
                    .await;
                self.record_reply(i, path, &reply);
            }
            self.ask(i, json!({"type": "view"}).to_string()).await;
            self.ask(i, json!({"type": "legal"}).to_string()).await;
        }
    }
}

/// Plays `steps` in two games created with `create_a` and `create_b`; checks that every audience but
/// `hidden` was sent the same bytes in both, and that `hidden` was not.
async fn twin_games(create_a: Value, create_b: Value, hidden: usize, steps: &[Step]) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&dir.path().join("games.db"), &FAST);
    let api = Api::new(&server.base);
    let mut a = Game::start(&server, &api, &create_a).await;
    let mut b = Game::start(&server, &api, &create_b).await;
    for game in [&mut a, &mut b] {
        game.probe(&api).await;
    }
    for step in steps {
        match step {
            Step::Act(seat, in_a, in_b) => {
                a.act(&api, *seat, in_a).await;
                b.act(&api, *seat, in_b).await;
            }
            Step::Try(seat, action) => {
                a.try_refused(&api, *seat, action).await;
                b.try_refused(&api, *seat, action).await;
            }
        }
        for game in [&mut a, &mut b] {
            game.probe(&api).await;
        }
    }
    for game in [&mut a, &mut b] {
        game.replay(&server).await;
    }
    for (i, (x, y)) in a.audiences.iter().zip(&b.audiences).enumerate() {
        assert!(x.log.len() > 20, "{} was sent little: {:?}", x.name, x.log);
        if i == hidden {
            assert_ne!(
                x.log, y.log,
                "{}'s own messages must tell its two hidden states apart, or this test shows nothing",
                x.name
            );
            continue;
        }
        assert_eq!(
            x.log.len(),
            y.log.len(),
            "{} was sent as many messages",
            x.name
        );
        for (n, (mx, my)) in x.log.iter().zip(&y.log).enumerate() {
            assert_eq!(
                mx, my,
                "{} was sent different bytes in its message {n}: the hidden state of p{hidden} leaks",
                x.name
            );
        }
    }
}

fn charges_game() -> Value {
    json!({"ruleset": "charges", "players": 2, "seed": 1, "config": {}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charges_p0s_planned_dial_is_sent_to_nobody_else_until_it_is_revealed() {
    // The first four actions of examples/skirmish.jsonl, p0's Luke planning white in one game and
    // blue in the other; p1 keeps trying to touch Luke. Luke executes (reveals) next.
    let white = r#"{"type":"plan","ship":0,"maneuver":"white"}"#;
    let blue = r#"{"type":"plan","ship":0,"maneuver":"blue"}"#;
    let p1_tries = || {
        [
            r#"{"type":"execute","ship":0}"#,
            r#"{"type":"plan","ship":0,"maneuver":"red"}"#,
            r#"{"type":"pass","ship":0}"#,
        ]
        .map(|a| Step::Try(1, a.to_owned()))
    };
    let mut steps = Vec::new();
    steps.extend(p1_tries());
    steps.push(Step::Act(0, white, blue));
    steps.extend(p1_tries());
    steps.push(Step::Act(
        1,
        r#"{"type":"plan","ship":1,"maneuver":"purple"}"#,
        r#"{"type":"plan","ship":1,"maneuver":"purple"}"#,
    ));
    steps.extend(p1_tries());
    steps.push(Step::Act(
        0,
        r#"{"type":"pass","ship":0}"#,
        r#"{"type":"pass","ship":0}"#,
    ));
    steps.push(Step::Act(
        1,
        r#"{"type":"pass","ship":1}"#,
        r#"{"type":"pass","ship":1}"#,
    ));
    steps.extend(p1_tries());
    twin_games(charges_game(), charges_game(), 0, &steps).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charges_p1s_planned_dial_is_sent_to_nobody_else_while_p0s_ship_moves_and_acts() {
    // The first seven actions of examples/skirmish.jsonl, p1's Vader planning purple in one game and
    // blue in the other; Luke reveals, moves, focuses and ends its turn meanwhile. Vader executes next.
    let same = |a: &'static str| (a, a);
    let script = [
        (0, same(r#"{"type":"plan","ship":0,"maneuver":"white"}"#)),
        (
            1,
            (
                r#"{"type":"plan","ship":1,"maneuver":"purple"}"#,
                r#"{"type":"plan","ship":1,"maneuver":"blue"}"#,
            ),
        ),
        (0, same(r#"{"type":"pass","ship":0}"#)),
        (1, same(r#"{"type":"pass","ship":1}"#)),
        (0, same(r#"{"type":"execute","ship":0}"#)),
        (0, same(r#"{"type":"perform","ship":0,"action":"focus"}"#)),
        (0, same(r#"{"type":"pass","ship":0}"#)),
    ];
    let mut steps = Vec::new();
    for (seat, (in_a, in_b)) in script {
        steps.push(Step::Act(seat, in_a, in_b));
        for tried in [
            r#"{"type":"execute","ship":1}"#,
            r#"{"type":"plan","ship":1,"maneuver":"red"}"#,
        ] {
            steps.push(Step::Try(0, tried.to_owned()));
        }
    }
    twin_games(charges_game(), charges_game(), 1, &steps).await;
}

/// A small story-acts deck, so that two seeds can be found that shuffle p1's deck alike and p0's not.
const DECK: [&str; 4] = ["senator", "jedi_knight", "trade_spire", "spaceport"];

pub(crate) fn story_acts_config() -> Value {
    json!({"deck": DECK, "starting_hand": 2})
}

/// Two seeds whose games differ only in p0's hand and deck: p1's hand and deck are the same card for
/// card, p0's hands are not. Found by playing the setups in this process.
pub(crate) fn story_acts_seeds() -> (u64, u64) {
    let registry = Registry::with_static().expect("the static rulesets");
    let ruleset = registry
        .get("story-acts")
        .expect("story-acts is linked")
        .ruleset
        .clone();
    let cards = |seed: u64| {
        let game = ruleset
            .new_game(&Setup::new(2, seed).config(story_acts_config()))
            .expect("the setup is valid");
        let state: Value =
            serde_json::from_slice(&game.snapshot(Format::Json).expect("a snapshot"))
                .expect("JSON");
        let mut p0_hand: Vec<u64> = state["hands"][0]
            .as_array()
            .expect("a hand")
            .iter()
            .map(|c| c.as_u64().expect("a card"))
            .collect();
        p0_hand.sort_unstable();
        (
            p0_hand,
            (state["hands"][1].clone(), state["decks"][1].clone()),
        )
    };
    let seen: Vec<_> = (0..200).map(cards).collect();
    for (a, (hand_a, p1_a)) in seen.iter().enumerate() {
        for (b, (hand_b, p1_b)) in seen.iter().enumerate().skip(a + 1) {
            if p1_a == p1_b && hand_a != hand_b {
                return (a as u64, b as u64);
            }
        }
    }
    panic!("no two seeds below 200 deal p1 alike and p0 differently");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_acts_p0s_hand_and_draws_are_sent_to_nobody_else() {
    let (seed_a, seed_b) = story_acts_seeds();
    let create = |seed: u64| json!({"ruleset": "story-acts", "players": 2, "seed": seed, "config": story_acts_config()});
    // p0's cards are #1 to #4 (#0 is its Homeworld); p1's Homeworld is #5. p1 names each of p0's cards,
    // wherever it lies (hand or deck), in and out of turn.
    let p1_tries = || {
        (1..=4).flat_map(|c| {
            [
                format!(r#"{{"type":"deploy","card":{c}}}"#),
                format!(r#"{{"type":"commit_votes","card":{c}}}"#),
                format!(r#"{{"type":"discard","card":{c}}}"#),
            ]
            .map(|a| Step::Try(1, a))
        })
    };
    let same = |seat: u16, action: &'static str| Step::Act(seat, action, action);
    let mut steps: Vec<Step> = p1_tries().collect();
    steps.push(same(0, r#"{"type":"commit_votes","card":0}"#));
    steps.push(same(0, r#"{"type":"end_turn"}"#));
    steps.extend(p1_tries());
    steps.push(same(1, r#"{"type":"commit_votes","card":5}"#));
    // p0 draws in its Draw Phase, then again a turn later, emptying its deck.
    steps.push(same(1, r#"{"type":"end_turn"}"#));
    steps.push(same(0, r#"{"type":"end_turn"}"#));
    steps.push(same(1, r#"{"type":"end_turn"}"#));
    steps.extend(p1_tries());
    steps.push(same(0, r#"{"type":"end_turn"}"#));
    twin_games(create(seed_a), create(seed_b), 0, &steps).await;
}

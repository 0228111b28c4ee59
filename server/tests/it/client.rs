//! The clients of a real server these tests use ([`Api`] over HTTP, [`Ws`] over the WebSocket) and the
//! waits and log readers built on them. No tests here: the `clocks` test binary includes this file
//! beside `support.rs`, so its timing-sensitive tests share them without sharing a process with the
//! rest of the suite.

use std::path::Path;
use std::time::{Duration, Instant};

use coffer_core::Setup as CoreSetup;
use coffer_server::{GameId, SqliteStore, Store as _};
use futures_util::{SinkExt as _, StreamExt as _};
use reqwest::StatusCode;
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::support::replay_stored;

/// The longest any single wait of these tests may take (a message, a reply, a connection).
pub const WAIT: Duration = Duration::from_secs(15);

/// The longest a whole game may take to play.
pub const GAME_WAIT: Duration = Duration::from_secs(60);

/// Rate limits no test reaches: these tests submit as fast as they can.
pub const FAST: [&str; 8] = [
    "--actions-per-second",
    "100000",
    "--action-burst",
    "100000",
    "--reads-per-second",
    "100000",
    "--read-burst",
    "100000",
];

// ----- HTTP -----

/// An HTTP client of one server.
#[derive(Clone)]
pub struct Api {
    http: reqwest::Client,
    base: String,
}

/// A reply: its status and its body, exactly as received.
#[derive(Clone, Debug)]
pub struct Reply {
    /// The HTTP status.
    pub status: StatusCode,
    /// The body's text.
    pub body: String,
}

impl Reply {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }
}

#[derive(Serialize)]
struct SubmitBody<'a> {
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    kind: Option<&'static str>,
    action: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
}

/// The body of an action submission (`POST .../actions`), the action's JSON kept as written.
pub fn submit_body(action: &str, expected_seq: Option<u64>, key: Option<&str>) -> String {
    let action: &RawValue = serde_json::from_str(action).expect("an action is JSON");
    serde_json::to_string(&SubmitBody {
        kind: None,
        action,
        expected_seq,
        key,
    })
    .expect("serializes")
}

/// The WebSocket message that submits an action.
pub fn act_message(action: &str, expected_seq: Option<u64>, key: Option<&str>) -> String {
    let action: &RawValue = serde_json::from_str(action).expect("an action is JSON");
    serde_json::to_string(&SubmitBody {
        kind: Some("act"),
        action,
        expected_seq,
        key,
    })
    .expect("serializes")
}

impl Api {
    /// A client of the server at `base` (its own connection pool, no proxy).
    pub fn new(base: &str) -> Api {
        Api {
            http: reqwest::Client::builder()
                .no_proxy()
                .timeout(WAIT)
                .build()
                .expect("an HTTP client"),
            base: base.to_owned(),
        }
    }

    async fn send(&self, request: reqwest::RequestBuilder) -> Reply {
        let response = request.send().await.expect("the server answers");
        let status = response.status();
        let body = response.text().await.expect("a body");
        Reply { status, body }
    }

    /// `GET path`, with a seat's token or as a spectator.
    pub async fn get(&self, path: &str, token: Option<&str>) -> Reply {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        self.send(request).await
    }

    /// `POST path` with a JSON body (text as given).
    pub async fn post(&self, path: &str, token: Option<&str>, body: String) -> Reply {
        let mut request = self
            .http
            .post(format!("{}{path}", self.base))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        self.send(request).await
    }

    /// Creates a game; answers its id and the seats' tokens (every seat taken).
    pub async fn create(&self, body: &Value) -> (u64, Vec<String>) {
        let reply = self.post("/api/games", None, body.to_string()).await;
        assert_eq!(reply.status, StatusCode::CREATED, "create: {}", reply.body);
        let created = reply.json();
        let tokens = created["tokens"]
            .as_array()
            .expect("tokens")
            .iter()
            .map(|t| t.as_str().expect("every seat has a token").to_owned())
            .collect();
        (created["game"].as_u64().expect("an id"), tokens)
    }

    /// Submits an action for the seat of `token`.
    pub async fn act(
        &self,
        game: u64,
        token: &str,
        action: &str,
        expected_seq: Option<u64>,
        key: Option<&str>,
    ) -> Reply {
        self.post(
            &format!("/api/games/{game}/actions"),
            Some(token),
            submit_body(action, expected_seq, key),
        )
        .await
    }

    /// The game as the lobby shows it.
    pub async fn summary(&self, game: u64) -> Value {
        let reply = self.get(&format!("/api/games/{game}"), None).await;
        assert_eq!(reply.status, StatusCode::OK, "summary: {}", reply.body);
        reply.json()
    }
}

/// The actions stored for `game`, read from the store file once its server has exited.
pub fn stored_actions(db: &Path, game: u64) -> Vec<coffer_server::Action> {
    let store = SqliteStore::open(db, Default::default()).expect("the store opens");
    store.actions_after(GameId(game), 0).expect("the log reads")
}

// ----- WebSocket -----

/// A WebSocket client.
pub struct Ws {
    stream: WebSocketStream<MaybeTlsStream<TcpStream>>,
}

impl Ws {
    /// Connects to `url` (`ws://...`).
    pub async fn connect(url: &str) -> Ws {
        let (stream, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(url))
            .await
            .unwrap_or_else(|_| panic!("no WebSocket to {url} within {WAIT:?}"))
            .unwrap_or_else(|e| panic!("WebSocket to {url}: {e}"));
        Ws { stream }
    }

    /// The next text message, exactly as received. Fails on anything else, and after [`WAIT`].
    pub async fn text(&mut self) -> String {
        loop {
            let next = tokio::time::timeout(WAIT, self.stream.next())
                .await
                .unwrap_or_else(|_| panic!("no WebSocket message within {WAIT:?}"));
            match next {
                Some(Ok(Message::Text(text))) => return text.as_str().to_owned(),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                other => panic!("expected a text message, got {other:?}"),
            }
        }
    }

    /// The next text message as JSON.
    pub async fn json(&mut self) -> Value {
        let text = self.text().await;
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    }

    /// The next text message, read for its small fields only (`type`, `seq`, `seat`, `actor`, `first`,
    /// `key`, `error`, `message`; `view` as `true` when present): much cheaper than all of it, for
    /// clients that only follow the game.
    pub async fn head(&mut self) -> Value {
        let text = self.text().await;
        let head: Head =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"));
        let mut value = json!({
            "type": head.kind, "seq": head.seq, "seat": head.seat, "actor": head.actor,
            "first": head.first, "key": head.key, "error": head.error, "message": head.message,
        });
        if head.view.is_some() {
            value["view"] = json!(true);
        }
        value
    }

    /// Sends a text message.
    pub async fn send(&mut self, text: String) {
        tokio::time::timeout(WAIT, self.stream.send(Message::Text(text.into())))
            .await
            .expect("sent in time")
            .expect("sent");
    }

    /// Reads until the server closes the socket; answers the close code and the text messages read
    /// before it.
    pub async fn until_closed(&mut self) -> (Option<u16>, Vec<String>) {
        let mut texts = Vec::new();
        loop {
            let next = tokio::time::timeout(WAIT, self.stream.next())
                .await
                .unwrap_or_else(|_| panic!("the socket was not closed within {WAIT:?}"));
            match next {
                Some(Ok(Message::Text(text))) => texts.push(text.as_str().to_owned()),
                Some(Ok(Message::Close(frame))) => {
                    return (frame.map(|f| u16::from(f.code)), texts);
                }
                Some(Ok(_)) => {}
                None | Some(Err(_)) => return (None, texts),
            }
        }
    }

    /// Closes the socket from this side.
    pub async fn close(mut self) {
        let _ = tokio::time::timeout(WAIT, self.stream.close(None)).await;
    }
}

/// The small fields of a message.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "type")]
    kind: Option<String>,
    seq: Option<u64>,
    seat: Option<u16>,
    actor: Option<u16>,
    first: Option<bool>,
    key: Option<String>,
    error: Option<String>,
    message: Option<String>,
    view: Option<IgnoredAny>,
}

/// The WebSocket path of `game` for a seat's `token` (or a spectator) from `since`.
pub fn ws_path(game: u64, token: Option<&str>, since: Option<u64>) -> String {
    let mut query = Vec::new();
    if let Some(since) = since {
        query.push(format!("since={since}"));
    }
    if let Some(token) = token {
        query.push(format!("token={token}"));
    }
    if query.is_empty() {
        format!("/api/games/{game}/ws")
    } else {
        format!("/api/games/{game}/ws?{}", query.join("&"))
    }
}

/// Waits until game `game` is finished; answers its summary.
pub async fn until_finished(api: &Api, game: u64) -> Value {
    let started = Instant::now();
    loop {
        let summary = api.summary(game).await;
        if summary["finished"] == true {
            return summary;
        }
        assert!(summary["stopped"].is_null(), "the game stopped: {summary}");
        assert!(
            started.elapsed() < GAME_WAIT,
            "the bots did not finish the game within {GAME_WAIT:?}: {summary}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Replays the stored log of `game` (ruleset `ruleset`, its `setup`) in this process with the statically
/// linked ruleset: every action applies as the seat it names, every stored hash is the replay's, and the
/// game ends. Answers the log.
pub fn replay_log(
    db: &Path,
    game: u64,
    ruleset: &str,
    setup: CoreSetup,
) -> Vec<coffer_server::Action> {
    let stored = stored_actions(db, game);
    assert!(!stored.is_empty(), "the log holds the moves");
    replay_stored(ruleset, setup, &stored);
    stored
}

/// Seat `token` of `game` plays its first legal action whenever it has one, until the game ends or it
/// made `most` actions; others (bots, timeouts) act meanwhile. Answers how many it made.
pub async fn play_first_legal(api: &Api, game: u64, token: &str, most: usize) -> usize {
    let started = Instant::now();
    let mut mine = 0;
    while mine < most {
        let summary = api.summary(game).await;
        if summary["finished"] == true {
            break;
        }
        assert!(
            started.elapsed() < GAME_WAIT,
            "the game did not end: {summary}"
        );
        let legal = api
            .get(&format!("/api/games/{game}/legal"), Some(token))
            .await
            .json();
        let Some(action) = legal["actions"].as_array().and_then(|a| a.first()) else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        let acted = api
            .act(
                game,
                token,
                &action.to_string(),
                legal["seq"].as_u64(),
                None,
            )
            .await;
        match acted.status {
            StatusCode::OK => mine += 1,
            // Another seat acted between the two requests (several may act in some phases).
            StatusCode::CONFLICT => {}
            other => panic!("{other}: {}", acted.body),
        }
    }
    mine
}

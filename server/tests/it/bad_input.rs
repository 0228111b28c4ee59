//! Bad input against a real server: malformed and oversized requests, wrong routes, methods, games and
//! tokens, floods past the rate limit, too many connections or games, silent clients and WebSockets
//! that never answer. Every refusal is the API's JSON error (`{"error": code, "message": words}`) with
//! the documented status, and nothing refused changes a game.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use futures_util::{SinkExt as _, StreamExt as _};
use reqwest::{Client, Method, Response, StatusCode};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;

use crate::support::{Server, game_and_tokens, get_json, legal};

/// Every wait on the server is bounded by this.
const WAIT: Duration = Duration::from_secs(10);

/// An HTTP client whose every request is bounded.
pub fn client() -> Client {
    Client::builder()
        .timeout(WAIT)
        .build()
        .expect("an HTTP client")
}

/// A game created on `base`: its answer (`game`, `tokens`).
pub async fn create(client: &Client, base: &str, body: Value) -> Value {
    let response = client
        .post(format!("{base}/api/games"))
        .json(&body)
        .send()
        .await
        .expect("create answers");
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::CREATED, "create {body}: {text}");
    serde_json::from_str(&text).unwrap()
}

/// A two-seat charges game long enough for any test: `(id, [token of seat 0, token of seat 1])`.
pub async fn charges_game(client: &Client, base: &str, seed: u64) -> (u64, Vec<String>) {
    let created = create(
        client,
        base,
        json!({"ruleset": "charges", "players": 2, "seed": seed, "config": {"max_rounds": 1000}}),
    )
    .await;
    game_and_tokens(&created)
}

/// Checks that `response` is the API's JSON error `code` with `status` and a message in words; returns
/// the body's text.
pub async fn expect_error(
    response: Response,
    status: StatusCode,
    code: &str,
    what: &str,
) -> String {
    let got = response.status();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = response.text().await.expect("a body");
    assert_eq!(got, status, "{what}: {text}");
    assert!(
        content_type.starts_with("application/json"),
        "{what}: content type {content_type:?}, body {text}"
    );
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{what}: {e}: {text}"));
    assert_eq!(body["error"], code, "{what}: {text}");
    let message = body["message"].as_str().unwrap_or("");
    assert!(
        message.len() > 10 && message.contains(' '),
        "{what}: the message is words: {text}"
    );
    text
}

async fn send(
    client: &Client,
    method: Method,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Response {
    let mut request = client.request(method, url);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_owned());
    }
    request.send().await.expect("the server answers")
}

/// The game's sequence number, as the lobby says.
pub async fn seq_of(client: &Client, base: &str, game: u64) -> u64 {
    let summary: Value = get_json(client, format!("{base}/api/games/{game}")).await;
    summary["seq"].as_u64().expect("a sequence number")
}

fn store(dir: &Path) -> std::path::PathBuf {
    dir.join("games.db")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_requests_answer_json_errors_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store(dir.path()),
        &["--max-body-bytes", "4096", "--max-json-depth", "8"],
    );
    let base = server.base.as_str();
    let client = client();
    let (game, tokens) = charges_game(&client, base, 7).await;
    let (other, other_tokens) = charges_game(&client, base, 8).await;
    let games = format!("{base}/api/games");
    let url = |path: &str| format!("{base}/api/games/{game}{path}");
    let t0 = Some(tokens[0].as_str());
    let (seq, actions) = legal(&client, base, game, &tokens[0]).await;
    assert_eq!(seq, 0);
    let first = actions[0].to_string();

    // Bodies that are not the JSON asked for.
    let bodies = [
        ("not JSON", "{bad"),
        ("empty", ""),
        ("a string", "\"charges\""),
        ("wrong type of ruleset", r#"{"ruleset":1,"players":2}"#),
        (
            "wrong type of players",
            r#"{"ruleset":"charges","players":"two"}"#,
        ),
        (
            "players out of range",
            r#"{"ruleset":"charges","players":70000}"#,
        ),
        (
            "negative seed",
            r#"{"ruleset":"charges","players":2,"seed":-1}"#,
        ),
        ("missing players", r#"{"ruleset":"charges"}"#),
        (
            "unknown field",
            r#"{"ruleset":"charges","players":2,"colour":"red"}"#,
        ),
        (
            "open seat of a wrong type",
            r#"{"ruleset":"charges","players":2,"open_seats":"0"}"#,
        ),
        (
            "open seat that does not exist",
            r#"{"ruleset":"charges","players":2,"open_seats":[5]}"#,
        ),
        (
            "a configuration the ruleset refuses",
            r#"{"ruleset":"charges","players":2,"config":{"max_rounds":"x"}}"#,
        ),
        ("too few players", r#"{"ruleset":"charges","players":0}"#),
        ("truncated UTF-8", "{\"ruleset\":\"\u{e9}"),
    ];
    for (what, body) in bodies {
        let response = send(&client, Method::POST, &games, None, Some(body)).await;
        expect_error(response, StatusCode::BAD_REQUEST, "bad_request", what).await;
    }
    let response = send(
        &client,
        Method::POST,
        &games,
        None,
        Some(r#"{"ruleset":"no-such-game","players":2}"#),
    )
    .await;
    expect_error(
        response,
        StatusCode::NOT_FOUND,
        "not_found",
        "unknown ruleset",
    )
    .await;
    // Bytes that are not UTF-8 at all.
    let response = client
        .post(&games)
        .body(vec![0xff, 0xfe, b'{', 0x80])
        .send()
        .await
        .unwrap();
    expect_error(
        response,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "binary body",
    )
    .await;

    // Actions: malformed, wrong types, unknown fields, actions the ruleset does not know.
    let actions_url = url("/actions");
    let long_key = "k".repeat(129);
    let submissions = [
        (
            "not JSON",
            "{\"action\":".to_owned(),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "no action",
            r#"{"expected_seq":0}"#.to_owned(),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "expected_seq a string",
            format!(r#"{{"action":{first},"expected_seq":"0"}}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "expected_seq negative",
            format!(r#"{{"action":{first},"expected_seq":-1}}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "key a number",
            format!(r#"{{"action":{first},"key":5}}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "key empty",
            format!(r#"{{"action":{first},"key":""}}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "key too long",
            format!(r#"{{"action":{first},"key":"{long_key}"}}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "unknown field",
            format!(r#"{{"action":{first},"later":true}}"#),
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "unknown action",
            r#"{"action":{"type":"win"}}"#.to_owned(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "refused",
        ),
        (
            "action of a wrong shape",
            r#"{"action":[1,2,3]}"#.to_owned(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "refused",
        ),
        (
            "action null",
            r#"{"action":null}"#.to_owned(),
            StatusCode::UNPROCESSABLE_ENTITY,
            "refused",
        ),
        (
            "stale expected_seq",
            format!(r#"{{"action":{first},"expected_seq":3}}"#),
            StatusCode::CONFLICT,
            "stale",
        ),
    ];
    for (what, body, status, code) in &submissions {
        let response = send(&client, Method::POST, &actions_url, t0, Some(body)).await;
        let text = expect_error(response, *status, code, what).await;
        if *code == "stale" {
            let body: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(body["current_seq"], 0, "{text}");
        }
    }
    let response = client
        .post(&actions_url)
        .bearer_auth(&tokens[0])
        .header("idempotency-key", "")
        .body(format!(r#"{{"action":{first}}}"#))
        .send()
        .await
        .unwrap();
    expect_error(
        response,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "empty Idempotency-Key",
    )
    .await;
    // Joining: wrong types, unknown fields, seats that do not exist or are taken.
    for (what, body, status, code) in [
        (
            "seat a string",
            r#"{"seat":"0"}"#,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        (
            "unknown field",
            r#"{"chair":0}"#,
            StatusCode::BAD_REQUEST,
            "bad_request",
        ),
        ("not JSON", "seat=0", StatusCode::BAD_REQUEST, "bad_request"),
        (
            "no such seat",
            r#"{"seat":9}"#,
            StatusCode::NOT_FOUND,
            "not_found",
        ),
        (
            "seat taken",
            r#"{"seat":0}"#,
            StatusCode::CONFLICT,
            "seat_taken",
        ),
        ("no free seat", "", StatusCode::CONFLICT, "seat_taken"),
    ] {
        let response = send(&client, Method::POST, &url("/join"), None, Some(body)).await;
        expect_error(response, status, code, what).await;
    }

    // Routes, methods, games and ids that do not exist.
    for path in [
        "/nope",
        "/api",
        "/api/game",
        "/api/games/1/2/3",
        "/API/games",
        "/healthz/x",
    ] {
        let response = send(&client, Method::GET, &format!("{base}{path}"), None, None).await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found", path).await;
    }
    for (method, path) in [
        (Method::DELETE, "/api/games".to_owned()),
        (Method::PUT, format!("/api/games/{game}")),
        (Method::GET, format!("/api/games/{game}/actions")),
        (Method::POST, format!("/api/games/{game}/view")),
        (Method::PATCH, "/healthz".to_owned()),
        (Method::POST, "/api/rulesets".to_owned()),
    ] {
        let what = format!("{method} {path}");
        let response = send(&client, method, &format!("{base}{path}"), None, None).await;
        expect_error(
            response,
            StatusCode::METHOD_NOT_ALLOWED,
            "method_not_allowed",
            &what,
        )
        .await;
    }
    for id in [
        "123",
        "abc",
        "-1",
        "1.5",
        "99999999999999999999999",
        "%00",
        "0x10",
    ] {
        for path in ["", "/view", "/events", "/legal"] {
            let what = format!("game {id}{path}");
            let response = send(
                &client,
                Method::GET,
                &format!("{base}/api/games/{id}{path}"),
                t0,
                None,
            )
            .await;
            expect_error(response, StatusCode::NOT_FOUND, "not_found", &what).await;
        }
        let response = send(
            &client,
            Method::POST,
            &format!("{base}/api/games/{id}/actions"),
            t0,
            Some(&format!(r#"{{"action":{first}}}"#)),
        )
        .await;
        expect_error(response, StatusCode::NOT_FOUND, "not_found", id).await;
    }
    for query in ["?since=abc", "?since=-1", "?since=1e3", "?limit=x"] {
        let path = if query.starts_with("?limit") {
            games.clone()
        } else {
            url("/events")
        };
        let response = send(&client, Method::GET, &format!("{path}{query}"), None, None).await;
        expect_error(response, StatusCode::BAD_REQUEST, "bad_request", query).await;
    }
    let response = send(&client, Method::GET, &url("/ws"), None, None).await;
    expect_error(
        response,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "plain GET of /ws",
    )
    .await;

    // Tokens: none (401 with WWW-Authenticate), malformed (400), garbage or another game's (403),
    // and no 403 holds anything of the game.
    for path in ["/legal", "/actions"] {
        let method = if path == "/actions" {
            Method::POST
        } else {
            Method::GET
        };
        let response = send(
            &client,
            method,
            &url(path),
            None,
            Some(&format!(r#"{{"action":{first}}}"#)),
        )
        .await;
        assert_eq!(
            response
                .headers()
                .get("www-authenticate")
                .map(|v| v.to_str().unwrap()),
            Some("Bearer"),
            "{path}"
        );
        expect_error(response, StatusCode::UNAUTHORIZED, "unauthorized", path).await;
    }
    let spectator: Value = get_json(&client, url("/view")).await;
    let ship = spectator["view"]["table"]["sections"][0]["rows"][0]["label"]
        .as_str()
        .expect("a ship's name in the view")
        .to_owned();
    for (what, token) in [
        ("garbage token", "garbage"),
        ("another game's token", other_tokens[0].as_str()),
        ("a token with spaces", "a b c"),
    ] {
        for (method, path) in [
            (Method::GET, "/view"),
            (Method::GET, "/legal"),
            (Method::GET, "/events"),
            (Method::GET, "/ws"),
            (Method::POST, "/actions"),
        ] {
            let what = format!("{what} on {path}");
            let response = send(
                &client,
                method,
                &url(path),
                Some(token),
                Some(&format!(r#"{{"action":{first}}}"#)),
            )
            .await;
            let text = expect_error(response, StatusCode::FORBIDDEN, "forbidden", &what).await;
            for secret in [
                ship.as_str(),
                "table",
                "resources",
                "view",
                "actions",
                &tokens[0],
            ] {
                assert!(
                    !text.contains(secret),
                    "{what}: the 403 holds {secret:?}: {text}"
                );
            }
        }
    }
    let response = send(
        &client,
        Method::GET,
        &format!("{}?token=garbage", url("/events")),
        None,
        None,
    )
    .await;
    expect_error(
        response,
        StatusCode::FORBIDDEN,
        "forbidden",
        "garbage ?token",
    )
    .await;
    for header in ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "token"] {
        let response = client
            .get(url("/legal"))
            .header("authorization", header)
            .send()
            .await
            .unwrap();
        expect_error(response, StatusCode::BAD_REQUEST, "bad_request", header).await;
    }

    // Sizes: a body past --max-body-bytes (413, announced or chunked), JSON deeper than
    // --max-json-depth (400), on every route that reads a body.
    let padding = " ".repeat(5000);
    let big = format!(r#"{{"ruleset":"charges","players":2{padding}}}"#);
    let deep = format!("{}{}", "[".repeat(9), "]".repeat(9));
    let deep_action = format!(r#"{{"action":{}1{}}}"#, "[".repeat(8), "]".repeat(8));
    let shallow_action = format!(r#"{{"action":{}1{}}}"#, "[".repeat(7), "]".repeat(7));
    for (what, url, token) in [
        ("create", games.clone(), None),
        ("join", url("/join"), None),
        ("act", actions_url.clone(), t0),
    ] {
        let response = send(&client, Method::POST, &url, token, Some(&big)).await;
        expect_error(response, StatusCode::PAYLOAD_TOO_LARGE, "too_large", what).await;
        let response = send(&client, Method::POST, &url, token, Some(&deep)).await;
        let text = expect_error(response, StatusCode::BAD_REQUEST, "bad_request", what).await;
        assert!(text.contains("deeper than 8"), "{what}: {text}");
    }
    let response = send(&client, Method::POST, &actions_url, t0, Some(&deep_action)).await;
    expect_error(
        response,
        StatusCode::BAD_REQUEST,
        "bad_request",
        "deep action",
    )
    .await;
    // One level less is read, and refused by the rules instead.
    let response = send(
        &client,
        Method::POST,
        &actions_url,
        t0,
        Some(&shallow_action),
    )
    .await;
    expect_error(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "refused",
        "shallow action",
    )
    .await;
    let chunked = raw_request(
        &server,
        &format!(
            "POST /api/games HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{:x}\r\n{big}\r\n0\r\n\r\n",
            big.len()
        ),
    );
    assert!(chunked.starts_with("HTTP/1.1 413"), "{chunked}");
    assert!(chunked.contains(r#""error":"too_large""#), "{chunked}");

    // Nothing of all that changed either game, and both still play.
    assert_eq!(seq_of(&client, base, game).await, 0);
    assert_eq!(seq_of(&client, base, other).await, 0);
    let listed: Vec<Value> = get_json(&client, &games).await;
    assert_eq!(
        listed.len(),
        2,
        "no game was created by a bad request: {listed:?}"
    );
    let response = send(
        &client,
        Method::POST,
        &actions_url,
        t0,
        Some(&format!(r#"{{"action":{first},"expected_seq":0}}"#)),
    )
    .await;
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(seq_of(&client, base, game).await, 1);
    assert!(
        !server.log_text().contains("panicked"),
        "{}",
        server.log_text()
    );
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// The next text message of `socket` as JSON (bounded).
pub async fn next_json(socket: &mut Socket) -> Value {
    loop {
        let message = tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("a message in time")
            .expect("the socket is open")
            .expect("a readable message");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).expect("JSON text");
        }
    }
}

/// Sends `request` on a fresh connection and reads until the server closes it (bounded).
fn raw_request(server: &Server, request: &str) -> String {
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = stream.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Waits (bounded) for the server to close `stream`: answers how long it took. Panics if it stays open.
fn wait_closed(stream: &mut TcpStream, within: Duration) -> Duration {
    let started = Instant::now();
    stream.set_read_timeout(Some(within)).unwrap();
    let mut buffer = [0u8; 4096];
    loop {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) if started.elapsed() < within => return started.elapsed(),
            Ok(_) if started.elapsed() < within => continue,
            _ => panic!("the connection stayed open for {within:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn websocket_messages_past_the_limit_close_with_1009() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store(dir.path()),
        &["--max-ws-message-bytes", "1024", "--max-json-depth", "8"],
    );
    let client = client();
    let (game, tokens) = charges_game(&client, &server.base, 3).await;
    let url = server.ws(&format!("/api/games/{game}/ws?token={}", tokens[0]));
    let (mut socket, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(&url))
        .await
        .expect("connects in time")
        .expect("a WebSocket");
    assert_eq!(next_json(&mut socket).await["type"], "hello");
    assert_eq!(next_json(&mut socket).await["type"], "view");
    // Bad messages under the limit are answered with errors, and the socket stays open.
    for (message, what) in [
        ("{not json".to_owned(), "malformed"),
        (r#"{"type":"dance"}"#.to_owned(), "unknown type"),
        (r#"{"type":"view","extra":1}"#.to_owned(), "unknown field"),
        (format!("{}{}", "[".repeat(9), "]".repeat(9)), "too deep"),
        (
            r#"{"type":"act","action":{"type":"win"}}"#.to_owned(),
            "refused action",
        ),
    ] {
        socket.send(Message::text(message)).await.unwrap();
        let answer = next_json(&mut socket).await;
        assert_eq!(answer["type"], "error", "{what}: {answer}");
        assert!(
            answer["error"].is_string() && answer["message"].is_string(),
            "{what}: {answer}"
        );
    }
    socket
        .send(Message::Binary(vec![1u8, 2, 3].into()))
        .await
        .unwrap();
    assert_eq!(next_json(&mut socket).await["type"], "error", "binary");
    // A legal action under the limit is applied (the socket works; nothing above was applied).
    let (seq, actions) = legal(&client, &server.base, game, &tokens[0]).await;
    assert_eq!(seq, 0);
    let act = json!({"type": "act", "action": actions[0], "expected_seq": 0, "key": "ws-1"});
    socket.send(Message::text(act.to_string())).await.unwrap();
    let acted = loop {
        let message = next_json(&mut socket).await;
        if message["type"] != "action" {
            break message;
        }
    };
    assert_eq!(acted["type"], "acted", "{acted}");
    assert_eq!(acted["seq"], 1, "{acted}");
    // Past the limit: closed with 1009.
    let padding = " ".repeat(2000);
    socket
        .send(Message::text(format!(r#"{{"type":"view"{padding}}}"#)))
        .await
        .unwrap();
    let started = Instant::now();
    let code = loop {
        match tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("closed in time")
        {
            Some(Ok(Message::Close(frame))) => break frame.map(|f| f.code),
            Some(Ok(_)) => continue,
            Some(Err(e)) => panic!("closed without a close frame: {e}"),
            None => panic!("closed without a close frame"),
        }
    };
    assert_eq!(code, Some(CloseCode::Size), "after {:?}", started.elapsed());
    // The oversized message applied nothing, and the server serves on.
    assert_eq!(seq_of(&client, &server.base, game).await, 1);
    let health = client
        .get(format!("{}/healthz", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(health.status(), StatusCode::OK);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_past_the_rate_limit_is_refused_with_429_and_applies_nothing_more() {
    let dir = tempfile::tempdir().unwrap();
    let burst = 5u64;
    let server = Server::start(
        &store(dir.path()),
        &["--actions-per-second", "1", "--action-burst", "5"],
    );
    let base = server.base.clone();
    let client = client();
    let (game, tokens) = charges_game(&client, &base, 11).await;
    let (_, actions) = legal(&client, &base, game, &tokens[0]).await;
    // Forty submissions of seat 0 at once, each a legal action of its own (its plan; the first applied
    // wins, the others are refused by the rules), each under its own key.
    let started = Instant::now();
    let flood: Vec<_> = (0..40)
        .map(|i| {
            let client = client.clone();
            let url = format!("{base}/api/games/{game}/actions");
            let token = tokens[0].clone();
            let action = actions[i % actions.len()].clone();
            tokio::spawn(async move {
                client
                    .post(url)
                    .bearer_auth(token)
                    .json(&json!({"action": action, "key": format!("flood-{i}")}))
                    .send()
                    .await
                    .expect("an answer")
            })
        })
        .collect();
    let mut admitted = 0u64;
    let mut applied = 0u64;
    let mut limited = 0u64;
    for answer in flood {
        let response = answer.await.unwrap();
        match response.status() {
            StatusCode::TOO_MANY_REQUESTS => {
                limited += 1;
                let retry: u64 = response
                    .headers()
                    .get("retry-after")
                    .expect("429 says when to retry")
                    .to_str()
                    .unwrap()
                    .parse()
                    .expect("Retry-After in seconds");
                assert!((1..=2).contains(&retry), "Retry-After {retry}");
                expect_error(
                    response,
                    StatusCode::TOO_MANY_REQUESTS,
                    "rate_limited",
                    "flood",
                )
                .await;
            }
            StatusCode::OK => {
                admitted += 1;
                applied += 1;
            }
            _ => {
                admitted += 1;
                expect_error(
                    response,
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "refused",
                    "flood",
                )
                .await;
            }
        }
    }
    let elapsed = started.elapsed().as_secs() + 1;
    assert!(
        admitted >= burst && admitted <= burst + elapsed,
        "admitted {admitted}, limited {limited}, in {elapsed} s"
    );
    assert_eq!(admitted + limited, 40);
    assert!(applied >= 1, "a legal plan was applied");
    assert_eq!(
        seq_of(&client, &base, game).await,
        applied,
        "nothing applied beyond the answers"
    );
    // The limit is per seat: the other seat acts at once.
    let (seq, actions) = legal(&client, &base, game, &tokens[1]).await;
    let response = client
        .post(format!("{base}/api/games/{game}/actions"))
        .bearer_auth(&tokens[1])
        .json(&json!({"action": actions[0], "expected_seq": seq}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    // And over the WebSocket the same seat is still limited.
    let url = server.ws(&format!("/api/games/{game}/ws?token={}", tokens[0]));
    let (mut socket, _) = tokio::time::timeout(WAIT, tokio_tungstenite::connect_async(&url))
        .await
        .unwrap()
        .unwrap();
    let mut codes = Vec::new();
    for i in 0..10 {
        socket
            .send(Message::text(
                json!({"type": "act", "action": {"type": "win"}, "key": format!("ws-{i}")})
                    .to_string(),
            ))
            .await
            .unwrap();
    }
    while codes.len() < 10 {
        let message = tokio::time::timeout(WAIT, socket.next())
            .await
            .expect("answers in time")
            .unwrap()
            .unwrap();
        if let Message::Text(text) = message {
            let answer: Value = serde_json::from_str(&text).unwrap();
            if answer["type"] == "error" {
                codes.push(answer["error"].as_str().unwrap().to_owned());
            }
        }
    }
    assert!(codes.iter().any(|c| c == "rate_limited"), "{codes:?}");
    assert_eq!(seq_of(&client, &base, game).await, applied + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_past_the_limit_are_closed_and_games_past_the_limit_refused() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(
        &store(dir.path()),
        &[
            "--max-connections",
            "3",
            // Every connection here comes from one address: its share is the whole limit.
            "--max-connections-per-client",
            "3",
            "--max-games",
            "2",
            "--header-timeout",
            "20",
        ],
    );
    // Games: two are hosted, the third is refused with 503 `full`.
    {
        let client = client();
        charges_game(&client, &server.base, 1).await;
        charges_game(&client, &server.base, 2).await;
        let response = client
            .post(format!("{}/api/games", server.base))
            .json(&json!({"ruleset": "charges", "players": 2}))
            .send()
            .await
            .unwrap();
        expect_error(
            response,
            StatusCode::SERVICE_UNAVAILABLE,
            "full",
            "third game",
        )
        .await;
        let listed: Vec<Value> = get_json(&client, format!("{}/api/games", server.base)).await;
        assert_eq!(listed.len(), 2);
    }
    // The client above is dropped: its connection closes. Hold the three connections allowed (each has
    // made a request, so each is surely accepted).
    let addr = server.addr;
    tokio::task::spawn_blocking(move || {
        let mut held = Vec::new();
        let deadline = Instant::now() + WAIT;
        while held.len() < 3 {
            assert!(Instant::now() < deadline, "three connections within {WAIT:?}");
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            stream
                .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                .unwrap();
            let mut buffer = [0u8; 1024];
            // A connection of the old client may still hold a permit for a moment: retry.
            if matches!(stream.read(&mut buffer), Ok(n) if n > 0 && buffer.starts_with(b"HTTP/1.1 200"))
            {
                held.push(stream);
            } else {
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        // A fourth connection is closed at once, without an answer.
        let mut extra = TcpStream::connect(addr).unwrap();
        let _ = extra.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
        let took = wait_closed(&mut extra, Duration::from_secs(5));
        assert!(took < Duration::from_secs(2), "closed after {took:?}");
        // One held connection closes: a new one is served again.
        held.pop();
        let deadline = Instant::now() + WAIT;
        loop {
            let mut stream = TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
            let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
            let mut out = Vec::new();
            let _ = stream.read_to_end(&mut out);
            if out.starts_with(b"HTTP/1.1 200") {
                break;
            }
            assert!(Instant::now() < deadline, "a free connection is served again");
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(held);
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_clients_are_closed_after_the_header_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(dir.path()), &["--header-timeout", "1"]);
    let addr = server.addr;
    tokio::task::spawn_blocking(move || {
        // Says nothing at all.
        let mut silent = TcpStream::connect(addr).unwrap();
        // Starts a request and never finishes its headers.
        let mut slow = TcpStream::connect(addr).unwrap();
        slow.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .unwrap();
        let took = wait_closed(&mut silent, Duration::from_secs(8));
        assert!(
            took >= Duration::from_millis(800),
            "closed too soon: {took:?}"
        );
        let took = wait_closed(&mut slow, Duration::from_secs(8));
        assert!(took < Duration::from_secs(4), "{took:?}");
        // A prompt client is served.
        let mut prompt = TcpStream::connect(addr).unwrap();
        prompt.set_read_timeout(Some(WAIT)).unwrap();
        prompt
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .unwrap();
        let mut out = Vec::new();
        let _ = prompt.read_to_end(&mut out);
        assert!(
            out.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&out)
        );
    })
    .await
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_websocket_that_never_answers_pings_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(dir.path()), &["--ws-ping", "0.5"]);
    let client = client();
    let (game, _) = charges_game(&client, &server.base, 5).await;
    let url = server.ws(&format!("/api/games/{game}/ws"));
    let (mut deaf, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    let (mut listening, _) = tokio_tungstenite::connect_async(&url).await.unwrap();
    // The listening client reads (tungstenite answers each ping) for 2.5 s; the deaf one reads nothing,
    // so it never answers a ping.
    let listened = tokio::spawn(async move {
        let until = tokio::time::Instant::now() + Duration::from_millis(2500);
        let mut pings = 0;
        while let Ok(message) = tokio::time::timeout_at(until, listening.next()).await {
            match message {
                Some(Ok(Message::Ping(_))) => pings += 1,
                Some(Ok(Message::Close(frame))) => {
                    panic!("a client answering pings was closed: {frame:?}")
                }
                Some(Ok(_)) => {}
                other => panic!("a client answering pings lost its socket: {other:?}"),
            }
        }
        assert!(pings >= 3, "pinged {pings} times in 2.5 s");
        listening
    });
    let mut listening = listened.await.unwrap();
    // By now the deaf one is closed with 1001 and a reason.
    let frame = loop {
        match tokio::time::timeout(WAIT, deaf.next())
            .await
            .expect("closed in time")
        {
            Some(Ok(Message::Close(frame))) => break frame.expect("a close frame with a code"),
            Some(Ok(_)) => continue,
            other => panic!("closed without a close frame: {other:?}"),
        }
    };
    assert_eq!(frame.code, CloseCode::Away);
    assert!(frame.reason.contains("ping"), "{}", frame.reason);
    // The listening one is still served.
    listening
        .send(Message::text(r#"{"type":"view"}"#))
        .await
        .unwrap();
    loop {
        match tokio::time::timeout(WAIT, listening.next())
            .await
            .expect("answered")
        {
            Some(Ok(Message::Text(text))) => {
                let view: Value = serde_json::from_str(&text).unwrap();
                if view["type"] == "view" {
                    break;
                }
            }
            Some(Ok(_)) => continue,
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_answer_forbids_sniffing_and_referrers() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&store(dir.path()), &[]);
    let client = client();
    for path in ["/", "/assets/app.js", "/api/games", "/api/games/1", "/nope"] {
        let response = client
            .get(format!("{}{path}", server.base))
            .send()
            .await
            .unwrap();
        let headers = response.headers();
        assert_eq!(headers["x-content-type-options"], "nosniff", "{path}");
        assert_eq!(headers["referrer-policy"], "no-referrer", "{path}");
    }
}

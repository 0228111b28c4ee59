//! Shutdown always ends: SIGTERM while a ruleset call spins forever exits with status 124 once the
//! shutdown grace has passed, naming the game and ruleset it abandons; SIGTERM right after the server
//! says it listens is a graceful shutdown (status 0), never the signal's default death.

use std::io::{Read as _, Write as _};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::client::Api;
use crate::support::{Server, fixture_library};

/// The grace these servers are given.
const GRACE: Duration = Duration::from_secs(2);
/// What the documentation promises beyond the grace (docs/SERVER.md, "Shutdown").
const PAST_GRACE: Duration = Duration::from_secs(3);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_spinning_ruleset_call_exits_124_after_the_grace_naming_the_game() {
    let plugins = tempfile::tempdir().unwrap();
    let faulty = fixture_library("faulty");
    std::fs::copy(&faulty, plugins.path().join(faulty.file_name().unwrap())).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let grace = GRACE.as_secs_f64().to_string();
    // The plugin deadline is far away: the call is still running, not stopped, when shutdown comes.
    let mut server = Server::start_with_plugins(
        plugins.path(),
        &dir.path().join("games.db"),
        &["--shutdown-grace", &grace],
        &[("COFFER_PLUGIN_DEADLINE", "600")],
    );
    let api = Api::new(&server.base);
    let create = json!({"ruleset": "fixture-faulty", "players": 2, "config": {"fault": "spin"}});
    let (game, tokens) = api.create(&create).await;
    // The first move is played; the fault starts with the second.
    let first = api
        .act(game, &tokens[0], r#"{"type":"take","n":1}"#, None, None)
        .await;
    assert_eq!(first.status, StatusCode::OK, "{}", first.body);
    // The second move, sent by hand and never read: its answer never comes.
    let body = r#"{"action":{"type":"take","n":1}}"#;
    let mut spinning = std::net::TcpStream::connect(server.addr).unwrap();
    write!(
        spinning,
        "POST /api/games/{game}/actions HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        server.addr,
        tokens[1],
        body.len()
    )
    .unwrap();
    // Until the call runs on its thread.
    tokio::time::sleep(Duration::from_millis(500)).await;
    spinning.set_nonblocking(true).unwrap();
    let mut answer = [0u8; 64];
    assert!(
        matches!(spinning.read(&mut answer), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the call spins: no answer yet"
    );

    let asked = Instant::now();
    let status = tokio::task::block_in_place(|| server.terminate());
    let took = asked.elapsed();
    let log = server.log_text();
    assert_eq!(
        status.code(),
        Some(124),
        "a shutdown that abandons a call exits 124; log:\n{log}"
    );
    assert!(
        took >= GRACE && took <= GRACE + PAST_GRACE,
        "exited {took:?} after SIGTERM: the grace ({GRACE:?}) and at most {PAST_GRACE:?} more; log:\n{log}"
    );
    let abandoned = log
        .lines()
        .find(|line| line.contains("shutdown abandons a ruleset call"))
        .unwrap_or_else(|| panic!("the abandoned call is logged:\n{log}"));
    assert!(
        abandoned.contains(&game.to_string()) && abandoned.contains("fixture-faulty"),
        "the reason names the game and the ruleset: {abandoned}"
    );
    println!("SIGTERM with a spinning call: exit 124 after {took:?} (grace {GRACE:?})");
}

#[test]
fn sigterm_right_after_the_server_listens_is_a_graceful_shutdown() {
    // The handler is installed before the server says it listens: a signal sent at once is never
    // the default death by SIGTERM.
    for _ in 0..5 {
        let dir = tempfile::tempdir().unwrap();
        let mut server = Server::start(&dir.path().join("games.db"), &[]);
        let status = server.terminate();
        assert_eq!(
            status.code(),
            Some(0),
            "{status:?}; log:\n{}",
            server.log_text()
        );
        assert!(server.log_text().contains("stopped"));
    }
}

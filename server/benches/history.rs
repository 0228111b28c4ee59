//! `GET /api/games/{id}/events?since=N` on a long game: the first 100 actions against the last 100, in
//! one run. A 100,000-action game of command-tokens is written into a SQLite store (a snapshot every 64
//! actions, as the server stores them), a `coffer-server` is started on it with the three bundled
//! rulesets loaded at runtime, and interleaved rounds time each page (a new connection per request, the
//! answer read whole) and count the actions the server replayed for it
//! (`coffer_history_replayed_actions_total`). Prints the medians and the ratio of the first page's time to
//! the last's: a read must cost the same wherever it starts, not grow with the actions before it.
//!
//! `cargo bench -p coffer-server --bench history` (`HISTORY_ACTIONS=N` for another length, `HISTORY_ROUNDS=N`
//! for another number of rounds). Under `cargo test --benches`, a 2,000-action game and 3 rounds.

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use coffer_command_tokens as _;

#[path = "../tests/shared/listen.rs"]
mod listen;
#[path = "../tests/shared/long_game.rs"]
mod long_game;

/// Actions read per page.
const PAGE: u64 = 100;
/// The server's snapshot interval, and the store's.
const EVERY: u64 = 64;

/// A directory holding the bundled rulesets' libraries, copied from where cargo built them beside this
/// benchmark (`target/<profile>/deps`).
fn plugin_dir(into: &Path) -> PathBuf {
    let exe = std::env::current_exe().expect("the bench's path");
    let deps = exe.parent().expect("target/<profile>/deps");
    let dir = into.join("plugins");
    std::fs::create_dir_all(&dir).expect("a plugin directory");
    for name in [
        "coffer_charges",
        "coffer_command_tokens",
        "coffer_story_acts",
    ] {
        let file = format!(
            "{}{name}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        std::fs::copy(deps.join(&file), dir.join(&file))
            .unwrap_or_else(|e| panic!("{file}: {e}: the dev-dependencies build it"));
    }
    dir
}

/// The server, killed when dropped.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(db: &Path, plugins: &Path) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_coffer-server"))
        .arg("--plugin-dir")
        .arg(plugins)
        .args(["serve", "--listen", "127.0.0.1:0", "--store"])
        .arg(db)
        .args(["--snapshot-every", &EVERY.to_string()])
        // The benchmark's own requests are not what the read limits are for.
        .args(["--reads-per-second", "1000000", "--read-burst", "1000000"])
        .env("COFFER_LOG", "warn")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("coffer-server starts");
    let addr = listen::listening(&mut child).unwrap_or_else(|why| panic!("{why}"));
    Server { child, addr }
}

/// One `GET`, on a connection of its own: the status line and the body.
fn get(addr: SocketAddr, path: &str) -> (String, String) {
    let mut stream = TcpStream::connect(addr).expect("the server accepts");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .expect("the request is sent");
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .expect("the answer is read");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or_default().to_owned();
    (status, body.to_owned())
}

/// The value of a counter in the server's metrics.
fn counter(addr: SocketAddr, name: &str) -> f64 {
    let (_, body) = get(addr, "/metrics");
    body.lines()
        .find_map(|line| line.strip_prefix(name)?.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {name} in the metrics"))
}

/// Reads `PAGE` actions after `since`: the time it took and the actions the server replayed for it.
fn page(addr: SocketAddr, game: u64, since: u64) -> (Duration, f64) {
    let replayed = "coffer_history_replayed_actions_total";
    let before = counter(addr, replayed);
    let path = format!("/api/games/{game}/events?since={since}&limit={PAGE}");
    let started = Instant::now();
    let (status, body) = get(addr, &path);
    let took = started.elapsed();
    assert!(status.contains(" 200 "), "{path}: {status} {body}");
    let actions: Vec<serde_json::Value> = serde_json::from_str(&body).expect("a JSON array");
    let seqs: Vec<u64> = actions.iter().filter_map(|a| a["seq"].as_u64()).collect();
    assert_eq!(
        seqs,
        (since + 1..=since + PAGE).collect::<Vec<_>>(),
        "{path}"
    );
    (took, counter(addr, replayed) - before)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let quick = !std::env::args().any(|a| a == "--bench");
    let number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let actions = number("HISTORY_ACTIONS", if quick { 2_000 } else { 100_000 });
    let rounds = number("HISTORY_ROUNDS", if quick { 3 } else { 101 });
    let dir = tempfile::tempdir().expect("a temporary directory");
    let db = dir.path().join("history.db");
    let written = Instant::now();
    let game = long_game::write_long_game(&db, actions, EVERY);
    println!(
        "history: a {actions}-action game of command-tokens written in {:.1} s",
        written.elapsed().as_secs_f64()
    );
    let server = start(&db, &plugin_dir(dir.path()));
    let last = actions - PAGE;
    let (mut first, mut end) = (Vec::new(), Vec::new());
    let (mut first_replayed, mut end_replayed) = (0.0f64, 0.0f64);
    for round in 0..rounds {
        // The side that goes first alternates.
        let order = if round % 2 == 0 { [0, last] } else { [last, 0] };
        for since in order {
            let (took, replayed) = page(server.addr, game, since);
            let ms = took.as_secs_f64() * 1e3;
            if since == 0 {
                first.push(ms);
                first_replayed = first_replayed.max(replayed);
            } else {
                end.push(ms);
                end_replayed = end_replayed.max(replayed);
            }
        }
    }
    let (a, b) = (median(&mut first), median(&mut end));
    println!(
        "  since=0:       {a:.2} ms per page of {PAGE} (median of {rounds}), at most {first_replayed} actions replayed"
    );
    println!(
        "  since={last}: {b:.2} ms per page of {PAGE} (median of {rounds}), at most {end_replayed} actions replayed"
    );
    println!(
        "  first page's time / last page's time = {:.3}x; target: the same time (about 1x)",
        a / b
    );
    assert!(
        first_replayed <= (EVERY - 1 + PAGE) as f64 && end_replayed <= (EVERY - 1 + PAGE) as f64,
        "a page replays at most a snapshot interval and the page"
    );
}

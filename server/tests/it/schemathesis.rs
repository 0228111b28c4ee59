//! Property-based fuzzing of the whole API with schemathesis (<https://schemathesis.readthedocs.io>):
//! it reads the server's own `/openapi.json` and sends generated requests, valid and invalid, to every
//! route for a bounded time; no answer may be a 5xx and the server must live through it.
//!
//! schemathesis is a Python tool. The test runs when `COFFER_SCHEMATHESIS` names its `st` executable
//! (CI installs it in a virtual environment under `target/`, see `.ci/run`); without it the test says
//! how to run it, in one line, and passes.
//!
//! The fuzzer gets real ids too: three games (each ruleset, one with an open seat) are created first,
//! their ids given as a dictionary for the `{id}` path parameter (most of the time; random ids the rest),
//! and every request carries the bearer token of a seat of the first game.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;

use crate::bad_input::{client, create};
use crate::support::Server;

/// Names the schemathesis executable (`st` or `schemathesis`).
const ENV: &str = "COFFER_SCHEMATHESIS";
/// The fuzzer's time budget (`--max-time`), in seconds.
const BUDGET_SECS: u64 = 75;
/// Its seed, for a run that can be repeated.
const SEED: &str = "20261201";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_no_server_error_and_no_crash() {
    let Some(st) = std::env::var_os(ENV) else {
        println!(
            "schemathesis: not run; to run it: pip install schemathesis, then {ENV}=$(which st) cargo test -p coffer-server --test it schemathesis"
        );
        return;
    };
    let version = Command::new(&st)
        .arg("--version")
        .output()
        .unwrap_or_else(|e| panic!("{ENV}={} cannot be run: {e}", st.to_string_lossy()));
    assert!(
        version.status.success(),
        "{ENV}={} --version failed: {}",
        st.to_string_lossy(),
        String::from_utf8_lossy(&version.stderr)
    );
    let version = String::from_utf8_lossy(&version.stdout).trim().to_owned();

    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("games.db"), &[]);
    let base = server.base.clone();
    let http = client();
    let first = create(
        &http,
        &base,
        json!({"ruleset": "charges", "players": 2, "seed": 1}),
    )
    .await;
    let open = create(
        &http,
        &base,
        json!({"ruleset": "story-acts", "players": 2, "seed": 2, "open_seats": [1]}),
    )
    .await;
    let third = create(
        &http,
        &base,
        json!({"ruleset": "command-tokens", "players": 3, "seed": 3}),
    )
    .await;
    let ids: Vec<u64> = [&first, &open, &third]
        .iter()
        .map(|g| g["game"].as_u64().unwrap())
        .collect();
    let token = first["tokens"][0].as_str().unwrap();
    let config = dir.path().join("schemathesis.toml");
    std::fs::write(
        &config,
        format!(
            "[dictionaries.games]\nvalues = [{}]\n\n[parameters]\n\"path.id\" = {{ dictionary = \"games\", probability = 0.8 }}\n\n[headers]\nAuthorization = \"Bearer {token}\"\n",
            ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
        ),
    )
    .unwrap();

    let output = dir.path().join("schemathesis.out");
    let args = [
        "run".to_owned(),
        format!("{base}/openapi.json"),
        "--checks".to_owned(),
        "not_a_server_error".to_owned(),
        "--max-time".to_owned(),
        BUDGET_SECS.to_string(),
        "--seed".to_owned(),
        SEED.to_owned(),
        "--request-timeout".to_owned(),
        "10".to_owned(),
        "--generation-database".to_owned(),
        "none".to_owned(),
        "--no-color".to_owned(),
    ];
    let started = Instant::now();
    let mut child = Command::new(&st)
        .arg("--config-file")
        .arg(&config)
        .args(&args)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&output).unwrap())
        .stderr(Stdio::from(
            std::fs::File::create(dir.path().join("schemathesis.err")).unwrap(),
        ))
        .spawn()
        .unwrap_or_else(|e| panic!("{ENV}={} cannot be run: {e}", st.to_string_lossy()));
    let limit = Duration::from_secs(BUDGET_SECS + 90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("schemathesis ran past {limit:?}: {}", tail(&output, 4000));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let report = std::fs::read_to_string(&output).unwrap_or_default();
    let errors = std::fs::read_to_string(dir.path().join("schemathesis.err")).unwrap_or_default();
    assert!(
        status.success(),
        "schemathesis ({version}) found failures (exit {status}); rerun: {} --config-file <config with the ids> {}\n{}\n{errors}\nserver log:\n{}",
        st.to_string_lossy(),
        args.join(" "),
        tail(&output, 12_000),
        tail(&server.log, 4000)
    );
    // It did test the API (and not, say, fail to read the schema and stop).
    assert!(report.contains("passed"), "{report}");

    // The server lives: it answers, every game is there, nothing panicked.
    let health = http.get(format!("{base}/healthz")).send().await.unwrap();
    assert_eq!(health.status(), StatusCode::OK);
    for id in &ids {
        let summary = http
            .get(format!("{base}/api/games/{id}"))
            .send()
            .await
            .unwrap();
        assert_eq!(summary.status(), StatusCode::OK);
    }
    let log = server.log_text();
    assert!(!log.contains("panicked"), "{}", tail(&server.log, 4000));
    let summary = report
        .lines()
        .filter(|l| l.contains(" generated, ") || l.starts_with("Seed:"))
        .map(str::trim)
        .collect::<Vec<_>>()
        .join("; ");
    eprintln!(
        "schemathesis {version}: {summary} in {:.0} s, no server error",
        started.elapsed().as_secs_f64()
    );
}

/// The last `bytes` of a file.
fn tail(path: &Path, bytes: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let start = text.len().saturating_sub(bytes);
    let start = (start..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    text[start..].to_owned()
}

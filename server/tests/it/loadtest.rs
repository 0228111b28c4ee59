//! `coffer loadtest` as a user runs it: the server it starts takes the whole load from one address.

use std::process::{Command, Stdio};

use crate::support::plugin_dir;

/// Runs `coffer-server loadtest` on one game over HTTP for half a second with `args` added; answers its
/// JSON report.
fn loadtest(args: &[&str]) -> serde_json::Value {
    let output = Command::new(env!("CARGO_BIN_EXE_coffer-server"))
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .args(["loadtest", "--games", "1", "--transport", "http"])
        .args(["--seconds", "0.5", "--warmup", "0"])
        .args(args)
        .args(["--format", "json"])
        .env("COFFER_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("coffer-server runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "loadtest failed: {stderr}");
    serde_json::from_slice(&output.stdout).expect("loadtest prints one JSON document")
}

/// More idle games than the default quota of unfinished games per client address (1,000): the load
/// generator's own server must not refuse its games with `429 quota`.
#[test]
fn loadtest_hosts_more_games_than_one_clients_quota() {
    let report = loadtest(&["--idle-games", "1001"]);
    let point = &report["points"][0];
    assert_eq!(point["errors"], 0, "{report:#}");
    assert!(point["acks"].as_u64().is_some_and(|n| n > 0), "{report:#}");
    assert_eq!(report["memory"]["games"], 1001, "{report:#}");
}

/// Idle games with a clock: nobody plays them, so their clocks run out and the random bot plays on;
/// the load generator reports the timeouts and how late they fired.
#[test]
fn loadtest_measures_the_timeouts_of_idle_games_with_clocks() {
    let report = loadtest(&[
        "--idle-games",
        "50",
        "--clock-ms",
        "500",
        "--clock-seconds",
        "2",
    ]);
    let clocks = &report["clocks"];
    assert_eq!(clocks["games"], 50, "{report:#}");
    // 50 games, a decision each 500 ms, 2 s: about 200 timeouts (fewer as games end).
    assert!(
        clocks["timeouts"].as_u64().is_some_and(|n| n >= 50),
        "{report:#}"
    );
    assert!(
        clocks["late_p99_ms_at_most"]
            .as_f64()
            .is_some_and(|ms| ms <= 100.0),
        "{report:#}"
    );
}

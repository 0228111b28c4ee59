//! `coffer loadtest` as a user runs it: the program `coffer-loadtest` starts the server program beside it,
//! which takes the whole load from one address.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// A directory holding the charges library, copied from `target/<profile>/deps` where cargo builds this
/// crate's dev-dependency's cdylib. Fails loudly when it is missing: these tests never skip.
fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let deps = exe.parent().expect("target/<profile>/deps");
        let dir = deps
            .parent()
            .expect("target/<profile>")
            .join("coffer-loadtest-it-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        let file = format!(
            "{}coffer_charges{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        let from = deps.join(&file);
        assert!(
            from.is_file(),
            "plugin library {} is missing: coffer-loadtest's dev-dependencies should have built it",
            from.display()
        );
        // Copy then rename, so that test processes running at once never load a half-written file.
        let tmp = dir.join(format!("{file}.{}.tmp", std::process::id()));
        std::fs::copy(&from, &tmp).unwrap();
        std::fs::rename(&tmp, dir.join(&file)).unwrap();
        dir
    })
}

/// Runs `coffer-loadtest` on one game over HTTP for half a second with `args` added; answers its JSON
/// report.
fn loadtest(args: &[&str]) -> serde_json::Value {
    let program = Path::new(env!("CARGO_BIN_EXE_coffer-loadtest"));
    let server = program.with_file_name(format!("coffer-server{}", std::env::consts::EXE_SUFFIX));
    assert!(
        server.is_file(),
        "{} is not built: run the tests with `cargo test --workspace`, which builds it beside the load \
         generator",
        server.display()
    );
    let output = Command::new(program)
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .args(["--games", "1", "--transport", "http"])
        .args(["--seconds", "0.5", "--warmup", "0"])
        .args(args)
        .args(["--format", "json"])
        .env("COFFER_LOG", "warn")
        .stdin(Stdio::null())
        .output()
        .expect("coffer-loadtest runs");
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

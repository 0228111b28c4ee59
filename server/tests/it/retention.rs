//! The retention policy for finished games (`--keep-finished-days`) and `coffer-server export`, which
//! keeps a game past it as a `coffer` save file.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use coffer_host::Registry;
use reqwest::StatusCode;

use crate::bad_input::client;
use crate::hostile::{charges_game_short, keep_acting, start_lingering};
use crate::support::{Server, metrics_text, plugin_dir};

/// Rows of game `id` in each table of the SQLite store at `db`: games, seats, actions, snapshots.
fn rows_of(db: &Path, id: u64) -> [i64; 4] {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let count = |sql: &str| -> i64 { conn.query_row(sql, [id as i64], |row| row.get(0)).unwrap() };
    [
        count("SELECT COUNT(*) FROM games WHERE id = ?1"),
        count("SELECT COUNT(*) FROM seats WHERE game = ?1"),
        count("SELECT COUNT(*) FROM actions WHERE game = ?1"),
        count("SELECT COUNT(*) FROM snapshots WHERE game = ?1"),
    ]
}

/// Runs `coffer-server export --store <store> --game <game> -o <out>` with the test plugins.
fn export_game(store: &Path, game: &str, out: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_coffer-server"))
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .arg("export")
        .arg("--store")
        .arg(store)
        .args(["--game", game, "-o"])
        .arg(out)
        .output()
        .expect("coffer-server runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finished_game_is_deleted_after_the_retention_time_and_its_export_replays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    // 0.00003 days: 2.6 s.
    let server = start_lingering(&db, ["--keep-finished-days", "0.00003"]);
    let http = client();
    let (finished, tokens) = charges_game_short(&http, &server.base).await;
    let played = keep_acting(
        http.clone(),
        server.base.clone(),
        finished,
        tokens,
        Arc::new(AtomicBool::new(false)),
    )
    .await;
    let (unfinished, _) = charges_game_short(&http, &server.base).await;
    let [games, seats, actions, _] = rows_of(&db, finished);
    assert_eq!((games, seats, actions), (1, 2, played as i64));

    // Kept by an export before the retention time runs out.
    let saved = dir.path().join("finished.json");
    let run = export_game(&db, &finished.to_string(), &saved);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    let started = Instant::now();
    while rows_of(&db, finished) != [0; 4] {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the finished game is still stored: {:?}",
            rows_of(&db, finished)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(rows_of(&db, unfinished)[0], 1, "an unfinished game stays");
    let metrics = metrics_text(&http, &server.base).await;
    assert!(
        metrics.contains("coffer_games_deleted_total 1"),
        "{metrics}"
    );
    let gone = http
        .get(format!("{}/api/games/{finished}", server.base))
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::NOT_FOUND);

    // The export is a `coffer` save: it loads, each hash checked, to the finished game.
    let registry = Registry::with_static().unwrap();
    let game = coffer_host::save::load(&saved, &registry).expect("the export loads");
    assert_eq!(game.log().len() as u64, played);
    assert!(!matches!(game.outcome(), coffer_core::Outcome::Ongoing));
}

#[test]
fn export_refuses_a_missing_store_and_an_unknown_game_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.json");
    let missing = dir.path().join("typo.db");
    let run = export_game(&missing, "1", &out);
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("no store at"), "{stderr}");
    assert!(!missing.exists(), "no store is created by an export");

    // A store with no such game.
    let db = dir.path().join("coffer.db");
    drop(Server::start(&db, &[]));
    let run = export_game(&db, "12345", &out);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("no game 12345"), "{stderr}");
    assert!(!out.exists());
}

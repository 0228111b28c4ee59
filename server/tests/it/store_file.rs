//! Which store files the server opens: an existing Coffer store; a new one only with `--create`, where
//! no file or an empty one is. A missing or empty file without `--create`, a file that is not a Coffer
//! store (with or without `--create`) are refused with a message and exit status 1, before
//! the server listens, and leave the file as it was.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{Server, plugin_dir};

/// What a refused start printed on stderr, after checking that it exited with status 1 without
/// listening.
fn refused(store: &Path, extra: &[&str]) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_coffer-server"))
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .args(["serve", "--listen", "127.0.0.1:0", "--store"])
        .arg(store)
        .args(extra)
        .env("COFFER_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("coffer-server starts");
    let started = Instant::now();
    while child.try_wait().expect("waits").is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            panic!(
                "the server started on {} instead of refusing it",
                store.display()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = child.wait_with_output().expect("its output");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(
        output.status.code(),
        Some(1),
        "refused with status 1; stderr: {stderr}"
    );
    assert!(!stdout.contains("listening"), "it never listened: {stdout}");
    stderr
}

/// The store's SQLite application id.
fn application_id(store: &Path) -> i32 {
    let db = rusqlite::Connection::open(store).expect("opens");
    db.query_row("PRAGMA application_id", [], |row| row.get(0))
        .expect("reads")
}

#[test]
fn a_missing_store_file_is_refused_without_create_and_not_made() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("mistyped.db");
    let stderr = refused(&store, &[]);
    assert!(
        stderr.contains("no store at") && stderr.contains("does not exist"),
        "{stderr}"
    );
    assert!(stderr.contains("pass --create"), "it says how: {stderr}");
    assert!(!store.exists(), "nothing was made at {}", store.display());
}

#[test]
fn an_empty_store_file_is_refused_without_create_and_left_empty() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("empty.db");
    std::fs::write(&store, b"").unwrap();
    let stderr = refused(&store, &[]);
    assert!(stderr.contains("the file is empty"), "{stderr}");
    assert_eq!(std::fs::metadata(&store).unwrap().len(), 0);
}

#[test]
fn a_file_that_is_not_a_coffer_store_is_refused_with_or_without_create() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "shopping list\n".repeat(400)).unwrap();
    let stderr = refused(&text, &[]);
    assert!(
        stderr.contains("is not a Coffer store") && stderr.contains("SQLite database"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&text).unwrap(),
        "shopping list\n".repeat(400)
    );

    let other = dir.path().join("other.db");
    let db = rusqlite::Connection::open(&other).unwrap();
    db.execute_batch("CREATE TABLE recipes (name TEXT); INSERT INTO recipes VALUES ('soup');")
        .unwrap();
    drop(db);
    let stderr = refused(&other, &[]);
    assert!(
        stderr.contains("is not a Coffer store") && stderr.contains("without Coffer's tables"),
        "{stderr}"
    );
    let stamped = dir.path().join("stamped.db");
    let db = rusqlite::Connection::open(&stamped).unwrap();
    db.execute_batch("PRAGMA application_id = 1234; CREATE TABLE games (id INTEGER);")
        .unwrap();
    drop(db);
    let stderr = refused(&stamped, &[]);
    assert!(stderr.contains("application id"), "{stderr}");
    // --create never overwrites a file holding data that is not a Coffer store.
    let stderr = refused(&other, &["--create"]);
    assert!(stderr.contains("is not a Coffer store"), "{stderr}");
    let db = rusqlite::Connection::open(&other).unwrap();
    let name: String = db
        .query_row("SELECT name FROM recipes", [], |row| row.get(0))
        .unwrap();
    assert_eq!(name, "soup", "the other program's database is untouched");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_makes_a_stamped_store_that_later_starts_open_with_or_without_create() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("games.db");
    // Server::start passes --create for a file that does not exist yet.
    let mut server = Server::start(&store, &[]);
    assert!(server.terminate().success());
    assert_eq!(application_id(&store), coffer_server::SQLITE_APPLICATION_ID);
    let mut again = Server::start(&store, &[]);
    let http = crate::bad_input::client();
    let game = crate::bad_input::create(
        &http,
        &again.base,
        serde_json::json!({"ruleset": "charges", "players": 2}),
    )
    .await["game"]
        .as_u64()
        .unwrap();
    assert!(again.terminate().success(), "{}", again.log_text());
    // --create left in the command opens the store it made, its games kept.
    let mut kept = Server::start(&store, &["--create"]);
    let status = http
        .get(format!("{}/api/games/{game}", kept.base))
        .send()
        .await
        .unwrap()
        .status();
    assert_eq!(status, reqwest::StatusCode::OK, "{}", kept.log_text());
    assert!(kept.terminate().success(), "{}", kept.log_text());
    // An empty file is no store yet: --create makes one in it.
    let empty = dir.path().join("empty.db");
    std::fs::write(&empty, b"").unwrap();
    let mut made = Server::start(&empty, &["--create"]);
    assert!(made.terminate().success(), "{}", made.log_text());
    assert_eq!(application_id(&empty), coffer_server::SQLITE_APPLICATION_ID);
}

#[test]
fn a_store_made_before_stores_were_stamped_opens_and_is_stamped() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("old.db");
    let mut server = Server::start(&store, &[]);
    assert!(server.terminate().success());
    // As an earlier build left it: Coffer's tables, no application id.
    let db = rusqlite::Connection::open(&store).unwrap();
    db.pragma_update(None, "application_id", 0).unwrap();
    drop(db);
    assert_eq!(application_id(&store), 0);
    let mut old = Server::start(&store, &[]);
    assert!(old.terminate().success(), "{}", old.log_text());
    assert_eq!(application_id(&store), coffer_server::SQLITE_APPLICATION_ID);
}

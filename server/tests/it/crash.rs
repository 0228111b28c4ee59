//! Crash test of the SQLite store: a child process appends as fast as it can and is killed with
//! SIGKILL; every action it saw acknowledged must be in the reopened database, whole and gapless.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use coffer_server::{GameId, Snapshot, SqliteConfig, SqliteStore, StateHash, Store};

use crate::{action, new_game};

/// Tells the test binary, run again as a child, to be the writer.
const CHILD_ENV: &str = "COFFER_SERVER_CRASH_CHILD_DB";
const GAMES: u64 = 6;
/// A snapshot every this many actions, so recovery reads a snapshot and a tail.
const SNAPSHOT_EVERY: u64 = 25;

fn snapshot(game: u64, seq: u64) -> Snapshot {
    Snapshot {
        seq,
        bytes: format!("snapshot of game {game} at {seq}").into_bytes(),
        hash: StateHash(crate::expected_hash(game, seq, 0)),
    }
}

/// The child's part: does nothing unless run by `acknowledged_actions_survive_sigkill`.
#[test]
fn child_appends_until_killed() {
    let Some(path) = std::env::var_os(CHILD_ENV) else {
        return;
    };
    let store = Arc::new(SqliteStore::open(&PathBuf::from(path), SqliteConfig::default()).unwrap());
    // Bounded even if nobody kills it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let threads: Vec<_> = (1..=GAMES)
        .map(|game| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let mut seq = 1;
                while Instant::now() < deadline {
                    store.append(GameId(game), action(game, seq, 0)).unwrap();
                    println!("ack {game} {seq}");
                    if seq % SNAPSHOT_EVERY == 0 {
                        store
                            .put_snapshot(GameId(game), snapshot(game, seq))
                            .unwrap();
                        println!("snapshot {game} {seq}");
                    }
                    seq += 1;
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
}

#[test]
fn acknowledged_actions_survive_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    {
        let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
        for game in 1..=GAMES {
            store.create_game(new_game(game)).unwrap();
        }
    }

    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "crash::child_appends_until_killed",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });

    // Kill it a while after its first acknowledgement, while it is busy appending.
    let mut acked: BTreeMap<u64, u64> = BTreeMap::new();
    let mut snapshots: BTreeMap<u64, u64> = BTreeMap::new();
    let mut record = |line: &str| {
        let mut words = line.split(' ');
        let (kind, game, seq) = (words.next(), words.next(), words.next());
        let (Some(game), Some(seq)) = (
            game.and_then(|g| g.parse::<u64>().ok()),
            seq.and_then(|s| s.parse::<u64>().ok()),
        ) else {
            return;
        };
        let map = match kind {
            Some("ack") => &mut acked,
            Some("snapshot") => &mut snapshots,
            _ => return,
        };
        let last = map.entry(game).or_insert(0);
        *last = (*last).max(seq);
    };
    let first = received
        .recv_timeout(Duration::from_secs(60))
        .expect("the child acknowledges an action");
    record(&first);
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(1500) {
        if let Ok(line) = received.recv_timeout(Duration::from_millis(50)) {
            record(&line);
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    // Killed mid-work, not finished or failed on its own.
    assert_eq!(status.signal(), Some(9), "the child ended with {status}");
    reader.join().unwrap();
    for line in received.try_iter() {
        record(&line);
    }
    let total: u64 = acked.values().sum();
    assert!(total > 0);

    let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
    assert_eq!(store.unfinished_games().unwrap().len(), GAMES as usize);
    for game in 1..=GAMES {
        let log = store.actions_after(GameId(game), 0).unwrap();
        let acknowledged = acked.get(&game).copied().unwrap_or(0);
        assert!(
            log.len() as u64 >= acknowledged,
            "game {game}: {acknowledged} acknowledged, {} stored",
            log.len()
        );
        for (index, stored) in log.iter().enumerate() {
            let seq = index as u64 + 1;
            assert_eq!(*stored, action(game, seq, 0), "game {game} action {seq}");
        }
        let recovery = store.recover(GameId(game)).unwrap();
        assert_eq!(
            recovery.game.seq,
            log.len() as u64,
            "game {game}'s sequence"
        );
        let snapshot_seq = recovery.snapshot.as_ref().map_or(0, |s| s.seq);
        assert!(snapshot_seq >= snapshots.get(&game).copied().unwrap_or(0));
        if let Some(stored) = &recovery.snapshot {
            assert_eq!(*stored, snapshot(game, stored.seq));
        }
        assert_eq!(recovery.tail, log[snapshot_seq as usize..]);
    }
    drop(store);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let check: String = conn
        .query_row("PRAGMA integrity_check", [], |row| row.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    eprintln!("{total} acknowledged appends before SIGKILL, all present");
}

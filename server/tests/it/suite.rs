//! The rules every store keeps, each a function over `&dyn Store`, run against each store by
//! `suite!`.

use std::collections::BTreeSet;
use std::sync::Arc;

use coffer_server::{
    GameId, MemoryStore, Snapshot, SqliteConfig, SqliteStore, StateHash, Store, StoreError,
    TokenHash,
};
use sha2::{Digest, Sha256};
use tempfile::TempDir;

use crate::support::Database;
use crate::{action, new_game, new_game_with_seats};

/// A store under test and what must live as long as it (the SQLite store's directory, the PostgreSQL
/// store's database, dropped after the store).
pub struct Fixture {
    pub store: Arc<dyn Store>,
    _dir: Option<TempDir>,
    _database: Option<Database>,
}

/// A PostgreSQL store in a new database, or `None` (after saying once how to run these tests) when
/// `COFFER_POSTGRES_URL` is not set. Set but unreachable fails the test.
fn postgres() -> Option<Fixture> {
    let (database, url) = Database::new("the store suite against PostgreSQL")?;
    let store = coffer_server::PgStore::open(&url).expect("a new PostgreSQL store opens");
    Some(Fixture {
        store: Arc::new(store),
        _dir: None,
        _database: Some(database),
    })
}

fn memory() -> Fixture {
    Fixture {
        store: Arc::new(MemoryStore::new()),
        _dir: None,
        _database: None,
    }
}

fn sqlite() -> Fixture {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = SqliteStore::open(&dir.path().join("store.db"), SqliteConfig::default())
        .expect("a new store opens");
    Fixture {
        store: Arc::new(store),
        _dir: Some(dir),
        _database: None,
    }
}

/// One `#[test]` per rule and store.
macro_rules! suite {
    ($($rule:ident),* $(,)?) => {
        mod memory_store {
            $(#[test]
            fn $rule() {
                let fixture = super::memory();
                super::$rule(&fixture.store);
            })*
        }
        mod sqlite_store {
            $(#[test]
            fn $rule() {
                let fixture = super::sqlite();
                super::$rule(&fixture.store);
            })*
        }
        mod postgres_store {
            $(#[test]
            fn $rule() {
                if let Some(fixture) = super::postgres() {
                    super::$rule(&fixture.store);
                }
            })*
        }
    };
}

suite!(
    sequences_start_at_one_and_have_no_gaps,
    a_stale_sequence_is_refused_with_the_current_one_and_never_applied,
    unknown_games_are_refused,
    game_ids_are_unique_and_seats_match_players,
    a_game_reads_back_as_created,
    seats_store_only_the_hash_of_their_token,
    recovery_is_the_latest_snapshot_and_the_actions_after_it,
    recovery_without_a_snapshot_is_the_whole_log,
    a_snapshot_ahead_of_the_log_is_refused,
    finished_games_take_no_actions_and_are_not_recovered,
    actions_after_a_sequence_are_the_tail,
    racing_threads_on_many_games_lose_and_duplicate_nothing,
    a_repeated_idempotency_key_of_a_seat_is_refused_with_the_first_sequence,
    append_then_reports_the_result_of_the_write,
    only_finished_games_past_the_cutoff_are_listed_and_deleted_whole,
);

fn keyed(mut action: coffer_server::Action, key: &str) -> coffer_server::Action {
    action.key = Some(key.to_owned());
    action
}

fn a_repeated_idempotency_key_of_a_seat_is_refused_with_the_first_sequence(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    // Seat 1 (odd sequence numbers) submits with key "a"; seat 0 may use the same key.
    store
        .append(GameId(1), keyed(action(1, 1, 0), "a"))
        .unwrap();
    store
        .append(GameId(1), keyed(action(1, 2, 0), "a"))
        .unwrap();
    match store.append(GameId(1), keyed(action(1, 3, 0), "a")) {
        Err(StoreError::Duplicate { seat, seq, .. }) => assert_eq!((seat, seq), (1, 1)),
        other => panic!("expected a duplicate, got {other:?}"),
    }
    // Nothing was applied: the next sequence is still 3.
    assert_eq!(store.game(GameId(1)).unwrap().seq, 2);
    store
        .append(GameId(1), keyed(action(1, 3, 0), "b"))
        .unwrap();
    assert_eq!(store.keyed_action(GameId(1), 1, "a").unwrap(), Some(1));
    assert_eq!(store.keyed_action(GameId(1), 0, "a").unwrap(), Some(2));
    assert_eq!(store.keyed_action(GameId(1), 0, "b").unwrap(), None);
    let log = store.actions_after(GameId(1), 0).unwrap();
    assert_eq!(log.len(), 3);
    assert_eq!(log[2].key.as_deref(), Some("b"));
    assert!(matches!(
        store.keyed_action(GameId(9), 0, "a"),
        Err(StoreError::NoSuchGame(_))
    ));
}

fn append_then_reports_the_result_of_the_write(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    let (sender, results) = std::sync::mpsc::channel();
    for seq in [1, 1, 2] {
        let sender = sender.clone();
        store.append_then(
            GameId(1),
            action(1, seq, 0),
            Box::new(move |result| sender.send(result.map_err(|e| e.to_string())).unwrap()),
        );
    }
    let answers: Vec<_> = (0..3).map(|_| results.recv().unwrap()).collect();
    assert_eq!(answers[0], Ok(()));
    assert!(
        answers[1]
            .as_ref()
            .unwrap_err()
            .contains("not the next one")
    );
    assert_eq!(answers[2], Ok(()));
    assert_eq!(store.game(GameId(1)).unwrap().seq, 2);
}

fn conflict_current(result: Result<(), StoreError>) -> u64 {
    match result {
        Err(StoreError::SequenceConflict { current, .. }) => current,
        other => panic!("expected a sequence conflict, got {other:?}"),
    }
}

fn sequences_start_at_one_and_have_no_gaps(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    assert_eq!(
        conflict_current(store.append(GameId(1), action(1, 0, 0))),
        0
    );
    assert_eq!(
        conflict_current(store.append(GameId(1), action(1, 2, 0))),
        0
    );
    for seq in 1..=3 {
        store.append(GameId(1), action(1, seq, 0)).unwrap();
    }
    assert_eq!(
        conflict_current(store.append(GameId(1), action(1, 5, 0))),
        3
    );
    assert_eq!(store.game(GameId(1)).unwrap().seq, 3);
    let seqs: Vec<u64> = store
        .actions_after(GameId(1), 0)
        .unwrap()
        .iter()
        .map(|action| action.seq)
        .collect();
    assert_eq!(seqs, [1, 2, 3]);
}

fn a_stale_sequence_is_refused_with_the_current_one_and_never_applied(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    store.append(GameId(1), action(1, 1, 0)).unwrap();
    store.append(GameId(1), action(1, 2, 0)).unwrap();
    // Another client also read the game at 1 and submits its own action 2.
    let error = store.append(GameId(1), action(1, 2, 9)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "action 2 of game 1 is not the next one: the game is at 2, the next is 3"
    );
    assert_eq!(conflict_current(Err(error)), 2);
    let log = store.actions_after(GameId(1), 0).unwrap();
    assert_eq!(log, [action(1, 1, 0), action(1, 2, 0)]);
}

fn unknown_games_are_refused(store: &Arc<dyn Store>) {
    let unknown = GameId(404);
    assert!(matches!(
        store.append(unknown, action(404, 1, 0)),
        Err(StoreError::NoSuchGame(GameId(404)))
    ));
    assert_eq!(store.game(unknown).unwrap_err().to_string(), "no game 404");
    assert!(matches!(
        store.seats(unknown),
        Err(StoreError::NoSuchGame(_))
    ));
    assert!(matches!(
        store.recover(unknown),
        Err(StoreError::NoSuchGame(_))
    ));
    assert!(matches!(
        store.finish(unknown),
        Err(StoreError::NoSuchGame(_))
    ));
    assert!(matches!(
        store.actions_after(unknown, 0),
        Err(StoreError::NoSuchGame(_))
    ));
    assert!(matches!(
        store.claim_seat(unknown, 0, TokenHash::of_token(b"t")),
        Err(StoreError::NoSuchGame(_))
    ));
}

fn game_ids_are_unique_and_seats_match_players(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    assert!(matches!(
        store.create_game(new_game(1)),
        Err(StoreError::GameExists(GameId(1)))
    ));
    let mut wrong = new_game(2);
    wrong.seats.push(None);
    assert_eq!(
        store.create_game(wrong).unwrap_err().to_string(),
        "game 2 has 2 players but 3 seats were given"
    );
    assert!(matches!(
        store.game(GameId(2)),
        Err(StoreError::NoSuchGame(_))
    ));
    // An action by a seat the game does not have.
    let mut stranger = action(1, 1, 0);
    stranger.seat = 2;
    assert_eq!(
        store.append(GameId(1), stranger).unwrap_err().to_string(),
        "no seat 2 in game 1: its seats are 0 to 1"
    );
}

fn a_game_reads_back_as_created(store: &Arc<dyn Store>) {
    let game = new_game(u64::MAX);
    store.create_game(game.clone()).unwrap();
    let record = store.game(game.id).unwrap();
    assert_eq!(record.id, game.id);
    assert_eq!(record.ruleset, game.ruleset);
    assert_eq!(record.setup, game.setup);
    assert_eq!(record.created_unix_ms, game.created_unix_ms);
    assert!(!record.finished);
    assert_eq!(record.seq, 0);
}

fn seats_store_only_the_hash_of_their_token(store: &Arc<dyn Store>) {
    let token = b"a secret bearer token of 128 bits or more";
    let hash = TokenHash::of_token(token);
    let digest: [u8; 32] = Sha256::digest(token).into();
    assert_eq!(hash.digest(), &digest);
    assert!(hash.matches(token));
    assert!(!hash.matches(b"another token"));

    store
        .create_game(new_game_with_seats(1, vec![Some(hash), None, None]))
        .unwrap();
    assert_eq!(store.seats(GameId(1)).unwrap(), [Some(hash), None, None]);
    let second = TokenHash::of_token(b"second");
    store.claim_seat(GameId(1), 2, second).unwrap();
    assert_eq!(
        store.seats(GameId(1)).unwrap(),
        [Some(hash), None, Some(second)]
    );
    assert_eq!(
        store
            .claim_seat(GameId(1), 0, TokenHash::of_token(b"thief"))
            .unwrap_err()
            .to_string(),
        "seat 0 of game 1 is already taken"
    );
    assert!(matches!(
        store.claim_seat(GameId(1), 3, second),
        Err(StoreError::NoSuchSeat {
            seat: 3,
            seats: 3,
            ..
        })
    ));
    assert_eq!(store.seats(GameId(1)).unwrap()[0], Some(hash));
}

fn snapshot(seq: u64) -> Snapshot {
    Snapshot {
        seq,
        bytes: vec![seq as u8; 40],
        hash: StateHash(seq * 31),
    }
}

fn recovery_is_the_latest_snapshot_and_the_actions_after_it(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    store.put_snapshot(GameId(1), snapshot(0)).unwrap();
    for seq in 1..=10 {
        store.append(GameId(1), action(1, seq, 0)).unwrap();
        if seq % 4 == 0 {
            store.put_snapshot(GameId(1), snapshot(seq)).unwrap();
        }
    }
    // A snapshot written late, of an older state, does not hide the newer one.
    store.put_snapshot(GameId(1), snapshot(2)).unwrap();
    let recovery = store.recover(GameId(1)).unwrap();
    assert_eq!(recovery.game.seq, 10);
    assert_eq!(recovery.snapshot, Some(snapshot(8)));
    assert_eq!(recovery.tail, [action(1, 9, 0), action(1, 10, 0)]);
}

fn recovery_without_a_snapshot_is_the_whole_log(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    store.append(GameId(1), action(1, 1, 0)).unwrap();
    store.append(GameId(1), action(1, 2, 0)).unwrap();
    let recovery = store.recover(GameId(1)).unwrap();
    assert_eq!(recovery.snapshot, None);
    assert_eq!(recovery.tail, [action(1, 1, 0), action(1, 2, 0)]);
    assert_eq!(recovery.game, store.game(GameId(1)).unwrap());
}

fn a_snapshot_ahead_of_the_log_is_refused(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    store.append(GameId(1), action(1, 1, 0)).unwrap();
    assert_eq!(
        store
            .put_snapshot(GameId(1), snapshot(2))
            .unwrap_err()
            .to_string(),
        "snapshot at 2 of game 1 is ahead of its log, which is at 1"
    );
    assert_eq!(store.recover(GameId(1)).unwrap().snapshot, None);
}

fn finished_games_take_no_actions_and_are_not_recovered(store: &Arc<dyn Store>) {
    for id in [3, 1, 2] {
        store.create_game(new_game(id)).unwrap();
    }
    assert_eq!(
        store.unfinished_games().unwrap(),
        [GameId(1), GameId(2), GameId(3)]
    );
    store.append(GameId(2), action(2, 1, 0)).unwrap();
    store.finish(GameId(2)).unwrap();
    store.finish(GameId(2)).unwrap();
    assert_eq!(store.unfinished_games().unwrap(), [GameId(1), GameId(3)]);
    assert!(store.game(GameId(2)).unwrap().finished);
    assert_eq!(
        store
            .append(GameId(2), action(2, 2, 0))
            .unwrap_err()
            .to_string(),
        "game 2 is finished"
    );
    assert_eq!(store.game(GameId(2)).unwrap().seq, 1);
}

fn only_finished_games_past_the_cutoff_are_listed_and_deleted_whole(store: &Arc<dyn Store>) {
    for id in [1, 2, 3] {
        store.create_game(new_game(id)).unwrap();
        store.append(GameId(id), action(id, 1, 0)).unwrap();
    }
    store.put_snapshot(GameId(2), snapshot(1)).unwrap();
    store.finish(GameId(2)).unwrap();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    assert_eq!(store.finished_before(now - 60_000, 10).unwrap(), []);
    assert_eq!(
        store.finished_before(now + 60_000, 10).unwrap(),
        [GameId(2)]
    );
    assert_eq!(store.finished_before(now + 60_000, 0).unwrap(), []);
    // Finishing again keeps when it first finished.
    std::thread::sleep(std::time::Duration::from_millis(5));
    store.finish(GameId(2)).unwrap();
    assert_eq!(
        store.finished_before(now + 60_000, 10).unwrap(),
        [GameId(2)]
    );
    assert!(matches!(
        store.forget(GameId(1)),
        Err(StoreError::NotFinished(GameId(1)))
    ));
    assert!(matches!(
        store.forget(GameId(99)),
        Err(StoreError::NoSuchGame(GameId(99)))
    ));
    store.forget(GameId(2)).unwrap();
    assert!(matches!(
        store.game(GameId(2)),
        Err(StoreError::NoSuchGame(GameId(2)))
    ));
    assert!(store.actions_after(GameId(2), 0).is_err());
    assert_eq!(store.finished_before(now + 60_000, 10).unwrap(), []);
    // The others are untouched.
    assert_eq!(store.actions_after(GameId(1), 0).unwrap().len(), 1);
    assert_eq!(store.actions_after(GameId(3), 0).unwrap().len(), 1);
}

fn actions_after_a_sequence_are_the_tail(store: &Arc<dyn Store>) {
    store.create_game(new_game(1)).unwrap();
    store.create_game(new_game(2)).unwrap();
    for seq in 1..=5 {
        store.append(GameId(1), action(1, seq, 0)).unwrap();
    }
    store.append(GameId(2), action(2, 1, 0)).unwrap();
    assert_eq!(
        store.actions_after(GameId(1), 3).unwrap(),
        [action(1, 4, 0), action(1, 5, 0)]
    );
    assert!(store.actions_after(GameId(1), 5).unwrap().is_empty());
    assert!(store.actions_after(GameId(1), 99).unwrap().is_empty());
    assert_eq!(
        store.actions_after(GameId(2), 0).unwrap(),
        [action(2, 1, 0)]
    );
}

/// Eight threads race on six games: each reads a game's sequence and submits the next, as clients
/// with `expected_seq` do. Every sequence has exactly one winner, whose action is the stored one.
fn racing_threads_on_many_games_lose_and_duplicate_nothing(store: &Arc<dyn Store>) {
    const GAMES: u64 = 6;
    const THREADS: u64 = 8;
    const WINS_PER_THREAD: usize = 30;
    for game in 1..=GAMES {
        store.create_game(new_game(game)).unwrap();
    }
    let threads: Vec<_> = (0..THREADS)
        .map(|writer| {
            let store = Arc::clone(store);
            std::thread::spawn(move || {
                let mut wins = Vec::new();
                let mut conflicts = 0u64;
                let mut turn = writer;
                while wins.len() < WINS_PER_THREAD {
                    let game = 1 + turn % GAMES;
                    turn += 1;
                    let next = store.game(GameId(game)).unwrap().seq + 1;
                    match store.append(GameId(game), action(game, next, writer)) {
                        Ok(()) => wins.push((game, next)),
                        Err(StoreError::SequenceConflict { current, .. }) => {
                            assert!(current >= next, "the game went back to {current}");
                            conflicts += 1;
                        }
                        Err(other) => panic!("append failed: {other}"),
                    }
                }
                (writer, wins, conflicts)
            })
        })
        .collect();
    let mut won = BTreeSet::new();
    let mut winner = std::collections::BTreeMap::new();
    for thread in threads {
        let (writer, wins, _conflicts) = thread.join().unwrap();
        for win in wins {
            assert!(won.insert(win), "{win:?} was won twice");
            winner.insert(win, writer);
        }
    }
    let mut total = 0;
    for game in 1..=GAMES {
        let log = store.actions_after(GameId(game), 0).unwrap();
        for (index, stored) in log.iter().enumerate() {
            let seq = index as u64 + 1;
            assert_eq!(stored.seq, seq, "game {game} has a gap");
            let writer = winner[&(game, seq)];
            assert_eq!(*stored, action(game, seq, writer));
        }
        assert_eq!(store.game(GameId(game)).unwrap().seq, log.len() as u64);
        total += log.len();
    }
    assert_eq!(total, won.len());
    assert_eq!(total, THREADS as usize * WINS_PER_THREAD);
}

#[test]
fn sqlite_commits_waiting_appends_in_groups() {
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(SqliteStore::open(&dir.path().join("store.db"), SqliteConfig::default()).unwrap());
    const THREADS: u64 = 16;
    const EACH: u64 = 20;
    for game in 1..=THREADS {
        store.create_game(new_game(game)).unwrap();
    }
    let before = store.stats();
    let threads: Vec<_> = (1..=THREADS)
        .map(|game| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                for seq in 1..=EACH {
                    store.append(GameId(game), action(game, seq, 0)).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let after = store.stats();
    let requests = after.requests - before.requests;
    let transactions = after.transactions - before.transactions;
    assert_eq!(requests, THREADS * EACH);
    assert!(
        transactions < requests,
        "{requests} appends from {THREADS} threads took {transactions} transactions"
    );
}

#[test]
fn sqlite_without_grouping_commits_each_append_alone() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = SqliteConfig::default();
    config.max_batch = 1;
    let store = SqliteStore::open(&dir.path().join("store.db"), config).unwrap();
    store.create_game(new_game(1)).unwrap();
    for seq in 1..=5 {
        store.append(GameId(1), action(1, seq, 0)).unwrap();
    }
    assert_eq!(store.stats().transactions, store.stats().requests);
}

#[test]
fn sqlite_keeps_everything_across_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let token = TokenHash::of_token(b"token");
    {
        let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
        store
            .create_game(new_game_with_seats(1, vec![Some(token), None]))
            .unwrap();
        store.append(GameId(1), action(1, 1, 0)).unwrap();
        store.put_snapshot(GameId(1), snapshot(1)).unwrap();
        store.append(GameId(1), action(1, 2, 0)).unwrap();
    }
    let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
    let recovery = store.recover(GameId(1)).unwrap();
    assert_eq!(recovery.game.seq, 2);
    assert_eq!(recovery.game.setup, new_game(1).setup);
    assert_eq!(recovery.snapshot, Some(snapshot(1)));
    assert_eq!(recovery.tail, [action(1, 2, 0)]);
    assert_eq!(store.seats(GameId(1)).unwrap(), [Some(token), None]);
    store.append(GameId(1), action(1, 3, 0)).unwrap();
}

/// The database file and its write-ahead log hold the token's hash, never the token.
#[test]
fn sqlite_files_never_hold_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let token = b"tok-7f3a9c1e5b2d4086a1c3e5f7091b2d4f";
    let hash = TokenHash::of_token(token);
    let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
    store
        .create_game(new_game_with_seats(1, vec![None, None]))
        .unwrap();
    store.claim_seat(GameId(1), 1, hash).unwrap();
    let mut bytes = Vec::new();
    for entry in std::fs::read_dir(dir.path()).unwrap() {
        bytes.extend(std::fs::read(entry.unwrap().path()).unwrap());
    }
    let contains = |needle: &[u8]| bytes.windows(needle.len()).any(|window| window == needle);
    assert!(contains(hash.digest()), "the hash is stored");
    assert!(!contains(token), "the token is not");
}

#[test]
fn sqlite_refuses_a_database_of_a_newer_schema() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    drop(SqliteStore::open(&path, SqliteConfig::default()).unwrap());
    rusqlite::Connection::open(&path)
        .unwrap()
        .pragma_update(None, "user_version", 6)
        .unwrap();
    let error = SqliteStore::open(&path, SqliteConfig::default()).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the store's schema version is 6, newer than this build's 5"
    );
}

#[test]
fn sqlite_migrates_a_version_1_database_and_keeps_its_actions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    {
        // The schema version 1 wrote: actions without idempotency keys.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE games (id INTEGER PRIMARY KEY, ruleset TEXT NOT NULL, players INTEGER NOT NULL,
                 seed INTEGER NOT NULL, config TEXT NOT NULL, created_unix_ms INTEGER NOT NULL,
                 finished INTEGER NOT NULL DEFAULT 0, seq INTEGER NOT NULL DEFAULT 0) STRICT;
             CREATE TABLE seats (game INTEGER NOT NULL, seat INTEGER NOT NULL, token_sha256 BLOB,
                 PRIMARY KEY (game, seat)) STRICT, WITHOUT ROWID;
             CREATE TABLE actions (game INTEGER NOT NULL, seq INTEGER NOT NULL, seat INTEGER NOT NULL,
                 action TEXT NOT NULL, hash INTEGER NOT NULL, PRIMARY KEY (game, seq)) STRICT, WITHOUT ROWID;
             CREATE TABLE snapshots (game INTEGER NOT NULL, seq INTEGER NOT NULL, bytes BLOB NOT NULL,
                 hash INTEGER NOT NULL, PRIMARY KEY (game, seq)) STRICT, WITHOUT ROWID;
             INSERT INTO games VALUES (1, 'charges@1', 2, 7, '{}', 0, 0, 1);
             INSERT INTO seats VALUES (1, 0, NULL), (1, 1, NULL);
             INSERT INTO actions VALUES (1, 1, 1, '{\"a\":1}', 42);
             PRAGMA user_version = 1;",
        )
        .unwrap();
    }
    let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
    let log = store.actions_after(GameId(1), 0).unwrap();
    assert_eq!(
        (log.len(), log[0].hash, log[0].key.clone()),
        (1, StateHash(42), None)
    );
    let mut next = action(1, 2, 0);
    next.key = Some("k".into());
    store.append(GameId(1), next).unwrap();
    assert_eq!(store.keyed_action(GameId(1), 0, "k").unwrap(), Some(2));
}

#[test]
fn sqlite_migration_to_version_3_dates_games_finished_before_as_finished_now() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    {
        let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
        for id in [1, 2] {
            store.create_game(new_game(id)).unwrap();
        }
    }
    {
        // As version 2 wrote a finished game: `finished = 1`, and no bots, clock or action times yet.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "UPDATE games SET finished = 1 WHERE id = 2;
             ALTER TABLE games DROP COLUMN bots; ALTER TABLE games DROP COLUMN clock;
             ALTER TABLE actions DROP COLUMN at_unix_ms;
             PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64;
    let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
    assert_eq!(
        store.finished_before(before, 10).unwrap(),
        [],
        "not deleted at once"
    );
    assert_eq!(
        store.finished_before(before + 60_000, 10).unwrap(),
        [GameId(2)]
    );
    assert!(store.game(GameId(2)).unwrap().finished);
    let kept = store.game(GameId(1)).unwrap();
    assert!(!kept.finished);
    // Version 4: no bots and no clock in games made before it.
    assert!(kept.setup.bots.is_empty() && kept.setup.clock.is_none());
}

#[test]
fn sqlite_keeps_a_games_bots_and_clock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store.db");
    let mut game = new_game(3);
    game.setup.bots = [(1, "search".to_owned())].into();
    game.setup.clock = Some(coffer_server::Clock {
        per_action_ms: None,
        bank_ms: Some(60_000),
        increment_ms: 2_000,
        abandon_after: Some(5),
        disconnect_grace_ms: Some(60_000),
        forfeit: true,
    });
    let setup = game.setup.clone();
    SqliteStore::open(&path, SqliteConfig::default())
        .unwrap()
        .create_game(game)
        .unwrap();
    let store = SqliteStore::open(&path, SqliteConfig::default()).unwrap();
    assert_eq!(store.game(GameId(3)).unwrap().setup, setup);
}

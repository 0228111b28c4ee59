//! `SqliteStore`: the embedded durable store, one writer thread committing requests in groups.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::JoinHandle;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::value::RawValue;

use crate::store::{
    Action, Done, GameId, GameRecord, NewGame, Op, Passage, Recovery, RulesetKey, Setup, Snapshot,
    StateHash, Store, StoreError, TokenHash,
};

/// The schema this build writes, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 3;

/// The stamp of a Coffer store, in `PRAGMA application_id` (the bytes `Cofr`): what tells a Coffer store
/// from another program's SQLite database. Stores made before the stamp are recognised by their tables
/// and stamped when opened.
pub const APPLICATION_ID: i32 = 0x436f_6672;

/// The tables every Coffer store has had since the first schema.
const TABLES: [&str; 4] = ["games", "seats", "actions", "snapshots"];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS games (
    id INTEGER PRIMARY KEY,
    ruleset TEXT NOT NULL,
    players INTEGER NOT NULL,
    seed INTEGER NOT NULL,
    config TEXT NOT NULL,
    created_unix_ms INTEGER NOT NULL,
    finished INTEGER NOT NULL DEFAULT 0,
    seq INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX IF NOT EXISTS games_unfinished ON games (id) WHERE finished = 0;
CREATE INDEX IF NOT EXISTS games_finished ON games (finished) WHERE finished != 0;
CREATE TABLE IF NOT EXISTS seats (
    game INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    token_sha256 BLOB,
    PRIMARY KEY (game, seat)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS actions (
    game INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    hash INTEGER NOT NULL,
    idem TEXT,
    PRIMARY KEY (game, seq)
) STRICT, WITHOUT ROWID;
CREATE UNIQUE INDEX IF NOT EXISTS actions_idem ON actions (game, seat, idem) WHERE idem IS NOT NULL;
CREATE TABLE IF NOT EXISTS snapshots (
    game INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    bytes BLOB NOT NULL,
    hash INTEGER NOT NULL,
    PRIMARY KEY (game, seq)
) STRICT, WITHOUT ROWID;
";

/// What must survive before a write is acknowledged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Durability {
    /// `synchronous = FULL`: every commit is synced to the device before it is acknowledged, so an
    /// acknowledged write survives a crash of the process *and* of the machine (power loss, kernel
    /// panic). The default: group commit shares each sync among every waiting write.
    #[default]
    PowerLoss,
    /// `synchronous = NORMAL`: a commit is in the operating system's cache when acknowledged and
    /// synced at the next checkpoint, so it survives a crash of the process but the last commits may
    /// be lost (never half-applied) on power loss.
    ProcessCrash,
}

/// How a [`SqliteStore`] writes, and whether opening may make a new store.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct SqliteConfig {
    /// The most requests committed in one transaction (at least 1). `1` commits each write on its
    /// own: the baseline group commit is measured against.
    pub max_batch: usize,
    /// What an acknowledged write survives.
    pub durability: Durability,
    /// Whether the file must already hold a store, or a new one is made.
    pub opening: Opening,
}

impl Default for SqliteConfig {
    fn default() -> Self {
        Self {
            max_batch: 1024,
            durability: Durability::default(),
            opening: Opening::default(),
        }
    }
}

/// What [`SqliteStore::open`] accepts at its path. Whatever the opening, a file holding data that is
/// not a Coffer store is refused ([`StoreError::NotAStore`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Opening {
    /// A Coffer store if the file holds one, else a new one where the file is missing or empty: for
    /// tests and programs that own their file. The server never opens so.
    #[default]
    OpenOrCreate,
    /// Only an existing Coffer store: a missing or empty file is refused ([`StoreError::NoStore`]), so a
    /// mistyped path never starts an empty server. The server's default.
    Existing,
    /// Only a new store, where the file is missing or empty: a file with data is refused
    /// ([`StoreError::AlreadyExists`]). The server's `--create`.
    Create,
}

/// Counts of what a [`SqliteStore`]'s writer has done, for tests and benchmarks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriterStats {
    /// Write requests handled (refused ones included).
    pub requests: u64,
    /// Transactions committed or rolled back.
    pub transactions: u64,
}

#[derive(Debug, Default)]
struct Counters {
    requests: AtomicU64,
    transactions: AtomicU64,
}

/// A [`Store`] in one SQLite database file, in WAL mode.
///
/// One writer thread owns the writing connection and takes requests over a channel. It takes every
/// request waiting (up to [`SqliteConfig::max_batch`]), applies them in one transaction, commits,
/// and only then answers each caller: appends to many games share one commit and one sync (group
/// commit). A request refused by the store's rules (a stale sequence) writes nothing and does not
/// disturb the others in its group; a failed commit fails every request of the group. Reads go
/// through a second connection, which WAL lets read while the writer writes.
///
/// # Durability
/// A write is acknowledged after its transaction commits, as durable as the configured
/// [`Durability`]: by default synced to the device (`synchronous = FULL`).
#[derive(Debug)]
pub struct SqliteStore {
    requests: Option<mpsc::Sender<Request>>,
    writer: Option<JoinHandle<()>>,
    reader: Mutex<Connection>,
    counters: Arc<Counters>,
}

#[derive(Debug)]
struct Request {
    op: Op,
    reply: Reply,
}

/// Where a request's result goes.
enum Reply {
    /// A caller blocked in [`SqliteStore::write`].
    Wait(mpsc::SyncSender<Result<(), StoreError>>),
    /// A caller of [`Store::append_then`].
    Then(Done),
}

impl Reply {
    fn send(self, result: Result<(), StoreError>) {
        match self {
            // A caller that stopped waiting lost nothing: its write is committed.
            Reply::Wait(sender) => {
                let _ = sender.send(result);
            }
            Reply::Then(done) => done(result),
        }
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Reply::Wait(_) => "Wait",
            Reply::Then(_) => "Then",
        })
    }
}

impl SqliteStore {
    /// Opens the store at `path` (or makes a new one, as [`SqliteConfig::opening`] allows) and starts its
    /// writer thread. A new store is stamped with [`APPLICATION_ID`]; an existing one must carry the
    /// stamp or, made before it, Coffer's tables (it is stamped then).
    ///
    /// # Errors
    /// [`StoreError::NoStore`], [`StoreError::AlreadyExists`] and [`StoreError::NotAStore`] as the
    /// opening says, [`StoreError::Sqlite`] when the file cannot be opened or set up,
    /// [`StoreError::NewerSchema`] when a newer build wrote it, [`StoreError::WriterStart`] when no
    /// thread can be started.
    pub fn open(path: &Path, config: SqliteConfig) -> Result<Self, StoreError> {
        let writer = open_checked(path, config.opening)?;
        writer.busy_timeout(std::time::Duration::from_secs(5))?;
        let mode: String = writer.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Corrupt(format!(
                "journal mode is '{mode}', not wal"
            )));
        }
        let synchronous = match config.durability {
            Durability::PowerLoss => "FULL",
            Durability::ProcessCrash => "NORMAL",
        };
        writer.pragma_update(None, "synchronous", synchronous)?;
        let version: i64 = writer.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == 1 {
            // Version 2 added idempotency keys to actions.
            writer.execute_batch("ALTER TABLE actions ADD COLUMN idem TEXT")?;
        }
        if (1..3).contains(&version) {
            // Version 3 keeps when a game finished in `finished` (ms since the epoch; 0 while it is
            // not): games finished before count as finished now, so a retention policy gives them
            // its whole time.
            writer.execute(
                "UPDATE games SET finished = ?1 WHERE finished != 0",
                [finished_now()],
            )?;
        }
        writer.execute_batch(SCHEMA)?;
        writer.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        writer.pragma_update(None, "application_id", APPLICATION_ID)?;

        let reader = Connection::open(path)?;
        reader.busy_timeout(std::time::Duration::from_secs(5))?;
        reader.pragma_update(None, "query_only", true)?;

        let counters = Arc::new(Counters::default());
        let (requests, inbox) = mpsc::channel();
        let max_batch = config.max_batch.max(1);
        let thread_counters = Arc::clone(&counters);
        let writer = std::thread::Builder::new()
            .name("coffer-store-writer".into())
            .spawn(move || run_writer(writer, &inbox, max_batch, &thread_counters))
            .map_err(StoreError::WriterStart)?;
        Ok(Self {
            requests: Some(requests),
            writer: Some(writer),
            reader: Mutex::new(reader),
            counters,
        })
    }

    /// What the writer has done so far.
    pub fn stats(&self) -> WriterStats {
        WriterStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            transactions: self.counters.transactions.load(Ordering::Relaxed),
        }
    }

    /// Sends `op` to the writer and waits until its group is committed.
    fn write(&self, op: Op) -> Result<(), StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let requests = self.requests.as_ref().ok_or(StoreError::WriterStopped)?;
        requests
            .send(Request {
                op,
                reply: Reply::Wait(reply),
            })
            .map_err(|_| StoreError::WriterStopped)?;
        answer.recv().map_err(|_| StoreError::WriterStopped)?
    }

    /// Sends `op` to the writer; `done` gets the result once its group is committed.
    fn write_then(&self, op: Op, done: Done) {
        let Some(requests) = self.requests.as_ref() else {
            return done(Err(StoreError::WriterStopped));
        };
        if let Err(mpsc::SendError(request)) = requests.send(Request {
            op,
            reply: Reply::Then(done),
        }) {
            request.reply.send(Err(StoreError::WriterStopped));
        }
    }

    fn reader(&self) -> MutexGuard<'_, Connection> {
        // The connection holds no state of ours between calls; a panic in another reader leaves it
        // usable.
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The write-ahead log of the database at `path` (`<path>-wal`).
fn wal_path(path: &Path) -> std::path::PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    wal.into()
}

/// Whether a file exists and holds bytes.
fn has_data(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.len() > 0)
}

/// Opens the database at `path` for writing, after checking that it is what `opening` accepts.
fn open_checked(path: &Path, opening: Opening) -> Result<Connection, StoreError> {
    let no_store = |why| StoreError::NoStore {
        path: path.to_owned(),
        why,
    };
    let empty = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(StoreError::NotAStore {
                path: path.to_owned(),
                why: "it is a directory".to_owned(),
            });
        }
        // An empty file whose write-ahead log holds data is no empty store: SQLite reads it.
        Ok(meta) => meta.len() == 0 && !has_data(&wal_path(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if opening == Opening::Existing {
                return Err(no_store("the file does not exist"));
            }
            return Ok(Connection::open(path)?);
        }
        // Unreadable metadata: SQLite says why as it opens.
        Err(_) => false,
    };
    match (empty, opening) {
        (true, Opening::Existing) => return Err(no_store("the file is empty")),
        (true, _) => return Ok(Connection::open(path)?),
        (false, Opening::Create) => {
            return Err(StoreError::AlreadyExists {
                path: path.to_owned(),
            });
        }
        (false, _) => {}
    }
    // Never creates: the file was there a moment ago, and one removed since is no store.
    let connection = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let not_a_store = |why: String| StoreError::NotAStore {
        path: path.to_owned(),
        why,
    };
    let id: i32 = connection
        .query_row("PRAGMA application_id", [], |row| row.get(0))
        .map_err(|e| not_a_store(format!("it does not read as a SQLite database ({e})")))?;
    if id == APPLICATION_ID {
        return Ok(connection);
    }
    if id != 0 {
        return Err(not_a_store(format!(
            "its SQLite application id is {id:#010x}, not Coffer's {APPLICATION_ID:#010x}"
        )));
    }
    // Made before stores were stamped: Coffer's tables say it is one.
    let mut missing = Vec::new();
    for table in TABLES {
        let found: Option<String> = connection
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get(0),
            )
            .optional()?;
        if found.is_none() {
            missing.push(table);
        }
    }
    if missing.is_empty() {
        Ok(connection)
    } else {
        Err(not_a_store(format!(
            "it is a SQLite database without Coffer's tables (no {})",
            missing.join(", ")
        )))
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the channel ends the writer once it has answered every request already sent.
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

fn run_writer(
    mut conn: Connection,
    inbox: &mpsc::Receiver<Request>,
    max_batch: usize,
    counters: &Counters,
) {
    let mut batch = Vec::with_capacity(max_batch.min(4096));
    while let Ok(first) = inbox.recv() {
        batch.push(first);
        while batch.len() < max_batch {
            match inbox.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        counters
            .requests
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        counters.transactions.fetch_add(1, Ordering::Relaxed);
        match commit_group(&mut conn, &batch) {
            Ok(results) => {
                for (request, result) in batch.drain(..).zip(results) {
                    request.reply.send(result);
                }
            }
            Err(error) => {
                let error = Arc::new(error);
                for request in batch.drain(..) {
                    request
                        .reply
                        .send(Err(StoreError::Sqlite(Arc::clone(&error))));
                }
            }
        }
    }
}

/// Applies a group of requests in one transaction. The outer error is a database failure, which
/// rolls the whole group back; the inner results are each request's own refusals.
fn commit_group(
    conn: &mut Connection,
    batch: &[Request],
) -> rusqlite::Result<Vec<Result<(), StoreError>>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let results = batch
        .iter()
        .map(|request| apply(&tx, &request.op))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    tx.commit()?;
    Ok(results)
}

/// Each request checks before it writes, so a refused one writes nothing.
fn apply(conn: &Connection, op: &Op) -> rusqlite::Result<Result<(), StoreError>> {
    match op {
        Op::Create(game) => create(conn, game),
        Op::Claim { game, seat, token } => claim(conn, *game, *seat, token),
        Op::Append { game, action, .. } => append(conn, *game, action),
        Op::Snapshot { game, snapshot } => put_snapshot(conn, *game, snapshot),
        Op::Finish(game) => {
            // Finishing a finished game keeps when it first finished.
            conn.prepare_cached("UPDATE games SET finished = ?2 WHERE id = ?1 AND finished = 0")?
                .execute([game.0 as i64, finished_now()])?;
            let exists = conn
                .prepare_cached("SELECT 1 FROM games WHERE id = ?1")?
                .exists([game.0 as i64])?;
            Ok(if exists {
                Ok(())
            } else {
                Err(StoreError::NoSuchGame(*game))
            })
        }
        Op::Forget(game) => {
            let id = game.0 as i64;
            let finished: Option<i64> = conn
                .prepare_cached("SELECT finished FROM games WHERE id = ?1")?
                .query_row([id], |row| row.get(0))
                .optional()?;
            match finished {
                None => return Ok(Err(StoreError::NoSuchGame(*game))),
                Some(0) => return Ok(Err(StoreError::NotFinished(*game))),
                Some(_) => {}
            }
            for table in ["actions", "snapshots", "seats"] {
                conn.prepare_cached(&format!("DELETE FROM {table} WHERE game = ?1"))?
                    .execute([id])?;
            }
            conn.prepare_cached("DELETE FROM games WHERE id = ?1")?
                .execute([id])?;
            Ok(Ok(()))
        }
    }
}

fn create(conn: &Connection, game: &NewGame) -> rusqlite::Result<Result<(), StoreError>> {
    if game.seats.len() != game.setup.players as usize {
        return Ok(Err(StoreError::SeatCount {
            game: game.id,
            players: game.setup.players,
            seats: game.seats.len(),
        }));
    }
    let exists = conn
        .prepare_cached("SELECT 1 FROM games WHERE id = ?1")?
        .exists([game.id.0 as i64])?;
    if exists {
        return Ok(Err(StoreError::GameExists(game.id)));
    }
    conn.prepare_cached(
        "INSERT INTO games (id, ruleset, players, seed, config, created_unix_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        game.id.0 as i64,
        game.ruleset.as_str(),
        game.setup.players,
        game.setup.seed as i64,
        game.setup.config.to_string(),
        game.created_unix_ms as i64,
    ])?;
    let mut seat =
        conn.prepare_cached("INSERT INTO seats (game, seat, token_sha256) VALUES (?1, ?2, ?3)")?;
    for (index, token) in game.seats.iter().enumerate() {
        seat.execute(params![
            game.id.0 as i64,
            index as i64,
            token.as_ref().map(|token| &token.digest()[..]),
        ])?;
    }
    Ok(Ok(()))
}

fn claim(
    conn: &Connection,
    game: GameId,
    seat: u32,
    token: &TokenHash,
) -> rusqlite::Result<Result<(), StoreError>> {
    let changed = conn
        .prepare_cached(
            "UPDATE seats SET token_sha256 = ?3
             WHERE game = ?1 AND seat = ?2 AND token_sha256 IS NULL",
        )?
        .execute(params![game.0 as i64, seat, &token.digest()[..]])?;
    if changed == 1 {
        return Ok(Ok(()));
    }
    let players: Option<u32> = conn
        .prepare_cached("SELECT players FROM games WHERE id = ?1")?
        .query_row([game.0 as i64], |row| row.get(0))
        .optional()?;
    Ok(Err(match players {
        None => StoreError::NoSuchGame(game),
        Some(seats) if seat >= seats => StoreError::NoSuchSeat { game, seat, seats },
        Some(_) => StoreError::SeatTaken { game, seat },
    }))
}

fn append(
    conn: &Connection,
    game: GameId,
    action: &Action,
) -> rusqlite::Result<Result<(), StoreError>> {
    // Check and advance in one statement: the game exists, is not finished, the seat is one of its
    // seats and the sequence is the next one.
    let changed = conn
        .prepare_cached(
            "UPDATE games SET seq = ?2
             WHERE id = ?1 AND seq = ?2 - 1 AND finished = 0 AND players > ?3",
        )?
        .execute(params![game.0 as i64, action.seq as i64, action.seat])?;
    if changed == 0 {
        let row: Option<(bool, i64, u32)> = conn
            .prepare_cached("SELECT finished, seq, players FROM games WHERE id = ?1")?
            .query_row([game.0 as i64], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        return Ok(Err(match row {
            None => StoreError::NoSuchGame(game),
            Some((true, _, _)) => StoreError::GameFinished(game),
            Some((false, current, _)) if current as u64 + 1 != action.seq => {
                StoreError::SequenceConflict {
                    game,
                    given: action.seq,
                    current: current as u64,
                }
            }
            Some((false, _, seats)) => StoreError::NoSuchSeat {
                game,
                seat: action.seat,
                seats,
            },
        }));
    }
    if let Some(key) = &action.key
        && let Some(first) = keyed(conn, game, action.seat, key)?
    {
        // Undo the advance above; the transaction holds other requests' writes.
        conn.prepare_cached("UPDATE games SET seq = ?2 - 1 WHERE id = ?1")?
            .execute(params![game.0 as i64, action.seq as i64])?;
        return Ok(Err(StoreError::Duplicate {
            game,
            seat: action.seat,
            seq: first,
        }));
    }
    conn.prepare_cached(
        "INSERT INTO actions (game, seq, seat, action, hash, idem) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        game.0 as i64,
        action.seq as i64,
        action.seat,
        action.action.get(),
        action.hash.0 as i64,
        action.key,
    ])?;
    Ok(Ok(()))
}

fn keyed(conn: &Connection, game: GameId, seat: u32, key: &str) -> rusqlite::Result<Option<u64>> {
    conn.prepare_cached("SELECT seq FROM actions WHERE game = ?1 AND seat = ?2 AND idem = ?3")?
        .query_row(params![game.0 as i64, seat, key], |row| {
            row.get::<_, i64>(0)
        })
        .optional()
        .map(|seq| seq.map(|seq| seq as u64))
}

fn put_snapshot(
    conn: &Connection,
    game: GameId,
    snapshot: &Snapshot,
) -> rusqlite::Result<Result<(), StoreError>> {
    let current: Option<i64> = conn
        .prepare_cached("SELECT seq FROM games WHERE id = ?1")?
        .query_row([game.0 as i64], |row| row.get(0))
        .optional()?;
    let Some(current) = current else {
        return Ok(Err(StoreError::NoSuchGame(game)));
    };
    let current = current as u64;
    if snapshot.seq > current {
        return Ok(Err(StoreError::SnapshotAhead {
            game,
            seq: snapshot.seq,
            current,
        }));
    }
    conn.prepare_cached(
        "INSERT OR REPLACE INTO snapshots (game, seq, bytes, hash) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        game.0 as i64,
        snapshot.seq as i64,
        snapshot.bytes,
        snapshot.hash.0 as i64,
    ])?;
    Ok(Ok(()))
}

fn read_game(conn: &Connection, game: GameId) -> Result<GameRecord, StoreError> {
    type Row = (String, u32, i64, String, i64, bool, i64);
    let row: Option<Row> = conn
        .prepare_cached(
            "SELECT ruleset, players, seed, config, created_unix_ms, finished, seq
             FROM games WHERE id = ?1",
        )?
        .query_row([game.0 as i64], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
            ))
        })
        .optional()?;
    let (ruleset, players, seed, config, created, finished, seq) =
        row.ok_or(StoreError::NoSuchGame(game))?;
    let ruleset = RulesetKey::new(&ruleset)
        .map_err(|_| StoreError::Corrupt(format!("game {game} has ruleset key '{ruleset}'")))?;
    let config = serde_json::from_str(&config).map_err(|error| {
        StoreError::Corrupt(format!(
            "game {game} has a configuration that is not json: {error}"
        ))
    })?;
    Ok(GameRecord {
        id: game,
        ruleset,
        setup: Setup {
            players,
            seed: seed as u64,
            config,
        },
        created_unix_ms: created as u64,
        finished,
        seq: seq as u64,
    })
}

fn read_actions(conn: &Connection, game: GameId, after: u64) -> Result<Vec<Action>, StoreError> {
    read_actions_until(conn, game, after, i64::MAX as u64)
}

/// The actions after `after` up to `until`, inclusive.
fn read_actions_until(
    conn: &Connection,
    game: GameId,
    after: u64,
    until: u64,
) -> Result<Vec<Action>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT seq, seat, action, hash, idem FROM actions WHERE game = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
    )?;
    let until = i64::try_from(until).unwrap_or(i64::MAX);
    let rows = statement.query_map(params![game.0 as i64, after as i64, until], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, u32>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, i64>(3)?,
            row.get::<_, Option<String>>(4)?,
        ))
    })?;
    let mut actions = Vec::new();
    for row in rows {
        let (seq, seat, action, hash, key) = row?;
        let action = RawValue::from_string(action).map_err(|error| {
            StoreError::Corrupt(format!("action {seq} of game {game} is not json: {error}"))
        })?;
        actions.push(Action {
            seq: seq as u64,
            seat,
            action,
            hash: StateHash(hash as u64),
            key,
        });
    }
    Ok(actions)
}

fn read_latest_snapshot(conn: &Connection, game: GameId) -> Result<Option<Snapshot>, StoreError> {
    read_snapshot_at_or_before(conn, game, i64::MAX as u64)
}

/// The latest snapshot at or before action `seq`.
fn read_snapshot_at_or_before(
    conn: &Connection,
    game: GameId,
    seq: u64,
) -> Result<Option<Snapshot>, StoreError> {
    let seq = i64::try_from(seq).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "SELECT seq, bytes, hash FROM snapshots WHERE game = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![game.0 as i64, seq], |row| {
            Ok(Snapshot {
                seq: row.get::<_, i64>(0)? as u64,
                bytes: row.get(1)?,
                hash: StateHash(row.get::<_, i64>(2)? as u64),
            })
        })
        .optional()?)
}

impl Store for SqliteStore {
    fn create_game(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(Op::Create(game))
    }

    fn claim_seat(&self, game: GameId, seat: u32, token: TokenHash) -> Result<(), StoreError> {
        self.write(Op::Claim { game, seat, token })
    }

    fn seats(&self, game: GameId) -> Result<Vec<Option<TokenHash>>, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        read_game(&tx, game)?;
        let mut statement =
            tx.prepare_cached("SELECT token_sha256 FROM seats WHERE game = ?1 ORDER BY seat")?;
        let rows = statement.query_map([game.0 as i64], |row| row.get::<_, Option<Vec<u8>>>(0))?;
        let mut seats = Vec::new();
        for row in rows {
            seats.push(match row? {
                None => None,
                Some(bytes) => Some(TokenHash::from_digest(bytes.try_into().map_err(
                    |bytes: Vec<u8>| {
                        StoreError::Corrupt(format!(
                            "a seat of game {game} has a {}-byte token hash, not 32",
                            bytes.len()
                        ))
                    },
                )?)),
            });
        }
        Ok(seats)
    }

    fn append(&self, game: GameId, action: Action) -> Result<(), StoreError> {
        self.write(Op::append(game, action))
    }

    fn append_then(&self, game: GameId, action: Action, done: Done) {
        self.write_then(Op::append(game, action), done);
    }

    fn keyed_action(&self, game: GameId, seat: u32, key: &str) -> Result<Option<u64>, StoreError> {
        let conn = self.reader();
        let exists = conn
            .prepare_cached("SELECT 1 FROM games WHERE id = ?1")?
            .exists([game.0 as i64])?;
        if !exists {
            return Err(StoreError::NoSuchGame(game));
        }
        Ok(keyed(&conn, game, seat, key)?)
    }

    fn put_snapshot(&self, game: GameId, snapshot: Snapshot) -> Result<(), StoreError> {
        self.write(Op::Snapshot { game, snapshot })
    }

    fn finish(&self, game: GameId) -> Result<(), StoreError> {
        self.write(Op::Finish(game))
    }

    fn finished_before(
        &self,
        before_unix_ms: u64,
        limit: usize,
    ) -> Result<Vec<GameId>, StoreError> {
        let conn = self.reader();
        let mut statement = conn.prepare_cached(
            "SELECT id FROM games WHERE finished != 0 AND finished < ?1 ORDER BY finished LIMIT ?2",
        )?;
        let before = i64::try_from(before_unix_ms).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let ids = statement
            .query_map([before, limit], |row| row.get::<_, i64>(0))?
            .map(|id| id.map(|id| GameId(id as u64)))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(ids)
    }

    fn forget(&self, game: GameId) -> Result<(), StoreError> {
        self.write(Op::Forget(game))
    }

    fn game(&self, game: GameId) -> Result<GameRecord, StoreError> {
        read_game(&self.reader(), game)
    }

    fn actions_after(&self, game: GameId, after: u64) -> Result<Vec<Action>, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        read_game(&tx, game)?;
        read_actions(&tx, game, after)
    }

    fn unfinished_games(&self) -> Result<Vec<GameId>, StoreError> {
        let conn = self.reader();
        let mut statement =
            conn.prepare_cached("SELECT id FROM games WHERE finished = 0 ORDER BY id")?;
        let ids = statement
            .query_map([], |row| row.get::<_, i64>(0))?
            .map(|id| id.map(|id| GameId(id as u64)))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(ids)
    }

    fn recover(&self, game: GameId) -> Result<Recovery, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        let record = read_game(&tx, game)?;
        let snapshot = read_latest_snapshot(&tx, game)?;
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        let tail = read_actions(&tx, game, after)?;
        Ok(Recovery {
            game: record,
            snapshot,
            tail,
        })
    }

    fn passage(&self, game: GameId, since: u64, until: u64) -> Result<Passage, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        read_game(&tx, game)?;
        let snapshot = read_snapshot_at_or_before(&tx, game, since)?;
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        let actions = read_actions_until(&tx, game, after, until)?;
        Ok(Passage { snapshot, actions })
    }
}

/// `finished` for a game finishing now: ms since the epoch, never 0 (which means "not finished").
fn finished_now() -> i64 {
    i64::try_from(crate::store::now_unix_ms())
        .unwrap_or(i64::MAX)
        .max(1)
}

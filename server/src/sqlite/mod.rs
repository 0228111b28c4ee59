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

mod open;
mod reads;
mod writer;

/// The schema this build writes, in `PRAGMA user_version`.
const SCHEMA_VERSION: i64 = 5;

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
    bots TEXT NOT NULL DEFAULT '{}',
    clock TEXT NOT NULL DEFAULT 'null',
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
    at_unix_ms INTEGER NOT NULL DEFAULT 0,
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

fn keyed(conn: &Connection, game: GameId, seat: u32, key: &str) -> rusqlite::Result<Option<u64>> {
    conn.prepare_cached("SELECT seq FROM actions WHERE game = ?1 AND seat = ?2 AND idem = ?3")?
        .query_row(params![game.0 as i64, seat, key], |row| {
            row.get::<_, i64>(0)
        })
        .optional()
        .map(|seq| seq.map(|seq| seq as u64))
}

/// `finished` for a game finishing now: ms since the epoch, never 0 (which means "not finished").
fn finished_now() -> i64 {
    i64::try_from(crate::store::now_unix_ms())
        .unwrap_or(i64::MAX)
        .max(1)
}

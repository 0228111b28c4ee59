//! The store's contract: the records a server keeps durable, the `Store` trait and its errors.

use std::fmt;
use std::sync::Arc;

use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

/// A game's identity on the server, chosen by the caller when the game is created.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GameId(pub u64);

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A ruleset's key in the registry, `id@version` (`charges@1`): both sides non-empty, no spaces.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RulesetKey(String);

impl RulesetKey {
    /// Checks that `key` reads `id@version`.
    ///
    /// # Errors
    /// [`StoreError::InvalidRulesetKey`] when there is no `@`, either side is empty, or the key holds
    /// whitespace or a second `@`.
    pub fn new(key: &str) -> Result<Self, StoreError> {
        let valid = match key.split_once('@') {
            Some((id, version)) => {
                !id.is_empty()
                    && !version.is_empty()
                    && !version.contains('@')
                    && !key.chars().any(char::is_whitespace)
            }
            None => false,
        };
        if valid {
            Ok(Self(key.to_owned()))
        } else {
            Err(StoreError::InvalidRulesetKey(key.to_owned()))
        }
    }

    /// The whole key, `id@version`.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RulesetKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// What a game was created with, enough to build its initial state again.
#[derive(Clone, Debug, PartialEq)]
pub struct Setup {
    /// The number of players, which is also the number of seats.
    pub players: u32,
    /// The seed of the game's random generator.
    pub seed: u64,
    /// The ruleset's configuration, as JSON.
    pub config: serde_json::Value,
    /// The seats the server's bots play, each with its bot's name (`random`, `search`): nobody holds
    /// their tokens, and the server plays their moves (`docs/SERVER.md`, "Bots").
    pub bots: std::collections::BTreeMap<u32, String>,
    /// The game's time control, if it has one (`docs/SERVER.md`, "Clocks").
    pub clock: Option<Clock>,
}

/// A game's time control: a limit per decision, or a bank per seat with an increment per action
/// (Fischer). Exactly one of `per_action_ms` and `bank_ms`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema,
)]
#[serde(deny_unknown_fields)]
pub struct Clock {
    /// Each decision's time, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_action_ms: Option<u64>,
    /// Each seat's bank of time for the whole game, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bank_ms: Option<u64>,
    /// With a bank: time added to a seat's bank after each of its actions, in milliseconds.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub increment_ms: u64,
    /// Timeouts in a row after which a seat is abandoned and handed to the random bot for good;
    /// `None`: 3; `Some(0)`: never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abandon_after: Option<u32>,
    /// A seat that was connected over a WebSocket and has none open for this long, in milliseconds, is
    /// abandoned and handed to the random bot; `None`: never for a disconnection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disconnect_grace_ms: Option<u64>,
    /// The policy `"on_timeout": "forfeit"`: a seat whose time runs out when the ruleset has no default
    /// move for it, or that leaves (resigns, is abandoned), forfeits where the ruleset can take it out of
    /// the game (`"~forfeit"`); elsewhere the random bot plays it, as with `"bot"`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub forfeit: bool,
}

impl Clock {
    /// Timeouts in a row after which a seat is abandoned when the game does not say.
    pub const DEFAULT_ABANDON_AFTER: u32 = 3;
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A game's setup field as the store keeps it in a text column: its JSON (`{"1":"random"}` for bots,
/// `null` for no clock). Serializing these types cannot fail: their map keys are numbers or strings.
pub(crate) fn json_column(value: &impl serde::Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Game `game`'s setup field `what` read back from its text column.
pub(crate) fn from_json_column<T: serde::de::DeserializeOwned>(
    game: GameId,
    what: &str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::Corrupt(format!("game {game}'s {what} are not readable: {e}")))
}

/// The SHA-256 digest of a seat's secret bearer token. The store never sees the token itself.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct TokenHash([u8; 32]);

impl TokenHash {
    /// Hashes a token.
    pub fn of_token(token: &[u8]) -> Self {
        Self(Sha256::digest(token).into())
    }

    /// A digest read back from storage.
    pub fn from_digest(digest: [u8; 32]) -> Self {
        Self(digest)
    }

    /// The digest's bytes.
    pub fn digest(&self) -> &[u8; 32] {
        &self.0
    }

    /// Whether `token` hashes to this digest. The comparison takes the same time wherever the
    /// digests first differ.
    pub fn matches(&self, token: &[u8]) -> bool {
        let other = Self::of_token(token);
        self.0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl fmt::Debug for TokenHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("TokenHash(")?;
        for byte in &self.0 {
            write!(f, "{byte:02x}")?;
        }
        f.write_str(")")
    }
}

/// A game state's hash (the kernel's `state_hash`, XXH3-64 of the postcard encoding).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StateHash(pub u64);

/// A game to create.
#[derive(Clone, Debug)]
pub struct NewGame {
    /// Its identity; refused if taken.
    pub id: GameId,
    /// The ruleset it plays.
    pub ruleset: RulesetKey,
    /// Players, seed and configuration.
    pub setup: Setup,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// One entry per seat (`setup.players` of them): the hash of the seat's token, or `None` for a
    /// free seat that someone may claim later.
    pub seats: Vec<Option<TokenHash>>,
}

/// A stored game.
#[derive(Clone, Debug, PartialEq)]
pub struct GameRecord {
    /// Its identity.
    pub id: GameId,
    /// The ruleset it plays.
    pub ruleset: RulesetKey,
    /// Players, seed and configuration.
    pub setup: Setup,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
    /// Whether it has ended; finished games are not recovered.
    pub finished: bool,
    /// The sequence number of its last action, 0 before the first.
    pub seq: u64,
}

/// One applied action in a game's log.
#[derive(Clone, Debug)]
pub struct Action {
    /// Its place in the game's log: 1 for the first action, then 2, 3, ... with no gaps.
    pub seq: u64,
    /// The seat that acted.
    pub seat: u32,
    /// The action as JSON, stored as written.
    pub action: Box<RawValue>,
    /// The state's hash after the action.
    pub hash: StateHash,
    /// The submitter's idempotency key, if it gave one: a second action of the same seat with the same
    /// key is refused with [`StoreError::Duplicate`], naming the first one's sequence number.
    pub key: Option<String>,
    /// When the server applied it, in milliseconds since the Unix epoch (0 for actions stored before
    /// the store kept times): where a clock's decision after it started, so that a restarted server or
    /// a node taking the game over fires an overdue timeout at once instead of granting a new decision.
    pub at_unix_ms: u64,
}

impl PartialEq for Action {
    fn eq(&self, other: &Self) -> bool {
        self.seq == other.seq
            && self.seat == other.seat
            && self.action.get() == other.action.get()
            && self.hash == other.hash
            && self.key == other.key
    }
}

/// One write a store's writer thread applies: the SQLite and the PostgreSQL stores queue the same ones.
#[derive(Debug)]
pub(crate) enum Op {
    Create(NewGame),
    Claim {
        game: GameId,
        seat: u32,
        token: TokenHash,
    },
    Append {
        game: GameId,
        action: Action,
        /// With several nodes: the lease's fencing number the appending node holds.
        fence: Option<u64>,
    },
    Snapshot {
        game: GameId,
        snapshot: Snapshot,
    },
    Finish(GameId),
    Forget(GameId),
    SetBots {
        game: GameId,
        bots: std::collections::BTreeMap<u32, String>,
    },
}

impl Op {
    /// An append by the only node (no lease to check).
    pub(crate) fn append(game: GameId, action: Action) -> Self {
        Op::Append {
            game,
            action,
            fence: None,
        }
    }
}

/// What a store calls with the result of a write it was handed with [`Store::append_then`]: once, on
/// a thread of the store's (keep it short; send the result somewhere).
pub type Done = Box<dyn FnOnce(Result<(), StoreError>) + Send>;

/// A game's state at one point of its log, in the ruleset's binary snapshot format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The sequence number of the last action the snapshot includes (0: the initial state).
    pub seq: u64,
    /// The ruleset's snapshot bytes.
    pub bytes: Vec<u8>,
    /// The state's hash.
    pub hash: StateHash,
}

/// What a server needs to bring one game back after a restart.
#[derive(Clone, Debug, PartialEq)]
pub struct Recovery {
    /// The game: ruleset, setup, current sequence.
    pub game: GameRecord,
    /// Its latest snapshot, if any; without one, the game is rebuilt from its setup.
    pub snapshot: Option<Snapshot>,
    /// The actions after the snapshot (or all of them), in order.
    pub tail: Vec<Action>,
}

/// A stretch of a game's log to read history from: the latest snapshot at or before the first action
/// wanted, and the actions after it up to a bound. Reading it costs the actions it holds, whatever the
/// log's length.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    /// The latest snapshot at or before the first action wanted; without one, the stretch starts at the
    /// setup.
    pub snapshot: Option<Snapshot>,
    /// The actions after the snapshot (or from the first), in order, up to the last one wanted.
    pub actions: Vec<Action>,
}

/// A PostgreSQL error in words with its causes ("db error: canceling statement due to statement
/// timeout"), for the logs.
fn postgres_text(error: &postgres::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// Why a store refused or failed a call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A ruleset key that does not read `id@version`.
    #[error("invalid ruleset key '{0}': expected id@version, like charges@1")]
    InvalidRulesetKey(String),
    /// No game has this id.
    #[error("no game {0}")]
    NoSuchGame(GameId),
    /// A game with this id already exists.
    #[error("game {0} already exists")]
    GameExists(GameId),
    /// A new game's seat list does not have one entry per player.
    #[error("game {game} has {players} players but {seats} seats were given")]
    SeatCount {
        /// The game.
        game: GameId,
        /// Its number of players.
        players: u32,
        /// The number of seats given.
        seats: usize,
    },
    /// A seat number past the game's seats.
    #[error("no seat {seat} in game {game}: its seats are 0 to {}", .seats.saturating_sub(1))]
    NoSuchSeat {
        /// The game.
        game: GameId,
        /// The seat asked for.
        seat: u32,
        /// The number of seats.
        seats: u32,
    },
    /// A seat that already has a token.
    #[error("seat {seat} of game {game} is already taken")]
    SeatTaken {
        /// The game.
        game: GameId,
        /// The seat.
        seat: u32,
    },
    /// An action whose sequence number is not the game's next one: stale (someone else acted
    /// first), repeated, or ahead. Nothing was applied.
    #[error("action {given} of game {game} is not the next one: the game is at {current}, the next is {}", .current.saturating_add(1))]
    SequenceConflict {
        /// The game.
        game: GameId,
        /// The sequence number given.
        given: u64,
        /// The game's current sequence number (its last action's).
        current: u64,
    },
    /// An action whose seat already submitted one with the same idempotency key: nothing was
    /// applied; the first one is action `seq`.
    #[error("game {game} already has this submission of seat {seat}, as action {seq}")]
    Duplicate {
        /// The game.
        game: GameId,
        /// The seat.
        seat: u32,
        /// The first submission's sequence number.
        seq: u64,
    },
    /// An action for a game that has ended.
    #[error("game {0} is finished")]
    GameFinished(GameId),
    /// Only a finished game may be deleted.
    #[error("game {0} is not finished: only finished games are deleted")]
    NotFinished(GameId),
    /// An append by a node that no longer holds the game's lease (its fencing number is not the
    /// lease's): another node owns the game now. Nothing was applied.
    #[error(
        "game {game} is owned by another node now (fencing number {fence} is no longer current)"
    )]
    Fenced {
        /// The game.
        game: GameId,
        /// The fencing number the append was made with.
        fence: u64,
    },
    /// A snapshot of a state the log has not reached.
    #[error("snapshot at {seq} of game {game} is ahead of its log, which is at {current}")]
    SnapshotAhead {
        /// The game.
        game: GameId,
        /// The snapshot's sequence number.
        seq: u64,
        /// The game's current sequence number.
        current: u64,
    },
    /// A database written by a newer build, whose schema this one does not know.
    #[error("the store's schema version is {found}, newer than this build's {supported}")]
    NewerSchema {
        /// The database's schema version.
        found: i64,
        /// The newest version this build reads and writes.
        supported: i64,
    },
    /// No store at the path: the file does not exist or is empty, and a new store was not asked for.
    #[error("no store at {path}: {why}")]
    NoStore {
        /// The path.
        path: std::path::PathBuf,
        /// Why: the file does not exist, or is empty.
        why: &'static str,
    },
    /// A file that is not a Coffer store (another program's database, or not a database at all).
    #[error("{path} is not a Coffer store: {why}")]
    NotAStore {
        /// The path.
        path: std::path::PathBuf,
        /// What was found instead.
        why: String,
    },
    /// A new store was asked for where a file with data already is.
    #[error("{path} already holds data: a new store is made only where no file or an empty one is")]
    AlreadyExists {
        /// The path.
        path: std::path::PathBuf,
    },
    /// Stored data that does not read back as what was written.
    #[error("corrupt store: {0}")]
    Corrupt(String),
    /// The SQLite database failed (shared: one failed commit fails every call in its group).
    #[error("sqlite store failed")]
    Sqlite(#[source] Arc<rusqlite::Error>),
    /// The PostgreSQL database failed or could not be reached.
    #[error("postgres store failed: {}", postgres_text(.0))]
    Postgres(Arc<postgres::Error>),
    /// The store's database cannot be reached now (it restarts, or the network is cut); nothing was
    /// written, and the next call tries again.
    #[error("the store's database cannot be reached: {0}")]
    Unreachable(Arc<StoreError>),
    /// The SQLite store's writer thread could not be started.
    #[error("cannot start the sqlite store's writer thread")]
    WriterStart(#[source] std::io::Error),
    /// The SQLite store's writer thread has stopped, so nothing more can be written.
    #[error("the sqlite store's writer thread has stopped")]
    WriterStopped,
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Sqlite(Arc::new(error))
    }
}

/// The server's durable state: games, seats, action logs, snapshots.
///
/// Object-safe (`Arc<dyn Store>`), so the server picks its backend at run time (`--store`) and
/// every handler shares one type; a store call costs a channel round trip or a lock, next to which
/// a virtual call is nothing. Every method blocks: call it from a thread that may block, never from
/// an async executor's threads.
///
/// # Durability
/// A call that writes returns `Ok` only once the write is as durable as the implementation
/// documents ([`MemoryStore`](crate::MemoryStore): not at all; [`SqliteStore`](crate::SqliteStore):
/// committed to its database, see its docs). A call that returns `Err` wrote nothing.
pub trait Store: Send + Sync {
    /// Creates a game with its seats.
    ///
    /// # Errors
    /// [`StoreError::GameExists`], [`StoreError::SeatCount`], or a storage failure.
    fn create_game(&self, game: NewGame) -> Result<(), StoreError>;

    /// Gives a free seat its token's hash.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`], [`StoreError::NoSuchSeat`], [`StoreError::SeatTaken`], or a
    /// storage failure.
    fn claim_seat(&self, game: GameId, seat: u32, token: TokenHash) -> Result<(), StoreError>;

    /// Each seat's token hash, `None` for a free seat.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn seats(&self, game: GameId) -> Result<Vec<Option<TokenHash>>, StoreError>;

    /// Appends an action to a game's log. `action.seq` must be the game's next sequence number;
    /// anything else is refused with the current one, so a caller that read the game at sequence
    /// `n` and submits `n + 1` wins only if nobody acted in between.
    ///
    /// # Errors
    /// [`StoreError::SequenceConflict`], [`StoreError::Duplicate`], [`StoreError::NoSuchGame`],
    /// [`StoreError::GameFinished`], [`StoreError::NoSuchSeat`], or a storage failure.
    fn append(&self, game: GameId, action: Action) -> Result<(), StoreError>;

    /// [`append`](Self::append) without waiting: `done` is called with the result once the write is
    /// as durable as `append`'s would be when it returns. For callers that must not block a thread
    /// per waiting write (an async server). The default calls `append` and then `done`.
    fn append_then(&self, game: GameId, action: Action, done: Done) {
        done(self.append(game, action));
    }

    /// [`append_then`](Self::append_then) by a node of several sharing the store, holding the game's
    /// lease with fencing number `fence`: refused with [`StoreError::Fenced`], in the same transaction
    /// as the write, once another node has taken the lease over. A store that one node alone uses has
    /// no leases, and the default is `append_then`.
    fn append_fenced_then(&self, game: GameId, action: Action, fence: u64, done: Done) {
        let _ = fence;
        self.append_then(game, action, done);
    }

    /// The sequence number of the action `seat` submitted with idempotency key `key`, if any.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn keyed_action(&self, game: GameId, seat: u32, key: &str) -> Result<Option<u64>, StoreError>;

    /// Stores a snapshot of a game at or before its current sequence, replacing one at the same
    /// sequence. Older snapshots are kept.
    ///
    /// # Errors
    /// [`StoreError::SnapshotAhead`], [`StoreError::NoSuchGame`], or a storage failure.
    fn put_snapshot(&self, game: GameId, snapshot: Snapshot) -> Result<(), StoreError>;

    /// Marks a game finished: it accepts no more actions and is not recovered. Finishing a finished
    /// game does nothing.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn finish(&self, game: GameId) -> Result<(), StoreError>;

    /// Replaces which seats the server's bots play (a seat abandoned or resigned is handed to one).
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn set_bots(
        &self,
        game: GameId,
        bots: std::collections::BTreeMap<u32, String>,
    ) -> Result<(), StoreError>;

    /// A game's record.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn game(&self, game: GameId) -> Result<GameRecord, StoreError>;

    /// A game's actions with a sequence number above `after`, in order (`after = 0`: all of them).
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn actions_after(&self, game: GameId, after: u64) -> Result<Vec<Action>, StoreError>;

    /// The games not finished, in id order: those a restarting server brings back.
    ///
    /// # Errors
    /// A storage failure.
    fn unfinished_games(&self) -> Result<Vec<GameId>, StoreError>;

    /// A game's record, its latest snapshot and the actions after it, read at one point in time.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn recover(&self, game: GameId) -> Result<Recovery, StoreError>;

    /// What history after action `since` needs, read at one point in time: the latest snapshot at or
    /// before `since` and the actions after it up to action `until` (inclusive). With snapshots every
    /// `k` actions this holds at most `k - 1 + (until - since)` actions, however long the log.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`] or a storage failure.
    fn passage(&self, game: GameId, since: u64, until: u64) -> Result<Passage, StoreError>;

    /// Finished games that finished before `before_unix_ms`, oldest first, at most `limit`: those a
    /// retention policy deletes. A game finished by a version that did not record when counts as
    /// finished when the store was first opened by one that does.
    ///
    /// # Errors
    /// A storage failure.
    fn finished_before(&self, before_unix_ms: u64, limit: usize)
    -> Result<Vec<GameId>, StoreError>;

    /// Deletes a finished game whole: its record, seats, actions and snapshots.
    ///
    /// # Errors
    /// [`StoreError::NoSuchGame`], [`StoreError::NotFinished`] or a storage failure.
    fn forget(&self, game: GameId) -> Result<(), StoreError>;
}

/// Now, in ms since the Unix epoch (0 for a clock before it).
pub(crate) fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

//! Save files: a game as versioned JSON, read through one set of checks, updated under a lock, written
//! atomically.
//!
//! A save records the ruleset (id and version), players, seed, configuration, the action log (each entry
//! with the state hash right after it), a snapshot of the state and its hash.
//!
//! Every command reads a save through the same checks ([`load`], [`update`]): the file is a regular file
//! no larger than [`Limits::max_file_bytes`], the format version is known, the configuration is a JSON
//! object (or `null`) of at most [`MAX_CONFIG_BYTES`], checked on its text before it is built, the
//! ruleset is present in that version, the snapshot restores to the saved hash, the last log entry's hash
//! is that hash (or, with an empty log, a new game from players, seed and configuration has it), and every
//! logged player is in the game. These checks do not replay the log, so reading a save costs the same whether it holds ten actions
//! or ten thousand (apart from reading the text). [`load_verified`] (the `replay` command) adds the full
//! check: replaying the log from players, seed and configuration reproduces every logged hash. Anything
//! else is a [`SaveError`] naming the file or field and what was expected and found, except a plugin that
//! fails while a save is checked: that is the ruleset's failure ([`SaveError::Plugin`]), never the file's.
//!
//! No save is written larger than [`Limits::max_file_bytes`], the size every reader accepts
//! ([`SaveError::TooLargeToWrite`]: nothing is written). The configuration is written on one line.
//!
//! [`update`] is the read-modify-write of a save (`coffer act`): it takes an exclusive advisory lock
//! (`flock`) on the file for the whole update, so two writers never lose an action; a writer that finds
//! the lock held waits up to [`Limits::lock_wait`] and then gives up with [`SaveError::Locked`]. Writes go
//! through a symlink to its target, keep the target's permissions, and refuse a read-only save or one with
//! several hard links. Temporary files are named `.coffer-save-<pid>-<random>.tmp`; a write removes those
//! of writers that are gone (see [`sweep_stale_temporaries`]).
//!
//! ```json
//! {
//!   "format": 1,
//!   "ruleset": { "id": "charges", "version": "0.1.0" },
//!   "players": 2, "seed": 7, "config": null,
//!   "log": [ { "player": 0, "action": { "type": "pass" }, "hash": "00c0ffee00c0ffee" } ],
//!   "snapshot": { "...": "the ruleset's state as JSON" },
//!   "state_hash": "00c0ffee00c0ffee"
//! }
//! ```

use crate::host::{HostedGame, LoggedAction};
use crate::registry::Registry;
use coffer_core::{ActionError, DynGame, DynRuleset, Format, Owner, Setup, SetupError, StateHash};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fs::{File, Metadata};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// The save format this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// The environment variable that sets [`Limits::max_file_bytes`].
pub const MAX_FILE_BYTES_ENV: &str = "COFFER_MAX_FILE_BYTES";

/// The environment variable that sets [`Limits::lock_wait`], in milliseconds.
pub const LOCK_WAIT_ENV: &str = "COFFER_LOCK_WAIT_MS";

/// How long a temporary file of a writer that is gone is kept before a later write removes it.
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(60);

/// The prefix of every temporary file a save write creates (followed by the writer's pid, `-`, random
/// characters and `.tmp`).
pub const TEMPORARY_PREFIX: &str = ".coffer-save-";

/// The most bytes a game's configuration may take as JSON text: 1 MiB. A save holds its configuration
/// as the one-line JSON text of [`check_config`]; reading a save refuses a longer one before building it,
/// so a configuration never costs more than a small multiple of this.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// Why a configuration is not one a game may start from or a save may hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration's text is longer than [`MAX_CONFIG_BYTES`].
    #[error(
        "the configuration is {size} bytes of JSON, more than the limit of {MAX_CONFIG_BYTES} bytes (1 MiB)"
    )]
    TooLarge {
        /// Its size in bytes (as written on one line, or as found in a file).
        size: usize,
    },
    /// The configuration is JSON, but not an object of options (nor `null`, for the defaults).
    #[error(
        "the configuration must be a JSON object of options, such as {{\"max_rounds\": 5}}, or null for the defaults; found {found}"
    )]
    NotAnObject {
        /// What was found instead, in words: `a list`, `a number`, `a string`, `true or false`.
        found: &'static str,
    },
}

/// What kind of JSON value `text` starts with, in words, when it is not an object or `null`.
fn not_an_object(text: &str) -> Option<&'static str> {
    match text.trim_start().as_bytes().first() {
        Some(b'{' | b'n') | None => None,
        Some(b'[') => Some("a list"),
        Some(b'"') => Some("a string"),
        Some(b't' | b'f') => Some("true or false"),
        Some(_) => Some("a number"),
    }
}

/// Checks a configuration given as JSON text before it is parsed: no longer than [`MAX_CONFIG_BYTES`],
/// and an object or `null` (judged from its first character, so a huge list is refused unread).
///
/// # Errors
/// [`ConfigError::TooLarge`] or [`ConfigError::NotAnObject`].
pub fn check_config_text(text: &str) -> Result<(), ConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge { size: text.len() });
    }
    match not_an_object(text) {
        Some(found) => Err(ConfigError::NotAnObject { found }),
        None => Ok(()),
    }
}

/// Checks a parsed configuration: an object or `null` whose one-line JSON text (as a save holds it) is no
/// longer than [`MAX_CONFIG_BYTES`]. Returns that text.
///
/// # Errors
/// [`ConfigError::TooLarge`] or [`ConfigError::NotAnObject`].
pub fn check_config(config: &serde_json::Value) -> Result<String, ConfigError> {
    let text = serde_json::to_string(config).unwrap_or_default();
    check_config_text(&text)?;
    Ok(text)
}

/// Reads a save's `config` field: its text is checked ([`check_config_text`]) before a value is built.
fn config_field<'de, D: serde::Deserializer<'de>>(d: D) -> Result<serde_json::Value, D::Error> {
    let raw = <&'de RawValue>::deserialize(d)?;
    check_config_text(raw.get()).map_err(serde::de::Error::custom)?;
    serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)
}

/// Bounds on what reading a file may cost and how long a writer waits for a save's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    max_file_bytes: u64,
    lock_wait: Duration,
}

impl Limits {
    /// The default size limit of every file read: 64 MiB.
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;
    /// The largest size limit that can be set: 1 TiB.
    pub const MAX_MAX_FILE_BYTES: u64 = 1 << 40;
    /// The default time a writer waits for a save's lock: 10 seconds.
    pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);
    /// The longest time a writer can be told to wait for a lock: one hour.
    pub const MAX_LOCK_WAIT: Duration = Duration::from_secs(3600);

    /// Limits with the given values.
    ///
    /// # Errors
    /// [`SaveError::BadLimit`] when `max_file_bytes` is not from 1 to [`MAX_MAX_FILE_BYTES`](Self::MAX_MAX_FILE_BYTES)
    /// or `lock_wait` is longer than [`MAX_LOCK_WAIT`](Self::MAX_LOCK_WAIT).
    pub fn new(max_file_bytes: u64, lock_wait: Duration) -> Result<Limits, SaveError> {
        if !(1..=Self::MAX_MAX_FILE_BYTES).contains(&max_file_bytes) {
            return Err(SaveError::BadLimit {
                name: "the file size limit",
                value: max_file_bytes.to_string(),
                allowed: format!("a number of bytes from 1 to {}", Self::MAX_MAX_FILE_BYTES),
            });
        }
        if lock_wait > Self::MAX_LOCK_WAIT {
            return Err(SaveError::BadLimit {
                name: "the lock wait",
                value: format!("{} ms", lock_wait.as_millis()),
                allowed: format!("0 to {} ms", Self::MAX_LOCK_WAIT.as_millis()),
            });
        }
        Ok(Limits {
            max_file_bytes,
            lock_wait,
        })
    }

    /// The limits set by [`MAX_FILE_BYTES_ENV`] and [`LOCK_WAIT_ENV`], each defaulting when unset or empty.
    ///
    /// # Errors
    /// [`SaveError::BadLimit`] naming the variable, the value found and the allowed range.
    pub fn from_env() -> Result<Limits, SaveError> {
        let read = |name: &'static str, max: u64, unit: &str| -> Result<Option<u64>, SaveError> {
            let Some(value) = std::env::var_os(name) else {
                return Ok(None);
            };
            let text = value.to_string_lossy();
            if text.trim().is_empty() {
                return Ok(None);
            }
            match text.trim().parse::<u64>() {
                Ok(n) if n <= max => Ok(Some(n)),
                _ => Err(SaveError::BadLimit {
                    name,
                    value: text.into_owned(),
                    allowed: format!("a number of {unit} from 0 to {max}"),
                }),
            }
        };
        let bytes = read(MAX_FILE_BYTES_ENV, Self::MAX_MAX_FILE_BYTES, "bytes")?
            .unwrap_or(Self::DEFAULT_MAX_FILE_BYTES);
        let wait = read(
            LOCK_WAIT_ENV,
            Self::MAX_LOCK_WAIT.as_millis() as u64,
            "milliseconds",
        )?
        .map_or(Self::DEFAULT_LOCK_WAIT, Duration::from_millis);
        if bytes == 0 {
            return Err(SaveError::BadLimit {
                name: MAX_FILE_BYTES_ENV,
                value: "0".to_owned(),
                allowed: format!("a number of bytes from 1 to {}", Self::MAX_MAX_FILE_BYTES),
            });
        }
        Limits::new(bytes, wait)
    }

    /// The largest file, in bytes, that is read.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// How long a writer waits for a save's lock before giving up.
    pub fn lock_wait(&self) -> Duration {
        self.lock_wait
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES,
            lock_wait: Self::DEFAULT_LOCK_WAIT,
        }
    }
}

/// Why this process may not write a save ([`SaveError::ReadOnly`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadOnlyReason {
    /// Its mode gives its owner no write permission (or nobody any, which even root respects here).
    Mode,
    /// It belongs to another user, and its mode does not let this one write it.
    Owner {
        /// The file's owner (user id).
        owner: u32,
        /// This process's effective user id.
        you: u32,
    },
    /// Its mode and owner allow the write, yet the system refuses it (a read-only file system, an access
    /// control list).
    System,
}

impl ReadOnlyReason {
    /// The reason of `meta`'s file refusing this process's write.
    fn of(meta: &Metadata) -> ReadOnlyReason {
        let mode = meta.permissions().mode();
        let you = rustix::process::geteuid().as_raw();
        if mode & 0o222 == 0 || (meta.uid() == you && mode & 0o200 == 0) {
            ReadOnlyReason::Mode
        } else if meta.uid() != you {
            ReadOnlyReason::Owner {
                owner: meta.uid(),
                you,
            }
        } else {
            ReadOnlyReason::System
        }
    }

    /// What is wrong, after the file's name.
    fn what(self, mode: u32) -> String {
        match self {
            ReadOnlyReason::Mode => format!("is read-only (mode {mode:04o})"),
            ReadOnlyReason::Owner { owner, you } => format!(
                "belongs to user {owner}, not to you (user {you}), and its mode {mode:04o} does not let you write it"
            ),
            ReadOnlyReason::System => format!(
                "cannot be written although its mode {mode:04o} and owner allow it (a read-only file system, or an access control list?)"
            ),
        }
    }

    /// What to do about it.
    fn remedy(self) -> &'static str {
        match self {
            ReadOnlyReason::Mode => "make it writable (chmod u+w) to play on",
            ReadOnlyReason::Owner { .. } => {
                "play on as its owner, or copy it (cp) to a file of your own and play on that"
            }
            ReadOnlyReason::System => "copy it (cp) to a writable place and play on that",
        }
    }
}

/// Which ruleset a save belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesetRef {
    /// The ruleset id.
    pub id: String,
    /// The exact version that wrote the save.
    pub version: String,
}

/// A save file's contents. Build one with [`SaveFile::from_game`], write it with [`SaveFile::write`],
/// read one with [`SaveFile::read`] and check it with [`SaveFile::restore`] (or do both with [`load`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SaveFile {
    /// Save format version ([`FORMAT_VERSION`]).
    pub format: u32,
    /// The ruleset.
    pub ruleset: RulesetRef,
    /// Number of players.
    pub players: u16,
    /// The game's seed.
    pub seed: u64,
    /// The ruleset configuration: an object of options, or `null` for the defaults; at most
    /// [`MAX_CONFIG_BYTES`] of JSON text.
    #[serde(deserialize_with = "config_field")]
    pub config: serde_json::Value,
    /// Every applied action, in order.
    pub log: Vec<LoggedAction>,
    /// The state exactly as the ruleset wrote it in JSON (kept verbatim: a state may hold integers wider
    /// than a JSON reader's doubles, such as a 128-bit RNG state).
    pub snapshot: Box<RawValue>,
    /// The state hash of `snapshot`.
    #[serde(with = "hex_hash")]
    pub state_hash: StateHash,
}

/// What is wrong with a save file (or another file read through [`read_capped`]), or why it could not be
/// written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The file could not be read or written.
    #[error("cannot {action} {what} {path}")]
    Io {
        /// `open`, `read`, `lock` or `write`.
        action: &'static str,
        /// `save file`, or `file` for other readers.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The path names something other than a regular file (a FIFO, a device, a directory...).
    #[error("cannot read {what} {path}: it is {kind}, not a regular file")]
    NotRegular {
        /// `save file` or `file`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What it is, e.g. `a FIFO (named pipe)`.
        kind: &'static str,
    },
    /// The file is larger than the limit.
    #[error(
        "cannot read {what} {path}: it is {size} bytes, more than the limit of {limit} bytes (set {MAX_FILE_BYTES_ENV} to raise it)"
    )]
    TooLarge {
        /// `save file` or `file`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Its size (at least this many bytes).
        size: u64,
        /// The limit.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("{what} {path} is not UTF-8 text: invalid byte at offset {offset}")]
    NotText {
        /// `save file` or `file`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Where the first invalid byte is.
        offset: usize,
    },
    /// A limit (from the environment or given in code) is out of range.
    #[error("{name} is {value}: expected {allowed}")]
    BadLimit {
        /// The environment variable or the limit's name.
        name: &'static str,
        /// The value found.
        value: String,
        /// The allowed range.
        allowed: String,
    },
    /// Another process holds the save's lock and did not release it in time.
    #[error(
        "save file {path} is locked by another coffer command (an `act` in progress?); gave up after waiting {waited_ms} ms (set {LOCK_WAIT_ENV} to wait longer)"
    )]
    Locked {
        /// The save.
        path: PathBuf,
        /// How long this command waited.
        waited_ms: u128,
    },
    /// This process may not write the save: its mode, its owner, or the system says no.
    #[error("save file {path} {}; it is left as it is: {}", reason.what(*mode), reason.remedy())]
    ReadOnly {
        /// The save (the symlink's target when the path is a link).
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
        /// Which of its mode, its owner or the system keeps this process from writing it.
        reason: ReadOnlyReason,
    },
    /// The game's plugin failed while the save was checked: the plugin's fault, not the file's.
    #[error(
        "the ruleset '{ruleset}' failed while the save was checked (a fault of the plugin, not of the save file): {message}"
    )]
    Plugin {
        /// The ruleset key, `id@version`.
        ruleset: String,
        /// What failed, naming the library and the call.
        message: String,
    },
    /// The game, written as a save, would be larger than the size limit every command reads, so it is not
    /// written.
    #[error(
        "the game would take {size} bytes as save file {path}, more than the limit of {limit} bytes that coffer reads back (set {MAX_FILE_BYTES_ENV} to raise it); nothing was written"
    )]
    TooLargeToWrite {
        /// The save that was to be written.
        path: PathBuf,
        /// The size of the save's text.
        size: u64,
        /// The limit ([`Limits::max_file_bytes`]).
        limit: u64,
    },
    /// The game's configuration is not one a save holds (see [`check_config`]); nothing was written.
    #[error("the game cannot be saved")]
    Config(#[source] ConfigError),
    /// The save has more than one hard link: replacing it would leave the other names on the old game.
    #[error(
        "save file {path} has {links} hard links; rewriting it would split them into different games: give it a file of its own (cp) and play on that"
    )]
    HardLinked {
        /// The save.
        path: PathBuf,
        /// Its link count.
        links: u64,
    },
    /// The save changed while this command held its lock (a program wrote it without locking).
    #[error(
        "save file {path} changed while this command was updating it (another program wrote it without taking its lock); nothing was written: run the command again"
    )]
    Changed {
        /// The save.
        path: PathBuf,
    },
    /// A new save would replace an existing file.
    #[error("save file {path} already exists; pass --force to replace it")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// The file is not complete JSON (often: it was cut short).
    #[error("save file is {}: {message} at line {line} column {column}", if *.truncated { "truncated" } else { "not valid JSON" })]
    Json {
        /// Whether the text ended early.
        truncated: bool,
        /// The parser's message.
        message: String,
        /// Where (1-based).
        line: usize,
        /// Where (1-based).
        column: usize,
    },
    /// A field is missing, unknown or of the wrong type.
    #[error("save file field '{field}': {problem}")]
    Field {
        /// Path of the field, e.g. `log[3].player`.
        field: String,
        /// What was expected and what was found.
        problem: String,
    },
    /// Written by a newer Coffer.
    #[error(
        "save file field 'format': expected format version {supported} or older, found {found} (written by a newer coffer)"
    )]
    FutureFormat {
        /// The file's version.
        found: u64,
        /// The newest this build reads.
        supported: u32,
    },
    /// The ruleset is not loaded at all.
    #[error("save file field 'ruleset': ruleset '{id}@{version}' is not loaded; loaded: {}", list(.loaded))]
    UnknownRuleset {
        /// Saved id.
        id: String,
        /// Saved version.
        version: String,
        /// What is loaded.
        loaded: Vec<String>,
    },
    /// The ruleset is loaded, but not in the saved version.
    #[error("save file field 'ruleset.version': expected '{id}@{version}', found only {}", .available.join(", "))]
    RulesetVersion {
        /// Saved id.
        id: String,
        /// Saved version.
        version: String,
        /// The versions loaded.
        available: Vec<String>,
    },
    /// The snapshot is not a valid state of the ruleset.
    #[error("save file field 'snapshot' does not restore")]
    Snapshot(#[source] SetupError),
    /// The snapshot restored, but disagrees with another field.
    #[error("save file field '{field}': expected {expected}, found {found}")]
    Mismatch {
        /// The field found inconsistent.
        field: &'static str,
        /// What the rest of the file implies.
        expected: String,
        /// What the field says.
        found: String,
    },
    /// The game could not be started again from players, seed and config.
    #[error("save file fields 'players', 'seed', 'config' do not start a game")]
    Setup(#[source] SetupError),
    /// Replaying the log, an action was refused.
    #[error("replay diverges at log[{index}]: player {player} cannot play {action}")]
    ReplayRefused {
        /// Position in the log.
        index: usize,
        /// Who acted.
        player: u16,
        /// The action.
        action: String,
        /// Why it was refused.
        #[source]
        source: ActionError,
    },
    /// A state hash differs from the logged one: replaying the log, or between the last log entry and
    /// the snapshot.
    #[error(
        "replay diverges at {field}: expected state hash {expected} (saved), found {found} ({found_in})"
    )]
    ReplayHash {
        /// `log[i].hash` or `state_hash`.
        field: String,
        /// The saved hash.
        expected: StateHash,
        /// The hash found.
        found: StateHash,
        /// Where `found` comes from: `replayed`, or `the snapshot's` for the last log entry.
        found_in: &'static str,
    },
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// The registered ruleset `saved` names, in exactly the saved version.
fn ruleset_of<'r>(
    saved: &RulesetRef,
    registry: &'r Registry,
) -> Result<&'r Arc<dyn DynRuleset>, SaveError> {
    let RulesetRef { id, version } = saved;
    if let Some(entry) = registry.get_exact(id, version) {
        return Ok(&entry.ruleset);
    }
    let available: Vec<String> = registry
        .iter()
        .filter(|e| &e.ruleset.description().id == id)
        .map(|e| e.key())
        .collect();
    if available.is_empty() {
        Err(SaveError::UnknownRuleset {
            id: id.clone(),
            version: version.clone(),
            loaded: registry.keys(),
        })
    } else {
        Err(SaveError::RulesetVersion {
            id: id.clone(),
            version: version.clone(),
            available,
        })
    }
}

/// [`SaveError::Plugin`] when `game`'s plugin failed in a call without an error of its own (its answer,
/// such as a hash of 0, is no answer and says nothing about the save).
fn plugin_check(ruleset: &dyn DynRuleset, game: &dyn DynGame) -> Result<(), SaveError> {
    match game.failure() {
        None => Ok(()),
        Some(message) => Err(SaveError::Plugin {
            ruleset: ruleset.description().key(),
            message,
        }),
    }
}

/// A setup error as the save check reports it: a plugin that panicked is the plugin's failure, anything
/// else is the save's (`wrap`).
fn setup_error(
    ruleset: &dyn DynRuleset,
    error: SetupError,
    wrap: fn(SetupError) -> SaveError,
) -> SaveError {
    match error {
        SetupError::Panicked(_) | SetupError::Poisoned(_) => SaveError::Plugin {
            ruleset: ruleset.description().key(),
            message: error.to_string(),
        },
        other => wrap(other),
    }
}

/// A save's ruleset and its game restored from the snapshot.
type Restored = (Arc<dyn DynRuleset>, Box<dyn DynGame>);

/// The first field of a save, read without building the document: only `format` is kept.
#[derive(Deserialize)]
struct Header<'a> {
    #[serde(borrow)]
    format: Option<&'a RawValue>,
}

impl SaveFile {
    /// The save of a hosted game as it is now.
    ///
    /// # Errors
    /// [`SaveError::Snapshot`] when the ruleset cannot write its state as JSON.
    pub fn from_game(game: &HostedGame) -> Result<SaveFile, SaveError> {
        let description = game.ruleset().description();
        let bytes = game
            .game()
            .snapshot(Format::Json)
            .map_err(SaveError::Snapshot)?;
        let snapshot = serde_json::from_slice(&bytes).map_err(|e| {
            SaveError::Snapshot(SetupError::Snapshot(format!(
                "the ruleset wrote invalid JSON: {e}"
            )))
        })?;
        let setup = game.setup();
        Ok(SaveFile {
            format: FORMAT_VERSION,
            ruleset: RulesetRef {
                id: description.id.clone(),
                version: description.version.clone(),
            },
            players: setup.players,
            seed: setup.seed,
            config: setup.config.clone(),
            log: game.log().to_vec(),
            snapshot,
            state_hash: game.state_hash(),
        })
    }

    /// The save as JSON text: indented, the configuration and each log entry on one line, the snapshot as
    /// the ruleset wrote it.
    pub fn to_json(&self) -> String {
        write_json(&Parts {
            ruleset: &self.ruleset,
            players: self.players,
            seed: self.seed,
            config: &serde_json::to_string(&self.config).unwrap_or_default(),
            log: ("", &self.log),
            snapshot: &self.snapshot,
            state_hash: self.state_hash,
        })
    }

    /// Parses a save from JSON text, checking its shape and format version (not yet its consistency: see
    /// [`restore`](Self::restore)). A good file is read in one pass without building a JSON document; the
    /// snapshot's text is copied once, verbatim.
    ///
    /// # Errors
    /// [`SaveError::Json`], [`SaveError::FutureFormat`], [`SaveError::Field`].
    pub fn parse(text: &str) -> Result<SaveFile, SaveError> {
        // One pass for a good file; a file that does not read is read again for the precise error.
        if let Ok(file) = serde_json::from_str::<SaveFile>(text) {
            if (1..=FORMAT_VERSION).contains(&file.format) {
                return Ok(file);
            }
        }
        SaveFile::parse_error(text)
    }

    /// Why `text` is not a save this build reads: the syntax, then the format version, then the first
    /// field that does not read.
    fn parse_error(text: &str) -> Result<SaveFile, SaveError> {
        // The format version decides how to read the rest, so check it first. This pass also checks the
        // syntax of the whole text, so a damaged file is named as such before any field is.
        let header = match serde_json::from_str::<Header<'_>>(text) {
            Ok(header) => header,
            Err(e) if e.is_syntax() || e.is_eof() => {
                return Err(SaveError::Json {
                    truncated: e.is_eof(),
                    message: e
                        .to_string()
                        .split(" at line ")
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                    line: e.line(),
                    column: e.column(),
                });
            }
            Err(_) => Header { format: None },
        };
        let format = header.format.ok_or_else(|| SaveError::Field {
            field: "format".to_owned(),
            problem: "missing (is this a coffer save file?)".to_owned(),
        })?;
        match serde_json::from_str::<u64>(format.get()) {
            Ok(found) if found > u64::from(FORMAT_VERSION) => {
                return Err(SaveError::FutureFormat {
                    found,
                    supported: FORMAT_VERSION,
                });
            }
            Ok(found) if found >= 1 => {}
            _ => {
                return Err(SaveError::Field {
                    field: "format".to_owned(),
                    problem: format!(
                        "expected a format version from 1 to {FORMAT_VERSION}, found {}",
                        crate::render::cut(format.get(), 40)
                    ),
                });
            }
        }
        let mut reader = serde_json::Deserializer::from_str(text);
        serde_path_to_error::deserialize(&mut reader).map_err(|e| {
            let field = e.path().to_string();
            SaveError::Field {
                field: if field == "." {
                    "(top level)".to_owned()
                } else {
                    field
                },
                problem: e.into_inner().to_string(),
            }
        })
    }

    /// Reads and parses a save file (see [`parse`](Self::parse)), refusing what is not a regular file or
    /// is larger than [`Limits::from_env`] allows.
    ///
    /// # Errors
    /// Those of [`read_capped`] and of [`parse`](Self::parse).
    pub fn read(path: &Path) -> Result<SaveFile, SaveError> {
        SaveFile::read_with(path, &Limits::from_env()?)
    }

    /// [`read`](Self::read) with explicit limits.
    ///
    /// # Errors
    /// As [`read`](Self::read).
    pub fn read_with(path: &Path, limits: &Limits) -> Result<SaveFile, SaveError> {
        let bytes = read_file(path, SAVE_FILE, limits)?;
        SaveFile::parse(as_text(&bytes, path, SAVE_FILE)?)
    }

    /// Writes the save atomically (see [`save`]).
    ///
    /// # Errors
    /// As [`save`]; `path` is then unchanged.
    pub fn write(&self, path: &Path) -> Result<(), SaveError> {
        check_config(&self.config).map_err(SaveError::Config)?;
        write_replacing(path, self.to_json().as_bytes(), &Limits::from_env()?)
    }

    /// The registered ruleset this save names, in exactly the saved version.
    ///
    /// # Errors
    /// [`SaveError::UnknownRuleset`] or [`SaveError::RulesetVersion`].
    pub fn ruleset<'r>(
        &self,
        registry: &'r Registry,
    ) -> Result<&'r Arc<dyn DynRuleset>, SaveError> {
        ruleset_of(&self.ruleset, registry)
    }

    /// The setup the game started from.
    pub fn setup(&self) -> Setup {
        Setup {
            players: self.players,
            seed: self.seed,
            config: self.config.clone(),
        }
    }

    /// What the checks read of this save.
    fn view(&self) -> View<'_> {
        View {
            ruleset: self.ruleset.clone(),
            players: self.players,
            seed: self.seed,
            config: Cow::Borrowed(&self.config),
            snapshot: Cow::Borrowed(self.snapshot.get()),
            state_hash: self.state_hash,
            log: LogSummary {
                players: self.log.iter().map(|e| e.player).collect(),
                last_hash: self.log.last().map(|e| e.hash),
            },
        }
    }

    /// All the checks every reader applies (see [`restore`](Self::restore)).
    fn checked(&self, registry: &Registry) -> Result<Restored, SaveError> {
        self.view().checked(registry)
    }

    /// Checks the save as every command reads it and returns the game, without replaying the log (its
    /// cost does not grow with the log): see the [module docs](self). [`replay`](Self::replay) checks the
    /// log too.
    ///
    /// # Errors
    /// The first inconsistency found, as a [`SaveError`].
    pub fn restore(&self, registry: &Registry) -> Result<HostedGame, SaveError> {
        let (ruleset, game) = self.checked(registry)?;
        Ok(HostedGame::from_parts(
            ruleset,
            self.setup(),
            self.log.clone(),
            game,
        ))
    }

    /// [`restore`](Self::restore), keeping the log without copying it.
    fn into_game(self, registry: &Registry) -> Result<HostedGame, SaveError> {
        let (ruleset, game) = self.checked(registry)?;
        // The configuration moves into the game: one copy of it at a time.
        let setup = Setup {
            players: self.players,
            seed: self.seed,
            config: self.config,
        };
        Ok(HostedGame::from_parts(ruleset, setup, self.log, game))
    }

    /// The full check: everything [`restore`](Self::restore) checks, then the log re-applied from
    /// scratch (players, seed, config) with the hash checked after every action and at the end; returns
    /// the replayed game. Whatever [`restore`](Self::restore) refuses, this refuses too.
    ///
    /// # Errors
    /// Those of [`restore`](Self::restore); [`SaveError::ReplayRefused`] or [`SaveError::ReplayHash`] at
    /// the first divergence, or [`SaveError::Setup`] when the game does not start.
    pub fn replay(&self, registry: &Registry) -> Result<HostedGame, SaveError> {
        // The replay below checks the last log entry's hash (and an empty log's new game) too, naming
        // the first divergence rather than the last.
        self.view().checked_snapshot(registry)?;
        let ruleset = self.ruleset(registry)?;
        let setup = self.setup();
        let mut game = ruleset
            .new_game(&setup)
            .map_err(|e| setup_error(&**ruleset, e, SaveError::Setup))?;
        for (index, entry) in self.log.iter().enumerate() {
            let action = entry.action.to_string();
            game.apply_json(Owner(entry.player), &action)
                .map_err(|source| match source {
                    ActionError::Panicked(_) | ActionError::Poisoned(_) => SaveError::Plugin {
                        ruleset: ruleset.description().key(),
                        message: source.to_string(),
                    },
                    source => SaveError::ReplayRefused {
                        index,
                        player: entry.player,
                        action: crate::render::cut(&action, crate::render::ECHO_LIMIT),
                        source,
                    },
                })?;
            let found = game.state_hash();
            plugin_check(&**ruleset, &*game)?;
            if found != entry.hash {
                return Err(SaveError::ReplayHash {
                    field: format!("log[{index}].hash"),
                    expected: entry.hash,
                    found,
                    found_in: "replayed",
                });
            }
        }
        let found = game.state_hash();
        if found != self.state_hash {
            return Err(SaveError::ReplayHash {
                field: "state_hash".to_owned(),
                expected: self.state_hash,
                found,
                found_in: "replayed",
            });
        }
        Ok(HostedGame::from_parts(
            Arc::clone(ruleset),
            setup,
            self.log.clone(),
            game,
        ))
    }
}

/// Reads a save file with the checks every command applies ([`SaveFile::read`] then
/// [`SaveFile::restore`]): the log is not replayed, so this costs the same for any length of log.
///
/// # Errors
/// Any [`SaveError`]; a file that fails a check is never accepted.
pub fn load(path: &Path, registry: &Registry) -> Result<HostedGame, SaveError> {
    load_with(path, registry, &Limits::from_env()?)
}

/// [`load`] with explicit limits.
///
/// # Errors
/// As [`load`].
pub fn load_with(
    path: &Path,
    registry: &Registry,
    limits: &Limits,
) -> Result<HostedGame, SaveError> {
    SaveFile::read_with(path, limits)?.into_game(registry)
}

/// Reads a save file and checks all of it, replaying the log ([`SaveFile::read`] then
/// [`SaveFile::replay`]): what `coffer replay` does. Refuses everything [`load`] refuses.
///
/// # Errors
/// Any [`SaveError`].
pub fn load_verified(path: &Path, registry: &Registry) -> Result<HostedGame, SaveError> {
    SaveFile::read(path)?.replay(registry)
}

/// Saves a hosted game to `path` atomically, replacing the file if there is one (under its lock, through
/// a symlink to its target, keeping its permissions; see [`update`] for what is refused). A new file is
/// created with mode 0600.
///
/// # Errors
/// [`SaveError::Snapshot`], [`SaveError::Io`], [`SaveError::Config`], [`SaveError::TooLargeToWrite`], and
/// for an existing file those of [`update`]'s locking.
pub fn save(game: &HostedGame, path: &Path) -> Result<(), SaveError> {
    write_replacing(path, game_json(game)?.as_bytes(), &Limits::from_env()?)
}

/// Checks that a new save may be written to `path`: it does not exist yet, or `force` is set. For the
/// commands that write a new game (`new`, `play -o`), before any work; [`create`] checks again when
/// writing.
///
/// # Errors
/// [`SaveError::Exists`].
pub fn check_new(path: &Path, force: bool) -> Result<(), SaveError> {
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(SaveError::Exists {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// Writes a new game's save to `path`. Without `force` the file must not exist, and this is checked
/// atomically with the write (a file created meanwhile is not replaced); with `force` it is [`save`].
///
/// # Errors
/// [`SaveError::Exists`], and those of [`save`].
pub fn create(game: &HostedGame, path: &Path, force: bool) -> Result<(), SaveError> {
    if force {
        return save(game, path);
    }
    check_new(path, false)?;
    let bytes = game_json(game)?;
    check_size(path, bytes.as_bytes(), &Limits::from_env()?)?;
    let io = |action, source| SaveError::Io {
        action,
        what: SAVE_FILE,
        path: path.to_owned(),
        source,
    };
    let dir = parent_of(path);
    let tmp = write_temporary(dir, bytes.as_bytes(), None).map_err(|e| io("write", e))?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {}
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(SaveError::Exists {
                path: path.to_owned(),
            });
        }
        Err(e) => return Err(io("write", e.error)),
    }
    sync_dir(dir).map_err(|e| io("write", e))?;
    sweep_stale_temporaries(dir);
    Ok(())
}

/// Applies `change` to the game saved at `path` and writes the result back, as one update that no other
/// [`update`] interleaves with: the file is locked (`flock`, exclusive) from before it is read until
/// after the new file replaces it.
///
/// `change` gets the game as [`load`] reads it (the same checks), except for its log: the saved actions
/// are not read into memory, so [`HostedGame::log`] starts empty and holds only the actions `change`
/// applies, which are appended to the file's log. That keeps an update's cost from growing with the game
/// (apart from copying the file's text). When `change` returns `Err`, nothing is written and the error is
/// handed back inside `Ok`; when it returns `Ok`, the new save replaces the old one atomically and the game
/// and `change`'s value are handed back (the lock is released on return).
///
/// Waiting: a held lock is retried for up to [`Limits::lock_wait`] (default 10 s, [`LOCK_WAIT_ENV`]),
/// then [`SaveError::Locked`]. The path may be a symlink: its target is rewritten (a temporary file in
/// the target's directory renamed over it) and the link stays a link; the target's permission bits are
/// kept. Refused: a read-only save ([`SaveError::ReadOnly`]), one with several hard links
/// ([`SaveError::HardLinked`]), and one that changed under the lock ([`SaveError::Changed`]), in each
/// case with the file left as it was.
///
/// # Errors
/// Those of [`load`], those named above, and [`SaveError::TooLargeToWrite`] when the updated save would
/// be larger than the read limit (nothing is written).
pub fn update<T, E>(
    path: &Path,
    registry: &Registry,
    change: impl FnOnce(&mut HostedGame) -> Result<T, E>,
) -> Result<Result<(HostedGame, T), E>, SaveError> {
    update_with(path, registry, &Limits::from_env()?, change)
}

/// [`update`] with explicit limits.
///
/// # Errors
/// As [`update`].
pub fn update_with<T, E>(
    path: &Path,
    registry: &Registry,
    limits: &Limits,
    change: impl FnOnce(&mut HostedGame) -> Result<T, E>,
) -> Result<Result<(HostedGame, T), E>, SaveError> {
    let locked = LockedSave::acquire(path, limits)?;
    let bytes = locked.read(limits)?;
    let ReadForUpdate { view, log_text } = ReadForUpdate::parse(as_text(&bytes, path, SAVE_FILE)?)?;
    let (ruleset, restored) = view.checked(registry)?;
    // The saved actions stay in the file as text: the game starts this update with an empty log.
    let mut game = HostedGame::from_parts(ruleset, view.into_setup(), Vec::new(), restored);
    let value = match change(&mut game) {
        Ok(value) => value,
        Err(e) => return Ok(Err(e)),
    };
    let text = game_json_after(&game, &log_text)?;
    drop(log_text);
    drop(bytes);
    check_size(path, text.as_bytes(), limits)?;
    locked.replace(text.as_bytes())?;
    Ok(Ok((game, value)))
}

/// Reads a whole file no larger than [`Limits::from_env`] allows, refusing anything but a regular file
/// (checked on the open descriptor, so what is checked is what is read). For every file the command
/// reads: scripts, configuration files, check scripts, lock files.
///
/// # Errors
/// [`SaveError::BadLimit`], [`SaveError::Io`], [`SaveError::NotRegular`], [`SaveError::TooLarge`].
pub fn read_capped(path: &Path) -> Result<Vec<u8>, SaveError> {
    read_file(path, "file", &Limits::from_env()?)
}

/// [`read_capped`] as UTF-8 text.
///
/// # Errors
/// Those of [`read_capped`] and [`SaveError::NotText`].
pub fn read_capped_text(path: &Path) -> Result<String, SaveError> {
    let bytes = read_capped(path)?;
    String::from_utf8(bytes).map_err(|e| SaveError::NotText {
        what: "file",
        path: path.to_owned(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// [`read_capped`] with explicit limits.
///
/// # Errors
/// As [`read_capped`].
pub fn read_capped_with(path: &Path, limits: &Limits) -> Result<Vec<u8>, SaveError> {
    read_file(path, "file", limits)
}

/// What a save file holds, borrowed from a [`SaveFile`] or a game.
struct Parts<'a> {
    ruleset: &'a RulesetRef,
    players: u16,
    seed: u64,
    /// The configuration's one-line JSON text ([`check_config`]).
    config: &'a str,
    /// Entries already written, as text without the brackets (empty if none), then entries to write.
    log: (&'a str, &'a [LoggedAction]),
    snapshot: &'a RawValue,
    state_hash: StateHash,
}

/// What every reader checks of a save, borrowed from a parsed [`SaveFile`] or from the text of a save being
/// updated (whose log is scanned, not kept).
struct View<'a> {
    ruleset: RulesetRef,
    players: u16,
    seed: u64,
    config: Cow<'a, serde_json::Value>,
    snapshot: Cow<'a, str>,
    state_hash: StateHash,
    log: LogSummary,
}

/// What the checks need of a log: who acted in each entry, and the last entry's hash.
#[derive(Default)]
struct LogSummary {
    players: Vec<u16>,
    last_hash: Option<StateHash>,
}

impl View<'_> {
    fn setup(&self) -> Setup {
        Setup {
            players: self.players,
            seed: self.seed,
            config: self.config.clone().into_owned(),
        }
    }

    /// The setup, keeping the configuration instead of copying it when it is owned.
    fn into_setup(self) -> Setup {
        Setup {
            players: self.players,
            seed: self.seed,
            config: self.config.into_owned(),
        }
    }

    /// The checks of the snapshot: it restores, its player count and hash match the saved ones, and every
    /// logged player is in the game.
    fn checked_snapshot(&self, registry: &Registry) -> Result<Restored, SaveError> {
        let ruleset = ruleset_of(&self.ruleset, registry)?;
        let restored = ruleset
            .restore(Format::Json, self.snapshot.as_bytes())
            .map_err(|e| setup_error(&**ruleset, e, SaveError::Snapshot))?;
        let (players, hash) = (restored.players(), restored.state_hash());
        // A plugin that failed answering is no judge of the file: its neutral answers (hash 0) are not
        // compared with the saved ones.
        plugin_check(&**ruleset, &*restored)?;
        if players != self.players {
            return Err(SaveError::Mismatch {
                field: "players",
                expected: format!("{players} (the snapshot's player count)"),
                found: self.players.to_string(),
            });
        }
        if hash != self.state_hash {
            return Err(SaveError::Mismatch {
                field: "state_hash",
                expected: format!("{hash} (the hash of the snapshot)"),
                found: self.state_hash.to_string(),
            });
        }
        if let Some((index, player)) = self
            .log
            .players
            .iter()
            .enumerate()
            .find(|(_, p)| **p >= self.players)
        {
            return Err(SaveError::Field {
                field: format!("log[{index}].player"),
                problem: format!(
                    "expected a player from 0 to {}, found {player}",
                    self.players.saturating_sub(1),
                ),
            });
        }
        Ok((Arc::clone(ruleset), restored))
    }

    /// The check that stands in for a replay: the last log entry's hash is the snapshot's `hash` (with
    /// an empty log, a new game from players, seed and configuration has it).
    fn check_log_end(&self, ruleset: &dyn DynRuleset, hash: StateHash) -> Result<(), SaveError> {
        match self.log.last_hash {
            Some(last) if last != hash => Err(SaveError::ReplayHash {
                field: format!("log[{}].hash", self.log.players.len() - 1),
                expected: last,
                found: hash,
                found_in: "the snapshot's",
            }),
            Some(_) => Ok(()),
            None => {
                let fresh = ruleset
                    .new_game(&self.setup())
                    .map_err(|e| setup_error(ruleset, e, SaveError::Setup))?;
                let found = fresh.state_hash();
                plugin_check(ruleset, &*fresh)?;
                if found == hash {
                    return Ok(());
                }
                Err(SaveError::Mismatch {
                    field: "state_hash",
                    expected: format!(
                        "{found} (the hash of a new game from 'players', 'seed' and 'config': the log is empty)"
                    ),
                    found: hash.to_string(),
                })
            }
        }
    }

    /// All the checks every reader applies.
    fn checked(&self, registry: &Registry) -> Result<Restored, SaveError> {
        let (ruleset, game) = self.checked_snapshot(registry)?;
        self.check_log_end(&*ruleset, game.state_hash())?;
        Ok((ruleset, game))
    }
}

/// A save being updated, read without materializing its log: the log is kept as the file's text (and
/// scanned once for the checks), the other fields are read as [`SaveFile`] reads them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSave<'a> {
    format: u32,
    ruleset: RulesetRef,
    players: u16,
    seed: u64,
    #[serde(deserialize_with = "config_field")]
    config: serde_json::Value,
    #[serde(borrow)]
    log: &'a RawValue,
    #[serde(borrow)]
    snapshot: &'a RawValue,
    #[serde(with = "hex_hash")]
    state_hash: StateHash,
}

/// One log entry as the scan reads it: nothing is copied unless the hash holds escapes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryRef<'a> {
    player: u16,
    #[allow(dead_code)]
    action: AnyValue,
    #[serde(borrow)]
    hash: Cow<'a, str>,
}

/// Any JSON value that a `serde_json::Value` reads (numbers in range included), checked without being
/// kept. Stricter than `Value` on nesting, which sends a deeply nested action to the full reader.
struct AnyValue;

/// Levels of arrays and objects an action may nest here (the full reader allows a few more).
const ACTION_DEPTH: u32 = 120;

impl<'de> Deserialize<'de> for AnyValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AnyValue, D::Error> {
        serde::de::DeserializeSeed::deserialize(AnySeed(0), d)
    }
}

/// [`AnyValue`] at a nesting depth.
#[derive(Clone, Copy)]
struct AnySeed(u32);

impl<'de> serde::de::DeserializeSeed<'de> for AnySeed {
    type Value = AnyValue;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<AnyValue, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for AnySeed {
    type Value = AnyValue;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_i64<E>(self, _: i64) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_u64<E>(self, _: u64) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_f64<E>(self, _: f64) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_str<E>(self, _: &str) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_unit<E>(self) -> Result<AnyValue, E> {
        Ok(AnyValue)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<AnyValue, A::Error> {
        let inner = self.nested()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(AnyValue)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<AnyValue, A::Error> {
        let inner = self.nested()?;
        while map
            .next_entry_seed(std::marker::PhantomData::<Cow<'de, str>>, inner)?
            .is_some()
        {}
        Ok(AnyValue)
    }
}

impl AnySeed {
    fn nested<E: serde::de::Error>(self) -> Result<AnySeed, E> {
        if self.0 >= ACTION_DEPTH {
            return Err(E::custom("an action nested too deeply"));
        }
        Ok(AnySeed(self.0 + 1))
    }
}

impl<'de> Deserialize<'de> for LogSummary {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<LogSummary, D::Error> {
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = LogSummary;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a list of logged actions")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<LogSummary, A::Error> {
                let mut summary = LogSummary::default();
                while let Some(entry) = seq.next_element::<EntryRef<'de>>()? {
                    summary.players.push(entry.player);
                    summary.last_hash =
                        Some(hex_hash::parse(&entry.hash).map_err(serde::de::Error::custom)?);
                }
                Ok(summary)
            }
        }
        d.deserialize_seq(Entries)
    }
}

/// A save's text read for an update: the log's entries as text, and what the checks need.
struct ReadForUpdate<'a> {
    view: View<'a>,
    /// The log's entries as they are in the file, without the brackets (empty for an empty log).
    log_text: Cow<'a, str>,
}

impl<'a> ReadForUpdate<'a> {
    /// Reads `text` without materializing the log; a text that does not read so is read as
    /// [`SaveFile::parse`] reads it, which names what is wrong (or, for the odd file only it reads, such
    /// as a hash written with escapes, is used instead).
    fn parse(text: &'a str) -> Result<ReadForUpdate<'a>, SaveError> {
        if let Ok(raw) = serde_json::from_str::<RawSave<'a>>(text) {
            if (1..=FORMAT_VERSION).contains(&raw.format) {
                if let Ok(log) = serde_json::from_str::<LogSummary>(raw.log.get()) {
                    let inner = raw.log.get().trim();
                    let inner = inner
                        .strip_prefix('[')
                        .and_then(|t| t.strip_suffix(']'))
                        .unwrap_or_default()
                        .trim();
                    return Ok(ReadForUpdate {
                        view: View {
                            ruleset: raw.ruleset,
                            players: raw.players,
                            seed: raw.seed,
                            config: Cow::Owned(raw.config),
                            snapshot: Cow::Borrowed(raw.snapshot.get()),
                            state_hash: raw.state_hash,
                            log,
                        },
                        log_text: Cow::Borrowed(inner),
                    });
                }
            }
        }
        let file = SaveFile::parse(text)?;
        let log_text = file
            .log
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",\n    ");
        let view = file.view();
        Ok(ReadForUpdate {
            view: View {
                config: Cow::Owned(view.config.into_owned()),
                snapshot: Cow::Owned(view.snapshot.into_owned()),
                ..view
            },
            log_text: Cow::Owned(log_text),
        })
    }
}

/// The save of `game` as text, without copying its log.
fn game_json(game: &HostedGame) -> Result<String, SaveError> {
    game_json_after(game, "")
}

/// The save of `game` whose log follows `earlier` (entries as text, without brackets).
fn game_json_after(game: &HostedGame, earlier: &str) -> Result<String, SaveError> {
    let description = game.ruleset().description();
    let bytes = game
        .game()
        .snapshot(Format::Json)
        .map_err(SaveError::Snapshot)?;
    let snapshot: &RawValue = serde_json::from_slice(&bytes).map_err(|e| {
        SaveError::Snapshot(SetupError::Snapshot(format!(
            "the ruleset wrote invalid JSON: {e}"
        )))
    })?;
    let setup = game.setup();
    let config = check_config(&setup.config).map_err(SaveError::Config)?;
    Ok(write_json(&Parts {
        ruleset: &RulesetRef {
            id: description.id.clone(),
            version: description.version.clone(),
        },
        players: setup.players,
        seed: setup.seed,
        config: &config,
        log: (earlier, game.log()),
        snapshot,
        state_hash: game.state_hash(),
    }))
}

/// Writes a save: the fields indented as `serde_json`'s pretty printer does, the configuration and each
/// log entry on one line (an indented list of numbers takes 3.5 times its bytes, and a log reads one action
/// per line).
fn write_json(parts: &Parts<'_>) -> String {
    use std::fmt::Write as _;
    // Every part is a JSON value, a string or an integer: writing them cannot fail.
    let (earlier, entries) = parts.log;
    let mut out = String::with_capacity(
        256 + parts.config.len() + parts.snapshot.get().len() + earlier.len() + entries.len() * 96,
    );
    let _ = write!(
        out,
        "{{\n  \"format\": {FORMAT_VERSION},\n  \"ruleset\": {},\n  \"players\": {},\n  \"seed\": {},\n  \"config\": {},\n  \"log\": [",
        pretty(parts.ruleset),
        parts.players,
        parts.seed,
        parts.config,
    );
    let mut first = true;
    if !earlier.is_empty() {
        out.push_str("\n    ");
        out.push_str(earlier);
        first = false;
    }
    for entry in entries {
        out.push_str(if first { "\n    " } else { ",\n    " });
        out.push_str(&serde_json::to_string(entry).unwrap_or_default());
        first = false;
    }
    if !first {
        out.push_str("\n  ");
    }
    let _ = write!(
        out,
        "],\n  \"snapshot\": {},\n  \"state_hash\": \"{}\"\n}}\n",
        parts.snapshot.get(),
        parts.state_hash
    );
    out
}

/// Pretty JSON of a nested value, its lines after the first indented to sit at the second level of a
/// save (a JSON string holds no raw line break, so every one is the printer's).
fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_default()
        .replace('\n', "\n  ")
}

const SAVE_FILE: &str = "save file";

fn as_text<'b>(bytes: &'b [u8], path: &Path, what: &'static str) -> Result<&'b str, SaveError> {
    std::str::from_utf8(bytes).map_err(|e| SaveError::NotText {
        what,
        path: path.to_owned(),
        offset: e.valid_up_to(),
    })
}

/// Opens `path` for reading without blocking (a FIFO with no writer would block an ordinary open) and
/// checks, on the descriptor, that it is a regular file.
fn open_regular(path: &Path, what: &'static str) -> Result<(File, Metadata), SaveError> {
    use rustix::fs::{Mode, OFlags};
    let io = |action, source| SaveError::Io {
        action,
        what,
        path: path.to_owned(),
        source,
    };
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io("open", e.into()))?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(|e| io("read", e))?;
    let kind = file_kind(&meta);
    if kind != "a regular file" {
        return Err(SaveError::NotRegular {
            what,
            path: path.to_owned(),
            kind,
        });
    }
    Ok((file, meta))
}

fn file_kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Reads an open regular file, at most `limit` bytes (a file that grows past it while read is refused).
fn read_open(
    file: &File,
    meta: &Metadata,
    path: &Path,
    what: &'static str,
    limits: &Limits,
) -> Result<Vec<u8>, SaveError> {
    let limit = limits.max_file_bytes;
    let too_large = |size| SaveError::TooLarge {
        what,
        path: path.to_owned(),
        size,
        limit,
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| SaveError::Io {
            action: "read",
            what,
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

fn read_file(path: &Path, what: &'static str, limits: &Limits) -> Result<Vec<u8>, SaveError> {
    let (file, meta) = open_regular(path, what)?;
    read_open(&file, &meta, path, what, limits)
}

/// A save opened, checked and locked: the file stays locked until this is dropped.
struct LockedSave {
    /// The path as given (for messages).
    path: PathBuf,
    /// The file the path resolves to (the symlink's target), which a write replaces.
    target: PathBuf,
    /// The locked descriptor.
    file: File,
    /// The file as it was when locked.
    meta: Metadata,
}

impl LockedSave {
    /// Opens `path`, checks it, and locks it, waiting up to the limit. When another writer replaced the
    /// file between the open and the lock, the new file is opened and locked instead.
    fn acquire(path: &Path, limits: &Limits) -> Result<LockedSave, SaveError> {
        let start = Instant::now();
        let io = |action, source| SaveError::Io {
            action,
            what: SAVE_FILE,
            path: path.to_owned(),
            source,
        };
        loop {
            let (file, _) = open_regular(path, SAVE_FILE)?;
            wait_for_lock(&file, path, start, limits)?;
            let target = std::fs::canonicalize(path).map_err(|e| io("open", e))?;
            let meta = file.metadata().map_err(|e| io("read", e))?;
            let now = match std::fs::metadata(&target) {
                Ok(now) => now,
                // Replaced and removed between the open and the lock: open it again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io("open", e)),
            };
            if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
                // Another writer renamed a new file over the path while this one waited: the locked file
                // is no longer the save. Lock the new one, within the same wait.
                let waited = start.elapsed();
                if waited >= limits.lock_wait {
                    return Err(SaveError::Locked {
                        path: path.to_owned(),
                        waited_ms: waited.as_millis(),
                    });
                }
                continue;
            }
            check_writable(&target, &meta)?;
            return Ok(LockedSave {
                path: path.to_owned(),
                target,
                file,
                meta,
            });
        }
    }

    fn read(&self, limits: &Limits) -> Result<Vec<u8>, SaveError> {
        read_open(&self.file, &self.meta, &self.path, SAVE_FILE, limits)
    }

    /// Replaces the locked file with `bytes`: a temporary file in the target's directory with the
    /// target's permissions, written and synced, renamed over the target after checking that nothing
    /// changed the file meanwhile; then the directory is synced.
    fn replace(self, bytes: &[u8]) -> Result<(), SaveError> {
        let io = |source| SaveError::Io {
            action: "write",
            what: SAVE_FILE,
            path: self.path.clone(),
            source,
        };
        let dir = parent_of(&self.target);
        let tmp = write_temporary(dir, bytes, Some(&self.meta)).map_err(io)?;
        let fd_now = self.file.metadata().map_err(io)?;
        let path_now = std::fs::metadata(&self.target).map_err(io)?;
        let same = |m: &Metadata| {
            (m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec())
                == (
                    self.meta.dev(),
                    self.meta.ino(),
                    self.meta.len(),
                    self.meta.mtime(),
                    self.meta.mtime_nsec(),
                )
        };
        if !same(&fd_now) || !same(&path_now) {
            return Err(SaveError::Changed { path: self.path });
        }
        tmp.persist(&self.target).map_err(|e| io(e.error))?;
        sync_dir(dir).map_err(io)?;
        sweep_stale_temporaries(dir);
        Ok(())
    }
}

/// Refuses a save that has no write permission bit (even for a user, such as root, whom the system would
/// let write), that this process may not write, or that has several hard links.
fn check_writable(target: &Path, meta: &Metadata) -> Result<(), SaveError> {
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o222 == 0 || rustix::fs::access(target, rustix::fs::Access::WRITE_OK).is_err() {
        return Err(SaveError::ReadOnly {
            path: target.to_owned(),
            mode,
            reason: ReadOnlyReason::of(meta),
        });
    }
    if meta.nlink() > 1 {
        return Err(SaveError::HardLinked {
            path: target.to_owned(),
            links: meta.nlink(),
        });
    }
    Ok(())
}

/// Takes the exclusive lock of `file`, retrying while another process holds it, until `limits.lock_wait`
/// after `start`.
fn wait_for_lock(
    file: &File,
    path: &Path,
    start: Instant,
    limits: &Limits,
) -> Result<(), SaveError> {
    use rustix::fs::FlockOperation;
    let mut pause = Duration::from_millis(1);
    loop {
        match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {}
            Err(e) => {
                return Err(SaveError::Io {
                    action: "lock",
                    what: SAVE_FILE,
                    path: path.to_owned(),
                    source: e.into(),
                });
            }
        }
        let waited = start.elapsed();
        if waited >= limits.lock_wait {
            return Err(SaveError::Locked {
                path: path.to_owned(),
                waited_ms: waited.as_millis(),
            });
        }
        std::thread::sleep(pause.min(limits.lock_wait - waited));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Replaces `path` with `bytes`: under the lock of the existing file ([`update`]'s checks), or as a new
/// file.
fn write_replacing(path: &Path, bytes: &[u8], limits: &Limits) -> Result<(), SaveError> {
    check_size(path, bytes, limits)?;
    if std::fs::symlink_metadata(path).is_ok() {
        return LockedSave::acquire(path, limits)?.replace(bytes);
    }
    let io = |source| SaveError::Io {
        action: "write",
        what: SAVE_FILE,
        path: path.to_owned(),
        source,
    };
    let dir = parent_of(path);
    let tmp = write_temporary(dir, bytes, None).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    sync_dir(dir).map_err(io)?;
    sweep_stale_temporaries(dir);
    Ok(())
}

/// Refuses to write a save larger than the readers' limit: every save written is one every command reads.
fn check_size(path: &Path, bytes: &[u8], limits: &Limits) -> Result<(), SaveError> {
    let size = bytes.len() as u64;
    if size > limits.max_file_bytes {
        return Err(SaveError::TooLargeToWrite {
            path: path.to_owned(),
            size,
            limit: limits.max_file_bytes,
        });
    }
    Ok(())
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A synced temporary file in `dir` holding `bytes`, named after this process (see
/// [`sweep_stale_temporaries`]), with the permissions (and, when allowed, owner) of `like`.
fn write_temporary(
    dir: &Path,
    bytes: &[u8],
    like: Option<&Metadata>,
) -> std::io::Result<tempfile::NamedTempFile> {
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{TEMPORARY_PREFIX}{}-", std::process::id()))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if let Some(meta) = like {
        // Keep the owner when this process may (root rewriting a user's save); otherwise the new file is
        // this user's, as any rewrite by them would be.
        let _ = rustix::fs::fchown(
            tmp.as_file(),
            Some(rustix::fs::Uid::from_raw(meta.uid())),
            Some(rustix::fs::Gid::from_raw(meta.gid())),
        );
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(
                meta.permissions().mode() & 0o777,
            ))?;
    }
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// Makes a rename in `dir` durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Removes the temporary files of save writers that are gone: `.coffer-save-<pid>-<random>.tmp` files in
/// `dir` whose pid is not a running process and that are older than [`STALE_TEMPORARY_AGE`], and
/// temporary files of older coffer versions (`.coffer-save-<random>.tmp`, no pid) older than an hour.
/// Best effort: a file that cannot be removed stays. Returns how many were removed. Every write of a save
/// calls it on the save's directory.
pub fn sweep_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(middle) = name
            .strip_prefix(TEMPORARY_PREFIX)
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        let pid = middle
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<i32>().ok());
        let max_age = match pid {
            Some(pid) if !process_is_gone(pid) => continue,
            Some(_) => STALE_TEMPORARY_AGE,
            None => Duration::from_secs(3600),
        };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .unwrap_or_default();
        if age >= max_age && std::fs::remove_file(entry.path()).is_ok() {
            tracing::debug!(file = %entry.path().display(), "removed a stale temporary save file");
            removed += 1;
        }
    }
    removed
}

/// Whether no process has id `pid` (a process of another user counts as running).
fn process_is_gone(pid: i32) -> bool {
    if pid == i32::try_from(std::process::id()).unwrap_or(0) {
        return false;
    }
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH),
        None => false,
    }
}

/// Serde for a [`StateHash`] as 16 hex digits (readable, and safe from JSON readers that round big numbers).
pub mod hex_hash {
    use coffer_core::StateHash;
    use serde::{Deserialize, Deserializer, Serializer};

    /// Writes the hash as 16 lowercase hex digits.
    ///
    /// # Errors
    /// Those of the serializer.
    pub fn serialize<S: Serializer>(hash: &StateHash, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(hash)
    }

    /// Reads 1 to 16 hex digits.
    ///
    /// # Errors
    /// Anything else, with the text found.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StateHash, D::Error> {
        let text = String::deserialize(d)?;
        parse(&text).map_err(serde::de::Error::custom)
    }

    /// Reads 1 to 16 hex digits; anything else is a message with the text found.
    pub(crate) fn parse(text: &str) -> Result<StateHash, String> {
        let refused = || {
            format!(
                "expected a state hash of 16 hex digits, found '{}'",
                crate::render::cut(text, 40)
            )
        };
        if text.is_empty() || text.len() > 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(refused());
        }
        text.parse().map_err(|_| refused())
    }
}

/// Entry points of the fuzz targets (`fuzz/` at the repository root). Not part of the API.
#[doc(hidden)]
pub mod fuzzing {
    use super::{ReadForUpdate, SaveFile};
    use crate::registry::Registry;

    /// Reads `text` the ways the commands do: as `load` (parse and checks), as `update` (the log read as
    /// text), and as `replay` (everything, then the log replayed). Returns whether `load` accepts it.
    ///
    /// # Panics
    /// When the readers disagree: `load` and `update` accept different saves, or refuse one with
    /// different messages, or `replay` accepts a save that `load` refuses.
    pub fn read_every_way(text: &str, registry: &Registry) -> bool {
        let loaded = SaveFile::parse(text)
            .and_then(|f| f.restore(registry))
            .map(|g| g.state_hash())
            .map_err(|e| e.to_string());
        let updated = ReadForUpdate::parse(text)
            .and_then(|r| r.view.checked(registry))
            .map(|(_, g)| g.state_hash())
            .map_err(|e| e.to_string());
        assert_eq!(
            loaded, updated,
            "load and update read this save differently"
        );
        let replayed = SaveFile::parse(text).and_then(|f| f.replay(registry));
        assert!(
            loaded.is_ok() || replayed.is_err(),
            "replay accepts a save that load refuses"
        );
        loaded.is_ok()
    }
}

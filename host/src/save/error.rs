//! Why a save could not be read, checked, restored or written ([`SaveError`]), and why one may not be
//! written at all ([`ReadOnlyReason`]).

use crate::save::config::ConfigError;
use crate::save::format::{LOCK_WAIT_ENV, MAX_FILE_BYTES_ENV};
use coffer_core::{ActionError, SetupError, StateHash};
use std::fs::Metadata;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::PathBuf;

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
    pub(crate) fn of(meta: &Metadata) -> ReadOnlyReason {
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
    pub(crate) fn what(self, mode: u32) -> String {
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
    pub(crate) fn remedy(self) -> &'static str {
        match self {
            ReadOnlyReason::Mode => "make it writable (chmod u+w) to play on",
            ReadOnlyReason::Owner { .. } => {
                "play on as its owner, or copy it (cp) to a file of your own and play on that"
            }
            ReadOnlyReason::System => "copy it (cp) to a writable place and play on that",
        }
    }
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

pub(crate) fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

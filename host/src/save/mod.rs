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
//!
//! # Where the code lives
//! [`limits`](Limits) and configuration checks ([`check_config`]) at the bottom; `error`: [`SaveError`];
//! `read` and `write`: files read within the limits and written under the lock; `view`: the save's JSON
//! read without trusting it and written; `file`: [`SaveFile`]; `games`: a hosted game loaded, saved,
//! created and updated.

pub(crate) mod checks;
pub(crate) mod config;
pub(crate) mod error;
pub(crate) mod file;
pub(crate) mod format;
#[doc(hidden)]
pub mod fuzzing;
pub(crate) mod games;
pub mod hex_hash;
pub(crate) mod limits;
pub(crate) mod read;
pub(crate) mod view;
pub(crate) mod write;

pub use checks::RulesetRef;
pub use config::{ConfigError, check_config, check_config_text};
pub use error::{ReadOnlyReason, SaveError};
pub use file::SaveFile;
pub use format::{
    FORMAT_VERSION, LOCK_WAIT_ENV, MAX_CONFIG_BYTES, MAX_FILE_BYTES_ENV, STALE_TEMPORARY_AGE,
    TEMPORARY_PREFIX,
};
pub use games::{
    check_new, create, load, load_verified, load_with, save, update, update_replaying, update_with,
};
pub use limits::Limits;
pub use read::{read_capped, read_capped_text, read_capped_with};
pub use write::sweep_stale_temporaries;

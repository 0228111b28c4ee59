//! Save files: a game as versioned JSON, written atomically and verified completely when read.
//!
//! A save records the ruleset (id and version), players, seed, configuration, the action log (each entry
//! with the state hash right after it), a snapshot of the state and its hash. [`load`] accepts a file only
//! when every part agrees: the format version is known, the ruleset is present in that version, the
//! snapshot restores to the saved hash, and replaying the log from players, seed and configuration
//! reproduces every logged hash and the final one. Anything else is a [`SaveError`] naming the field and
//! what was expected and found.
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
use coffer_core::{ActionError, DynRuleset, Format, Owner, Setup, SetupError, StateHash};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The save format this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

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
    /// The ruleset configuration (`null` for the defaults).
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

/// What is wrong with a save file, or why it could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SaveError {
    /// The file could not be read or written.
    #[error("cannot {action} save file {path}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
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
    /// Replaying the log, a state hash differs from the logged one.
    #[error(
        "replay diverges at {field}: expected state hash {expected} (saved), found {found} (replayed)"
    )]
    ReplayHash {
        /// `log[i].hash` or `state_hash`.
        field: String,
        /// The saved hash.
        expected: StateHash,
        /// The replayed hash.
        found: StateHash,
    },
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
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

    /// The save as pretty JSON text.
    pub fn to_json(&self) -> String {
        // A SaveFile holds only JSON values, strings and integers: writing it cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Parses a save from JSON text, checking its shape and format version (not yet its consistency: see
    /// [`restore`](Self::restore)).
    ///
    /// # Errors
    /// [`SaveError::Json`], [`SaveError::FutureFormat`], [`SaveError::Field`].
    pub fn parse(text: &str) -> Result<SaveFile, SaveError> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| SaveError::Json {
            truncated: e.is_eof(),
            message: e
                .to_string()
                .split(" at line ")
                .next()
                .unwrap_or_default()
                .to_owned(),
            line: e.line(),
            column: e.column(),
        })?;
        // The format version decides how to read the rest, so check it first.
        let format = value.get("format").ok_or_else(|| SaveError::Field {
            field: "format".to_owned(),
            problem: "missing (is this a coffer save file?)".to_owned(),
        })?;
        match format.as_u64() {
            Some(found) if found > u64::from(FORMAT_VERSION) => {
                return Err(SaveError::FutureFormat {
                    found,
                    supported: FORMAT_VERSION,
                });
            }
            Some(found) if found >= 1 => {}
            _ => {
                return Err(SaveError::Field {
                    field: "format".to_owned(),
                    problem: format!(
                        "expected a format version from 1 to {FORMAT_VERSION}, found {format}"
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

    /// Reads and parses a save file (see [`parse`](Self::parse)).
    ///
    /// # Errors
    /// [`SaveError::Io`] and those of [`parse`](Self::parse).
    pub fn read(path: &Path) -> Result<SaveFile, SaveError> {
        let text = std::fs::read_to_string(path).map_err(|source| SaveError::Io {
            action: "read",
            path: path.to_owned(),
            source,
        })?;
        SaveFile::parse(&text)
    }

    /// Writes the save atomically: a temporary file in the same directory is written and synced, renamed
    /// over `path`, and the directory is synced. A crash leaves either the old file or the new one.
    ///
    /// # Errors
    /// [`SaveError::Io`]; `path` is then unchanged.
    pub fn write(&self, path: &Path) -> Result<(), SaveError> {
        write_atomic(path, self.to_json().as_bytes()).map_err(|source| SaveError::Io {
            action: "write",
            path: path.to_owned(),
            source,
        })
    }

    /// The registered ruleset this save names, in exactly the saved version.
    ///
    /// # Errors
    /// [`SaveError::UnknownRuleset`] or [`SaveError::RulesetVersion`].
    pub fn ruleset<'r>(
        &self,
        registry: &'r Registry,
    ) -> Result<&'r Arc<dyn DynRuleset>, SaveError> {
        let RulesetRef { id, version } = &self.ruleset;
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

    /// The setup the game started from.
    pub fn setup(&self) -> Setup {
        Setup {
            players: self.players,
            seed: self.seed,
            config: self.config.clone(),
        }
    }

    /// Checks the whole save and returns the game: the snapshot restores, its hash and player count match
    /// the saved ones, and [`replay`](Self::replay) reproduces every logged hash.
    ///
    /// # Errors
    /// The first inconsistency found, as a [`SaveError`].
    pub fn restore(&self, registry: &Registry) -> Result<HostedGame, SaveError> {
        let ruleset = self.ruleset(registry)?;
        let bytes = serde_json::to_vec(&self.snapshot).map_err(|e| SaveError::Field {
            field: "snapshot".to_owned(),
            problem: e.to_string(),
        })?;
        let restored = ruleset
            .restore(Format::Json, &bytes)
            .map_err(SaveError::Snapshot)?;
        if restored.players() != self.players {
            return Err(SaveError::Mismatch {
                field: "players",
                expected: format!("{} (the snapshot's player count)", restored.players()),
                found: self.players.to_string(),
            });
        }
        let hash = restored.state_hash();
        if hash != self.state_hash {
            return Err(SaveError::Mismatch {
                field: "state_hash",
                expected: format!("{hash} (the hash of the snapshot)"),
                found: self.state_hash.to_string(),
            });
        }
        self.replay(registry)?;
        Ok(HostedGame::from_parts(
            Arc::clone(ruleset),
            self.setup(),
            self.log.clone(),
            restored,
        ))
    }

    /// Re-applies the log from scratch (players, seed, config) and checks the hash after every action and
    /// at the end; returns the replayed game.
    ///
    /// # Errors
    /// [`SaveError::ReplayRefused`] or [`SaveError::ReplayHash`] at the first divergence, or
    /// [`SaveError::Setup`] when the game does not start.
    pub fn replay(&self, registry: &Registry) -> Result<HostedGame, SaveError> {
        let ruleset = self.ruleset(registry)?;
        let mut game = ruleset.new_game(&self.setup()).map_err(SaveError::Setup)?;
        for (index, entry) in self.log.iter().enumerate() {
            let action = entry.action.to_string();
            game.apply_json(Owner(entry.player), &action)
                .map_err(|source| SaveError::ReplayRefused {
                    index,
                    player: entry.player,
                    action: action.clone(),
                    source,
                })?;
            let found = game.state_hash();
            if found != entry.hash {
                return Err(SaveError::ReplayHash {
                    field: format!("log[{index}].hash"),
                    expected: entry.hash,
                    found,
                });
            }
        }
        let found = game.state_hash();
        if found != self.state_hash {
            return Err(SaveError::ReplayHash {
                field: "state_hash".to_owned(),
                expected: self.state_hash,
                found,
            });
        }
        Ok(HostedGame::from_parts(
            Arc::clone(ruleset),
            self.setup(),
            self.log.clone(),
            game,
        ))
    }
}

/// Reads a save file and checks all of it ([`SaveFile::read`] then [`SaveFile::restore`]).
///
/// # Errors
/// Any [`SaveError`]; a damaged file is never accepted.
pub fn load(path: &Path, registry: &Registry) -> Result<HostedGame, SaveError> {
    SaveFile::read(path)?.restore(registry)
}

/// Saves a hosted game to `path` atomically.
///
/// # Errors
/// [`SaveError::Snapshot`] or [`SaveError::Io`].
pub fn save(game: &HostedGame, path: &Path) -> Result<(), SaveError> {
    SaveFile::from_game(game)?.write(path)
}

/// Replaces `path` with `bytes` atomically: temporary file in the same directory, write, fsync, rename,
/// fsync of the directory.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".coffer-save-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    // Make the rename itself durable.
    std::fs::File::open(dir)?.sync_all()
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
        if text.is_empty() || text.len() > 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(serde::de::Error::custom(format!(
                "expected a state hash of 16 hex digits, found '{text}'"
            )));
        }
        text.parse().map_err(|_| {
            serde::de::Error::custom(format!(
                "expected a state hash of 16 hex digits, found '{text}'"
            ))
        })
    }
}

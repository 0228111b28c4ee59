//! A save file as data ([`SaveFile`]): made from a hosted game, parsed and checked, restored or replayed
//! into one.

use crate::game::{HostedGame, LoggedAction};
use crate::registry::Registry;
use crate::save::checks::{Restored, RulesetRef, plugin_check, ruleset_of, setup_error};
use crate::save::config::{check_config, config_field};
use crate::save::error::SaveError;
use crate::save::format::FORMAT_VERSION;
use crate::save::limits::Limits;
use crate::save::read::{SAVE_FILE, as_text, read_file};
use crate::save::view::{LogSummary, Parts, View, write_json};
use crate::save::write::write_replacing;
use coffer_core::{ActionError, DynRuleset, Format, Owner, Setup, SetupError, StateHash};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

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
    #[serde(with = "crate::save::hex_hash")]
    pub state_hash: StateHash,
}

/// The first field of a save, read without building the document: only `format` is kept.
#[derive(Deserialize)]
pub(crate) struct Header<'a> {
    #[serde(borrow)]
    pub(crate) format: Option<&'a RawValue>,
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
        if let Ok(file) = serde_json::from_str::<SaveFile>(text)
            && (1..=FORMAT_VERSION).contains(&file.format)
        {
            return Ok(file);
        }
        SaveFile::parse_error(text)
    }

    /// Why `text` is not a save this build reads: the syntax, then the format version, then the first
    /// field that does not read.
    pub(crate) fn parse_error(text: &str) -> Result<SaveFile, SaveError> {
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
    pub(crate) fn view(&self) -> View<'_> {
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
    pub(crate) fn checked(&self, registry: &Registry) -> Result<Restored, SaveError> {
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
    pub(crate) fn into_game(self, registry: &Registry) -> Result<HostedGame, SaveError> {
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
                    ActionError::Panicked(_)
                    | ActionError::Poisoned(_)
                    | ActionError::Stopped(_) => SaveError::Plugin {
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

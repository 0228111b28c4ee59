//! What a save's JSON holds, read without trusting it (its log summarised, its values bounded in depth), and
//! the save's JSON written.

use crate::game::LoggedAction;
use crate::registry::Registry;
use crate::save::checks::{Restored, RulesetRef, plugin_check, ruleset_of, setup_error};
use crate::save::config::config_field;
use crate::save::error::SaveError;
use crate::save::format::FORMAT_VERSION;
use crate::save::hex_hash;
use coffer_core::{DynRuleset, Format, Setup, StateHash};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::sync::Arc;

/// What a save file holds, borrowed from a [`SaveFile`] or a game.
pub(crate) struct Parts<'a> {
    pub(crate) ruleset: &'a RulesetRef,
    pub(crate) players: u16,
    pub(crate) seed: u64,
    /// The configuration's one-line JSON text ([`check_config`]).
    pub(crate) config: &'a str,
    /// Entries already written, as text without the brackets (empty if none), then entries to write.
    pub(crate) log: (&'a str, &'a [LoggedAction]),
    pub(crate) snapshot: &'a RawValue,
    pub(crate) state_hash: StateHash,
}

/// What every reader checks of a save, borrowed from a parsed [`SaveFile`] or from the text of a save being
/// updated (whose log is scanned, not kept).
pub(crate) struct View<'a> {
    pub(crate) ruleset: RulesetRef,
    pub(crate) players: u16,
    pub(crate) seed: u64,
    pub(crate) config: Cow<'a, serde_json::Value>,
    pub(crate) snapshot: Cow<'a, str>,
    pub(crate) state_hash: StateHash,
    pub(crate) log: LogSummary,
}

/// What the checks need of a log: who acted in each entry, and the last entry's hash.
#[derive(Default)]
pub(crate) struct LogSummary {
    pub(crate) players: Vec<u16>,
    pub(crate) last_hash: Option<StateHash>,
}

impl View<'_> {
    pub(crate) fn setup(&self) -> Setup {
        Setup {
            players: self.players,
            seed: self.seed,
            config: self.config.clone().into_owned(),
        }
    }

    /// The setup, keeping the configuration instead of copying it when it is owned.
    pub(crate) fn into_setup(self) -> Setup {
        Setup {
            players: self.players,
            seed: self.seed,
            config: self.config.into_owned(),
        }
    }

    /// The checks of the snapshot: it restores, its player count and hash match the saved ones, and every
    /// logged player is in the game.
    pub(crate) fn checked_snapshot(&self, registry: &Registry) -> Result<Restored, SaveError> {
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
    pub(crate) fn check_log_end(
        &self,
        ruleset: &dyn DynRuleset,
        hash: StateHash,
    ) -> Result<(), SaveError> {
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
    pub(crate) fn checked(&self, registry: &Registry) -> Result<Restored, SaveError> {
        let (ruleset, game) = self.checked_snapshot(registry)?;
        self.check_log_end(&*ruleset, game.state_hash())?;
        Ok((ruleset, game))
    }
}

/// A save being updated, read without materializing its log: the log is kept as the file's text (and
/// scanned once for the checks), the other fields are read as [`SaveFile`] reads them.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawSave<'a> {
    pub(crate) format: u32,
    pub(crate) ruleset: RulesetRef,
    pub(crate) players: u16,
    pub(crate) seed: u64,
    #[serde(deserialize_with = "config_field")]
    pub(crate) config: serde_json::Value,
    #[serde(borrow)]
    pub(crate) log: &'a RawValue,
    #[serde(borrow)]
    pub(crate) snapshot: &'a RawValue,
    #[serde(with = "crate::save::hex_hash")]
    pub(crate) state_hash: StateHash,
}

/// One log entry as the scan reads it: nothing is copied unless the hash holds escapes.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntryRef<'a> {
    pub(crate) player: u16,
    #[allow(dead_code)]
    pub(crate) action: AnyValue,
    #[serde(borrow)]
    pub(crate) hash: Cow<'a, str>,
}

/// Any JSON value that a `serde_json::Value` reads (numbers in range included), checked without being
/// kept. Stricter than `Value` on nesting, which sends a deeply nested action to the full reader.
pub(crate) struct AnyValue;

/// Levels of arrays and objects an action may nest here (the full reader allows a few more).
pub(crate) const ACTION_DEPTH: u32 = 120;

impl<'de> Deserialize<'de> for AnyValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<AnyValue, D::Error> {
        serde::de::DeserializeSeed::deserialize(AnySeed(0), d)
    }
}

/// [`AnyValue`] at a nesting depth.
#[derive(Clone, Copy)]
pub(crate) struct AnySeed(u32);

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
    pub(crate) fn nested<E: serde::de::Error>(self) -> Result<AnySeed, E> {
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

/// Writes a save: the fields indented as `serde_json`'s pretty printer does, the configuration and each
/// log entry on one line (an indented list of numbers takes 3.5 times its bytes, and a log reads one action
/// per line).
pub(crate) fn write_json(parts: &Parts<'_>) -> String {
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
pub(crate) fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string_pretty(value)
        .unwrap_or_default()
        .replace('\n', "\n  ")
}

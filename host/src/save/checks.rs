//! What restoring a save checks before trusting it: the ruleset it names, registered in exactly that
//! version ([`RulesetRef`]), the plugin's answers, and setup errors told apart from the plugin's failures.

use crate::registry::Registry;
use crate::save::error::SaveError;
use coffer_core::{DynGame, DynRuleset, SetupError};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Which ruleset a save belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesetRef {
    /// The ruleset id.
    pub id: String,
    /// The exact version that wrote the save.
    pub version: String,
}

/// The registered ruleset `saved` names, in exactly the saved version.
pub(crate) fn ruleset_of<'r>(
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
pub(crate) fn plugin_check(ruleset: &dyn DynRuleset, game: &dyn DynGame) -> Result<(), SaveError> {
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
pub(crate) fn setup_error(
    ruleset: &dyn DynRuleset,
    error: SetupError,
    wrap: fn(SetupError) -> SaveError,
) -> SaveError {
    match error {
        SetupError::Panicked(_) | SetupError::Poisoned(_) | SetupError::Stopped(_) => {
            SaveError::Plugin {
                ruleset: ruleset.description().key(),
                message: error.to_string(),
            }
        }
        other => wrap(other),
    }
}

/// A save's ruleset and its game restored from the snapshot.
pub(crate) type Restored = (Arc<dyn DynRuleset>, Box<dyn DynGame>);

//! What a player may do: the actions, as JSON, and their codes in `Cause::Action`.

use serde::{Deserialize, Serialize};

/// A player's action, as JSON: `{"type":"take","coins":2}`, `{"type":"build"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Take one or two coins.
    Take {
        /// 1 or 2.
        coins: u8,
    },
    /// Pay three coins back to the bank for a mine.
    Build,
}

// `Action::code()` (the number in `Cause::Action`) and `Action::NAMES` (the vocabulary's action names),
// numbered in this order. Saved games and logs keep these numbers: add new actions at the end.
coffer_core::action_codes!(Action {
    Take => "Take",
    Build => "Build",
});

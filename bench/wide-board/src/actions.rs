//! The actions of a `wide-board` game: their JSON form and their codes in `Cause::Action`.

use serde::{Deserialize, Serialize};

/// A player's action, as JSON: `{"type":"tactical","system":3}`, `{"type":"strategic"}`,
/// `{"type":"pass"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Move a tactic-pool token into a system without one of your tokens.
    Tactical {
        /// The system's index, 0 to `systems - 1`.
        system: u16,
    },
    /// Spend a strategy-pool token; gain 2 tokens into the tactic pool. Once per round.
    Strategic,
    /// Out for the rest of the round.
    Pass,
}

coffer_core::action_codes!(Action {
    Tactical => "Tactical action",
    Strategic => "Strategic action",
    Pass => "Pass",
});

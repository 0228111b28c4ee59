//! What a player may do: the actions, as JSON, and their codes in `Cause::Action`.

use serde::{Deserialize, Serialize};

/// A player's action, as JSON: `{"type":"place","site":4}`, `{"type":"shift","from":4,"to":5}`,
/// `{"type":"harvest"}`, `{"type":"pass"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Pay 1 energy to move a token from reinforcements onto a site that is empty or already yours.
    Place {
        /// The site, from 0.
        site: u16,
    },
    /// Pay 1 energy to move one of your tokens from a site you hold to a neighbouring site that is
    /// empty or yours.
    Shift {
        /// The site the token leaves.
        from: u16,
        /// The neighbouring site it goes to.
        to: u16,
    },
    /// Once a round: score one point per site you hold (the score stops at 20).
    Harvest,
    /// Out for the rest of the round.
    Pass,
}

// `Action::code()` (the number in `Cause::Action`) and `Action::NAMES` (the vocabulary's action names),
// numbered in this order. Saved games and logs keep these numbers: add new actions at the end.
coffer_core::action_codes!(Action {
    Place => "Place",
    Shift => "Shift",
    Harvest => "Harvest",
    Pass => "Pass",
});

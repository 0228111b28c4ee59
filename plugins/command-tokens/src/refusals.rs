//! Refusals: an action the rules do not allow, and why.

use coffer_core::ActionError;

/// An action refused by the rules, with the reason a player reads.
pub(crate) fn illegal(message: String) -> ActionError {
    ActionError::Illegal(message)
}

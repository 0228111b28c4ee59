//! Applying an action: validate it first (a refusal leaves the state exactly as it was), then its rule,
//! then the next turn. Kernel refusals are rolled back by the adapter.

use crate::actions::Action;
use crate::rules::{coins, turn};
use crate::state::State;
use crate::validate::validate;
use coffer_core::{ActionError, Cause, Owner};

/// Applies `player`'s action.
///
/// # Errors
/// [`ActionError`] in the rules' words.
pub fn apply(s: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
    validate(s, player, action).map_err(|why| why.error(s, player))?;
    let cause = Cause::Action {
        player,
        code: action.code(),
    };
    match *action {
        Action::Take { coins } => coins::take(s, player, coins, cause)?,
        Action::Build => coins::build(s, player, cause)?,
    }
    turn::next_turn(s, cause)?;
    Ok(())
}

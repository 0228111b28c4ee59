//! Applying an action: validate it first (a refusal leaves the state exactly as it was), then its rule,
//! then the next turn. Kernel refusals are rolled back by the adapter.

use crate::actions::Action;
use crate::rules::{harvest, round, sites};
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
    let round_ended = match *action {
        Action::Place { site } => {
            sites::place(s, player, site, cause)?;
            false
        }
        Action::Shift { from, to } => {
            sites::shift(s, player, from, to, cause)?;
            false
        }
        Action::Harvest => {
            harvest::harvest(s, player, cause)?;
            false
        }
        Action::Pass => round::pass(s, player, cause)?,
    };
    if !round_ended {
        round::next_turn(s);
    }
    Ok(())
}

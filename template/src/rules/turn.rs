//! The turn: it passes round the table, and starts with the new player's mines' income from the bank.

use crate::state::{PURSE, State};
use crate::words::{MINE_INCOME, NEXT_TURN};
use coffer_core::{Cause, Key, Outcome, Owner, Refusal};

/// The next player's turn, with their mines' income.
///
/// # Errors
/// A kernel [`Refusal`] (none in a consistent state).
pub fn next_turn(s: &mut State, cause: Cause) -> Result<(), Refusal> {
    s.turn = (s.turn + 1) % s.ledger.owners();
    let next = Owner(s.turn);
    // A ruleset's own event: the turn is the ruleset's state, not the ledger's.
    s.ledger
        .note(Key::new(next, PURSE, 0), NEXT_TURN, [0; 3], cause);
    let income = s.ledger.value(s.mines[next.index()]);
    if income > 0 && s.outcome() == Outcome::Ongoing {
        s.ledger.gain_tokens(
            Owner::GAME,
            s.purse[next.index()],
            u32::try_from(income).unwrap_or(u32::MAX),
            Cause::Effect(MINE_INCOME),
        )?;
    }
    Ok(())
}

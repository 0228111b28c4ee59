//! The round: players act in turn, skipping those who passed; when everyone has passed the round (the
//! clock's act) ends, energy empties and harvests ready (the kernel's upkeep), and the next round starts
//! with every pool refilled, its first player one seat on from the last round's.

use crate::state::{ENERGY, REINFORCEMENTS, State};
use crate::words::{PASSES, REFILL};
use coffer_core::{Cause, Key, Owner, Refusal, Scope};

/// `player` passes: out for the rest of the round, which ends when everybody has passed. Returns whether
/// it ended.
///
/// # Errors
/// A kernel [`Refusal`] (none in a consistent state).
pub fn pass(s: &mut State, player: Owner, cause: Cause) -> Result<bool, Refusal> {
    s.passed[player.index()] = true;
    // A ruleset's own event: who has passed is the ruleset's state, not the ledger's.
    s.ledger
        .note(Key::new(player, REINFORCEMENTS, 0), PASSES, [0; 3], cause);
    if s.passed.iter().all(|&p| p) {
        end_round(s)?;
        return Ok(true);
    }
    Ok(false)
}

/// The turn moves to the next player round the table who has not passed (nothing once the game is over).
pub fn next_turn(s: &mut State) {
    if s.is_over() {
        return;
    }
    let players = s.players();
    let mut next = s.active;
    for _ in 0..players {
        next = (next + 1) % players;
        if !s.passed[usize::from(next)] {
            s.active = next;
            return;
        }
    }
}

/// Ends the round: the kernel empties energy and readies harvests; unless it was the last round, the next
/// one starts with energy refilled and nobody passed.
fn end_round(s: &mut State) -> Result<(), Refusal> {
    s.ledger.end_scope(Scope::Act);
    s.round += 1;
    if s.is_over() {
        return Ok(());
    }
    for p in 0..s.players() {
        s.ledger
            .gain(s.energy[usize::from(p)], ENERGY, Cause::Effect(REFILL))?;
        s.passed[usize::from(p)] = false;
    }
    s.active = s.round % s.players();
    Ok(())
}

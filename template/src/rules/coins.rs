//! Coins: taking them from the bank, and paying them back for a mine.

use crate::state::State;
use coffer_core::{Cause, Owner, Refusal};

/// What a mine costs.
pub const MINE_COST: u32 = 3;

/// `player` takes `coins` from the bank: fewer if it holds fewer (reported in the event, K4.2).
///
/// # Errors
/// A kernel [`Refusal`] (none after validation).
pub fn take(s: &mut State, player: Owner, coins: u8, cause: Cause) -> Result<(), Refusal> {
    let purse = s.purse[player.index()];
    s.ledger
        .gain_tokens(Owner::GAME, purse, u32::from(coins), cause)?;
    Ok(())
}

/// `player` pays three coins back to the bank for a mine.
///
/// # Errors
/// A kernel [`Refusal`]: a short payment (the adapter then rolls the whole action back).
pub fn build(s: &mut State, player: Owner, cause: Cause) -> Result<(), Refusal> {
    let purse = s.purse[player.index()];
    s.ledger
        .move_tokens(Owner::GAME, purse, s.bank, MINE_COST, cause)?;
    s.ledger.gain(s.mines[player.index()], 1, cause)?;
    Ok(())
}

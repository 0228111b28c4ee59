//! The harvest: once a round, a point per site held, the score capped at 20 (the kernel reports what the
//! cap takes).

use crate::state::State;
use coffer_core::{Cause, Owner, Refusal};

/// `player` exhausts their harvest and scores one point per site they hold.
///
/// # Errors
/// A kernel [`Refusal`] (none after validation).
pub fn harvest(s: &mut State, player: Owner, cause: Cause) -> Result<(), Refusal> {
    s.ledger.activate(s.harvest[player.index()], cause)?;
    let held = s.sites_held(player) as u64;
    s.ledger.gain(s.score[player.index()], held, cause)?;
    Ok(())
}

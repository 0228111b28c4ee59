//! The ring board: which sites are neighbours, and tokens placed from reinforcements or shifted one site
//! round the ring, each paid with one energy.

use crate::state::State;
use coffer_core::{Cause, Owner, Refusal};

/// The neighbours of `site` on a ring of `sites`, ascending, each once, never `site` itself: none on a
/// board of one site, the other site on a board of two.
pub fn neighbours(site: u16, sites: u16) -> impl Iterator<Item = u16> {
    let before = (site + sites - 1) % sites;
    let after = (site + 1) % sites;
    let (low, high) = (before.min(after), before.max(after));
    let first = (low != site).then_some(low);
    let second = (high != site && high != low).then_some(high);
    first.into_iter().chain(second)
}

/// Whether `from` and `to` are neighbours on a ring of `sites`.
pub fn are_neighbours(from: u16, to: u16, sites: u16) -> bool {
    neighbours(from, sites).any(|n| n == to)
}

/// `player` pays one energy and moves a token from reinforcements onto `site`.
///
/// # Errors
/// A kernel [`Refusal`] (none after validation).
pub fn place(s: &mut State, player: Owner, site: u16, cause: Cause) -> Result<(), Refusal> {
    s.ledger.spend(s.energy[player.index()], 1, cause)?;
    let (from, to) = (s.reinforcements[player.index()], s.sites[usize::from(site)]);
    s.ledger.move_tokens(player, from, to, 1, cause)?;
    Ok(())
}

/// `player` pays one energy and moves one of their tokens from `from` to the neighbouring `to`.
///
/// # Errors
/// A kernel [`Refusal`] (none after validation).
pub fn shift(
    s: &mut State,
    player: Owner,
    from: u16,
    to: u16,
    cause: Cause,
) -> Result<(), Refusal> {
    s.ledger.spend(s.energy[player.index()], 1, cause)?;
    let (from, to) = (s.sites[usize::from(from)], s.sites[usize::from(to)]);
    s.ledger.move_tokens(player, from, to, 1, cause)?;
    Ok(())
}

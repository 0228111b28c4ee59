//! The board: Galactic Factors pushed (S5, S17), units moved between Bands (S15), Surface Locations
//! captured and restored (S14).

use crate::cards::Band;
use crate::content::Deed;
use crate::rules::cards::{activate, deed};
use crate::state::{State, card_key, note};
use coffer_core::{Cause, Owner, Refusal};

/// `p` pushes Galactic Factor `factor` `steps` steps, paying committed Votes (S5).
pub(crate) fn push_factor(
    s: &mut State,
    p: Owner,
    factor: u8,
    up: bool,
    steps: u8,
    cause: Cause,
) -> Result<(), Refusal> {
    let seat = s.seats[p.index()];
    let need = u64::from(steps) * u64::from(s.config().votes_per_factor_step);
    s.ledger.spend(seat.votes, need, cause)?;
    let f = usize::from(factor);
    let v = s.factor(f);
    let after = if up {
        v + i64::from(steps)
    } else {
        v - i64::from(steps)
    };
    s.ledger.set(s.factors[f], after, cause)?;
    Ok(())
}

/// Unit `card` moves to Band `to` (S15), which activates it.
pub(crate) fn move_unit(s: &mut State, card: u16, to: Band, cause: Cause) -> Result<(), Refusal> {
    let (code, whose) = match to {
        Band::Space => (note::MOVE_SPACE, 0),
        Band::Surface(q) => (note::MOVE_SURFACE, q),
        Band::Planetary(q) => (note::MOVE_PLANETARY, q),
    };
    let owner = s.cards[usize::from(card)].owner;
    s.ledger.note(
        card_key(Owner(owner), card),
        code,
        [i32::from(whose), 0, 0],
        cause,
    );
    activate(s, card, cause)?;
    let c = &mut s.cards[usize::from(card)];
    c.band = Some(to);
    c.committed = false;
    deed(s, card, Deed::Move)?;
    Ok(())
}

/// `p`'s `unit` captures Surface Location `location` (S14): it becomes `p`'s, Contested.
pub(crate) fn capture(
    s: &mut State,
    p: Owner,
    location: u16,
    unit: u16,
    cause: Cause,
) -> Result<(), Refusal> {
    let owner = s.cards[usize::from(location)].owner;
    s.ledger.note(
        card_key(Owner(owner), location),
        note::CAPTURE,
        [i32::from(p.0), 0, 0],
        cause,
    );
    activate(s, unit, cause)?;
    s.cards[usize::from(unit)].committed = false;
    let l = &mut s.cards[usize::from(location)];
    l.controller = p.0;
    l.contested = true;
    deed(s, unit, Deed::Capture)?;
    Ok(())
}

/// `p` restores Contested `location`, paying the Restore cost (S14).
pub(crate) fn restore(s: &mut State, p: Owner, location: u16, cause: Cause) -> Result<(), Refusal> {
    let seat = s.seats[p.index()];
    let owner = s.cards[usize::from(location)].owner;
    s.ledger.note(
        card_key(Owner(owner), location),
        note::RESTORE,
        [0; 3],
        cause,
    );
    s.ledger
        .spend(seat.treasury, u64::from(s.config().restore_cost), cause)?;
    s.cards[usize::from(location)].contested = false;
    Ok(())
}

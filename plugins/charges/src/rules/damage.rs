//! Damage and the effect inputs on a ship: suffering hits and crits against shields first (C9), damage
//! cards, stress (a huge ship's energy removes it, C10, C18), losing and recovering charges, reserve (C19).

use crate::actions::ChargeRef;
use crate::rules::ships::{ship_key, track_of};
use crate::state::State;
use crate::words::note;
use coffer_core::{ActionError, Cause, Part, Refusal};

/// C9: one point of damage: an active shield first, else a damage card (faceup for a crit).
pub(crate) fn damage_point(s: &mut State, i: usize, crit: bool, c: Cause) -> Result<(), Refusal> {
    let sh = &s.ships[i];
    if s.active(sh.shields) > 0 {
        if let Some(t) = sh.shields {
            s.ledger.lose_charges(t, 1, c)?;
        }
        return Ok(());
    }
    let card = if crit { sh.faceup } else { sh.facedown };
    s.ledger.gain(card, 1, c)?;
    destroyed_note(s, i, c);
    Ok(())
}

/// Notes that ship `i` is destroyed, when a damage card just brought its damage up to its hull.
pub(crate) fn destroyed_note(s: &mut State, i: usize, c: Cause) {
    if s.damage(i) == i64::from(s.ships[i].hull) {
        let key = ship_key(s, i);
        s.ledger.note(key, note::DESTROYED, [0; 3], c);
    }
}

/// C9: suffer damage: hits before crits, each against shields first.
///
/// # Errors
/// A kernel [`Refusal`] (none in a validated action).
pub fn suffer(s: &mut State, i: usize, hits: u8, crits: u8, c: Cause) -> Result<(), Refusal> {
    let key = ship_key(s, i);
    s.ledger.note(
        key,
        note::SUFFERS,
        [i32::from(hits), i32::from(crits), 0],
        c,
    );
    for _ in 0..hits {
        damage_point(s, i, false, c)?;
    }
    for _ in 0..crits {
        damage_point(s, i, true, c)?;
    }
    Ok(())
}

/// Gains one stress; C10: a huge ship then must spend one energy to remove it, if able (automatic).
///
/// # Errors
/// A kernel [`Refusal`] (none in a validated action).
pub fn gain_stress(s: &mut State, i: usize, c: Cause) -> Result<(), Refusal> {
    let sh = &s.ships[i];
    s.ledger.gain(sh.stress, 1, c)?;
    if sh.huge
        && s.active(sh.energy) > 0
        && let Some(e) = sh.energy
    {
        s.ledger
            .pay_cost(&[Part::Charges(e, 1), Part::Spend(sh.stress, 1)], c)?;
    }
    Ok(())
}

/// C18: after a huge ship recovers energy it must spend one energy for each stress token it has, then
/// removes one stress token for each energy spent (automatic, as C10's).
///
/// # Errors
/// A kernel [`Refusal`] (none in a validated state).
pub fn spend_recovered_energy(s: &mut State, i: usize, c: Cause) -> Result<(), Refusal> {
    let sh = &s.ships[i];
    let (Some(e), true) = (sh.energy, sh.huge) else {
        return Ok(());
    };
    let stress = s.ledger.value(sh.stress);
    let k = u32::try_from(stress.max(0))
        .unwrap_or(0)
        .min(s.active(sh.energy));
    if k > 0 {
        s.ledger.pay_cost(
            &[Part::Charges(e, k), Part::Spend(sh.stress, u64::from(k))],
            c,
        )?;
    }
    Ok(())
}

/// Deals ship `i` a damage card, faceup or facedown, ignoring shields (C9).
pub(crate) fn deal_damage_card(
    s: &mut State,
    i: usize,
    faceup: bool,
    c: Cause,
) -> Result<(), ActionError> {
    let (up, down) = (s.ships[i].faceup, s.ships[i].facedown);
    s.ledger.gain(if faceup { up } else { down }, 1, c)?;
    destroyed_note(s, i, c);
    Ok(())
}

/// Ship `ship` loses one charge of `charges` (C2); a note says so when none was active.
pub(crate) fn lose(
    s: &mut State,
    ship: u8,
    charges: ChargeRef,
    c: Cause,
) -> Result<(), ActionError> {
    if let Some(t) = track_of(s, usize::from(ship), charges)
        && s.ledger.lose_charges(t, 1, c)? == 0
    {
        let key = s.ledger.track(t)?.key();
        s.ledger.note(key, note::NOTHING_LOST, [0; 3], c);
    }
    Ok(())
}

/// Ship `ship` recovers one charge of `charges` (C4); a huge ship then spends recovered energy on its
/// stress (C18).
pub(crate) fn recover(
    s: &mut State,
    ship: u8,
    charges: ChargeRef,
    c: Cause,
) -> Result<(), ActionError> {
    if let Some(t) = track_of(s, usize::from(ship), charges) {
        s.ledger.recover_exactly(t, 1, c)?;
        if charges == ChargeRef::Energy {
            spend_recovered_energy(s, usize::from(ship), c)?;
        }
    }
    Ok(())
}

/// Ship `ship` is placed in reserve (C19): its planned dial is set aside.
pub(crate) fn place_in_reserve(s: &mut State, ship: u8, c: Cause) {
    let sh = &mut s.ships[usize::from(ship)];
    sh.reserve = true;
    // Not assigned a dial while in reserve: a planned one is set aside.
    sh.planned = None;
    sh.revealed = false;
    let key = ship_key(s, usize::from(ship));
    s.ledger.note(key, note::TO_RESERVE, [0; 3], c);
}

/// Ship `ship` is placed in the play area from reserve (C19).
pub(crate) fn deploy(s: &mut State, ship: u8, c: Cause) {
    s.ships[usize::from(ship)].reserve = false;
    let key = ship_key(s, usize::from(ship));
    s.ledger.note(key, note::DEPLOYED, [0; 3], c);
}

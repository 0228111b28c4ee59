//! The Planning Phase: which maneuvers a ship may plan, and planning one.

use crate::content::Color;
use crate::refusals::Why;
use crate::rules::ships::{colour_number, ship_key};
use crate::state::State;
use crate::words::note;
use coffer_core::Cause;

/// The maneuver part of [`validate`](crate::validate::validate) for planning ship `i`: purple needs an active Force (C8).
pub(crate) fn plan_maneuver(s: &State, i: usize, maneuver: Color) -> Result<(), Why> {
    if maneuver == Color::Purple && s.active(s.ships[i].force) == 0 {
        return Err(Why::Ship(
            i as u8,
            "has no active Force: a purple maneuver needs one (C8)",
        ));
    }
    Ok(())
}

/// Sets ship `i`'s dial to `maneuver`.
pub(crate) fn plan(s: &mut State, i: usize, maneuver: Color, c: Cause) {
    let key = ship_key(s, i);
    s.ledger
        .note(key, note::PLANNED, [colour_number(maneuver), 0, 0], c);
    s.ships[i].planned = Some(maneuver);
}

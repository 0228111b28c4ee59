//! What every rule asks of a ship: that it exists and is not destroyed, its charge tracks, its stress,
//! the key its notes are about, and the number of a maneuver colour in notes.

use crate::actions::ChargeRef;
use crate::content::Color;
use crate::refusals::Why;
use crate::state::{State, kind};
use coffer_core::{Key, TrackId};

/// The track of ship `ship`'s charges `r`, if it has them.
pub(crate) fn track_of(s: &State, ship: usize, r: ChargeRef) -> Option<TrackId> {
    let sh = &s.ships[ship];
    match r {
        ChargeRef::Force => sh.force,
        ChargeRef::Shield => sh.shields,
        ChargeRef::Energy => sh.energy,
        ChargeRef::Card(c) => sh.cards.get(usize::from(c)).and_then(|c| c.track),
    }
}

/// Ship `ship` exists and is not destroyed: its index.
pub(crate) fn ship_ok(s: &State, ship: u8) -> Result<usize, Why> {
    let i = usize::from(ship);
    if i >= s.ships.len() {
        return Err(Why::NoSuchShip(ship));
    }
    if !s.alive(i) {
        return Err(Why::Destroyed(ship));
    }
    Ok(i)
}

/// Whether ship `ship` has a stress token.
pub(crate) fn stressed(s: &State, ship: usize) -> bool {
    s.ledger.value(s.ships[ship].stress) > 0
}

/// The key ship notes are about: the ship's turn permanent, labelled with the ship's name.
#[inline]
pub(crate) fn ship_key(s: &State, i: usize) -> Key {
    Key::new(s.ships[i].owner, kind::TURN, i as u32)
}

/// The number of a maneuver colour in notes: the vocabulary's colour values.
pub(crate) fn colour_number(c: Color) -> i32 {
    match c {
        Color::Blue => 0,
        Color::White => 1,
        Color::Red => 2,
        Color::Purple => 3,
    }
}

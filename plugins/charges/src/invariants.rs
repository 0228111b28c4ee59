//! The ruleset's own invariants, which the host checks after the ledger's: one End Phase per player, the
//! stored ship to act the derived one, an attack between ships of the game, names for every card.

use crate::state::State;
use crate::turn::ship_to_act;
use coffer_core::Violation;

/// Checks the ruleset's own invariants of `state`.
///
/// # Errors
/// The first [`Violation`] found.
pub fn check(state: &State) -> Result<(), Violation> {
    if state.done.len() != usize::from(state.ledger.owners()) {
        return Err(Violation("one End Phase permanent per player".into()));
    }
    let derived = ship_to_act(state);
    if state.current != derived {
        let ship = |s: Option<u8>| s.map_or_else(|| "none".to_owned(), |i| format!("ship {i}"));
        return Err(Violation(format!(
            "the stored ship to act is {}, the derived one is {}",
            ship(state.current),
            ship(derived)
        )));
    }
    if let Some(at) = state.attack
        && (usize::from(at.attacker) >= state.ships.len()
            || usize::from(at.defender) >= state.ships.len())
    {
        return Err(Violation(format!(
            "the attack names ship {} against ship {}, but the game has ships 0-{}",
            at.attacker,
            at.defender,
            state.ships.len().saturating_sub(1)
        )));
    }
    if state
        .ships
        .iter()
        .any(|s| s.card_names.len() != s.cards.len())
    {
        return Err(Violation("every card of a ship has a name".into()));
    }
    if let Some(i) = state
        .ships
        .iter()
        .position(|s| s.revealed && s.planned.is_none())
    {
        return Err(Violation(format!(
            "ship {i} has a revealed dial but no planned maneuver"
        )));
    }
    Ok(())
}

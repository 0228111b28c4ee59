//! The ruleset's own invariants, which the host checks after the ledger's: the Act and its results, hands
//! and decks holding what their cards say, handle slots in range, the in-play index, Treasuries in range.

use crate::cards::Zone;
use crate::state::State;
use coffer_core::{Owner, Violation};

/// Checks the ruleset's own invariants of `state`.
///
/// # Errors
/// The first [`Violation`] found.
pub fn check(state: &State) -> Result<(), Violation> {
    if !(1..=3).contains(&state.act) || state.results.len() + 1 < usize::from(state.act) {
        return Err(Violation(format!(
            "Act {} with {} results: the Act is 1 to 3, with a result for each Act before it",
            state.act,
            state.results.len()
        )));
    }
    for (p, hand) in state.hands.iter().enumerate() {
        for &c in hand {
            let card = state.cards.get(usize::from(c));
            if card.is_none_or(|c| c.zone != Zone::Hand || usize::from(c.owner) != p) {
                return Err(Violation(format!(
                    "p{p}'s hand holds card #{c} that is not in their hand"
                )));
            }
        }
    }
    for (p, deck) in state.decks.iter().enumerate() {
        for &c in deck {
            let card = state.cards.get(usize::from(c));
            if card.is_none_or(|c| c.zone != Zone::Deck || usize::from(c.owner) != p) {
                return Err(Violation(format!(
                    "p{p}'s deck holds card #{c} that is not in their deck"
                )));
            }
        }
    }
    let (held, listed) = (
        state
            .cards
            .iter()
            .filter(|c| matches!(c.zone, Zone::Hand | Zone::Deck))
            .count(),
        state
            .hands
            .iter()
            .chain(&state.decks)
            .map(Vec::len)
            .sum::<usize>(),
    );
    if held != listed {
        return Err(Violation(format!(
            "{held} cards are in hands and decks, but the hands and decks list {listed}"
        )));
    }
    if let Some(i) = state.cards.iter().position(|c| !state.handles.holds(c)) {
        return Err(Violation(format!(
            "card #{i} names a kernel handle slot outside the handle tables"
        )));
    }
    let in_play =
        (0..state.cards.len() as u16).filter(|&c| state.cards[usize::from(c)].zone == Zone::Play);
    if !in_play.eq(state.in_play.iter().copied()) {
        return Err(Violation(
            "the index of cards in play disagrees with the cards' zones".to_owned(),
        ));
    }
    let cap = i64::from(state.config().treasury_cap);
    for p in 0..state.players() {
        if !(0..=cap).contains(&state.treasury(Owner(p))) {
            return Err(Violation(format!(
                "p{p}'s Treasury is {}: it must be 0 to {cap} (S1)",
                state.treasury(Owner(p))
            )));
        }
    }
    Ok(())
}

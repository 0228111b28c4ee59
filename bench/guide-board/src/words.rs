//! What outposts calls things: hosts name resources, causes and events with it.

use crate::actions::Action;
use coffer_core::{NoteTerm, Term, Vocabulary};

/// The effect code of the energy refilled when a round starts (`Cause::Effect`), indexing the
/// vocabulary's effects.
pub const REFILL: u16 = 0;

/// The code of this ruleset's own event "a player passes", indexing the vocabulary's notes.
pub const PASSES: u16 = 0;

/// The vocabulary: kinds by [`Kind`](coffer_core::Kind) number, actions by code ([`Action::NAMES`]),
/// effects and notes by code.
pub fn vocabulary() -> Vocabulary {
    Vocabulary {
        round: "Round".to_owned(),
        kinds: vec![
            Term::new("reinforcements"),
            Term::new("site"),
            Term::new("energy"),
            Term::new("harvest").states("is used up this round", "is ready"),
            Term::new("score"),
        ],
        phases: vec!["Actions".to_owned()],
        actions: Action::NAMES.map(str::to_owned).to_vec(),
        effects: vec!["the round's energy".to_owned()],
        notes: vec![NoteTerm::new("{who} passes")],
        ..Vocabulary::default()
    }
}

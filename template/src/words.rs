//! What this ruleset calls things: hosts name resources, causes and events with it. A ruleset that
//! declares nothing gets plain names ("resource 0", "action 1").

use crate::actions::Action;
use coffer_core::{NoteTerm, Term, Vocabulary};

/// The effect code of a mine's income (`Cause::Effect`), indexing the vocabulary's effects.
pub const MINE_INCOME: u16 = 0;

/// The code of this ruleset's own event "the turn passes", indexing the vocabulary's notes.
pub const NEXT_TURN: u16 = 0;

/// The vocabulary: kinds by [`Kind`](coffer_core::Kind) number, actions by code ([`Action::NAMES`]),
/// effects and notes by code.
pub fn vocabulary() -> Vocabulary {
    Vocabulary {
        kinds: vec![Term::new("purse"), Term::new("mines"), Term::new("bank")],
        phases: vec!["Turn".to_owned()],
        actions: Action::NAMES.map(str::to_owned).to_vec(),
        effects: vec!["mine income".to_owned()],
        notes: vec![NoteTerm::new("{who}'s turn begins")],
        ..Vocabulary::default()
    }
}

//! What this ruleset calls things: hosts name resources, causes and events with it. A ruleset that
//! declares nothing gets plain names ("resource 0", "action 1").

use coffer_core::{NoteTerm, Term, Vocabulary};

/// The vocabulary: kinds by [`Kind`](coffer_core::Kind) number, actions and effects by code, notes by code.
pub fn vocabulary() -> Vocabulary {
    Vocabulary {
        kinds: vec![Term::new("purse"), Term::new("mines"), Term::new("bank")],
        phases: vec!["Turn".to_owned()],
        actions: vec!["Take".to_owned(), "Build".to_owned()],
        effects: vec!["mine income".to_owned()],
        notes: vec![NoteTerm::new("{who}'s turn begins")],
        ..Vocabulary::default()
    }
}

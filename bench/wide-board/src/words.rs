//! What the ruleset calls things: its effect and note codes, and its [`vocabulary`].

use crate::actions::Action;
use coffer_core::{NoteTerm, Term, Vocabulary};

/// Effect codes in `Cause::Effect`, indexing [`Vocabulary::effects`]: the round's end.
pub const ROUND_END: u16 = 0;

/// Note codes, indexing [`Vocabulary::notes`].
pub mod note {
    /// A player passes.
    pub const PASS: u16 = 0;
    /// The last round is over.
    pub const GAME_OVER: u16 = 1;
}

/// The vocabulary: kinds, the phase, actions, the effect and notes in words.
pub fn vocabulary() -> Vocabulary {
    Vocabulary {
        kinds: vec![
            Term::new("reinforcements"),
            Term::new("tactic pool"),
            Term::new("fleet pool"),
            Term::new("strategy pool"),
            Term::new("system"),
            Term::new("score"),
            Term::new("strategic action"),
        ],
        phases: vec!["Action".to_owned()],
        actions: Action::NAMES.map(str::to_owned).to_vec(),
        effects: vec!["round end".to_owned()],
        notes: vec![
            NoteTerm::new("{who} passes"),
            NoteTerm::new("the last round is over"),
        ],
        ..Vocabulary::default()
    }
}

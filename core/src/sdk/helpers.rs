//! What every ruleset needs beside the kernel, written once: winners by score, an action applied as hosts
//! apply it (one transaction, rolled back on refusal), and the test harness that checks what a refusal
//! promises (K8).

use crate::event::Event;
use crate::id::Owner;
use crate::plugin::{ActionError, Outcome, Ruleset};

impl Outcome {
    /// A finished game won by every player with the highest score (ties share the win), the scores indexed
    /// by player.
    ///
    /// ```
    /// use coffer_core::{Outcome, Owner};
    /// let done = Outcome::by_score(vec![3, 5, 5]);
    /// assert_eq!(done, Outcome::Finished { winners: vec![Owner(1), Owner(2)], scores: vec![3, 5, 5] });
    /// ```
    pub fn by_score(scores: Vec<i64>) -> Outcome {
        let best = scores.iter().copied().max();
        let winners = scores
            .iter()
            .enumerate()
            .filter(|&(_, &s)| Some(s) == best)
            .map(|(p, _)| Owner(p as u16))
            .collect();
        Outcome::Finished { winners, scores }
    }
}

/// Applies `action` of `player` as every host does: in one kernel transaction that is committed, its events
/// moved to the end of `events`, when the ruleset accepts it, and rolled back, changing nothing, when it
/// refuses (K8).
///
/// # Errors
/// The ruleset's refusal.
pub fn apply_atomically<R: Ruleset>(
    ruleset: &R,
    state: &mut R::State,
    player: Owner,
    action: &R::Action,
    events: &mut Vec<Event>,
) -> Result<(), ActionError> {
    let mark = ruleset.ledger_mut(state).begin();
    match ruleset.apply(state, player, action) {
        Ok(()) => {
            let ledger = ruleset.ledger_mut(state);
            ledger.commit(mark);
            ledger.drain_events_into(events);
            Ok(())
        }
        Err(e) => {
            ruleset.ledger_mut(state).rollback(mark);
            Err(e)
        }
    }
}

/// Test helpers for rulesets: each applies through [`apply_atomically`], as hosts do.
pub mod testing {
    use super::apply_atomically;
    use crate::event::Event;
    use crate::hash::state_hash;
    use crate::id::Owner;
    use crate::plugin::{ActionError, Ruleset};

    /// Applies an action that must be accepted; returns its events. Panics with the refusal otherwise.
    #[track_caller]
    pub fn applies<R: Ruleset>(
        ruleset: &R,
        state: &mut R::State,
        player: Owner,
        action: &R::Action,
    ) -> Vec<Event> {
        let mut events = Vec::new();
        if let Err(e) = apply_atomically(ruleset, state, player, action, &mut events) {
            panic!("{action:?} by {player} was refused: {e}");
        }
        events
    }

    /// Applies an action that must be refused, and checks what a refusal promises: the state hash is
    /// unchanged, no event was recorded, and the legal-action list did not offer the action. Returns the
    /// refusal.
    #[track_caller]
    pub fn refused<R: Ruleset>(
        ruleset: &R,
        state: &mut R::State,
        player: Owner,
        action: &R::Action,
    ) -> ActionError {
        let before = state_hash(state);
        let mut legal = Vec::new();
        ruleset.legal_actions(state, player, &mut legal);
        let mut events = Vec::new();
        let refusal = match apply_atomically(ruleset, state, player, action, &mut events) {
            Ok(()) => panic!("{action:?} by {player} was accepted; it must be refused"),
            Err(e) => e,
        };
        assert_eq!(
            state_hash(state),
            before,
            "the refused {action:?} changed the state: {refusal}"
        );
        assert!(events.is_empty(), "the refused {action:?} recorded events");
        assert!(
            !legal.contains(action),
            "the refused {action:?} was listed as legal: {refusal}"
        );
        refusal
    }
}

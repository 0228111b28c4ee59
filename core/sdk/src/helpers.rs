//! What every ruleset needs beside the kernel, written once: winners by score, an action applied as hosts
//! apply it (one transaction, rolled back on refusal), and the test harness that checks what a refusal
//! promises (K8).

use crate::{ActionError, Outcome, Ruleset};
use coffer_kernel::Owner;

impl Outcome {
    /// A finished game won by every player with the highest score (ties share the win), the scores indexed
    /// by player.
    ///
    /// ```
    /// use coffer_kernel::Owner;
    /// use coffer_sdk::Outcome;
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

/// Applies `action` of `player` as every host does: in one kernel transaction, committed when the ruleset
/// accepts it (its events stay in the ledger's log for the caller to take), rolled back, changing nothing
/// and recording nothing, when it refuses (K8).
///
/// # Errors
/// The ruleset's refusal.
// Inlined into the adapter's step: out of line, its register saves and the transaction mark's copy were
// 1.5% of a wide-board playout's instructions.
#[inline(always)]
pub fn apply_atomically<R: Ruleset>(
    ruleset: &R,
    state: &mut R::State,
    player: Owner,
    action: &R::Action,
) -> Result<(), ActionError> {
    let mark = ruleset.ledger_mut(state).begin();
    match ruleset.apply(state, player, action) {
        Ok(()) => {
            ruleset.ledger_mut(state).commit(mark);
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
    use crate::{ActionError, Ruleset};
    use coffer_kernel::Event;
    use coffer_kernel::Owner;
    use coffer_kernel::state_hash;

    /// Applies an action that must be accepted; returns its events (taken from the ledger's log). Panics
    /// with the refusal otherwise.
    #[track_caller]
    pub fn applies<R: Ruleset>(
        ruleset: &R,
        state: &mut R::State,
        player: Owner,
        action: &R::Action,
    ) -> Vec<Event> {
        if let Err(e) = apply_atomically(ruleset, state, player, action) {
            panic!("{action:?} by {player} was refused: {e}");
        }
        ruleset.ledger_mut(state).take_events()
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
        let events = ruleset.ledger(state).events().len();
        let refusal = match apply_atomically(ruleset, state, player, action) {
            Ok(()) => panic!("{action:?} by {player} was accepted; it must be refused"),
            Err(e) => e,
        };
        assert_eq!(
            state_hash(state),
            before,
            "the refused {action:?} changed the state: {refusal}"
        );
        assert_eq!(
            ruleset.ledger(state).events().len(),
            events,
            "the refused {action:?} recorded events"
        );
        assert!(
            !legal.contains(action),
            "the refused {action:?} was listed as legal: {refusal}"
        );
        refusal
    }
}

//! The flow of the round: turns, the action phase's start and the strategy phase's card window.

use crate::config::{MAX_PLAYERS, NOBODY};
use crate::content::{AbilityKind, Window};
use crate::ids::{ROUND_KEY, note, owner, slot};
use crate::phase::{Phase, Step};
use crate::state::State;
use coffer_core::{Cause, Owner};

impl State {
    pub(crate) fn start_action_phase(&mut self, cause: Cause) {
        self.ledger.end_scope(coffer_core::Scope::Phase);
        let n = usize::from(self.players());
        let mut initiative = [u8::MAX; MAX_PLAYERS];
        for (c, card) in self.rules.cards.iter().enumerate() {
            let h = self.flow.holder[c];
            if h != NOBODY {
                let i = &mut initiative[usize::from(h)];
                *i = (*i).min(card.initiative);
            }
        }
        let mut order = [0u8; MAX_PLAYERS];
        for (i, o) in order.iter_mut().enumerate().take(n) {
            *o = i as u8;
        }
        order[..n].sort_by_key(|&p| (initiative[usize::from(p)], p));
        self.flow.order = order;
        self.flow.phase = Phase::Action;
        self.flow.step = Step::Turn;
        // T18: an eliminated player takes no turn.
        self.flow.passed = self.flow.out;
        let first = order[..n]
            .iter()
            .copied()
            .find(|&q| !self.is_eliminated(owner(q)))
            .unwrap_or(order[0]);
        self.flow.turn = first;
        self.ledger.note(
            ROUND_KEY,
            note::ACTION_PHASE,
            [i32::from(first), 0, 0],
            cause,
        );
    }

    /// The turn's end: the player may first use an ability for it (Predictive Intelligence, T23), then the
    /// next player who has not passed takes a turn.
    pub(crate) fn end_turn(&mut self, cause: Cause) {
        let p = owner(self.flow.turn);
        if !self.is_eliminated(p)
            && (self
                .reaction(p, AbilityKind::RedistributeAtEndOfTurn)
                .is_some()
                || self.may_add_action(p))
        {
            self.flow.step = Step::EndOfTurn;
            self.flow.resolver = self.flow.turn;
            return;
        }
        self.pass_turn(cause);
    }

    /// Whether `p` may now discard Minister of War for one more action (T24): they hold it, have not
    /// passed, and have a command token on the board.
    pub(crate) fn may_add_action(&self, p: Owner) -> bool {
        self.flow.minister == slot(p)
            && self.flow.passed & (1 << p.0) == 0
            && self.board_tokens(p) > 0
    }

    /// The next player who has not passed takes a turn; with none, the status phase.
    pub(crate) fn pass_turn(&mut self, cause: Cause) {
        let n = usize::from(self.players());
        let order = self.flow.order;
        let at = order[..n]
            .iter()
            .position(|&q| q == self.flow.turn)
            .unwrap_or(0);
        for k in 1..=n {
            let q = order[(at + k) % n];
            if self.flow.passed & (1 << q) == 0 {
                self.flow.turn = q;
                self.flow.step = Step::Turn;
                return;
            }
        }
        self.start_status(cause);
    }

    /// The players still in the game, from the speaker clockwise.
    pub(crate) fn live_from_speaker(&self) -> impl Iterator<Item = Owner> + use<> {
        let n = self.players();
        let (speaker, out) = (self.flow.speaker, self.flow.out);
        (0..n)
            .map(move |k| (speaker + k) % n)
            .filter(move |&q| out & (1 << q) == 0)
            .map(owner)
    }

    /// The window at the start of the strategy phase: from `flow.window` on, from the speaker, the next
    /// player holding a card for it decides; then the picks.
    pub(crate) fn strategy_window(&mut self) {
        if !self.next_holder(Window::StartOfStrategyPhase, Step::StrategyWindow) {
            self.flow.step = Step::Pick;
        }
    }

    /// From `flow.window` on, from the speaker, the next player still in the game holding an unplayed card
    /// for `window` decides in `step`; returns whether one does (the cursor then rests on them).
    pub(crate) fn next_holder(&mut self, window: Window, step: Step) -> bool {
        let n = self.players();
        while self.flow.window < n {
            let q = owner((self.flow.speaker + self.flow.window) % n);
            if !self.is_eliminated(q) && self.cards_for(q, window).next().is_some() {
                self.flow.step = step;
                self.flow.resolver = slot(q);
                return true;
            }
            self.flow.window += 1;
        }
        false
    }
}

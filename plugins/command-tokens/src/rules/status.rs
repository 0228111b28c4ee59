//! The status phase: returning tokens, the fleet pool's maximum and the end of the round.

use crate::config::NOBODY;
use crate::content::MAX_CARDS;
use crate::ids::{Pool, ROUND_KEY, arg, effect, kind, note, owner, slot};
use crate::phase::{Phase, Step};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{Cause, Owner};

impl State {
    /// A law's fleet-pool maximum (T7, T20) applied at once: each player over it returns their own excess
    /// tokens to reinforcements; a player holding other players' tokens there (T17) is asked to choose
    /// (returns whether that choice is awaited).
    pub(crate) fn enforce_fleet_max(&mut self, cause: Cause) -> bool {
        let Some(max) = self.fleet_pool_max() else {
            return false;
        };
        for q in self.live_from_speaker() {
            let excess = self.fleet_tokens(q).saturating_sub(u32::from(max));
            if excess == 0 {
                continue;
            }
            if self.captured(q) > 0 {
                self.flow.step = Step::Release;
                self.flow.resolver = slot(q);
                return true;
            }
            // Cannot fail: the excess is q's own tokens in the fleet pool.
            let _ = self.ledger.move_tokens(
                q,
                self.h.pools[Pool::Fleet.index()],
                self.h.reinforcements,
                excess,
                cause,
            );
            self.recheck_fleet(q, cause);
        }
        false
    }

    /// Armed Forces Standardization: the excess of each pool returns to reinforcements, then each pool is
    /// filled from reinforcements, tactic first, as far as they hold (and a law's fleet-pool maximum
    /// allows). Other players' tokens in a fleet pool (T17) stay and are not counted.
    pub(crate) fn standardize(&mut self, q: Owner, want: [u8; 3], cause: Cause) {
        let reinforcements = self.h.reinforcements;
        for pool in Pool::ALL {
            let (have, target) = (self.pool(q, pool), u32::from(want[pool.index()]));
            if have > target {
                // Cannot fail: the pool holds them.
                let _ = self.ledger.move_tokens(
                    q,
                    self.h.pools[pool.index()],
                    reinforcements,
                    have - target,
                    cause,
                );
            }
        }
        for pool in Pool::ALL {
            let (have, target) = (self.pool(q, pool), u32::from(want[pool.index()]));
            let room = match pool {
                Pool::Fleet => self.own_fleet_max(q).unwrap_or(u32::MAX),
                _ => u32::MAX,
            };
            let k = target
                .min(room)
                .saturating_sub(have)
                .min(self.reinforcements(q));
            if k > 0 {
                // Cannot fail: reinforcements hold k.
                let _ = self.ledger.move_tokens(
                    q,
                    reinforcements,
                    self.h.pools[pool.index()],
                    k,
                    cause,
                );
            }
        }
        self.recheck_fleet(q, cause);
    }

    pub(crate) fn return_token(&mut self, p: Owner, pool: Pool, cause: Cause) -> Applied {
        if self.pool(p, pool) == 0 {
            return Err(Refused::PoolDry(p, pool).error(self));
        }
        self.ledger.move_tokens(
            p,
            self.h.pools[pool.index()],
            self.h.reinforcements,
            1,
            cause,
        )?;
        self.ledger
            .note(self.agenda_key(), note::RETURN, [arg(p), 0, 0], cause);
        if pool == Pool::Fleet {
            self.recheck_fleet(p, cause);
        }
        self.flow.left -= 1;
        if self.flow.left == 0 {
            self.flow.status += 1;
            self.run_agenda(cause);
        }
        Ok(())
    }

    // ----- status phase -----

    pub(crate) fn start_status(&mut self, cause: Cause) {
        self.ledger.end_scope(coffer_core::Scope::Phase);
        self.ledger
            .note(ROUND_KEY, note::STATUS_PHASE, [0; 3], cause);
        // T8: every token on the board returns to reinforcements, as one kernel operation (K4.8).
        let returned = Cause::Effect(effect::STATUS_RETURN);
        // Cannot fail: every player has reinforcements.
        let _ = self.ledger.return_all_tokens(kind::SYSTEM, returned);
        self.flow.phase = Phase::Status;
        self.flow.status = 0;
        self.next_status_player(cause);
    }

    pub(crate) fn next_status_player(&mut self, cause: Cause) {
        let n = self.players();
        // T18: an eliminated player has no status phase.
        self.flow.status = self.skip_eliminated(self.flow.speaker, self.flow.status);
        if self.flow.status >= n {
            if self.rules.agenda_from > 0 && self.round() >= u32::from(self.rules.agenda_from) {
                self.start_agenda_phase(cause);
            } else {
                self.end_round(cause);
            }
            return;
        }
        let q = owner((self.flow.speaker + self.flow.status) % n);
        self.flow.resolver = slot(q);
        let tokens = self.rules.status_tokens[q.index()];
        if !self.enter_gain(q, tokens, cause) {
            self.flow.step = Step::Redistribute;
        }
    }

    /// Ends the round after the status phase: the next round's strategy phase, or, after the last round,
    /// the end of the game (no round begins after the last; the cards keep their holders for the table).
    pub(crate) fn end_round(&mut self, cause: Cause) {
        if self.ledger.clock().act + 1 >= u32::from(self.rules.rounds) {
            self.flow.phase = Phase::Over;
            self.flow.step = Step::Over;
            self.ledger.note(ROUND_KEY, note::GAME_OVER, [0; 3], cause);
            return;
        }
        self.ledger.end_scope(coffer_core::Scope::Act);
        self.flow.holder = [NOBODY; MAX_CARDS];
        self.flow.picks = 0;
        self.flow.passed = 0;
        self.flow.phase = Phase::Strategy;
        let speaker = i32::from(self.flow.speaker);
        self.ledger
            .note(ROUND_KEY, note::STRATEGY_PHASE, [speaker, 0, 0], cause);
        self.flow.window = 0;
        self.strategy_window();
    }
}

//! Command tokens gained, bought, placed, removed and redistributed, from reinforcements or a pool.

use crate::actions::Action;
use crate::ids::{Pool, arg, kind, note, owner, play_key, slot, system_key};
use crate::phase::{Phase, Step};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{ActionError, Cause, Key, Owner};

impl State {
    /// T2/T3: starts gaining `n` tokens, one pool choice each; with empty reinforcements nothing is gained
    /// (K4.2, reported in `forfeited`). Returns whether a choice is awaited.
    pub(crate) fn enter_gain(&mut self, p: Owner, n: u8, cause: Cause) -> bool {
        if n == 0 {
            return false;
        }
        if self.reinforcements(p) == 0 {
            self.forfeit(p, n, cause);
            return false;
        }
        self.flow.resolver = slot(p);
        self.flow.left = n;
        self.flow.step = Step::Gain;
        true
    }

    pub(crate) fn forfeit(&mut self, p: Owner, n: u8, cause: Cause) {
        // K4.2: asks the kernel, which gains what reinforcements hold (nothing here) and reports the rest.
        let lost = self
            .ledger
            .gain_tokens(p, self.h.pools[Pool::Tactic.index()], u32::from(n), cause)
            .map_or(u64::from(n), |g| g.lost);
        let f = &mut self.flow.forfeited[p.index()];
        *f = f.saturating_add(lost as u16);
    }

    pub(crate) fn gain(&mut self, p: Owner, pool: Pool, cause: Cause) -> Applied {
        if !self.may_gain_into(p, pool) {
            return Err(Refused::FleetPoolFull(p).error(self));
        }
        let got = self
            .ledger
            .gain_tokens(p, self.h.pools[pool.index()], 1, cause)?;
        if got.gained == 0 {
            return Err(Refused::NoTokenToGain(p).error(self));
        }
        self.flow.left = self.flow.left.saturating_sub(1);
        if self.flow.left > 0 && self.reinforcements(p) == 0 {
            let rest = self.flow.left;
            self.forfeit(p, rest, cause);
            self.flow.left = 0;
        }
        if self.flow.left == 0 {
            self.after_gain(cause);
        }
        Ok(())
    }

    pub(crate) fn after_gain(&mut self, cause: Cause) {
        match self.flow.phase {
            Phase::Status => self.flow.step = Step::Redistribute,
            // An action card's gain (T22): Summit, a Leadership Rider.
            Phase::Strategy => self.strategy_window(),
            Phase::Agenda if !self.flow.pact => self.resolve_riders(cause),
            _ => self.run_effects(cause),
        }
    }

    pub(crate) fn buy(&mut self, p: Owner, influence: u32, cause: Cause) -> Applied {
        let have = self.influence(p);
        if u64::from(influence) > have {
            return Err(Refused::Overspend { p, influence, have }.error(self));
        }
        let tokens = influence / self.flow.rate.max(1);
        if tokens > self.reinforcements(p) {
            return Err(Refused::BuysTooMany {
                p,
                influence,
                tokens,
            }
            .error(self));
        }
        if influence > 0 {
            self.ledger
                .spend(self.h.influence[p.index()], u64::from(influence), cause)?;
        }
        let code = match tokens {
            0 => note::BUY_NONE,
            1 => note::BUY_ONE,
            _ => note::BUY,
        };
        let key = Key::new(p, kind::INFLUENCE, 0);
        self.ledger
            .note(key, code, [influence as i32, tokens as i32, 0], cause);
        if !self.enter_gain(p, tokens as u8, cause) {
            self.run_effects(cause);
        }
        Ok(())
    }

    pub(crate) fn diplomacy(&mut self, p: Owner, system: u16, cause: Cause) -> Applied {
        let s = self.system_index(system)?;
        if self.rules.systems[s].no_diplomacy && self.flow.phase != Phase::Agenda {
            return Err(Refused::NoDiplomacy(self.flow.card, system).error(self));
        }
        self.ledger
            .note(system_key(system), note::TARGET, [arg(p), 0, 0], cause);
        self.flow.target = system;
        self.flow.others = 1;
        self.diplomacy_next(cause);
        Ok(())
    }

    /// Places a token of each other player in Diplomacy's system, from reinforcements (T3), where one
    /// already is to reinforcements (T6), or waits for the player's choice of a pool (T3 fallback).
    pub(crate) fn diplomacy_next(&mut self, cause: Cause) {
        let n = self.players();
        let s = usize::from(self.flow.target);
        while self.flow.others < n {
            let q = owner((self.flow.resolver + self.flow.others) % n);
            if self.is_eliminated(q) {
                // T18: an eliminated player places nothing.
            } else if self.has_token(q, s) || self.reinforcements(q) > 0 {
                // Cannot fail: reinforcements hold a token, or the zone bounces it (T6).
                let _ = self
                    .ledger
                    .place_from_reserve(q, self.h.systems[s], None, cause);
            } else if self.sheet(q) > 0 {
                self.flow.step = Step::Fallback;
                return;
            }
            self.flow.others += 1;
        }
        if self.flow.phase == Phase::Agenda && !self.flow.pact {
            // A Diplomacy Rider (T22).
            self.resolve_riders(cause);
        } else {
            self.run_effects(cause);
        }
    }

    pub(crate) fn fallback(&mut self, q: Owner, pool: Pool, cause: Cause) -> Applied {
        self.place_from_pool(q, pool, cause)?;
        self.diplomacy_next(cause);
        Ok(())
    }

    /// T3: `q`'s reinforcements are empty, so the token `q` places in the target system comes from
    /// `pool`, which must hold one; then the next player places.
    pub(crate) fn place_from_pool(&mut self, q: Owner, pool: Pool, cause: Cause) -> Applied {
        if self.pool(q, pool) == 0 {
            return Err(Refused::PoolEmpty(q, pool).error(self));
        }
        let s = usize::from(self.flow.target);
        self.ledger.place_from_reserve(
            q,
            self.h.systems[s],
            Some(self.h.pools[pool.index()]),
            cause,
        )?;
        if pool == Pool::Fleet {
            self.recheck_fleet(q, cause);
        }
        self.flow.others += 1;
        Ok(())
    }

    pub(crate) fn remove_token(&mut self, p: Owner, system: u16, cause: Cause) -> Applied {
        let s = self.system_index(system)?;
        if !self.has_token(p, s) {
            return Err(Refused::NoTokenIn(p, system).error(self));
        }
        self.ledger
            .move_tokens(p, self.h.systems[s], self.h.reinforcements, 1, cause)?;
        self.run_effects(cause);
        Ok(())
    }

    pub(crate) fn place(
        &mut self,
        p: Owner,
        system: u16,
        fallback: Option<Pool>,
        cause: Cause,
    ) -> Applied {
        let s = self.system_index(system)?;
        self.place_token(p, s, fallback, cause)?;
        self.run_effects(cause);
        Ok(())
    }

    /// Places a command token of `p` "from reinforcements" in system `s` (T3, T6): into reinforcements
    /// where one is already there, else from `fallback` when reinforcements are empty; nothing when the
    /// command sheet is empty too.
    pub(crate) fn place_token(
        &mut self,
        p: Owner,
        s: usize,
        fallback: Option<Pool>,
        cause: Cause,
    ) -> Applied {
        let system = s as u16;
        let direct = self.reinforcements(p) > 0 || self.has_token(p, s);
        match fallback {
            None if direct => {
                self.ledger
                    .place_from_reserve(p, self.h.systems[s], None, cause)?;
            }
            // No token anywhere to place: nothing happens.
            None if self.sheet(p) == 0 => {
                self.ledger.note(
                    system_key(system),
                    note::NOTHING_TO_PLACE,
                    [arg(p), 0, 0],
                    cause,
                );
            }
            None => {
                return Err(Refused::NameAPool(p).error(self));
            }
            Some(pool) if direct => {
                return Err(Refused::NoFallback(p, pool).error(self));
            }
            Some(pool) if self.pool(p, pool) == 0 => {
                return Err(Refused::PoolEmpty(p, pool).error(self));
            }
            Some(pool) => {
                self.ledger.place_from_reserve(
                    p,
                    self.h.systems[s],
                    Some(self.h.pools[pool.index()]),
                    cause,
                )?;
                if pool == Pool::Fleet {
                    self.recheck_fleet(p, cause);
                }
            }
        }
        Ok(())
    }

    pub(crate) fn redistribute(
        &mut self,
        p: Owner,
        want: [u8; 3],
        cause: Cause,
    ) -> Result<(), ActionError> {
        self.redistribute_sheet(p, want, cause)?;
        if self.flow.phase == Phase::Status {
            self.flow.status += 1;
            self.next_status_player(cause);
        } else {
            self.run_effects(cause);
        }
        Ok(())
    }

    /// Redistributes `p`'s command sheet as `want` (tactic, fleet, strategy), the fleet limit re-checked.
    pub(crate) fn redistribute_sheet(
        &mut self,
        p: Owner,
        want: [u8; 3],
        cause: Cause,
    ) -> Result<(), ActionError> {
        let total = self.sheet(p);
        let sum: u32 = want.iter().map(|&x| u32::from(x)).sum();
        if sum != total {
            return Err(Refused::SheetSum { p, want, total }.error(self));
        }
        if let (Some(m), Some(own)) = (self.fleet_pool_max(), self.own_fleet_max(p))
            && u32::from(want[1]) > own
        {
            return Err(Refused::FleetOverMax {
                p,
                fleet: want[1],
                max: m,
            }
            .error(self));
        }
        let have = [
            self.pool(p, Pool::Tactic),
            self.pool(p, Pool::Fleet),
            self.pool(p, Pool::Strategy),
        ];
        // Move surpluses into deficits, pool by pool.
        for from in 0..3 {
            let mut surplus = have[from].saturating_sub(u32::from(want[from]));
            for (to, &wanted) in want.iter().enumerate() {
                if surplus == 0 {
                    break;
                }
                let current = self.ledger.tokens(self.h.pools[to], p);
                let deficit = u32::from(wanted).saturating_sub(current);
                if to == from || deficit == 0 {
                    continue;
                }
                let k = surplus.min(deficit);
                self.ledger
                    .move_tokens(p, self.h.pools[from], self.h.pools[to], k, cause)?;
                surplus -= k;
            }
        }
        self.ledger
            .note(play_key(p), note::REDISTRIBUTE, want.map(i32::from), cause);
        // T7: a smaller fleet pool may leave ships over the limit (a larger one cannot, and nothing is
        // pending while an action is taken).
        if u32::from(want[1]) < have[1] {
            self.recheck_fleet(p, cause);
        }
        Ok(())
    }

    /// Every redistribution of `p`'s command sheet (T8), within a law's fleet-pool maximum.
    pub(crate) fn push_redistributions(&self, p: Owner, out: &mut Vec<Action>) {
        let total = self.sheet(p) as u8;
        let fleet_max = self
            .own_fleet_max(p)
            .map_or(total, |m| (m as u8).min(total));
        for tactic in 0..=total {
            for fleet in 0..=fleet_max.min(total - tactic) {
                out.push(Action::Redistribute {
                    tactic,
                    fleet,
                    strategy: total - tactic - fleet,
                });
            }
        }
    }

    /// Whether a gained token of `player` may go into `pool` (T2; a law's fleet-pool maximum).
    #[inline]
    /// The ways `p` may place a command token "from reinforcements" in system `s` (T3, T6): without a
    /// fallback pool, or, with reinforcements empty and no token of theirs there, from each pool that
    /// holds one.
    pub(crate) fn push_placements(
        &self,
        p: Owner,
        s: usize,
        out: &mut Vec<Action>,
        action: impl Fn(Option<Pool>) -> Action,
    ) {
        if self.reinforcements(p) > 0 || self.has_token(p, s) || self.sheet(p) == 0 {
            out.push(action(None));
        } else {
            for pool in Pool::ALL {
                if self.pool(p, pool) > 0 {
                    out.push(action(Some(pool)));
                }
            }
        }
    }

    pub(crate) fn may_gain_into(&self, player: Owner, pool: Pool) -> bool {
        pool != Pool::Fleet
            || self
                .own_fleet_max(player)
                .is_none_or(|m| self.pool(player, Pool::Fleet) < m)
    }

    /// The most influence `player` may spend in a buy: what they have, and no more tokens than their
    /// reinforcements hold (T3: a token that cannot be gained cannot be bought).
    #[inline]
    pub(crate) fn most_influence_to_spend(&self, player: Owner) -> u32 {
        let rate = u64::from(self.flow.rate.max(1));
        let by_reserve = u64::from(self.reinforcements(player)) * rate + (rate - 1);
        self.influence(player)
            .min(by_reserve)
            .min(u64::from(u32::MAX)) as u32
    }
}

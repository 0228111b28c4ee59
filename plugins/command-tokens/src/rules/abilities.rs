//! Faction and technology abilities: reactions, Fabrication, Nullification, Foresight.

use crate::content::AbilityKind;
use crate::ids::{Pool, arg, kind, note, owner};
use crate::phase::Step;
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{ActionError, Cause, Key, Owner};

/// An ability's kind, and the refusal for a use of it without the choice it needs.
type Needs = (AbilityKind, fn(u8) -> Refused);
/// Fabrication needs a pool (T28).
const FABRICATION: Needs = (AbilityKind::Fabrication, Refused::AbilityNeedsPool);
/// Foresight needs a system (T23).
const FORESIGHT: Needs = (AbilityKind::Foresight, Refused::AbilityNeedsSystem);

impl State {
    /// `p`'s ability of this kind that they may use now, by index: its card is ready and the strategy pool
    /// holds what it spends.
    pub(crate) fn reaction(&self, p: Owner, kind: AbilityKind) -> Option<usize> {
        (0..self.rules.abilities.len()).find(|&i| {
            let a = &self.rules.abilities[i];
            a.kind == kind && owner(a.player) == p && self.may_use_ability(i)
        })
    }

    /// Foresight's systems: adjacent to the activated system and holding no other player's ships.
    pub(crate) fn foresight_systems(&self, p: Owner) -> impl Iterator<Item = u16> + '_ {
        let active = usize::from(self.flow.system);
        self.adjacent_to(active)
            .filter(move |&d| !self.others_have_ships(p, usize::from(d)))
    }

    /// Spends ability `i`'s strategy tokens and exhausts its card if it exhausts, and says so.
    pub(crate) fn spend_ability(&mut self, p: Owner, i: usize, cause: Cause) -> Applied {
        let a = &self.rules.abilities[i];
        let (cost, exhausts) = (a.cost, a.exhausts);
        // Foresight's token goes from the strategy pool to the system its ships move to, not to reinforcements.
        let paid = if a.kind == AbilityKind::Foresight {
            0
        } else {
            cost
        };
        self.pay_for_ability(p, i, paid, exhausts, cause)?;
        let key = Key::new(p, kind::ABILITY, i as u32);
        self.ledger
            .note(key, note::COMPONENT, [arg(p), i32::from(cost), 0], cause);
        Ok(())
    }

    /// Pays `cost` strategy tokens (to reinforcements) for ability `i`, and exhausts its card if it
    /// `exhausts`.
    pub(crate) fn pay_for_ability(
        &mut self,
        p: Owner,
        i: usize,
        cost: u8,
        exhausts: bool,
        cause: Cause,
    ) -> Applied {
        if cost > 0 {
            self.ledger.move_tokens(
                p,
                self.h.pools[Pool::Strategy.index()],
                self.h.reinforcements,
                u32::from(cost),
                cause,
            )?;
        }
        if exhausts {
            self.ledger.activate(self.h.abilities[i], cause)?;
        }
        Ok(())
    }

    /// The ability `ability` of `p`, of this kind and usable now, or a refusal saying why not.
    pub(crate) fn usable(
        &self,
        p: Owner,
        ability: u8,
        kind: AbilityKind,
    ) -> Result<usize, ActionError> {
        let i = usize::from(ability);
        match self.rules.abilities.get(i) {
            Some(a) if a.kind == kind && owner(a.player) == p && self.may_use_ability(i) => Ok(i),
            Some(_) => Err(Refused::NotUsableNow(p, ability).error(self)),
            None => Err(Refused::NoSuchAbility(ability).error(self)),
        }
    }

    /// [`State::usable`], then the choice the ability needs, or the refusal `missing` makes
    /// without one.
    fn usable_with<T>(
        &self,
        p: Owner,
        ability: u8,
        (kind, missing): Needs,
        choice: Option<T>,
    ) -> Result<(usize, T), ActionError> {
        let i = self.usable(p, ability, kind)?;
        match choice {
            Some(c) => Ok((i, c)),
            None => Err(missing(ability).error(self)),
        }
    }

    /// T28, Fabrication: a relic fragment is purged for a command token gained into `pool` (T2; none with
    /// empty reinforcements, T3); it takes the turn.
    pub(crate) fn fabrication(
        &mut self,
        p: Owner,
        ability: u8,
        pool: Option<Pool>,
        cause: Cause,
    ) -> Applied {
        let (i, pool) = self.usable_with(p, ability, FABRICATION, pool)?;
        if !self.may_gain_into(p, pool) {
            return Err(Refused::FleetAtMax(p).error(self));
        }
        let fragments = self.h.fragments[p.index()];
        self.spend_ability(p, i, cause)?;
        self.ledger.spend(fragments, 1, cause)?;
        // K4.2: nothing is gained from empty reinforcements (reported as lost).
        let lost = self
            .ledger
            .gain_tokens(p, self.h.pools[pool.index()], 1, cause)?
            .lost;
        let f = &mut self.flow.forfeited[p.index()];
        *f = f.saturating_add(lost as u16);
        self.end_turn(cause);
        Ok(())
    }

    /// Nullification Field: spend, exhaust, and the active player's turn ends at once.
    pub(crate) fn nullify(
        &mut self,
        p: Owner,
        ability: u8,
        system: Option<u16>,
        cause: Cause,
    ) -> Applied {
        let i = self.usable(p, ability, AbilityKind::EndActivatorsTurn)?;
        if system.is_some() {
            return Err(Refused::AbilityTakesNoSystem(ability).error(self));
        }
        self.spend_ability(p, i, cause)?;
        self.pass_turn(cause);
        Ok(())
    }

    /// Foresight: a token from the strategy pool is placed in the adjacent system (T6: where one of the
    /// player's is, it goes to reinforcements), and every ship of the player's moves there from the
    /// activated system; no space combat follows.
    pub(crate) fn foresight(
        &mut self,
        p: Owner,
        ability: u8,
        system: Option<u16>,
        cause: Cause,
    ) -> Applied {
        let (i, system) = self.usable_with(p, ability, FORESIGHT, system)?;
        let d = self.system_index(system)?;
        if !self.foresight_systems(p).any(|x| x == system) {
            return Err(Refused::ForesightTarget(self.flow.system, system).error(self));
        }
        let cost = u32::from(self.rules.abilities[i].cost);
        if self.pool(p, Pool::Strategy) < cost {
            return Err(Refused::PoolDry(p, Pool::Strategy).error(self));
        }
        self.spend_ability(p, i, cause)?;
        // K4.3: where one of p's tokens already is, the token goes to reinforcements instead (T6).
        self.ledger.move_tokens(
            p,
            self.h.pools[Pool::Strategy.index()],
            self.h.systems[d],
            cost,
            cause,
        )?;
        let (active, n) = (usize::from(self.flow.system), self.rules.class_count());
        self.move_every_ship(p, active, d, n, cause)?;
        self.recheck_fleet(p, cause);
        self.flow.step = Step::Produce;
        Ok(())
    }

    /// Predictive Intelligence: at the end of the turn, exhaust it to redistribute; the turn then passes.
    pub(crate) fn predictive_redistribution(
        &mut self,
        p: Owner,
        want: [u8; 3],
        cause: Cause,
    ) -> Result<(), ActionError> {
        let Some(i) = self.reaction(p, AbilityKind::RedistributeAtEndOfTurn) else {
            return Err(Refused::NoRedistributeAbility(p).error(self));
        };
        self.spend_ability(p, i, cause)?;
        self.redistribute_sheet(p, want, cause)?;
        // Minister of War may still follow.
        self.end_turn(cause);
        Ok(())
    }

    /// Whether component action `i` may be used now: its card is ready and its player's strategy pool
    /// holds what it spends.
    pub(crate) fn may_use_ability(&self, i: usize) -> bool {
        let a = &self.rules.abilities[i];
        let p = owner(a.player);
        let fragment = a.kind != AbilityKind::Fabrication
            || self
                .h
                .fragments
                .get(p.index())
                .is_some_and(|&f| self.ledger.value(f) > 0);
        fragment
            && !self.ledger.is_exhausted(self.h.abilities[i])
            && self.pool(p, Pool::Strategy) >= u32::from(a.cost)
    }
}

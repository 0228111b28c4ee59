//! The tactical action: activation, production, Star Forge, component actions, passing and the fleet limit.

use crate::actions::Action;
use crate::content::AbilityKind;
use crate::ids::{Pool, arg, kind, note, owner, play_key, slot, system_key};
use crate::phase::Step;
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{Cause, Key, Owner, Refusal};

impl State {
    // ----- action phase -----

    pub(crate) fn tactical(&mut self, p: Owner, system: u16, cause: Cause) -> Applied {
        let s = self.system_index(system)?;
        if self.pool(p, Pool::Tactic) == 0 {
            return Err(Refused::NoTacticToken(p).error(self));
        }
        if self.has_token(p, s) {
            return Err(Refused::HoldsToken(p, system).error(self));
        }
        self.ledger.move_tokens(
            p,
            self.h.pools[Pool::Tactic.index()],
            self.h.systems[s],
            1,
            cause,
        )?;
        self.ledger
            .note(system_key(system), note::ACTIVATE, [arg(p), 0, 0], cause);
        self.activation_fleet_loss(p, s, cause);
        self.flow.step = Step::Move;
        // T23, Nullification Field: a player with ships there may end the turn at once.
        let nullifier = self.owners().find(|&q| {
            q != p
                && !self.is_eliminated(q)
                && self.all_ships(q, s) > 0
                && self.reaction(q, AbilityKind::EndActivatorsTurn).is_some()
        });
        if let Some(q) = nullifier {
            self.flow.step = Step::Nullify;
            self.flow.resolver = slot(q);
        }
        self.flow.system = system;
        self.flow.built = 0;
        Ok(())
    }

    /// T21, Neuroglaive: activating a system that holds ships of a player who owns it costs the active
    /// player fleet-pool tokens, returned to reinforcements (as many as the fleet pool holds); the fleet
    /// limit applies at once (T7).
    pub(crate) fn activation_fleet_loss(&mut self, p: Owner, s: usize, cause: Cause) {
        for q in self.owners() {
            let loss = self.rules.fleet_loss[q.index()];
            if q == p || loss == 0 || self.is_eliminated(q) || self.all_ships(q, s) == 0 {
                continue;
            }
            let k = u32::from(loss).min(self.pool(p, Pool::Fleet));
            if k > 0 {
                // Cannot fail: the fleet pool holds k of p's tokens.
                let _ = self.ledger.move_tokens(
                    p,
                    self.h.pools[Pool::Fleet.index()],
                    self.h.reinforcements,
                    k,
                    cause,
                );
            }
            self.ledger.note(
                system_key(s as u16),
                note::FLEET_LOSS,
                [arg(p), arg(q), k as i32],
                cause,
            );
            self.recheck_fleet(p, cause);
        }
    }

    pub(crate) fn produce(&mut self, p: Owner, class: u8, cause: Cause) -> Applied {
        let c = self.class_index(class)?;
        if self.flow.built >= self.rules.production {
            return Err(Refused::ProductionUsed(p, self.flow.built).error(self));
        }
        if !self.may_produce(p, c) {
            return Err(Refused::MayNotProduce(p, class).error(self));
        }
        if self.ship_reserve(p, c) == 0 {
            return Err(Refused::NoShipLeft(p, class).error(self));
        }
        let s = usize::from(self.flow.system);
        if let Some(q) = self.opponent(p) {
            return Err(Refused::EnemyShips(q, self.flow.system).error(self));
        }
        let n = self.rules.class_count();
        self.ledger
            .move_tokens(p, self.h.ship_reserve[c], self.h.ships[s * n + c], 1, cause)?;
        self.flow.built += 1;
        // T7 holds at all times: an excess is a choice the player makes before producing on.
        if self.counts_against_fleet(p, c) {
            self.check_fleet_in(p, s, cause);
        }
        Ok(())
    }

    /// Whether `p`'s ships of class `c` may count against the fleet pool: a fleet class, or fighters for a
    /// player with Fighter II (T25).
    #[inline]
    pub(crate) fn counts_against_fleet(&self, p: Owner, c: usize) -> bool {
        self.rules.classes[c].fleet || self.rules.excess_fighters[p.index()] > 0
    }

    /// T19: the Star Forge component action; it takes the turn.
    pub(crate) fn star_forge(&mut self, p: Owner, system: u16, class: u8, cause: Cause) -> Applied {
        let s = self.system_index(system)?;
        let c = self.class_index(class)?;
        let Some(forge) = &self.rules.star_forge[p.index()] else {
            return Err(Refused::NoStarForge(p).error(self));
        };
        let (cost, with) = (forge.cost, forge.with);
        let Some(&(_, most)) = forge.place.iter().find(|&&(k, _)| k == class) else {
            return Err(Refused::ForgeClass(p, class).error(self));
        };
        if self.ships(p, s, usize::from(with)) == 0 {
            return Err(Refused::ForgeNoShip { p, system, with }.error(self));
        }
        let have = self.pool(p, Pool::Strategy);
        if have < u32::from(cost) {
            return Err(Refused::ForgeCost { p, cost, have }.error(self));
        }
        let placed = self.ship_reserve(p, c).min(u32::from(most));
        if placed == 0 {
            return Err(Refused::NoShipLeft(p, class).error(self));
        }
        let (reinforcements, strategy) =
            (self.h.reinforcements, self.h.pools[Pool::Strategy.index()]);
        if cost > 0 {
            self.ledger
                .move_tokens(p, strategy, reinforcements, u32::from(cost), cause)?;
        }
        self.ledger.note(
            system_key(system),
            note::STAR_FORGE,
            [arg(p), i32::from(cost), 0],
            cause,
        );
        let n = self.rules.class_count();
        self.ledger.move_tokens(
            p,
            self.h.ship_reserve[c],
            self.h.ships[s * n + c],
            placed,
            cause,
        )?;
        if self.counts_against_fleet(p, c) {
            self.check_fleet_in(p, s, cause);
        }
        self.end_turn(cause);
        Ok(())
    }

    /// T21: a component action that spends strategy tokens; what else it does (infantry, trade goods) is
    /// not modelled. It takes the turn.
    pub(crate) fn component_action(&mut self, p: Owner, ability: u8, cause: Cause) -> Applied {
        let i = usize::from(ability);
        let Some(a) = self.rules.abilities.get(i) else {
            return Err(Refused::NoSuchComponent(ability).error(self));
        };
        let (cost, exhausts) = (a.cost, a.exhausts);
        if owner(a.player) != p {
            return Err(Refused::NotYourAbility(p, ability).error(self));
        }
        if self.ledger.is_exhausted(self.h.abilities[i]) {
            return Err(Refused::AbilityUsed(p, ability).error(self));
        }
        let have = self.pool(p, Pool::Strategy);
        if have < u32::from(cost) {
            return Err(Refused::AbilityCost {
                p,
                ability,
                cost,
                have,
            }
            .error(self));
        }
        self.pay_for_ability(p, i, cost, exhausts, cause)?;
        let key = Key::new(p, kind::ABILITY, u32::from(ability));
        self.ledger
            .note(key, note::COMPONENT, [arg(p), i32::from(cost), 0], cause);
        self.end_turn(cause);
        Ok(())
    }

    pub(crate) fn pass(&mut self, p: Owner, cause: Cause) -> Applied {
        for c in 0..self.rules.cards.len() {
            if self.flow.holder[c] == slot(p) && !self.ledger.is_exhausted(self.h.cards[c]) {
                return Err(Refused::PassFirst(p, c as u8).error(self));
            }
        }
        self.ledger.note(play_key(p), note::PASS, [0; 3], cause);
        self.flow.passed |= 1 << slot(p);
        self.end_turn(cause);
        Ok(())
    }

    pub(crate) fn remove_ship(
        &mut self,
        p: Owner,
        system: u16,
        class: u8,
        cause: Cause,
    ) -> Applied {
        let s = self.system_index(system)?;
        let key = State::limit_key(p, s);
        let Some(first) = self.ledger.pending().first() else {
            return Err(Refused::NoFleetChoice.error(self));
        };
        if first.key.owner != p {
            return Err(Refusal::AwaitingChoice {
                owner: first.key.owner,
                key: first.key,
                excess: first.excess,
            }
            .into());
        }
        if !self.ledger.pending().iter().any(|d| d.key == key) {
            return Err(Refused::NotOverFleet(p, system).error(self));
        }
        let c = self.class_index(class)?;
        let counted = self.rules.transported == Some(class) && self.excess_fighters(p, s) > 0;
        if !self.rules.classes[c].fleet && !counted {
            return Err(Refused::NotFleetClass(class).error(self));
        }
        if self.ships(p, s, c) == 0 {
            return Err(Refused::NoShipIn(p, class, system).error(self));
        }
        let n = self.rules.class_count();
        self.ledger
            .move_tokens(p, self.h.ships[s * n + c], self.h.ship_reserve[c], 1, cause)?;
        self.check_fleet_in(p, s, cause);
        Ok(())
    }

    /// T19: every Star Forge `p` may use now: each system holding one of their ships of the Star Forge's
    /// class, each choice with a piece left in reinforcements; none without the strategy tokens it spends.
    pub(crate) fn push_star_forge(&self, p: Owner, out: &mut Vec<Action>) {
        let Some(forge) = &self.rules.star_forge[p.index()] else {
            return;
        };
        if self.pool(p, Pool::Strategy) < u32::from(forge.cost) {
            return;
        }
        for s in 0..self.rules.system_count() {
            if self.ships(p, s, usize::from(forge.with)) == 0 {
                continue;
            }
            for &(class, _) in &forge.place {
                if self.ship_reserve(p, usize::from(class)) > 0 {
                    out.push(Action::StarForge {
                        system: s as u16,
                        class,
                    });
                }
            }
        }
    }

    /// Production in the activated system: a ship of each class left in reinforcements while the
    /// tactical action may produce more and no other player's ships are there (LRR 67.6), then `done`;
    /// and, the invasion step being over, the elimination of each player still in the game (T18).
    pub(crate) fn push_production(&self, p: Owner, out: &mut Vec<Action>) {
        let s = usize::from(self.flow.system);
        if self.flow.built < self.rules.production && !self.others_have_ships(p, s) {
            for c in 0..self.rules.class_count() {
                if self.may_produce(p, c) && self.ship_reserve(p, c) > 0 {
                    out.push(Action::Produce { class: c as u8 });
                }
            }
        }
        out.push(Action::Done);
        if self.rules.elimination && self.live_players() > 1 {
            for q in self.owners().filter(|&q| !self.is_eliminated(q)) {
                out.push(Action::Eliminate { player: q.0 });
            }
        }
    }
}

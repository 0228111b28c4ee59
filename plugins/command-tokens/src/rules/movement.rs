//! Movement into the activated system and whether a space combat follows.

use crate::actions::Action;
use crate::content::AbilityKind;
use crate::ids::{arg, kind, note, owner, slot, system_key};
use crate::phase::Step;
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{Cause, Owner};

impl State {
    // ----- movement and space combat -----

    /// The other player with ships in the activated system, the first clockwise from `p`.
    pub(crate) fn opponent(&self, p: Owner) -> Option<Owner> {
        let owners = self.ship_owners(usize::from(self.flow.system));
        let n = self.players();
        (1..n)
            .map(|i| owner((slot(p) + i) % n))
            .find(|q| owners & (1 << q.0) != 0)
    }

    /// T15 (LRR 89.3): a space combat follows movement when the active player and another player both
    /// have ships in the activated system.
    pub(crate) fn combat_due(&self) -> bool {
        let p = owner(self.flow.turn);
        self.all_ships(p, usize::from(self.flow.system)) > 0 && self.opponent(p).is_some()
    }

    /// T14 (LRR 58.4, 89.2, 95): one ship moves into the activated system from a system without a command
    /// token of the player's, along a path no longer than its move value that passes through no system
    /// holding another player's ships; it transports up to its capacity of fighters from the system it
    /// starts in. The fleet pool limits the ships that arrive at once (T7, LRR 37.3).
    pub(crate) fn move_ship(
        &mut self,
        p: Owner,
        from: u16,
        class: u8,
        fighters: u8,
        cause: Cause,
    ) -> Applied {
        let f = self.system_index(from)?;
        let c = self.class_index(class)?;
        let active = usize::from(self.flow.system);
        if f == active {
            return Err(Refused::Arrived(from).error(self));
        }
        if self.has_token(p, f) {
            return Err(Refused::TokenHolds(p, from).error(self));
        }
        let Some(reach) = self.move_value(p, c) else {
            return Err(Refused::NoMoveValue(class).error(self));
        };
        if self.ships(p, f, c) == 0 {
            return Err(Refused::NoShipIn(p, class, from).error(self));
        }
        let d = self.distances(p)[f];
        if d == u8::MAX {
            return Err(Refused::NoPath(from, self.flow.system).error(self));
        }
        if d > reach {
            return Err(Refused::TooFar {
                class,
                reach,
                from,
                distance: d,
                to: self.flow.system,
            }
            .error(self));
        }
        let carried = match self.rules.transported {
            Some(t) if fighters > 0 => {
                let capacity = self.rules.classes[c].capacity;
                let there = self.ships(p, f, usize::from(t));
                if fighters > capacity {
                    return Err(Refused::OverCapacity {
                        class,
                        capacity,
                        fighters,
                    }
                    .error(self));
                }
                if u32::from(fighters) > there {
                    return Err(Refused::FewFighters {
                        p,
                        from,
                        there,
                        fighters,
                    }
                    .error(self));
                }
                Some(usize::from(t))
            }
            None if fighters > 0 => {
                return Err(Refused::NoTransported.error(self));
            }
            _ => None,
        };
        let n = self.rules.class_count();
        self.ledger.move_tokens(
            p,
            self.h.ships[f * n + c],
            self.h.ships[active * n + c],
            1,
            cause,
        )?;
        if let Some(t) = carried {
            self.ledger.move_tokens(
                p,
                self.h.ships[f * n + t],
                self.h.ships[active * n + t],
                u32::from(fighters),
                cause,
            )?;
        }
        // T7 holds at all times (LRR 37.3): an excess is removed before anything else.
        if self.counts_against_fleet(p, c) {
            self.check_fleet_in(p, active, cause);
        }
        // T25: the capacity that left may leave fighters beyond it where the ship started.
        if self.rules.excess_fighters[p.index()] > 0 {
            self.check_fleet_in(p, f, cause);
        }
        Ok(())
    }

    /// Ends movement: a space combat with the other player whose ships are there, or production.
    pub(crate) fn end_movement(&mut self, cause: Cause) {
        let p = owner(self.flow.turn);
        self.ledger.note(
            system_key(self.flow.system),
            note::MOVEMENT_OVER,
            [arg(p), 0, 0],
            cause,
        );
        match self.opponent(p) {
            Some(q) if self.combat_due() => {
                self.flow.defender = slot(q);
                // T23, Foresight: the player whose ships are there may move them out first.
                if self.reaction(q, AbilityKind::Foresight).is_some()
                    && self.foresight_systems(q).next().is_some()
                {
                    self.flow.step = Step::Foresight;
                    self.flow.resolver = slot(q);
                    return;
                }
                self.start_combat(cause);
            }
            _ => self.flow.step = Step::Produce,
        }
    }

    /// T14: every single-ship move into the activated system, with each number of fighters it may
    /// transport, by ascending system and class.
    pub(crate) fn push_moves(&self, p: Owner, out: &mut Vec<Action>) {
        let active = usize::from(self.flow.system);
        let dist = self.distances(p);
        // The player's own ships zones from the kernel's board index (K4.8), in creation order: by
        // ascending system, then class. Only the systems and classes where the player has ships are
        // looked at.
        for z in self.ledger.zones_holding_in(p, kind::SHIPS) {
            let (from, c) = self.ships_zone(z);
            let Some(&d) = dist.get(from) else {
                continue;
            };
            if from == active
                || d == u8::MAX
                || self.move_value(p, c).is_none_or(|m| m < d)
                || self.has_token(p, from)
            {
                continue;
            }
            let fighters = self
                .rules
                .transported
                .map_or(0, |t| self.ships(p, from, usize::from(t)));
            for k in 0..=fighters.min(u32::from(self.rules.classes[c].capacity)) {
                out.push(Action::Move {
                    from: from as u16,
                    class: c as u8,
                    fighters: k as u8,
                });
            }
        }
    }

    /// Moves every ship of `p`'s in system `from` to system `to` (`n`: the classes in play).
    pub(crate) fn move_every_ship(
        &mut self,
        p: Owner,
        from: usize,
        to: usize,
        n: usize,
        cause: Cause,
    ) -> Applied {
        for c in 0..n {
            let ships = self.ships(p, from, c);
            if ships > 0 {
                self.ledger.move_tokens(
                    p,
                    self.h.ships[from * n + c],
                    self.h.ships[to * n + c],
                    ships,
                    cause,
                )?;
            }
        }
        Ok(())
    }
}

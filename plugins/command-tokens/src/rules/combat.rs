//! Space combat: announcements, rolls, hits, retreats and the winner's edict.

use crate::config::NOBODY;
use crate::ids::{Pool, arg, kind, note, owner, play_key, slot, system_key};
use crate::phase::{PendingCard, Phase, Step};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{ActionError, Cause, Key, Owner};

impl State {
    /// T15: the space combat in the activated system begins, between the active player and the defender.
    pub(crate) fn start_combat(&mut self, cause: Cause) {
        let (p, q) = (owner(self.flow.turn), owner(self.flow.defender));
        self.ledger.note(
            system_key(self.flow.system),
            note::COMBAT,
            [arg(p), arg(q), 0],
            cause,
        );
        self.start_combat_round();
    }

    /// A combat round (LRR 78.4): the defender, then the attacker, may announce a retreat, each only with a
    /// system to retreat to, and the attacker not after the defender did; then the combat rolls.
    pub(crate) fn start_combat_round(&mut self) {
        self.flow.retreat = NOBODY;
        self.flow.hits = [0; 2];
        self.flow.window = 0;
        self.combat_window();
    }

    /// LRR 78.4: the defender, then the attacker, announces a retreat or not, if able; else the rolls.
    pub(crate) fn announcements(&mut self) {
        let (attacker, defender) = (owner(self.flow.turn), owner(self.flow.defender));
        let (step, resolver) = if self.can_retreat(defender) {
            (Step::Announce, defender)
        } else if self.can_retreat(attacker) {
            (Step::Announce, attacker)
        } else {
            (Step::Roll, attacker)
        };
        self.flow.step = step;
        self.flow.resolver = slot(resolver);
    }

    pub(crate) fn announce(&mut self, p: Owner, retreat: bool, cause: Cause) -> Applied {
        let attacker = owner(self.flow.turn);
        if retreat {
            self.flow.retreat = slot(p);
        }
        let code = if retreat {
            note::ANNOUNCE
        } else {
            note::NO_RETREAT
        };
        self.ledger
            .note(system_key(self.flow.system), code, [arg(p), 0, 0], cause);
        if p != attacker && !retreat && self.can_retreat(attacker) {
            self.flow.resolver = slot(attacker);
        } else {
            self.flow.step = Step::Roll;
            self.flow.resolver = slot(attacker);
        }
        Ok(())
    }

    /// LRR 78.5: each ship rolls its class's dice (one, three for a war sun), the attacker first; the hits
    /// are entered, the dice being rolled at the table.
    pub(crate) fn roll(&mut self, p: Owner, hits: u8, cause: Cause) -> Applied {
        let active = usize::from(self.flow.system);
        let dice = self.dice(p, active);
        if u32::from(hits) > dice {
            return Err(Refused::TooManyHits(p, dice).error(self));
        }
        self.ledger.note(
            system_key(self.flow.system),
            note::ROLL,
            [arg(p), i32::from(hits), 0],
            cause,
        );
        let (attacker, defender) = (owner(self.flow.turn), owner(self.flow.defender));
        if p == attacker {
            self.flow.hits[1] = hits;
            self.flow.resolver = slot(defender);
            return Ok(());
        }
        // LRR 78.6: a hit destroys one of the player's own ships; hits beyond the ships there are lost.
        self.flow.hits = [
            self.clamp_hits(hits, attacker),
            self.clamp_hits(self.flow.hits[1], defender),
        ];
        self.next_assignment(cause);
        Ok(())
    }

    pub(crate) fn clamp_hits(&self, hits: u8, p: Owner) -> u8 {
        let ships = self.all_ships(p, usize::from(self.flow.system));
        u8::try_from(ships.min(u32::from(hits))).unwrap_or(hits)
    }

    /// The attacker assigns the hits against them, then the defender; then the retreat step.
    pub(crate) fn next_assignment(&mut self, cause: Cause) {
        let (attacker, defender) = (self.flow.turn, self.flow.defender);
        if self.flow.hits[0] > 0 {
            self.flow.step = Step::Assign;
            self.flow.resolver = attacker;
        } else if self.flow.hits[1] > 0 {
            self.flow.step = Step::Assign;
            self.flow.resolver = defender;
        } else {
            self.after_assignment(cause);
        }
    }

    pub(crate) fn destroy(&mut self, p: Owner, class: u8, cause: Cause) -> Applied {
        let c = self.class_index(class)?;
        let active = usize::from(self.flow.system);
        if self.ships(p, active, c) == 0 {
            return Err(Refused::NoShipIn(p, class, self.flow.system).error(self));
        }
        let n = self.rules.class_count();
        // LRR 78.6b: a destroyed ship goes back to its owner's reinforcements.
        self.ledger.move_tokens(
            p,
            self.h.ships[active * n + c],
            self.h.ship_reserve[c],
            1,
            cause,
        )?;
        let side = usize::from(slot(p) != self.flow.turn);
        self.flow.hits[side] = self.flow.hits[side].saturating_sub(1);
        self.next_assignment(cause);
        Ok(())
    }

    /// LRR 78.7-78.8: a player who announced a retreat retreats if their opponent still has ships and a
    /// system to retreat to remains; then another round if both still have ships, else the combat ends.
    pub(crate) fn after_assignment(&mut self, cause: Cause) {
        let active = usize::from(self.flow.system);
        if self.flow.retreat != NOBODY {
            let r = owner(self.flow.retreat);
            let o = owner(if self.flow.retreat == self.flow.turn {
                self.flow.defender
            } else {
                self.flow.turn
            });
            if self.all_ships(o, active) > 0 && self.all_ships(r, active) > 0 && self.can_retreat(r)
            {
                self.flow.step = Step::Retreat;
                return;
            }
            self.flow.retreat = NOBODY;
        }
        self.next_combat_round(cause);
    }

    pub(crate) fn next_combat_round(&mut self, cause: Cause) {
        let active = usize::from(self.flow.system);
        let (attacker, defender) = (owner(self.flow.turn), owner(self.flow.defender));
        let (a, d) = (
            self.all_ships(attacker, active) > 0,
            self.all_ships(defender, active) > 0,
        );
        if a && d {
            self.start_combat_round();
            return;
        }
        // LRR 78.9-78.10: the player with ships left wins; with none left on either side, a draw.
        let (code, winner) = match (a, d) {
            (true, _) => (note::COMBAT_OVER, arg(attacker)),
            (_, true) => (note::COMBAT_OVER, arg(defender)),
            _ => (note::COMBAT_DRAW, 0),
        };
        self.ledger
            .note(system_key(self.flow.system), code, [winner, 0, 0], cause);
        self.flow.retreat = NOBODY;
        self.flow.step = Step::Produce;
        self.count_fighters_after_combat(cause);
        match (a, d) {
            (true, false) => self.edict(attacker, defender, cause),
            (false, true) => self.edict(defender, attacker, cause),
            _ => {}
        }
    }

    /// T25: destroyed ships' capacity may leave fighters beyond it, counted against the fleet pool once the
    /// combat is over, however it ends.
    pub(crate) fn count_fighters_after_combat(&mut self, cause: Cause) {
        let active = usize::from(self.flow.system);
        for q in [owner(self.flow.turn), owner(self.flow.defender)] {
            if self.rules.excess_fighters[q.index()] > 0 {
                self.check_fleet_in(q, active, cause);
            }
        }
    }

    /// T17, Edict: the winner of a combat places a command token from the loser's reinforcements in their
    /// fleet pool unless one of the loser's is there; with the loser's reinforcements empty, the loser
    /// chooses the pool it comes from (LRR 20.3b); with no token anywhere, nothing.
    pub(crate) fn edict(&mut self, winner: Owner, loser: Owner, cause: Cause) {
        let Some(Some(zone)) = self.h.captured.get(winner.index()).copied() else {
            return;
        };
        if self.holds_token_of(winner, loser) {
            return;
        }
        let key = play_key(winner);
        if self.reinforcements(loser) > 0 {
            // Cannot fail: reinforcements hold a token.
            let _ = self.ledger.place_from_reserve(loser, zone, None, cause);
            self.ledger
                .note(key, note::CAPTURE, [arg(winner), arg(loser), 0], cause);
            self.after_capture(winner, cause);
        } else if self.sheet(loser) > 0 {
            self.flow.step = Step::Capture;
            self.flow.resolver = slot(loser);
        } else {
            self.ledger.note(
                key,
                note::NOTHING_TO_CAPTURE,
                [arg(winner), arg(loser), 0],
                cause,
            );
        }
    }

    /// The loser's choice of the pool their token leaves for the winner's fleet pool (T17, T3).
    pub(crate) fn capture_from(&mut self, loser: Owner, pool: Pool, cause: Cause) -> Applied {
        if self.pool(loser, pool) == 0 {
            return Err(Refused::PoolEmpty(loser, pool).error(self));
        }
        let winner = owner(if slot(loser) == self.flow.turn {
            self.flow.defender
        } else {
            self.flow.turn
        });
        let Some(Some(zone)) = self.h.captured.get(winner.index()).copied() else {
            return Err(Refused::NoCaptureZone(winner).error(self));
        };
        self.ledger
            .place_from_reserve(loser, zone, Some(self.h.pools[pool.index()]), cause)?;
        self.ledger.note(
            play_key(winner),
            note::CAPTURE,
            [arg(winner), arg(loser), 0],
            cause,
        );
        if pool == Pool::Fleet {
            self.recheck_fleet(loser, cause);
        }
        self.flow.step = Step::Produce;
        self.after_capture(winner, cause);
        Ok(())
    }

    /// Over a law's fleet-pool maximum after a capture, the winner chooses a token to return (T17).
    pub(crate) fn after_capture(&mut self, winner: Owner, cause: Cause) {
        match self.fleet_pool_max() {
            Some(m) if self.fleet_tokens(winner) > u32::from(m) => {
                self.flow.step = Step::Release;
                self.flow.resolver = slot(winner);
            }
            _ => self.recheck_fleet(winner, cause),
        }
    }

    pub(crate) fn release(&mut self, p: Owner, q: Owner, cause: Cause) -> Applied {
        if q.0 >= u16::from(self.players()) {
            return Err(ActionError::NoSuchPlayer {
                player: q.0,
                players: u16::from(self.players()),
            });
        }
        let from = if q == p {
            if self.pool(p, Pool::Fleet) == 0 {
                return Err(Refused::NoOwnFleetToken(p).error(self));
            }
            self.h.pools[Pool::Fleet.index()]
        } else {
            match self.h.captured.get(p.index()).copied() {
                Some(Some(zone)) if self.holds_token_of(p, q) => zone,
                _ => {
                    return Err(Refused::NoTokenOf(p, q).error(self));
                }
            }
        };
        self.ledger
            .move_tokens(q, from, self.h.reinforcements, 1, cause)?;
        self.ledger
            .note(play_key(p), note::RELEASE, [arg(p), arg(q), 0], cause);
        self.recheck_fleet(p, cause);
        if self.flow.phase == Phase::Agenda {
            // A law that came into play may still leave the fleet pool over its maximum (T20).
            self.run_agenda(cause);
        } else {
            self.flow.step = Step::Produce;
            self.flow.resolver = self.flow.turn;
        }
        Ok(())
    }

    /// Whether a retreat of `p` from the activated system moves any unit: a ship with a move value (the
    /// transported fighters need its capacity).
    pub(crate) fn retreat_moves_units(&self, p: Owner) -> bool {
        let active = usize::from(self.flow.system);
        (0..self.rules.class_count())
            .any(|c| self.move_value(p, c).is_some() && self.ships(p, active, c) > 0)
    }

    /// T16 (LRR 78.7b-d): every ship of `p` with a move value moves to `system`, transporting fighters
    /// within their capacity (the others are removed); if any unit arrives, `p` places a command token
    /// there from reinforcements, or from the command sheet when reinforcements are empty, unless one is
    /// already there.
    pub(crate) fn retreat(
        &mut self,
        p: Owner,
        system: u16,
        fallback: Option<Pool>,
        cause: Cause,
    ) -> Applied {
        let d = self.system_index(system)?;
        let active = usize::from(self.flow.system);
        if !self.is_adjacent(active, system) {
            return Err(Refused::NotAdjacent(system, self.flow.system).error(self));
        }
        if self.others_have_ships(p, d) {
            return Err(Refused::RetreatIntoEnemy(system).error(self));
        }
        if self.all_ships(p, d) == 0 {
            return Err(Refused::RetreatNoUnits(p, system).error(self));
        }
        let moves = self.retreat_moves_units(p);
        if !moves && fallback.is_some() {
            return Err(Refused::RetreatNoFallback(p, self.flow.system).error(self));
        }
        let n = self.rules.class_count();
        let mut capacity = 0u32;
        for c in 0..n {
            if self.move_value(p, c).is_none() {
                continue;
            }
            let ships = self.ships(p, active, c);
            if ships > 0 {
                capacity += ships * u32::from(self.rules.classes[c].capacity);
                self.ledger.move_tokens(
                    p,
                    self.h.ships[active * n + c],
                    self.h.ships[d * n + c],
                    ships,
                    cause,
                )?;
            }
        }
        if let Some(t) = self.rules.transported.map(usize::from) {
            let fighters = self.ships(p, active, t);
            let carried = fighters.min(capacity);
            if carried > 0 {
                self.ledger.move_tokens(
                    p,
                    self.h.ships[active * n + t],
                    self.h.ships[d * n + t],
                    carried,
                    cause,
                )?;
            }
            if fighters > carried {
                self.ledger.move_tokens(
                    p,
                    self.h.ships[active * n + t],
                    self.h.ship_reserve[t],
                    fighters - carried,
                    cause,
                )?;
            }
        }
        // With no ship to move, only fighters were there, and they are removed: nothing retreats.
        if moves {
            self.ledger
                .note(system_key(system), note::RETREAT, [arg(p), 0, 0], cause);
            self.place_token(p, d, fallback, cause)?;
        }
        // The ships arriving are subject to the fleet pool at once (T7).
        self.recheck_fleet(p, cause);
        self.flow.retreat = NOBODY;
        self.next_combat_round(cause);
        Ok(())
    }

    /// Skilled Retreat: every ship of `p` leaves the active system for an adjacent system holding no other
    /// player's ships; the space combat ends in a draw; a command token is placed there from
    /// reinforcements (T3, T6: from a named pool when they are empty, none where one is already).
    pub(crate) fn skilled_retreat(
        &mut self,
        i: usize,
        p: Owner,
        action: (PendingCard, bool),
        cause: Cause,
    ) -> Applied {
        let PendingCard {
            system, fallback, ..
        } = action.0;
        let d = self.system_index(system.unwrap_or_default())?;
        let active = usize::from(self.flow.system);
        if !self.is_adjacent(active, d as u16) {
            return Err(Refused::NotAdjacent(d as u16, self.flow.system).error(self));
        }
        if self.others_have_ships(p, d) {
            return Err(Refused::SkilledIntoEnemy(d as u16).error(self));
        }
        let key = Key::new(p, kind::ACTION_CARD, i as u32);
        if !self.play(i, p, key, action, cause)? {
            return Ok(());
        }
        let n = self.rules.class_count();
        self.move_every_ship(p, active, d, n, cause)?;
        self.ledger
            .note(system_key(d as u16), note::RETREAT, [arg(p), 0, 0], cause);
        self.ledger.note(
            system_key(self.flow.system),
            note::COMBAT_DRAW,
            [0; 3],
            cause,
        );
        self.place_token(p, d, fallback, cause)?;
        self.recheck_fleet(p, cause);
        self.flow.retreat = NOBODY;
        self.flow.step = Step::Produce;
        self.count_fighters_after_combat(cause);
        Ok(())
    }
}

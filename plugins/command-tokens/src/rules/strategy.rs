//! Strategy cards: picks, primary and secondary abilities, gaining, buying and placing command tokens.

use crate::actions::Players;
use crate::config::NOBODY;
use crate::content::{AbilityKind, Effect};
use crate::ids::{Pool, arg, card_key, note, owner, slot};
use crate::phase::Step;
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{Cause, Owner};

impl State {
    pub(crate) fn pick(&mut self, p: Owner, card: u8, cause: Cause) -> Applied {
        let c = self.card_index(card)?;
        if self.flow.holder[c] != NOBODY {
            return Err(Refused::CardHeld(card, self.flow.holder[c]).error(self));
        }
        self.flow.holder[c] = slot(p);
        self.flow.picks += 1;
        self.ledger
            .note(card_key(card), note::PICK, [arg(p), 0, 0], cause);
        if self.flow.picks == self.live_players() * self.rules.cards_per_player {
            // T27, Quantum Datahub Node: at the end of the strategy phase.
            let swapper = self.owners().find(|&q| {
                !self.is_eliminated(q) && self.reaction(q, AbilityKind::SwapStrategyCards).is_some()
            });
            match swapper {
                Some(q) => {
                    self.flow.step = Step::EndOfStrategy;
                    self.flow.resolver = slot(q);
                }
                None => self.start_action_phase(cause),
            }
        }
        Ok(())
    }

    pub(crate) fn strategic(&mut self, p: Owner, card: u8, cause: Cause) -> Applied {
        let c = self.card_index(card)?;
        if self.flow.holder[c] != slot(p) {
            return Err(Refused::NotHolding(p, card).error(self));
        }
        if self.ledger.is_exhausted(self.h.cards[c]) {
            return Err(Refused::CardUsed(p, card).error(self));
        }
        self.ledger.activate(self.h.cards[c], cause)?;
        self.ledger
            .note(card_key(card), note::PRIMARY, [arg(p), 0, 0], cause);
        self.flow.card = card;
        self.flow.resolver = slot(p);
        self.flow.secondary = false;
        self.flow.effect = 0;
        self.flow.free = 0;
        self.run_effects(cause);
        Ok(())
    }

    // ----- card effects -----

    /// Resolves the card's effects from `flow.effect` on until one waits for a choice.
    pub(crate) fn run_effects(&mut self, cause: Cause) {
        loop {
            let effects = self.rules.effects(self.flow.card, self.flow.secondary);
            let Some(&effect) = effects.get(usize::from(self.flow.effect)) else {
                self.finish_resolution(cause);
                return;
            };
            self.flow.effect += 1;
            let p = owner(self.flow.resolver);
            match effect {
                Effect::Gain(tokens) => {
                    if self.enter_gain(p, tokens, cause) {
                        return;
                    }
                }
                Effect::Buy(influence_per_token) => {
                    self.flow.rate = influence_per_token;
                    self.flow.step = Step::Buy;
                    return;
                }
                Effect::Redistribute => {
                    self.flow.step = Step::Redistribute;
                    return;
                }
                Effect::RemoveBoardToken => {
                    if self.board_tokens(p) > 0 {
                        self.flow.step = Step::Remove;
                        return;
                    }
                    // T10 (LRR 99.1, 1.17): nothing was removed, so the part after "then" (Warfare:
                    // gaining that token) does not resolve either.
                    self.flow.effect += 1;
                }
                Effect::OthersPlaceToken => {
                    if self.rules.systems.iter().any(|s| !s.no_diplomacy) {
                        self.flow.step = Step::Target;
                        return;
                    }
                }
                Effect::PlaceToken => {
                    self.flow.step = Step::Place;
                    return;
                }
                Effect::FreeSecondaries => {
                    self.flow.step = Step::FreeSecondaries;
                    return;
                }
                Effect::Research => {
                    // T13: a faction that cannot research gains command tokens instead; research
                    // itself is not modelled.
                    let tokens = self.rules.research_tokens.get(p.index()).copied();
                    if let Some(n) = tokens.filter(|&n| n > 0) {
                        self.ledger.note(
                            card_key(self.flow.card),
                            note::RESEARCH_TOKENS,
                            [arg(p), i32::from(n), 0],
                            cause,
                        );
                        if self.enter_gain(p, n, cause) {
                            return;
                        }
                    }
                }
                Effect::Structures(count) => {
                    // Cannot fail: a persistent amount without a cap, and count <= 100 (validated).
                    let _ = self
                        .ledger
                        .gain(self.h.structures[p.index()], u64::from(count), cause);
                }
            }
        }
    }

    pub(crate) fn finish_resolution(&mut self, cause: Cause) {
        if self.flow.secondary {
            self.flow.cursor += 1;
        } else {
            self.flow.cursor = 1;
        }
        self.next_secondary(cause);
    }

    /// The first `k` from `offset` whose player, `k` seats after `first`, is not eliminated (T18); the
    /// number of players if none is.
    pub(crate) fn skip_eliminated(&self, first: u8, offset: u8) -> u8 {
        let n = self.players();
        let mut k = offset;
        while k < n && self.is_eliminated(owner((first + k) % n)) {
            k += 1;
        }
        k
    }

    pub(crate) fn next_secondary(&mut self, cause: Cause) {
        let n = self.players();
        // T18: an eliminated player is not offered the secondary.
        self.flow.cursor = self.skip_eliminated(self.flow.turn, self.flow.cursor);
        if self.flow.cursor >= n {
            if self.flow.pact {
                // The Galactic Crisis Pact's round is over: the agenda's other effects (T24).
                self.flow.pact = false;
                self.flow.op += 1;
                self.flow.status = 0;
                self.run_agenda(cause);
            } else {
                self.end_turn(cause);
            }
        } else {
            self.flow.step = Step::Secondary;
        }
    }

    pub(crate) fn secondary(&mut self, q: Owner, cause: Cause) -> Applied {
        let cost = self.secondary_cost(q);
        let card = self.flow.card;
        if self.pool(q, Pool::Strategy) < cost {
            return Err(Refused::SecondaryCost(q, card, cost).error(self));
        }
        self.ledger
            .note(card_key(card), note::SECONDARY, [arg(q), 0, 0], cause);
        if cost > 0 {
            // T5: the spent token goes to reinforcements.
            self.ledger.move_tokens(
                q,
                self.h.pools[Pool::Strategy.index()],
                self.h.reinforcements,
                cost,
                cause,
            )?;
        }
        self.flow.resolver = slot(q);
        self.flow.secondary = true;
        self.flow.effect = 0;
        self.run_effects(cause);
        Ok(())
    }

    /// Trade's primary (T11, LRR 92.4): `players`, other players than `p`, will resolve the secondary
    /// without spending a command token.
    pub(crate) fn free_secondaries(&mut self, p: Owner, players: Players, cause: Cause) -> Applied {
        if let Some(q) = players
            .iter()
            .find(|&q| q == p || q.index() >= usize::from(self.players()) || self.is_eliminated(q))
        {
            return Err(if q == p {
                Refused::FreeSelf(p, self.flow.card)
            } else if self.is_eliminated(q) {
                Refused::Eliminated(q)
            } else {
                Refused::NotInGame(q)
            }
            .error(self));
        }
        let card = self.flow.card;
        if players.0 == 0 {
            self.ledger.note(
                card_key(card),
                note::NO_FREE_SECONDARY,
                [arg(p), 0, 0],
                cause,
            );
        }
        for q in players.iter() {
            self.ledger.note(
                card_key(card),
                note::FREE_SECONDARY,
                [arg(p), arg(q), 0],
                cause,
            );
        }
        self.flow.free = players.0;
        self.run_effects(cause);
        Ok(())
    }

    /// T27, Quantum Datahub Node: the strategy token is spent, `give` goes to the holder of `take`, and
    /// `take` to `p`; the action phase follows.
    pub(crate) fn swap_cards(&mut self, p: Owner, give: u8, take: u8, cause: Cause) -> Applied {
        let Some(i) = self.reaction(p, AbilityKind::SwapStrategyCards) else {
            return Err(Refused::NoSwapAbility(p).error(self));
        };
        let (g, t) = (self.card_index(give)?, self.card_index(take)?);
        if self.flow.holder[g] != slot(p) {
            return Err(Refused::NotHolding(p, give).error(self));
        }
        let other = self.flow.holder[t];
        if other == NOBODY || other == slot(p) {
            return Err(Refused::NotHeldByOther(take).error(self));
        }
        self.spend_ability(p, i, cause)?;
        self.flow.holder[g] = other;
        self.flow.holder[t] = slot(p);
        self.ledger.note(
            card_key(give),
            note::SWAP,
            [arg(p), i32::from(other), i32::from(take)],
            cause,
        );
        self.start_action_phase(cause);
        Ok(())
    }

    /// Strategy tokens the current card's secondary costs (T5).
    #[inline]
    /// What player `q` spends to resolve the secondary of the card being resolved: nothing for a player the
    /// active player chose with Trade (T11).
    pub(crate) fn secondary_cost(&self, q: Owner) -> u32 {
        // T21: Masters of Trade, for the card its faction names.
        let free = self.rules.free_secondaries[q.index()] & (1 << self.flow.card) != 0;
        if free || self.flow.pact || Players(self.flow.free).contains(q) {
            return 0;
        }
        u32::from(self.rules.cards[usize::from(self.flow.card)].secondary_cost)
    }
}

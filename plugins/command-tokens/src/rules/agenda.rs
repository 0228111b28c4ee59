//! The agenda phase: revealing, quashing, outcomes, elections and riders.

use crate::actions::Players;
use crate::config::{AgendaOp, MAX_PREREQUISITES, MAX_RIDERS, NOBODY, Vote};
use crate::content::{AbilityKind, CardEffect};
use crate::ids::{Pool, ROUND_KEY, arg, card_key, kind, note, owner, slot, system_key};
use crate::phase::{Phase, Step};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{ActionError, Cause, Key, Owner};

impl State {
    // ----- agenda phase (T20) -----

    /// LRR 8: after the status phase, once the configuration's round is reached, two agendas are revealed
    /// and resolved; voting is not modelled, the speaker enters the outcome.
    pub(crate) fn start_agenda_phase(&mut self, cause: Cause) {
        self.ledger.end_scope(coffer_core::Scope::Phase);
        self.flow.phase = Phase::Agenda;
        self.flow.step = Step::Reveal;
        self.flow.resolved = 0;
        self.flow.effect = 0;
        let speaker = i32::from(self.flow.speaker);
        self.ledger
            .note(ROUND_KEY, note::AGENDA_PHASE, [speaker, 0, 0], cause);
    }

    /// The key notes about the agenda being resolved are keyed by: the agenda card, or the round for one
    /// that does nothing to command tokens.
    pub(crate) fn agenda_key(&self) -> Key {
        match self.flow.agenda {
            NOBODY => ROUND_KEY,
            a => Key::new(Owner::GAME, kind::AGENDA, u32::from(a)),
        }
    }

    pub(crate) fn reveal(&mut self, p: Owner, agenda: Option<u8>, cause: Cause) -> Applied {
        match agenda {
            Some(a) => {
                let count = self.rules.agendas.len();
                if usize::from(a) >= count {
                    return Err(Refused::NoSuchAgenda(a).error(self));
                }
                if self.flow.revealed & (1 << a) != 0 {
                    return Err(Refused::AgendaRevealed(a).error(self));
                }
                self.ledger
                    .activate(self.h.agendas[usize::from(a)], cause)?;
                self.flow.revealed |= 1 << a;
                self.flow.agenda = a;
                self.ledger
                    .note(self.agenda_key(), note::REVEAL, [arg(p), 0, 0], cause);
            }
            None => {
                self.flow.agenda = NOBODY;
                self.ledger
                    .note(ROUND_KEY, note::OTHER_AGENDA, [arg(p), 0, 0], cause);
            }
        }
        match self.quasher() {
            Some(q) => {
                self.flow.step = Step::Quash;
                self.flow.resolver = slot(q);
            }
            None => self.after_reveal(cause),
        }
        Ok(())
    }

    /// The player who may Quash the revealed agenda: a player still in the game whose faction has Quash
    /// and whose strategy pool holds what it spends.
    pub(crate) fn quasher(&self) -> Option<Owner> {
        self.owners().find(|&q| {
            let cost = self.rules.quash[q.index()];
            cost > 0 && !self.is_eliminated(q) && self.pool(q, Pool::Strategy) >= u32::from(cost)
        })
    }

    /// After the revelation (and any Quash): the riders window (T22), then the outcome.
    pub(crate) fn after_reveal(&mut self, cause: Cause) {
        self.flow.riders = [NOBODY; MAX_RIDERS];
        self.flow.window = 0;
        self.rider_window(cause);
    }

    /// Quash: the strategy tokens go to reinforcements, the agenda is discarded and the speaker reveals
    /// another, which may be quashed in turn.
    pub(crate) fn quash(&mut self, p: Owner, cause: Cause) -> Applied {
        let cost = self.rules.quash[p.index()];
        self.ledger.move_tokens(
            p,
            self.h.pools[Pool::Strategy.index()],
            self.h.reinforcements,
            u32::from(cost),
            cause,
        )?;
        self.ledger.note(
            self.agenda_key(),
            note::QUASH,
            [arg(p), i32::from(cost), 0],
            cause,
        );
        self.flow.step = Step::Reveal;
        Ok(())
    }

    pub(crate) fn outcome(&mut self, vote: Vote, voted_against: Players, cause: Cause) -> Applied {
        let a = usize::from(self.flow.agenda);
        if let Some(agenda) = self.rules.agendas.get(a)
            && (agenda.elect_player || agenda.elect_card)
        {
            return Err(Refused::NotForAgainst(self.flow.agenda).error(self));
        }
        let voters = self.rules.agendas.get(a).is_some_and(|a| a.voters);
        if !(voted_against.is_empty() || voters && vote == Vote::Against) {
            return Err(Refused::AgainstOnly.error(self));
        }
        let live = ((1u16 << self.players()) - 1) as u8 & !self.flow.out;
        if voted_against.0 & !live != 0 {
            return Err(Refused::VotersOut(voted_against.0 & !live).error(self));
        }
        self.flow.voters = voted_against.0;
        for q in voted_against.iter() {
            self.ledger.note(
                self.agenda_key(),
                note::VOTED_AGAINST,
                [arg(q), 0, 0],
                cause,
            );
        }
        let code = match vote {
            Vote::For => note::FOR,
            Vote::Against => note::AGAINST,
        };
        self.ledger.note(self.agenda_key(), code, [0; 3], cause);
        self.start_outcome(vote as u8, cause);
        Ok(())
    }

    /// T20: the speaker enters the player an Elect Player agenda elects.
    pub(crate) fn elect(&mut self, q: Owner, cause: Cause) -> Applied {
        let player = q.0;
        let a = usize::from(self.flow.agenda);
        if self.rules.agendas.get(a).is_some_and(|a| !a.elect_player) {
            return Err(Refused::ElectsNoPlayer(self.flow.agenda).error(self));
        }
        if player >= u16::from(self.players()) {
            return Err(ActionError::NoSuchPlayer {
                player,
                players: u16::from(self.players()),
            });
        }
        if self.is_eliminated(q) {
            return Err(Refused::EliminatedElected(player).error(self));
        }
        self.ledger.note(
            self.agenda_key(),
            note::ELECT,
            [i32::from(player), 0, 0],
            cause,
        );
        self.flow.elected = player as u8;
        self.start_outcome(2, cause);
        Ok(())
    }

    pub(crate) fn start_outcome(&mut self, outcome: u8, cause: Cause) {
        self.flow.outcome = outcome;
        self.flow.op = 0;
        self.flow.status = 0;
        self.flow.others = 0;
        self.run_agenda(cause);
    }

    /// T24: an Elect Strategy Card agenda's outcome (Galactic Crisis Pact).
    pub(crate) fn elect_card(&mut self, card: u8, cause: Cause) -> Applied {
        let a = usize::from(self.flow.agenda);
        match self.rules.agendas.get(a) {
            Some(agenda) if agenda.elect_card => {}
            Some(_) => {
                return Err(Refused::ElectsNoCard(self.flow.agenda).error(self));
            }
            None => {
                return Err(Refused::NoAgendaCard.error(self));
            }
        }
        self.card_index(card)?;
        self.ledger
            .note(card_key(card), note::ELECT_CARD, [0; 3], cause);
        self.flow.card = card;
        self.start_outcome(2, cause);
        Ok(())
    }

    /// T24, Minister of War: the card is discarded, the token returns to reinforcements, and the same
    /// player takes one more action.
    pub(crate) fn additional_action(&mut self, p: Owner, system: u16, cause: Cause) -> Applied {
        let s = self.system_index(system)?;
        if self.flow.minister != slot(p) {
            return Err(Refused::NoMinister(p).error(self));
        }
        if !self.has_token(p, s) {
            return Err(Refused::NoTokenOfYours(p, system).error(self));
        }
        self.ledger
            .move_tokens(p, self.h.systems[s], self.h.reinforcements, 1, cause)?;
        self.ledger.note(
            system_key(system),
            note::ADDITIONAL_ACTION,
            [arg(p), 0, 0],
            cause,
        );
        self.flow.minister = NOBODY;
        self.flow.step = Step::Turn;
        Ok(())
    }

    /// Resolves the outcome's effects from `flow.effect` on until one waits for a choice; then the next
    /// agenda.
    pub(crate) fn run_agenda(&mut self, cause: Cause) {
        let a = usize::from(self.flow.agenda);
        let n = self.players();
        loop {
            let ops = match self.rules.agendas.get(a) {
                Some(agenda) => agenda.outcomes[usize::from(self.flow.outcome)].as_slice(),
                None => &[],
            };
            let Some(&op) = ops.get(usize::from(self.flow.op)) else {
                self.resolve_riders(cause);
                return;
            };
            match op {
                AgendaOp::Enact(law) => {
                    if self.flow.enacted & (1 << law) == 0 {
                        self.flow.enacted |= 1 << law;
                        self.ledger
                            .note(self.agenda_key(), note::LAW, [0; 3], cause);
                    }
                    // The law's fleet-pool maximum holds at once: a player over it returns the excess;
                    // one holding other players' tokens (T17) chooses each token that leaves.
                    if self.enforce_fleet_max(cause) {
                        return;
                    }
                }
                AgendaOp::EachGains(pool, tokens) => {
                    for q in self.live_from_speaker() {
                        let room = match pool {
                            Pool::Fleet => self
                                .own_fleet_max(q)
                                .map_or(u32::MAX, |m| m.saturating_sub(self.pool(q, pool))),
                            _ => u32::MAX,
                        };
                        let k = u32::from(tokens).min(room);
                        if k > 0 {
                            // K4.2: gains what reinforcements hold.
                            let _ =
                                self.ledger
                                    .gain_tokens(q, self.h.pools[pool.index()], k, cause);
                        }
                    }
                }
                AgendaOp::EachReturns(tokens, Some(pool)) => {
                    for q in self.live_from_speaker() {
                        let k = u32::from(tokens).min(self.pool(q, pool));
                        if k > 0 {
                            // Cannot fail: the pool holds k of q's tokens.
                            let _ = self.ledger.move_tokens(
                                q,
                                self.h.pools[pool.index()],
                                self.h.reinforcements,
                                k,
                                cause,
                            );
                            if pool == Pool::Fleet {
                                self.recheck_fleet(q, cause);
                            }
                        }
                    }
                }
                AgendaOp::EachReturns(tokens, None) => {
                    while self.flow.status < n {
                        let q = owner((self.flow.speaker + self.flow.status) % n);
                        if !self.is_eliminated(q) && self.sheet(q) > 0 {
                            self.flow.left = tokens.min(self.sheet(q) as u8);
                            self.flow.resolver = slot(q);
                            self.flow.step = Step::ReturnTokens;
                            return;
                        }
                        self.flow.status += 1;
                    }
                }
                AgendaOp::EachPlacesHome => {
                    for q in self.live_from_speaker() {
                        let home = self.rules.homes[q.index()].map(usize::from);
                        if let Some(h) = home.filter(|&h| !self.has_token(q, h))
                            && self.reinforcements(q) > 0
                        {
                            // Cannot fail: reinforcements hold a token and the system none of q's.
                            let _ = self.ledger.move_tokens(
                                q,
                                self.h.reinforcements,
                                self.h.systems[h],
                                1,
                                cause,
                            );
                        }
                    }
                }
                AgendaOp::Standardize(want) => {
                    self.standardize(owner(self.flow.elected), want, cause)
                }
                AgendaOp::AgainstVotersReturn(tokens) => {
                    while self.flow.status < n {
                        let q = owner((self.flow.speaker + self.flow.status) % n);
                        if self.flow.voters & (1 << q.0) != 0
                            && !self.is_eliminated(q)
                            && self.sheet(q) > 0
                        {
                            self.flow.left = tokens.min(self.sheet(q) as u8);
                            self.flow.resolver = slot(q);
                            self.flow.step = Step::ReturnTokens;
                            return;
                        }
                        self.flow.status += 1;
                    }
                }
                AgendaOp::AdditionalAction => self.flow.minister = self.flow.elected,
                AgendaOp::EachPlacesAtWormholes => {
                    if self.place_at_wormholes(cause) {
                        return;
                    }
                }
                AgendaOp::ReturnPerPrerequisite => {
                    self.flow.step = Step::Prerequisites;
                    return;
                }
                AgendaOp::SecondaryForAll => {
                    // Galactic Crisis Pact: the elected card's secondary round, every player from the
                    // speaker included, none paying; it resumes this list when it ends.
                    self.flow.pact = true;
                    self.flow.turn = self.flow.speaker;
                    self.flow.cursor = 0;
                    self.flow.free = 0;
                    self.next_secondary(cause);
                    return;
                }
            }
            self.flow.op += 1;
            self.flow.status = 0;
        }
    }

    /// The votes are cast (at the table): the outcome is entered, unless the agenda is not modelled and no
    /// rider awaits it.
    pub(crate) fn after_votes(&mut self, cause: Cause) {
        if self.flow.agenda == NOBODY && self.flow.riders.iter().all(|&r| r == NOBODY) {
            self.next_agenda(cause);
        } else {
            self.flow.step = Step::Outcome;
        }
    }

    /// T27, Genetic Recombination: the card exhausts and the named player decides.
    pub(crate) fn recombine(&mut self, p: Owner, q: Owner, cause: Cause) -> Applied {
        let player = q.0;
        let Some(i) = self.reaction(p, AbilityKind::VoteOrFleetToken) else {
            return Err(Refused::NoVoterAbility(p).error(self));
        };
        if q == p || player >= u16::from(self.players()) || self.is_eliminated(q) {
            return Err(Refused::NameAnother(i as u8, player).error(self));
        }
        self.spend_ability(p, i, cause)?;
        self.ledger.note(
            self.agenda_key(),
            note::RECOMBINE,
            [arg(p), arg(q), 0],
            cause,
        );
        self.flow.step = Step::Comply;
        self.flow.resolver = slot(q);
        Ok(())
    }

    /// After the outcome's effects: each rider in the order played, its effect if its prediction was the
    /// outcome; then the next agenda.
    pub(crate) fn resolve_riders(&mut self, cause: Cause) {
        let outcome = match self.flow.outcome {
            2 => 2 + self.flow.elected,
            o => o,
        };
        for k in 0..MAX_RIDERS {
            let card = self.flow.riders[k];
            if card == NOBODY {
                continue;
            }
            self.flow.riders[k] = NOBODY;
            let c = &self.rules.hands[usize::from(card)];
            let (p, effect) = (owner(c.player), c.effect);
            let key = Key::new(p, kind::ACTION_CARD, u32::from(card));
            if self.flow.predictions[k] != outcome {
                self.ledger
                    .note(key, note::PREDICTION_WRONG, [arg(p), 0, 0], cause);
                continue;
            }
            self.ledger
                .note(key, note::PREDICTION_RIGHT, [arg(p), 0, 0], cause);
            if self.is_eliminated(p) {
                continue;
            }
            match effect {
                CardEffect::Gain { tokens } if self.enter_gain(p, tokens, cause) => return,
                CardEffect::OthersPlaceToken => {
                    self.flow.resolver = slot(p);
                    self.flow.step = Step::Target;
                    return;
                }
                _ => {}
            }
        }
        self.next_agenda(cause);
    }

    /// T29, Wormhole Reconstruction's Against: from the speaker, each player places a token from
    /// reinforcements in each wormhole system holding their ships (T6: none where one of theirs is); with
    /// reinforcements empty, from a pool they choose (T3). `flow.status` is the player, `flow.others` the
    /// wormhole; returns whether a choice is awaited.
    pub(crate) fn place_at_wormholes(&mut self, cause: Cause) -> bool {
        let n = self.players();
        while self.flow.status < n {
            let q = owner((self.flow.speaker + self.flow.status) % n);
            while usize::from(self.flow.others) < self.rules.wormholes.len() {
                let w = self.rules.wormholes[usize::from(self.flow.others)];
                let s = usize::from(w);
                if !self.is_eliminated(q) && self.all_ships(q, s) > 0 && !self.has_token(q, s) {
                    if self.reinforcements(q) > 0 {
                        // Cannot fail: reinforcements hold a token and the system none of q's.
                        let _ = self.ledger.move_tokens(
                            q,
                            self.h.reinforcements,
                            self.h.systems[s],
                            1,
                            cause,
                        );
                    } else if self.sheet(q) > 0 {
                        self.flow.step = Step::WormholeFallback;
                        self.flow.resolver = slot(q);
                        self.flow.target = w;
                        return true;
                    }
                }
                self.flow.others += 1;
            }
            self.flow.others = 0;
            self.flow.status += 1;
        }
        self.flow.others = 0;
        false
    }

    pub(crate) fn wormhole_fallback(&mut self, q: Owner, pool: Pool, cause: Cause) -> Applied {
        self.place_from_pool(q, pool, cause)?;
        if !self.place_at_wormholes(cause) {
            self.flow.op += 1;
            self.flow.status = 0;
            self.run_agenda(cause);
        }
        Ok(())
    }

    /// T29, Research Grant Reallocation: the elected player returns one fleet-pool token per prerequisite
    /// (as many as the fleet pool holds); gaining the technology itself is not modelled.
    pub(crate) fn prerequisites(&mut self, count: u8, cause: Cause) -> Applied {
        if count > MAX_PREREQUISITES {
            return Err(Refused::Prerequisites(count).error(self));
        }
        let q = owner(self.flow.elected);
        self.ledger.note(
            self.agenda_key(),
            note::PREREQUISITES,
            [arg(q), i32::from(count), 0],
            cause,
        );
        let k = u32::from(count).min(self.pool(q, Pool::Fleet));
        if k > 0 {
            self.ledger.move_tokens(
                q,
                self.h.pools[Pool::Fleet.index()],
                self.h.reinforcements,
                k,
                cause,
            )?;
            self.recheck_fleet(q, cause);
        }
        self.flow.op += 1;
        self.flow.status = 0;
        self.run_agenda(cause);
        Ok(())
    }

    /// LRR 8: two agendas each agenda phase; then the round ends.
    pub(crate) fn next_agenda(&mut self, cause: Cause) {
        self.flow.resolved += 1;
        self.flow.agenda = NOBODY;
        // The card cursor is shared with the agenda's effects: leave it as a card's resolution expects.
        self.flow.effect = 0;
        self.flow.status = 0;
        if self.flow.resolved < 2 {
            self.flow.step = Step::Reveal;
        } else {
            self.end_round(cause);
        }
    }
}

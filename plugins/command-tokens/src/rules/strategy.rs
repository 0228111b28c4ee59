//! Strategy cards: picks, primary and secondary abilities, gaining, buying and placing command tokens.

use crate::actions::Players;
use crate::config::NOBODY;
use crate::content::{AbilityKind, Effect};
use crate::ids::{Pool, arg, card_key, kind, note, owner, play_key, slot, system_key};
use crate::phase::{Phase, Step};
use crate::refusals::illegal;
use crate::state::State;
use crate::words::count;
use coffer_core::{ActionError, Cause, Key, Owner};

impl State {
    pub(crate) fn pick(&mut self, p: Owner, card: u8, cause: Cause) -> Result<(), ActionError> {
        let c = self.card_index(card)?;
        if self.flow.holder[c] != NOBODY {
            return Err(illegal(format!(
                "{} is already held by p{}",
                self.card_name(card),
                self.flow.holder[c]
            )));
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

    pub(crate) fn strategic(
        &mut self,
        p: Owner,
        card: u8,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let c = self.card_index(card)?;
        if self.flow.holder[c] != slot(p) {
            return Err(illegal(format!(
                "{p} does not hold {}",
                self.card_name(card)
            )));
        }
        if self.ledger.is_exhausted(self.h.cards[c]) {
            return Err(illegal(format!(
                "{p} has already used {} this round",
                self.card_name(card)
            )));
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

    pub(crate) fn next_secondary(&mut self, cause: Cause) {
        let n = self.players();
        // T18: an eliminated player is not offered the secondary.
        while self.flow.cursor < n
            && self.is_eliminated(owner((self.flow.turn + self.flow.cursor) % n))
        {
            self.flow.cursor += 1;
        }
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

    pub(crate) fn gain(&mut self, p: Owner, pool: Pool, cause: Cause) -> Result<(), ActionError> {
        if !self.may_gain_into(p, pool) {
            let others = match self.captured(p) {
                0 => String::new(),
                k => format!(" ({} of other players')", count(k, "token", "tokens")),
            };
            return Err(illegal(format!(
                "{p}'s fleet pool holds {}{others}, the law's maximum",
                self.fleet_tokens(p)
            )));
        }
        let got = self
            .ledger
            .gain_tokens(p, self.h.pools[pool.index()], 1, cause)?;
        if got.gained == 0 {
            return Err(illegal(format!(
                "{p} has no token in reinforcements to gain"
            )));
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

    pub(crate) fn buy(
        &mut self,
        p: Owner,
        influence: u32,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let have = self.influence(p);
        if u64::from(influence) > have {
            return Err(illegal(format!(
                "{p} cannot spend {influence} influence: they have {have} (0 to {have} may be spent)"
            )));
        }
        let tokens = influence / self.flow.rate.max(1);
        if tokens > self.reinforcements(p) {
            return Err(illegal(format!(
                "{influence} influence buys {tokens} tokens but {p} has {} in reinforcements",
                self.reinforcements(p)
            )));
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

    pub(crate) fn secondary(&mut self, q: Owner, cause: Cause) -> Result<(), ActionError> {
        let cost = self.secondary_cost(q);
        let card = self.flow.card;
        if self.pool(q, Pool::Strategy) < cost {
            return Err(illegal(format!(
                "{q} has {} strategy tokens; the secondary ability of {} costs {cost}",
                self.pool(q, Pool::Strategy),
                self.card_name(card)
            )));
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
    pub(crate) fn free_secondaries(
        &mut self,
        p: Owner,
        players: Players,
        cause: Cause,
    ) -> Result<(), ActionError> {
        if let Some(q) = players
            .iter()
            .find(|&q| q == p || q.index() >= usize::from(self.players()) || self.is_eliminated(q))
        {
            return Err(illegal(if q == p {
                format!(
                    "{p} resolves the primary ability of {}: choose other players",
                    self.card_name(self.flow.card)
                )
            } else if self.is_eliminated(q) {
                format!("{q} is eliminated")
            } else {
                format!("{q} is not in this {}-player game", self.players())
            }));
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

    pub(crate) fn diplomacy(
        &mut self,
        p: Owner,
        system: u16,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let s = self.system_index(system)?;
        if self.rules.systems[s].no_diplomacy && self.flow.phase != Phase::Agenda {
            return Err(illegal(format!(
                "{} cannot choose {}",
                self.card_name(self.flow.card),
                self.system_name(system)
            )));
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

    pub(crate) fn fallback(
        &mut self,
        q: Owner,
        pool: Pool,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let s = usize::from(self.flow.target);
        if self.pool(q, pool) == 0 {
            return Err(illegal(format!(
                "{q}'s {} is empty: the token must come from a pool that holds one",
                pool.name()
            )));
        }
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
        self.diplomacy_next(cause);
        Ok(())
    }

    pub(crate) fn remove_token(
        &mut self,
        p: Owner,
        system: u16,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let s = self.system_index(system)?;
        if !self.has_token(p, s) {
            return Err(illegal(format!(
                "{p} has no command token in {}",
                self.system_name(system)
            )));
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
    ) -> Result<(), ActionError> {
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
    ) -> Result<(), ActionError> {
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
                return Err(illegal(format!(
                    "{p}'s reinforcements are empty: name the pool the token comes from"
                )));
            }
            Some(pool) if direct => {
                return Err(illegal(format!(
                    "{p} places from reinforcements or into a system holding their token: no fallback pool is taken (not the {})",
                    pool.name()
                )));
            }
            Some(pool) if self.pool(p, pool) == 0 => {
                return Err(illegal(format!(
                    "{p}'s {} is empty: the token must come from a pool that holds one",
                    pool.name()
                )));
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
            return Err(illegal(format!(
                "{} tactic, {} fleet and {} strategy make {sum} tokens, but {p} has {total} on the command sheet",
                want[0], want[1], want[2]
            )));
        }
        if let (Some(m), Some(own)) = (self.fleet_pool_max(), self.own_fleet_max(p)) {
            if u32::from(want[1]) > own {
                let others = match self.captured(p) {
                    0 => String::new(),
                    k => format!(
                        " with {} of other players' there",
                        count(k, "token", "tokens")
                    ),
                };
                return Err(illegal(format!(
                    "a fleet pool of {}{others} is over the law's maximum of {m}",
                    want[1]
                )));
            }
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

    /// T27, Quantum Datahub Node: the strategy token is spent, `give` goes to the holder of `take`, and
    /// `take` to `p`; the action phase follows.
    pub(crate) fn swap_cards(
        &mut self,
        p: Owner,
        give: u8,
        take: u8,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let Some(i) = self.reaction(p, AbilityKind::SwapStrategyCards) else {
            return Err(illegal(format!(
                "{p} has no ready ability to swap strategy cards with"
            )));
        };
        let (g, t) = (self.card_index(give)?, self.card_index(take)?);
        if self.flow.holder[g] != slot(p) {
            return Err(illegal(format!(
                "{p} does not hold {}",
                self.card_name(give)
            )));
        }
        let other = self.flow.holder[t];
        if other == NOBODY || other == slot(p) {
            return Err(illegal(format!(
                "{} is held by no other player",
                self.card_name(take)
            )));
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
}

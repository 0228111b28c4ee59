//! Who acts now and the legal list: every action a player may take.

use crate::actions::{Action, Players};
use crate::config::{MAX_PREREQUISITES, NOBODY, Vote};
use crate::content::{AbilityKind, Window};
use crate::ids::{Pool, kind, owner, slot};
use crate::phase::{Phase, Step};
use crate::state::State;
use coffer_core::Owner;

impl State {
    /// The player whose decision the game waits for, if any: the owner of the first pending fleet-limit
    /// demand, else the player the current step belongs to.
    pub fn actor(&self) -> Option<Owner> {
        if let Some(d) = self.ledger.pending().first() {
            return Some(d.key.owner);
        }
        let f = &self.flow;
        let n = self.players();
        Some(owner(match f.step {
            Step::Over => return None,
            Step::Pick => self.picker(),
            Step::Turn | Step::Produce | Step::Move => f.turn,
            Step::Announce | Step::Roll | Step::Assign | Step::Capture | Step::Release => {
                f.resolver
            }
            Step::Retreat => f.retreat,
            Step::Gain
            | Step::Buy
            | Step::Target
            | Step::Remove
            | Step::Place
            | Step::Redistribute
            | Step::FreeSecondaries => f.resolver,
            Step::Fallback => (f.resolver + f.others) % n,
            Step::Reveal | Step::Outcome => f.speaker,
            Step::Quash | Step::ReturnTokens => f.resolver,
            Step::StrategyWindow | Step::CombatWindow | Step::Riders => f.resolver,
            Step::Nullify | Step::Foresight | Step::EndOfTurn | Step::Cancel => f.resolver,
            Step::EndOfStrategy | Step::Recombine | Step::Comply => f.resolver,
            Step::WormholeFallback => f.resolver,
            Step::Prerequisites => f.speaker,
            Step::Secondary => (f.turn + f.cursor) % n,
        }))
    }

    /// Appends every action `player` may take now.
    pub fn legal_actions(&self, player: Owner, out: &mut Vec<Action>) {
        let Some(actor) = self.actor() else { return };
        if player != actor {
            return;
        }
        let p = actor;
        if let Some(first) = self.ledger.pending().first() {
            self.push_fleet_removals(p, first.key.owner, out);
            return;
        }
        match self.flow.step {
            Step::Over => {}
            Step::Pick
            | Step::Gain
            | Step::Buy
            | Step::Secondary
            | Step::Target
            | Step::Fallback
            | Step::Capture
            | Step::WormholeFallback
            | Step::Remove
            | Step::Place
            | Step::FreeSecondaries
            | Step::EndOfStrategy
            | Step::Redistribute => self.push_strategy_steps(p, out),
            Step::Turn | Step::Produce | Step::EndOfTurn => self.push_turn_steps(p, out),
            Step::Move
            | Step::Announce
            | Step::Roll
            | Step::Assign
            | Step::Retreat
            | Step::Release
            | Step::Nullify
            | Step::Foresight => self.push_combat_steps(p, out),
            Step::Reveal
            | Step::Quash
            | Step::Prerequisites
            | Step::Recombine
            | Step::Comply
            | Step::Outcome
            | Step::ReturnTokens => self.push_agenda_steps(p, out),
            Step::Cancel | Step::StrategyWindow | Step::CombatWindow | Step::Riders => {
                self.push_cards_steps(p, out)
            }
        }
    }

    /// The ships `p` may remove over a fleet limit awaiting a choice (K6), system by system.
    fn push_fleet_removals(&self, p: Owner, first_owner: Owner, out: &mut Vec<Action>) {
        for d in self
            .ledger
            .pending()
            .iter()
            .filter(|d| d.key.owner == first_owner)
        {
            let s = d.key.subject as usize;
            for &c in &self.rules.fleet_classes {
                if self.ships(p, s, usize::from(c)) > 0 {
                    out.push(Action::RemoveShip {
                        system: s as u16,
                        class: c,
                    });
                }
            }
            // T25: a fighter beyond capacity counts too, and may be the one removed.
            if let Some(t) = self
                .rules
                .transported
                .filter(|_| self.excess_fighters(p, s) > 0)
            {
                out.push(Action::RemoveShip {
                    system: s as u16,
                    class: t,
                });
            }
        }
    }

    /// The actions of the strategy phase and of strategy cards' abilities: picks, gains, purchases,
    /// secondaries, placements.
    fn push_strategy_steps(&self, p: Owner, out: &mut Vec<Action>) {
        let f = &self.flow;
        let systems = self.rules.system_count();
        match f.step {
            Step::Pick => {
                for c in 0..self.rules.cards.len() {
                    if f.holder[c] == NOBODY {
                        out.push(Action::Pick { card: c as u8 });
                    }
                }
            }
            Step::Gain => {
                for pool in Pool::ALL {
                    if self.may_gain_into(p, pool) {
                        out.push(Action::Gain { pool });
                    }
                }
            }
            Step::Buy => {
                let most = self.most_influence_to_spend(p);
                for influence in 0..=most {
                    out.push(Action::Buy { influence });
                }
            }
            Step::Secondary => {
                if self.pool(p, Pool::Strategy) >= self.secondary_cost(p) {
                    out.push(Action::Secondary);
                }
                // T11 (LRR 92.4a): a player chosen with Trade must resolve it.
                if !Players(f.free).contains(p) {
                    out.push(Action::Decline);
                }
            }
            Step::Target => {
                // A Diplomacy Rider (T22) may choose any system: planets are not modelled.
                let rider = f.phase == Phase::Agenda;
                for s in 0..systems {
                    if rider || !self.rules.systems[s].no_diplomacy {
                        out.push(Action::Diplomacy { system: s as u16 });
                    }
                }
            }
            // The pool a token comes from with reinforcements empty (T3): for another player's placement,
            // Edict's capture (T17) or a token placed in a wormhole system (T29).
            Step::Fallback | Step::Capture | Step::WormholeFallback => {
                for pool in Pool::ALL {
                    if self.pool(p, pool) > 0 {
                        out.push(Action::Fallback { pool });
                    }
                }
            }
            Step::Remove => {
                let zones = self.ledger.zones();
                let holding = self.ledger.zones_holding_in(p, kind::SYSTEM);
                out.extend(holding.map(|z| Action::RemoveToken {
                    system: zones[z.index()].key.subject as u16,
                }));
            }
            Step::Place => {
                for s in 0..systems {
                    self.push_placements(p, s, out, |fallback| Action::Place {
                        system: s as u16,
                        fallback,
                    });
                }
            }
            Step::FreeSecondaries => {
                // Every set of the other players, by ascending bit mask (the empty set first).
                let others = ((1u16 << self.players()) - 1) as u8 & !(1 << p.0) & !f.out;
                for mask in 0..=others {
                    if mask & !others == 0 {
                        out.push(Action::FreeSecondaries {
                            players: Players(mask),
                        });
                    }
                }
            }
            Step::EndOfStrategy => {
                if self.reaction(p, AbilityKind::SwapStrategyCards).is_some() {
                    for give in 0..self.rules.cards.len() {
                        if f.holder[give] != slot(p) {
                            continue;
                        }
                        for take in 0..self.rules.cards.len() {
                            let other = f.holder[take];
                            if other != NOBODY && other != slot(p) {
                                out.push(Action::SwapCards {
                                    give: give as u8,
                                    take: take as u8,
                                });
                            }
                        }
                    }
                }
                out.push(Action::NoReaction);
            }
            Step::Redistribute => self.push_redistributions(p, out),
            _ => {}
        }
    }

    /// The actions of a turn in the action phase: tactical and strategic actions, production, the end of a
    /// turn.
    fn push_turn_steps(&self, p: Owner, out: &mut Vec<Action>) {
        let f = &self.flow;
        match f.step {
            Step::Turn => {
                if self.pool(p, Pool::Tactic) > 0 {
                    // K4.8: the systems without the player's token, from the board index.
                    let zones = self.ledger.zones();
                    let without = self.ledger.zones_without(p, kind::SYSTEM);
                    out.extend(without.map(|z| Action::Tactical {
                        system: zones[z.index()].key.subject as u16,
                    }));
                }
                self.push_star_forge(p, out);
                for (i, a) in self.rules.abilities.iter().enumerate() {
                    if a.kind == AbilityKind::ComponentAction
                        && owner(a.player) == p
                        && self.may_use_ability(i)
                    {
                        out.push(Action::ComponentAction { ability: i as u8 });
                    }
                }
                self.push_cards(p, Window::Action, out);
                // T28, Fabrication: a relic fragment for a command token, into a pool of the player's choice.
                if let Some(i) = self.reaction(p, AbilityKind::Fabrication) {
                    for pool in Pool::ALL {
                        if self.may_gain_into(p, pool) {
                            out.push(Action::UseAbility {
                                ability: i as u8,
                                system: None,
                                pool: Some(pool),
                            });
                        }
                    }
                }
                let mut all_used = true;
                for c in 0..self.rules.cards.len() {
                    if f.holder[c] == slot(p) && !self.ledger.is_exhausted(self.h.cards[c]) {
                        out.push(Action::Strategic { card: c as u8 });
                        all_used = false;
                    }
                }
                if all_used {
                    out.push(Action::Pass);
                }
            }
            Step::Produce => self.push_production(p, out),
            Step::EndOfTurn => {
                if self
                    .reaction(p, AbilityKind::RedistributeAtEndOfTurn)
                    .is_some()
                {
                    self.push_redistributions(p, out);
                }
                if self.may_add_action(p) {
                    let zones = self.ledger.zones();
                    for z in self.ledger.zones_holding_in(p, kind::SYSTEM) {
                        out.push(Action::AdditionalAction {
                            system: zones[z.index()].key.subject as u16,
                        });
                    }
                }
                out.push(Action::NoReaction);
            }
            _ => {}
        }
    }

    /// The actions of movement and space combat, with the reactions they allow.
    fn push_combat_steps(&self, p: Owner, out: &mut Vec<Action>) {
        let f = &self.flow;
        match f.step {
            Step::Move => {
                self.push_moves(p, out);
                out.push(Action::EndMovement);
                if !self.combat_due() {
                    self.push_production(p, out);
                }
            }
            Step::Announce => {
                out.push(Action::AnnounceRetreat);
                out.push(Action::NoRetreat);
            }
            Step::Roll => {
                let dice = self.dice(p, usize::from(f.system));
                for hits in 0..=dice.min(u32::from(u8::MAX)) {
                    out.push(Action::Roll { hits: hits as u8 });
                }
            }
            Step::Assign => {
                for c in 0..self.rules.class_count() {
                    if self.ships(p, usize::from(f.system), c) > 0 {
                        out.push(Action::Destroy { class: c as u8 });
                    }
                }
            }
            Step::Retreat => {
                let active = usize::from(f.system);
                let moves = self.retreat_moves_units(p);
                for d in self.adjacent_to(active) {
                    if self.may_retreat_to(p, usize::from(d)) {
                        if moves {
                            self.push_placements(p, usize::from(d), out, |fallback| {
                                Action::Retreat {
                                    system: d,
                                    fallback,
                                }
                            });
                        } else {
                            out.push(Action::Retreat {
                                system: d,
                                fallback: None,
                            });
                        }
                    }
                }
            }
            Step::Release => {
                if self.pool(p, Pool::Fleet) > 0 {
                    out.push(Action::Release { player: p.0 });
                }
                for q in self.owners() {
                    if q != p && self.holds_token_of(p, q) {
                        out.push(Action::Release { player: q.0 });
                    }
                }
            }
            Step::Nullify => {
                if let Some(i) = self.reaction(p, AbilityKind::EndActivatorsTurn) {
                    out.push(Action::UseAbility {
                        ability: i as u8,
                        system: None,
                        pool: None,
                    });
                }
                out.push(Action::NoReaction);
            }
            Step::Foresight => {
                if let Some(i) = self.reaction(p, AbilityKind::Foresight) {
                    for s in self.foresight_systems(p) {
                        out.push(Action::UseAbility {
                            ability: i as u8,
                            system: Some(s),
                            pool: None,
                        });
                    }
                }
                out.push(Action::NoReaction);
            }
            _ => {}
        }
    }

    /// The actions of the agenda phase and of the status phase's returns.
    fn push_agenda_steps(&self, p: Owner, out: &mut Vec<Action>) {
        let f = &self.flow;
        match f.step {
            Step::Reveal => {
                for a in 0..self.rules.agendas.len() {
                    if self.flow.revealed & (1 << a) == 0 {
                        out.push(Action::RevealAgenda {
                            agenda: Some(a as u8),
                        });
                    }
                }
                out.push(Action::RevealAgenda { agenda: None });
            }
            Step::Quash => {
                out.push(Action::Quash);
                out.push(Action::NoQuash);
            }
            Step::Prerequisites => {
                for count in 0..=MAX_PREREQUISITES {
                    out.push(Action::Prerequisites { count });
                }
            }
            Step::Recombine => {
                if self.reaction(p, AbilityKind::VoteOrFleetToken).is_some() {
                    for q in self.owners().filter(|&q| q != p && !self.is_eliminated(q)) {
                        out.push(Action::Recombine { player: q.0 });
                    }
                }
                out.push(Action::NoReaction);
            }
            Step::Comply => {
                out.push(Action::NoReaction);
                if self.pool(p, Pool::Fleet) > 0 {
                    out.push(Action::ReturnToken { pool: Pool::Fleet });
                }
            }
            Step::Outcome if f.agenda == NOBODY => {
                // An agenda this ruleset does not model, entered only to resolve riders (T22): any
                // outcome.
                let none = Players(0);
                out.push(Action::Outcome {
                    vote: Vote::For,
                    voted_against: none,
                });
                out.push(Action::Outcome {
                    vote: Vote::Against,
                    voted_against: none,
                });
                for q in self.owners().filter(|&q| !self.is_eliminated(q)) {
                    out.push(Action::Elect { player: q.0 });
                }
            }
            Step::Outcome => {
                let agenda = &self.rules.agendas[usize::from(f.agenda)];
                if agenda.elect_player {
                    for q in self.owners().filter(|&q| !self.is_eliminated(q)) {
                        out.push(Action::Elect { player: q.0 });
                    }
                } else if agenda.elect_card {
                    for card in 0..self.rules.cards.len() {
                        out.push(Action::ElectCard { card: card as u8 });
                    }
                } else {
                    out.push(Action::Outcome {
                        vote: Vote::For,
                        voted_against: Players(0),
                    });
                    if agenda.voters {
                        // Every set of players still in the game who voted Against (T24).
                        let live = ((1u16 << self.players()) - 1) as u8 & !f.out;
                        for mask in 0..=live {
                            if mask & !live == 0 {
                                out.push(Action::Outcome {
                                    vote: Vote::Against,
                                    voted_against: Players(mask),
                                });
                            }
                        }
                    } else {
                        out.push(Action::Outcome {
                            vote: Vote::Against,
                            voted_against: Players(0),
                        });
                    }
                }
            }
            Step::ReturnTokens => {
                for pool in Pool::ALL {
                    if self.pool(p, pool) > 0 {
                        out.push(Action::ReturnToken { pool });
                    }
                }
            }
            _ => {}
        }
    }

    /// The actions of the action-card windows and of cancelling a card.
    fn push_cards_steps(&self, p: Owner, out: &mut Vec<Action>) {
        let f = &self.flow;
        match f.step {
            Step::Cancel => {
                if let Some(i) = self.reaction(p, AbilityKind::CancelActionCard) {
                    out.push(Action::UseAbility {
                        ability: i as u8,
                        system: None,
                        pool: None,
                    });
                }
                out.push(Action::NoReaction);
            }
            Step::StrategyWindow | Step::CombatWindow | Step::Riders => {
                let window = match f.step {
                    Step::StrategyWindow => Window::StartOfStrategyPhase,
                    Step::CombatWindow => Window::StartOfCombatRound,
                    _ => Window::AfterAgendaRevealed,
                };
                self.push_cards(p, window, out);
                out.push(Action::NoCard);
            }
            _ => {}
        }
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

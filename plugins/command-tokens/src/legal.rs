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
            Step::Pick => return Some(self.picker()),
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
    #[inline]
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
    #[inline]
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
    #[inline]
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
    #[inline]
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
    #[inline]
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
}

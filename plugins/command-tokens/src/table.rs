//! The table every seat and spectator sees: the clock, whose turn it is, who may act and why, and the
//! game's state in sections. Nothing is hidden in this ruleset.

use crate::config::NOBODY;
use crate::ids::{Pool, owner};
use crate::phase::{Phase, Step};
use crate::state::State;
use crate::words::count;
use coffer_core::{Owner, Table};
use std::borrow::Cow;
use std::fmt::Write as _;

impl State {
    /// Fills the table. Nothing is hidden in this ruleset: every seat and spectators see the same.
    pub fn fill_table(&self, table: &mut Table) {
        let f = &self.flow;
        let r = &self.rules;
        table.clock(self.round(), f.phase.number(), f.step.number());
        let turn = match f.phase {
            Phase::Strategy => Some(self.picker()),
            Phase::Action => Some(owner(f.turn)),
            Phase::Status => Some(owner(f.resolver)),
            Phase::Agenda => Some(owner(f.speaker)),
            Phase::Over => None,
        };
        if let Some(t) = turn {
            table.turn(t);
        }
        if let (Some(p), Some(why)) = (self.actor(), self.why()) {
            table.act(p, why);
        }
        if f.phase == Phase::Action {
            for p in self.owners() {
                if f.passed & (1 << p.0) != 0 {
                    table.pass(p);
                }
            }
        }
        // The card being resolved: a strategic action's effects or its secondaries.
        let resolving = f.phase == Phase::Action && !f.step.in_tactical_action();
        let cards = table.section("Strategy cards");
        for (c, card) in r.cards.iter().enumerate() {
            let h = f.holder[c];
            let (owner, value) = if h == NOBODY {
                let value = if f.phase == Phase::Strategy {
                    "available"
                } else {
                    "not picked"
                };
                (Owner::GAME, value)
            } else if resolving && usize::from(f.card) == c {
                (owner(h), "being resolved")
            } else if self.ledger.is_exhausted(self.h.cards[c]) {
                (owner(h), "used")
            } else {
                (owner(h), "ready")
            };
            cards.row(owner, card.name.clone(), value);
        }
        let speaker = usize::from(f.speaker);
        table.section("Speaker").row(
            owner(f.speaker),
            "speaker",
            r.faction_names[speaker].clone(),
        );
        let players = table.section("Command sheets");
        for p in self.owners() {
            let i = p.index();
            if self.is_eliminated(p) {
                players.row(p, r.faction_names[i].clone(), "eliminated");
                continue;
            }
            let mut value = String::with_capacity(72);
            let _ = write!(
                value,
                "{} tactic, {} fleet, {} strategy; {} in reinforcements",
                self.pool(p, Pool::Tactic),
                self.pool(p, Pool::Fleet),
                self.pool(p, Pool::Strategy),
                self.reinforcements(p)
            );
            let captured = self.captured(p);
            if captured > 0 {
                let _ = write!(
                    value,
                    "; {} of other players in the fleet pool",
                    count(captured, "token", "tokens")
                );
            }
            if r.fleet_bonus[i] > 0 || captured > 0 {
                let _ = write!(value, "; fleet limit {}", self.fleet_limit(p));
            }
            if f.forfeited[i] > 0 {
                let _ = write!(value, "; {} could not be gained", f.forfeited[i]);
            }
            players.row(p, r.faction_names[i].clone(), value);
        }
        let producing = (f.step == Step::Produce).then_some((owner(f.turn), usize::from(f.system)));
        let moving = (f.step == Step::Move).then_some((owner(f.turn), usize::from(f.system)));
        let board = table.section("Command tokens on the board");
        for (s, &zone) in self.h.systems.iter().enumerate() {
            for (p, &tokens) in self.owners().zip(self.ledger.zone_tokens(zone)) {
                if tokens == 0 {
                    continue;
                }
                let value = if producing == Some((p, s)) {
                    Cow::Owned(format!(
                        "activated: {} of {} produced",
                        count(u32::from(f.built), "ship", "ships"),
                        r.production
                    ))
                } else if moving == Some((p, s)) {
                    Cow::Borrowed("activated: ships moving in")
                } else {
                    Cow::Borrowed("command token")
                };
                board.row(p, r.system_labels[s].clone(), value);
            }
        }
        self.fill_rule_sections(table);
    }

    /// The sections of laws, agendas, abilities, action cards, the space combat and the final scores, as far as the game has them.
    #[inline]
    fn fill_rule_sections(&self, table: &mut Table) {
        let f = &self.flow;
        let r = &self.rules;
        // T20: laws in play and the agendas, in games with an agenda phase or a law.
        let laws = r.starting_laws | f.enacted;
        if laws != 0 || f.minister != NOBODY {
            let section = table.section("Laws in play");
            for (i, (name, _)) in r.law_list.iter().enumerate() {
                if laws & (1 << i) != 0 {
                    section.row(Owner::GAME, name.clone(), "in play");
                }
            }
            if f.minister != NOBODY {
                section.row(owner(f.minister), "Minister of War", "held");
            }
        }
        if !r.agendas.is_empty() {
            let section = table.section("Agendas");
            for (a, agenda) in r.agendas.iter().enumerate() {
                let value = if f.phase == Phase::Agenda && usize::from(f.agenda) == a {
                    "being resolved"
                } else if f.revealed & (1 << a) != 0 {
                    "revealed"
                } else {
                    "in the agenda deck"
                };
                section.row(Owner::GAME, agenda.name.clone(), value);
            }
        }
        if !r.abilities.is_empty() {
            let section = table.section("Abilities");
            for (i, a) in r.abilities.iter().enumerate() {
                let value = if self.ledger.is_exhausted(self.h.abilities[i]) {
                    "used this round".to_string()
                } else if a.cost == 0 {
                    format!("#{i}: ready")
                } else {
                    format!(
                        "#{i}: spends {} from the strategy pool",
                        count(u32::from(a.cost), "token", "tokens")
                    )
                };
                section.row(owner(a.player), a.name.clone(), value);
            }
        }
        if !r.hands.is_empty() {
            let section = table.section("Action cards");
            for (i, c) in r.hands.iter().enumerate() {
                let value = if self.ledger.is_exhausted(self.h.hand[i]) {
                    Cow::Borrowed("played")
                } else {
                    Cow::Owned(format!("#{i}: in hand, played {}", c.window.when()))
                };
                section.row(owner(c.player), c.name.clone(), value);
            }
        }
        if f.step.in_space_combat() {
            let (attacker, defender) = (owner(f.turn), owner(f.defender));
            let combat = table.section("Space combat");
            let system = &r.system_labels[usize::from(f.system)];
            combat.row(attacker, "attacker", system.clone());
            combat.row(defender, "defender", system.clone());
            if f.step == Step::Assign {
                combat.row(attacker, "hits to assign", f.hits[0].to_string());
                combat.row(defender, "hits to assign", f.hits[1].to_string());
            }
            if f.retreat != NOBODY {
                combat.row(owner(f.retreat), "retreat", "announced");
            }
        }
        if f.phase == Phase::Over && self.ledger.pending().is_empty() {
            let live = || self.owners().filter(|&p| !self.is_eliminated(p));
            let best = live().map(|p| self.sheet(p)).max().unwrap_or(0);
            let scores = table.section("Final scores");
            for p in self.owners() {
                if self.is_eliminated(p) {
                    scores.row(p, r.faction_names[p.index()].clone(), "eliminated");
                    continue;
                }
                let score = self.sheet(p);
                let mut value = count(
                    score,
                    "token on the command sheet",
                    "tokens on the command sheet",
                );
                if score == best {
                    value.push_str(": winner");
                }
                scores.row(p, r.faction_names[p.index()].clone(), value);
            }
        }
    }
}

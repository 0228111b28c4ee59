//! The game's words: the vocabulary (kinds, phases, steps, actions, effects and notes), what each step
//! waits for and why, and actions written out for refusals. The table is in [`crate::table`].

use crate::actions::Action;
use crate::content::AbilityKind;
use crate::ids::{Pool, kind, note, slot};
use crate::phase::Step;
use crate::state::State;
use coffer_core::{NoteTerm, Owner, Term, Vocabulary};
use std::borrow::Cow;

/// What the ruleset calls things, declared once in its description.
///
/// Kinds are [`kind`]'s numbers, phases [`Phase::number`](crate::Phase::number), steps [`Step::number`], actions
/// [`Action::code`], effects [`crate::effect`]'s codes and notes [`note`]'s codes.
pub fn vocabulary() -> Vocabulary {
    let kinds = vec![
        Term::new("reinforcements"),
        Term::new("tactic pool"),
        Term::new("fleet pool"),
        Term::new("strategy pool"),
        Term::new("system"),
        Term::new("ship reinforcements"),
        Term::new("ships in a system"),
        Term::new("influence"),
        Term::new("structures"),
        Term::new("strategy card"),
        // A K6 demand keyed (player, system): "p0 must remove 1 of p0's fleet in system 19". Hosts that
        // know no label for it (it is no resource) write the kind and the system's index: "fleet in
        // system #3".
        Term::new("fleet in system").choice("remove"),
        Term::new("play"),
        Term::new("other players' tokens in a fleet pool"),
        Term::new("game box"),
        Term::new("agenda").states("has been revealed", "is in the agenda deck"),
        Term::new("component action").states("has been used this round", "is ready"),
        Term::new("action card").states("has been played", "is in hand"),
        Term::new("relic fragments"),
    ];
    debug_assert_eq!(kinds.len(), usize::from(kind::FRAGMENTS.0) + 1);
    let phases = [
        "strategy phase",
        "action phase",
        "status phase",
        "agenda phase",
    ];
    // In `Step` order.
    let steps = [
        "picking strategy cards",
        "choosing an action",
        "production",
        "gaining command tokens",
        "buying command tokens",
        "choosing a system for the other players' tokens",
        "choosing the pool a placed token comes from",
        "removing a command token from the board",
        "placing a command token",
        "redistributing command tokens",
        "secondary abilities",
        "choosing who resolves the secondary ability for free",
        "movement",
        "announcing retreats",
        "combat rolls",
        "assigning hits",
        "retreating",
        "giving a command token to the winner's fleet pool",
        "returning a command token over the fleet pool's maximum",
        "game over",
        "revealing an agenda",
        "deciding whether to quash the agenda",
        "entering the agenda's outcome",
        "returning command tokens to reinforcements",
        "action cards at the start of the strategy phase",
        "action cards at the start of a combat round",
        "riders",
        "ending the active player's turn",
        "moving ships out before a space combat",
        "the end of a turn",
        "cancelling an action card",
        "the end of the strategy phase",
        "naming a voter",
        "voting as asked",
        "choosing the pool a token placed in a wormhole system comes from",
        "entering a technology's prerequisites",
    ];
    let effects = ["the status phase"];
    // In `note` order.
    let notes = [
        "p{0} picks {name}",
        "p{0} resolves the primary ability of {name}",
        "p{0} resolves the secondary ability of {name}",
        "p{0} declines the secondary ability of {name}",
        "{who} passes",
        "p{0} activates {name}",
        "p{0} ends production in {name}: the tactical action is over",
        "{who} spends {0} influence to buy {1} command tokens",
        "{who} spends {0} influence to buy 1 command token",
        "{who} buys no command tokens",
        "p{0} chooses {name}: each other player places a command token there",
        "p{0} has no command token left to place in {name}",
        "{who} redistributes the command sheet: {0} tactic, {1} fleet, {2} strategy",
        "the action phase begins: p{0} takes the first turn",
        "the status phase begins: every command token on the board returns to reinforcements",
        "the strategy phase begins: p{0}, the speaker, picks first",
        "the game is over: each player scores the tokens on their command sheet",
        "p{0} lets p{1} resolve the secondary ability of {name} without spending a command token",
        "p{0} lets no other player resolve the secondary ability of {name} for free",
        "p{0} cannot research technology and gains {1} command tokens instead",
        "space combat in {name}: p{0} attacks, p{1} defends",
        "p{0} announces a retreat from the space combat",
        "p{0}'s combat roll produces hits: {1}",
        "p{0}'s ships retreat to {name}",
        "the space combat in {name} is over: p{0} wins",
        "the space combat in {name} is over: neither player has a ship left",
        "p{0} ends movement into {name}",
        "p{0} announces no retreat",
        "p{0} places a command token of p{1}'s in their fleet pool",
        "p{0} wins against p{1}, who has no command token to give",
        "p{0} returns a command token of p{1}'s from their fleet pool to reinforcements",
        "{who} is eliminated: their command tokens and units return to the game box",
        "the speaker token passes to p{0}",
        "p{0} uses Star Forge in {name}: command tokens spent from the strategy pool: {1}",
        "the agenda phase begins: p{0}, the speaker, reveals the agendas",
        "p{0} reveals {name}",
        "p{0} reveals an agenda that does nothing to command tokens",
        "p{0} quashes {name}: command tokens spent from the strategy pool: {1}",
        "p{0} lets {name} stand",
        "{name} is resolved For",
        "{name} is resolved Against",
        "{name} elects p{0}",
        "{name} comes into play as a law",
        "p{0} returns a command token to reinforcements for {name}",
        "p{0} uses {name}: command tokens spent from the strategy pool: {1}",
        "p{0} activates {name}, which holds p{1}'s ships: fleet-pool tokens returned to reinforcements: {2}",
        "p{0} plays {name}",
        "p{0} predicts that the agenda is resolved For",
        "p{0} predicts that the agenda is resolved Against",
        "p{0} predicts that the agenda elects p{1}",
        "p{0}'s prediction is right: {name} resolves",
        "p{0}'s prediction is wrong: {name} does nothing",
        "p{0} returns a command token from p{1}'s tactic pool to p{1}'s reinforcements",
        "the agenda elects {name}: each player may resolve its secondary ability without spending a command token",
        "p{0} discards Minister of War: the command token in {name} returns to reinforcements, and p{0} takes another action",
        "p{0} voted Against {name}",
        "p{1} cancels p{0}'s {name}: it has no effect",
        "p{0} gives {name} to p{1} and takes their other strategy card",
        "p{0} names p{1}, who must vote as p{0} chooses or return a fleet-pool token",
        "p{0} votes as asked",
        "the technology p{0} gains has prerequisites: {1}",
    ];
    debug_assert_eq!(notes.len(), usize::from(note::PREREQUISITES) + 1);
    Vocabulary {
        round: "Round".into(),
        kinds,
        phases: phases.map(String::from).to_vec(),
        steps: steps.map(String::from).to_vec(),
        actions: Action::NAMES.map(String::from).to_vec(),
        effects: effects.map(String::from).to_vec(),
        notes: notes.map(NoteTerm::new).to_vec(),
        ..Default::default()
    }
}

/// A count and a noun, singular or plural: "1 ship", "2 ships".
pub(crate) fn count(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

impl Pool {
    /// The pool's name: "tactic pool".
    pub fn name(self) -> &'static str {
        match self {
            Pool::Tactic => "tactic pool",
            Pool::Fleet => "fleet pool",
            Pool::Strategy => "strategy pool",
        }
    }
}

impl crate::content::Window {
    /// When a card of this window is played, for refusals: "at the start of the strategy phase".
    pub fn when(self) -> &'static str {
        match self {
            crate::content::Window::Action => "as an action",
            crate::content::Window::StartOfStrategyPhase => "at the start of the strategy phase",
            crate::content::Window::StartOfCombatRound => "at the start of a combat round",
            crate::content::Window::AfterAgendaRevealed => "after an agenda is revealed",
        }
    }
}

impl Step {
    /// When the step is under way, for refusals: "while strategy cards are being picked".
    pub fn while_text(self) -> &'static str {
        match self {
            Step::Pick => "while strategy cards are being picked",
            Step::Turn => {
                "at the start of a turn (a tactical action, a strategic action or a pass)"
            }
            Step::Produce => "during production (produce a ship or end the tactical action)",
            Step::Gain => "while gained command tokens are put in pools",
            Step::Buy => "while influence is spent on command tokens",
            Step::Target => "while a system is chosen for the other players' tokens",
            Step::Fallback => "while the pool a placed token comes from is chosen",
            Step::Remove => "while a command token is removed from the board",
            Step::Place => "while a command token is placed",
            Step::Redistribute => "while command tokens are redistributed",
            Step::Secondary => "while secondary abilities are resolved",
            Step::FreeSecondaries => {
                "while the players who resolve the secondary ability for free are chosen"
            }
            Step::Move => "during movement (move ships into the activated system, or end movement)",
            Step::Announce => "while retreats are announced",
            Step::Roll => "while combat rolls are made",
            Step::Assign => "while hits are assigned",
            Step::Retreat => "while a retreat is made",
            Step::Capture => "while the pool of a token for the winner's fleet pool is chosen",
            Step::Release => "while a token leaves a fleet pool over the law's maximum",
            Step::Over => "once the game is over",
            Step::Reveal => "while an agenda is revealed",
            Step::Quash => "while the revealed agenda may be quashed",
            Step::Outcome => "while the agenda's outcome is entered",
            Step::ReturnTokens => "while command tokens are returned to reinforcements",
            Step::StrategyWindow => {
                "while action cards may be played at the start of the strategy phase"
            }
            Step::CombatWindow => "while action cards may be played at the start of a combat round",
            Step::Riders => "while riders may be played",
            Step::Nullify => "while an ability may end the active player's turn",
            Step::Foresight => "while an ability may move ships out of the activated system",
            Step::EndOfTurn => "at the end of a turn, while an ability may redistribute",
            Step::Cancel => "while an action card played may be cancelled",
            Step::EndOfStrategy => {
                "at the end of the strategy phase, while strategy cards may be swapped"
            }
            Step::Recombine => "before votes are cast, while a voter may be named",
            Step::Comply => "while the player named votes as asked or returns a fleet-pool token",
            Step::WormholeFallback => {
                "while the pool of a token placed in a wormhole system is chosen"
            }
            Step::Prerequisites => "while the prerequisites of the technology gained are entered",
        }
    }
}

impl State {
    /// A system's name by index: "system 18", or "system #99" for an index the galaxy does not have.
    pub fn system_name(&self, system: u16) -> Cow<'_, str> {
        match self.rules.system_labels.get(usize::from(system)) {
            Some(label) => Cow::Borrowed(label),
            None => Cow::Owned(format!("system #{system}")),
        }
    }

    /// A strategy card's name by index: "Leadership", or "strategy card #9".
    pub fn card_name(&self, card: u8) -> Cow<'_, str> {
        match self.rules.cards.get(usize::from(card)) {
            Some(c) => Cow::Borrowed(&c.name),
            None => Cow::Owned(format!("strategy card #{card}")),
        }
    }

    /// A ship class's name by index: "Carrier", or "ship class #9".
    pub fn class_name(&self, class: u8) -> Cow<'_, str> {
        match self.rules.classes.get(usize::from(class)) {
            Some(c) => Cow::Borrowed(&c.name),
            None => Cow::Owned(format!("ship class #{class}")),
        }
    }

    /// What `p` may do with their turn: a tactical action, a strategic action, or pass.
    #[inline]
    fn turn_why(&self, p: Owner) -> &'static str {
        let f = &self.flow;
        let tactical = self.pool(p, Pool::Tactic) > 0;
        let strategic = (0..self.rules.cards.len())
            .any(|c| f.holder[c] == slot(p) && !self.ledger.is_exhausted(self.h.cards[c]));
        match (tactical, strategic) {
            (true, true) => "to take a tactical or a strategic action",
            (true, false) => "to take a tactical action or pass",
            (false, true) => "to take a strategic action",
            (false, false) => "to pass",
        }
    }

    /// What the player the game waits for ([`State::actor`]) is to do, in words that follow "has" or a
    /// name: "to pick a strategy card". `None` once the game is over.
    pub fn why(&self) -> Option<Cow<'static, str>> {
        if let Some(d) = self.ledger.pending().first() {
            let system = self.system_name(d.key.subject as u16);
            return Some(Cow::Owned(format!(
                "to remove {} over the fleet limit from {system}",
                count(d.excess, "ship", "ships")
            )));
        }
        let f = &self.flow;
        let p = self.actor()?;
        Some(match f.step {
            Step::Over => return None,
            Step::Pick => Cow::Borrowed("to pick a strategy card"),
            Step::Turn => Cow::Borrowed(self.turn_why(p)),
            Step::Produce => Cow::Owned(format!(
                "to produce ships in {} or end the tactical action",
                self.system_name(f.system)
            )),
            Step::Gain if f.left == 1 => {
                Cow::Borrowed("to choose the pool of a gained command token")
            }
            Step::Gain => Cow::Owned(format!(
                "to choose the pools of {} gained command tokens",
                f.left
            )),
            Step::Buy => Cow::Owned(format!(
                "to buy command tokens for {} influence each, or none",
                f.rate
            )),
            Step::Target => {
                Cow::Borrowed("to choose a system where each other player places a command token")
            }
            Step::Fallback => Cow::Owned(format!(
                "to choose the pool of the command token placed in {}: reinforcements are empty",
                self.system_name(f.target)
            )),
            Step::Remove => Cow::Borrowed("to remove one of their command tokens from the board"),
            Step::Place => Cow::Borrowed("to place a command token in a system"),
            Step::Redistribute => {
                Cow::Borrowed("to redistribute the command sheet's tokens among the three pools")
            }
            Step::Secondary => Cow::Owned(format!(
                "to resolve or decline the secondary ability of {}",
                self.card_name(f.card)
            )),
            Step::FreeSecondaries => Cow::Owned(format!(
                "to choose any number of other players who resolve the secondary ability of {} without spending a command token",
                self.card_name(f.card)
            )),
            Step::Move => Cow::Owned(format!(
                "to move ships into {} or end movement",
                self.system_name(f.system)
            )),
            Step::Announce => Cow::Owned(format!(
                "to announce a retreat from the space combat in {}, or not",
                self.system_name(f.system)
            )),
            Step::Roll => Cow::Owned(format!(
                "to enter the hits of their combat roll in {}",
                self.system_name(f.system)
            )),
            Step::Assign => {
                let side = usize::from(f.resolver != f.turn);
                Cow::Owned(format!(
                    "to destroy {} of their own in {}",
                    count(u32::from(f.hits[side]), "ship", "ships"),
                    self.system_name(f.system)
                ))
            }
            Step::Retreat => Cow::Owned(format!(
                "to choose the system their ships retreat to from {}",
                self.system_name(f.system)
            )),
            Step::Capture => Cow::Borrowed(
                "to choose the pool of the command token placed in the winner's fleet pool: reinforcements are empty",
            ),
            Step::Release => Cow::Borrowed(
                "to return a command token from their fleet pool: it holds more than the law allows",
            ),
            Step::Reveal => Cow::Borrowed("to reveal an agenda from the agenda deck"),
            Step::StrategyWindow => {
                Cow::Borrowed("to play an action card at the start of the strategy phase, or not")
            }
            Step::CombatWindow => Cow::Owned(format!(
                "to play an action card at the start of the combat round in {}, or not",
                self.system_name(f.system)
            )),
            Step::Riders => {
                Cow::Owned(format!("to play a rider on {}, or not", self.agenda_name()))
            }
            Step::Nullify => Cow::Owned(format!(
                "to end p{}'s turn with {}, or not",
                f.turn,
                self.ability_name(p, AbilityKind::EndActivatorsTurn)
            )),
            Step::Foresight => Cow::Owned(format!(
                "to move their ships out of {} with {}, or not",
                self.system_name(f.system),
                self.ability_name(p, AbilityKind::Foresight)
            )),
            Step::EndOfStrategy => Cow::Owned(format!(
                "to swap a strategy card with another player's with {}, or not",
                self.ability_name(p, AbilityKind::SwapStrategyCards)
            )),
            Step::Recombine => Cow::Owned(format!(
                "to name a player with {} before votes are cast, or not",
                self.ability_name(p, AbilityKind::VoteOrFleetToken)
            )),
            Step::WormholeFallback => Cow::Owned(format!(
                "to choose the pool of the command token placed in {}: reinforcements are empty",
                self.system_name(f.target)
            )),
            Step::Prerequisites => Cow::Owned(format!(
                "to enter how many prerequisites the technology p{} gains has",
                f.elected
            )),
            Step::Comply => Cow::Borrowed(
                "to vote as asked (at the table) or return a command token from their fleet pool to reinforcements",
            ),
            Step::Cancel => Cow::Owned(format!(
                "to cancel the action card just played with {}, or not",
                self.ability_name(p, AbilityKind::CancelActionCard)
            )),
            Step::EndOfTurn if self.flow.minister == slot(p) => Cow::Borrowed(
                "to end their turn, or use what they hold for it (Minister of War, Predictive Intelligence)",
            ),
            Step::EndOfTurn => Cow::Owned(format!(
                "to redistribute with {} at the end of their turn, or not",
                self.ability_name(p, AbilityKind::RedistributeAtEndOfTurn)
            )),
            Step::Quash => Cow::Owned(format!("to quash {} or let it stand", self.agenda_name())),
            Step::Outcome => Cow::Owned(format!(
                "to enter the outcome of {} as the table voted",
                self.agenda_name()
            )),
            Step::ReturnTokens => Cow::Owned(format!(
                "to return {} from their command sheet to reinforcements",
                count(u32::from(f.left), "command token", "command tokens")
            )),
        })
    }

    /// The name of `p`'s ability of this kind: "Foresight", or "an ability" if they have none.
    fn ability_name(&self, p: Owner, kind: AbilityKind) -> &str {
        self.rules
            .abilities
            .iter()
            .find(|a| a.kind == kind && a.player == slot(p))
            .map_or("an ability", |a| a.name.as_str())
    }

    /// The name of the agenda being resolved: "Fleet Regulations", or "the agenda" for one that does
    /// nothing to command tokens.
    pub fn agenda_name(&self) -> Cow<'_, str> {
        match self.rules.agendas.get(usize::from(self.flow.agenda)) {
            Some(a) => Cow::Borrowed(&a.name),
            None => Cow::Borrowed("the agenda"),
        }
    }

    /// The round as the table counts it, from 1 (the last round once the game is over).
    pub fn round(&self) -> u32 {
        self.ledger.clock().act + 1
    }
}

//! Actions: the JSON-readable [`Action`] enum, legal-action enumeration and `apply`, with the flow of the
//! round (strategy, action and status phases) and the card effects they drive.

use crate::content::{AbilityKind, CardEffect, Effect, Window};
use crate::state::{
    AgendaOp, MAX_PLAYERS, NOBODY, PendingCard, Phase, Pool, State, Step, Vote, effect, kind, note,
    owner, slot,
};
use crate::words::count;
use coffer_core::{ActionError, Cause, Key, Owner, Refusal, ZoneId};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// One player action. JSON reads `{"type":"tactical","system":3}`. Systems, ship classes and strategy
/// cards are indices into the galaxy, `data/ships.json` and `data/strategy_cards.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Strategy phase: take a strategy card nobody holds.
    Pick {
        /// Card index.
        card: u8,
    },
    /// Tactical action (T4): spend a tactic token and place it in a system without one of your tokens.
    Tactical {
        /// System index.
        system: u16,
    },
    /// Production in the activated system: one ship of a class from your ship reinforcements.
    Produce {
        /// Ship-class index.
        class: u8,
    },
    /// Ends production (and the tactical action).
    Done,
    /// Strategic action: resolve the primary of a strategy card you hold and have not used.
    Strategic {
        /// Card index.
        card: u8,
    },
    /// Pass for the rest of the action phase (only once every card you hold is used).
    Pass,
    /// Put one gained token into a pool (T2).
    Gain {
        /// The pool.
        pool: Pool,
    },
    /// Spend influence for tokens, one per 3 (T9); the excess is wasted.
    Buy {
        /// Influence spent.
        influence: u32,
    },
    /// Resolve the secondary of the card just played, paying its cost in strategy tokens (T5).
    Secondary,
    /// Decline the secondary.
    Decline,
    /// Diplomacy: the system where each other player places a token.
    Diplomacy {
        /// System index.
        system: u16,
    },
    /// The pool a token placed "from reinforcements" comes from when reinforcements are empty (T3).
    Fallback {
        /// The pool.
        pool: Pool,
    },
    /// Warfare: remove one of your tokens from the board.
    RemoveToken {
        /// System index.
        system: u16,
    },
    /// Construction secondary: place a token from reinforcements in a system (T3, T6).
    Place {
        /// System index.
        system: u16,
        /// The pool it comes from if reinforcements are empty (T3); omitted otherwise.
        #[serde(default)]
        fallback: Option<Pool>,
    },
    /// Redistribute every command-sheet token among the three pools (status phase, Warfare).
    Redistribute {
        /// Tactic pool.
        tactic: u8,
        /// Fleet pool.
        fleet: u8,
        /// Strategy pool.
        strategy: u8,
    },
    /// T7/K6: remove one ship over the fleet limit to reinforcements (the only legal action while pending).
    RemoveShip {
        /// System index.
        system: u16,
        /// Ship-class index.
        class: u8,
    },
    /// Trade's primary (T11): the other players who resolve the secondary without spending a command
    /// token, any number of them: `{"type":"free_secondaries","players":[1,3]}`.
    FreeSecondaries {
        /// Player indices, each at most once; not the active player.
        players: Players,
    },
    /// Tactical action, movement (T14): one ship of a class moves from a system into the activated system,
    /// transporting up to its capacity of fighters from the system it starts in.
    /// `{"type":"move","from":4,"class":3,"fighters":2}`
    Move {
        /// System index the ship starts in.
        from: u16,
        /// Ship-class index (a class with a move value).
        class: u8,
        /// Fighters it transports (omitted: none).
        #[serde(default)]
        fighters: u8,
    },
    /// Ends movement: a space combat follows if another player has ships in the activated system (T15),
    /// else production.
    EndMovement,
    /// Space combat (T15): announce a retreat this combat round.
    AnnounceRetreat,
    /// Space combat (T15): announce no retreat this combat round.
    NoRetreat,
    /// Space combat (T15): the hits your combat roll produced (dice are rolled at the table).
    Roll {
        /// Hits, at most one per ship of yours in the combat.
        hits: u8,
    },
    /// Space combat (T15): destroy one of your ships in the combat for a hit against you.
    Destroy {
        /// Ship-class index.
        class: u8,
    },
    /// Edict (T17): over a law's fleet-pool maximum, return a token from your fleet pool to its owner's
    /// reinforcements: one of yours (`player` is you) or another player's.
    Release {
        /// Whose token.
        player: u16,
    },
    /// Elimination (T18, LRR 33): after the invasion step, the active player records that the table found
    /// a player (another, or themselves) meeting LRR 33.1's three conditions; their command tokens and
    /// units leave play. `{"type":"eliminate","player":2}`
    Eliminate {
        /// The eliminated player.
        player: u16,
    },
    /// Star Forge (T19), a component action taking the turn: spend the Star Forge's strategy tokens to
    /// place ships of a class from your reinforcements in a system holding one of your ships of the Star
    /// Forge's class (the Embers of Muaat: 1 token; 2 fighters or 1 destroyer; a war sun's system).
    /// `{"type":"star_forge","system":4,"class":1}`
    StarForge {
        /// System index.
        system: u16,
        /// Ship-class index of the ships placed.
        class: u8,
    },
    /// Play an action card of your hand (T22), by its slot in the game's list of dealt cards, in its
    /// window, with what its effect needs: `player` (Insubordination, Signal Jamming), `system` (Unexpected
    /// Action, Signal Jamming, Skilled Retreat) and `fallback` (Skilled Retreat: the pool of the token when
    /// reinforcements are empty); a rider's prediction, `vote` or `elect`.
    /// `{"type":"play_card","card":0}`, `{"type":"play_card","card":2,"player":1}`
    PlayCard {
        /// Slot of the card in the game's list of dealt cards.
        card: u8,
        /// The player the card targets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player: Option<u16>,
        /// The system the card targets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system: Option<u16>,
        /// The pool a placed token comes from when reinforcements are empty (T3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fallback: Option<Pool>,
        /// A rider's prediction of For or Against.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vote: Option<Vote>,
        /// A rider's prediction of the player elected.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        elect: Option<u16>,
    },
    /// Play no (more) action card in this window (T22).
    NoCard,
    /// Use an ability that reacts to another player (T23), by its index in the game's list: Nullification
    /// Field after a system holding your ships is activated; Foresight, with the adjacent `system`, after
    /// ships move into a system holding yours. `{"type":"use_ability","ability":1,"system":4}`
    UseAbility {
        /// Index into the game's abilities.
        ability: u8,
        /// Foresight's system.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system: Option<u16>,
        /// Fabrication's pool for the command token gained (T28).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pool: Option<Pool>,
    },
    /// Do not use the ability the game waits on (T23).
    NoReaction,
    /// Quantum Datahub Node (T27): at the end of the strategy phase, give your strategy card `give` to its
    /// other player... and take their card `take`. `{"type":"swap_cards","give":1,"take":4}`
    SwapCards {
        /// Your card given.
        give: u8,
        /// The other player's card taken.
        take: u8,
    },
    /// Research Grant Reallocation (T29): the speaker enters how many prerequisites the technology the
    /// elected player gains has (0 to 4). `{"type":"prerequisites","count":2}`
    Prerequisites {
        /// The number of prerequisites.
        count: u8,
    },
    /// Genetic Recombination (T27): before votes are cast, name the player who must vote as you choose or
    /// return a fleet-pool token. `{"type":"recombine","player":2}`
    Recombine {
        /// The player named.
        player: u16,
    },
    /// A component action that spends strategy tokens and takes the turn (T21: Orbital Drop, Production
    /// Biomes): its index in the game's list of them (`coffer describe` and the table name them).
    /// `{"type":"component_action","ability":0}`
    ComponentAction {
        /// Index into the game's component actions.
        ability: u8,
    },
    /// Agenda phase (T20): the speaker enters the agenda revealed from the deck: its index in
    /// `data/agendas.json`, or none for an agenda that does nothing to command tokens.
    /// `{"type":"reveal_agenda","agenda":0}`, `{"type":"reveal_agenda"}`
    RevealAgenda {
        /// Agenda index; omitted: an agenda without a command-token effect.
        #[serde(default)]
        agenda: Option<u8>,
    },
    /// Quash (T20, the Xxcha Kingdom): spend a strategy token to discard the revealed agenda; the speaker
    /// reveals another.
    Quash,
    /// Quash (T20): let the revealed agenda stand.
    NoQuash,
    /// Agenda phase (T20): the outcome the table voted for a For/Against agenda.
    /// `{"type":"outcome","vote":"against"}`
    Outcome {
        /// For or Against.
        vote: Vote,
        /// The players who voted Against, when the agenda's Against concerns them (Wormhole Research;
        /// T24): `{"type":"outcome","vote":"against","voted_against":[0,2]}`.
        #[serde(default, skip_serializing_if = "Players::is_empty")]
        voted_against: Players,
    },
    /// Agenda phase (T24): the strategy card an Elect Strategy Card agenda elects.
    /// `{"type":"elect_card","card":3}`
    ElectCard {
        /// Card index.
        card: u8,
    },
    /// Minister of War (T24): at the end of your turn, discard it to return your command token in
    /// `system` to reinforcements and take one more action. `{"type":"additional_action","system":3}`
    AdditionalAction {
        /// System index.
        system: u16,
    },
    /// Agenda phase (T20): the player an Elect Player agenda elects. `{"type":"elect","player":2}`
    Elect {
        /// The elected player.
        player: u16,
    },
    /// Agenda phase (T20): return a command token from a pool of your command sheet to reinforcements.
    /// `{"type":"return_token","pool":"tactic"}`
    ReturnToken {
        /// The pool.
        pool: Pool,
    },
    /// Space combat (T16): retreat every ship to an adjacent system and place a command token there.
    Retreat {
        /// System index.
        system: u16,
        /// The pool the token comes from if reinforcements are empty (T3); omitted otherwise.
        #[serde(default)]
        fallback: Option<Pool>,
    },
}

/// A set of players, written as the list of their indices in ascending order (`[1, 3]`), at most
/// [`MAX_PLAYERS`]: one written form per set, so an action has one JSON text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Players(pub u8);

impl Players {
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Whether player `p` is in the set.
    pub fn contains(self, p: Owner) -> bool {
        p.index() < MAX_PLAYERS && self.0 & (1 << p.0) != 0
    }

    /// The players in ascending order.
    pub fn iter(self) -> impl Iterator<Item = Owner> {
        (0..MAX_PLAYERS as u16)
            .map(Owner)
            .filter(move |&p| self.contains(p))
    }

    /// "p1 and p3", "p1, p2 and p3"; empty for none.
    pub fn names(self) -> String {
        let names: Vec<String> = self.iter().map(|p| p.to_string()).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

impl Serialize for Players {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|p| p.0))
    }
}

impl<'de> Deserialize<'de> for Players {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Players, D::Error> {
        let list = Vec::<u8>::deserialize(d)?;
        let mut set = 0u8;
        for p in list {
            if usize::from(p) >= MAX_PLAYERS {
                return Err(serde::de::Error::custom(format!(
                    "player {p}: players are numbered 0 to {}",
                    MAX_PLAYERS - 1
                )));
            }
            if set & (1 << p) != 0 {
                return Err(serde::de::Error::custom(format!(
                    "player {p} is listed twice"
                )));
            }
            // One written form per set, as listed: a player below one already given is out of order.
            if set >> p != 0 {
                return Err(serde::de::Error::custom(format!(
                    "player {p} comes after a higher one: list the players in ascending order"
                )));
            }
            set |= 1 << p;
        }
        Ok(Players(set))
    }
}

impl Action {
    /// The action's code in events' [`Cause::Action`].
    pub fn code(&self) -> u16 {
        match self {
            Action::Pick { .. } => 0,
            Action::Tactical { .. } => 1,
            Action::Produce { .. } => 2,
            Action::Done => 3,
            Action::Strategic { .. } => 4,
            Action::Pass => 5,
            Action::Gain { .. } => 6,
            Action::Buy { .. } => 7,
            Action::Secondary => 8,
            Action::Decline => 9,
            Action::Diplomacy { .. } => 10,
            Action::Fallback { .. } => 11,
            Action::RemoveToken { .. } => 12,
            Action::Place { .. } => 13,
            Action::Redistribute { .. } => 14,
            Action::RemoveShip { .. } => 15,
            Action::FreeSecondaries { .. } => 16,
            Action::Move { .. } => 17,
            Action::EndMovement => 18,
            Action::AnnounceRetreat => 19,
            Action::NoRetreat => 20,
            Action::Roll { .. } => 21,
            Action::Destroy { .. } => 22,
            Action::Retreat { .. } => 23,
            Action::Release { .. } => 24,
            Action::Eliminate { .. } => 25,
            Action::StarForge { .. } => 26,
            Action::RevealAgenda { .. } => 27,
            Action::Quash => 28,
            Action::NoQuash => 29,
            Action::Outcome { .. } => 30,
            Action::Elect { .. } => 31,
            Action::ReturnToken { .. } => 32,
            Action::ComponentAction { .. } => 33,
            Action::PlayCard { .. } => 34,
            Action::NoCard => 35,
            Action::UseAbility { .. } => 36,
            Action::NoReaction => 37,
            Action::ElectCard { .. } => 38,
            Action::AdditionalAction { .. } => 39,
            Action::SwapCards { .. } => 40,
            Action::Recombine { .. } => 41,
            Action::Prerequisites { .. } => 42,
        }
    }
}

/// Most prerequisites a technology has (T29: the war sun's four).
const MAX_PREREQUISITES: u8 = 4;

fn illegal(message: String) -> ActionError {
    ActionError::Illegal(message)
}

/// The key of notes about strategy card `card`.
#[inline]
fn card_key(card: u8) -> Key {
    Key::new(Owner::GAME, kind::CARD, u32::from(card))
}

/// The key of notes about system `system`.
#[inline]
fn system_key(system: u16) -> Key {
    Key::new(Owner::GAME, kind::SYSTEM, u32::from(system))
}

/// The key of notes about `player`'s play.
#[inline]
fn play_key(player: Owner) -> Key {
    Key::new(player, kind::PLAY, 0)
}

/// A player as a note's number: their index.
#[inline]
fn arg(player: Owner) -> i32 {
    i32::from(player.0)
}

/// The key of notes about the round as a whole.
const ROUND_KEY: Key = Key::new(Owner::GAME, kind::PLAY, 0);

impl State {
    /// Appends every action `player` may take now.
    pub fn legal_actions(&self, player: Owner, out: &mut Vec<Action>) {
        let Some(actor) = self.actor() else { return };
        if player != actor {
            return;
        }
        let p = actor;
        if let Some(first) = self.ledger.pending().first() {
            let owner = first.key.owner;
            for d in self
                .ledger
                .pending()
                .iter()
                .filter(|d| d.key.owner == owner)
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
            return;
        }
        let f = &self.flow;
        let systems = self.rules.system_count();
        match f.step {
            Step::Over => {}
            Step::Pick => {
                for c in 0..self.rules.cards.len() {
                    if f.holder[c] == NOBODY {
                        out.push(Action::Pick { card: c as u8 });
                    }
                }
            }
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
            Step::Prerequisites => {
                for count in 0..=MAX_PREREQUISITES {
                    out.push(Action::Prerequisites { count });
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
            Step::StrategyWindow | Step::CombatWindow | Step::Riders => {
                let window = match f.step {
                    Step::StrategyWindow => Window::StartOfStrategyPhase,
                    Step::CombatWindow => Window::StartOfCombatRound,
                    _ => Window::AfterAgendaRevealed,
                };
                self.push_cards(p, window, out);
                out.push(Action::NoCard);
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
            Step::Redistribute => self.push_redistributions(p, out),
        }
    }

    /// Every redistribution of `p`'s command sheet (T8), within a law's fleet-pool maximum.
    fn push_redistributions(&self, p: Owner, out: &mut Vec<Action>) {
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
    fn push_placements(
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
    fn push_star_forge(&self, p: Owner, out: &mut Vec<Action>) {
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
    fn push_production(&self, p: Owner, out: &mut Vec<Action>) {
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
    fn push_moves(&self, p: Owner, out: &mut Vec<Action>) {
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

    fn may_gain_into(&self, player: Owner, pool: Pool) -> bool {
        pool != Pool::Fleet
            || self
                .own_fleet_max(player)
                .is_none_or(|m| self.pool(player, Pool::Fleet) < m)
    }

    /// The most influence `player` may spend in a buy: what they have, and no more tokens than their
    /// reinforcements hold (T3: a token that cannot be gained cannot be bought).
    #[inline]
    fn most_influence_to_spend(&self, player: Owner) -> u32 {
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
    fn secondary_cost(&self, q: Owner) -> u32 {
        // T21: Masters of Trade, for the card its faction names.
        let free = self.rules.free_secondaries[q.index()] & (1 << self.flow.card) != 0;
        if free || self.flow.pact || Players(self.flow.free).contains(q) {
            return 0;
        }
        u32::from(self.rules.cards[usize::from(self.flow.card)].secondary_cost)
    }

    /// Applies `action` for `player`. On `Err` the flow is restored here and the adapter rolls the ledger
    /// back, so a refusal changes nothing.
    ///
    /// # Errors
    /// [`ActionError`] naming why.
    pub fn apply(&mut self, player: Owner, action: &Action) -> Result<(), ActionError> {
        let saved = self.flow;
        let result = self.apply_inner(player, action);
        if result.is_err() {
            self.flow = saved;
        }
        result
    }

    fn apply_inner(&mut self, player: Owner, action: &Action) -> Result<(), ActionError> {
        if player.0 >= u16::from(self.players()) {
            return Err(ActionError::NoSuchPlayer {
                player: player.0,
                players: u16::from(self.players()),
            });
        }
        let cause = Cause::Action {
            player,
            code: action.code(),
        };
        // A fleet-limit choice (K6) is resolved even after the last round ends: the game finishes once
        // nothing is pending.
        if let Action::RemoveShip { system, class } = *action {
            return self.remove_ship(player, system, class, cause);
        }
        if self.flow.phase == Phase::Over {
            return Err(ActionError::GameOver);
        }
        self.ledger.ensure_nothing_pending()?;
        let actor = self.actor().unwrap_or(owner(NOBODY));
        if player != actor {
            let why = self.why().unwrap_or(Cow::Borrowed("to act"));
            return Err(ActionError::NotYourTurn {
                player,
                reason: format!("{actor} has {why}"),
            });
        }
        let p = actor;
        let step = self.flow.step;
        let wrong = || {
            illegal(format!(
                "{} is not possible {}",
                self.action_text(action),
                step.while_text()
            ))
        };
        match (step, *action) {
            (Step::Pick, Action::Pick { card }) => self.pick(p, card, cause),
            (Step::Turn, Action::Tactical { system }) => self.tactical(p, system, cause),
            (Step::Turn, Action::Strategic { card }) => self.strategic(p, card, cause),
            (Step::Turn, Action::Pass) => self.pass(p, cause),
            (Step::Turn, Action::StarForge { system, class }) => {
                self.star_forge(p, system, class, cause)
            }
            (Step::Turn, Action::ComponentAction { ability }) => {
                self.component_action(p, ability, cause)
            }
            (Step::Turn, Action::UseAbility { ability, pool, .. }) => {
                self.fabrication(p, ability, pool, cause)
            }
            (
                Step::Turn | Step::StrategyWindow | Step::CombatWindow | Step::Riders,
                Action::PlayCard {
                    card,
                    player,
                    system,
                    fallback,
                    vote,
                    elect,
                },
            ) => {
                let played = PendingCard {
                    card,
                    player,
                    system,
                    fallback,
                    vote,
                    elect,
                };
                self.play_card(p, played, true, cause)
            }
            (
                Step::Nullify,
                Action::UseAbility {
                    ability, system, ..
                },
            ) => self.nullify(p, ability, system, cause),
            (
                Step::Cancel,
                Action::UseAbility {
                    ability, system, ..
                },
            ) => {
                let i = self.usable(p, ability, AbilityKind::CancelActionCard)?;
                if system.is_some() {
                    return Err(illegal(format!(
                        "{} takes no `system`",
                        self.rules.abilities[i].name
                    )));
                }
                self.cancel_card(p, true, cause)
            }
            (Step::Cancel, Action::NoReaction) => self.cancel_card(p, false, cause),
            (Step::WormholeFallback, Action::Fallback { pool }) => {
                self.wormhole_fallback(p, pool, cause)
            }
            (Step::Prerequisites, Action::Prerequisites { count }) => {
                self.prerequisites(count, cause)
            }
            (Step::EndOfStrategy, Action::SwapCards { give, take }) => {
                self.swap_cards(p, give, take, cause)
            }
            (Step::EndOfStrategy, Action::NoReaction) => {
                self.start_action_phase(cause);
                Ok(())
            }
            (Step::Recombine, Action::Recombine { player }) => self.recombine(p, player, cause),
            (Step::Recombine, Action::NoReaction) => {
                self.after_votes(cause);
                Ok(())
            }
            (Step::Comply, Action::NoReaction) => {
                self.ledger
                    .note(self.agenda_key(), note::COMPLY, [arg(p), 0, 0], cause);
                self.after_votes(cause);
                Ok(())
            }
            (Step::Comply, Action::ReturnToken { pool: Pool::Fleet }) => {
                if self.pool(p, Pool::Fleet) == 0 {
                    return Err(illegal(format!("{p}'s fleet pool is empty")));
                }
                self.ledger.move_tokens(
                    p,
                    self.h.pools[Pool::Fleet.index()],
                    self.h.reinforcements,
                    1,
                    cause,
                )?;
                self.ledger
                    .note(self.agenda_key(), note::RETURN, [arg(p), 0, 0], cause);
                self.recheck_fleet(p, cause);
                self.after_votes(cause);
                Ok(())
            }
            (Step::Nullify, Action::NoReaction) => {
                self.flow.step = Step::Move;
                Ok(())
            }
            (
                Step::Foresight,
                Action::UseAbility {
                    ability, system, ..
                },
            ) => self.foresight(p, ability, system, cause),
            (Step::Foresight, Action::NoReaction) => {
                self.start_combat(cause);
                Ok(())
            }
            (
                Step::EndOfTurn,
                Action::Redistribute {
                    tactic,
                    fleet,
                    strategy,
                },
            ) => self.predictive_redistribution(p, [tactic, fleet, strategy], cause),
            (Step::EndOfTurn, Action::NoReaction) => {
                self.pass_turn(cause);
                Ok(())
            }
            (Step::StrategyWindow, Action::NoCard) => {
                self.flow.window += 1;
                self.strategy_window();
                Ok(())
            }
            (Step::CombatWindow, Action::NoCard) => {
                self.flow.window += 1;
                self.combat_window();
                Ok(())
            }
            (Step::Riders, Action::NoCard) => {
                self.flow.window += 1;
                self.rider_window(cause);
                Ok(())
            }
            (Step::Produce, Action::Produce { class }) => self.produce(p, class, cause),
            (Step::Produce, Action::Eliminate { player }) => self.eliminate(p, player, cause),
            (Step::Produce, Action::Done) => {
                // Each produced ship was checked against the fleet limit already (T7).
                let system = self.flow.system;
                self.ledger
                    .note(system_key(system), note::DONE, [arg(p), 0, 0], cause);
                self.end_turn(cause);
                Ok(())
            }
            (Step::Gain, Action::Gain { pool }) => self.gain(p, pool, cause),
            (Step::Buy, Action::Buy { influence }) => self.buy(p, influence, cause),
            (Step::Secondary, Action::Secondary) => self.secondary(p, cause),
            (Step::Secondary, Action::Decline) if Players(self.flow.free).contains(p) => {
                Err(illegal(format!(
                    "{p} was chosen to resolve the secondary ability of {} without spending a command token, and must resolve it",
                    self.card_name(self.flow.card)
                )))
            }
            (Step::Secondary, Action::Decline) => {
                let card = self.flow.card;
                self.ledger
                    .note(card_key(card), note::DECLINE, [arg(p), 0, 0], cause);
                self.flow.cursor += 1;
                self.next_secondary(cause);
                Ok(())
            }
            (Step::Target, Action::Diplomacy { system }) => self.diplomacy(p, system, cause),
            (Step::Fallback, Action::Fallback { pool }) => self.fallback(p, pool, cause),
            (Step::Remove, Action::RemoveToken { system }) => self.remove_token(p, system, cause),
            (Step::Place, Action::Place { system, fallback }) => {
                self.place(p, system, fallback, cause)
            }
            (
                Step::Redistribute,
                Action::Redistribute {
                    tactic,
                    fleet,
                    strategy,
                },
            ) => self.redistribute(p, [tactic, fleet, strategy], cause),
            (Step::FreeSecondaries, Action::FreeSecondaries { players }) => {
                self.free_secondaries(p, players, cause)
            }
            (
                Step::Move,
                Action::Move {
                    from,
                    class,
                    fighters,
                },
            ) => self.move_ship(p, from, class, fighters, cause),
            (Step::Move, Action::EndMovement) => {
                self.end_movement(cause);
                Ok(())
            }
            // Production (or its end) ends movement when no space combat follows.
            (Step::Move, Action::Produce { .. } | Action::Done | Action::Eliminate { .. })
                if !self.combat_due() =>
            {
                self.flow.step = Step::Produce;
                self.apply_inner(player, action)
            }
            (Step::Move, Action::Produce { .. } | Action::Done | Action::Eliminate { .. }) => {
                Err(illegal(format!(
                    "{} has ships in {}: movement ends (`end_movement`) and a space combat is resolved before production",
                    self.opponent(p).unwrap_or(p),
                    self.system_name(self.flow.system)
                )))
            }
            (Step::Announce, Action::AnnounceRetreat) => self.announce(p, true, cause),
            (Step::Announce, Action::NoRetreat) => self.announce(p, false, cause),
            (Step::Roll, Action::Roll { hits }) => self.roll(p, hits, cause),
            (Step::Assign, Action::Destroy { class }) => self.destroy(p, class, cause),
            (Step::Retreat, Action::Retreat { system, fallback }) => {
                self.retreat(p, system, fallback, cause)
            }
            (Step::Capture, Action::Fallback { pool }) => self.capture_from(p, pool, cause),
            (Step::Reveal, Action::RevealAgenda { agenda }) => self.reveal(p, agenda, cause),
            (Step::Quash, Action::Quash) => self.quash(p, cause),
            (Step::Quash, Action::NoQuash) => {
                self.ledger
                    .note(self.agenda_key(), note::NO_QUASH, [arg(p), 0, 0], cause);
                self.after_reveal(cause);
                Ok(())
            }
            (
                Step::Outcome,
                Action::Outcome {
                    vote,
                    voted_against,
                },
            ) => self.outcome(vote, voted_against, cause),
            (Step::Outcome, Action::ElectCard { card }) => self.elect_card(card, cause),
            (Step::EndOfTurn, Action::AdditionalAction { system }) => {
                self.additional_action(p, system, cause)
            }
            (Step::Outcome, Action::Elect { player }) => self.elect(player, cause),
            (Step::ReturnTokens, Action::ReturnToken { pool }) => self.return_token(p, pool, cause),
            (Step::Release, Action::Release { player }) => self.release(p, player, cause),
            _ => Err(wrong()),
        }
    }

    fn system_index(&self, system: u16) -> Result<usize, ActionError> {
        let s = usize::from(system);
        let count = self.rules.system_count();
        if s >= count {
            return Err(illegal(format!(
                "system #{system} does not exist: the galaxy has systems #0 to #{}",
                count - 1
            )));
        }
        Ok(s)
    }

    // ----- strategy phase -----

    /// The index of strategy card `card`, or a refusal naming the cards there are.
    fn card_index(&self, card: u8) -> Result<usize, ActionError> {
        let c = usize::from(card);
        let count = self.rules.cards.len();
        if c >= count {
            return Err(illegal(format!(
                "strategy card #{card} does not exist: this game has cards #0 to #{}",
                count - 1
            )));
        }
        Ok(c)
    }

    fn pick(&mut self, p: Owner, card: u8, cause: Cause) -> Result<(), ActionError> {
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

    fn start_action_phase(&mut self, cause: Cause) {
        self.ledger.end_scope(coffer_core::Scope::Phase);
        let n = usize::from(self.players());
        let mut initiative = [u8::MAX; crate::state::MAX_PLAYERS];
        for (c, card) in self.rules.cards.iter().enumerate() {
            let h = self.flow.holder[c];
            if h != NOBODY {
                let i = &mut initiative[usize::from(h)];
                *i = (*i).min(card.initiative);
            }
        }
        let mut order = [0u8; crate::state::MAX_PLAYERS];
        for (i, o) in order.iter_mut().enumerate().take(n) {
            *o = i as u8;
        }
        order[..n].sort_by_key(|&p| (initiative[usize::from(p)], p));
        self.flow.order = order;
        self.flow.phase = Phase::Action;
        self.flow.step = Step::Turn;
        // T18: an eliminated player takes no turn.
        self.flow.passed = self.flow.out;
        let first = order[..n]
            .iter()
            .copied()
            .find(|&q| !self.is_eliminated(owner(q)))
            .unwrap_or(order[0]);
        self.flow.turn = first;
        self.ledger.note(
            ROUND_KEY,
            note::ACTION_PHASE,
            [i32::from(first), 0, 0],
            cause,
        );
    }

    // ----- action phase -----

    fn tactical(&mut self, p: Owner, system: u16, cause: Cause) -> Result<(), ActionError> {
        let s = self.system_index(system)?;
        if self.pool(p, Pool::Tactic) == 0 {
            return Err(illegal(format!("{p} has no token in the tactic pool")));
        }
        if self.has_token(p, s) {
            return Err(illegal(format!(
                "{} already holds a command token of {p}",
                self.system_name(system)
            )));
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
    fn activation_fleet_loss(&mut self, p: Owner, s: usize, cause: Cause) {
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

    fn produce(&mut self, p: Owner, class: u8, cause: Cause) -> Result<(), ActionError> {
        let c = self.class_index(class)?;
        if self.flow.built >= self.rules.production {
            return Err(illegal(format!(
                "{p} has produced {} ships in this tactical action, the most one tactical action produces",
                self.flow.built
            )));
        }
        if !self.may_produce(p, c) {
            return Err(illegal(format!(
                "{p} cannot produce a {}: neither their faction nor a technology they own unlocks it",
                self.class_name(class)
            )));
        }
        if self.ship_reserve(p, c) == 0 {
            return Err(illegal(format!(
                "{p} has no {} left in reinforcements",
                self.class_name(class)
            )));
        }
        let s = usize::from(self.flow.system);
        if let Some(q) = self.opponent(p) {
            return Err(illegal(format!(
                "{q} has ships in {}: no ships are produced in a system holding another player's ships",
                self.system_name(self.flow.system)
            )));
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
    fn counts_against_fleet(&self, p: Owner, c: usize) -> bool {
        self.rules.classes[c].fleet || self.rules.excess_fighters[p.index()] > 0
    }

    /// The index of ship class `class`, or a refusal naming the classes there are.
    fn class_index(&self, class: u8) -> Result<usize, ActionError> {
        let c = usize::from(class);
        let count = self.rules.class_count();
        if c >= count {
            return Err(illegal(format!(
                "ship class #{class} does not exist: this game has classes #0 to #{}",
                count - 1
            )));
        }
        Ok(c)
    }

    fn strategic(&mut self, p: Owner, card: u8, cause: Cause) -> Result<(), ActionError> {
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

    /// T19: the Star Forge component action; it takes the turn.
    fn star_forge(
        &mut self,
        p: Owner,
        system: u16,
        class: u8,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let s = self.system_index(system)?;
        let c = self.class_index(class)?;
        let Some(forge) = &self.rules.star_forge[p.index()] else {
            return Err(illegal(format!(
                "{p}'s faction, {}, has no Star Forge",
                self.rules.faction_names[p.index()]
            )));
        };
        let (cost, with) = (forge.cost, forge.with);
        let Some(&(_, most)) = forge.place.iter().find(|&&(k, _)| k == class) else {
            let choices: Vec<String> = forge
                .place
                .iter()
                .map(|&(k, n)| format!("{} (up to {n})", self.class_name(k)))
                .collect();
            return Err(illegal(format!(
                "Star Forge places {}, not {}",
                choices.join(" or "),
                self.class_name(class)
            )));
        };
        if self.ships(p, s, usize::from(with)) == 0 {
            return Err(illegal(format!(
                "{} holds no {} of {p}'s: Star Forge places ships only where one is",
                self.system_name(system),
                self.class_name(with)
            )));
        }
        let have = self.pool(p, Pool::Strategy);
        if have < u32::from(cost) {
            return Err(illegal(format!(
                "Star Forge spends {} from the strategy pool, but {p} has {have}",
                count(u32::from(cost), "token", "tokens")
            )));
        }
        let placed = self.ship_reserve(p, c).min(u32::from(most));
        if placed == 0 {
            return Err(illegal(format!(
                "{p} has no {} left in reinforcements",
                self.class_name(class)
            )));
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

    /// `p`'s ability of this kind that they may use now, by index: its card is ready and the strategy pool
    /// holds what it spends.
    fn reaction(&self, p: Owner, kind: AbilityKind) -> Option<usize> {
        (0..self.rules.abilities.len()).find(|&i| {
            let a = &self.rules.abilities[i];
            a.kind == kind && owner(a.player) == p && self.may_use_ability(i)
        })
    }

    /// Foresight's systems: adjacent to the activated system and holding no other player's ships.
    fn foresight_systems(&self, p: Owner) -> impl Iterator<Item = u16> + '_ {
        let active = usize::from(self.flow.system);
        self.adjacent_to(active)
            .filter(move |&d| !self.others_have_ships(p, usize::from(d)))
    }

    /// Spends ability `i`'s strategy tokens and exhausts its card if it exhausts, and says so.
    fn spend_ability(&mut self, p: Owner, i: usize, cause: Cause) -> Result<(), ActionError> {
        let a = &self.rules.abilities[i];
        let (cost, exhausts) = (a.cost, a.exhausts);
        if cost > 0 && a.kind != AbilityKind::Foresight {
            self.ledger.move_tokens(
                p,
                self.h.pools[Pool::Strategy.index()],
                self.h.reinforcements,
                u32::from(cost),
                cause,
            )?;
        }
        if exhausts {
            self.ledger.activate(self.h.abilities[i], cause)?;
        }
        let key = Key::new(p, kind::ABILITY, i as u32);
        self.ledger
            .note(key, note::COMPONENT, [arg(p), i32::from(cost), 0], cause);
        Ok(())
    }

    /// The ability `ability` of `p`, of this kind and usable now, or a refusal saying why not.
    fn usable(&self, p: Owner, ability: u8, kind: AbilityKind) -> Result<usize, ActionError> {
        let i = usize::from(ability);
        match self.rules.abilities.get(i) {
            Some(a) if a.kind == kind && owner(a.player) == p && self.may_use_ability(i) => Ok(i),
            Some(a) => Err(illegal(format!(
                "{} (#{ability}) cannot be used by {p} now",
                a.name
            ))),
            None => Err(illegal(format!(
                "ability #{ability} does not exist: this game has {}",
                count(self.rules.abilities.len() as u32, "ability", "abilities")
            ))),
        }
    }

    /// T28, Fabrication: a relic fragment is purged for a command token gained into `pool` (T2; none with
    /// empty reinforcements, T3); it takes the turn.
    fn fabrication(
        &mut self,
        p: Owner,
        ability: u8,
        pool: Option<Pool>,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let i = self.usable(p, ability, AbilityKind::Fabrication)?;
        let Some(pool) = pool else {
            return Err(illegal(format!(
                "{} needs the `pool` of the command token gained",
                self.rules.abilities[i].name
            )));
        };
        if !self.may_gain_into(p, pool) {
            return Err(illegal(format!("{p}'s fleet pool holds the law's maximum")));
        }
        let fragments = self.h.fragments[p.index()];
        self.spend_ability(p, i, cause)?;
        self.ledger.spend(fragments, 1, cause)?;
        // K4.2: nothing is gained from empty reinforcements (reported as lost).
        let lost = self
            .ledger
            .gain_tokens(p, self.h.pools[pool.index()], 1, cause)?
            .lost;
        let f = &mut self.flow.forfeited[p.index()];
        *f = f.saturating_add(lost as u16);
        self.end_turn(cause);
        Ok(())
    }

    /// Nullification Field: spend, exhaust, and the active player's turn ends at once.
    fn nullify(
        &mut self,
        p: Owner,
        ability: u8,
        system: Option<u16>,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let i = self.usable(p, ability, AbilityKind::EndActivatorsTurn)?;
        if system.is_some() {
            return Err(illegal(format!(
                "{} takes no `system`",
                self.rules.abilities[i].name
            )));
        }
        self.spend_ability(p, i, cause)?;
        self.pass_turn(cause);
        Ok(())
    }

    /// Foresight: a token from the strategy pool is placed in the adjacent system (T6: where one of the
    /// player's is, it goes to reinforcements), and every ship of the player's moves there from the
    /// activated system; no space combat follows.
    fn foresight(
        &mut self,
        p: Owner,
        ability: u8,
        system: Option<u16>,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let i = self.usable(p, ability, AbilityKind::Foresight)?;
        let Some(system) = system else {
            return Err(illegal(format!(
                "{} needs a `system` to move to",
                self.rules.abilities[i].name
            )));
        };
        let d = self.system_index(system)?;
        if !self.foresight_systems(p).any(|x| x == system) {
            return Err(illegal(format!(
                "Foresight moves ships to a system adjacent to {} that holds no other player's ships, not {}",
                self.system_name(self.flow.system),
                self.system_name(system)
            )));
        }
        let cost = u32::from(self.rules.abilities[i].cost);
        if self.pool(p, Pool::Strategy) < cost {
            return Err(illegal(format!("{p}'s strategy pool is empty")));
        }
        self.spend_ability(p, i, cause)?;
        // K4.3: where one of p's tokens already is, the token goes to reinforcements instead (T6).
        self.ledger.move_tokens(
            p,
            self.h.pools[Pool::Strategy.index()],
            self.h.systems[d],
            cost,
            cause,
        )?;
        let (active, n) = (usize::from(self.flow.system), self.rules.class_count());
        for c in 0..n {
            let ships = self.ships(p, active, c);
            if ships > 0 {
                self.ledger.move_tokens(
                    p,
                    self.h.ships[active * n + c],
                    self.h.ships[d * n + c],
                    ships,
                    cause,
                )?;
            }
        }
        self.recheck_fleet(p, cause);
        self.flow.step = Step::Produce;
        Ok(())
    }

    /// Predictive Intelligence: at the end of the turn, exhaust it to redistribute; the turn then passes.
    fn predictive_redistribution(
        &mut self,
        p: Owner,
        want: [u8; 3],
        cause: Cause,
    ) -> Result<(), ActionError> {
        let Some(i) = self.reaction(p, AbilityKind::RedistributeAtEndOfTurn) else {
            return Err(illegal(format!(
                "{p} has no ready ability to redistribute with"
            )));
        };
        self.spend_ability(p, i, cause)?;
        self.redistribute_sheet(p, want, cause)?;
        // Minister of War may still follow.
        self.end_turn(cause);
        Ok(())
    }

    /// Whether component action `i` may be used now: its card is ready and its player's strategy pool
    /// holds what it spends.
    fn may_use_ability(&self, i: usize) -> bool {
        let a = &self.rules.abilities[i];
        let p = owner(a.player);
        let fragment = a.kind != AbilityKind::Fabrication
            || self
                .h
                .fragments
                .get(p.index())
                .is_some_and(|&f| self.ledger.value(f) > 0);
        fragment
            && !self.ledger.is_exhausted(self.h.abilities[i])
            && self.pool(p, Pool::Strategy) >= u32::from(a.cost)
    }

    /// T21: a component action that spends strategy tokens; what else it does (infantry, trade goods) is
    /// not modelled. It takes the turn.
    fn component_action(&mut self, p: Owner, ability: u8, cause: Cause) -> Result<(), ActionError> {
        let i = usize::from(ability);
        let Some(a) = self.rules.abilities.get(i) else {
            return Err(illegal(format!(
                "component action #{ability} does not exist: this game has {}",
                count(
                    self.rules.abilities.len() as u32,
                    "component action",
                    "component actions"
                )
            )));
        };
        let (name, cost, exhausts) = (&a.name, a.cost, a.exhausts);
        if owner(a.player) != p {
            return Err(illegal(format!("{name} is p{}'s, not {p}'s", a.player)));
        }
        if self.ledger.is_exhausted(self.h.abilities[i]) {
            return Err(illegal(format!(
                "{p} has already used {name} this round: its card is exhausted"
            )));
        }
        let have = self.pool(p, Pool::Strategy);
        if have < u32::from(cost) {
            return Err(illegal(format!(
                "{name} spends {} from the strategy pool, but {p} has {have}",
                count(u32::from(cost), "token", "tokens")
            )));
        }
        if cost > 0 {
            self.ledger.move_tokens(
                p,
                self.h.pools[Pool::Strategy.index()],
                self.h.reinforcements,
                u32::from(cost),
                cause,
            )?;
        }
        if exhausts {
            self.ledger.activate(self.h.abilities[i], cause)?;
        }
        let key = Key::new(p, kind::ABILITY, u32::from(ability));
        self.ledger
            .note(key, note::COMPONENT, [arg(p), i32::from(cost), 0], cause);
        self.end_turn(cause);
        Ok(())
    }

    fn pass(&mut self, p: Owner, cause: Cause) -> Result<(), ActionError> {
        for c in 0..self.rules.cards.len() {
            if self.flow.holder[c] == slot(p) && !self.ledger.is_exhausted(self.h.cards[c]) {
                return Err(illegal(format!(
                    "{p} cannot pass before the strategic action of {}",
                    self.rules.cards[c].name
                )));
            }
        }
        self.ledger.note(play_key(p), note::PASS, [0; 3], cause);
        self.flow.passed |= 1 << slot(p);
        self.end_turn(cause);
        Ok(())
    }

    /// The turn's end: the player may first use an ability for it (Predictive Intelligence, T23), then the
    /// next player who has not passed takes a turn.
    fn end_turn(&mut self, cause: Cause) {
        let p = owner(self.flow.turn);
        if !self.is_eliminated(p)
            && (self
                .reaction(p, AbilityKind::RedistributeAtEndOfTurn)
                .is_some()
                || self.may_add_action(p))
        {
            self.flow.step = Step::EndOfTurn;
            self.flow.resolver = self.flow.turn;
            return;
        }
        self.pass_turn(cause);
    }

    /// Whether `p` may now discard Minister of War for one more action (T24): they hold it, have not
    /// passed, and have a command token on the board.
    fn may_add_action(&self, p: Owner) -> bool {
        self.flow.minister == slot(p)
            && self.flow.passed & (1 << p.0) == 0
            && self.board_tokens(p) > 0
    }

    /// The next player who has not passed takes a turn; with none, the status phase.
    fn pass_turn(&mut self, cause: Cause) {
        let n = usize::from(self.players());
        let order = self.flow.order;
        let at = order[..n]
            .iter()
            .position(|&q| q == self.flow.turn)
            .unwrap_or(0);
        for k in 1..=n {
            let q = order[(at + k) % n];
            if self.flow.passed & (1 << q) == 0 {
                self.flow.turn = q;
                self.flow.step = Step::Turn;
                return;
            }
        }
        self.start_status(cause);
    }

    // ----- card effects -----

    /// Resolves the card's effects from `flow.effect` on until one waits for a choice.
    fn run_effects(&mut self, cause: Cause) {
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

    fn finish_resolution(&mut self, cause: Cause) {
        if self.flow.secondary {
            self.flow.cursor += 1;
        } else {
            self.flow.cursor = 1;
        }
        self.next_secondary(cause);
    }

    fn next_secondary(&mut self, cause: Cause) {
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
    fn enter_gain(&mut self, p: Owner, n: u8, cause: Cause) -> bool {
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

    fn forfeit(&mut self, p: Owner, n: u8, cause: Cause) {
        // K4.2: asks the kernel, which gains what reinforcements hold (nothing here) and reports the rest.
        let lost = self
            .ledger
            .gain_tokens(p, self.h.pools[Pool::Tactic.index()], u32::from(n), cause)
            .map_or(u64::from(n), |g| g.lost);
        let f = &mut self.flow.forfeited[p.index()];
        *f = f.saturating_add(lost as u16);
    }

    fn gain(&mut self, p: Owner, pool: Pool, cause: Cause) -> Result<(), ActionError> {
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

    fn after_gain(&mut self, cause: Cause) {
        match self.flow.phase {
            Phase::Status => self.flow.step = Step::Redistribute,
            // An action card's gain (T22): Summit, a Leadership Rider.
            Phase::Strategy => self.strategy_window(),
            Phase::Agenda if !self.flow.pact => self.resolve_riders(cause),
            _ => self.run_effects(cause),
        }
    }

    fn buy(&mut self, p: Owner, influence: u32, cause: Cause) -> Result<(), ActionError> {
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

    fn secondary(&mut self, q: Owner, cause: Cause) -> Result<(), ActionError> {
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
    fn free_secondaries(
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

    fn diplomacy(&mut self, p: Owner, system: u16, cause: Cause) -> Result<(), ActionError> {
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
    fn diplomacy_next(&mut self, cause: Cause) {
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

    fn fallback(&mut self, q: Owner, pool: Pool, cause: Cause) -> Result<(), ActionError> {
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

    fn remove_token(&mut self, p: Owner, system: u16, cause: Cause) -> Result<(), ActionError> {
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

    fn place(
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
    fn place_token(
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

    fn redistribute(&mut self, p: Owner, want: [u8; 3], cause: Cause) -> Result<(), ActionError> {
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
    fn redistribute_sheet(
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

    fn remove_ship(
        &mut self,
        p: Owner,
        system: u16,
        class: u8,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let s = self.system_index(system)?;
        let key = State::limit_key(p, s);
        let Some(first) = self.ledger.pending().first() else {
            return Err(illegal("no fleet-limit choice is pending".into()));
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
            return Err(illegal(format!(
                "{p} is not over the fleet limit in {}",
                self.system_name(system)
            )));
        }
        let c = self.class_index(class)?;
        let counted = self.rules.transported == Some(class) && self.excess_fighters(p, s) > 0;
        if !self.rules.classes[c].fleet && !counted {
            return Err(illegal(format!(
                "the {} class does not count toward the fleet limit",
                self.class_name(class)
            )));
        }
        if self.ships(p, s, c) == 0 {
            return Err(illegal(format!(
                "{p} has no {} in {}",
                self.class_name(class),
                self.system_name(system)
            )));
        }
        let n = self.rules.class_count();
        self.ledger
            .move_tokens(p, self.h.ships[s * n + c], self.h.ship_reserve[c], 1, cause)?;
        self.check_fleet_in(p, s, cause);
        Ok(())
    }

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
    fn move_ship(
        &mut self,
        p: Owner,
        from: u16,
        class: u8,
        fighters: u8,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let f = self.system_index(from)?;
        let c = self.class_index(class)?;
        let active = usize::from(self.flow.system);
        let (name, here) = (self.class_name(class), self.system_name(from));
        if f == active {
            return Err(illegal(format!(
                "{here} is the activated system: ships there have already arrived"
            )));
        }
        if self.has_token(p, f) {
            return Err(illegal(format!(
                "{p}'s ships in {here} cannot move: the system holds one of {p}'s command tokens"
            )));
        }
        let Some(reach) = self.move_value(p, c) else {
            return Err(illegal(format!(
                "a {name} has no move value: it moves only transported by a ship with capacity"
            )));
        };
        if self.ships(p, f, c) == 0 {
            return Err(illegal(format!("{p} has no {name} in {here}")));
        }
        let d = self.distances(p)[f];
        if d == u8::MAX {
            return Err(illegal(format!(
                "no path of adjacent systems leads from {here} to {} without passing through another player's ships",
                self.system_name(self.flow.system)
            )));
        }
        if d > reach {
            return Err(illegal(format!(
                "a {name} moves {}, but {here} is {} away from {}",
                count(u32::from(reach), "system", "systems"),
                count(u32::from(d), "system", "systems"),
                self.system_name(self.flow.system)
            )));
        }
        let carried = match self.rules.transported {
            Some(t) if fighters > 0 => {
                let capacity = self.rules.classes[c].capacity;
                let there = self.ships(p, f, usize::from(t));
                if fighters > capacity {
                    return Err(illegal(format!(
                        "a {name} transports at most {capacity}, not {fighters}"
                    )));
                }
                if u32::from(fighters) > there {
                    return Err(illegal(format!(
                        "{p} has {} in {here}, not {fighters}",
                        count(there, "fighter", "fighters")
                    )));
                }
                Some(usize::from(t))
            }
            None if fighters > 0 => {
                return Err(illegal(
                    "this game has no transported ship class: a moving ship carries none".into(),
                ));
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
    fn end_movement(&mut self, cause: Cause) {
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

    /// T15: the space combat in the activated system begins, between the active player and the defender.
    fn start_combat(&mut self, cause: Cause) {
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
    fn start_combat_round(&mut self) {
        self.flow.retreat = NOBODY;
        self.flow.hits = [0; 2];
        self.flow.window = 0;
        self.combat_window();
    }

    /// LRR 78.4: the defender, then the attacker, announces a retreat or not, if able; else the rolls.
    fn announcements(&mut self) {
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

    fn announce(&mut self, p: Owner, retreat: bool, cause: Cause) -> Result<(), ActionError> {
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
    fn roll(&mut self, p: Owner, hits: u8, cause: Cause) -> Result<(), ActionError> {
        let active = usize::from(self.flow.system);
        let dice = self.dice(p, active);
        if u32::from(hits) > dice {
            return Err(illegal(format!(
                "{p} rolls {} for their ships in the combat: at most {}",
                count(dice, "die", "dice"),
                count(dice, "hit", "hits")
            )));
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

    fn clamp_hits(&self, hits: u8, p: Owner) -> u8 {
        let ships = self.all_ships(p, usize::from(self.flow.system));
        u8::try_from(ships.min(u32::from(hits))).unwrap_or(hits)
    }

    /// The attacker assigns the hits against them, then the defender; then the retreat step.
    fn next_assignment(&mut self, cause: Cause) {
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

    fn destroy(&mut self, p: Owner, class: u8, cause: Cause) -> Result<(), ActionError> {
        let c = self.class_index(class)?;
        let active = usize::from(self.flow.system);
        if self.ships(p, active, c) == 0 {
            return Err(illegal(format!(
                "{p} has no {} in {}",
                self.class_name(class),
                self.system_name(self.flow.system)
            )));
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
    fn after_assignment(&mut self, cause: Cause) {
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

    fn next_combat_round(&mut self, cause: Cause) {
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
    fn count_fighters_after_combat(&mut self, cause: Cause) {
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
    fn edict(&mut self, winner: Owner, loser: Owner, cause: Cause) {
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
    fn capture_from(&mut self, loser: Owner, pool: Pool, cause: Cause) -> Result<(), ActionError> {
        if self.pool(loser, pool) == 0 {
            return Err(illegal(format!(
                "{loser}'s {} is empty: the token must come from a pool that holds one",
                pool.name()
            )));
        }
        let winner = owner(if slot(loser) == self.flow.turn {
            self.flow.defender
        } else {
            self.flow.turn
        });
        let Some(Some(zone)) = self.h.captured.get(winner.index()).copied() else {
            return Err(illegal(format!("{winner} places no other player's token")));
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
    fn after_capture(&mut self, winner: Owner, cause: Cause) {
        match self.fleet_pool_max() {
            Some(m) if self.fleet_tokens(winner) > u32::from(m) => {
                self.flow.step = Step::Release;
                self.flow.resolver = slot(winner);
            }
            _ => self.recheck_fleet(winner, cause),
        }
    }

    fn release(&mut self, p: Owner, whose: u16, cause: Cause) -> Result<(), ActionError> {
        let q = Owner(whose);
        if whose >= u16::from(self.players()) {
            return Err(ActionError::NoSuchPlayer {
                player: whose,
                players: u16::from(self.players()),
            });
        }
        let from = if q == p {
            if self.pool(p, Pool::Fleet) == 0 {
                return Err(illegal(format!(
                    "{p}'s fleet pool holds none of {p}'s tokens"
                )));
            }
            self.h.pools[Pool::Fleet.index()]
        } else {
            match self.h.captured.get(p.index()).copied() {
                Some(Some(zone)) if self.holds_token_of(p, q) => zone,
                _ => {
                    return Err(illegal(format!(
                        "{p}'s fleet pool holds no command token of {q}'s"
                    )));
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
    fn retreat(
        &mut self,
        p: Owner,
        system: u16,
        fallback: Option<Pool>,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let d = self.system_index(system)?;
        let active = usize::from(self.flow.system);
        let (to, from) = (self.system_name(system), self.system_name(self.flow.system));
        if !self.is_adjacent(active, system) {
            return Err(illegal(format!("{to} is not adjacent to {from}")));
        }
        if self.others_have_ships(p, d) {
            return Err(illegal(format!(
                "{to} holds another player's ships: no retreat goes there"
            )));
        }
        if self.all_ships(p, d) == 0 {
            return Err(illegal(format!(
                "{to} holds none of {p}'s ships: a retreat goes to a system holding the player's units"
            )));
        }
        let moves = self.retreat_moves_units(p);
        if !moves && fallback.is_some() {
            return Err(illegal(format!(
                "no ship of {p}'s can move out of {from}: no command token is placed, so no fallback pool is taken"
            )));
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

    // ----- elimination -----

    /// T18 (LRR 33): `whom` is eliminated, as the table found. Their command tokens and units go to the
    /// game box (33.2) but for tokens in another player's fleet pool (33.10f); tokens of other players in
    /// their fleet pool return to their owners' reinforcements (33.10e); their strategy cards return to the
    /// common play area (33.6); a speaker's token passes to the left (33.8). The cards each player picks
    /// stay as set up (33.9). A player who eliminates themselves ends their turn.
    fn eliminate(&mut self, p: Owner, whom: u16, cause: Cause) -> Result<(), ActionError> {
        let n = self.players();
        if !self.rules.elimination {
            return Err(illegal(
                "elimination is off in this game: the option `elimination` lets the table declare one".into(),
            ));
        }
        if whom >= u16::from(n) {
            return Err(illegal(format!("p{whom} is not in this {n}-player game")));
        }
        let q = Owner(whom);
        if self.is_eliminated(q) {
            return Err(illegal(format!("{q} is already eliminated")));
        }
        if self.live_players() == 1 {
            return Err(illegal(format!("{q} is the last player in the game")));
        }
        self.ledger
            .note(play_key(q), note::ELIMINATED, [0; 3], cause);
        // 33.10e: other players' tokens in the eliminated player's fleet pool go back to their owners'
        // reinforcements, or to the game box for an owner eliminated before (33.10f kept it in play).
        if let Some(zone) = self.h.captured[q.index()] {
            for r in self.owners() {
                let k = self.ledger.tokens(zone, r);
                if k > 0 {
                    let to = match self.is_eliminated(r) {
                        true => self.h.boxed[0],
                        false => self.h.reinforcements,
                    };
                    self.ledger.move_tokens(r, zone, to, k, cause)?;
                }
            }
        }
        // 33.2, one zone at a time; a token in another player's fleet pool stays there (33.10f).
        let holding: Vec<ZoneId> = self.ledger.zones_holding(q).collect();
        for zone in holding {
            let z = *self.ledger.zone(zone)?;
            if z.key.kind == kind::BOX || z.key.kind == kind::CAPTURED {
                continue;
            }
            let k = self.ledger.tokens(zone, q);
            let to = self.h.boxed[usize::from(z.supply)];
            self.ledger.move_tokens(q, zone, to, k, cause)?;
        }
        self.ledger.set(self.h.structures[q.index()], 0, cause)?;
        for holder in &mut self.flow.holder {
            if *holder == slot(q) {
                *holder = NOBODY;
            }
        }
        self.flow.out |= 1 << q.0;
        self.flow.passed |= 1 << q.0;
        if self.flow.speaker == slot(q) {
            let speaker = self.live_seat(self.flow.speaker, 0);
            self.flow.speaker = speaker;
            self.ledger
                .note(ROUND_KEY, note::SPEAKER, [i32::from(speaker), 0, 0], cause);
        }
        if q == p {
            self.end_turn(cause);
        }
        Ok(())
    }

    // ----- agenda phase (T20) -----

    /// LRR 8: after the status phase, once the configuration's round is reached, two agendas are revealed
    /// and resolved; voting is not modelled, the speaker enters the outcome.
    fn start_agenda_phase(&mut self, cause: Cause) {
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
    fn agenda_key(&self) -> Key {
        match self.flow.agenda {
            NOBODY => ROUND_KEY,
            a => Key::new(Owner::GAME, kind::AGENDA, u32::from(a)),
        }
    }

    fn reveal(&mut self, p: Owner, agenda: Option<u8>, cause: Cause) -> Result<(), ActionError> {
        match agenda {
            Some(a) => {
                let count = self.rules.agendas.len();
                if usize::from(a) >= count {
                    return Err(illegal(match count {
                        0 => format!("agenda #{a} does not exist: this game models no agenda"),
                        _ => format!(
                            "agenda #{a} does not exist: this game has agendas #0 to #{}",
                            count - 1
                        ),
                    }));
                }
                let name = &self.rules.agendas[usize::from(a)].name;
                if self.flow.revealed & (1 << a) != 0 {
                    return Err(illegal(format!(
                        "{name} has already been revealed this game"
                    )));
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
    fn quasher(&self) -> Option<Owner> {
        self.owners().find(|&q| {
            let cost = self.rules.quash[q.index()];
            cost > 0 && !self.is_eliminated(q) && self.pool(q, Pool::Strategy) >= u32::from(cost)
        })
    }

    /// After the revelation (and any Quash): the riders window (T22), then the outcome.
    fn after_reveal(&mut self, cause: Cause) {
        self.flow.riders = [NOBODY; crate::state::MAX_RIDERS];
        self.flow.window = 0;
        self.rider_window(cause);
    }

    /// Quash: the strategy tokens go to reinforcements, the agenda is discarded and the speaker reveals
    /// another, which may be quashed in turn.
    fn quash(&mut self, p: Owner, cause: Cause) -> Result<(), ActionError> {
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

    fn outcome(
        &mut self,
        vote: Vote,
        voted_against: Players,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let a = usize::from(self.flow.agenda);
        if let Some(agenda) = self.rules.agendas.get(a) {
            if agenda.elect_player || agenda.elect_card {
                return Err(illegal(format!(
                    "{} elects a {}: its outcome is not For or Against",
                    agenda.name,
                    if agenda.elect_player {
                        "player"
                    } else {
                        "strategy card"
                    }
                )));
            }
        }
        let voters = self.rules.agendas.get(a).is_some_and(|a| a.voters);
        if !(voted_against.is_empty() || voters && vote == Vote::Against) {
            return Err(illegal(
                "who voted Against is entered only for an Against outcome that concerns them"
                    .into(),
            ));
        }
        let live = ((1u16 << self.players()) - 1) as u8 & !self.flow.out;
        if voted_against.0 & !live != 0 {
            return Err(illegal(format!(
                "voted_against names {}, but only players still in the game vote",
                Players(voted_against.0 & !live).names()
            )));
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

    fn elect(&mut self, player: u16, cause: Cause) -> Result<(), ActionError> {
        let a = usize::from(self.flow.agenda);
        if let Some(agenda) = self.rules.agendas.get(a).filter(|a| !a.elect_player) {
            return Err(illegal(format!(
                "{}'s outcome is For or Against: it elects no player",
                agenda.name
            )));
        }
        if player >= u16::from(self.players()) {
            return Err(ActionError::NoSuchPlayer {
                player,
                players: u16::from(self.players()),
            });
        }
        if self.is_eliminated(Owner(player)) {
            return Err(illegal(format!(
                "p{player} is eliminated and cannot be elected"
            )));
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

    fn start_outcome(&mut self, outcome: u8, cause: Cause) {
        self.flow.outcome = outcome;
        self.flow.op = 0;
        self.flow.status = 0;
        self.flow.others = 0;
        self.run_agenda(cause);
    }

    /// T24: an Elect Strategy Card agenda's outcome (Galactic Crisis Pact).
    fn elect_card(&mut self, card: u8, cause: Cause) -> Result<(), ActionError> {
        let a = usize::from(self.flow.agenda);
        match self.rules.agendas.get(a) {
            Some(agenda) if agenda.elect_card => {}
            Some(agenda) => {
                return Err(illegal(format!("{} elects no strategy card", agenda.name)));
            }
            None => {
                return Err(illegal(
                    "an agenda that does nothing to command tokens elects no strategy card here"
                        .into(),
                ));
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
    fn additional_action(
        &mut self,
        p: Owner,
        system: u16,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let s = self.system_index(system)?;
        if self.flow.minister != slot(p) {
            return Err(illegal(format!("{p} does not hold Minister of War")));
        }
        if !self.has_token(p, s) {
            return Err(illegal(format!(
                "{} holds no command token of {p}'s",
                self.system_name(system)
            )));
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
    fn run_agenda(&mut self, cause: Cause) {
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
                        if let Some(h) = home.filter(|&h| !self.has_token(q, h)) {
                            if self.reinforcements(q) > 0 {
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

    /// The players still in the game, from the speaker clockwise.
    fn live_from_speaker(&self) -> impl Iterator<Item = Owner> + use<> {
        let n = self.players();
        let (speaker, out) = (self.flow.speaker, self.flow.out);
        (0..n)
            .map(move |k| (speaker + k) % n)
            .filter(move |&q| out & (1 << q) == 0)
            .map(owner)
    }

    /// A law's fleet-pool maximum (T7, T20) applied at once: each player over it returns their own excess
    /// tokens to reinforcements; a player holding other players' tokens there (T17) is asked to choose
    /// (returns whether that choice is awaited).
    fn enforce_fleet_max(&mut self, cause: Cause) -> bool {
        let Some(max) = self.fleet_pool_max() else {
            return false;
        };
        for q in self.live_from_speaker() {
            let excess = self.fleet_tokens(q).saturating_sub(u32::from(max));
            if excess == 0 {
                continue;
            }
            if self.captured(q) > 0 {
                self.flow.step = Step::Release;
                self.flow.resolver = slot(q);
                return true;
            }
            // Cannot fail: the excess is q's own tokens in the fleet pool.
            let _ = self.ledger.move_tokens(
                q,
                self.h.pools[Pool::Fleet.index()],
                self.h.reinforcements,
                excess,
                cause,
            );
            self.recheck_fleet(q, cause);
        }
        false
    }

    /// Armed Forces Standardization: the excess of each pool returns to reinforcements, then each pool is
    /// filled from reinforcements, tactic first, as far as they hold (and a law's fleet-pool maximum
    /// allows). Other players' tokens in a fleet pool (T17) stay and are not counted.
    fn standardize(&mut self, q: Owner, want: [u8; 3], cause: Cause) {
        let reinforcements = self.h.reinforcements;
        for pool in Pool::ALL {
            let (have, target) = (self.pool(q, pool), u32::from(want[pool.index()]));
            if have > target {
                // Cannot fail: the pool holds them.
                let _ = self.ledger.move_tokens(
                    q,
                    self.h.pools[pool.index()],
                    reinforcements,
                    have - target,
                    cause,
                );
            }
        }
        for pool in Pool::ALL {
            let (have, target) = (self.pool(q, pool), u32::from(want[pool.index()]));
            let room = match pool {
                Pool::Fleet => self.own_fleet_max(q).unwrap_or(u32::MAX),
                _ => u32::MAX,
            };
            let k = target
                .min(room)
                .saturating_sub(have)
                .min(self.reinforcements(q));
            if k > 0 {
                // Cannot fail: reinforcements hold k.
                let _ = self.ledger.move_tokens(
                    q,
                    reinforcements,
                    self.h.pools[pool.index()],
                    k,
                    cause,
                );
            }
        }
        self.recheck_fleet(q, cause);
    }

    fn return_token(&mut self, p: Owner, pool: Pool, cause: Cause) -> Result<(), ActionError> {
        if self.pool(p, pool) == 0 {
            return Err(illegal(format!("{p}'s {} is empty", pool.name())));
        }
        self.ledger.move_tokens(
            p,
            self.h.pools[pool.index()],
            self.h.reinforcements,
            1,
            cause,
        )?;
        self.ledger
            .note(self.agenda_key(), note::RETURN, [arg(p), 0, 0], cause);
        if pool == Pool::Fleet {
            self.recheck_fleet(p, cause);
        }
        self.flow.left -= 1;
        if self.flow.left == 0 {
            self.flow.status += 1;
            self.run_agenda(cause);
        }
        Ok(())
    }

    // ----- action cards (T22) -----

    /// The unplayed cards `p` holds for `window`.
    fn cards_for(&self, p: Owner, window: Window) -> impl Iterator<Item = usize> + '_ {
        self.rules
            .hands
            .iter()
            .enumerate()
            .filter(move |(i, c)| {
                owner(c.player) == p
                    && c.window == window
                    && !self.ledger.is_exhausted(self.h.hand[*i])
            })
            .map(|(i, _)| i)
    }

    /// Every way `p` may play each of their cards for `window` now.
    fn push_cards(&self, p: Owner, window: Window, out: &mut Vec<Action>) {
        let play = |card: usize, player, system, fallback, vote, elect| Action::PlayCard {
            card: card as u8,
            player,
            system,
            fallback,
            vote,
            elect,
        };
        for card in self.cards_for(p, window) {
            match self.rules.hands[card].effect {
                CardEffect::Gain { .. } | CardEffect::OthersPlaceToken
                    if window == Window::AfterAgendaRevealed =>
                {
                    for vote in [Vote::For, Vote::Against] {
                        if self.may_predict(Some(vote), None) {
                            out.push(play(card, None, None, None, Some(vote), None));
                        }
                    }
                    for q in self.owners().filter(|&q| !self.is_eliminated(q)) {
                        if self.may_predict(None, Some(q.0)) {
                            out.push(play(card, None, None, None, None, Some(q.0)));
                        }
                    }
                }
                CardEffect::Gain { .. } | CardEffect::OthersPlaceToken => {
                    out.push(play(card, None, None, None, None, None))
                }
                CardEffect::RemoveTacticToken => {
                    for q in self.owners() {
                        if q != p && !self.is_eliminated(q) && self.pool(q, Pool::Tactic) > 0 {
                            out.push(play(card, Some(q.0), None, None, None, None));
                        }
                    }
                }
                CardEffect::RemoveBoardToken => {
                    let zones = self.ledger.zones();
                    for z in self.ledger.zones_holding_in(p, kind::SYSTEM) {
                        let s = zones[z.index()].key.subject as u16;
                        out.push(play(card, None, Some(s), None, None, None));
                    }
                }
                CardEffect::PlaceOthersToken => {
                    for s in 0..self.rules.system_count() {
                        if !self.may_jam(p, s) {
                            continue;
                        }
                        for q in self.owners() {
                            if self.may_receive(p, q, s) {
                                out.push(play(card, Some(q.0), Some(s as u16), None, None, None));
                            }
                        }
                    }
                }
                CardEffect::SkilledRetreat => {
                    let active = usize::from(self.flow.system);
                    for d in self.adjacent_to(active) {
                        if !self.others_have_ships(p, usize::from(d)) {
                            self.push_placements(p, usize::from(d), out, |fallback| {
                                play(card, None, Some(d), fallback, None, None)
                            });
                        }
                    }
                }
            }
        }
    }

    /// Signal Jamming's system: not a home system, and holding or adjacent to one of `p`'s ships.
    fn may_jam(&self, p: Owner, s: usize) -> bool {
        !self.rules.homes.contains(&Some(s as u16))
            && (self.all_ships(p, s) > 0
                || self
                    .adjacent_to(s)
                    .any(|a| self.all_ships(p, usize::from(a)) > 0))
    }

    /// Signal Jamming's player: another player still in the game with a token in reinforcements and none
    /// in the system yet.
    fn may_receive(&self, p: Owner, q: Owner, s: usize) -> bool {
        q != p && !self.is_eliminated(q) && self.reinforcements(q) > 0 && !self.has_token(q, s)
    }

    /// Whether a rider may predict this outcome of the agenda revealed: For or Against for a For/Against
    /// agenda, a player still in the game for an Elect Player one, anything for an agenda not modelled.
    fn may_predict(&self, vote: Option<Vote>, elect: Option<u16>) -> bool {
        let agenda = self.rules.agendas.get(usize::from(self.flow.agenda));
        match (vote, elect) {
            (Some(_), None) => agenda.is_none_or(|a| !a.elect_player),
            (None, Some(q)) => {
                q < u16::from(self.players())
                    && !self.is_eliminated(Owner(q))
                    && agenda.is_none_or(|a| a.elect_player)
            }
            _ => false,
        }
    }

    /// T22: `p` plays the card `played` names, in its window; with `cancellable`, another player may
    /// cancel it first (T26).
    fn play_card(
        &mut self,
        p: Owner,
        played: PendingCard,
        cancellable: bool,
        cause: Cause,
    ) -> Result<(), ActionError> {
        let PendingCard {
            card,
            player,
            system,
            fallback,
            vote,
            elect,
        } = played;
        let i = usize::from(card);
        let Some(c) = self.rules.hands.get(i) else {
            return Err(illegal(format!(
                "action card #{card} does not exist: this game dealt {}",
                count(self.rules.hands.len() as u32, "action card", "action cards")
            )));
        };
        let (name, window, effect) = (c.name.as_str(), c.window, c.effect);
        if owner(c.player) != p {
            return Err(illegal(format!(
                "{name} (#{card}) is in p{}'s hand, not {p}'s",
                c.player
            )));
        }
        if self.ledger.is_exhausted(self.h.hand[i]) {
            return Err(illegal(format!("{p} has already played {name} (#{card})")));
        }
        let now = match self.flow.step {
            Step::StrategyWindow => Window::StartOfStrategyPhase,
            Step::CombatWindow => Window::StartOfCombatRound,
            Step::Riders => Window::AfterAgendaRevealed,
            _ => Window::Action,
        };
        if window != now {
            return Err(illegal(format!(
                "{name} is played {}, not {}",
                window.when(),
                now.when()
            )));
        }
        let rider = window == Window::AfterAgendaRevealed;
        let wants = |what: &str, given: bool, needed: bool| {
            if given == needed {
                Ok(())
            } else if needed {
                Err(illegal(format!("{name} needs a `{what}`")))
            } else {
                Err(illegal(format!("{name} takes no `{what}`")))
            }
        };
        wants(
            "player",
            player.is_some(),
            matches!(
                effect,
                CardEffect::RemoveTacticToken | CardEffect::PlaceOthersToken
            ),
        )?;
        wants(
            "system",
            system.is_some(),
            matches!(
                effect,
                CardEffect::RemoveBoardToken
                    | CardEffect::PlaceOthersToken
                    | CardEffect::SkilledRetreat
            ),
        )?;
        if fallback.is_some() && effect != CardEffect::SkilledRetreat {
            wants("fallback", true, false)?;
        }
        if rider {
            if vote.is_some() == elect.is_some() || !self.may_predict(vote, elect) {
                return Err(illegal(format!(
                    "{name} predicts an outcome {}: `vote` (for or against) or `elect` (a player still in the game)",
                    match self.rules.agendas.get(usize::from(self.flow.agenda)) {
                        Some(a) if a.elect_player =>
                            format!("of {}, which elects a player", a.name),
                        Some(a) => format!("of {}, which is For or Against", a.name),
                        None => "of the agenda".to_string(),
                    }
                )));
            }
        } else if vote.is_some() || elect.is_some() {
            wants("vote", true, false)?;
        }
        let key = Key::new(p, kind::ACTION_CARD, u32::from(card));
        let action = (played, cancellable);
        match effect {
            CardEffect::RemoveTacticToken => {
                let q = Owner(player.unwrap_or_default());
                if q == p || q.0 >= u16::from(self.players()) || self.is_eliminated(q) {
                    return Err(illegal(format!(
                        "{name} targets another player still in the game, not p{}",
                        q.0
                    )));
                }
                if self.pool(q, Pool::Tactic) == 0 {
                    return Err(illegal(format!("{q}'s tactic pool is empty")));
                }
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                self.ledger.move_tokens(
                    q,
                    self.h.pools[Pool::Tactic.index()],
                    self.h.reinforcements,
                    1,
                    cause,
                )?;
                self.ledger
                    .note(key, note::TACTIC_TOKEN_REMOVED, [arg(p), arg(q), 0], cause);
                self.end_turn(cause);
            }
            CardEffect::RemoveBoardToken => {
                let s = self.system_index(system.unwrap_or_default())?;
                if !self.has_token(p, s) {
                    return Err(illegal(format!(
                        "{} holds no command token of {p}'s",
                        self.system_name(s as u16)
                    )));
                }
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                self.ledger
                    .move_tokens(p, self.h.systems[s], self.h.reinforcements, 1, cause)?;
                self.end_turn(cause);
            }
            CardEffect::PlaceOthersToken => {
                let s = self.system_index(system.unwrap_or_default())?;
                let q = Owner(player.unwrap_or_default());
                if !self.may_jam(p, s) {
                    return Err(illegal(format!(
                        "{name} chooses a system that is no home system and holds or is adjacent to one of {p}'s ships, not {}",
                        self.system_name(s as u16)
                    )));
                }
                if q.0 >= u16::from(self.players()) || !self.may_receive(p, q, s) {
                    return Err(illegal(format!(
                        "{name} places a token of another player still in the game with one in reinforcements and none in {}, not p{}'s",
                        self.system_name(s as u16),
                        q.0
                    )));
                }
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                self.ledger
                    .move_tokens(q, self.h.reinforcements, self.h.systems[s], 1, cause)?;
                self.end_turn(cause);
            }
            CardEffect::SkilledRetreat => self.skilled_retreat(i, p, action, cause)?,
            CardEffect::Gain { tokens } if !rider => {
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                if !self.enter_gain(p, tokens, cause) {
                    self.after_gain(cause);
                }
            }
            CardEffect::Gain { .. } | CardEffect::OthersPlaceToken => {
                let Some(free) = self.flow.riders.iter().position(|&r| r == NOBODY) else {
                    return Err(illegal(format!(
                        "{} riders are played on this agenda already",
                        crate::state::MAX_RIDERS
                    )));
                };
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                let (code, prediction) = match (vote, elect) {
                    (Some(Vote::For), _) => (note::PREDICT_FOR, 0),
                    (Some(Vote::Against), _) => (note::PREDICT_AGAINST, 1),
                    (_, q) => (note::PREDICT_ELECT, 2 + q.unwrap_or_default() as u8),
                };
                self.ledger.note(
                    key,
                    code,
                    [arg(p), i32::from(elect.unwrap_or_default()), 0],
                    cause,
                );
                self.flow.riders[free] = card;
                self.flow.predictions[free] = prediction;
            }
        }
        Ok(())
    }

    /// Marks the card played (K5) and says so; returns `false` instead when another player may cancel it
    /// first (T26, Instinct Training), keeping `action` to resolve if they do not.
    fn play(
        &mut self,
        i: usize,
        p: Owner,
        key: Key,
        (played, cancellable): (PendingCard, bool),
        cause: Cause,
    ) -> Result<bool, ActionError> {
        if cancellable {
            let canceller = self.owners().find(|&q| {
                q != p
                    && !self.is_eliminated(q)
                    && self.reaction(q, AbilityKind::CancelActionCard).is_some()
            });
            if let Some(q) = canceller {
                self.flow.pending = Some(played);
                self.flow.step = Step::Cancel;
                self.flow.resolver = slot(q);
                return Ok(false);
            }
        }
        self.ledger.activate(self.h.hand[i], cause)?;
        self.ledger.note(key, note::PLAY, [arg(p), 0, 0], cause);
        Ok(true)
    }

    /// T26: the card waiting is cancelled (its player's card is played for nothing) or resolved.
    fn cancel_card(&mut self, q: Owner, cancel: bool, cause: Cause) -> Result<(), ActionError> {
        let Some(played) = self.flow.pending else {
            return Err(illegal("no action card waits on cancelling".into()));
        };
        let card = played.card;
        let c = &self.rules.hands[usize::from(card)];
        let (p, window) = (owner(c.player), c.window);
        self.flow.pending = None;
        self.flow.resolver = slot(p);
        self.flow.step = match window {
            Window::Action => Step::Turn,
            Window::StartOfStrategyPhase => Step::StrategyWindow,
            Window::StartOfCombatRound => Step::CombatWindow,
            Window::AfterAgendaRevealed => Step::Riders,
        };
        if !cancel {
            return self.play_card(p, played, false, cause);
        }
        let Some(i) = self.reaction(q, AbilityKind::CancelActionCard) else {
            return Err(illegal(format!(
                "{q} has no ready ability to cancel {} with",
                self.rules.hands[usize::from(card)].name
            )));
        };
        self.spend_ability(q, i, cause)?;
        let key = Key::new(p, kind::ACTION_CARD, u32::from(card));
        self.ledger
            .activate(self.h.hand[usize::from(card)], cause)?;
        self.ledger.note(key, note::PLAY, [arg(p), 0, 0], cause);
        self.ledger
            .note(key, note::CANCELLED, [arg(p), arg(q), 0], cause);
        match window {
            Window::Action => self.end_turn(cause),
            Window::StartOfStrategyPhase => self.strategy_window(),
            Window::StartOfCombatRound => self.combat_window(),
            Window::AfterAgendaRevealed => self.rider_window(cause),
        }
        Ok(())
    }

    /// Skilled Retreat: every ship of `p` leaves the active system for an adjacent system holding no other
    /// player's ships; the space combat ends in a draw; a command token is placed there from
    /// reinforcements (T3, T6: from a named pool when they are empty, none where one is already).
    fn skilled_retreat(
        &mut self,
        i: usize,
        p: Owner,
        action: (PendingCard, bool),
        cause: Cause,
    ) -> Result<(), ActionError> {
        let PendingCard {
            system, fallback, ..
        } = action.0;
        let d = self.system_index(system.unwrap_or_default())?;
        let active = usize::from(self.flow.system);
        let to = self.system_name(d as u16);
        if !self.is_adjacent(active, d as u16) {
            return Err(illegal(format!(
                "{to} is not adjacent to {}",
                self.system_name(self.flow.system)
            )));
        }
        if self.others_have_ships(p, d) {
            return Err(illegal(format!(
                "{to} holds another player's ships: Skilled Retreat moves ships only where none are"
            )));
        }
        let key = Key::new(p, kind::ACTION_CARD, i as u32);
        if !self.play(i, p, key, action, cause)? {
            return Ok(());
        }
        let n = self.rules.class_count();
        for c in 0..n {
            let ships = self.ships(p, active, c);
            if ships > 0 {
                self.ledger.move_tokens(
                    p,
                    self.h.ships[active * n + c],
                    self.h.ships[d * n + c],
                    ships,
                    cause,
                )?;
            }
        }
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

    /// The window at the start of the strategy phase: from `flow.window` on, from the speaker, the next
    /// player holding a card for it decides; then the picks.
    pub(crate) fn strategy_window(&mut self) {
        if !self.next_holder(Window::StartOfStrategyPhase, Step::StrategyWindow) {
            self.flow.step = Step::Pick;
        }
    }

    /// From `flow.window` on, from the speaker, the next player still in the game holding an unplayed card
    /// for `window` decides in `step`; returns whether one does (the cursor then rests on them).
    fn next_holder(&mut self, window: Window, step: Step) -> bool {
        let n = self.players();
        while self.flow.window < n {
            let q = owner((self.flow.speaker + self.flow.window) % n);
            if !self.is_eliminated(q) && self.cards_for(q, window).next().is_some() {
                self.flow.step = step;
                self.flow.resolver = slot(q);
                return true;
            }
            self.flow.window += 1;
        }
        false
    }

    /// The window at the start of a combat round: the attacker, then the defender, if they hold a card
    /// for it; then the announcements (T15).
    fn combat_window(&mut self) {
        while self.flow.window < 2 {
            let q = owner(if self.flow.window == 0 {
                self.flow.turn
            } else {
                self.flow.defender
            });
            if self
                .cards_for(q, Window::StartOfCombatRound)
                .next()
                .is_some()
            {
                self.flow.step = Step::CombatWindow;
                self.flow.resolver = slot(q);
                return;
            }
            self.flow.window += 1;
        }
        self.announcements();
    }

    /// The riders window: from the speaker, each player holding a rider plays one or not; then the
    /// speaker enters the outcome, unless the agenda is not modelled and no rider awaits it.
    fn rider_window(&mut self, cause: Cause) {
        let n = self.players();
        // A strategy card elected cannot be predicted as a player or For or Against: no rider (T24).
        let elects_card = self
            .rules
            .agendas
            .get(usize::from(self.flow.agenda))
            .is_some_and(|a| a.elect_card);
        if elects_card {
            self.flow.window = n;
        }
        if self.next_holder(Window::AfterAgendaRevealed, Step::Riders) {
            return;
        }
        // T27, Genetic Recombination: before votes are cast.
        if self.flow.window == n {
            self.flow.window = n + 1;
            let recombiner = self.owners().find(|&q| {
                !self.is_eliminated(q) && self.reaction(q, AbilityKind::VoteOrFleetToken).is_some()
            });
            if let Some(q) = recombiner {
                self.flow.step = Step::Recombine;
                self.flow.resolver = slot(q);
                return;
            }
        }
        self.after_votes(cause);
    }

    /// The votes are cast (at the table): the outcome is entered, unless the agenda is not modelled and no
    /// rider awaits it.
    fn after_votes(&mut self, cause: Cause) {
        if self.flow.agenda == NOBODY && self.flow.riders.iter().all(|&r| r == NOBODY) {
            self.next_agenda(cause);
        } else {
            self.flow.step = Step::Outcome;
        }
    }

    /// T27, Quantum Datahub Node: the strategy token is spent, `give` goes to the holder of `take`, and
    /// `take` to `p`; the action phase follows.
    fn swap_cards(
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

    /// T27, Genetic Recombination: the card exhausts and the named player decides.
    fn recombine(&mut self, p: Owner, player: u16, cause: Cause) -> Result<(), ActionError> {
        let Some(i) = self.reaction(p, AbilityKind::VoteOrFleetToken) else {
            return Err(illegal(format!(
                "{p} has no ready ability to name a voter with"
            )));
        };
        let q = Owner(player);
        if q == p || player >= u16::from(self.players()) || self.is_eliminated(q) {
            return Err(illegal(format!(
                "{} names another player still in the game, not p{player}",
                self.rules.abilities[i].name
            )));
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
    fn resolve_riders(&mut self, cause: Cause) {
        let outcome = match self.flow.outcome {
            2 => 2 + self.flow.elected,
            o => o,
        };
        for k in 0..crate::state::MAX_RIDERS {
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
    fn place_at_wormholes(&mut self, cause: Cause) -> bool {
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

    fn wormhole_fallback(&mut self, q: Owner, pool: Pool, cause: Cause) -> Result<(), ActionError> {
        if self.pool(q, pool) == 0 {
            return Err(illegal(format!(
                "{q}'s {} is empty: the token must come from a pool that holds one",
                pool.name()
            )));
        }
        let s = usize::from(self.flow.target);
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
        if !self.place_at_wormholes(cause) {
            self.flow.op += 1;
            self.flow.status = 0;
            self.run_agenda(cause);
        }
        Ok(())
    }

    /// T29, Research Grant Reallocation: the elected player returns one fleet-pool token per prerequisite
    /// (as many as the fleet pool holds); gaining the technology itself is not modelled.
    fn prerequisites(&mut self, count: u8, cause: Cause) -> Result<(), ActionError> {
        if count > MAX_PREREQUISITES {
            return Err(illegal(format!(
                "a technology has 0 to {MAX_PREREQUISITES} prerequisites, not {count}"
            )));
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
    fn next_agenda(&mut self, cause: Cause) {
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

    // ----- status phase -----

    fn start_status(&mut self, cause: Cause) {
        self.ledger.end_scope(coffer_core::Scope::Phase);
        self.ledger
            .note(ROUND_KEY, note::STATUS_PHASE, [0; 3], cause);
        // T8: every token on the board returns to reinforcements, as one kernel operation (K4.8).
        let returned = Cause::Effect(effect::STATUS_RETURN);
        // Cannot fail: every player has reinforcements.
        let _ = self.ledger.return_all_tokens(kind::SYSTEM, returned);
        self.flow.phase = Phase::Status;
        self.flow.status = 0;
        self.next_status_player(cause);
    }

    fn next_status_player(&mut self, cause: Cause) {
        let n = self.players();
        // T18: an eliminated player has no status phase.
        while self.flow.status < n
            && self.is_eliminated(owner((self.flow.speaker + self.flow.status) % n))
        {
            self.flow.status += 1;
        }
        if self.flow.status >= n {
            if self.rules.agenda_from > 0 && self.round() >= u32::from(self.rules.agenda_from) {
                self.start_agenda_phase(cause);
            } else {
                self.end_round(cause);
            }
            return;
        }
        let q = owner((self.flow.speaker + self.flow.status) % n);
        self.flow.resolver = slot(q);
        let tokens = self.rules.status_tokens[q.index()];
        if !self.enter_gain(q, tokens, cause) {
            self.flow.step = Step::Redistribute;
        }
    }

    /// Ends the round after the status phase: the next round's strategy phase, or, after the last round,
    /// the end of the game (no round begins after the last; the cards keep their holders for the table).
    fn end_round(&mut self, cause: Cause) {
        if self.ledger.clock().act + 1 >= u32::from(self.rules.rounds) {
            self.flow.phase = Phase::Over;
            self.flow.step = Step::Over;
            self.ledger.note(ROUND_KEY, note::GAME_OVER, [0; 3], cause);
            return;
        }
        self.ledger.end_scope(coffer_core::Scope::Act);
        self.flow.holder = [NOBODY; crate::content::MAX_CARDS];
        self.flow.picks = 0;
        self.flow.passed = 0;
        self.flow.phase = Phase::Strategy;
        let speaker = i32::from(self.flow.speaker);
        self.ledger
            .note(ROUND_KEY, note::STRATEGY_PHASE, [speaker, 0, 0], cause);
        self.flow.window = 0;
        self.strategy_window();
    }
}

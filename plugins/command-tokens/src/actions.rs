//! Actions: the JSON-readable [`Action`] enum, legal-action enumeration and `apply`, with the flow of the
//! round (strategy, action and status phases) and the card effects they drive.

use crate::content::Effect;
use crate::state::{
    MAX_PLAYERS, NOBODY, Phase, Pool, State, Step, effect, kind, note, owner, slot,
};
use coffer_core::{ActionError, Cause, Key, Owner, Refusal};
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
}

/// A set of players, written as the list of their indices (`[1, 3]`), at most [`MAX_PLAYERS`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Players(pub u8);

impl Players {
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
        }
    }
}

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
            Step::Produce => {
                if f.built < self.rules.production {
                    for c in 0..self.rules.class_count() {
                        if self.ship_reserve(p, c) > 0 {
                            out.push(Action::Produce { class: c as u8 });
                        }
                    }
                }
                out.push(Action::Done);
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
                for s in 0..systems {
                    if !self.rules.systems[s].no_diplomacy {
                        out.push(Action::Diplomacy { system: s as u16 });
                    }
                }
            }
            Step::Fallback => {
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
                let reserve = self.reinforcements(p) > 0;
                for s in 0..systems {
                    if reserve || self.has_token(p, s) || self.sheet(p) == 0 {
                        out.push(Action::Place {
                            system: s as u16,
                            fallback: None,
                        });
                    } else {
                        for pool in Pool::ALL {
                            if self.pool(p, pool) > 0 {
                                out.push(Action::Place {
                                    system: s as u16,
                                    fallback: Some(pool),
                                });
                            }
                        }
                    }
                }
            }
            Step::FreeSecondaries => {
                // Every set of the other players, by ascending bit mask (the empty set first).
                let others = ((1u16 << self.players()) - 1) as u8 & !(1 << p.0);
                for mask in 0..=others {
                    if mask & !others == 0 {
                        out.push(Action::FreeSecondaries {
                            players: Players(mask),
                        });
                    }
                }
            }
            Step::Redistribute => {
                let total = self.sheet(p) as u8;
                let fleet_max = self.rules.fleet_pool_max.map_or(total, |m| m.min(total));
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
        }
    }

    /// Whether a gained token of `player` may go into `pool` (T2; a law's fleet-pool maximum).
    #[inline]
    fn may_gain_into(&self, player: Owner, pool: Pool) -> bool {
        pool != Pool::Fleet
            || self
                .rules
                .fleet_pool_max
                .is_none_or(|m| self.pool(player, Pool::Fleet) < u32::from(m))
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
        if Players(self.flow.free).contains(q) {
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
            (Step::Produce, Action::Produce { class }) => self.produce(p, class, cause),
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
        if self.flow.picks == self.players() * self.rules.cards_per_player {
            self.start_action_phase(cause);
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
        self.flow.passed = 0;
        self.flow.turn = order[0];
        self.ledger.note(
            ROUND_KEY,
            note::ACTION_PHASE,
            [i32::from(order[0]), 0, 0],
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
        self.flow.step = Step::Produce;
        self.flow.system = system;
        self.flow.built = 0;
        Ok(())
    }

    fn produce(&mut self, p: Owner, class: u8, cause: Cause) -> Result<(), ActionError> {
        let c = self.class_index(class)?;
        if self.flow.built >= self.rules.production {
            return Err(illegal(format!(
                "{p} has produced {} ships in this tactical action, the most one tactical action produces",
                self.flow.built
            )));
        }
        if self.ship_reserve(p, c) == 0 {
            return Err(illegal(format!(
                "{p} has no {} left in reinforcements",
                self.class_name(class)
            )));
        }
        let s = usize::from(self.flow.system);
        let n = self.rules.class_count();
        self.ledger
            .move_tokens(p, self.h.ship_reserve[c], self.h.ships[s * n + c], 1, cause)?;
        self.flow.built += 1;
        // T7 holds at all times: an excess is a choice the player makes before producing on.
        if self.rules.classes[c].fleet {
            let (measured, max) = (
                u64::from(self.fleet_ships(p, s)),
                u64::from(self.fleet_limit(p)),
            );
            self.ledger
                .check_limit(State::limit_key(p, s), measured, max, cause);
        }
        Ok(())
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

    fn end_turn(&mut self, cause: Cause) {
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
        if self.flow.cursor >= self.players() {
            self.end_turn(cause);
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
            return Err(illegal(format!(
                "{p}'s fleet pool holds {}, the law's maximum",
                self.pool(p, Pool::Fleet)
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
        if self.flow.phase == Phase::Status {
            self.flow.step = Step::Redistribute;
        } else {
            self.run_effects(cause);
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
            .find(|&q| q == p || q.index() >= usize::from(self.players()))
        {
            return Err(illegal(if q == p {
                format!(
                    "{p} resolves the primary ability of {}: choose other players",
                    self.card_name(self.flow.card)
                )
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
        if self.rules.systems[s].no_diplomacy {
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
            if self.has_token(q, s) || self.reinforcements(q) > 0 {
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
        self.run_effects(cause);
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
        self.run_effects(cause);
        Ok(())
    }

    fn redistribute(&mut self, p: Owner, want: [u8; 3], cause: Cause) -> Result<(), ActionError> {
        let total = self.sheet(p);
        let sum: u32 = want.iter().map(|&x| u32::from(x)).sum();
        if sum != total {
            return Err(illegal(format!(
                "{} tactic, {} fleet and {} strategy make {sum} tokens, but {p} has {total} on the command sheet",
                want[0], want[1], want[2]
            )));
        }
        if let Some(m) = self.rules.fleet_pool_max {
            if want[1] > m {
                return Err(illegal(format!(
                    "a fleet pool of {} is over the law's maximum of {m}",
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
        if self.flow.phase == Phase::Status {
            self.flow.status += 1;
            self.next_status_player(cause);
        } else {
            self.run_effects(cause);
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
        if !self.rules.classes[c].fleet {
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
        let (measured, max) = (
            u64::from(self.fleet_ships(p, s)),
            u64::from(self.fleet_limit(p)),
        );
        self.ledger.check_limit(key, measured, max, cause);
        Ok(())
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
        if self.flow.status >= n {
            self.end_round(cause);
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
        self.flow.step = Step::Pick;
        let speaker = i32::from(self.flow.speaker);
        self.ledger
            .note(ROUND_KEY, note::STRATEGY_PHASE, [speaker, 0, 0], cause);
    }
}

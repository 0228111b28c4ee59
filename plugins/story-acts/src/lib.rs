//! Coffer ruleset `story-acts`: the Story/Act card game's resources (Currency, Votes, EV, CP, Story Points)
//! and its Acts, on the kernel's primitives.
//!
//! It speaks the rulebook's words ([`words`]: the vocabulary and resource labels), shows each seat its
//! table ([`table`]: the Act, the phase, who may act and why, hands, cards in play, Galactic Factors, the
//! Acts' results), hides hands from everyone but their owner and decks from everyone, and writes refusals
//! for the player who tried ([`refusals`]).
//!
//! ```
//! use coffer_core::{Adapter, Owner, Setup};
//! use coffer_story_acts::StoryActs;
//!
//! let ruleset = Adapter::shared(StoryActs::new());
//! let mut game = ruleset.new_game(&Setup::new(2, 7)).unwrap();
//! assert!(game.legal_actions(Owner(0)) > 0);
//! game.apply_json(Owner(0), r#"{"type":"end_turn"}"#).unwrap();
//! ```

pub mod actions;
pub mod content;
pub mod refusals;
pub mod scoring;
pub mod state;
pub mod table;
pub mod words;

pub use actions::{Action, CpSplit};
pub use content::{CardDb, CardDef, CardType, ContentError, Deed, Effect};
pub use refusals::{PendingChoice, Rule, Why};
pub use scoring::{ScoreLines, act_winner, score_lines};
pub use state::{
    ActResult, AwardTo, Band, Card, Config, FactorDef, Handles, Phase, PoliticalTie, Rules, Seat,
    Slot, SlotError, State, Zone,
};
pub use words::vocabulary;

use coffer_core::{
    ActionError, AmountSpec, Cause, ContentTable, Description, Doc, Key, Ledger, Outcome, Owner,
    Scope, SetupError, Shared, SharedContent, Table, TrackSpec, Violation,
};
use serde_json::json;
use state::{key, kind};
use std::sync::OnceLock;

/// The ruleset id.
pub const ID: &str = "story-acts";

/// The `story-acts` ruleset.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoryActs;

impl StoryActs {
    /// The ruleset.
    pub fn new() -> StoryActs {
        StoryActs
    }
}

coffer_core::plugin!(StoryActs::new());

/// Every configuration option: name and documentation (the defaults come from [`Config::default`]).
pub const OPTIONS: &[(&str, &str)] = &[
    (
        "treasury_cap",
        "S1: the Treasury cap; Currency gained above it is lost, from every source. 1 to 1000.",
    ),
    (
        "starting_currency",
        "Currency each player starts with: 0 to the treasury_cap.",
    ),
    (
        "starting_hand",
        "Cards each player draws before the first turn: 0 to 100.",
    ),
    (
        "draw_per_turn",
        "S10: cards drawn in each Draw Phase: 0 to 100.",
    ),
    (
        "hand_limit",
        "S10: hand size checked at the End Phase; the player chooses the discards (K6). 0 to 100.",
    ),
    (
        "votes_per_factor_step",
        "S5 (assumption): committed Votes per Galactic Factor step: 1 to 1000.",
    ),
    (
        "political_tie",
        "S4 (assumption): \"nobody\" or \"active_player\" controls on a tie of standing Vote.",
    ),
    (
        "award_sp",
        "S11 (assumption): SP of each self-inflicted award (empty Treasury; own Character Falls or is destroyed). 0 to 1000.",
    ),
    (
        "award_to",
        "S11 (assumption): \"each_opponent\", \"next_player\" or \"nobody\" receives the award.",
    ),
    (
        "act3_winner_wins",
        "S12 (assumption): with 3+ players and nobody on two wins after Act 3, the Act 3 winner wins; false: players with most Act wins share the win.",
    ),
    (
        "catch_up_currency",
        "S16 (assumption): Currency each player who did not win the Act gains (capped by S1). 0 to 1000.",
    ),
    (
        "factors",
        "S17 (assumption): the Galactic Factors, each {name, min, max, start}: at most 32 factors, distinct non-empty names, -1000 <= min <= start <= max <= 1000.",
    ),
    ("restore_cost", "S14: Currency a Restore costs: 0 to 1000."),
    (
        "fall_flips_homeworld",
        "Assumption: a Prime Character's Fall flips its owner's Homeworld off its Prime face.",
    ),
    (
        "shuffle_decks",
        "Whether decks are shuffled at setup with the game's seeded RNG.",
    ),
    (
        "homeworlds",
        "Homeworld card ids, player i gets entry i modulo the list's length: 1 to 64 ids.",
    ),
    (
        "deck",
        "Card ids of each player's deck, at most 1000; null: one copy of every non-Homeworld card.",
    ),
    (
        "cards",
        "Inline card definitions replacing the embedded starter set, at most 65535 (numbers on a card 0 to 1000); null: the starter set.",
    ),
];

/// Every action: name, documentation and a JSON example.
pub fn action_docs() -> Vec<Doc> {
    vec![
        Doc::with(
            "deploy",
            "S3: deploy a card from hand paying its Currency cost (a Maneuver: also its Vote cost, its CP cost split as `cp` = [[card, cp], ...] in ascending card order, and a `target` when its effect needs one). Slow, except Fast Maneuvers.",
            json!({"type": "deploy", "card": 3}),
        ),
        Doc::with(
            "commit_votes",
            "S5: activate a card to put its printed Votes in the Resource Pool; it leaves standing Vote until it readies. Fast: any player, any main phase.",
            json!({"type": "commit_votes", "card": 0}),
        ),
        Doc::with(
            "add_ev",
            "S6: activate a permanent printing \"Add N EV\" to put N EV in the Resource Pool.",
            json!({"type": "add_ev", "card": 12}),
        ),
        Doc::with(
            "push_factor",
            "S5: move a Galactic Factor `steps` steps up or down, paying committed Votes.",
            json!({"type": "push_factor", "factor": 0, "up": true, "steps": 2}),
        ),
        Doc::with(
            "use_ability",
            "S8: a Character's \"-X CP:\" ability, paid from its own CP; once per turn, own main phase.",
            json!({"type": "use_ability", "card": 5}),
        ),
        Doc::with(
            "move",
            "S15: move a ready unit to an adjacent Band (activates it).",
            json!({"type": "move", "card": 5, "to": "space"}),
        ),
        Doc::with(
            "capture",
            "S14: a ready unit in a Surface Band captures an undefended Surface Location there; it becomes Contested.",
            json!({"type": "capture", "location": 40, "unit": 5}),
        ),
        Doc::with(
            "restore",
            "S14: pay the Restore cost; the Contested Surface Location you control is uncontested again.",
            json!({"type": "restore", "location": 40}),
        ),
        Doc::with(
            "advance_storyline",
            "Advance your Storyline one step, paying its EV per step from the Resource Pool.",
            json!({"type": "advance_storyline", "card": 9}),
        ),
        Doc::with(
            "complete_storyline",
            "S12: complete your Storyline with every step done: the Act ends at once and is scored.",
            json!({"type": "complete_storyline", "card": 9}),
        ),
        Doc::with(
            "discard",
            "S10/K6: while over the hand limit at the End Phase, discard a card of your choice (the only legal action then).",
            json!({"type": "discard", "card": 14}),
        ),
        Doc::with(
            "end_turn",
            "End the main phase: End Phase (hand limit), then the next player's Ready, Income and Draw Phases.",
            json!({"type": "end_turn"}),
        ),
    ]
}

fn config_error(msg: String) -> SetupError {
    SetupError::Config(msg)
}

fn slot_error(e: state::SlotError) -> SetupError {
    SetupError::Config(format!("the decks hold too many cards: {e}"))
}

impl StoryActs {
    fn setup(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        if !(2..=4).contains(&players) {
            return Err(SetupError::Players {
                got: players,
                min: 2,
                max: 4,
            });
        }
        let rules = rules_for(config)?;
        let cfg = &rules.config;
        let (homeworlds, deck, db) = (&rules.homeworlds, &rules.deck, &rules.db);
        let per_player = deck.len() + 1;
        if per_player * usize::from(players) > usize::from(u16::MAX) {
            return Err(config_error(format!(
                "decks of {} cards are too large for {players} players",
                deck.len()
            )));
        }

        let mut ledger = Ledger::new(players, seed);
        // Every table is allocated at its final size: a hosted idle game holds only what it needs.
        let n = usize::from(players);
        let count = |f: fn(&content::CardDef) -> bool| {
            (0..n)
                .map(|p| homeworlds[p % homeworlds.len()])
                .chain(std::iter::repeat_n(deck.iter().copied(), n).flatten())
                .filter(|&d| f(db.get(d)))
                .count()
        };
        let mut handles = state::Handles::with_capacity(
            count(|d| !matches!(d.card_type, CardType::Maneuver | CardType::Storyline)),
            count(|d| d.cp.is_some()),
            count(|d| d.ability.is_some()),
        );
        let mut seats = Vec::with_capacity(n);
        let mut cards = Vec::with_capacity(per_player * n);
        let mut decks = Vec::with_capacity(n);
        let mut hands = Vec::with_capacity(n);
        for p in 0..players {
            let o = Owner(p);
            let treasury = ledger.add_amount(
                AmountSpec::new(Key::new(o, kind::TREASURY, 0))
                    .cap(i64::from(cfg.treasury_cap))
                    .start(i64::from(cfg.starting_currency)),
            )?;
            let votes = ledger
                .add_amount(AmountSpec::new(Key::new(o, kind::VOTES, 0)).lasts(Scope::Phase))?;
            let ev =
                ledger.add_amount(AmountSpec::new(Key::new(o, kind::EV, 0)).lasts(Scope::Phase))?;
            let sp =
                ledger.add_amount(AmountSpec::new(Key::new(o, kind::SP, 0)).lasts(Scope::Act))?;
            let act_wins = ledger.add_amount(AmountSpec::new(Key::new(o, kind::ACT_WINS, 0)))?;
            let hw_def = homeworlds[usize::from(p) % homeworlds.len()];
            let homeworld = cards.len() as u16;
            let mut own = Vec::with_capacity(deck.len());
            for (j, &def) in std::iter::once(&hw_def).chain(deck.iter()).enumerate() {
                let idx = cards.len() as u32;
                let d = db.get(def);
                let perm = if matches!(d.card_type, CardType::Maneuver | CardType::Storyline) {
                    Slot::NONE
                } else {
                    let id = ledger.add_permanent(key(Owner(p), kind::CARD, idx), None)?;
                    handles.push_perm(id).map_err(slot_error)?
                };
                let cp = match d.cp {
                    Some(v) => {
                        let id = ledger.add_amount(
                            AmountSpec::new(key(Owner(p), kind::CP, idx)).start(i64::from(v)),
                        )?;
                        handles.push_cp(id).map_err(slot_error)?
                    }
                    None => Slot::NONE,
                };
                let ability = match d.ability {
                    Some(_) => {
                        let id = ledger.add_track(
                            TrackSpec::new(key(Owner(p), kind::ABILITY, idx), 1)
                                .recurring(1, Scope::Turn),
                        )?;
                        handles.push_ability(id).map_err(slot_error)?
                    }
                    None => Slot::NONE,
                };
                let is_hw = j == 0;
                cards.push(Card {
                    def,
                    owner: p,
                    controller: p,
                    zone: if is_hw { Zone::Play } else { Zone::Deck },
                    band: if is_hw {
                        Some(Band::Planetary(p))
                    } else {
                        None
                    },
                    perm,
                    cp,
                    ability,
                    progress: 0,
                    contested: false,
                    fallen: false,
                    committed: false,
                });
                if !is_hw {
                    own.push(idx as u16);
                }
            }
            // Top of the deck is its end: reverse so that an unshuffled deck draws in listed order.
            own.reverse();
            if cfg.shuffle_decks {
                ledger.shuffle(&mut own, Cause::Setup);
            }
            hands.push(Vec::with_capacity(own.len()));
            decks.push(own);
            seats.push(Seat {
                treasury,
                votes,
                ev,
                sp,
                act_wins,
                homeworld,
                prime_face: true,
            });
        }
        let mut factors = Vec::with_capacity(cfg.factors.len());
        for (i, f) in cfg.factors.iter().enumerate() {
            factors.push(
                ledger.add_amount(
                    AmountSpec::new(Key::new(Owner::GAME, kind::FACTOR, i as u32))
                        .floor(f.min)
                        .cap(f.max)
                        .start(f.start),
                )?,
            );
        }
        let starting_hand = cfg.starting_hand;
        let mut state = State {
            rules: rules.clone(),
            ledger,
            seats,
            factors,
            cards,
            handles,
            decks,
            hands,
            active: 0,
            phase: Phase::Ready,
            act: 1,
            results: Vec::new(),
            winners: None,
            in_play: Vec::new(),
        };
        for p in 0..players {
            let hw = state.seats[usize::from(p)].homeworld;
            state.put_in_play(hw, Some(Band::Planetary(p)));
        }
        for p in (0..players).map(Owner) {
            state.draw(p, starting_hand, Cause::Setup);
        }
        state.start_turn()?;
        Ok(state)
    }
}

/// The bounds of the numeric options (inclusive), checked by [`build_rules`] and written in their docs.
pub mod bounds {
    /// `treasury_cap`.
    pub const TREASURY_CAP: (u32, u32) = (1, 1000);
    /// `starting_hand`, `draw_per_turn` and `hand_limit`.
    pub const CARDS: (u32, u32) = (0, 100);
    /// `votes_per_factor_step`.
    pub const VOTES_PER_STEP: (u32, u32) = (1, 1000);
    /// `award_sp`, `catch_up_currency` and `restore_cost`.
    pub const AMOUNT: (u32, u32) = (0, 1000);
    /// How many Galactic Factors.
    pub const FACTORS: usize = 32;
    /// A Galactic Factor's `min`, `max` and `start`.
    pub const FACTOR_VALUE: (i64, i64) = (-1000, 1000);
    /// How many entries `homeworlds` lists.
    pub const HOMEWORLDS: usize = 64;
    /// How many cards `deck` lists.
    pub const DECK: usize = 1000;
}

/// An option outside its bounds: "option 'hand_limit' is 500: it must be 0 to 100".
fn bounded(option: &str, value: u32, (min, max): (u32, u32)) -> Result<(), SetupError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(config_error(format!(
            "option '{option}' is {value}: it must be {min} to {max}"
        )))
    }
}

/// The ids of the Homeworlds in a card list, for messages.
fn homeworld_ids(db: &CardDb) -> String {
    let ids: Vec<&str> = db
        .cards()
        .iter()
        .filter(|c| c.card_type == CardType::Homeworld)
        .map(|c| c.id.as_str())
        .collect();
    if ids.is_empty() {
        "the card list has none".to_owned()
    } else {
        format!("the card list has {}", ids.join(", "))
    }
}

/// Validates a configuration and its cards into a game's fixed [`Rules`].
fn build_rules(config: &Config) -> Result<Rules, SetupError> {
    let mut cfg = config.clone();
    bounded("treasury_cap", cfg.treasury_cap, bounds::TREASURY_CAP)?;
    bounded(
        "starting_currency",
        cfg.starting_currency,
        (0, cfg.treasury_cap),
    )
    .map_err(|e| match e {
        SetupError::Config(m) => config_error(format!("{m} (the treasury_cap)")),
        e => e,
    })?;
    bounded("starting_hand", cfg.starting_hand, bounds::CARDS)?;
    bounded("draw_per_turn", cfg.draw_per_turn, bounds::CARDS)?;
    bounded("hand_limit", cfg.hand_limit, bounds::CARDS)?;
    bounded(
        "votes_per_factor_step",
        cfg.votes_per_factor_step,
        bounds::VOTES_PER_STEP,
    )?;
    bounded("award_sp", cfg.award_sp, bounds::AMOUNT)?;
    bounded("catch_up_currency", cfg.catch_up_currency, bounds::AMOUNT)?;
    bounded("restore_cost", cfg.restore_cost, bounds::AMOUNT)?;
    if cfg.factors.len() > bounds::FACTORS {
        return Err(config_error(format!(
            "option 'factors' lists {} factors: at most {}",
            cfg.factors.len(),
            bounds::FACTORS
        )));
    }
    let (low, high) = bounds::FACTOR_VALUE;
    for (i, f) in cfg.factors.iter().enumerate() {
        if f.name.trim().is_empty() {
            return Err(config_error(format!(
                "option 'factors': factor #{i} has an empty name"
            )));
        }
        if cfg.factors[..i].iter().any(|g| g.name == f.name) {
            return Err(config_error(format!(
                "option 'factors': factor '{}' is listed twice",
                f.name
            )));
        }
        for (field, v) in [("min", f.min), ("max", f.max), ("start", f.start)] {
            if !(low..=high).contains(&v) {
                return Err(config_error(format!(
                    "option 'factors': factor '{}': field '{field}' is {v}: it must be {low} to {high}",
                    f.name
                )));
            }
        }
        if f.min > f.max {
            return Err(config_error(format!(
                "option 'factors': factor '{}': min {} is above max {}",
                f.name, f.min, f.max
            )));
        }
        if !(f.min..=f.max).contains(&f.start) {
            return Err(config_error(format!(
                "option 'factors': factor '{}': field 'start' is {}: it must be {} to {} (its min to its max)",
                f.name, f.start, f.min, f.max
            )));
        }
    }
    let names: Vec<String> = cfg.factors.iter().map(|f| f.name.clone()).collect();
    let db = match cfg.cards.take() {
        Some(cards) => CardDb::new(cards, &names),
        None => CardDb::starter(&names),
    }
    .map_err(|e| SetupError::Content(e.to_string()))?;
    if cfg.homeworlds.is_empty() || cfg.homeworlds.len() > bounds::HOMEWORLDS {
        return Err(config_error(format!(
            "option 'homeworlds' lists {} card ids: it must list 1 to {} Homeworlds ({})",
            cfg.homeworlds.len(),
            bounds::HOMEWORLDS,
            homeworld_ids(&db)
        )));
    }
    let mut homeworlds = Vec::new();
    for id in &cfg.homeworlds {
        let def = db.find(id).ok_or_else(|| {
            config_error(format!(
                "option 'homeworlds': unknown card '{id}' ({})",
                homeworld_ids(&db)
            ))
        })?;
        let d = db.get(def);
        if d.card_type != CardType::Homeworld {
            return Err(config_error(format!(
                "option 'homeworlds': '{id}' is a {}, not a Homeworld ({})",
                d.card_type,
                homeworld_ids(&db)
            )));
        }
        for p in &d.preferred {
            let f = cfg.factors.iter().find(|f| f.name == p.factor);
            if let Some(f) = f.filter(|f| p.value < f.min || p.value > f.max) {
                return Err(SetupError::Content(format!(
                    "card '{id}': field 'preferred': {} {} is outside the factor's track, {} to {}",
                    p.factor, p.value, f.min, f.max
                )));
            }
        }
        homeworlds.push(def);
    }
    let deck: Vec<u16> = match &cfg.deck {
        Some(ids) if ids.len() > bounds::DECK => {
            return Err(config_error(format!(
                "option 'deck' lists {} cards: at most {}",
                ids.len(),
                bounds::DECK
            )));
        }
        Some(ids) => ids
            .iter()
            .map(|id| {
                let def = db
                    .find(id)
                    .ok_or_else(|| config_error(format!("option 'deck': unknown card '{id}'")))?;
                if db.get(def).card_type == CardType::Homeworld {
                    return Err(config_error(format!(
                        "option 'deck': '{id}' is a Homeworld: Homeworlds start in play, not in decks"
                    )));
                }
                Ok(def)
            })
            .collect::<Result<_, _>>()?,
        None => (0..db.cards().len() as u16)
            .filter(|&d| db.get(d).card_type != CardType::Homeworld)
            .collect(),
    };
    if deck.len() > bounds::DECK {
        return Err(config_error(format!(
            "option 'deck' is null, so each deck holds one copy of every card that is not a Homeworld: {} \
             cards, at most {}; list the deck's cards in option 'deck'",
            deck.len(),
            bounds::DECK
        )));
    }
    Ok(Rules {
        config: cfg,
        db,
        homeworlds,
        deck,
    })
}

/// The [`Rules`] of a configuration, shared by every game of that configuration (snapshots carry the
/// configuration only); the default configuration's are kept for the life of the process.
fn rules_for(config: &Config) -> Result<Shared<Rules>, SetupError> {
    static DEFAULT: OnceLock<Shared<Rules>> = OnceLock::new();
    let default = *config == Config::default();
    if default {
        if let Some(rules) = DEFAULT.get() {
            return Ok(rules.clone());
        }
    }
    let rules = Shared::<Rules>::get(config)?;
    if default {
        let _ = DEFAULT.set(rules.clone());
    }
    Ok(rules)
}

impl SharedContent for Rules {
    /// The configuration as given (its inline cards included).
    type Key = Config;

    fn build(config: &Config) -> Result<Rules, SetupError> {
        build_rules(config)
    }

    fn table() -> &'static ContentTable<Rules> {
        static TABLE: ContentTable<Rules> = ContentTable::new();
        &TABLE
    }
}

impl coffer_core::Ruleset for StoryActs {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        let mut d = Description::new(
            ID,
            env!("CARGO_PKG_VERSION"),
            "The Story/Act card game: Currency, Votes, EV, Character Points and Story Points over two or three Acts",
        );
        d.min_players = 2;
        d.max_players = 4;
        d.phases = ["ready", "income", "draw", "main", "end"]
            .map(String::from)
            .to_vec();
        d.resources = vec![
            Doc::new(
                "treasury",
                "S1: Currency, 0..=treasury_cap (20); excess gains are lost, voluntary spends refused when short, required costs drain to 0.",
            ),
            Doc::new(
                "votes",
                "S5/S7: committed Votes in the Resource Pool; empty at the end of every phase.",
            ),
            Doc::new(
                "ev",
                "S6/S7: EV in the Resource Pool; empty at the end of every phase.",
            ),
            Doc::new(
                "sp",
                "S11/S12: Story Points, public, counted at the end of each Act then reset.",
            ),
            Doc::new(
                "cp",
                "S8: Character Points per card with a printed CP; floor 0, no maximum.",
            ),
            Doc::new("act_wins", "S12: Acts won; two win the game."),
            Doc::new(
                "factor",
                "S17: Galactic Factors, each bounded by its configured min and max.",
            ),
            Doc::new(
                "card",
                "K5/S9: each permanent is ready or activated; activated cards ready in the Ready Phase.",
            ),
            Doc::new(
                "ability",
                "S8: a \"-X CP:\" ability's once-per-turn use (one charge, recovered at each turn's end).",
            ),
        ];
        d.actions = action_docs();
        d.vocabulary = vocabulary();
        let defaults = serde_json::to_value(Config::default()).unwrap_or_default();
        d.options = OPTIONS
            .iter()
            .map(|(name, doc)| {
                Doc::with(
                    *name,
                    *doc,
                    defaults.get(*name).cloned().unwrap_or_default(),
                )
            })
            .collect();
        d
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        self.setup(players, seed, config)
    }

    fn legal_actions(&self, state: &State, player: Owner, out: &mut Vec<Action>) {
        actions::legal(state, player, out);
    }

    /// Nobody after the end or outside the Main phase, the chooser of a pending discard, else everybody
    /// (out-of-turn fast Maneuvers and votes).
    fn to_act(&self, state: &State, out: &mut Vec<Owner>) {
        actions::to_act(state, out);
    }

    fn apply(&self, state: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        if let Err(why) = state.check(player, action) {
            return Err(state.explain(player, why));
        }
        state.execute(player, action)?;
        Ok(())
    }

    fn ledger<'s>(&self, state: &'s State) -> &'s Ledger {
        &state.ledger
    }

    fn ledger_mut<'s>(&self, state: &'s mut State) -> &'s mut Ledger {
        &mut state.ledger
    }

    fn outcome(&self, state: &State) -> Outcome {
        match &state.winners {
            None => Outcome::Ongoing,
            Some(w) => Outcome::Finished {
                winners: w.iter().map(|&p| Owner(p)).collect(),
                scores: (0..state.players())
                    .map(|p| state.act_wins(Owner(p)))
                    .collect(),
            },
        }
    }

    /// The Act, the phase, whose turn it is, who may act and why, and the game's own state (see
    /// [`table`]): a seat's table shows its own hand; other hands and the decks are counts.
    fn table(&self, state: &State, seat: Option<Owner>, table: &mut Table) {
        table::fill(state, seat, table);
    }

    /// Cards in a hand are seen by their owner alone, cards in a deck by nobody: their readiness, CP and
    /// ability resources, and the notes about them, are hidden accordingly. Everything else is public.
    fn visible(&self, state: &State, key: Key, seat: Option<Owner>) -> bool {
        match key.kind {
            kind::CARD | kind::CP | kind::ABILITY => {
                u16::try_from(key.subject).is_ok_and(|card| state.sees_card(seat, card))
            }
            _ => true,
        }
    }

    fn label(&self, state: &State, key: Key) -> Option<String> {
        words::label(state, key)
    }

    /// The ruleset's own invariants (the host checks the ledger's first).
    fn check_invariants(&self, state: &State) -> Result<(), Violation> {
        if !(1..=3).contains(&state.act) || state.results.len() + 1 < usize::from(state.act) {
            return Err(Violation(format!(
                "Act {} with {} results: the Act is 1 to 3, with a result for each Act before it",
                state.act,
                state.results.len()
            )));
        }
        for (p, hand) in state.hands.iter().enumerate() {
            for &c in hand {
                let card = state.cards.get(usize::from(c));
                if card.is_none_or(|c| c.zone != Zone::Hand || usize::from(c.owner) != p) {
                    return Err(Violation(format!(
                        "p{p}'s hand holds card #{c} that is not in their hand"
                    )));
                }
            }
        }
        for (p, deck) in state.decks.iter().enumerate() {
            for &c in deck {
                let card = state.cards.get(usize::from(c));
                if card.is_none_or(|c| c.zone != Zone::Deck || usize::from(c.owner) != p) {
                    return Err(Violation(format!(
                        "p{p}'s deck holds card #{c} that is not in their deck"
                    )));
                }
            }
        }
        let (held, listed) = (
            state
                .cards
                .iter()
                .filter(|c| matches!(c.zone, Zone::Hand | Zone::Deck))
                .count(),
            state
                .hands
                .iter()
                .chain(&state.decks)
                .map(Vec::len)
                .sum::<usize>(),
        );
        if held != listed {
            return Err(Violation(format!(
                "{held} cards are in hands and decks, but the hands and decks list {listed}"
            )));
        }
        if let Some(i) = state.cards.iter().position(|c| !state.handles.holds(c)) {
            return Err(Violation(format!(
                "card #{i} names a kernel handle slot outside the handle tables"
            )));
        }
        let in_play = (0..state.cards.len() as u16)
            .filter(|&c| state.cards[usize::from(c)].zone == Zone::Play);
        if !in_play.eq(state.in_play.iter().copied()) {
            return Err(Violation(
                "the index of cards in play disagrees with the cards' zones".to_owned(),
            ));
        }
        let cap = i64::from(state.config().treasury_cap);
        for p in 0..state.players() {
            if !(0..=cap).contains(&state.treasury(Owner(p))) {
                return Err(Violation(format!(
                    "p{p}'s Treasury is {}: it must be 0 to {cap} (S1)",
                    state.treasury(Owner(p))
                )));
            }
        }
        Ok(())
    }
}

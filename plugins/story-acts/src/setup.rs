//! Setting up a `story-acts` game: the configuration checked into a game's fixed [`Rules`] (shared by every
//! game of that configuration), then the seats, cards and hands on a new ledger, in a fixed order (state
//! hashes depend on it).

use crate::card_db::CardDb;
use crate::cards::{Band, Card, Handles, Slot, SlotError, Zone};
use crate::config::{Config, Rules};
use crate::content::{self, CardType};
use crate::rules::turns::{draw, start_turn};
use crate::state::{Phase, Seat, State, key, kind};
use coffer_core::{
    AmountSpec, Cause, ContentTable, Key, Ledger, Owner, Scope, SetupError, Shared, SharedContent,
    TrackSpec,
};
use std::sync::OnceLock;

fn config_error(msg: String) -> SetupError {
    SetupError::Config(msg)
}

fn slot_error(e: SlotError) -> SetupError {
    SetupError::Config(format!("the decks hold too many cards: {e}"))
}

/// Sets up a game: every seat's resources, every card with its permanent, CP and ability, the Homeworlds
/// in play, the starting hands, then the first turn's Ready, Income and Draw phases.
///
/// # Errors
/// [`SetupError`] for a player count outside 2 to 4 or a bad configuration or card list.
pub fn setup(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
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
    let mut handles = Handles::with_capacity(
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
        let votes =
            ledger.add_amount(AmountSpec::new(Key::new(o, kind::VOTES, 0)).lasts(Scope::Phase))?;
        let ev =
            ledger.add_amount(AmountSpec::new(Key::new(o, kind::EV, 0)).lasts(Scope::Phase))?;
        let sp = ledger.add_amount(AmountSpec::new(Key::new(o, kind::SP, 0)).lasts(Scope::Act))?;
        let act_wins = ledger.add_amount(AmountSpec::new(Key::new(o, kind::ACT_WINS, 0)))?;
        let hw_def = homeworlds[usize::from(p) % homeworlds.len()];
        let homeworld = cards.len() as u16;
        let mut own = Vec::with_capacity(deck.len());
        for (j, &def) in std::iter::once(&hw_def).chain(deck.iter()).enumerate() {
            let idx = cards.len() as u32;
            let is_hw = j == 0;
            cards.push(add_card(&mut ledger, &mut handles, db, p, idx, def, is_hw)?);
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
        draw(&mut state, p, starting_hand, Cause::Setup);
    }
    start_turn(&mut state)?;
    Ok(state)
}
/// Card instance `idx` of player `p`, of definition `def` (their Homeworld, in play, or a deck card): its
/// permanent, CP and ability on the ledger.
fn add_card(
    ledger: &mut Ledger,
    handles: &mut Handles,
    db: &CardDb,
    p: u16,
    idx: u32,
    def: u16,
    is_hw: bool,
) -> Result<Card, SetupError> {
    let d = db.get(def);
    let perm = if matches!(d.card_type, CardType::Maneuver | CardType::Storyline) {
        Slot::NONE
    } else {
        let id = ledger.add_permanent(key(Owner(p), kind::CARD, idx), None)?;
        handles.push_perm(id).map_err(slot_error)?
    };
    let cp = match d.cp {
        Some(v) => {
            let id = ledger
                .add_amount(AmountSpec::new(key(Owner(p), kind::CP, idx)).start(i64::from(v)))?;
            handles.push_cp(id).map_err(slot_error)?
        }
        None => Slot::NONE,
    };
    let ability = match d.ability {
        Some(_) => {
            let id = ledger.add_track(
                TrackSpec::new(key(Owner(p), kind::ABILITY, idx), 1).recurring(1, Scope::Turn),
            )?;
            handles.push_ability(id).map_err(slot_error)?
        }
        None => Slot::NONE,
    };
    Ok(Card {
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
    })
}

/// The bounds of the numeric options (inclusive), checked when a configuration is built into its rules and written in their docs.
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
    if default && let Some(rules) = DEFAULT.get() {
        return Ok(rules.clone());
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

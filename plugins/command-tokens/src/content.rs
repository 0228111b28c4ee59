//! Content as data: ship classes, strategy cards (with their token effects), factions, laws, technologies
//! and agendas, parsed from
//! the JSON files embedded from `data/` (or given inline in the configuration) and validated on load.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::ids::Pool;
use coffer_core::{check_content_id, read_content};

pub use coffer_core::ContentError;

/// A class of ship, with the number of plastic pieces each player has of it (its reinforcements).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShipClass {
    /// Stable id, e.g. `cruiser`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Whether the class counts toward the fleet-pool limit (T7: every ship but fighters does).
    pub fleet: bool,
    /// Pieces of this class each player owns.
    pub reinforcements: u32,
    /// Move value (LRR 57): how many systems a ship of the class may enter in a tactical action's movement.
    /// `None` (no `move` key): the class cannot move on its own and is transported within capacity
    /// (fighters, LRR 95); at most one class is transported so.
    #[serde(default, rename = "move")]
    pub movement: Option<u8>,
    /// Capacity (LRR 16): how many ships of the transported class one ship of this class carries.
    #[serde(default)]
    pub capacity: u8,
    /// Dice one ship of the class rolls in a combat round (LRR 78.5, the unit's combat value's "x N";
    /// default 1; the war sun rolls 3).
    #[serde(default = "one")]
    pub dice: u8,
    /// Produced only by a player whose faction or a technology they own unlocks the class (the war sun,
    /// LRR 67 and the unit upgrade technologies); such a class is in a game only when a player there has
    /// it unlocked or the galaxy holds pieces of it, and content lists it after every class that is not.
    #[serde(default)]
    pub locked: bool,
}

fn one() -> u8 {
    1
}

/// A faction's component action that spends strategy tokens to place ships from reinforcements in a system
/// holding one of the player's ships of a class (the Embers of Muaat's Star Forge: 1 token, 2 fighters or 1
/// destroyer, in a system with a war sun).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StarForge {
    /// Strategy tokens spent (they go to reinforcements).
    pub strategy_tokens: u8,
    /// The class of ship the system must hold one of the player's (e.g. `war_sun`).
    pub with: String,
    /// The choices: each places `count` ships of `class` from reinforcements.
    pub place: Vec<Placed>,
}

/// Ships one choice of a [`StarForge`] places.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Placed {
    /// Ship-class id.
    pub class: String,
    /// How many (as many as reinforcements hold, at most this).
    pub count: u8,
}

/// One token effect of a strategy card as content writes it (`{"effect":"gain","tokens":3}`), resolved in
/// order by the player resolving the card.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case", deny_unknown_fields)]
pub enum EffectSpec {
    /// Gain `tokens` command tokens, each into a pool of the player's choice (T2, T3 limits).
    Gain {
        /// How many.
        tokens: u8,
    },
    /// Spend any amount of influence for one token per `influence_per_token` (the excess is wasted, T9).
    Buy {
        /// Influence per token (3 on Leadership).
        influence_per_token: u32,
    },
    /// Redistribute the command-sheet tokens among the three pools (Warfare).
    Redistribute,
    /// Remove one of the player's command tokens from the board to reinforcements, if any (Warfare). The
    /// effect after it is its "then" part (T10, LRR 1.17): with no token on the board, it is skipped too.
    RemoveBoardToken,
    /// Choose a system; each other player places a token there from reinforcements (Diplomacy; T3, T6).
    OthersPlaceToken,
    /// Place one of the player's tokens from reinforcements in a system of their choice (Construction
    /// secondary; T3, T6).
    PlaceToken,
    /// Place `count` structures (PDS or space docks), counted per player (Construction).
    Structures {
        /// How many.
        count: u32,
    },
    /// Choose any number of other players: they resolve this card's secondary without spending a command
    /// token from their strategy pool (Trade; T11, LRR 92.4).
    FreeSecondaries,
    /// Research a technology (Technology). Research itself is not modelled; a faction that gains command
    /// tokens instead (Propagation, T13) gains them here, each into a pool of its choice.
    Research,
}

/// A strategy card: initiative, primary and secondary effects, and what the secondary costs (T5).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StrategyCard {
    /// Stable id, e.g. `leadership`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Initiative number: lower acts first in the action phase.
    pub initiative: u8,
    /// Effects of the primary ability, in order.
    pub primary: Vec<EffectSpec>,
    /// Effects of the secondary ability, in order.
    pub secondary: Vec<EffectSpec>,
    /// Strategy tokens a secondary costs (1; Leadership's costs 0, T5).
    pub secondary_cost: u8,
}

/// A card effect as a game holds it: [`EffectSpec`] in serde's default enum form, which every format
/// (JSON and compact binary snapshots) can read back.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Effect {
    /// See [`EffectSpec::Gain`].
    Gain(u8),
    /// See [`EffectSpec::Buy`]: influence per token.
    Buy(u32),
    /// See [`EffectSpec::Redistribute`].
    Redistribute,
    /// See [`EffectSpec::RemoveBoardToken`].
    RemoveBoardToken,
    /// See [`EffectSpec::OthersPlaceToken`].
    OthersPlaceToken,
    /// See [`EffectSpec::PlaceToken`].
    PlaceToken,
    /// See [`EffectSpec::Structures`].
    Structures(u32),
    /// See [`EffectSpec::FreeSecondaries`].
    FreeSecondaries,
    /// See [`EffectSpec::Research`].
    Research,
}

impl From<EffectSpec> for Effect {
    fn from(e: EffectSpec) -> Effect {
        match e {
            EffectSpec::Gain { tokens } => Effect::Gain(tokens),
            EffectSpec::Buy {
                influence_per_token,
            } => Effect::Buy(influence_per_token),
            EffectSpec::Redistribute => Effect::Redistribute,
            EffectSpec::RemoveBoardToken => Effect::RemoveBoardToken,
            EffectSpec::OthersPlaceToken => Effect::OthersPlaceToken,
            EffectSpec::PlaceToken => Effect::PlaceToken,
            EffectSpec::Structures { count } => Effect::Structures(count),
            EffectSpec::FreeSecondaries => Effect::FreeSecondaries,
            EffectSpec::Research => Effect::Research,
        }
    }
}

/// A strategy card as a game holds it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// Stable id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Initiative number.
    pub initiative: u8,
    /// Primary effects.
    pub primary: Vec<Effect>,
    /// Secondary effects.
    pub secondary: Vec<Effect>,
    /// Strategy tokens a secondary costs.
    pub secondary_cost: u8,
}

impl From<&StrategyCard> for Card {
    fn from(c: &StrategyCard) -> Card {
        Card {
            id: c.id.clone(),
            name: c.name.clone(),
            initiative: c.initiative,
            primary: c.primary.iter().map(|&e| e.into()).collect(),
            secondary: c.secondary.iter().map(|&e| e.into()).collect(),
            secondary_cost: c.secondary_cost,
        }
    }
}

/// A faction and its token modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Faction {
    /// Stable id, e.g. `sol`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Added to the fleet-pool count for the per-system ship limit (Letnev's Armada: 2).
    #[serde(default)]
    pub fleet_limit_bonus: u8,
    /// Extra tokens gained in the status phase (Sol's Versatile: 1).
    #[serde(default)]
    pub status_phase_tokens: u8,
    /// Command tokens gained instead of each technology the faction would research (the Nekro Virus's
    /// Propagation: 3; T13). 0: the faction researches as usual.
    #[serde(default)]
    pub research_tokens: u8,
    /// Ships in the home system at the start (default galaxy), by ship-class id.
    #[serde(default)]
    pub starting_fleet: BTreeMap<String, u32>,
    /// After winning a combat, places a command token from the opponent's reinforcements in its fleet
    /// pool unless one of that player's is there; those tokens raise its fleet limit and are not
    /// redistributed (the Mahact Gene-Sorcerers' Edict; T17).
    #[serde(default)]
    pub combat_capture: bool,
    /// Locked ship classes (by id) the faction may produce from the start (the Embers of Muaat's war sun).
    #[serde(default)]
    pub unlocks: Vec<String>,
    /// Move values of the faction's own units where they differ from their class's, by class id (the
    /// Embers of Muaat's Prototype War Sun I: 1).
    #[serde(default)]
    pub moves: BTreeMap<String, u8>,
    /// The faction's Star Forge component action, if it has one (T19).
    #[serde(default)]
    pub star_forge: Option<StarForge>,
    /// Strategy tokens the faction may spend, when an agenda is revealed, to discard it and have another
    /// revealed (the Xxcha Kingdom's Quash: 1; 0: none; T20).
    #[serde(default)]
    pub quash: u8,
    /// Strategy cards (by id) whose secondary the faction resolves without spending a command token (the
    /// Emirates of Hacan's Masters of Trade: `trade`; T21).
    #[serde(default)]
    pub free_secondaries: Vec<String>,
    /// The faction's abilities that spend strategy tokens (the Federation of Sol's Orbital Drop, the Naalu
    /// Collective's Foresight; T21, T23).
    #[serde(default)]
    pub abilities: Vec<AbilitySpec>,
}

/// A technology a player may own from the start, and its token modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Technology {
    /// Stable id, e.g. `hyper-metabolism`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Extra tokens its owner gains in the status phase (Hyper Metabolism: 1; T12).
    #[serde(default)]
    pub status_phase_tokens: u8,
    /// Locked ship classes (by id) its owner may produce (the War Sun technology: `war_sun`).
    #[serde(default)]
    pub unlocks: Vec<String>,
    /// The faction whose technology this is (only a player of it may own it); absent: any player.
    #[serde(default)]
    pub faction: Option<String>,
    /// Fleet-pool tokens a player who activates a system holding the owner's ships returns to
    /// reinforcements (Neuroglaive: 1; T21).
    #[serde(default)]
    pub activation_fleet_loss: u8,
    /// The ability this technology gives (Production Biomes, Nullification Field, Predictive
    /// Intelligence; T21, T23).
    #[serde(default)]
    pub ability: Option<AbilitySpec>,
    /// How much each of the owner's fighters in excess of their ships' capacity in a system counts against
    /// the fleet pool, in halves of a ship (Fighter II: 2; Hybrid Crystal Fighter II: 1; T25).
    #[serde(default)]
    pub excess_fighters: u8,
    /// Move values the owner's ships of these classes get, by class id (Fighter II: `fighter`, 2).
    #[serde(default)]
    pub moves: BTreeMap<String, u8>,
}

/// What an ability that touches command tokens does, besides spending its strategy tokens (T21, T23).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbilityKind {
    /// A component action ("ACTION: ...") that takes the turn; its other effects (infantry, trade goods)
    /// are not modelled (Orbital Drop, Production Biomes).
    #[default]
    ComponentAction,
    /// After another player activates a system that holds the owner's ships: immediately end that
    /// player's turn (Nullification Field).
    EndActivatorsTurn,
    /// At the end of the owner's turn: redistribute their command tokens (Predictive Intelligence).
    RedistributeAtEndOfTurn,
    /// After another player moves ships into a system that holds the owner's ships: place a token from the
    /// strategy pool in an adjacent system without another player's ships and move the owner's ships from
    /// the active system there (Foresight).
    Foresight,
    /// When another player plays an action card: cancel it (Instinct Training; T26).
    CancelActionCard,
    /// At the end of the strategy phase: give 1 of the owner's strategy cards to another player and take 1
    /// of theirs (Quantum Datahub Node; its 3 trade goods are not modelled; T27).
    SwapStrategyCards,
    /// Before a player casts votes: that player votes as the owner chooses or returns 1 token from their
    /// fleet pool to reinforcements (Genetic Recombination; T27).
    VoteOrFleetToken,
    /// A component action: purge 1 relic fragment to gain 1 command token (Fabrication; T28).
    Fabrication,
}

/// An ability of a faction or technology that spends strategy tokens or reacts to other players (T21,
/// T23).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AbilitySpec {
    /// Its name, e.g. `Orbital Drop`.
    pub name: String,
    /// What it does (default: a component action).
    #[serde(default)]
    pub kind: AbilityKind,
    /// Strategy tokens it spends (they go to reinforcements; Foresight places its token instead).
    #[serde(default)]
    pub strategy_tokens: u8,
    /// Whether its card exhausts when used (a technology: "Exhaust this card"); it is readied at the end of
    /// the round, with the other cards (LRR 81).
    #[serde(default)]
    pub exhausts: bool,
}

/// A law in play and its token modifiers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Law {
    /// Stable id, e.g. `fleet-regulations`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Most tokens a fleet pool may hold (Fleet Regulations: 4).
    #[serde(default)]
    pub fleet_pool_max: Option<u8>,
    /// Every system holding an alpha or beta wormhole is adjacent to every other (Wormhole Reconstruction;
    /// T29).
    #[serde(default)]
    pub wormholes_adjacent: bool,
}

/// What an agenda's outcome does to command tokens, in order (T20). JSON: `{"effect":"each_gains",
/// "pool":"fleet","tokens":1}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgendaEffect {
    /// The law (`laws.json` id) comes into play for the rest of the game, with its modifiers.
    Enact {
        /// Law id.
        law: String,
    },
    /// Each player, from the speaker, places `tokens` command tokens from their reinforcements in their
    /// `pool`: as many as reinforcements hold and a law's fleet-pool maximum allows (Fleet Regulations,
    /// Against).
    EachGains {
        /// The pool.
        pool: Pool,
        /// How many.
        tokens: u8,
    },
    /// Each player, from the speaker, removes `tokens` command tokens from their command sheet and returns
    /// them to reinforcements: from `pool`, or from pools of their choice when `pool` is absent; as many as
    /// there are (Clandestine Operations).
    EachReturns {
        /// How many.
        tokens: u8,
        /// The pool they come from; absent: the player chooses for each token.
        #[serde(default)]
        pool: Option<Pool>,
    },
    /// Each player places a command token from their reinforcements in their home system, if able: none
    /// without one in reinforcements or where one of theirs is (Shared Research, Against).
    EachPlacesHome,
    /// Each player that voted Against (the table enters who) removes `tokens` command tokens from their
    /// command sheet, pools of their choice, and returns them to reinforcements (Wormhole Research).
    AgainstVotersReturn {
        /// How many.
        tokens: u8,
    },
    /// The elected player gains this card: after performing an action, they may discard it to return 1 of
    /// their command tokens from the board to reinforcements, then perform 1 additional action (Minister of
    /// War).
    AdditionalAction,
    /// Each player, from the speaker, may resolve the elected strategy card's secondary ability without
    /// spending a command token (Galactic Crisis Pact).
    SecondaryForAll,
    /// Each player places a command token from reinforcements in each system that holds a wormhole and 1 or
    /// more of their ships (Wormhole Reconstruction, Against; T29).
    EachPlacesAtWormholes,
    /// The elected player returns 1 fleet-pool token per prerequisite of the technology they gain; the
    /// table enters that number (Research Grant Reallocation; T29).
    ReturnPerPrerequisite,
    /// The elected player places command tokens from reinforcements so that their pools hold these
    /// counts, and returns any excess to reinforcements (Armed Forces Standardization).
    Standardize {
        /// Tactic pool.
        tactic: u8,
        /// Fleet pool.
        fleet: u8,
        /// Strategy pool.
        strategy: u8,
    },
}

/// An agenda card, with what each outcome does to command tokens (T20). Votes are not modelled: the
/// table enters the outcome.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Agenda {
    /// Stable id, e.g. `fleet-regulations`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// "Elect Player": the outcome is a player, and `elected` applies; otherwise the outcomes are For and
    /// Against.
    #[serde(default)]
    pub elect_player: bool,
    /// "Elect Strategy Card": the outcome is a strategy card, and `elected` applies (Galactic Crisis Pact).
    #[serde(default)]
    pub elect_strategy_card: bool,
    /// The For outcome's effects.
    #[serde(default, rename = "for")]
    pub for_: Vec<AgendaEffect>,
    /// The Against outcome's effects.
    #[serde(default)]
    pub against: Vec<AgendaEffect>,
    /// An Elect Player outcome's effects.
    #[serde(default)]
    pub elected: Vec<AgendaEffect>,
}

/// When an action card may be played (T22).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// "ACTION:": as the turn's action in the action phase.
    Action,
    /// "At the start of the strategy phase".
    StartOfStrategyPhase,
    /// "At the start of a combat round", by a player in the space combat.
    StartOfCombatRound,
    /// "After an agenda is revealed": a rider; the player predicts an outcome, and the effect resolves
    /// only if it is the outcome.
    AfterAgendaRevealed,
}

/// What an action card does to command tokens (T22). JSON: `{"effect":"gain","tokens":2}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "effect", rename_all = "snake_case", deny_unknown_fields)]
pub enum CardEffect {
    /// Gain command tokens, each into a pool of the player's choice (T2, T3 limits).
    Gain {
        /// How many.
        tokens: u8,
    },
    /// Remove 1 token from another player's tactic pool and return it to their reinforcements.
    RemoveTacticToken,
    /// Remove 1 of your command tokens from the game board and return it to your reinforcements.
    RemoveBoardToken,
    /// Place a command token from another player's reinforcements in a non-home system that contains or
    /// is adjacent to 1 of your ships.
    PlaceOthersToken,
    /// Move all of your ships from the active system into an adjacent system that does not contain
    /// another player's ships; the space combat ends in a draw; then place a command token from your
    /// reinforcements in that system.
    SkilledRetreat,
    /// Choose a system; each other player places a command token from their reinforcements there.
    OthersPlaceToken,
}

/// An action card whose text touches command tokens (T22).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionCard {
    /// Stable id, e.g. `summit`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// When it is played.
    pub window: Window,
    /// What it does.
    pub effect: CardEffect,
    /// Copies in the action card deck (default 1): no game deals more.
    #[serde(default = "one")]
    pub copies: u8,
}

/// Every content list; a `None` list in a configuration keeps the embedded one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ContentOverride {
    /// Replaces `data/ships.json`.
    pub ships: Option<Vec<ShipClass>>,
    /// Replaces `data/strategy_cards.json`.
    pub strategy_cards: Option<Vec<StrategyCard>>,
    /// Replaces `data/factions.json`.
    pub factions: Option<Vec<Faction>>,
    /// Replaces `data/laws.json`.
    pub laws: Option<Vec<Law>>,
    /// Replaces `data/technologies.json`.
    pub technologies: Option<Vec<Technology>>,
    /// Replaces `data/agendas.json`.
    pub agendas: Option<Vec<Agenda>>,
    /// Replaces `data/action_cards.json`.
    pub action_cards: Option<Vec<ActionCard>>,
}

/// Validated content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Content {
    /// Ship classes (at most [`MAX_CLASSES`]).
    pub ships: Vec<ShipClass>,
    /// Strategy cards (at most [`MAX_CARDS`]).
    pub strategy_cards: Vec<StrategyCard>,
    /// Factions.
    pub factions: Vec<Faction>,
    /// Laws.
    pub laws: Vec<Law>,
    /// Technologies.
    pub technologies: Vec<Technology>,
    /// Agendas (at most [`MAX_AGENDAS`]).
    pub agendas: Vec<Agenda>,
    /// Action cards (at most [`MAX_ACTION_CARDS`]).
    pub action_cards: Vec<ActionCard>,
}

/// Most ship classes content may define.
pub const MAX_CLASSES: usize = 8;
/// Highest move value content may give a class.
pub const MAX_MOVE: u8 = 10;
/// Highest capacity content may give a class.
pub const MAX_CAPACITY: u8 = 20;
/// Most combat dice content may give a ship of a class.
pub const MAX_DICE: u8 = 10;
/// Most action cards content may define.
pub const MAX_ACTION_CARDS: usize = 32;
/// Most laws content may define.
pub const MAX_LAWS: usize = 16;
/// Most agendas content may define.
pub const MAX_AGENDAS: usize = 16;
/// Most strategy cards content may define.
pub const MAX_CARDS: usize = 16;

const SHIPS: &str = include_str!("../data/ships.json");
const CARDS: &str = include_str!("../data/strategy_cards.json");
const FACTIONS: &str = include_str!("../data/factions.json");
const LAWS: &str = include_str!("../data/laws.json");
const TECHNOLOGIES: &str = include_str!("../data/technologies.json");
const AGENDAS: &str = include_str!("../data/agendas.json");
const ACTION_CARDS: &str = include_str!("../data/action_cards.json");

/// A count a card or sheet prints (a cost, a bonus, a number of tokens): 0 to 16, the tokens a player owns.
fn at_most_16(
    file: &'static str,
    id: &str,
    field: &'static str,
    value: u8,
) -> Result<(), ContentError> {
    if value > 16 {
        return Err(ContentError::invalid(
            file,
            id,
            field,
            format!("{value} is out of range: 0 to 16"),
        ));
    }
    Ok(())
}

/// A content list holds at most `max` entries.
fn list_size(
    file: &'static str,
    field: &'static str,
    noun: &str,
    len: usize,
    max: usize,
) -> Result<(), ContentError> {
    if len > max {
        return Err(ContentError::invalid(
            file,
            "-",
            field,
            format!("{len} {noun}, but content holds 0 to {max}"),
        ));
    }
    Ok(())
}

/// An ability names itself and spends 0 to 16 strategy tokens.
fn check_ability(file: &'static str, id: &str, action: &AbilitySpec) -> Result<(), ContentError> {
    if action.name.trim().is_empty() {
        return Err(ContentError::invalid(
            file,
            id,
            "ability.name",
            "must not be empty",
        ));
    }
    at_most_16(file, id, "ability.strategy_tokens", action.strategy_tokens)
}

/// A display name must say something: tables and events show it.
fn check_name(file: &'static str, id: &str, name: &str) -> Result<(), ContentError> {
    if name.trim().is_empty() {
        return Err(ContentError::invalid(file, id, "name", "must not be empty"));
    }
    Ok(())
}

impl Content {
    /// The embedded content (`data/*.json`).
    ///
    /// # Errors
    /// [`ContentError`] if an embedded file is invalid (a build defect, covered by a test).
    pub fn embedded() -> Result<Content, ContentError> {
        Content::with_override(&ContentOverride::default())
    }

    /// The content a configuration plays with: the embedded content (parsed once per process and
    /// shared) or, when the configuration overrides lists, the embedded content with those replaced.
    ///
    /// # Errors
    /// [`ContentError`] naming the file, entry and field of the first problem.
    pub fn of(over: Option<&ContentOverride>) -> Result<Cow<'static, Content>, ContentError> {
        static EMBEDDED: OnceLock<Result<Content, ContentError>> = OnceLock::new();
        match over {
            Some(over) => Content::with_override(over).map(Cow::Owned),
            None => EMBEDDED
                .get_or_init(Content::embedded)
                .as_ref()
                .map(Cow::Borrowed)
                .map_err(Clone::clone),
        }
    }

    /// The embedded content with some lists replaced.
    ///
    /// # Errors
    /// [`ContentError`] naming the file, entry and field of the first problem.
    pub fn with_override(over: &ContentOverride) -> Result<Content, ContentError> {
        let ships = match &over.ships {
            Some(v) => v.clone(),
            None => read_content("ships.json", SHIPS)?,
        };
        let strategy_cards = match &over.strategy_cards {
            Some(v) => v.clone(),
            None => read_content("strategy_cards.json", CARDS)?,
        };
        let factions = match &over.factions {
            Some(v) => v.clone(),
            None => read_content("factions.json", FACTIONS)?,
        };
        let laws = match &over.laws {
            Some(v) => v.clone(),
            None => read_content("laws.json", LAWS)?,
        };
        let technologies = match &over.technologies {
            Some(v) => v.clone(),
            None => read_content("technologies.json", TECHNOLOGIES)?,
        };
        let agendas = match &over.agendas {
            Some(v) => v.clone(),
            None => read_content("agendas.json", AGENDAS)?,
        };
        let action_cards = match &over.action_cards {
            Some(v) => v.clone(),
            None => read_content("action_cards.json", ACTION_CARDS)?,
        };
        let content = Content {
            ships,
            strategy_cards,
            factions,
            laws,
            technologies,
            agendas,
            action_cards,
        };
        content.validate()?;
        Ok(content)
    }

    /// Parses one content list from JSON text, for tests and tools (`file` is one of `ships.json`,
    /// `strategy_cards.json`, `factions.json`, `laws.json`, `technologies.json`, `agendas.json`,
    /// `action_cards.json`) and validates the whole content with it.
    ///
    /// # Errors
    /// [`ContentError`].
    pub fn with_file(file: &str, text: &str) -> Result<Content, ContentError> {
        let mut over = ContentOverride::default();
        match file {
            "ships.json" => over.ships = Some(read_content("ships.json", text)?),
            "strategy_cards.json" => {
                over.strategy_cards = Some(read_content("strategy_cards.json", text)?)
            }
            "factions.json" => over.factions = Some(read_content("factions.json", text)?),
            "laws.json" => over.laws = Some(read_content("laws.json", text)?),
            "technologies.json" => {
                over.technologies = Some(read_content("technologies.json", text)?)
            }
            "agendas.json" => over.agendas = Some(read_content("agendas.json", text)?),
            "action_cards.json" => {
                over.action_cards = Some(read_content("action_cards.json", text)?)
            }
            other => {
                return Err(ContentError::parse(
                    "content",
                    format!("unknown content file '{other}'"),
                ));
            }
        }
        Content::with_override(&over)
    }

    fn validate(&self) -> Result<(), ContentError> {
        const F: &str = "ships.json";
        if self.ships.is_empty() || self.ships.len() > MAX_CLASSES {
            return Err(ContentError::invalid(
                F,
                "-",
                "ships",
                format!(
                    "{} classes, but content holds 1 to {MAX_CLASSES}",
                    self.ships.len()
                ),
            ));
        }
        let mut seen = Vec::new();
        for (i, s) in self.ships.iter().enumerate() {
            check_content_id(F, i, &s.id, &mut seen)?;
            check_name(F, &s.id, &s.name)?;
            if s.reinforcements > 1000 {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "reinforcements",
                    format!("{} is out of range: 0 to 1000", s.reinforcements),
                ));
            }
            if let Some(m) = s.movement.filter(|&m| m == 0 || m > MAX_MOVE) {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "move",
                    format!(
                        "{m} is out of range: 1 to {MAX_MOVE} (a class that cannot move has no `move`)"
                    ),
                ));
            }
            if s.capacity > MAX_CAPACITY {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "capacity",
                    format!("{} is out of range: 0 to {MAX_CAPACITY}", s.capacity),
                ));
            }
            if s.dice == 0 || s.dice > MAX_DICE {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "dice",
                    format!("{} is out of range: 1 to {MAX_DICE}", s.dice),
                ));
            }
            if !s.locked && i > 0 && self.ships[i - 1].locked {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "locked",
                    format!(
                        "'{}' is locked and listed before it: locked classes come after every class that is not, so that a game without them keeps the other classes' indices",
                        self.ships[i - 1].id
                    ),
                ));
            }
        }
        let carried: Vec<&str> = self
            .ships
            .iter()
            .filter(|s| s.movement.is_none())
            .map(|s| s.id.as_str())
            .collect();
        if carried.len() > 1 {
            return Err(ContentError::invalid(
                F,
                carried[1],
                "move",
                format!(
                    "missing, but only one class may lack a move value (it is transported within capacity, LRR 95); classes without one: {}",
                    carried.join(", ")
                ),
            ));
        }
        const C: &str = "strategy_cards.json";
        if self.strategy_cards.is_empty() || self.strategy_cards.len() > MAX_CARDS {
            return Err(ContentError::invalid(
                C,
                "-",
                "strategy_cards",
                format!(
                    "{} cards, but content holds 1 to {MAX_CARDS}",
                    self.strategy_cards.len()
                ),
            ));
        }
        let mut seen = Vec::new();
        let mut initiatives = Vec::new();
        for (i, c) in self.strategy_cards.iter().enumerate() {
            check_content_id(C, i, &c.id, &mut seen)?;
            check_name(C, &c.id, &c.name)?;
            if initiatives.contains(&c.initiative) {
                return Err(ContentError::invalid(
                    C,
                    &c.id,
                    "initiative",
                    format!("{} is used by another card", c.initiative),
                ));
            }
            initiatives.push(c.initiative);
            at_most_16(C, &c.id, "secondary_cost", c.secondary_cost)?;
            for (field, list) in [("primary", &c.primary), ("secondary", &c.secondary)] {
                if list.len() > 8 {
                    return Err(ContentError::invalid(
                        C,
                        &c.id,
                        field,
                        format!("{} effects, but an ability has 0 to 8", list.len()),
                    ));
                }
                for e in list {
                    match *e {
                        EffectSpec::Gain { tokens } if tokens == 0 || tokens > 16 => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                format!("a gain of {tokens} tokens is out of range: 1 to 16"),
                            ));
                        }
                        EffectSpec::Buy {
                            influence_per_token,
                        } if influence_per_token == 0 || influence_per_token > 100 => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                format!(
                                    "a buy's influence_per_token of {influence_per_token} is out of range: 1 to 100"
                                ),
                            ));
                        }
                        EffectSpec::FreeSecondaries if field == "secondary" => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                "free_secondaries chooses who resolves the secondary: only a primary has it",
                            ));
                        }
                        EffectSpec::Structures { count } if count > 100 => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                format!("{count} structures is out of range: 0 to 100"),
                            ));
                        }
                        _ => {}
                    }
                }
            }
        }
        const FA: &str = "factions.json";
        let mut seen = Vec::new();
        for (i, f) in self.factions.iter().enumerate() {
            check_content_id(FA, i, &f.id, &mut seen)?;
            check_name(FA, &f.id, &f.name)?;
            at_most_16(FA, &f.id, "fleet_limit_bonus", f.fleet_limit_bonus)?;
            at_most_16(FA, &f.id, "research_tokens", f.research_tokens)?;
            at_most_16(FA, &f.id, "status_phase_tokens", f.status_phase_tokens)?;
            at_most_16(FA, &f.id, "quash", f.quash)?;
            for card in &f.free_secondaries {
                if !self.strategy_cards.iter().any(|c| &c.id == card) {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "free_secondaries",
                        format!(
                            "unknown strategy card '{card}'; known: {}",
                            self.strategy_cards
                                .iter()
                                .map(|c| c.id.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                }
            }
            if f.abilities.len() > 4 {
                return Err(ContentError::invalid(
                    FA,
                    &f.id,
                    "abilities",
                    format!("{} abilities, but a faction has 0 to 4", f.abilities.len()),
                ));
            }
            for c in &f.abilities {
                check_ability(FA, &f.id, c)?;
            }
            for (class, &n) in &f.starting_fleet {
                let Some(s) = self.ships.iter().find(|s| &s.id == class) else {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "starting_fleet",
                        format!(
                            "unknown ship class '{class}'; known: {}",
                            self.ships
                                .iter()
                                .map(|s| s.id.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
                if n > s.reinforcements {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "starting_fleet",
                        format!(
                            "{n} {class} but only {} exist (0 to {} allowed)",
                            s.reinforcements, s.reinforcements
                        ),
                    ));
                }
            }
            self.check_unlocks(FA, &f.id, &f.unlocks)?;
            self.check_moves(FA, &f.id, &f.moves)?;
            if let Some(forge) = &f.star_forge {
                at_most_16(
                    FA,
                    &f.id,
                    "star_forge.strategy_tokens",
                    forge.strategy_tokens,
                )?;
                self.check_class(FA, &f.id, "star_forge.with", &forge.with)?;
                if forge.place.is_empty() || forge.place.len() > MAX_CLASSES {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "star_forge.place",
                        format!(
                            "{} choices, but a Star Forge has 1 to {MAX_CLASSES}",
                            forge.place.len()
                        ),
                    ));
                }
                for placed in &forge.place {
                    self.check_class(FA, &f.id, "star_forge.place", &placed.class)?;
                    if placed.count == 0 || placed.count > 16 {
                        return Err(ContentError::invalid(
                            FA,
                            &f.id,
                            "star_forge.place",
                            format!("{} {} is out of range: 1 to 16", placed.count, placed.class),
                        ));
                    }
                }
            }
        }
        const L: &str = "laws.json";
        list_size(L, "laws", "laws", self.laws.len(), MAX_LAWS)?;
        let mut seen = Vec::new();
        for (i, l) in self.laws.iter().enumerate() {
            check_content_id(L, i, &l.id, &mut seen)?;
            check_name(L, &l.id, &l.name)?;
            if let Some(m) = l.fleet_pool_max {
                at_most_16(L, &l.id, "fleet_pool_max", m)?;
            }
        }
        const T: &str = "technologies.json";
        let mut seen = Vec::new();
        for (i, t) in self.technologies.iter().enumerate() {
            check_content_id(T, i, &t.id, &mut seen)?;
            check_name(T, &t.id, &t.name)?;
            at_most_16(T, &t.id, "status_phase_tokens", t.status_phase_tokens)?;
            self.check_unlocks(T, &t.id, &t.unlocks)?;
            at_most_16(T, &t.id, "activation_fleet_loss", t.activation_fleet_loss)?;
            if let Some(c) = &t.ability {
                check_ability(T, &t.id, c)?;
            }
            if t.excess_fighters > 2 {
                return Err(ContentError::invalid(
                    T,
                    &t.id,
                    "excess_fighters",
                    format!(
                        "{} is out of range: 0 to 2 (halves of a ship)",
                        t.excess_fighters
                    ),
                ));
            }
            self.check_moves(T, &t.id, &t.moves)?;
        }
        const A: &str = "agendas.json";
        list_size(A, "agendas", "agendas", self.agendas.len(), MAX_AGENDAS)?;
        let mut seen = Vec::new();
        for (i, a) in self.agendas.iter().enumerate() {
            check_content_id(A, i, &a.id, &mut seen)?;
            check_name(A, &a.id, &a.name)?;
            if a.elect_player && a.elect_strategy_card {
                return Err(ContentError::invalid(
                    A,
                    &a.id,
                    "elect_strategy_card",
                    "an agenda elects a player or a strategy card, not both",
                ));
            }
            let elects = a.elect_player || a.elect_strategy_card;
            let unused: &[(&str, &Vec<AgendaEffect>)] = if elects {
                &[("for", &a.for_), ("against", &a.against)]
            } else {
                &[("elected", &a.elected)]
            };
            if let Some((field, _)) = unused.iter().find(|(_, list)| !list.is_empty()) {
                return Err(ContentError::invalid(
                    A,
                    &a.id,
                    field,
                    if elects {
                        "an Elect agenda has only `elected` effects"
                    } else {
                        "a For/Against agenda has no `elected` effects"
                    },
                ));
            }
            for (field, list) in [
                ("for", &a.for_),
                ("against", &a.against),
                ("elected", &a.elected),
            ] {
                if list.len() > 8 {
                    return Err(ContentError::invalid(
                        A,
                        &a.id,
                        field,
                        format!("{} effects, but an outcome has 0 to 8", list.len()),
                    ));
                }
                for e in list {
                    self.check_agenda_effect(a, field, e)?;
                }
            }
        }
        const AC: &str = "action_cards.json";
        if self.action_cards.len() > MAX_ACTION_CARDS {
            return Err(ContentError::invalid(
                AC,
                "-",
                "action_cards",
                format!(
                    "{} action cards, but content holds 0 to {MAX_ACTION_CARDS}",
                    self.action_cards.len()
                ),
            ));
        }
        let mut seen = Vec::new();
        for (i, c) in self.action_cards.iter().enumerate() {
            check_content_id(AC, i, &c.id, &mut seen)?;
            check_name(AC, &c.id, &c.name)?;
            if c.copies == 0 || c.copies > 16 {
                return Err(ContentError::invalid(
                    AC,
                    &c.id,
                    "copies",
                    format!("{} is out of range: 1 to 16", c.copies),
                ));
            }
            let fits = match c.effect {
                CardEffect::Gain { tokens } => {
                    if tokens == 0 || tokens > 16 {
                        return Err(ContentError::invalid(
                            AC,
                            &c.id,
                            "effect",
                            format!("a gain of {tokens} tokens is out of range: 1 to 16"),
                        ));
                    }
                    c.window != Window::StartOfCombatRound
                }
                CardEffect::RemoveTacticToken
                | CardEffect::RemoveBoardToken
                | CardEffect::PlaceOthersToken => c.window == Window::Action,
                CardEffect::SkilledRetreat => c.window == Window::StartOfCombatRound,
                CardEffect::OthersPlaceToken => c.window == Window::AfterAgendaRevealed,
            };
            if !fits {
                return Err(ContentError::invalid(
                    AC,
                    &c.id,
                    "window",
                    "this effect cannot be played in that window",
                ));
            }
        }
        Ok(())
    }

    /// One agenda effect's values are in range and its law exists.
    fn check_agenda_effect(
        &self,
        agenda: &Agenda,
        field: &'static str,
        effect: &AgendaEffect,
    ) -> Result<(), ContentError> {
        const A: &str = "agendas.json";
        let bad = |why: String| Err(ContentError::invalid(A, &agenda.id, field, why));
        let elect_player = agenda.elect_player;
        match effect {
            AgendaEffect::EachGains { tokens, .. }
            | AgendaEffect::EachReturns { tokens, .. }
            | AgendaEffect::AgainstVotersReturn { tokens }
                if *tokens == 0 || *tokens > 16 =>
            {
                bad(format!("{tokens} tokens is out of range: 1 to 16"))
            }
            AgendaEffect::Standardize {
                tactic,
                fleet,
                strategy,
            } if u32::from(*tactic) + u32::from(*fleet) + u32::from(*strategy) > 16 => bad(
                format!("{tactic} + {fleet} + {strategy} tokens is more than the 16 a player owns"),
            ),
            AgendaEffect::AgainstVotersReturn { .. } if field != "against" => bad(
                "against_voters_return applies to those who voted Against: only `against` has it".into(),
            ),
            AgendaEffect::ReturnPerPrerequisite if !elect_player => bad(
                "return_per_prerequisite applies to the elected player: only an Elect Player agenda has it"
                    .into(),
            ),
            AgendaEffect::AdditionalAction if !elect_player => bad(
                "additional_action goes to the elected player: only an Elect Player agenda has it".into(),
            ),
            AgendaEffect::SecondaryForAll if !agenda.elect_strategy_card => bad(
                "secondary_for_all needs an elected strategy card: only an Elect Strategy Card agenda has it"
                    .into(),
            ),
            AgendaEffect::Standardize { .. } if !elect_player => bad(
                "standardize applies to the elected player: only an Elect Player agenda has it"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// `class` names a ship class.
    fn check_class(
        &self,
        file: &'static str,
        id: &str,
        field: &'static str,
        class: &str,
    ) -> Result<(), ContentError> {
        if self.class(class).is_none() {
            return Err(ContentError::invalid(
                file,
                id,
                field,
                format!(
                    "unknown ship class '{class}'; known: {}",
                    self.ships
                        .iter()
                        .map(|s| s.id.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// A `moves` table names ship classes and gives each a move value of 1 to [`MAX_MOVE`].
    fn check_moves(
        &self,
        file: &'static str,
        id: &str,
        moves: &BTreeMap<String, u8>,
    ) -> Result<(), ContentError> {
        for (class, &m) in moves {
            self.check_class(file, id, "moves", class)?;
            if m == 0 || m > MAX_MOVE {
                return Err(ContentError::invalid(
                    file,
                    id,
                    "moves",
                    format!("{class}: {m} is out of range: 1 to {MAX_MOVE}"),
                ));
            }
        }
        Ok(())
    }

    /// Every class an `unlocks` list names is a locked ship class.
    fn check_unlocks(
        &self,
        file: &'static str,
        id: &str,
        unlocks: &[String],
    ) -> Result<(), ContentError> {
        for class in unlocks {
            self.check_class(file, id, "unlocks", class)?;
            if !self.ships.iter().any(|s| &s.id == class && s.locked) {
                return Err(ContentError::invalid(
                    file,
                    id,
                    "unlocks",
                    format!("'{class}' is not locked: every player may produce it already"),
                ));
            }
        }
        Ok(())
    }

    /// The technology with this id.
    pub fn technology(&self, id: &str) -> Option<&Technology> {
        self.technologies.iter().find(|t| t.id == id)
    }

    /// The faction with this id.
    pub fn faction(&self, id: &str) -> Option<&Faction> {
        self.factions.iter().find(|f| f.id == id)
    }

    /// The agenda with this id.
    pub fn agenda(&self, id: &str) -> Option<&Agenda> {
        self.agendas.iter().find(|a| a.id == id)
    }

    /// The action card with this id.
    pub fn action_card(&self, id: &str) -> Option<&ActionCard> {
        self.action_cards.iter().find(|c| c.id == id)
    }

    /// The law with this id.
    pub fn law(&self, id: &str) -> Option<&Law> {
        self.laws.iter().find(|l| l.id == id)
    }

    /// The index of the ship class with this id.
    pub fn class(&self, id: &str) -> Option<usize> {
        self.ships.iter().position(|s| s.id == id)
    }
}

//! Content as data: ship classes, strategy cards (with their token effects), factions, laws, technologies
//! and agendas, parsed from
//! the JSON files embedded from `data/` (or given inline in the configuration) and validated on load.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::ids::Pool;

pub use coffer_core::ContentError;

mod load;
mod validate;

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

impl Content {
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

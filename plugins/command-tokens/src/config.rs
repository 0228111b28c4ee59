//! A game's configuration (players' factions, galaxy, laws, options) and the rules resolved from it and the
//! content: the limits, the ship classes in play, abilities, agendas and hands.

use crate::content::{AbilityKind, Card, CardEffect, ContentOverride, ShipClass, Window};
use crate::ids::Pool;
use coffer_core::SetupError;
use serde::{Deserialize, Serialize};

/// Most players (T: 3 to 8).
pub const MAX_PLAYERS: usize = 8;
/// Fewest players.
pub const MIN_PLAYERS: usize = 3;
/// Command tokens each player owns (T1).
pub const COMMAND_TOKENS: u32 = 16;
/// Marks a strategy card nobody holds.
pub const NOBODY: u8 = u8::MAX;
/// Most rounds a game may be configured to last (`rounds`).
pub const MAX_ROUNDS: u16 = 1000;
/// Most ships one tactical action may be configured to produce (`production`).
pub const MAX_PRODUCTION: u8 = 20;
/// Most influence a player may be configured to have per round (`influence`, `influence_per_player`).
pub const MAX_INFLUENCE: u32 = 1_000_000;
/// Most action cards a game deals (`action_cards`, T22).
pub const MAX_HAND_CARDS: usize = 32;
/// Most riders a game deals (T22): each agenda keeps its predictions in the flow.
pub const MAX_RIDERS: usize = 4;
/// Most systems a configured galaxy may hold (`galaxy`).
pub const MAX_SYSTEMS: usize = 200;

pub(crate) fn cfg(message: impl Into<String>) -> SetupError {
    SetupError::Config(message.into())
}

/// Ids for an error message: "letnev, sol, hacan".
pub(crate) fn ids<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.collect::<Vec<_>>().join(", ")
}

/// Most prerequisites a technology has (T29: the war sun's four).
pub(crate) const MAX_PREREQUISITES: u8 = 4;

/// Ships of one class a player has in a system at the start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShipsConfig {
    /// The player.
    pub player: u16,
    /// Ship-class id (see `data/ships.json`).
    pub class: String,
    /// How many.
    pub count: u32,
}

/// One system of the galaxy.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SystemConfig {
    /// Its id (a tile number or a name).
    pub id: String,
    /// Ships in it at the start.
    #[serde(default)]
    pub ships: Vec<ShipsConfig>,
    /// Diplomacy cannot choose it (Mecatol Rex).
    #[serde(default)]
    pub no_diplomacy: bool,
    /// Ids of the systems adjacent to it (LRR 6); adjacency is mutual, so naming it on either side is
    /// enough.
    #[serde(default)]
    pub adjacent: Vec<String>,
}

/// Configuration; every field has a documented default (see the README).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Rounds played before the game ends (default 3).
    pub rounds: u16,
    /// Faction id per player; empty: the first factions of `data/factions.json` in order.
    pub factions: Vec<String>,
    /// Laws in play from the start (default none; e.g. `fleet-regulations`).
    pub laws: Vec<String>,
    /// Technologies each player owns from the start, one list per player (default none; e.g.
    /// `[["hyper-metabolism"], []]`).
    pub technologies: Vec<Vec<String>>,
    /// The galaxy; empty: the default galaxy (Mecatol Rex, one home system per player with the faction's
    /// starting fleet, and as many empty systems as players).
    pub galaxy: Vec<SystemConfig>,
    /// Influence each player has each round (default 6); unspent influence is lost at the round's end.
    pub influence: u32,
    /// Per-player influence, overriding `influence` when not empty.
    pub influence_per_player: Vec<u32>,
    /// Most ships produced by one tactical action (default 2).
    pub production: u8,
    /// Strategy cards each player picks; 0 (default): 2 with 3 or 4 players, 1 with more.
    pub cards_per_player: u8,
    /// Inline content replacing embedded lists (default none).
    pub content: Option<ContentOverride>,
    /// Whether the table may declare a player eliminated (`eliminate`, T18; default false: LRR 33.1's
    /// conditions concern ground forces, Production and planets, which only a table tracking them can
    /// decide).
    pub elimination: bool,
    /// The round from which every round ends with an agenda phase (T20; default 0: none). LRR 8: the
    /// agenda phase is played once the custodians token has left Mecatol Rex, which the table decides.
    pub agenda_phase_from: u16,
    /// Each player's home system, by system id (default empty: the system `home-<faction>`, if the galaxy
    /// has one; the default galaxy does).
    pub homes: Vec<String>,
    /// The systems holding an alpha or beta wormhole, by system id (default empty: none, as in the default
    /// galaxy; T29).
    pub wormholes: Vec<String>,
    /// The action cards each player holds at the start, by id, one list per player (default empty: none;
    /// T22). Drawing is not modelled: a hand is dealt by configuration and known to all.
    pub action_cards: Vec<Vec<String>>,
    /// The relic fragments each player holds at the start, one count per player (default empty: none; T28).
    /// Exploration is not modelled: fragments come only from here.
    pub relic_fragments: Vec<u8>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            rounds: 3,
            factions: Vec::new(),
            laws: Vec::new(),
            technologies: Vec::new(),
            galaxy: Vec::new(),
            influence: 6,
            influence_per_player: Vec::new(),
            production: 2,
            cards_per_player: 0,
            content: None,
            elimination: false,
            agenda_phase_from: 0,
            homes: Vec::new(),
            wormholes: Vec::new(),
            action_cards: Vec::new(),
            relic_fragments: Vec::new(),
        }
    }
}

/// A system as the game knows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SystemInfo {
    /// Its id.
    pub id: String,
    /// Diplomacy cannot choose it.
    pub no_diplomacy: bool,
}

/// The rules of one game, resolved from configuration and content at setup; never changes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rules {
    /// Rounds before the end.
    pub rounds: u16,
    /// Ships per tactical action.
    pub production: u8,
    /// Strategy cards per player.
    pub cards_per_player: u8,
    /// Ship classes.
    pub classes: Vec<ShipClass>,
    /// Indices of the classes that count toward the fleet limit.
    pub fleet_classes: Vec<u8>,
    /// Strategy cards.
    pub cards: Vec<Card>,
    /// Systems.
    pub systems: Vec<SystemInfo>,
    /// Faction id per player.
    pub factions: Vec<String>,
    /// Fleet-limit bonus per player (Letnev).
    pub fleet_bonus: Vec<u8>,
    /// Tokens gained in the status phase per player (2, plus Sol's 1 and Hyper Metabolism's 1).
    pub status_tokens: Vec<u8>,
    /// Tokens gained instead of researching a technology, per player (the Nekro Virus: 3; else 0).
    #[serde(default)]
    pub research_tokens: Vec<u8>,
    /// Most fleet-pool tokens (Fleet Regulations), if a law says so.
    pub fleet_pool_max: Option<u8>,
    /// Laws in play.
    pub laws: Vec<String>,
    /// Faction name per player ("The Barony of Letnev"), for tables.
    pub faction_names: Vec<String>,
    /// Each system's label ("system 18"), for labels and tables.
    pub system_labels: Vec<String>,
    /// The systems adjacent to each system (LRR 6), by index, ascending; mutual.
    #[serde(default)]
    pub adjacent: Vec<Vec<u16>>,
    /// The class without a move value, transported within capacity (fighters, LRR 95), if any.
    #[serde(default)]
    pub transported: Option<u8>,
    /// Per player: places a token of the opponent's in their fleet pool after winning a combat (Edict,
    /// T17).
    #[serde(default)]
    pub capture: Vec<bool>,
    /// The table may declare a player eliminated (T18).
    #[serde(default)]
    pub elimination: bool,
    /// Per player, a bit per ship class the player may produce: every class that is not locked, and the
    /// locked ones their faction or technologies unlock (T19).
    #[serde(default)]
    pub producible: Vec<u8>,
    /// Per player and class (`player * classes + class`), the move value of the player's ships of that
    /// class (0: none; the faction's own units may differ from the class's, T19).
    #[serde(default)]
    pub moves: Vec<u8>,
    /// Per player, their Star Forge component action, if their faction has one (T19).
    #[serde(default)]
    pub star_forge: Vec<Option<Forge>>,
    /// The round from which an agenda phase ends each round (0: never; T20).
    #[serde(default)]
    pub agenda_from: u16,
    /// The agendas (T20), in content order; empty without an agenda phase.
    pub agendas: Vec<AgendaRule>,
    /// Every law of the content: its name and fleet-pool maximum, by index (an agenda enacts them, T20).
    #[serde(default)]
    pub law_list: Vec<(String, Option<u8>)>,
    /// Per player, the index of their home system, if the galaxy has one.
    #[serde(default)]
    pub homes: Vec<Option<u16>>,
    /// Per player, the strategy tokens Quash spends (the Xxcha Kingdom: 1; 0: no Quash; T20).
    #[serde(default)]
    pub quash: Vec<u8>,
    /// Bit per law of [`Rules::law_list`] in play from the start (option `laws`).
    #[serde(default)]
    pub starting_laws: u16,
    /// Per player, the fleet-pool tokens a player activating a system with their ships returns to
    /// reinforcements (Neuroglaive; T21).
    #[serde(default)]
    pub fleet_loss: Vec<u8>,
    /// Per player, a bit per strategy card whose secondary costs them no command token (Masters of
    /// Trade; T21).
    #[serde(default)]
    pub free_secondaries: Vec<u16>,
    /// The component actions that spend strategy tokens, each of one player (Orbital Drop, Production
    /// Biomes; T21).
    pub abilities: Vec<Ability>,
    /// The action cards dealt (T22): each with its holder, in configuration order.
    #[serde(default)]
    pub hands: Vec<HandCard>,
    /// Per player, how much each fighter beyond their ships' capacity in a system counts against the fleet
    /// pool, in halves of a ship (Fighter II: 2, Hybrid Crystal Fighter II: 1; 0: not at all; T25).
    #[serde(default)]
    pub excess_fighters: Vec<u8>,
    /// Per player, the relic fragments held at the start (empty: the game has none; T28).
    pub fragments: Vec<u8>,
    /// The systems holding an alpha or beta wormhole, by index, ascending (T29).
    #[serde(default)]
    pub wormholes: Vec<u16>,
    /// The law (index into [`Rules::law_list`]) that makes wormhole systems adjacent, if the content has one.
    #[serde(default)]
    pub wormhole_law: Option<u8>,
}

/// An action card dealt to a player (T22).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HandCard {
    /// Its holder.
    pub player: u8,
    /// Its name.
    pub name: String,
    /// When it is played.
    pub window: Window,
    /// What it does.
    pub effect: CardEffect,
}

/// An ability of one player that spends strategy tokens or reacts to other players (T21, T23).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ability {
    /// What it does.
    pub kind: AbilityKind,
    /// Its name.
    pub name: String,
    /// Strategy tokens spent.
    pub cost: u8,
    /// Whether its card exhausts when used (readied at the round's end).
    pub exhausts: bool,
    /// The player who has it.
    pub player: u8,
}

/// An agenda as a game holds it (T20).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgendaRule {
    /// Its name.
    pub name: String,
    /// An Elect Player agenda.
    pub elect_player: bool,
    /// An Elect Strategy Card agenda.
    #[serde(default)]
    pub elect_card: bool,
    /// Its Against outcome concerns the players who voted Against: the outcome names them.
    #[serde(default)]
    pub voters: bool,
    /// The effects of For, Against and an election, by [`Vote`] index.
    pub outcomes: [Vec<AgendaOp>; 3],
}

/// An agenda effect as a game holds it: [`crate::AgendaEffect`] with its law resolved to an index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AgendaOp {
    /// The law of this index into [`Rules::law_list`] comes into play.
    Enact(u8),
    /// Each player gains tokens into a pool from reinforcements.
    EachGains(Pool, u8),
    /// Each player returns tokens from a pool, or from pools of their choice, to reinforcements.
    EachReturns(u8, Option<Pool>),
    /// Each player places a token from reinforcements in their home system, if able.
    EachPlacesHome,
    /// The elected player's pools are brought to these counts.
    Standardize([u8; 3]),
    /// Each player who voted Against returns tokens of their choice from their sheet.
    AgainstVotersReturn(u8),
    /// The elected player holds Minister of War's card.
    AdditionalAction,
    /// Each player may resolve the elected strategy card's secondary for free.
    SecondaryForAll,
    /// Each player places a token in each wormhole system holding their ships.
    EachPlacesAtWormholes,
    /// The elected player returns a fleet token per prerequisite the table enters.
    ReturnPerPrerequisite,
}

/// An agenda's outcome, as the table enters it (T20).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Vote {
    /// For.
    For,
    /// Against.
    Against,
}

/// A Star Forge as a game holds it (T19): strategy tokens spent, the class the system must hold one of the
/// player's, and the choices of ships placed (class index, most pieces).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forge {
    /// Strategy tokens spent.
    pub cost: u8,
    /// Class index the system must hold one of the player's ships of.
    pub with: u8,
    /// Each choice: class index and most ships placed.
    pub place: Vec<(u8, u8)>,
}

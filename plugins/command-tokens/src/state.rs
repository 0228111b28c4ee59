//! The game state: configuration, the per-game rules resolved from content, the kernel ledger with its
//! token zones (command tokens and ships), and the flow of the round (whose decision it is).

use crate::content::{
    AbilityKind, AgendaEffect, Card, CardEffect, Content, ContentOverride, Effect, MAX_CARDS,
    ShipClass, Window,
};
use coffer_core::{
    AmountId, AmountSpec, Cause, ContentTable, Key, LaidOut, Layout, Ledger, Owner, PermanentId,
    Scope, SetupError, Shared, SharedContent, Unlaid, Violation, Zone, ZoneId,
};
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

/// Resource kinds, as keys and events report them.
pub mod kind {
    use coffer_core::Kind;
    /// A player's reinforcements (command tokens).
    pub const REINFORCEMENTS: Kind = Kind(0);
    /// Tactic pools.
    pub const TACTIC: Kind = Kind(1);
    /// Fleet pools.
    pub const FLEET: Kind = Kind(2);
    /// Strategy pools.
    pub const STRATEGY: Kind = Kind(3);
    /// Command tokens in a system (subject: system index).
    pub const SYSTEM: Kind = Kind(4);
    /// Ship reinforcements (subject: class index).
    pub const SHIP_RESERVE: Kind = Kind(5);
    /// Ships in a system (subject: system index * classes + class).
    pub const SHIPS: Kind = Kind(6);
    /// A player's influence for the round.
    pub const INFLUENCE: Kind = Kind(7);
    /// A player's structures.
    pub const STRUCTURES: Kind = Kind(8);
    /// A strategy card (exhausted once its strategic action is done).
    pub const CARD: Kind = Kind(9);
    /// The fleet-pool limit of a player in a system (subject: system index), as a K6 demand.
    pub const FLEET_LIMIT: Kind = Kind(10);
    /// The subject of notes about play that concern no resource: a player's pass or redistribution
    /// (owner: the player), a phase beginning (owner: the game). No resource has this kind.
    pub const PLAY: Kind = Kind(11);
    /// Other players' command tokens in a player's fleet pool (subject: that player; the Mahact
    /// Gene-Sorcerers' Edict, T17): a one-per-owner zone.
    pub const CAPTURED: Kind = Kind(12);
    /// A player's components returned to the game box on their elimination (LRR 33.2, T18); subject: the
    /// kernel supply ([`super::ship_supply`]: 0 for command tokens, 1 + class for ships). Nothing leaves it.
    pub const BOX: Kind = Kind(13);
    /// An agenda card (subject: its index in the content), a K5 permanent exhausted once revealed (T20); in
    /// games with an agenda phase only.
    pub const AGENDA: Kind = Kind(14);
    /// A component action of a player that spends strategy tokens (subject: its index in the game's
    /// list), a K5 permanent exhausted when its card exhausts (T21).
    pub const ABILITY: Kind = Kind(15);
    /// An action card in a player's hand (subject: its slot in the game's list of dealt cards), a K5
    /// permanent exhausted once played (T22).
    pub const ACTION_CARD: Kind = Kind(16);
    /// A player's relic fragments (T28), in games with option `relic_fragments` only.
    pub const FRAGMENTS: Kind = Kind(17);
}

/// The ruleset's own events ([`coffer_core::Change::Note`]), by code; their texts are in the vocabulary
/// ([`crate::vocabulary`]). A note about a strategy card or a system is keyed by that resource (so hosts
/// name it) and carries the player as its first number.
pub mod note {
    /// `p{0} picks {card}`.
    pub const PICK: u16 = 0;
    /// `p{0} resolves the primary ability of {card}`.
    pub const PRIMARY: u16 = 1;
    /// `p{0} resolves the secondary ability of {card}`.
    pub const SECONDARY: u16 = 2;
    /// `p{0} declines the secondary ability of {card}`.
    pub const DECLINE: u16 = 3;
    /// `{who} passes`.
    pub const PASS: u16 = 4;
    /// `p{0} activates {system}`.
    pub const ACTIVATE: u16 = 5;
    /// `p{0} ends production in {system}`.
    pub const DONE: u16 = 6;
    /// `{who} spends {0} influence to buy {1} command tokens`.
    pub const BUY: u16 = 7;
    /// `{who} spends {0} influence to buy 1 command token`.
    pub const BUY_ONE: u16 = 8;
    /// `{who} buys no command tokens`.
    pub const BUY_NONE: u16 = 9;
    /// `p{0} chooses {system}` (Diplomacy).
    pub const TARGET: u16 = 10;
    /// `p{0} has no command token to place in {system}`.
    pub const NOTHING_TO_PLACE: u16 = 11;
    /// `{who} redistributes: {0} tactic, {1} fleet, {2} strategy`.
    pub const REDISTRIBUTE: u16 = 12;
    /// The action phase begins; `p{0}` acts first.
    pub const ACTION_PHASE: u16 = 13;
    /// The status phase begins.
    pub const STATUS_PHASE: u16 = 14;
    /// The strategy phase begins; `p{0}`, the speaker, picks first.
    pub const STRATEGY_PHASE: u16 = 15;
    /// The game is over.
    pub const GAME_OVER: u16 = 16;
    /// Trade: the active player lets another resolve the secondary without spending a token (`[player,
    /// other]`).
    pub const FREE_SECONDARY: u16 = 17;
    /// Trade: the active player lets no other player resolve the secondary for free (`[player]`).
    pub const NO_FREE_SECONDARY: u16 = 18;
    /// Propagation: a player gains command tokens instead of researching (`[player, tokens]`).
    pub const RESEARCH_TOKENS: u16 = 19;
    /// A space combat begins in the activated system (`[attacker, defender]`).
    pub const COMBAT: u16 = 20;
    /// A player announces a retreat (`[player]`).
    pub const ANNOUNCE: u16 = 21;
    /// A player's combat roll produced hits (`[player, hits]`).
    pub const ROLL: u16 = 22;
    /// A player's ships retreat to the system (`[player]`).
    pub const RETREAT: u16 = 23;
    /// A space combat is over and won (`[winner]`).
    pub const COMBAT_OVER: u16 = 24;
    /// A space combat is over with no ship left (LRR 78.10).
    pub const COMBAT_DRAW: u16 = 25;
    /// The active player ends movement (`[player]`).
    pub const MOVEMENT_OVER: u16 = 26;
    /// A player announces no retreat (`[player]`).
    pub const NO_RETREAT: u16 = 27;
    /// Edict: a token of the loser's goes into the winner's fleet pool (`[winner, loser]`).
    pub const CAPTURE: u16 = 28;
    /// Edict: the loser has no command token to give (`[winner, loser]`).
    pub const NOTHING_TO_CAPTURE: u16 = 29;
    /// Edict: a token returns from the winner's fleet pool to its owner's reinforcements over a law's
    /// maximum (`[winner, owner]`).
    pub const RELEASE: u16 = 30;
    /// The table declares a player eliminated (T18, LRR 33); keyed by that player.
    pub const ELIMINATED: u16 = 31;
    /// The speaker was eliminated and the speaker token passes to the player on their left (T18, LRR
    /// 33.8): `[new speaker]`.
    pub const SPEAKER: u16 = 32;
    /// Star Forge (T19): a player spends strategy tokens to place ships in the system (`[player, tokens]`).
    pub const STAR_FORGE: u16 = 33;
    /// The agenda phase begins (T20): `[speaker]`.
    pub const AGENDA_PHASE: u16 = 34;
    /// The speaker reveals the agenda (keyed by it): `[speaker]`.
    pub const REVEAL: u16 = 35;
    /// The speaker reveals an agenda that does nothing to command tokens: `[speaker]`.
    pub const OTHER_AGENDA: u16 = 36;
    /// Quash: a player discards the agenda (keyed by it, or by the round for another agenda): `[player,
    /// tokens]`.
    pub const QUASH: u16 = 37;
    /// A player with Quash lets the agenda stand: `[player]`.
    pub const NO_QUASH: u16 = 38;
    /// The agenda's outcome is For (keyed by it).
    pub const FOR: u16 = 39;
    /// The agenda's outcome is Against (keyed by it).
    pub const AGAINST: u16 = 40;
    /// The agenda elects a player: `[player]`.
    pub const ELECT: u16 = 41;
    /// A law comes into play (keyed by the agenda).
    pub const LAW: u16 = 42;
    /// A player returns a command token to reinforcements for an agenda (`[player]`, keyed by the agenda).
    pub const RETURN: u16 = 43;
    /// A player uses a component action (keyed by it): `[player, tokens]` (T21).
    pub const COMPONENT: u16 = 44;
    /// Neuroglaive: the active player returns fleet-pool tokens for activating a system holding the
    /// player's ships: `[active player, player, tokens]` (T21).
    pub const FLEET_LOSS: u16 = 45;
    /// A player plays the action card (keyed by it): `[player]` (T22).
    pub const PLAY: u16 = 46;
    /// A rider predicts For (keyed by the card): `[player]`.
    pub const PREDICT_FOR: u16 = 47;
    /// A rider predicts Against (keyed by the card): `[player]`.
    pub const PREDICT_AGAINST: u16 = 48;
    /// A rider predicts the election of a player (keyed by the card): `[player, elected]`.
    pub const PREDICT_ELECT: u16 = 49;
    /// A rider's prediction was right: its effect resolves (keyed by the card): `[player]`.
    pub const PREDICTION_RIGHT: u16 = 50;
    /// A rider's prediction was wrong (keyed by the card): `[player]`.
    pub const PREDICTION_WRONG: u16 = 51;
    /// Insubordination: `[player, target]` (keyed by the card).
    pub const TACTIC_TOKEN_REMOVED: u16 = 52;
    /// An Elect Strategy Card agenda elects the card (keyed by it; T24).
    pub const ELECT_CARD: u16 = 53;
    /// Minister of War: a player discards it, returns the token in the system and takes one more action
    /// (`[player]`, keyed by the system; T24).
    pub const ADDITIONAL_ACTION: u16 = 54;
    /// A player voted Against the agenda (`[player]`, keyed by the agenda; T24).
    pub const VOTED_AGAINST: u16 = 55;
    /// A played action card is cancelled (keyed by it): `[player, canceller]` (T26).
    pub const CANCELLED: u16 = 56;
    /// Quantum Datahub Node: a player gives a strategy card to another and takes one of theirs (keyed by the
    /// card given): `[player, other, card taken]` (T27).
    pub const SWAP: u16 = 57;
    /// Genetic Recombination names a player, who votes as asked or returns a fleet token: `[owner,
    /// player]` (keyed by the agenda; T27).
    pub const RECOMBINE: u16 = 58;
    /// The named player votes as asked: `[player]` (T27).
    pub const COMPLY: u16 = 59;
    /// Research Grant Reallocation: the technology gained has this many prerequisites (`[player, count]`,
    /// keyed by the agenda; T29).
    pub const PREREQUISITES: u16 = 60;
}

/// Causes that are no player's action ([`coffer_core::Cause::Effect`]), by code.
pub mod effect {
    /// T8: the status phase returns every command token on the board to reinforcements.
    pub const STATUS_RETURN: u16 = 0;
}

/// Token faces (K4.5): tactic and strategy tokens show the faction, fleet tokens the ship (T1).
pub mod face {
    /// Faction symbol up.
    pub const FACTION: u8 = 1;
    /// Ship silhouette up.
    pub const SHIP: u8 = 2;
}

/// One of the three pools of a command sheet.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pool {
    /// Spent for tactical actions.
    Tactic,
    /// Limits ships per system; never spent for actions.
    Fleet,
    /// Spent for secondaries.
    Strategy,
}

impl Pool {
    /// The three pools, in sheet order.
    pub const ALL: [Pool; 3] = [Pool::Tactic, Pool::Fleet, Pool::Strategy];

    /// Position in [`Pool::ALL`].
    #[inline]
    pub fn index(self) -> usize {
        self as usize
    }
}

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

impl SharedContent for Rules {
    /// The player count and the configuration (with its inline content, if any).
    type Key = (u16, Config);

    fn build((players, config): &(u16, Config)) -> Result<Rules, SetupError> {
        let content =
            Content::of(config.content.as_ref()).map_err(|e| SetupError::Content(e.to_string()))?;
        Rules::resolve(*players, config, &content).map(|(rules, _)| rules)
    }

    fn table() -> &'static ContentTable<Rules> {
        static TABLE: ContentTable<Rules> = ContentTable::new();
        &TABLE
    }
}

impl SharedContent for Handles {
    /// The player count and the configuration, as for [`Rules`].
    type Key = (u16, Config);

    /// The handles setup hands out (they depend on neither the seed nor play).
    fn build((players, config): &(u16, Config)) -> Result<Handles, SetupError> {
        let state = State::from_prepared(&Prepared::new(*players, config)?, 0)?;
        Ok(Handles::clone(&state.h))
    }

    fn table() -> &'static ContentTable<Handles> {
        static TABLE: ContentTable<Handles> = ContentTable::new();
        &TABLE
    }
}

/// The phases of a round.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Players pick strategy cards.
    Strategy,
    /// Players take turns: tactical, strategic, pass.
    Action,
    /// Tokens come back, are gained and redistributed.
    Status,
    /// The game is over.
    Over,
    /// Two agendas are revealed and resolved (T20), once the configuration's round is reached.
    Agenda,
}

impl Phase {
    /// The phase's number in the vocabulary and the table's clock; `None` once the game is over.
    pub fn number(self) -> Option<u16> {
        match self {
            Phase::Strategy => Some(0),
            Phase::Action => Some(1),
            Phase::Status => Some(2),
            Phase::Agenda => Some(3),
            Phase::Over => None,
        }
    }
}

/// The decision the game waits for (besides a pending fleet-limit choice, which comes first).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Step {
    /// A strategy card pick.
    Pick,
    /// A turn of the action phase: tactical, strategic or pass.
    Turn,
    /// Production in the activated system, until `done`.
    Produce,
    /// Choosing the pool of each gained token (T2).
    Gain,
    /// Spending influence for tokens (T9).
    Buy,
    /// Choosing Diplomacy's system.
    Target,
    /// Another player chooses the pool a placed token comes from (T3).
    Fallback,
    /// Choosing a board token to remove (Warfare).
    Remove,
    /// Choosing the system for a placed token (Construction secondary).
    Place,
    /// Redistributing the command sheet.
    Redistribute,
    /// Another player resolves or declines a secondary (T5).
    Secondary,
    /// Choosing the other players who resolve the secondary without spending a token (Trade, T11).
    FreeSecondaries,
    /// Moving ships into the activated system (T14), until movement ends.
    Move,
    /// A space combat's player announces a retreat or not (T15), the defender first.
    Announce,
    /// A space combat's player enters the hits of their combat roll (T15), the attacker first.
    Roll,
    /// A space combat's player destroys their own ships, one per hit against them (T15).
    Assign,
    /// The player who announced a retreat chooses the system their ships retreat to (T16).
    Retreat,
    /// The loser of a combat against Edict, with empty reinforcements, chooses the pool of the token
    /// placed in the winner's fleet pool (T17, T3).
    Capture,
    /// A player with Edict over a law's fleet-pool maximum chooses the token that leaves it (T17).
    Release,
    /// Nothing: the game is over.
    Over,
    /// The speaker reveals an agenda (T20).
    Reveal,
    /// A player with Quash decides whether to discard the revealed agenda (T20).
    Quash,
    /// The speaker enters the agenda's outcome, which the table voted (T20).
    Outcome,
    /// A player chooses the pools of the command tokens an agenda returns to reinforcements (T20).
    ReturnTokens,
    /// At the start of the strategy phase, a player holding a card for it plays one or not (T22).
    StrategyWindow,
    /// At the start of a combat round, a player in the combat holding a card for it plays one or not
    /// (T22).
    CombatWindow,
    /// After an agenda is revealed, a player holding a rider plays one with a prediction or not (T22).
    Riders,
    /// After a system holding their ships is activated, a player with Nullification Field uses it or not
    /// (T23).
    Nullify,
    /// After ships moved into a system holding theirs, a player with Foresight uses it or not (T23).
    Foresight,
    /// At the end of their turn, a player with Predictive Intelligence redistributes with it or not (T23).
    EndOfTurn,
    /// Another player played an action card: a player with Instinct Training cancels it or not (T26).
    Cancel,
    /// At the end of the strategy phase, a player with Quantum Datahub Node swaps strategy cards or not
    /// (T27).
    EndOfStrategy,
    /// Before votes are cast, a player with Genetic Recombination names a player or not (T27).
    Recombine,
    /// The player named by Genetic Recombination votes as asked or returns a fleet-pool token (T27).
    Comply,
    /// A player with none in reinforcements chooses the pool of a token an agenda places in a wormhole
    /// system (T29, T3).
    WormholeFallback,
    /// The speaker enters how many prerequisites the technology the elected player gains has (T29).
    Prerequisites,
}

impl Step {
    /// Whether the step is a round of a space combat (T15, T16): its two players decide in turn.
    pub fn in_space_combat(self) -> bool {
        matches!(
            self,
            Step::CombatWindow | Step::Announce | Step::Roll | Step::Assign | Step::Retreat
        )
    }

    /// Whether the step belongs to a tactical action (a turn's start, movement, space combat,
    /// production), not to a strategy card's resolution.
    pub fn in_tactical_action(self) -> bool {
        self.in_space_combat()
            || matches!(
                self,
                Step::Turn
                    | Step::Produce
                    | Step::Move
                    | Step::Capture
                    | Step::Release
                    | Step::Nullify
                    | Step::Foresight
                    | Step::EndOfTurn
            )
    }

    /// The step's number in the vocabulary and the table's clock; `None` once the game is over.
    pub fn number(self) -> Option<u16> {
        match self {
            Step::Over => None,
            step => Some(step as u16),
        }
    }
}

/// Where the round stands. `Copy`, so an action that fails half-way restores it whole.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Flow {
    /// The phase.
    pub phase: Phase,
    /// The decision awaited.
    pub step: Step,
    /// The speaker (picks first, status phase order).
    pub speaker: u8,
    /// Picks made this strategy phase.
    pub picks: u8,
    /// Holder of each strategy card this round ([`NOBODY`] if none).
    pub holder: [u8; MAX_CARDS],
    /// Action-phase order: players by their lowest initiative.
    pub order: [u8; MAX_PLAYERS],
    /// Bit per player who has passed.
    pub passed: u8,
    /// Whose turn it is in the action phase.
    pub turn: u8,
    /// The strategy card being resolved.
    pub card: u8,
    /// The player resolving effects (the active player, a secondary's player, the status player).
    pub resolver: u8,
    /// Resolving the secondary (not the primary).
    pub secondary: bool,
    /// Next effect of the card's list.
    pub effect: u8,
    /// Secondary cursor: offset from the active player.
    pub cursor: u8,
    /// Bit per player who resolves this card's secondary without spending a token (Trade, T11).
    #[serde(default)]
    pub free: u8,
    /// Diplomacy cursor: offset from the resolver.
    pub others: u8,
    /// Diplomacy's system.
    pub target: u16,
    /// Tokens still to gain.
    pub left: u8,
    /// Influence per bought token.
    pub rate: u32,
    /// The activated system.
    pub system: u16,
    /// Ships produced in this tactical action.
    pub built: u8,
    /// Status-phase position (from the speaker).
    pub status: u8,
    /// Tokens a player could not gain for want of reinforcements (T3), reported here.
    pub forfeited: [u16; MAX_PLAYERS],
    /// The other player in the space combat in the activated system (T15).
    #[serde(default)]
    pub defender: u8,
    /// The player who announced a retreat this combat round ([`NOBODY`] if none).
    #[serde(default = "nobody")]
    pub retreat: u8,
    /// Hits still to be assigned in this combat round: against the attacker, against the defender.
    #[serde(default)]
    pub hits: [u8; 2],
    /// Bit per eliminated player (T18).
    #[serde(default)]
    pub out: u8,
    /// Bit per agenda revealed this game, discarded or in play (T20).
    #[serde(default)]
    pub revealed: u16,
    /// Bit per law (content index) an agenda put in play (T20).
    #[serde(default)]
    pub enacted: u16,
    /// The agenda being resolved ([`NOBODY`] for one that does nothing to command tokens).
    #[serde(default = "nobody")]
    pub agenda: u8,
    /// Agendas resolved in this agenda phase (two are, LRR 8).
    #[serde(default)]
    pub resolved: u8,
    /// The outcome being resolved: 0 For, 1 Against, 2 an election.
    #[serde(default)]
    pub outcome: u8,
    /// The player the agenda elected.
    #[serde(default)]
    pub elected: u8,
    /// A window's cursor (T22): the offset from the speaker at the start of the strategy phase or after
    /// an agenda is revealed, 0 (attacker) or 1 (defender) at the start of a combat round.
    #[serde(default)]
    pub window: u8,
    /// The riders played on the agenda being resolved, by slot in [`Rules::hands`] ([`NOBODY`]: none).
    #[serde(default = "no_riders")]
    pub riders: [u8; MAX_RIDERS],
    /// Each rider's prediction: 0 For, 1 Against, 2 + p the election of player p.
    #[serde(default)]
    pub predictions: [u8; MAX_RIDERS],
    /// Next effect of the agenda outcome being resolved (T20).
    #[serde(default)]
    pub op: u8,
    /// Bit per player who voted Against the agenda being resolved, as the table entered it (T24).
    #[serde(default)]
    pub voters: u8,
    /// The holder of Minister of War's card ([`NOBODY`]: not in play or discarded; T24).
    #[serde(default = "nobody")]
    pub minister: u8,
    /// Resolving the secondaries of a Galactic Crisis Pact: each player may, for free (T24).
    #[serde(default)]
    pub pact: bool,
    /// An action card played and waiting on whether another player cancels it (T26).
    #[serde(default)]
    pub pending: Option<PendingCard>,
}

/// An action card played and waiting on cancelling (T26): [`crate::Action::PlayCard`]'s fields, as a plain
/// struct that every snapshot format writes.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct PendingCard {
    /// Slot of the card in the game's list of dealt cards.
    pub card: u8,
    /// The player the card targets.
    pub player: Option<u16>,
    /// The system the card targets.
    pub system: Option<u16>,
    /// The pool a placed token comes from when reinforcements are empty.
    pub fallback: Option<Pool>,
    /// A rider's prediction of For or Against.
    pub vote: Option<Vote>,
    /// A rider's prediction of the player elected.
    pub elect: Option<u16>,
}

fn no_riders() -> [u8; MAX_RIDERS] {
    [NOBODY; MAX_RIDERS]
}

fn nobody() -> u8 {
    NOBODY
}

/// Handles into the ledger, and the ledger's layout they index. Setup creates every resource in the same
/// order for every game of one player count and configuration, so games share them (a snapshot carries
/// only that key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handles {
    /// The ledger's zones, supply totals and reserves, which setup fixes: every game of the setup shares
    /// them, and its snapshots leave them out ([`Ledger::laid_out`]).
    pub layout: Layout,
    /// Command-token reinforcements (one zone, counts per player).
    pub reinforcements: ZoneId,
    /// The tactic, fleet and strategy pools.
    pub pools: [ZoneId; 3],
    /// One one-per-owner zone per system.
    pub systems: Vec<ZoneId>,
    /// Ship reinforcements per class.
    pub ship_reserve: Vec<ZoneId>,
    /// Ships per system and class: `system * classes + class`.
    pub ships: Vec<ZoneId>,
    /// Influence per player.
    pub influence: Vec<AmountId>,
    /// Structures per player.
    pub structures: Vec<AmountId>,
    /// Strategy cards.
    pub cards: Vec<PermanentId>,
    /// Per player, the zone of other players' tokens in their fleet pool, for a player with Edict (T17).
    pub captured: Vec<Option<ZoneId>>,
    /// The game box, per kernel supply: where an eliminated player's components go (T18, LRR 33.2).
    pub boxed: Vec<ZoneId>,
    /// The agenda cards, exhausted once revealed (T20); empty without an agenda phase.
    pub agendas: Vec<PermanentId>,
    /// The component actions of [`Rules::abilities`], exhausted when used if their card exhausts (T21).
    pub abilities: Vec<PermanentId>,
    /// The action cards of [`Rules::hands`], exhausted once played (T22).
    pub hand: Vec<PermanentId>,
    /// Per player, their relic fragments (T28); empty when the game has none.
    pub fragments: Vec<AmountId>,
}

/// The whole state of one game. A snapshot carries the ledger without its layout, which the handles'
/// setup gives back ([`Unlaid::lay`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "StateData")]
pub struct State {
    /// The kernel ledger: every token, ship, amount and card.
    pub ledger: Ledger,
    /// The rules of this game, shared by every game of the same player count and configuration (a
    /// snapshot carries only those).
    pub rules: Shared<Rules>,
    /// Handles into the ledger.
    pub h: Shared<Handles>,
    /// Where the round stands.
    pub flow: Flow,
}

/// A [`State`] as it is written: the ledger on its setup's layout.
#[derive(Serialize)]
struct StateOut<'a> {
    ledger: LaidOut<'a>,
    rules: &'a Shared<Rules>,
    h: &'a Shared<Handles>,
    flow: &'a Flow,
}

impl Serialize for State {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StateOut {
            ledger: self.ledger.laid_out(&self.h.layout),
            rules: &self.rules,
            h: &self.h,
            flow: &self.flow,
        }
        .serialize(s)
    }
}

/// A [`State`] as it is read: the ledger is laid on the layout of the setup its handles name, and checked.
#[derive(Deserialize)]
struct StateData {
    ledger: Unlaid,
    rules: Shared<Rules>,
    h: Shared<Handles>,
    flow: Flow,
}

impl TryFrom<StateData> for State {
    type Error = Violation;
    fn try_from(d: StateData) -> Result<State, Violation> {
        Ok(State {
            ledger: d.ledger.lay(&d.h.layout)?,
            rules: d.rules,
            h: d.h,
            flow: d.flow,
        })
    }
}

/// The player a compact [`Flow`] field holds as a `u8`.
#[inline]
pub(crate) fn owner(p: u8) -> Owner {
    Owner(u16::from(p))
}

/// The compact `u8` a [`Flow`] field holds for player `p` (players are below [`MAX_PLAYERS`]).
#[inline]
pub(crate) fn slot(p: Owner) -> u8 {
    p.0 as u8
}

fn cfg(message: impl Into<String>) -> SetupError {
    SetupError::Config(message.into())
}

/// Ids for an error message: "letnev, sol, hacan".
fn ids<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.collect::<Vec<_>>().join(", ")
}

impl Rules {
    /// Resolves the rules of a game from its configuration and content.
    ///
    /// # Errors
    /// [`SetupError::Config`] or [`SetupError::Content`] naming the offending entry.
    pub fn resolve(
        players: u16,
        config: &Config,
        content: &Content,
    ) -> Result<(Rules, Vec<SystemConfig>), SetupError> {
        let n = usize::from(players);
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
            return Err(SetupError::Players {
                got: players,
                min: MIN_PLAYERS as u16,
                max: MAX_PLAYERS as u16,
            });
        }
        if config.rounds == 0 || config.rounds > MAX_ROUNDS {
            return Err(cfg(format!(
                "rounds: {} is out of range: 1 to {MAX_ROUNDS}",
                config.rounds
            )));
        }
        if config.production > MAX_PRODUCTION {
            return Err(cfg(format!(
                "production: {} is out of range: 0 to {MAX_PRODUCTION}",
                config.production
            )));
        }
        let cards_per_player = match config.cards_per_player {
            0 if n <= 4 => 2,
            0 => 1,
            c => c,
        };
        if usize::from(cards_per_player) * n > content.strategy_cards.len() {
            let cards = content.strategy_cards.len();
            return Err(cfg(format!(
                "cards_per_player: {cards_per_player} cards for each of {n} players needs {}, but there are {cards} strategy cards: 0 (the default) or 1 to {} with {n} players",
                usize::from(cards_per_player) * n,
                cards / n
            )));
        }
        let factions: Vec<String> = if config.factions.is_empty() {
            if content.factions.len() < n {
                return Err(cfg(format!(
                    "factions: {n} players need {n} factions, but the content has only {}",
                    content.factions.len()
                )));
            }
            content.factions[..n].iter().map(|f| f.id.clone()).collect()
        } else {
            if config.factions.len() != n {
                return Err(cfg(format!(
                    "factions: {} given, but {n} players need {n} (or none, for the default)",
                    config.factions.len()
                )));
            }
            for (i, f) in config.factions.iter().enumerate() {
                if content.faction(f).is_none() {
                    return Err(cfg(format!(
                        "factions[{i}]: unknown faction '{f}'; known: {}",
                        ids(content.factions.iter().map(|f| f.id.as_str()))
                    )));
                }
                if config.factions[..i].contains(f) {
                    return Err(cfg(format!("factions[{i}]: '{f}' is taken twice")));
                }
            }
            config.factions.clone()
        };
        let mut fleet_pool_max: Option<u8> = None;
        for (i, l) in config.laws.iter().enumerate() {
            let Some(law) = content.law(l) else {
                return Err(cfg(format!(
                    "laws[{i}]: unknown law '{l}'; known: {}",
                    ids(content.laws.iter().map(|l| l.id.as_str()))
                )));
            };
            if let Some(m) = law.fleet_pool_max {
                if m < 3 {
                    return Err(cfg(format!(
                        "laws[{i}]: '{l}' caps the fleet pool at {m}, below the starting 3"
                    )));
                }
                fleet_pool_max = Some(fleet_pool_max.map_or(m, |x| x.min(m)));
            }
        }
        if !config.technologies.is_empty() && config.technologies.len() != n {
            return Err(cfg(format!(
                "technologies: {} lists given, but {n} players need {n} (or none)",
                config.technologies.len()
            )));
        }
        let mut tech_tokens = vec![0u8; n];
        let mut unlocks: Vec<Vec<&str>> = vec![Vec::new(); n];
        for (p, owned) in config.technologies.iter().enumerate() {
            for (j, t) in owned.iter().enumerate() {
                let Some(tech) = content.technology(t) else {
                    return Err(cfg(format!(
                        "technologies[{p}][{j}]: unknown technology '{t}'; known: {}",
                        ids(content.technologies.iter().map(|t| t.id.as_str()))
                    )));
                };
                if owned[..j].contains(t) {
                    return Err(cfg(format!("technologies[{p}][{j}]: '{t}' is owned twice")));
                }
                if let Some(f) = tech.faction.as_deref().filter(|&f| f != factions[p]) {
                    return Err(cfg(format!(
                        "technologies[{p}][{j}]: '{t}' is a faction technology of '{f}', but player {p} plays '{}'",
                        factions[p]
                    )));
                }
                tech_tokens[p] = tech_tokens[p].saturating_add(tech.status_phase_tokens);
                unlocks[p].extend(tech.unlocks.iter().map(String::as_str));
            }
        }
        for (p, f) in factions.iter().enumerate() {
            if let Some(f) = content.faction(f) {
                unlocks[p].extend(f.unlocks.iter().map(String::as_str));
            }
        }
        if !config.influence_per_player.is_empty() && config.influence_per_player.len() != n {
            return Err(cfg(format!(
                "influence_per_player: {} values given, but {n} players need {n} (or none, to use `influence`)",
                config.influence_per_player.len()
            )));
        }
        if config.influence > MAX_INFLUENCE {
            return Err(cfg(format!(
                "influence: {} is out of range: 0 to {MAX_INFLUENCE}",
                config.influence
            )));
        }
        if let Some((i, v)) = config
            .influence_per_player
            .iter()
            .enumerate()
            .find(|&(_, &v)| v > MAX_INFLUENCE)
        {
            return Err(cfg(format!(
                "influence_per_player[{i}]: {v} is out of range: 0 to {MAX_INFLUENCE}"
            )));
        }
        let galaxy = if config.galaxy.is_empty() {
            default_galaxy(&factions, content)
        } else {
            config.galaxy.clone()
        };
        if galaxy.len() > MAX_SYSTEMS {
            return Err(cfg(format!(
                "galaxy: {} systems, but a galaxy holds 1 to {MAX_SYSTEMS}",
                galaxy.len()
            )));
        }
        for (i, s) in galaxy.iter().enumerate() {
            if s.id.trim().is_empty() {
                return Err(cfg(format!("galaxy[{i}].id: must not be empty")));
            }
            if galaxy[..i].iter().any(|o| o.id == s.id) {
                return Err(cfg(format!("galaxy[{i}].id: '{}' appears twice", s.id)));
            }
            for (j, sh) in s.ships.iter().enumerate() {
                if usize::from(sh.player) >= n {
                    return Err(cfg(format!(
                        "galaxy[{i}].ships[{j}].player: player {} is not in this game: players are 0 to {}",
                        sh.player,
                        n - 1
                    )));
                }
                if content.class(&sh.class).is_none() {
                    return Err(cfg(format!(
                        "galaxy[{i}].ships[{j}].class: unknown ship class '{}'; known: {}",
                        sh.class,
                        ids(content.ships.iter().map(|c| c.id.as_str()))
                    )));
                }
            }
        }
        // T19: a locked class is in the game only when a player has it unlocked or the galaxy holds pieces of
        // it; content lists locked classes last, so the classes in play are a prefix of the content's.
        let needed = |c: usize| {
            let id = content.ships[c].id.as_str();
            !content.ships[c].locked
                || unlocks.iter().any(|u| u.contains(&id))
                || galaxy
                    .iter()
                    .any(|s| s.ships.iter().any(|sh| sh.class == id && sh.count > 0))
        };
        let class_count = (0..content.ships.len())
            .rev()
            .find(|&c| needed(c))
            .map_or(0, |c| c + 1);
        let classes = content.ships[..class_count].to_vec();
        let producible = unlocks
            .iter()
            .map(|u| {
                classes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| !c.locked || u.contains(&c.id.as_str()))
                    .fold(0u8, |bits, (i, _)| bits | 1 << i)
            })
            .collect();
        // A player's ships move as their faction's own units do, or as a technology they own says (T19,
        // T25), else as their class.
        let tech_moves = |p: usize, id: &str| {
            config
                .technologies
                .get(p)
                .into_iter()
                .flatten()
                .filter_map(|t| content.technology(t))
                .filter_map(|t| t.moves.get(id).copied())
                .max()
        };
        let mut moves = Vec::with_capacity(n * classes.len());
        for (p, f) in factions.iter().enumerate() {
            let faction = content.faction(f);
            for c in &classes {
                let own = faction.and_then(|f| f.moves.get(&c.id).copied());
                let value = tech_moves(p, &c.id).max(own).or(c.movement);
                moves.push(value.unwrap_or(0));
            }
        }
        let excess_fighters = (0..n)
            .map(|p| {
                config
                    .technologies
                    .get(p)
                    .into_iter()
                    .flatten()
                    .filter_map(|t| content.technology(t))
                    .map(|t| t.excess_fighters)
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let class_of = |id: &str| classes.iter().position(|c| c.id == id).map(|c| c as u8);
        let mut star_forge = Vec::with_capacity(n);
        for f in &factions {
            let forge = content.faction(f).and_then(|f| f.star_forge.as_ref());
            star_forge.push(match forge {
                None => None,
                // A Star Forge whose classes are not in this game places nothing: it is not offered.
                Some(forge) => class_of(&forge.with).map(|with| Forge {
                    cost: forge.strategy_tokens,
                    with,
                    place: forge
                        .place
                        .iter()
                        .filter_map(|p| class_of(&p.class).map(|c| (c, p.count)))
                        .collect(),
                }),
            });
        }
        if config.agenda_phase_from > MAX_ROUNDS {
            return Err(cfg(format!(
                "agenda_phase_from: {} is out of range: 0 (no agenda phase) to {MAX_ROUNDS}",
                config.agenda_phase_from
            )));
        }
        if !config.homes.is_empty() && config.homes.len() != n {
            return Err(cfg(format!(
                "homes: {} given, but {n} players need {n} (or none, for the systems home-<faction>)",
                config.homes.len()
            )));
        }
        let mut homes = Vec::with_capacity(n);
        for (p, f) in factions.iter().enumerate() {
            let home = match config.homes.get(p) {
                Some(id) => match galaxy.iter().position(|s| &s.id == id) {
                    Some(i) => Some(i as u16),
                    None => {
                        return Err(cfg(format!("homes[{p}]: no system '{id}' in the galaxy")));
                    }
                },
                None => galaxy
                    .iter()
                    .position(|s| s.id == format!("home-{f}"))
                    .map(|i| i as u16),
            };
            if home.is_some() && homes.contains(&home) {
                return Err(cfg(format!(
                    "homes[{p}]: '{}' is another player's home system",
                    config.homes.get(p).map_or("", String::as_str)
                )));
            }
            homes.push(home);
        }
        let law_list: Vec<(String, Option<u8>)> = content
            .laws
            .iter()
            .map(|l| (l.name.clone(), l.fleet_pool_max))
            .collect();
        let law_index = |id: &str| {
            content
                .laws
                .iter()
                .position(|l| l.id == id)
                .map(|i| i as u8)
        };
        let mut agendas = Vec::new();
        if config.agenda_phase_from > 0 {
            for a in &content.agendas {
                let ops = |list: &[AgendaEffect]| -> Result<Vec<AgendaOp>, SetupError> {
                    list.iter()
                        .map(|e| {
                            Ok(match e {
                                AgendaEffect::Enact { law } => {
                                    let Some(i) = law_index(law) else {
                                        return Err(cfg(format!(
                                            "agenda_phase_from: the agenda '{}' enacts the unknown law '{law}'; known: {}",
                                            a.id,
                                            ids(content.laws.iter().map(|l| l.id.as_str()))
                                        )));
                                    };
                                    if let Some(m) = law_list[usize::from(i)].1.filter(|&m| m < 3) {
                                        return Err(cfg(format!(
                                            "agenda_phase_from: the agenda '{}' enacts '{law}', which caps the fleet pool at {m}, below the starting 3",
                                            a.id
                                        )));
                                    }
                                    AgendaOp::Enact(i)
                                }
                                AgendaEffect::EachGains { pool, tokens } => {
                                    AgendaOp::EachGains(*pool, *tokens)
                                }
                                AgendaEffect::EachReturns { tokens, pool } => {
                                    AgendaOp::EachReturns(*tokens, *pool)
                                }
                                AgendaEffect::EachPlacesHome => AgendaOp::EachPlacesHome,
                                AgendaEffect::AgainstVotersReturn { tokens } => {
                                    AgendaOp::AgainstVotersReturn(*tokens)
                                }
                                AgendaEffect::AdditionalAction => AgendaOp::AdditionalAction,
                                AgendaEffect::SecondaryForAll => AgendaOp::SecondaryForAll,
                                AgendaEffect::EachPlacesAtWormholes => AgendaOp::EachPlacesAtWormholes,
                                AgendaEffect::ReturnPerPrerequisite => AgendaOp::ReturnPerPrerequisite,
                                AgendaEffect::Standardize {
                                    tactic,
                                    fleet,
                                    strategy,
                                } => AgendaOp::Standardize([*tactic, *fleet, *strategy]),
                            })
                        })
                        .collect()
                };
                agendas.push(AgendaRule {
                    name: a.name.clone(),
                    elect_player: a.elect_player,
                    elect_card: a.elect_strategy_card,
                    voters: a
                        .against
                        .iter()
                        .any(|e| matches!(e, AgendaEffect::AgainstVotersReturn { .. })),
                    outcomes: [ops(&a.for_)?, ops(&a.against)?, ops(&a.elected)?],
                });
            }
        }
        let quash = factions
            .iter()
            .map(|f| content.faction(f).map_or(0, |f| f.quash))
            .collect();
        // T21: what each player's faction and technologies do beyond the above.
        let owned = |p: usize| {
            config
                .technologies
                .get(p)
                .into_iter()
                .flatten()
                .filter_map(|t| content.technology(t))
        };
        let fleet_loss = (0..n)
            .map(|p| owned(p).map(|t| t.activation_fleet_loss).max().unwrap_or(0))
            .collect();
        let free_secondaries = factions
            .iter()
            .map(|f| {
                let free = content.faction(f).map(|f| f.free_secondaries.as_slice());
                content
                    .strategy_cards
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| free.is_some_and(|free| free.contains(&c.id)))
                    .fold(0u16, |bits, (i, _)| bits | 1 << i)
            })
            .collect();
        if !config.action_cards.is_empty() && config.action_cards.len() != n {
            return Err(cfg(format!(
                "action_cards: {} hands given, but {n} players need {n} (or none)",
                config.action_cards.len()
            )));
        }
        let mut hands = Vec::new();
        for (p, hand) in config.action_cards.iter().enumerate() {
            for (j, id) in hand.iter().enumerate() {
                let Some(card) = content.action_card(id) else {
                    return Err(cfg(format!(
                        "action_cards[{p}][{j}]: unknown action card '{id}'; known: {}",
                        ids(content.action_cards.iter().map(|c| c.id.as_str()))
                    )));
                };
                let dealt = config.action_cards[..p]
                    .iter()
                    .flatten()
                    .chain(&hand[..=j])
                    .filter(|&c| c == id)
                    .count();
                if dealt > usize::from(card.copies) {
                    return Err(cfg(format!(
                        "action_cards[{p}][{j}]: '{id}' is dealt {dealt} times, but the deck holds {}",
                        card.copies
                    )));
                }
                hands.push(HandCard {
                    player: p as u8,
                    name: card.name.clone(),
                    window: card.window,
                    effect: card.effect,
                });
            }
        }
        let mut wormholes = Vec::with_capacity(config.wormholes.len());
        for (i, id) in config.wormholes.iter().enumerate() {
            let Some(w) = galaxy.iter().position(|s| &s.id == id) else {
                return Err(cfg(format!(
                    "wormholes[{i}]: no system '{id}' in the galaxy"
                )));
            };
            if wormholes.contains(&(w as u16)) {
                return Err(cfg(format!("wormholes[{i}]: '{id}' appears twice")));
            }
            wormholes.push(w as u16);
        }
        wormholes.sort_unstable();
        if !config.relic_fragments.is_empty() && config.relic_fragments.len() != n {
            return Err(cfg(format!(
                "relic_fragments: {} counts given, but {n} players need {n} (or none)",
                config.relic_fragments.len()
            )));
        }
        if let Some((i, v)) = config
            .relic_fragments
            .iter()
            .enumerate()
            .find(|&(_, &v)| v > 16)
        {
            return Err(cfg(format!(
                "relic_fragments[{i}]: {v} is out of range: 0 to 16"
            )));
        }
        if hands.len() > MAX_HAND_CARDS {
            return Err(cfg(format!(
                "action_cards: {} cards dealt, but a game deals 0 to {MAX_HAND_CARDS}",
                hands.len()
            )));
        }
        let riders = hands
            .iter()
            .filter(|c| c.window == Window::AfterAgendaRevealed)
            .count();
        if riders > MAX_RIDERS {
            return Err(cfg(format!(
                "action_cards: {riders} riders dealt, but a game deals 0 to {MAX_RIDERS}"
            )));
        }
        let mut abilities = Vec::new();
        for (p, f) in factions.iter().enumerate() {
            let of_faction = content
                .faction(f)
                .into_iter()
                .flat_map(|f| f.abilities.iter());
            for a in of_faction.chain(owned(p).filter_map(|t| t.ability.as_ref())) {
                abilities.push(Ability {
                    kind: a.kind,
                    name: a.name.clone(),
                    cost: a.strategy_tokens,
                    exhausts: a.exhausts,
                    player: p as u8,
                });
            }
        }
        let mut adjacent = vec![Vec::<u16>::new(); galaxy.len()];
        for (i, s) in galaxy.iter().enumerate() {
            for (j, a) in s.adjacent.iter().enumerate() {
                let Some(k) = galaxy.iter().position(|o| &o.id == a) else {
                    return Err(cfg(format!(
                        "galaxy[{i}].adjacent[{j}]: no system '{a}' in the galaxy"
                    )));
                };
                if k == i {
                    return Err(cfg(format!(
                        "galaxy[{i}].adjacent[{j}]: a system is not adjacent to itself (LRR 6.2a)"
                    )));
                }
                adjacent[i].push(k as u16);
                adjacent[k].push(i as u16);
            }
            let mut owners = s.ships.iter().filter(|sh| sh.count > 0).map(|sh| sh.player);
            if let Some(first) = owners.next() {
                if let Some(other) = owners.find(|&o| o != first) {
                    return Err(cfg(format!(
                        "galaxy[{i}].ships: players {first} and {other} both have ships in '{}'; a system holds one player's ships outside a space combat",
                        s.id
                    )));
                }
            }
        }
        for a in &mut adjacent {
            a.sort_unstable();
            a.dedup();
        }
        let rules = Rules {
            rounds: config.rounds,
            production: config.production,
            cards_per_player,
            fleet_classes: (0..classes.len())
                .filter(|&c| classes[c].fleet)
                .map(|c| c as u8)
                .collect(),
            cards: content.strategy_cards.iter().map(Card::from).collect(),
            systems: galaxy
                .iter()
                .map(|s| SystemInfo {
                    id: s.id.clone(),
                    no_diplomacy: s.no_diplomacy,
                })
                .collect(),
            fleet_bonus: factions
                .iter()
                .map(|f| content.faction(f).map_or(0, |f| f.fleet_limit_bonus))
                .collect(),
            status_tokens: factions
                .iter()
                .zip(&tech_tokens)
                .map(|(f, &t)| {
                    (2 + content.faction(f).map_or(0, |f| f.status_phase_tokens)).saturating_add(t)
                })
                .collect(),
            research_tokens: factions
                .iter()
                .map(|f| content.faction(f).map_or(0, |f| f.research_tokens))
                .collect(),
            faction_names: factions
                .iter()
                .map(|f| {
                    content
                        .faction(f)
                        .map_or_else(|| f.clone(), |f| f.name.clone())
                })
                .collect(),
            system_labels: galaxy.iter().map(|s| format!("system {}", s.id)).collect(),
            capture: factions
                .iter()
                .map(|f| content.faction(f).is_some_and(|f| f.combat_capture))
                .collect(),
            factions,
            fleet_pool_max,
            laws: config.laws.clone(),
            adjacent,
            transported: classes
                .iter()
                .position(|c| c.movement.is_none())
                .map(|c| c as u8),
            elimination: config.elimination,
            producible,
            moves,
            star_forge,
            classes,
            agenda_from: config.agenda_phase_from,
            agendas,
            law_list,
            homes,
            quash,
            fleet_loss,
            free_secondaries,
            abilities,
            hands,
            excess_fighters,
            fragments: config.relic_fragments.clone(),
            wormholes,
            wormhole_law: content
                .laws
                .iter()
                .position(|l| l.wormholes_adjacent)
                .map(|i| i as u8),
            starting_laws: config
                .laws
                .iter()
                .filter_map(|l| content.laws.iter().position(|k| &k.id == l))
                .fold(0, |bits, i| bits | 1 << i),
        };
        Ok((rules, galaxy))
    }

    /// Number of systems.
    #[inline]
    pub fn system_count(&self) -> usize {
        self.systems.len()
    }

    /// Number of ship classes.
    #[inline]
    pub fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// The effects of the card being resolved.
    #[inline]
    pub fn effects(&self, card: u8, secondary: bool) -> &[Effect] {
        let c = &self.cards[usize::from(card)];
        if secondary { &c.secondary } else { &c.primary }
    }
}

/// The default galaxy: Mecatol Rex (`18`, not a Diplomacy target), each player's home system with their
/// faction's starting fleet, and one empty system per player (`19`, `20`, ...). They lie in a ring around
/// Mecatol Rex, home and empty systems taking turns: each empty system touches Mecatol Rex, the home
/// system before it and the one after it.
pub fn default_galaxy(factions: &[String], content: &Content) -> Vec<SystemConfig> {
    let mut galaxy = vec![SystemConfig {
        id: "18".into(),
        ships: Vec::new(),
        no_diplomacy: true,
        adjacent: Vec::new(),
    }];
    for (p, f) in factions.iter().enumerate() {
        let ships = content
            .faction(f)
            .map(|fa| {
                fa.starting_fleet
                    .iter()
                    .map(|(class, &count)| ShipsConfig {
                        player: p as u16,
                        class: class.clone(),
                        count,
                    })
                    .collect()
            })
            .unwrap_or_default();
        galaxy.push(SystemConfig {
            id: format!("home-{f}"),
            ships,
            no_diplomacy: false,
            adjacent: Vec::new(),
        });
    }
    let n = factions.len();
    for i in 0..n {
        let homes = [&factions[i], &factions[(i + 1) % n]];
        galaxy.push(SystemConfig {
            id: (19 + i).to_string(),
            ships: Vec::new(),
            no_diplomacy: false,
            adjacent: std::iter::once("18".to_string())
                .chain(homes.map(|f| format!("home-{f}")))
                .collect(),
        });
    }
    galaxy
}

/// Ships of one class a player has in a system at the start, by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StartShips {
    /// System index.
    pub system: usize,
    /// Player.
    pub player: Owner,
    /// Ship-class index.
    pub class: usize,
    /// How many.
    pub count: u32,
}

/// A game's setup resolved and validated from configuration and content once, from which any number of
/// games start without parsing or string work (the ruleset keeps one per player count for the default
/// configuration).
#[derive(Clone, Debug)]
pub struct Prepared {
    /// The rules every game of this setup shares.
    pub rules: Shared<Rules>,
    /// Starting ships.
    pub ships: Vec<StartShips>,
    /// Influence per player per round.
    pub influence: Vec<u32>,
}

impl Prepared {
    /// Resolves and validates a setup.
    ///
    /// # Errors
    /// [`SetupError`] for a bad player count, configuration or content.
    pub fn new(players: u16, config: &Config) -> Result<Prepared, SetupError> {
        let content =
            Content::of(config.content.as_ref()).map_err(|e| SetupError::Content(e.to_string()))?;
        let (rules, galaxy) = Rules::resolve(players, config, &content)?;
        let n = usize::from(players);
        let mut ships = Vec::new();
        let mut placed = vec![0u32; n * rules.class_count()];
        for (si, sys) in galaxy.iter().enumerate() {
            for (j, sh) in sys.ships.iter().enumerate() {
                let c = content.class(&sh.class).unwrap_or(0);
                let p = usize::from(sh.player);
                let total = &mut placed[p * rules.class_count() + c];
                *total = total.saturating_add(sh.count);
                if *total > rules.classes[c].reinforcements {
                    return Err(cfg(format!(
                        "galaxy[{si}].ships[{j}].count: player {p} would have {} {} pieces in the galaxy, but only {} exist",
                        *total, sh.class, rules.classes[c].reinforcements
                    )));
                }
                if sh.count > 0 {
                    ships.push(StartShips {
                        system: si,
                        player: Owner(sh.player),
                        class: c,
                        count: sh.count,
                    });
                }
            }
        }
        let influence = (0..n)
            .map(|p| {
                if config.influence_per_player.is_empty() {
                    config.influence
                } else {
                    config.influence_per_player[p]
                }
            })
            .collect();
        Ok(Prepared {
            rules: Shared::adopt((players, config.clone()), rules),
            ships,
            influence,
        })
    }
}

impl State {
    /// A new game at the start of round 1's strategy phase (T1 layout).
    ///
    /// # Errors
    /// [`SetupError`] for a bad player count, configuration or content.
    pub fn new(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        State::from_prepared(&Prepared::new(players, config)?, seed)
    }

    /// A new game from a prepared setup.
    ///
    /// # Errors
    /// [`SetupError::Refused`] only if the kernel refuses a setup step (a defect).
    pub fn from_prepared(prepared: &Prepared, seed: u64) -> Result<State, SetupError> {
        let rules = &*prepared.rules;
        let n = rules.factions.len();
        let players = n as u16;
        let mut l = Ledger::new(players, seed);
        let g = Owner::GAME;
        let reinforcements = l.add_zone(Zone::new(Key::new(g, kind::REINFORCEMENTS, 0)))?;
        let pools = [
            l.add_zone(Zone::new(Key::new(g, kind::TACTIC, 0)).face(face::FACTION))?,
            l.add_zone(Zone::new(Key::new(g, kind::FLEET, 0)).face(face::SHIP))?,
            l.add_zone(Zone::new(Key::new(g, kind::STRATEGY, 0)).face(face::FACTION))?,
        ];
        let s_count = rules.system_count();
        let c_count = rules.class_count();
        let mut systems = Vec::with_capacity(s_count);
        for s in 0..s_count {
            systems.push(
                l.add_zone(
                    Zone::new(Key::new(g, kind::SYSTEM, s as u32))
                        .one_per_owner()
                        .face(face::FACTION),
                )?,
            );
        }
        let mut ship_reserve = Vec::with_capacity(c_count);
        for c in 0..c_count {
            ship_reserve.push(l.add_zone(
                Zone::new(Key::new(g, kind::SHIP_RESERVE, c as u32)).supply(ship_supply(c)),
            )?);
        }
        let mut ships = Vec::with_capacity(s_count * c_count);
        for i in 0..s_count * c_count {
            ships.push(l.add_zone(
                Zone::new(Key::new(g, kind::SHIPS, i as u32)).supply(ship_supply(i % c_count)),
            )?);
        }
        // Each player has one kernel supply of command tokens (supply 0) and one per ship class (K4): each
        // has its own reinforcements and is conserved on its own by the kernel. A class's pieces are stocked
        // in the galaxy (`stock_on`) and the rest in that class's reinforcements (`stock`), in either order.
        for p in 0..n {
            let owner = Owner(p as u16);
            let mut placed = [0u32; crate::content::MAX_CLASSES];
            for sh in prepared.ships.iter().filter(|sh| sh.player.index() == p) {
                placed[sh.class] += sh.count;
                l.stock_on(
                    owner,
                    ships[sh.system * c_count + sh.class],
                    sh.count,
                    Cause::Setup,
                )?;
            }
            for c in 0..c_count {
                let rest = rules.classes[c].reinforcements - placed[c];
                if rest > 0 || placed[c] > 0 {
                    l.stock(owner, ship_reserve[c], rest, Cause::Setup)?;
                }
            }
            // T1: 16 tokens, 8 in reinforcements, 3 tactic, 3 fleet, 2 strategy.
            l.stock(owner, reinforcements, COMMAND_TOKENS, Cause::Setup)?;
            l.move_tokens(owner, reinforcements, pools[0], 3, Cause::Setup)?;
            l.move_tokens(owner, reinforcements, pools[1], 3, Cause::Setup)?;
            l.move_tokens(owner, reinforcements, pools[2], 2, Cause::Setup)?;
        }
        let mut influence = Vec::with_capacity(n);
        let mut structures = Vec::with_capacity(n);
        for p in 0..n {
            let owner = Owner(p as u16);
            influence.push(
                l.add_amount(
                    AmountSpec::new(Key::new(owner, kind::INFLUENCE, 0))
                        .start(i64::from(prepared.influence[p]))
                        .lasts(Scope::Act)
                        .resets(),
                )?,
            );
            structures.push(l.add_amount(AmountSpec::new(Key::new(owner, kind::STRUCTURES, 0)))?);
        }
        let mut cards = Vec::with_capacity(rules.cards.len());
        for c in 0..rules.cards.len() {
            cards.push(l.add_permanent(Key::new(g, kind::CARD, c as u32), Some(Scope::Act))?);
        }
        let mut captured = Vec::with_capacity(n);
        for (p, &capture) in rules.capture.iter().enumerate() {
            captured.push(if capture {
                Some(
                    l.add_zone(
                        Zone::new(Key::new(g, kind::CAPTURED, p as u32))
                            .one_per_owner()
                            .face(face::SHIP),
                    )?,
                )
            } else {
                None
            });
        }
        let mut boxed = Vec::with_capacity(c_count + 1);
        for supply in 0..=c_count {
            let supply = u16::try_from(supply).unwrap_or(u16::MAX);
            boxed.push(
                l.add_zone(Zone::new(Key::new(g, kind::BOX, u32::from(supply))).supply(supply))?,
            );
        }
        let mut agendas = Vec::with_capacity(rules.agendas.len());
        for a in 0..rules.agendas.len() {
            agendas.push(l.add_permanent(Key::new(g, kind::AGENDA, a as u32), None)?);
        }
        let mut abilities = Vec::with_capacity(rules.abilities.len());
        for (i, a) in rules.abilities.iter().enumerate() {
            let readied = a.exhausts.then_some(Scope::Act);
            abilities.push(l.add_permanent(
                Key::new(Owner(u16::from(a.player)), kind::ABILITY, i as u32),
                readied,
            )?);
        }
        let mut hand = Vec::with_capacity(rules.hands.len());
        for (i, c) in rules.hands.iter().enumerate() {
            hand.push(l.add_permanent(
                Key::new(Owner(u16::from(c.player)), kind::ACTION_CARD, i as u32),
                None,
            )?);
        }
        let mut fragments = Vec::with_capacity(rules.fragments.len());
        for (p, &count) in rules.fragments.iter().enumerate() {
            fragments.push(
                l.add_amount(
                    AmountSpec::new(Key::new(Owner(p as u16), kind::FRAGMENTS, 0))
                        .start(i64::from(count)),
                )?,
            );
        }
        // Every resource is created: the layout is final (and no longer grows, so it gives back its
        // spare capacity before games share it).
        l.shrink_to_fit();
        let h = Handles {
            layout: l.layout(),
            fragments,
            hand,
            abilities,
            agendas,
            reinforcements,
            pools,
            systems,
            ship_reserve,
            ships,
            influence,
            structures,
            cards,
            captured,
            boxed,
        };
        let flow = Flow {
            phase: Phase::Strategy,
            step: Step::Pick,
            speaker: 0,
            picks: 0,
            holder: [NOBODY; MAX_CARDS],
            order: std::array::from_fn(|i| i as u8),
            passed: 0,
            turn: 0,
            card: 0,
            resolver: 0,
            secondary: false,
            effect: 0,
            cursor: 0,
            free: 0,
            others: 0,
            target: 0,
            left: 0,
            rate: 1,
            system: 0,
            built: 0,
            status: 0,
            forfeited: [0; MAX_PLAYERS],
            defender: 0,
            retreat: NOBODY,
            hits: [0; 2],
            out: 0,
            revealed: 0,
            enacted: 0,
            agenda: NOBODY,
            resolved: 0,
            outcome: 0,
            elected: 0,
            window: 0,
            riders: no_riders(),
            predictions: [0; MAX_RIDERS],
            op: 0,
            voters: 0,
            minister: NOBODY,
            pact: false,
            pending: None,
        };
        let mut state = State {
            ledger: l,
            rules: prepared.rules.clone(),
            h: Shared::adopt(prepared.rules.key().clone(), h),
            flow,
        };
        // The handles of a live game of this setup may have been kept instead of these: share their
        // layout (it is equal, setup does not depend on the seed).
        state.ledger.adopt_layout(&state.h.layout);
        for p in state.owners() {
            state.recheck_fleet(p, Cause::Setup);
        }
        // T22: a card played at the start of the strategy phase may be played in the first one too.
        state.strategy_window();
        Ok(state)
    }

    /// Number of players.
    #[inline]
    pub fn players(&self) -> u8 {
        self.ledger.owners() as u8
    }

    /// The players, in seat order.
    #[inline]
    pub fn owners(&self) -> impl Iterator<Item = Owner> + use<> {
        (0..self.ledger.owners()).map(Owner)
    }

    /// Whether `player` has been eliminated (T18).
    #[inline]
    pub fn is_eliminated(&self, player: Owner) -> bool {
        player.0 < 8 && self.flow.out & (1 << player.0) != 0
    }

    /// The players still in the game (T18).
    #[inline]
    pub fn live_players(&self) -> u8 {
        self.players() - self.flow.out.count_ones() as u8
    }

    /// The `k`-th player still in the game, counting from seat `from` (itself first if still in) to the
    /// left, in seat order: picks and the status phase go round the table this way, skipping the
    /// eliminated (T18).
    pub fn live_seat(&self, from: u8, k: u8) -> u8 {
        let n = self.players();
        let mut left = k;
        for i in 0..n {
            let q = (from + i) % n;
            if self.flow.out & (1 << q) == 0 {
                if left == 0 {
                    return q;
                }
                left -= 1;
            }
        }
        from
    }

    /// The player whose pick the strategy phase waits for: from the speaker round the table, skipping the
    /// eliminated (T18).
    #[inline]
    pub fn picker(&self) -> u8 {
        self.live_seat(
            self.flow.speaker,
            self.flow.picks % self.live_players().max(1),
        )
    }

    /// `player`'s tokens in a pool.
    #[inline]
    pub fn pool(&self, player: Owner, pool: Pool) -> u32 {
        self.ledger.tokens(self.h.pools[pool.index()], player)
    }

    /// The tokens in `player`'s fleet pool: their own and, with Edict, other players' (T17).
    #[inline]
    pub fn fleet_tokens(&self, player: Owner) -> u32 {
        self.pool(player, Pool::Fleet) + self.captured(player)
    }

    /// Other players' tokens in `player`'s fleet pool (Edict, T17).
    #[inline]
    pub fn captured(&self, player: Owner) -> u32 {
        match self.h.captured.get(player.index()) {
            Some(Some(zone)) => self.ledger.zone_tokens(*zone).iter().sum(),
            _ => 0,
        }
    }

    /// Whether `player`'s fleet pool holds a token of `other`'s (Edict, T17).
    pub fn holds_token_of(&self, player: Owner, other: Owner) -> bool {
        match self.h.captured.get(player.index()) {
            Some(Some(zone)) => self.ledger.tokens(*zone, other) > 0,
            _ => false,
        }
    }

    /// The most of `player`'s own tokens their fleet pool may hold under a law (Fleet Regulations, T7),
    /// other players' tokens there counted first (T17); `None` without such a law.
    pub fn own_fleet_max(&self, player: Owner) -> Option<u32> {
        self.fleet_pool_max()
            .map(|m| u32::from(m).saturating_sub(self.captured(player)))
    }

    /// The most tokens a fleet pool may hold under the laws in play, from the start or put in play by an
    /// agenda (Fleet Regulations; T7, T20); `None` without such a law.
    pub fn fleet_pool_max(&self) -> Option<u8> {
        let mut max = self.rules.fleet_pool_max;
        let mut enacted = self.flow.enacted;
        while enacted != 0 {
            let law = enacted.trailing_zeros() as usize;
            enacted &= enacted - 1;
            if let Some(m) = self.rules.law_list.get(law).and_then(|l| l.1) {
                max = Some(max.map_or(m, |x| x.min(m)));
            }
        }
        max
    }

    /// `player`'s tokens in reinforcements.
    #[inline]
    pub fn reinforcements(&self, player: Owner) -> u32 {
        self.ledger.tokens(self.h.reinforcements, player)
    }

    /// `player`'s tokens on the command sheet (the three pools).
    #[inline]
    pub fn sheet(&self, player: Owner) -> u32 {
        self.pool(player, Pool::Tactic)
            + self.pool(player, Pool::Fleet)
            + self.pool(player, Pool::Strategy)
    }

    /// Whether `player` has a command token in `system`.
    #[inline]
    pub fn has_token(&self, player: Owner, system: usize) -> bool {
        self.ledger.tokens(self.h.systems[system], player) > 0
    }

    /// `player`'s command tokens on the board.
    pub fn board_tokens(&self, player: Owner) -> u32 {
        self.ledger.tokens_in(player, kind::SYSTEM)
    }

    /// `player`'s ships of `class` in `system`.
    #[inline]
    pub fn ships(&self, player: Owner, system: usize, class: usize) -> u32 {
        self.ledger.tokens(
            self.h.ships[system * self.rules.class_count() + class],
            player,
        )
    }

    /// `player`'s ships of `class` in reinforcements.
    #[inline]
    pub fn ship_reserve(&self, player: Owner, class: usize) -> u32 {
        self.ledger.tokens(self.h.ship_reserve[class], player)
    }

    /// `player`'s non-fighter ships (classes that count toward the fleet limit) in `system`.
    #[inline]
    pub fn fleet_ships(&self, player: Owner, system: usize) -> u32 {
        let base = system * self.rules.class_count();
        let ships: u32 = self
            .rules
            .fleet_classes
            .iter()
            .map(|&c| {
                self.ledger
                    .tokens(self.h.ships[base + usize::from(c)], player)
            })
            .sum();
        ships + self.excess_fighters(player, system)
    }

    /// T25: the ships `player`'s fighters beyond their ships' capacity in `system` count as against the
    /// fleet pool (Fighter II: one each; Hybrid Crystal Fighter II: one half each, rounded up); 0 without
    /// such a technology.
    #[inline]
    pub fn excess_fighters(&self, player: Owner, system: usize) -> u32 {
        let weight = u32::from(self.rules.excess_fighters[player.index()]);
        match self.rules.transported {
            Some(t) if weight > 0 => {
                let excess = self
                    .ships(player, system, usize::from(t))
                    .saturating_sub(self.capacity(player, system));
                (weight * excess).div_ceil(2)
            }
            _ => 0,
        }
    }

    /// The capacity of `player`'s ships in `system` (LRR 16).
    pub fn capacity(&self, player: Owner, system: usize) -> u32 {
        self.rules
            .classes
            .iter()
            .enumerate()
            .map(|(c, class)| self.ships(player, system, c) * u32::from(class.capacity))
            .sum()
    }

    /// `player`'s ships of every class in `system`, fighters included.
    pub fn all_ships(&self, player: Owner, system: usize) -> u32 {
        (0..self.rules.class_count())
            .map(|c| self.ships(player, system, c))
            .sum()
    }

    /// The combat dice `player`'s ships in `system` roll together (LRR 78.5): each ship its class's dice.
    pub fn dice(&self, player: Owner, system: usize) -> u32 {
        (0..self.rules.class_count())
            .map(|c| self.ships(player, system, c) * u32::from(self.rules.classes[c].dice))
            .sum()
    }

    /// The move value of `player`'s ships of class `class`, if they have one (T14, T19: the faction's own
    /// units may differ from the class).
    #[inline]
    pub fn move_value(&self, player: Owner, class: usize) -> Option<u8> {
        let m = self.rules.moves[player.index() * self.rules.class_count() + class];
        (m > 0).then_some(m)
    }

    /// Whether `player` may produce ships of class `class`: it is not locked, or their faction or a
    /// technology they own unlocks it (T19).
    #[inline]
    pub fn may_produce(&self, player: Owner, class: usize) -> bool {
        self.rules.producible[player.index()] & (1 << class) != 0
    }

    /// The players with ships in `system`, as a bit per player.
    pub fn ship_owners(&self, system: usize) -> u8 {
        let base = system * self.rules.class_count();
        let mut owners = 0u8;
        for c in 0..self.rules.class_count() {
            let row = self.ledger.zone_tokens(self.h.ships[base + c]);
            for (p, &count) in row.iter().enumerate().take(MAX_PLAYERS) {
                if count > 0 {
                    owners |= 1 << p;
                }
            }
        }
        owners
    }

    /// For each system, whether a player other than `player` has ships there: one pass over each other
    /// player's ship zones in the kernel's board index (K4.8), not a look-up per system, class and player
    /// (a sixth of a playout's instructions when the movement search asked system by system).
    fn ships_of_others(&self, player: Owner) -> [bool; MAX_SYSTEMS] {
        let mut blocked = [false; MAX_SYSTEMS];
        for q in self.owners().filter(|&q| q != player) {
            for z in self.ledger.zones_holding_in(q, kind::SHIPS) {
                if let Some(b) = blocked.get_mut(self.ships_zone(z).0) {
                    *b = true;
                }
            }
        }
        blocked
    }

    /// The system and class of a ships zone ([`Handles::ships`]): its subject is
    /// `system * classes + class`, so zones in creation order go by ascending system, then class.
    #[inline]
    pub(crate) fn ships_zone(&self, zone: ZoneId) -> (usize, usize) {
        let classes = self.rules.class_count().max(1);
        let subject = self.ledger.zones()[zone.index()].key.subject as usize;
        (subject / classes, subject % classes)
    }

    /// Whether a player other than `player` has ships in `system`.
    pub fn others_have_ships(&self, player: Owner, system: usize) -> bool {
        self.ship_owners(system) & !(1u8 << player.0) != 0
    }

    /// T14 (LRR 58.4b, f): for each system, the fewest systems a ship of `player` enters to reach the
    /// activated system from it along adjacent systems, never through a system holding another player's
    /// ships (`u8::MAX`: unreachable within [`crate::content::MAX_MOVE`]). A breadth-first search outward
    /// from the activated system.
    pub fn distances(&self, player: Owner) -> [u8; MAX_SYSTEMS] {
        let active = usize::from(self.flow.system);
        let blocked = self.ships_of_others(player);
        let mut dist = [u8::MAX; MAX_SYSTEMS];
        // A queue of systems in order of distance: each system enters it once.
        let mut queue = [0u8; MAX_SYSTEMS];
        let (mut head, mut tail) = (0, 1);
        queue[0] = active as u8;
        dist[active] = 0;
        while head < tail {
            let u = usize::from(queue[head]);
            head += 1;
            // A ship may start in a system next to a blocked one but not pass through it; the activated
            // system itself is where every path ends.
            if dist[u] >= crate::content::MAX_MOVE || u != active && blocked[u] {
                continue;
            }
            for v in self.adjacent_to(u) {
                let v = usize::from(v);
                if dist[v] == u8::MAX {
                    dist[v] = dist[u] + 1;
                    queue[tail] = v as u8;
                    tail += 1;
                }
            }
        }
        dist
    }

    /// Whether the laws in play make every wormhole system adjacent to every other (Wormhole
    /// Reconstruction, T29).
    pub fn wormholes_linked(&self) -> bool {
        self.rules
            .wormhole_law
            .is_some_and(|l| (self.rules.starting_laws | self.flow.enacted) & (1 << l) != 0)
    }

    /// The systems adjacent to `system` (LRR 6): the galaxy's, and, with Wormhole Reconstruction in play,
    /// every other wormhole system for a wormhole system (T29).
    pub fn adjacent_to(&self, system: usize) -> impl Iterator<Item = u16> + '_ {
        let linked = self.wormholes_linked() && self.rules.wormholes.contains(&(system as u16));
        let own = &self.rules.adjacent[system];
        let others = self
            .rules
            .wormholes
            .iter()
            .copied()
            .filter(move |&w| linked && usize::from(w) != system && !own.contains(&w));
        own.iter().copied().chain(others)
    }

    /// Whether systems `a` and `b` are adjacent ([`State::adjacent_to`]).
    pub fn is_adjacent(&self, a: usize, b: u16) -> bool {
        self.adjacent_to(a).any(|s| s == b)
    }

    /// T16 (LRR 78.7c): whether `player`'s ships may retreat from the activated system to `system`: it is
    /// adjacent, holds ships of the player's and no other player's ships.
    pub fn may_retreat_to(&self, player: Owner, system: usize) -> bool {
        let active = usize::from(self.flow.system);
        self.is_adjacent(active, system as u16) && self.ship_owners(system) == 1 << player.0
    }

    /// T15 (LRR 78.4c): whether `player` has a system to retreat to.
    pub fn can_retreat(&self, player: Owner) -> bool {
        let active = usize::from(self.flow.system);
        self.adjacent_to(active)
            .any(|s| self.may_retreat_to(player, usize::from(s)))
    }

    /// T7: the most non-fighter ships `player` may have in a system: fleet-pool tokens plus the faction's
    /// bonus (Letnev +2).
    #[inline]
    pub fn fleet_limit(&self, player: Owner) -> u32 {
        self.fleet_tokens(player) + u32::from(self.rules.fleet_bonus[player.index()])
    }

    /// `player`'s influence left this round.
    #[inline]
    pub fn influence(&self, player: Owner) -> u64 {
        self.ledger.value(self.h.influence[player.index()]).max(0) as u64
    }

    /// `player`'s structures.
    pub fn structures(&self, player: Owner) -> i64 {
        self.ledger.value(self.h.structures[player.index()])
    }

    /// The key of `player`'s fleet-limit demand in `system`.
    #[inline]
    pub fn limit_key(player: Owner, system: usize) -> Key {
        Key::new(player, kind::FLEET_LIMIT, system as u32)
    }

    /// T7 via K6: checks `player`'s ships in `system` against the fleet limit; an excess raises (or updates)
    /// a demand, compliance satisfies it.
    pub fn check_fleet_in(&mut self, player: Owner, system: usize, cause: Cause) {
        let (measured, max) = (
            u64::from(self.fleet_ships(player, system)),
            u64::from(self.fleet_limit(player)),
        );
        self.ledger
            .check_limit(State::limit_key(player, system), measured, max, cause);
    }

    /// T7 via K6: checks `player`'s ships against the fleet limit in every system; an excess raises (or
    /// updates) a demand the player must resolve before anything else; compliance satisfies it.
    pub fn recheck_fleet(&mut self, player: Owner, cause: Cause) {
        let max = u64::from(self.fleet_limit(player));
        for s in 0..self.rules.system_count() {
            let measured = u64::from(self.fleet_ships(player, s));
            if measured > max || !self.ledger.pending().is_empty() {
                self.ledger
                    .check_limit(State::limit_key(player, s), measured, max, cause);
            }
        }
    }

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
            Step::Pick => self.picker(),
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

    /// Checks that the rules, handles and flow fit together (a restored snapshot may be damaged): every
    /// index the ruleset uses is in range, so that no later call can panic.
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_shape(&self) -> Result<(), Violation> {
        let bad = |what: &str| Err(Violation(format!("damaged state: {what}")));
        let n = usize::from(self.ledger.owners());
        let r = &self.rules;
        let (systems, classes, cards) = (r.system_count(), r.class_count(), r.cards.len());
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
            return bad("player count");
        }
        if r.factions.len() != n
            || r.fleet_bonus.len() != n
            || r.status_tokens.len() != n
            || r.research_tokens.len() != n
            || r.faction_names.len() != n
            || r.capture.len() != n
        {
            return bad("per-player rules");
        }
        if r.system_labels.len() != systems {
            return bad("system labels");
        }
        if r.adjacent.len() != systems
            || r.adjacent
                .iter()
                .any(|a| a.iter().any(|&s| usize::from(s) >= systems))
        {
            return bad("adjacency");
        }
        if classes == 0 || classes > crate::content::MAX_CLASSES || cards == 0 || cards > MAX_CARDS
        {
            return bad("content sizes");
        }
        if r.fleet_classes
            .iter()
            .any(|&c| usize::from(c) >= classes || !r.classes[usize::from(c)].fleet)
        {
            return bad("fleet classes");
        }
        if r.transported.is_some_and(|c| usize::from(c) >= classes) {
            return bad("transported class");
        }
        let class_ok = |c: u8| usize::from(c) < classes;
        if r.excess_fighters.len() != n
            || r.excess_fighters.iter().any(|&w| w > 2)
            || r.producible.len() != n
            || r.moves.len() != n * classes
            || r.star_forge.len() != n
            || r.star_forge.iter().flatten().any(|f| {
                !class_ok(f.with)
                    || f.place.is_empty()
                    || f.place.iter().any(|&(c, _)| !class_ok(c))
            })
        {
            return bad("per-player units");
        }
        if r.cards
            .iter()
            .any(|c| c.primary.len() > 8 || c.secondary.len() > 8)
        {
            return bad("card effects");
        }
        if usize::from(r.cards_per_player) * n > cards || r.cards_per_player == 0 {
            return bad("cards per player");
        }
        if !self.h.same_key(&self.rules) {
            return bad("handles of another setup than the rules");
        }
        let h = &self.h;
        if h.systems.len() != systems
            || h.ship_reserve.len() != classes
            || h.ships.len() != systems * classes
            || h.influence.len() != n
            || h.structures.len() != n
            || h.cards.len() != cards
            || h.influence
                .iter()
                .chain(&h.structures)
                .any(|&a| self.ledger.amount(a).is_err())
            || h.cards.iter().any(|&c| self.ledger.permanent(c).is_err())
            || h.captured.len() != n
            || h.captured
                .iter()
                .zip(&r.capture)
                .any(|(z, &c)| z.is_some() != c)
            || h.boxed.len() != classes + 1
        {
            return bad("handles");
        }
        // The zones the handles name are those setup made: with the setup's own layout (what a snapshot
        // is read on unless it carried its own), they are there by construction.
        if !self.ledger.has_layout(&h.layout) {
            self.check_zone_handles()?;
        }
        let f = &self.flow;
        let player = |p: u8| usize::from(p) < n;
        if !player(f.speaker) || !player(f.turn) || !player(f.resolver) || !player(f.defender) {
            return bad("flow players");
        }
        if f.retreat != NOBODY && !player(f.retreat)
            || f.step == Step::Retreat && f.retreat == NOBODY
        {
            return bad("retreating player");
        }
        // A space combat's decisions belong to its two players, and a hit is assigned only while owed.
        let combatant = |p: u8| p == f.turn || p == f.defender;
        if (f.step.in_space_combat() || f.step == Step::Capture)
            && (f.defender == f.turn
                || !combatant(f.resolver)
                || f.retreat != NOBODY && !combatant(f.retreat))
        {
            return bad("space combat players");
        }
        if f.step == Step::Assign && f.hits[usize::from(f.resolver != f.turn)] == 0 {
            return bad("hits to assign");
        }
        if usize::from(f.cursor) > n
            || usize::from(f.others) > n.max(r.wormholes.len())
            || usize::from(f.status) > n
        {
            return bad("flow cursors");
        }
        if u16::from(f.free) >> n != 0 {
            return bad("players resolving a secondary for free");
        }
        if u16::from(f.out) >> n != 0 || f.out.count_ones() as usize >= n {
            return bad("eliminated players");
        }
        if usize::from(f.card) >= cards
            || usize::from(f.effect) > r.effects(f.card, f.secondary).len()
            || usize::from(f.target) >= systems.max(1)
            || usize::from(f.system) >= systems.max(1)
            || usize::from(f.picks) > n * usize::from(r.cards_per_player)
        {
            return bad("flow indices");
        }
        let phase_fits = match f.step {
            Step::Pick => f.phase == Phase::Strategy,
            Step::Redistribute => matches!(f.phase, Phase::Action | Phase::Status),
            Step::Gain => f.phase != Phase::Over,
            Step::StrategyWindow => f.phase == Phase::Strategy,
            Step::Riders => f.phase == Phase::Agenda,
            Step::Cancel => f.phase != Phase::Over,
            Step::EndOfStrategy => f.phase == Phase::Strategy,
            Step::Recombine | Step::Comply | Step::WormholeFallback | Step::Prerequisites => {
                f.phase == Phase::Agenda
            }
            Step::Target | Step::Fallback => matches!(f.phase, Phase::Action | Phase::Agenda),
            Step::Over => f.phase == Phase::Over,
            Step::Reveal | Step::Quash | Step::Outcome | Step::ReturnTokens => {
                f.phase == Phase::Agenda
            }
            Step::Release => matches!(f.phase, Phase::Action | Phase::Agenda),
            _ => f.phase == Phase::Action || f.pact && f.phase == Phase::Agenda,
        };
        if !phase_fits || (f.step == Step::Gain && f.left == 0) {
            return bad("step and phase");
        }
        if f.holder.iter().any(|&h| h != NOBODY && !player(h)) {
            return bad("card holders");
        }
        // T20: the agenda being resolved, its outcome and the laws and agendas it names.
        let agendas = r.agendas.len();
        let resolving = matches!(
            f.step,
            Step::ReturnTokens | Step::WormholeFallback | Step::Prerequisites
        ) || f.step == Step::Release && f.phase == Phase::Agenda;
        if r.law_list.len() > 16
            || agendas > 16
            || u32::from(f.enacted) >> r.law_list.len() != 0
            || u32::from(f.revealed) >> agendas != 0
            || h.agendas.len() != agendas
            || h.agendas.iter().any(|&a| self.ledger.permanent(a).is_err())
            || f.agenda != NOBODY && usize::from(f.agenda) >= agendas
            || resolving && f.agenda == NOBODY
            || f.step == Step::Outcome
                && f.agenda == NOBODY
                && f.riders.iter().all(|&r| r == NOBODY)
            || f.minister != NOBODY && !player(f.minister)
            || u16::from(f.voters) >> n != 0
            || f.pact && f.phase != Phase::Agenda
            || f.resolved > 2
            || f.phase == Phase::Agenda && f.resolved > 1
            || f.outcome > 2
            || !player(f.elected)
            || f.phase == Phase::Agenda && r.agenda_from == 0
            || r.homes.len() != n
            || r.homes.iter().flatten().any(|&s| usize::from(s) >= systems)
            || r.quash.len() != n
            || r.agendas.iter().flat_map(|a| a.outcomes.iter().flatten()).any(
                |op| matches!(op, AgendaOp::Enact(law) if usize::from(*law) >= r.law_list.len()),
            )
        {
            return bad("agendas");
        }
        if r.wormholes.iter().any(|&w| usize::from(w) >= systems)
            || r.wormhole_law
                .is_some_and(|l| usize::from(l) >= r.law_list.len())
            || f.step == Step::WormholeFallback && !r.wormholes.contains(&f.target)
        {
            return bad("wormholes");
        }
        if r.fleet_loss.len() != n
            || r.free_secondaries.len() != n
            || r.abilities.iter().any(|a| !player(a.player))
            || h.abilities.len() != r.abilities.len()
            || h.abilities
                .iter()
                .any(|&a| self.ledger.permanent(a).is_err())
        {
            return bad("component actions");
        }
        let slot_ok = |c: u8| c == NOBODY || usize::from(c) < r.hands.len();
        if r.hands.len() > MAX_HAND_CARDS
            || r.hands.iter().any(|c| !player(c.player))
            || h.hand.len() != r.hands.len()
            || h.hand.iter().any(|&c| self.ledger.permanent(c).is_err())
            || !f.riders.iter().all(|&c| slot_ok(c))
            || f.predictions.iter().any(|&v| usize::from(v) >= 2 + n)
            || usize::from(f.window) > n + 1
        {
            return bad("action cards");
        }
        if !(r.fragments.is_empty() || r.fragments.len() == n)
            || h.fragments.len() != r.fragments.len()
            || h.fragments.iter().any(|&a| self.ledger.amount(a).is_err())
        {
            return bad("relic fragments");
        }
        // T26: a card waits on cancelling only in that step, and only a card of the hands.
        let pending_ok = match f.pending {
            None => f.step != Step::Cancel,
            Some(c) => f.step == Step::Cancel && usize::from(c.card) < r.hands.len(),
        };
        if !pending_ok {
            return bad("a card waiting on cancelling");
        }
        if resolving
            && usize::from(f.op)
                > r.agendas[usize::from(f.agenda)].outcomes[usize::from(f.outcome)].len()
            || f.step == Step::ReturnTokens && (f.left == 0 || usize::from(f.status) >= n)
            || f.step == Step::Quash && r.quash[usize::from(f.resolver)] == 0
        {
            return bad("agenda step");
        }
        let mut seen = [false; MAX_PLAYERS];
        for &p in &f.order[..n] {
            if !player(p) || std::mem::replace(&mut seen[usize::from(p)], true) {
                return bad("action-phase order");
            }
        }
        if self.ledger.pending().iter().any(|d| {
            d.key.kind != kind::FLEET_LIMIT
                || usize::from(d.key.owner.0) >= n
                || d.key.subject as usize >= systems
        }) {
            return bad("pending demands");
        }
        Ok(())
    }

    /// T1: `p`'s totals of the kernel's supplies are the rules' 16 command tokens and each class's pieces.
    fn check_stocked(&self, p: Owner) -> Result<(), Violation> {
        let command = self.ledger.supply_of(0, p);
        if command != COMMAND_TOKENS {
            return Err(Violation(format!(
                "{p} has {command} command tokens, not {COMMAND_TOKENS}"
            )));
        }
        for c in 0..self.rules.class_count() {
            let total = self.ledger.supply_of(ship_supply(c), p);
            if total != self.rules.classes[c].reinforcements {
                return Err(Violation(format!(
                    "{p} has {total} {} pieces, not {}",
                    self.rules.classes[c].id, self.rules.classes[c].reinforcements
                )));
            }
        }
        Ok(())
    }

    /// The zones the handles name exist and are of their kind, in a ledger laid out otherwise than by
    /// this setup (see [`check_shape`](Self::check_shape)).
    fn check_zone_handles(&self) -> Result<(), Violation> {
        let h = &self.h;
        let zones_ok = |zs: &[ZoneId]| zs.iter().all(|&z| self.ledger.zone(z).is_ok());
        if !zones_ok(&h.systems)
            || !zones_ok(&h.ship_reserve)
            || !zones_ok(&h.ships)
            || !zones_ok(&h.pools)
            || !zones_ok(&[h.reinforcements])
            || h.captured
                .iter()
                .any(|z| z.is_some_and(|z| self.ledger.zone(z).is_err()))
            || h.boxed.iter().enumerate().any(|(supply, &z)| {
                self.ledger
                    .zone(z)
                    .map_or(true, |z| usize::from(z.supply) != supply || z.one_per_owner)
            })
        {
            return Err(Violation("damaged state: handles".to_owned()));
        }
        if h.systems
            .iter()
            .any(|&z| self.ledger.zone(z).is_ok_and(|z| !z.one_per_owner))
        {
            return Err(Violation(
                "damaged state: system zones must hold one token per player".to_owned(),
            ));
        }
        Ok(())
    }

    /// Whether a round of a space combat is under way: one of its steps, or a card played at its start
    /// waiting on cancelling (T26).
    pub fn in_combat_round(&self) -> bool {
        self.flow.step.in_space_combat()
            || self.flow.step == Step::Cancel
                && self.flow.pending.is_some_and(|c| {
                    self.rules
                        .hands
                        .get(usize::from(c.card))
                        .is_some_and(|h| h.window == Window::StartOfCombatRound)
                })
    }

    /// Checks the kernel's invariants, then the ruleset's ([`State::check_rules`]).
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_invariants(&self) -> Result<(), Violation> {
        self.ledger.check_invariants()?;
        self.check_rules()
    }

    /// Checks the ruleset's invariants over a ledger whose own hold: each player's 16 command tokens (T1)
    /// and ship pieces are conserved apart, a system holds at most one token per player, the fleet pool
    /// respects a law's maximum, and every ship excess over the fleet limit is a pending demand of exactly
    /// that size (T7).
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_rules(&self) -> Result<(), Violation> {
        self.check_shape()?;
        let n = self.players();
        // The supply totals are the layout's: those setup stocked, with the setup's own layout.
        let stocked = self.ledger.has_layout(&self.h.layout);
        for p in self.owners() {
            // T1: the kernel conserves each supply (K4); its totals must be the rules' 16 command tokens
            // and each class's pieces.
            if !stocked {
                self.check_stocked(p)?;
            }
            if let Some(m) = self.fleet_pool_max() {
                // Over the law's maximum only while the player chooses the token to return: one over
                // after a capture (T17), any number when a law has just come into play (T20).
                let held = self.fleet_tokens(p);
                let releasing = self.flow.step == Step::Release && slot(p) == self.flow.resolver;
                let over = held - u32::from(m).min(held);
                if over > 0 && !(releasing && (over == 1 || self.flow.phase == Phase::Agenda)) {
                    return Err(Violation(format!(
                        "{p}'s fleet pool holds {held} over the law's {m}"
                    )));
                }
            }
        }
        // T18: an eliminated player has nothing in play but tokens in another player's fleet pool (LRR
        // 33.2, 33.10e-f), holds no strategy card, is not the speaker, decides nothing and has passed.
        for q in self.owners().filter(|&q| self.is_eliminated(q)) {
            let zones = self.ledger.zones();
            let in_play = self.ledger.zones_holding(q).any(|z| {
                let key = zones[z.index()].key;
                key.kind != kind::BOX && key.kind != kind::CAPTURED
            });
            let holds_card = self.flow.holder.contains(&slot(q));
            let passed = self.flow.phase != Phase::Action || self.flow.passed & (1 << q.0) != 0;
            if in_play
                || self.captured(q) > 0
                || self.structures(q) != 0
                || holds_card
                || self.flow.speaker == slot(q)
                || self.actor() == Some(q)
                || !passed
            {
                return Err(Violation(format!(
                    "{q} is eliminated but still takes part in the game"
                )));
            }
        }
        // T7: system by system, every player's fleet ships at once (one row of the token matrix per zone).
        // Each player's limit is read once; with nothing pending, only an excess is a violation.
        let (n, pending) = (usize::from(n), self.ledger.pending());
        let mut limits = [0u32; MAX_PLAYERS];
        for p in self.owners() {
            limits[p.index()] = self.fleet_limit(p);
        }
        let limits = &limits[..n];
        let mut ships = [0u32; MAX_PLAYERS];
        // T15: two players' ships share a system only in the activated system, from movement until the
        // space combat there ends.
        let fighting =
            matches!(self.flow.step, Step::Move | Step::Foresight) || self.in_combat_round();
        let classes = self.rules.class_count();
        let mut others = [0usize; crate::content::MAX_CLASSES];
        let mut other_count = 0;
        for c in (0..classes).filter(|&c| !self.rules.classes[c].fleet) {
            others[other_count] = c;
            other_count += 1;
        }
        let others = &others[..other_count];
        // Setup made the ships zones in one go, system by system and class by class (`Handles::ships`,
        // never read from a snapshot): their rows are one block of the token matrix, read here without
        // a look-up per zone.
        let block = match (self.h.ships.first(), self.h.ships.last()) {
            (Some(&first), Some(&last))
                if last.index().checked_sub(first.index()) == Some(self.h.ships.len() - 1) =>
            {
                self.ledger.zones_tokens(first, self.h.ships.len())
            }
            _ => &[],
        };
        if block.len() != self.h.ships.len() * n {
            return Err(Violation(
                "the ships of the galaxy's systems are not laid out as setup made them".to_owned(),
            ));
        }
        let per_system = classes * n;
        for s in 0..self.rules.system_count() {
            // A row of the token matrix per class, of a known width: no loop over players.
            let rows = block
                .get(s * per_system..(s + 1) * per_system)
                .unwrap_or(&[]);
            let owners = match n {
                3 => ships_in::<3>(rows, &self.rules.fleet_classes, others, &mut ships),
                4 => ships_in::<4>(rows, &self.rules.fleet_classes, others, &mut ships),
                5 => ships_in::<5>(rows, &self.rules.fleet_classes, others, &mut ships),
                6 => ships_in::<6>(rows, &self.rules.fleet_classes, others, &mut ships),
                7 => ships_in::<7>(rows, &self.rules.fleet_classes, others, &mut ships),
                _ => ships_in::<MAX_PLAYERS>(rows, &self.rules.fleet_classes, others, &mut ships),
            };
            let ships = &mut ships[..n];
            // T25: fighters beyond capacity count too for a player with Fighter II.
            for (p, sum) in ships.iter_mut().enumerate() {
                if self.rules.excess_fighters[p] > 0 {
                    *sum += self.excess_fighters(owner(p as u8), s);
                }
            }
            let active = fighting && s == usize::from(self.flow.system);
            let turn = 1u8 << self.flow.turn;
            if owners & owners.wrapping_sub(1) != 0
                && !(active && owners.count_ones() == 2 && owners & turn != 0)
            {
                return Err(Violation(format!(
                    "{} have ships in {} outside a space combat",
                    crate::actions::Players(owners).names(),
                    self.system_name(s as u16)
                )));
            }
            // During a combat round both of its players have ships there (else it has ended), but for
            // hits being assigned, which may leave one side without.
            let both = turn | 1u8 << self.flow.defender;
            let fits = match self.flow.step {
                Step::Move => true,
                Step::Assign => owners & !both == 0,
                _ => owners == both,
            };
            if active && !fits {
                return Err(Violation(format!(
                    "a space combat in {} without ships of both p{} and p{}",
                    self.system_name(s as u16),
                    self.flow.turn,
                    self.flow.defender
                )));
            }
            let in_combat = active && self.in_combat_round();
            for (p, (&ships, &max)) in self.owners().zip(ships.iter().zip(limits)) {
                let excess = ships.saturating_sub(max);
                if excess == 0 && pending.is_empty() {
                    continue;
                }
                // T25: fighters beyond capacity in a space combat are counted once it is over.
                if in_combat && self.rules.excess_fighters[p.index()] > 0 {
                    continue;
                }
                let key = State::limit_key(p, s);
                let owed = pending
                    .iter()
                    .find(|d| d.key == key)
                    .map_or(0, |d| d.excess);
                if excess != owed {
                    return Err(Violation(format!(
                        "{p} has {ships} ships in system {s} with a fleet limit of {max}, but {owed} pending"
                    )));
                }
            }
        }
        // What a combat's current decision needs: hits owed only against ships there, a system to retreat
        // to, a token to give.
        let (f, active) = (&self.flow, usize::from(self.flow.system));
        let short = match f.step {
            Step::Assign => {
                u32::from(f.hits[0]) > self.all_ships(owner(f.turn), active)
                    || u32::from(f.hits[1]) > self.all_ships(owner(f.defender), active)
            }
            Step::Retreat => !self.can_retreat(owner(f.retreat)),
            Step::Capture => {
                self.reinforcements(owner(f.resolver)) > 0 || self.sheet(owner(f.resolver)) == 0
            }
            _ => false,
        };
        if short {
            return Err(Violation(format!(
                "{} cannot be decided in this state",
                f.step.while_text().trim_start_matches("while ")
            )));
        }
        Ok(())
    }
}

/// The fleet ships of each of `N` players in one system (`rows`: its ships zones' rows of the token
/// matrix, class after class), the classes of `fleet_classes` summed, into `ships`, and a bit per player
/// with ships of any class there (`others`: the classes outside the fleet). The players' count is checked by
/// [`State::check_shape`] (at most [`MAX_PLAYERS`]).
#[inline]
fn ships_in<const N: usize>(
    rows: &[u32],
    fleet_classes: &[u8],
    others: &[usize],
    ships: &mut [u32; MAX_PLAYERS],
) -> u8 {
    let row = |c: usize| {
        rows.get(c * N..(c + 1) * N)
            .and_then(|r| r.first_chunk::<N>())
    };
    let mut fleet = [0u32; N];
    for &c in fleet_classes {
        if let Some(row) = row(usize::from(c)) {
            for i in 0..N {
                fleet[i] += row[i];
            }
        }
    }
    let mut any = fleet;
    for &c in others {
        if let Some(row) = row(c) {
            for i in 0..N {
                any[i] |= row[i];
            }
        }
    }
    let mut owners = 0u8;
    for (i, &count) in any.iter().enumerate() {
        owners |= u8::from(count > 0) << i;
    }
    ships.fill(0);
    ships[..N].copy_from_slice(&fleet);
    owners
}

/// The kernel supply (K4) that holds a player's ship pieces of class `class`; supply 0 is the command tokens.
pub fn ship_supply(class: usize) -> u16 {
    u16::try_from(class + 1).unwrap_or(u16::MAX)
}

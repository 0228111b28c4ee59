//! The numbers the ruleset names things by (resource kinds, notes, effects, faces), the token pools, the
//! keys of notes and the one conversion between a player and the compact `u8` the flow stores.

use coffer_core::{Key, Owner};
use serde::{Deserialize, Serialize};

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
    /// kernel supply ([`crate::ship_supply`]: 0 for command tokens, 1 + class for ships). Nothing leaves it.
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

/// The key of notes about strategy card `card`.
#[inline]
pub(crate) fn card_key(card: u8) -> Key {
    Key::new(Owner::GAME, kind::CARD, u32::from(card))
}

/// The key of notes about system `system`.
#[inline]
pub(crate) fn system_key(system: u16) -> Key {
    Key::new(Owner::GAME, kind::SYSTEM, u32::from(system))
}

/// The key of notes about `player`'s play.
#[inline]
pub(crate) fn play_key(player: Owner) -> Key {
    Key::new(player, kind::PLAY, 0)
}

/// A player as a note's number: their index.
#[inline]
pub(crate) fn arg(player: Owner) -> i32 {
    i32::from(player.0)
}

/// The key of notes about the round as a whole.
pub(crate) const ROUND_KEY: Key = Key::new(Owner::GAME, kind::PLAY, 0);

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

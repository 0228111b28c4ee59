//! Where the round stands: the phase, the step awaiting a decision and the flow's compact fields.

use crate::config::{MAX_PLAYERS, MAX_RIDERS, NOBODY, Vote};
use crate::content::MAX_CARDS;
use crate::ids::Pool;
use serde::{Deserialize, Serialize};

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
    /// The riders played on the agenda being resolved, by slot in [`Rules::hands`](crate::Rules::hands) ([`NOBODY`]: none).
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

pub(crate) fn no_riders() -> [u8; MAX_RIDERS] {
    [NOBODY; MAX_RIDERS]
}

pub(crate) fn nobody() -> u8 {
    NOBODY
}

impl Flow {
    /// The flow at the start of a game: the strategy phase, the speaker (p0) to pick, nobody holding a
    /// card, no agenda, law or combat under way.
    pub fn start() -> Flow {
        Flow {
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
        }
    }
}

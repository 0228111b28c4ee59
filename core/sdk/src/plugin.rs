//! The plugin API: the [`Ruleset`] trait a game module implements, and the object-safe [`DynRuleset`] /
//! [`DynGame`] pair the host drives, statically linked or loaded at runtime alike.
//!
//! # Lifecycle
//! 1. A plugin crate implements [`Ruleset`] and invokes [`plugin!`](../coffer_core/macro.plugin.html) once. That registers the
//!    ruleset statically (`inventory`) and exports it from the crate's `cdylib` build.
//! 2. The host finds it (statically, or by loading the library) as an `Arc<dyn DynRuleset>`.
//! 3. [`DynRuleset::new_game`] starts a game from players, seed and JSON configuration; the host then asks
//!    for legal actions and applies them, by index on the hot path or from a user's JSON.
//! 4. Each applied action is one kernel transaction: a refused action leaves the kernel state as it was.
//!
//! ```
//! use coffer_kernel::*;
//! use coffer_sdk::*;
//! use serde::{Deserialize, Serialize};
//!
//! /// A one-resource game: each player may add 1 to a purse capped at 3; first to 3 wins.
//! struct Coins;
//!
//! #[derive(Clone, Debug, Serialize, Deserialize)]
//! struct State { ledger: Ledger, purse: Vec<AmountId> }
//!
//! #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! enum Action { Take }
//!
//! impl Ruleset for Coins {
//!     type State = State;
//!     type Action = Action;
//!     type Config = ();
//!     fn describe(&self) -> Description {
//!         Description::new("coins", "0.1.0", "take coins until you have three")
//!     }
//!     fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
//!         let mut ledger = Ledger::new(players, seed);
//!         let purse = (0..players)
//!             .map(|p| ledger.add_amount(AmountSpec::new(Key::new(Owner(p), Kind(0), 0)).cap(3)))
//!             .collect::<Result<_, _>>()?;
//!         Ok(State { ledger, purse })
//!     }
//!     fn legal_actions(&self, s: &State, p: Owner, out: &mut Vec<Action>) {
//!         if self.outcome(s) == Outcome::Ongoing { out.push(Action::Take) }
//!     }
//!     fn apply(&self, s: &mut State, p: Owner, _: &Action) -> Result<(), ActionError> {
//!         if self.outcome(s) != Outcome::Ongoing { return Err(ActionError::GameOver) }
//!         s.ledger.gain(s.purse[p.index()], 1, Cause::Action { player: p, code: 0 })?;
//!         Ok(())
//!     }
//!     fn ledger<'s>(&self, s: &'s State) -> &'s Ledger { &s.ledger }
//!     fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger { &mut s.ledger }
//!     fn outcome(&self, s: &State) -> Outcome {
//!         let winners: Vec<Owner> = (0..s.ledger.owners()).map(Owner)
//!             .filter(|p| s.ledger.value(s.purse[p.index()]) == 3).collect();
//!         if winners.is_empty() { Outcome::Ongoing } else { Outcome::Finished { winners, scores: vec![] } }
//!     }
//! }
//!
//! let coins = Adapter::shared(Coins);
//! let mut game = coins.new_game(&Setup::new(2, 42)).unwrap();
//! assert_eq!(game.legal_actions(Owner(0)), 1);
//! game.apply_json(Owner(0), r#""Take""#).unwrap();
//! assert_eq!(game.events().len(), 1);
//! assert!(matches!(game.apply_json(Owner(0), r#""Give""#), Err(ActionError::Malformed(_))));
//! ```

use crate::playout::{PlayoutError, Progress, Track, random_playout};
use crate::table::{Mover, Pending, Table};
use coffer_kernel::GameRng;
use coffer_kernel::Refusal;
use coffer_kernel::Scope;
use coffer_kernel::{Change, Event};
use coffer_kernel::{Key, Owner};
use coffer_kernel::{Ledger, Violation};
use coffer_kernel::{Names, Seat, Vocabulary};
use coffer_kernel::{StateHash, state_hash};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::Arc;

/// Documentation of one named thing a ruleset has: a resource, an action, an option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    /// Its name.
    pub name: String,
    /// What it is, in a sentence or two.
    pub doc: String,
    /// An example (an action's JSON) or a default (an option's value); `null` when not applicable.
    #[serde(default)]
    pub value: serde_json::Value,
}

impl Doc {
    /// A doc without example.
    pub fn new(name: impl Into<String>, doc: impl Into<String>) -> Doc {
        Doc {
            name: name.into(),
            doc: doc.into(),
            value: serde_json::Value::Null,
        }
    }
    /// A doc with an example or default value.
    pub fn with(name: impl Into<String>, doc: impl Into<String>, value: serde_json::Value) -> Doc {
        Doc {
            name: name.into(),
            doc: doc.into(),
            value,
        }
    }
}

/// What a ruleset is: its id and version, and what it offers (shown by `coffer describe`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// Stable id, e.g. `charges`.
    pub id: String,
    /// Semantic version of the ruleset.
    pub version: String,
    /// One line: what game this is.
    pub summary: String,
    /// Fewest players.
    pub min_players: u16,
    /// Most players.
    pub max_players: u16,
    /// Phases of a turn or round, in order.
    pub phases: Vec<String>,
    /// Resources it tracks.
    pub resources: Vec<Doc>,
    /// Actions, each with a JSON example.
    pub actions: Vec<Doc>,
    /// Configuration options, each with its default.
    pub options: Vec<Doc>,
    /// What the ruleset calls things: kinds of resource, phases, steps, actions, effects and its own
    /// events. Hosts and front ends name things with it (see [`Names`](coffer_kernel::Names)).
    #[serde(default)]
    pub vocabulary: Vocabulary,
}

impl Description {
    /// A description with no phases, resources, actions or options yet, for 2 to 8 players.
    pub fn new(
        id: impl Into<String>,
        version: impl Into<String>,
        summary: impl Into<String>,
    ) -> Description {
        Description {
            id: id.into(),
            version: version.into(),
            summary: summary.into(),
            min_players: 2,
            max_players: 8,
            phases: Vec::new(),
            resources: Vec::new(),
            actions: Vec::new(),
            options: Vec::new(),
            vocabulary: Vocabulary::default(),
        }
    }

    /// The registry key, `id@version`.
    pub fn key(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }
}

/// How a game finished, or that it has not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// Still being played.
    Ongoing,
    /// Over.
    Finished {
        /// Who won (several on a shared win, none on a draw).
        winners: Vec<Owner>,
        /// Final scores per player, when the ruleset keeps score.
        scores: Vec<i64>,
    },
}

/// Why an action was refused. The game is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ActionError {
    /// The action's JSON could not be read as one of this ruleset's actions.
    #[error("malformed action: {0}")]
    Malformed(String),
    /// The player index is not in the game.
    #[error("player {player} is not in this {players}-player game")]
    NoSuchPlayer {
        /// The player asked.
        player: u16,
        /// How many play.
        players: u16,
    },
    /// The player may not act now.
    #[error("it is not {player}'s turn to act: {reason}")]
    NotYourTurn {
        /// Who tried.
        player: Owner,
        /// Whose turn or what is awaited.
        reason: String,
    },
    /// The rules forbid the action now.
    #[error("illegal action: {0}")]
    Illegal(String),
    /// A legal-action index past the end of the list.
    #[error("no legal action #{index}: {player} has {count}")]
    NoSuchLegalAction {
        /// Who acted.
        player: Owner,
        /// The index asked.
        index: usize,
        /// How many legal actions there are.
        count: usize,
    },
    /// The kernel refused a part of it (a cost that could not be paid...).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The game is over.
    #[error("the game is over")]
    GameOver,
    /// The plugin panicked while applying it; the game is unchanged and the plugin is no longer called.
    #[error("the plugin panicked: {0}")]
    Panicked(String),
    /// The plugin panicked earlier and is no longer called.
    #[error("ruleset '{0}' is poisoned (it panicked earlier) and is no longer called")]
    Poisoned(String),
}

/// Why a game could not be started or restored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SetupError {
    /// A player count the ruleset does not support.
    #[error("{got} players: this ruleset takes {min} to {max}")]
    Players {
        /// Asked.
        got: u16,
        /// Fewest.
        min: u16,
        /// Most.
        max: u16,
    },
    /// The configuration is not valid for this ruleset.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Content (cards, pieces, sides) failed validation.
    #[error("invalid content: {0}")]
    Content(String),
    /// A snapshot could not be read, or does not describe a valid state.
    #[error("invalid snapshot: {0}")]
    Snapshot(String),
    /// The kernel refused a setup step.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The plugin panicked.
    #[error("the plugin panicked: {0}")]
    Panicked(String),
    /// The plugin panicked earlier and is no longer called.
    #[error("ruleset '{0}' is poisoned (it panicked earlier) and is no longer called")]
    Poisoned(String),
}

/// How a state is written out.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Format {
    /// JSON (human-readable).
    Json,
    /// postcard (compact binary).
    Binary,
}

/// What starting a game takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// Number of players.
    pub players: u16,
    /// Seed of the game's RNG.
    pub seed: u64,
    /// Ruleset configuration as JSON; `null` or `{}` for the defaults.
    pub config: serde_json::Value,
}

impl Setup {
    /// Players and seed, default configuration.
    pub fn new(players: u16, seed: u64) -> Setup {
        Setup {
            players,
            seed,
            config: serde_json::Value::Null,
        }
    }
    /// With a configuration.
    pub fn config(mut self, config: serde_json::Value) -> Setup {
        self.config = config;
        self
    }
}

/// One resource as `coffer show` draws it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResourceView {
    /// A bounded amount.
    Amount {
        /// Display name, without the owner ("Gold").
        label: String,
        /// Owner, kind and subject.
        key: Key,
        /// Its index among the ledger's amounts.
        index: u32,
        /// Value.
        value: i64,
        /// Floor.
        floor: i64,
        /// Cap.
        cap: Option<i64>,
        /// Lifetime scope.
        lifetime: Scope,
    },
    /// A charge track.
    Charges {
        /// Display name, without the owner.
        label: String,
        /// Owner, kind and subject.
        key: Key,
        /// Its index among the ledger's charge tracks.
        index: u32,
        /// Active charges.
        active: u32,
        /// Limit.
        limit: u32,
        /// Cannot be recovered.
        unrecoverable: bool,
    },
    /// A token zone with each owner's count.
    Tokens {
        /// Display name, without the owner.
        label: String,
        /// Owner, kind and subject.
        key: Key,
        /// Its index among the ledger's zones.
        index: u32,
        /// Face shown here.
        face: u8,
        /// Tokens per owner (index = owner), zeros included.
        counts: Vec<u32>,
        /// The game's own tokens here (a bank's, K4.6).
        game: u32,
    },
    /// A permanent's readiness.
    Permanent {
        /// Display name, without the owner.
        label: String,
        /// Owner, kind and subject.
        key: Key,
        /// Its index among the ledger's permanents.
        index: u32,
        /// Exhausted.
        exhausted: bool,
    },
}

/// A player who may act now and how many legal actions they have: one entry of
/// [`DynGame::acting`], laid out the same on both sides of a shared-library boundary (`#[repr(C)]`: the
/// C ABI hands these out without a copy).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Acting {
    /// The player (an [`Owner`] index).
    pub player: u16,
    /// How many legal actions they have now (0 included).
    pub legal: usize,
}

impl Acting {
    /// The player as an [`Owner`].
    #[inline]
    pub fn owner(self) -> Owner {
        Owner(self.player)
    }
}

impl coffer_kernel::Labelled for ResourceView {
    fn key(&self) -> Key {
        ResourceView::key(self)
    }

    fn label(&self) -> &str {
        ResourceView::label(self)
    }

    fn zone_index(&self) -> Option<u32> {
        match self {
            ResourceView::Tokens { index, .. } => Some(*index),
            _ => None,
        }
    }
}

impl ResourceView {
    /// The resource's key.
    pub fn key(&self) -> Key {
        match self {
            ResourceView::Amount { key, .. }
            | ResourceView::Charges { key, .. }
            | ResourceView::Tokens { key, .. }
            | ResourceView::Permanent { key, .. } => *key,
        }
    }

    /// Its owner.
    pub fn owner(&self) -> Owner {
        self.key().owner
    }

    /// Its label, without the owner.
    pub fn label(&self) -> &str {
        match self {
            ResourceView::Amount { label, .. }
            | ResourceView::Charges { label, .. }
            | ResourceView::Tokens { label, .. }
            | ResourceView::Permanent { label, .. } => label,
        }
    }
}

/// A game module: its rules over kernel primitives. Implement this, then register it with
/// [`plugin!`](../coffer_core/macro.plugin.html).
///
/// Contract:
/// - `legal_actions` is complete: every action it lists applies, and every action that applies is listed.
/// - `apply` validates before it changes the ruleset's own state; kernel changes are rolled back by the
///   adapter when it returns `Err`, so a refused action leaves the whole state (and its hash) unchanged.
/// - The state holds no `HashMap`/`HashSet` (state hashes encode it canonically) and draws randomness only
///   from its ledger.
pub trait Ruleset: Send + Sync + 'static {
    /// The whole state of one game, kernel ledger included.
    type State: Clone + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// One player action, read from JSON by serde.
    type Action: Clone
        + fmt::Debug
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// Configuration; `Default` gives the documented defaults. Use `#[serde(default, deny_unknown_fields)]`.
    type Config: Clone + fmt::Debug + Default + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Id, version and documentation.
    fn describe(&self) -> Description;

    /// A new game.
    ///
    /// # Errors
    /// [`SetupError`] for an unsupported player count or invalid configuration or content.
    fn new_game(
        &self,
        players: u16,
        seed: u64,
        config: &Self::Config,
    ) -> Result<Self::State, SetupError>;

    /// Appends every action `player` may take now to `out` (which arrives empty).
    fn legal_actions(&self, state: &Self::State, player: Owner, out: &mut Vec<Self::Action>);

    /// Appends the players who may have a legal action now to `out` (which arrives empty), each once, in
    /// any order. Every player with a legal action must be listed; listing one without is allowed but
    /// costs hosts an enumeration. The default lists every player; a ruleset that knows whose turn it is
    /// should say so, since random playouts and hosts ask only these players.
    fn to_act(&self, state: &Self::State, out: &mut Vec<Owner>) {
        out.extend((0..self.ledger(state).owners()).map(Owner));
    }

    /// Applies an action.
    ///
    /// # Errors
    /// [`ActionError`] when refused; see the trait's contract.
    fn apply(
        &self,
        state: &mut Self::State,
        player: Owner,
        action: &Self::Action,
    ) -> Result<(), ActionError>;

    /// The state's kernel ledger.
    fn ledger<'s>(&self, state: &'s Self::State) -> &'s Ledger;

    /// The state's kernel ledger, mutably.
    fn ledger_mut<'s>(&self, state: &'s mut Self::State) -> &'s mut Ledger;

    /// Whether and how the game ended.
    fn outcome(&self, state: &Self::State) -> Outcome;

    /// Fills the ruleset's part of `seat`'s [`Table`] (`None`: a spectator's): the clock
    /// ([`Table::clock`]), whose turn it is, who may act and why, who has passed, and the ruleset's own
    /// state as sections of rows. Put in only what `seat` may see: a seat's hidden state (cards held,
    /// a planned move) goes into that seat's table alone. The adapter adds the names of the phase and step,
    /// the pending choices and the outcome; when the ruleset lists nobody as acting, it lists
    /// [`to_act`](Self::to_act).
    fn table(&self, state: &Self::State, seat: Option<Owner>, table: &mut Table) {
        let _ = (state, seat, table);
    }

    /// Whether `seat` (`None`: a spectator) may see the resource `key` now: its value in
    /// [`DynGame::resources`] and the events that change it. The default shows everything; a ruleset with
    /// hidden information (cards held, a draw pile) hides those resources from everyone but their owner.
    fn visible(&self, state: &Self::State, key: Key, seat: Option<Owner>) -> bool {
        let _ = (state, key, seat);
        true
    }

    /// A display name for a resource of the ledger, without its owner ("Gold", "strength of the Ranger");
    /// `None` names it from the vocabulary's kind ([`Names::label`](coffer_kernel::Names::label)).
    fn label(&self, state: &Self::State, key: Key) -> Option<String> {
        let _ = (state, key);
        None
    }

    /// Checks the ruleset's own invariants (the default has none). The kernel's are not this method's
    /// business: hosts check the ledger first ([`DynGame::check_invariants`]), and a restored snapshot's
    /// ledger was checked when it was read.
    ///
    /// # Errors
    /// The first [`Violation`].
    fn check_invariants(&self, state: &Self::State) -> Result<(), Violation> {
        let _ = state;
        Ok(())
    }
}

/// Whose events [`DynGame::apply_json_reporting`] answers with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventsFor {
    /// The host itself: every event, unfiltered, as [`DynGame::events`] answers.
    Everyone,
    /// What a seat (`Some`) or a spectator (`None`) may see, as [`DynGame::events_for`] answers.
    Seat(Seat),
}

/// What applying an action answers in the same call ([`DynGame::apply_json_reporting`]).
#[derive(Clone, Debug, PartialEq)]
pub struct ActionReport<'g> {
    /// The state hash after the action.
    pub hash: StateHash,
    /// The action's events, for the audience asked.
    pub events: Vec<Event>,
    /// Who may act now, each with their legal-action count ([`DynGame::acting`]), borrowed from the game.
    pub acting: &'g [Acting],
}

/// A ruleset as the host sees it: object-safe, identical for static and runtime-loaded plugins.
pub trait DynRuleset: Send + Sync {
    /// Id, version and documentation.
    fn description(&self) -> &Description;

    /// A new game.
    ///
    /// # Errors
    /// [`SetupError`].
    fn new_game(&self, setup: &Setup) -> Result<Box<dyn DynGame>, SetupError>;

    /// A game from a [`DynGame::snapshot`].
    ///
    /// # Errors
    /// [`SetupError::Snapshot`] for bytes that are not a valid state of this ruleset.
    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError>;
}

/// A running game as the host sees it.
pub trait DynGame: Send {
    /// Number of players.
    fn players(&self) -> u16;

    /// Lists `player`'s legal actions (cached until the next change) and returns how many there are.
    fn legal_actions(&mut self, player: Owner) -> usize;

    /// The players who may have a legal action now (see [`Ruleset::to_act`]): every player with a legal
    /// action is among them. Cached until the next change.
    fn to_act(&mut self) -> &[Owner];

    /// The players who may act now ([`to_act`](Self::to_act), same order), each with how many legal actions
    /// they have (0 included): `to_act` and `legal_actions` for each of them in one call, which for a
    /// runtime-loaded game is one boundary crossing instead of one plus one per player. Every listed
    /// player's legal actions stay cached, so [`apply_legal`](Self::apply_legal) for any of them does not
    /// enumerate again. Cached until the next change. It does not change which list
    /// [`legal_action_json`](Self::legal_action_json) reads (call [`legal_actions`](Self::legal_actions)).
    fn acting(&mut self) -> &[Acting];

    /// The JSON of legal action `index` of the last [`legal_actions`](Self::legal_actions) call.
    fn legal_action_json(&self, index: usize) -> Option<String>;

    /// Applies legal action `index` of `player` (the hot path: no text).
    ///
    /// # Errors
    /// [`ActionError`]; the game is unchanged.
    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError>;

    /// [`apply_legal`](Self::apply_legal), then [`acting`](Self::acting) of the new state: one step of a
    /// random playout, and for a runtime-loaded game one boundary crossing instead of two.
    ///
    /// # Errors
    /// [`ActionError`] of the apply; the game is unchanged.
    fn apply_legal_then_acting(
        &mut self,
        player: Owner,
        index: usize,
    ) -> Result<&[Acting], ActionError>;

    /// A random playout of at most `max_actions` actions, run by the game on itself: the loop and the
    /// choices of [`random_playout`](crate::random_playout), with the same draws from `rng` (so the same
    /// seed plays the same game through either), and its calls direct. For a runtime-loaded game the
    /// whole playout is one boundary crossing instead of one per action. Returns how many actions were
    /// applied. `progress` is kept up to date as the playout goes (start it at
    /// [`Progress::default`]): after a panic it still says how many actions were applied and which one
    /// failed.
    ///
    /// # Errors
    /// [`PlayoutError::Refused`](crate::PlayoutError::Refused) for a listed action that was refused, with
    /// how many were applied before it; those stay applied, the refused one changed nothing.
    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<u64, PlayoutError>;

    /// Applies an action given as JSON.
    ///
    /// # Errors
    /// [`ActionError`]; the game is unchanged.
    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError>;

    /// [`apply_json`](Self::apply_json), then what a host answers a user with: the new
    /// [`state_hash`](Self::state_hash), the action's events for `events` ([`events`](Self::events) or
    /// [`events_for`](Self::events_for)) and [`acting`](Self::acting). For a runtime-loaded game this is
    /// one boundary crossing instead of four, and the action is parsed once. The default calls those
    /// methods in turn.
    ///
    /// # Errors
    /// [`ActionError`] of the apply; the game is unchanged.
    fn apply_json_reporting(
        &mut self,
        player: Owner,
        json: &str,
        events: EventsFor,
    ) -> Result<ActionReport<'_>, ActionError> {
        self.apply_json(player, json)?;
        let hash = self.state_hash();
        let events = match events {
            EventsFor::Everyone => self.events().to_vec(),
            EventsFor::Seat(seat) => self.events_for(seat),
        };
        Ok(ActionReport {
            hash,
            events,
            acting: self.acting(),
        })
    }

    /// The events of the last applied action.
    fn events(&mut self) -> &[Event];

    /// The stable hash of the whole state.
    fn state_hash(&self) -> StateHash;

    /// The whole state, written out.
    ///
    /// # Errors
    /// [`SetupError::Snapshot`] if it cannot be written.
    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError>;

    /// Whether and how the game ended.
    fn outcome(&self) -> Outcome;

    /// What `seat` (`None`: a spectator) sees of the game besides its resources (see [`Table`]).
    fn table(&self, seat: Option<Owner>) -> Table;

    /// The resources `seat` (`None`: a spectator) may see, labelled, for display: the ledger's amounts,
    /// then its charge tracks, token zones and permanents, each in creation order with its index.
    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView>;

    /// The events of the last applied action that `seat` (`None`: a spectator) may see: those of
    /// resources it may not see are left out, and another seat's secret notes carry no numbers (or are
    /// left out, when their vocabulary gives them no redacted text).
    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event>;

    /// Kernel and ruleset invariants.
    ///
    /// # Errors
    /// The first [`Violation`].
    fn check_invariants(&self) -> Result<(), Violation>;

    /// An independent copy.
    fn clone_game(&self) -> Box<dyn DynGame>;

    /// The in-process state, for serializing with any serde format; `None` for a runtime-loaded game,
    /// whose state lives in the plugin (use [`snapshot`](Self::snapshot)).
    fn state(&self) -> Option<&dyn erased_serde::Serialize>;

    /// The first failure of a call that has no error to return (legal actions, who may act, the outcome,
    /// the state hash, views, events), in words naming the library and the call: a runtime-loaded game
    /// whose plugin panicked there answered a neutral value (no legal action, ongoing, hash 0), which is
    /// no answer. `None` while every answer was real; always `None` for a statically linked game, whose
    /// panics unwind into the caller.
    fn failure(&self) -> Option<String> {
        None
    }
}

/// Wraps a typed [`Ruleset`] as a [`DynRuleset`].
pub struct Adapter<R: Ruleset> {
    ruleset: Arc<R>,
    description: Description,
    vocabulary: Arc<Vocabulary>,
}

impl<R: Ruleset> Adapter<R> {
    /// The adapter, shared.
    pub fn shared(ruleset: R) -> Arc<dyn DynRuleset> {
        let description = ruleset.describe();
        let vocabulary = Arc::new(description.vocabulary.clone());
        Arc::new(Adapter {
            ruleset: Arc::new(ruleset),
            description,
            vocabulary,
        })
    }

    fn game(&self, state: R::State, players: u16) -> Box<dyn DynGame> {
        Box::new(Game::<R>::new(
            Arc::clone(&self.ruleset),
            Arc::clone(&self.vocabulary),
            state,
            players,
        ))
    }
}

impl<R: Ruleset> DynRuleset for Adapter<R> {
    fn description(&self) -> &Description {
        &self.description
    }

    fn new_game(&self, setup: &Setup) -> Result<Box<dyn DynGame>, SetupError> {
        let (min, max) = (self.description.min_players, self.description.max_players);
        if setup.players < min || setup.players > max {
            return Err(SetupError::Players {
                got: setup.players,
                min,
                max,
            });
        }
        let config: R::Config = if setup.config.is_null() {
            R::Config::default()
        } else {
            serde_path_to_error::deserialize(&setup.config).map_err(|e| {
                let path = e.path().to_string();
                let inner = e.into_inner();
                if path == "." {
                    SetupError::Config(inner.to_string())
                } else {
                    SetupError::Config(format!("{path}: {inner}"))
                }
            })?
        };
        let mut state = self.ruleset.new_game(setup.players, setup.seed, &config)?;
        // Setup's events are not part of play. Taking them also frees the log: setup records many more
        // events than an action, and keeping that capacity doubled an idle command-tokens game.
        let ledger = self.ruleset.ledger_mut(&mut state);
        drop(ledger.take_events());
        ledger.shrink_to_fit();
        Ok(self.game(state, setup.players))
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let state: R::State = match format {
            Format::Json => {
                serde_json::from_slice(bytes).map_err(|e| SetupError::Snapshot(e.to_string()))?
            }
            Format::Binary => {
                postcard::from_bytes(bytes).map_err(|e| SetupError::Snapshot(e.to_string()))?
            }
        };
        // The ledger's invariants were checked as it was read (a `Ledger` cannot be deserialized
        // otherwise); the ruleset's remain.
        self.ruleset
            .check_invariants(&state)
            .map_err(|v| SetupError::Snapshot(v.to_string()))?;
        let players = self.ruleset.ledger(&state).owners();
        Ok(self.game(state, players))
    }
}

/// Bytes reserved up front for a binary snapshot (JSON reserves four times as many); a larger state grows
/// the buffer (a six-player command-tokens binary snapshot, 4,140 bytes, does twice: reserving its size
/// instead measured no difference).
const SNAPSHOT_CAPACITY: usize = 2048;

/// Where a JSON snapshot is written: a `Vec` that copies the few bytes of a number or a bracket in place,
/// where `Vec`'s own `io::Write` calls `memcpy` for every one of them (7% of a JSON snapshot's time).
struct JsonOut(Vec<u8>);

impl std::io::Write for JsonOut {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.len() <= 8 {
            self.0.reserve(8);
            for &b in bytes {
                self.0.push(b);
            }
        } else {
            self.0.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

struct Game<R: Ruleset> {
    ruleset: Arc<R>,
    vocabulary: Arc<Vocabulary>,
    state: R::State,
    players: u16,
    /// The listed legal actions of the players in `lists`, one player's after another.
    legal: Vec<R::Action>,
    /// Whose legal actions `legal` holds, where: at most one entry per player, emptied by every change.
    lists: Vec<Listed>,
    /// The entry of `lists` that [`DynGame::legal_action_json`] reads (the last `legal_actions` call).
    shown: Option<usize>,
    acting: Vec<Owner>,
    acting_fresh: bool,
    movers: Vec<Acting>,
    movers_fresh: bool,
    /// Where the last accepted action's events start in the ledger's log: the events before them are
    /// forgotten only once there are more than [`FORGET_AFTER`], not after every action.
    events_from: usize,
}

/// Older events the ledger's log may keep before the adapter forgets them (moving the newest action's
/// events to the front of the log): often enough that the log stays within
/// [`Ledger::ACTION_EVENTS`] for ordinary actions, rarely enough that
/// most actions move nothing.
const FORGET_AFTER: usize = Ledger::ACTION_EVENTS / 2;

/// Where one player's legal actions are in [`Game::legal`].
#[derive(Clone, Copy)]
struct Listed {
    player: Owner,
    start: usize,
    len: usize,
}

impl<R: Ruleset> Game<R> {
    fn new(ruleset: Arc<R>, vocabulary: Arc<Vocabulary>, state: R::State, players: u16) -> Game<R> {
        Game {
            ruleset,
            vocabulary,
            state,
            players,
            legal: Vec::new(),
            lists: Vec::new(),
            shown: None,
            acting: Vec::new(),
            acting_fresh: false,
            movers: Vec::new(),
            movers_fresh: false,
            events_from: 0,
        }
    }

    /// The last accepted action's events.
    #[inline]
    fn last_events(&self) -> &[Event] {
        let log = self.ruleset.ledger(&self.state).events();
        log.get(self.events_from..).unwrap_or(&[])
    }

    fn check_player(&self, player: Owner) -> Result<(), ActionError> {
        if player.0 >= self.players {
            return Err(ActionError::NoSuchPlayer {
                player: player.0,
                players: self.players,
            });
        }
        Ok(())
    }

    /// The entry of `lists` for `player`, enumerating their legal actions if they are not listed yet.
    ///
    /// The look-up is inlined into its callers and the enumeration is not: applying a listed action
    /// finds its list without the enumeration's register saves (1.5% of a wide-board playout's
    /// instructions).
    #[inline(always)]
    fn list(&mut self, player: Owner) -> usize {
        match self.lists.iter().position(|l| l.player == player) {
            Some(i) => i,
            None => self.enumerate(player),
        }
    }

    /// Lists `player`'s legal actions in a new entry of `lists`, and returns it.
    #[inline(never)]
    fn enumerate(&mut self, player: Owner) -> usize {
        let start = self.legal.len();
        if player.0 < self.players {
            self.ruleset
                .legal_actions(&self.state, player, &mut self.legal);
        }
        self.lists.push(Listed {
            player,
            start,
            len: self.legal.len() - start,
        });
        self.lists.len() - 1
    }

    /// Forgets every cached answer: the state changed.
    fn changed(&mut self) {
        self.legal.clear();
        self.lists.clear();
        self.shown = None;
        self.acting_fresh = false;
        self.movers_fresh = false;
    }

    #[inline(always)]
    fn apply_action(&mut self, player: Owner, action: &R::Action) -> Result<(), ActionError> {
        // The last accepted action's events stay in the ledger's log (they are what `events` answers,
        // from `events_from`) until the next action is accepted: a refusal, rolled back to the
        // transaction's start, leaves them; an accepted action's events replace them. Older events are
        // forgotten (the newest moved to the front) only once there are more than `FORGET_AFTER`: one
        // move every few actions instead of one per action.
        let before = self.ruleset.ledger(&self.state).events().len();
        crate::apply_atomically(&*self.ruleset, &mut self.state, player, action)?;
        if before > FORGET_AFTER {
            self.ruleset
                .ledger_mut(&mut self.state)
                .forget_events(before);
            self.events_from = 0;
        } else {
            self.events_from = before;
        }
        self.changed();
        // One relaxed load when nothing listens at DEBUG; the publishing itself is out of line.
        if tracing::level_enabled!(tracing::Level::DEBUG)
            && tracing::enabled!(target: "coffer::event", tracing::Level::DEBUG)
        {
            self.publish();
        }
        Ok(())
    }

    /// Publishes the last accepted action's events to `tracing` (target `coffer::event`, level DEBUG)
    /// as a spectator reads them ([`DynGame::events_for`] with no seat): what the ruleset hides from
    /// spectators ([`Ruleset::visible`], secret notes) is left out or redacted, so a log never holds a
    /// seat's hidden state, whatever its level. Setup's events are not published.
    #[cold]
    #[inline(never)]
    fn publish(&self) {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        for e in self.last_events() {
            if let Some(e) = as_seen_by(r, s, v, e, None) {
                tracing::debug!(target: "coffer::event", owner = %e.key.owner, kind = e.key.kind.0,
                    subject = e.key.subject, change = ?e.change, cause = ?e.cause, "resource changed");
            }
        }
    }
}

/// `e` as `seat` (`None`: a spectator) sees it: unchanged, redacted (a secret note of another owner
/// whose vocabulary gives redacted text), or not at all (a resource the ruleset hides from `seat`, a
/// secret note without redacted text).
fn as_seen_by<R: Ruleset>(
    r: &R,
    s: &R::State,
    v: &Vocabulary,
    e: &Event,
    seat: Option<Owner>,
) -> Option<Event> {
    if let Change::Note { code, .. } = e.change {
        match v.notes.get(usize::from(code)) {
            Some(term) if term.secret && seat != Some(e.key.owner) => {
                return (!term.redacted.is_empty()).then_some(Event {
                    change: Change::Note { code, args: [0; 3] },
                    ..*e
                });
            }
            _ => {}
        }
    }
    (e.key.kind == coffer_kernel::Kind::CLOCK || r.visible(s, e.key, seat)).then_some(*e)
}

impl<R: Ruleset> DynGame for Game<R> {
    fn players(&self) -> u16 {
        self.players
    }

    fn legal_actions(&mut self, player: Owner) -> usize {
        let i = self.list(player);
        self.shown = Some(i);
        self.lists[i].len
    }

    fn to_act(&mut self) -> &[Owner] {
        if !self.acting_fresh {
            self.acting.clear();
            self.ruleset.to_act(&self.state, &mut self.acting);
            self.acting_fresh = true;
        }
        &self.acting
    }

    // Always inlined, as `apply_legal` and `apply_action`: a playout's step calls them directly, and each
    // out-of-line frame cost 15-20 instructions of register saves per action (2.5% of a wide-board
    // playout's instructions for the three).
    #[inline(always)]
    fn acting(&mut self) -> &[Acting] {
        if !self.movers_fresh {
            self.to_act();
            self.movers.clear();
            for k in 0..self.acting.len() {
                let player = self.acting[k];
                let i = self.list(player);
                self.movers.push(Acting {
                    player: player.0,
                    legal: self.lists[i].len,
                });
            }
            self.movers_fresh = true;
        }
        &self.movers
    }

    fn legal_action_json(&self, index: usize) -> Option<String> {
        let listed = self.lists.get(self.shown?)?;
        if index >= listed.len {
            return None;
        }
        self.legal
            .get(listed.start + index)
            .and_then(|a| serde_json::to_string(a).ok())
    }

    #[inline(always)]
    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError> {
        self.check_player(player)?;
        let i = self.list(player);
        self.shown = Some(i);
        let listed = self.lists[i];
        // `index` first: `start + index` could overflow for a huge index.
        if index >= listed.len {
            return Err(ActionError::NoSuchLegalAction {
                player,
                index,
                count: listed.len,
            });
        }
        let action = self.legal[listed.start + index].clone();
        self.apply_action(player, &action)
    }

    #[inline]
    fn apply_legal_then_acting(
        &mut self,
        player: Owner,
        index: usize,
    ) -> Result<&[Acting], ActionError> {
        self.apply_legal(player, index)?;
        Ok(self.acting())
    }

    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<u64, PlayoutError> {
        random_playout(self, rng, max_actions, &mut Track(progress))
    }

    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError> {
        self.check_player(player)?;
        let action: R::Action =
            serde_json::from_str(json).map_err(|e| ActionError::Malformed(e.to_string()))?;
        self.apply_action(player, &action)
    }

    fn apply_json_reporting(
        &mut self,
        player: Owner,
        json: &str,
        events: EventsFor,
    ) -> Result<ActionReport<'_>, ActionError> {
        // One parse, and no dynamic call: the parts are this type's own methods.
        self.apply_json(player, json)?;
        let events = match events {
            EventsFor::Everyone => self.events().to_vec(),
            EventsFor::Seat(seat) => self.events_for(seat),
        };
        Ok(ActionReport {
            hash: state_hash(&self.state),
            events,
            acting: self.acting(),
        })
    }

    fn events(&mut self) -> &[Event] {
        self.last_events()
    }

    fn state_hash(&self) -> StateHash {
        state_hash(&self.state)
    }

    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError> {
        let error = |e: &dyn fmt::Display| SetupError::Snapshot(e.to_string());
        match format {
            Format::Json => {
                let mut out = JsonOut(Vec::with_capacity(SNAPSHOT_CAPACITY * 4));
                serde_json::to_writer(&mut out, &self.state).map_err(|e| error(&e))?;
                Ok(out.0)
            }
            // The `Extend` flavor writes bytes in place; the default `Vec` flavor copies each varint
            // with a `memcpy` call (a third of the round-trip's time in a profile).
            Format::Binary => {
                postcard::to_extend(&self.state, Vec::with_capacity(SNAPSHOT_CAPACITY))
                    .map_err(|e| error(&e))
            }
        }
    }

    fn outcome(&self) -> Outcome {
        self.ruleset.outcome(&self.state)
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        let mut table = Table::new(seat);
        r.table(s, seat, &mut table);
        table.round_name = v.round().to_owned();
        if let Some(phase) = &mut table.phase {
            phase.name = v.phase(phase.number).into_owned();
        }
        if let Some(step) = &mut table.step {
            step.name = v.step(step.number).into_owned();
        }
        table.outcome = r.outcome(s);
        if table.acting.is_empty() && table.outcome == Outcome::Ongoing {
            let mut acting = Vec::new();
            r.to_act(s, &mut acting);
            table.acting = acting
                .into_iter()
                .map(|seat| Mover {
                    seat,
                    why: String::new(),
                })
                .collect();
        }
        let pending = r.ledger(s).pending();
        if !pending.is_empty() {
            let mut names = Names::new(v);
            for d in pending {
                let label = r
                    .label(s, d.key)
                    .unwrap_or_else(|| names.label(d.key).into_owned());
                names.label_key(d.key, label.clone());
                table.pending.push(Pending {
                    owner: d.key.owner,
                    key: d.key,
                    excess: d.excess,
                    text: names.demand(d),
                    label,
                });
            }
        }
        table
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        let r = &*self.ruleset;
        let s = &self.state;
        let l = r.ledger(s);
        let names = Names::new(&self.vocabulary);
        let label = |key: Key| {
            r.label(s, key)
                .unwrap_or_else(|| names.label(key).into_owned())
        };
        let seen = |key: Key| r.visible(s, key, seat);
        let mut out = Vec::new();
        for (i, a) in l.amounts().iter().enumerate() {
            let key = a.key();
            if seen(key) {
                out.push(ResourceView::Amount {
                    label: label(key),
                    key,
                    index: i as u32,
                    value: a.value(),
                    floor: a.floor(),
                    cap: a.cap(),
                    lifetime: a.lifetime(),
                });
            }
        }
        for (i, t) in l.tracks().iter().enumerate() {
            let key = t.key();
            if seen(key) {
                out.push(ResourceView::Charges {
                    label: label(key),
                    key,
                    index: i as u32,
                    active: t.active(),
                    limit: t.limit(),
                    unrecoverable: t.unrecoverable(),
                });
            }
        }
        for (z, zone) in l.zone_entries() {
            if seen(zone.key) {
                out.push(ResourceView::Tokens {
                    label: label(zone.key),
                    key: zone.key,
                    index: z.index() as u32,
                    face: zone.face,
                    counts: l.zone_tokens(z).to_vec(),
                    game: l.tokens(z, Owner::GAME),
                });
            }
        }
        for (i, p) in l.permanents().iter().enumerate() {
            let key = p.key();
            if seen(key) {
                out.push(ResourceView::Permanent {
                    label: label(key),
                    key,
                    index: i as u32,
                    exhausted: p.exhausted(),
                });
            }
        }
        out
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        let events = self.last_events();
        let mut out = Vec::with_capacity(events.len());
        out.extend(events.iter().filter_map(|e| as_seen_by(r, s, v, e, seat)));
        out
    }

    fn check_invariants(&self) -> Result<(), Violation> {
        self.ruleset.ledger(&self.state).check_invariants()?;
        self.ruleset.check_invariants(&self.state)
    }

    fn clone_game(&self) -> Box<dyn DynGame> {
        let mut game = Game::<R>::new(
            Arc::clone(&self.ruleset),
            Arc::clone(&self.vocabulary),
            self.state.clone(),
            self.players,
        );
        game.events_from = self.events_from;
        Box::new(game)
    }

    fn state(&self) -> Option<&dyn erased_serde::Serialize> {
        Some(&self.state)
    }
}

/// A statically linked ruleset, registered by [`plugin!`](../coffer_core/macro.plugin.html) through `inventory`.
pub struct StaticRuleset {
    build: fn() -> Arc<dyn DynRuleset>,
}

impl StaticRuleset {
    /// A registration from a constructor.
    pub const fn new(build: fn() -> Arc<dyn DynRuleset>) -> StaticRuleset {
        StaticRuleset { build }
    }

    /// Builds the ruleset.
    pub fn build(&self) -> Arc<dyn DynRuleset> {
        (self.build)()
    }
}

inventory::collect!(StaticRuleset);

/// Every ruleset registered in this binary (or, inside a plugin library, in that library).
///
/// A plugin crate that nothing names is not linked: name it (`use coffer_charges as _;`).
pub fn static_rulesets() -> Vec<Arc<dyn DynRuleset>> {
    inventory::iter::<StaticRuleset>
        .into_iter()
        .map(StaticRuleset::build)
        .collect()
}

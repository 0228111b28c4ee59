//! The object-safe side hosts drive: [`DynRuleset`] and [`DynGame`], whoever made the game (a statically
//! linked ruleset or a library loaded at runtime), with what crosses it: [`ResourceView`], [`Acting`],
//! [`EventsFor`] and [`ActionReport`].

use crate::{
    ActionError, Description, Format, Outcome, PlayoutError, Progress, Setup, SetupError, Table,
};
use coffer_kernel::Event;
use coffer_kernel::GameRng;
use coffer_kernel::Scope;
use coffer_kernel::Seat;
use coffer_kernel::StateHash;
use coffer_kernel::Violation;
use coffer_kernel::{Key, Owner};
use serde::{Deserialize, Serialize};

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

    /// The players who may have a legal action now (see [`Ruleset::to_act`](crate::Ruleset::to_act)): every player with a legal
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

    /// Sets this game up again from `setup`, as [`DynRuleset::new_game`] would, reusing the game's
    /// allocations: what a host playing many games one after another (random playouts, bots,
    /// simulations) calls instead of setting up a new game each time. Everything the game kept is
    /// forgotten (legal lists, events, what could be taken back); the state hash is `new_game`'s. For a
    /// runtime-loaded game it is one boundary crossing, and the library keeps its allocations too.
    ///
    /// # Errors
    /// What `new_game` answers for `setup`; the game is unchanged.
    fn reset(&mut self, setup: &Setup) -> Result<(), SetupError>;

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

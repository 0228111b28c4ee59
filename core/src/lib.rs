//! # coffer-core
//!
//! Coffer's resource kernel and plugin API. Depend on this crate to write a ruleset (a game module);
//! to host games, you probably want `coffer-host` instead.
//!
//! The kernel is a [`Ledger`]: bounded amounts (K1) with lifetimes (K2), two-faced charge tracks (K3),
//! finite token supplies (K4), exhaustion (K5), limits that wait for a choice (K6), split and atomic
//! costs (K7, K8), a typed [`Event`] for every change (K9), the clock's upkeep (K10) and state-based
//! checks (K11). It knows no game: rulesets give meaning to its [`Kind`]s.
//!
//! ```
//! use coffer_core::{AmountSpec, Cause, Key, Kind, Ledger, Owner, Scope};
//!
//! let mut ledger = Ledger::new(1, 0);
//! let me = Owner(0);
//! // A pool that empties at the end of every phase (K2).
//! let pool = ledger.add_amount(AmountSpec::new(Key::new(me, Kind(1), 0)).lasts(Scope::Phase)).unwrap();
//! ledger.gain(pool, 3, Cause::Setup).unwrap();
//! ledger.end_scope(Scope::Phase);
//! assert_eq!(ledger.value(pool), 0);
//! ```
//!
//! Rulesets implement [`Ruleset`] and register with [`plugin!`]; the host drives them as
//! [`DynRuleset`] / [`DynGame`], the same way whether they were linked statically or loaded at runtime.

/// The C ABI a ruleset library exports (`coffer-abi`): the one crate of core with unsafe code.
pub use coffer_abi as abi;

pub use coffer_kernel::{
    Amount, AmountId, AmountSpec, Bound, Cause, Change, ChargeOp, Clock, Contribution, Demand,
    Event, Gained, GameRng, Generic, Key, Kind, Labelled, LaidOut, Layout, Ledger, Mark, Measure,
    Names, NoteTerm, Owner, Paid, Part, Payout, Permanent, PermanentId, Placement, Recurrence,
    Refusal, Scope, Seat, StateHash, Term, TokenOp, TokenRoute, Track, TrackId, TrackSpec, Unlaid,
    Violation, Vocabulary, Zone, ZoneId, ZoneSet, plural, state_hash, unreadable,
};
pub use coffer_sdk::{
    Acting, ActionError, ActionReport, Adapter, ContentError, ContentTable, DEFAULT, Description,
    Doc, DynGame, DynRuleset, EventsFor, FORFEIT, Format, HostAction, Label, Mover, Named, Observe,
    Outcome, Pending, PlayoutError, Progress, ResourceView, Row, Ruleset, Section, Setup,
    SetupError, Shared, SharedContent, StaticRuleset, Table, Text, UNDO, UNDO_DEPTH, Undo,
    action_codes, apply_atomically, check_content_id, choose, numbered_codes, random_playout,
    read_content, static_rulesets, testing,
};

#[doc(hidden)]
pub use coffer_sdk::inventory;

/// The `erased-serde` crate, re-exported because [`DynGame::state`] names its `Serialize` trait.
pub use coffer_sdk::erased_serde;

#[doc(inline)]
pub use coffer_abi::plugin;

/// The crate README's code blocks, compiled and run as doctests so that the README cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

//! # coffer-sdk
//!
//! The plugin SDK over the kernel (`coffer-kernel`): the [`Ruleset`] trait a game module implements, the
//! [`Adapter`] that hosts drive as [`DynRuleset`] / [`DynGame`], descriptions, tables, content shared by
//! key, action codes ([`action_codes!`]), and the helpers every ruleset would otherwise write again
//! (winners by score, an action applied atomically, random playouts, the test harness). It knows no
//! loading mechanism: the C ABI is `coffer-abi`.
//!
//! You probably want `coffer-core` instead: the facade a ruleset depends on, which re-exports this crate's
//! items under the same names.

mod adapter;
mod codes;
mod content;
mod describe;
mod dynamic;
mod errors;
mod helpers;
mod outcome;
mod playout;
mod plugin;
mod setup;
mod shared;
mod statics;
mod table;

pub use adapter::{Adapter, DEFAULT, FORFEIT, HostAction, UNDO, UNDO_DEPTH};
pub use content::{ContentError, check_content_id, read_content};
pub use describe::{Description, Doc};
pub use dynamic::{Acting, ActionReport, DynGame, DynRuleset, EventsFor, ResourceView};
pub use errors::{ActionError, SetupError};
pub use helpers::{apply_atomically, testing};
pub use outcome::Outcome;
pub use playout::{Observe, PlayoutError, Progress, choose, random_playout};
pub use plugin::Ruleset;
pub use setup::{Format, Setup};
pub use shared::{ContentTable, Shared, SharedContent};
pub use statics::{StaticRuleset, static_rulesets};
pub use table::{Label, Mover, Named, Pending, Row, Section, Table, Text, Undo};

#[doc(hidden)]
pub use inventory;

/// The `erased-serde` crate, re-exported because [`DynGame::state`] names its `Serialize` trait.
pub use erased_serde;

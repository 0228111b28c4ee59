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

#[allow(unsafe_code)]
pub mod abi;
mod kernel;
mod sdk;

// The modules by their short paths, for the crate's own code (`crate::ledger::...`).
pub(crate) use kernel::{clock, error, event, hash, id, ledger, rng, rows, spec};
pub(crate) use sdk::{playout, plugin, shared, table, vocab};

pub use abi::Acting;
pub use clock::{Clock, Scope};
pub use error::Refusal;
pub use event::{Bound, Cause, Change, ChargeOp, Demand, Event, Measure, TokenOp};
pub use hash::{StateHash, state_hash};
pub use id::{AmountId, Key, Kind, Owner, PermanentId, TrackId, ZoneId};
pub use ledger::{
    Gained, Generic, LaidOut, Layout, Ledger, Mark, Paid, Part, Payout, Placement, Unlaid,
    Violation, ZoneSet,
};
pub use playout::{Observe, PlayoutError, Progress, choose, random_playout};
pub use plugin::{
    ActionError, ActionReport, Adapter, Description, Doc, DynGame, DynRuleset, EventsFor, Format,
    Outcome, ResourceView, Ruleset, Setup, SetupError, StaticRuleset, static_rulesets,
};
pub use rng::GameRng;
pub use sdk::content::{ContentError, check_content_id, read_content};
pub use sdk::helpers::{apply_atomically, testing};
pub use shared::{ContentTable, Shared, SharedContent};
pub use spec::{Amount, AmountSpec, Contribution, Permanent, Recurrence, Track, TrackSpec, Zone};
pub use table::{Label, Mover, Named, Pending, Row, Section, Table, Text};
pub use vocab::{Names, NoteTerm, Seat, Term, Vocabulary, plural, unreadable};

#[doc(hidden)]
pub use inventory;

/// The `erased-serde` crate, re-exported because [`DynGame::state`] names its `Serialize` trait.
pub use erased_serde;

/// Registers one or more rulesets: statically (through `inventory`) for a host that links the crate, and
/// exported for hosts that load the crate's `cdylib` at runtime.
///
/// Invoke it once per crate (list every ruleset of the crate in that one call): it exports the crate's
/// [`abi::Declaration`] under the symbol `coffer_plugin_<crate name>` (see [`abi`]), which a second
/// invocation would define twice.
///
/// ```
/// use coffer_core::{ActionError, Description, Ledger, Outcome, Owner, Ruleset, SetupError};
///
/// struct Solitaire;
///
/// impl Ruleset for Solitaire {
///     type State = Ledger;
///     type Action = ();
///     type Config = ();
///     fn describe(&self) -> Description {
///         Description::new("solitaire", "0.1.0", "a ruleset with nothing to do")
///     }
///     fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<Ledger, SetupError> {
///         Ok(Ledger::new(players, seed))
///     }
///     fn legal_actions(&self, _: &Ledger, _: Owner, _: &mut Vec<()>) {}
///     fn apply(&self, _: &mut Ledger, _: Owner, _: &()) -> Result<(), ActionError> {
///         Err(ActionError::Illegal("nothing to do".into()))
///     }
///     fn ledger<'s>(&self, state: &'s Ledger) -> &'s Ledger { state }
///     fn ledger_mut<'s>(&self, state: &'s mut Ledger) -> &'s mut Ledger { state }
///     fn outcome(&self, _: &Ledger) -> Outcome { Outcome::Ongoing }
/// }
///
/// coffer_core::plugin!(Solitaire);
///
/// fn main() {
///     let found = coffer_core::static_rulesets();
///     assert!(found.iter().any(|r| r.description().key() == "solitaire@0.1.0"));
/// }
/// ```
#[macro_export]
macro_rules! plugin {
    ($($ruleset:expr),+ $(,)?) => {
        $(
            $crate::inventory::submit! {
                $crate::StaticRuleset::new(|| $crate::Adapter::shared($ruleset))
            }
        )+
        const _: () = {
            /// The runtime-loading declaration of this crate (see `coffer_core::abi`).
            #[allow(unsafe_code)]
            #[unsafe(export_name = concat!("coffer_plugin_", env!("CARGO_CRATE_NAME")))]
            pub static COFFER_PLUGIN_DECLARATION: $crate::abi::Declaration = $crate::abi::Declaration::CURRENT;
        };
    };
}

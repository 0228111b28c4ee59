//! # coffer-kernel
//!
//! Coffer's resource kernel: the [`Ledger`] and its records, events, the clock, ids, refusals, the seeded
//! RNG, the state hash and the words that name them ([`Names`], [`Vocabulary`]). It knows no ruleset, no
//! host and no loading mechanism: everything a game's resources are made of, and nothing about how a game is
//! described, hosted or loaded (that is `coffer-sdk` and `coffer-abi`).
//!
//! You probably want `coffer-core` instead: the facade a ruleset depends on, which re-exports this crate's
//! items under the same names.
//!
//! ```
//! use coffer_kernel::{AmountSpec, Cause, Key, Kind, Ledger, Owner, Scope};
//!
//! let mut ledger = Ledger::new(1, 0);
//! let pool = ledger.add_amount(AmountSpec::new(Key::new(Owner(0), Kind(1), 0)).lasts(Scope::Phase)).unwrap();
//! ledger.gain(pool, 3, Cause::Setup).unwrap();
//! ledger.end_scope(Scope::Phase);
//! assert_eq!(ledger.value(pool), 0);
//! ```

mod clock;
mod error;
mod event;
mod hash;
mod id;
mod ledger;
mod names;
mod rng;
mod rows;
mod spec;
mod vocab;

pub use clock::{Clock, Scope};
pub use error::Refusal;
pub use event::{Bound, Cause, Change, ChargeOp, Demand, Event, Measure, TokenOp};
pub use hash::{StateHash, state_hash};
pub use id::{AmountId, Key, Kind, Owner, PermanentId, TrackId, ZoneId};
pub use ledger::{
    Gained, Generic, LaidOut, Layout, Ledger, Mark, Paid, Part, Payout, Placement, TokenRoute,
    Unlaid, Violation, ZoneSet,
};
pub use names::{Labelled, Names, Seat, plural, unreadable};
pub use rng::GameRng;
pub use spec::{Amount, AmountSpec, Contribution, Permanent, Recurrence, Track, TrackSpec, Zone};
pub use vocab::{NoteTerm, Term, Vocabulary};

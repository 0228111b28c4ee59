//! The stable kernel: the [`Ledger`](crate::Ledger) and its records, events, the clock, ids, refusals,
//! the seeded RNG and the state hash. It knows no ruleset and no host: everything a game's resources are
//! made of, and nothing about how a game is described, hosted or loaded (that is the SDK, `sdk/`).

pub(crate) mod clock;
pub(crate) mod error;
pub(crate) mod event;
pub(crate) mod hash;
pub(crate) mod id;
pub(crate) mod ledger;
pub(crate) mod rng;
pub(crate) mod rows;
pub(crate) mod spec;

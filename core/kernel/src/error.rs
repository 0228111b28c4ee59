//! Why the kernel refused an operation. A refusal never changes anything.

use crate::id::{Key, Owner};

/// A refused kernel operation. The ledger is exactly as it was before the call.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Refusal {
    /// A handle that does not name anything in this ledger.
    NoSuchResource {
        /// What kind of handle.
        what: std::borrow::Cow<'static, str>,
        /// Its index.
        index: u32,
    },
    /// K1.2: a voluntary spend above the amount.
    Insufficient {
        /// The resource.
        key: Key,
        /// What was asked.
        need: u64,
        /// What is there (above the floor).
        have: u64,
    },
    /// K3.2: a spend of more charges than are active.
    InsufficientCharges {
        /// The track.
        key: Key,
        /// Charges asked.
        need: u32,
        /// Charges active.
        active: u32,
    },
    /// K3.4: a recovery demanded as a cost when nothing is inactive.
    NothingToRecover {
        /// The track.
        key: Key,
        /// Its limit.
        limit: u32,
    },
    /// K3.6: the track is marked "cannot be recovered".
    Unrecoverable {
        /// The track.
        key: Key,
    },
    /// K4.1: a move of more tokens than the source zone holds.
    NotEnoughTokens {
        /// Whose tokens.
        owner: Owner,
        /// The source zone.
        zone: Key,
        /// Tokens asked.
        need: u32,
        /// Tokens there.
        have: u32,
    },
    /// K5: activating a permanent that is already exhausted.
    Exhausted {
        /// The permanent.
        key: Key,
    },
    /// K6: a choice is pending and must be made first.
    AwaitingChoice {
        /// Who must choose.
        owner: Owner,
        /// What is over its limit.
        key: Key,
        /// How many must go.
        excess: u32,
    },
    /// K7: an allocation that does not sum to the cost.
    BadAllocation {
        /// What the allocation sums to (saturating).
        sum: u64,
        /// The cost.
        need: u64,
    },
    /// K1.6: a result that does not fit the kernel's integers.
    Overflow {
        /// The operation.
        op: std::borrow::Cow<'static, str>,
        /// Its input.
        n: u64,
        /// The resource.
        key: Key,
    },
    /// An argument outside what the operation accepts (a floor above a cap, a zero-sized supply...).
    Invalid(String),
}

impl std::error::Error for Refusal {}

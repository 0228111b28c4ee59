//! Handles: who owns a resource, what kind it is, and typed indices into a [`Ledger`](crate::Ledger).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Who owns a resource or a token: a player (`0..players`) or the game itself ([`Owner::GAME`]).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Owner(pub u16);

impl Owner {
    /// The game itself: owner of shared things such as board places or a shared track.
    pub const GAME: Owner = Owner(u16::MAX);

    /// The owner's index as a `usize`, for indexing per-player tables.
    #[inline]
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// Whether this is a player rather than [`Owner::GAME`].
    #[inline]
    pub fn is_player(self) -> bool {
        self != Owner::GAME
    }
}

impl fmt::Debug for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Owner::GAME {
            f.write_str("game")
        } else {
            write!(f, "p{}", self.0)
        }
    }
}

/// A ruleset-defined kind of resource (for example "gold" or "supply pool").
///
/// The kernel never interprets it; rulesets use it to label resources and events.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Kind(pub u16);

impl Kind {
    /// The kind of the clock's own events (scopes ending, draws from the random generator).
    pub const CLOCK: Kind = Kind(u16::MAX);
}

/// The identity of a resource as events and views report it: owner, kind and a ruleset-defined subject
/// (a card instance, a place on the board, a piece...; `0` when there is only one).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct Key {
    /// Who owns the resource.
    pub owner: Owner,
    /// What kind of resource it is.
    pub kind: Kind,
    /// Which one of that kind (ruleset-defined).
    pub subject: u32,
}

impl Key {
    /// A key from its three parts.
    #[inline]
    pub const fn new(owner: Owner, kind: Kind, subject: u32) -> Key {
        Key {
            owner,
            kind,
            subject,
        }
    }
}

macro_rules! handle {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub(crate) u32);

        impl $name {
            /// The handle's index in its ledger table.
            #[inline]
            pub fn index(self) -> usize {
                self.0 as usize
            }

            /// What this handle names, for error messages.
            pub const WHAT: &'static str = $what;
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} #{}", $what, self.0)
            }
        }
    };
}

handle!(
    /// A bounded amount in a [`Ledger`](crate::Ledger) (K1, K2).
    AmountId,
    "amount"
);
handle!(
    /// A two-faced charge track in a [`Ledger`](crate::Ledger) (K3).
    TrackId,
    "charge track"
);
handle!(
    /// A token zone in a [`Ledger`](crate::Ledger): a reserve, a pool, a board place (K4).
    ZoneId,
    "zone"
);
handle!(
    /// A permanent that can be ready or exhausted (K5).
    PermanentId,
    "permanent"
);

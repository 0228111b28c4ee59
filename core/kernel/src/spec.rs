//! The records a [`Ledger`](crate::Ledger) keeps, and the specs that create them.

use crate::clock::Scope;
use crate::id::Key;
use serde::{Deserialize, Serialize};

/// K1/K2: a bounded amount: a value between a floor and an optional cap, living for a scope of the clock.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Amount {
    pub(crate) key: Key,
    pub(crate) value: i64,
    pub(crate) floor: i64,
    pub(crate) cap: Option<i64>,
    pub(crate) lifetime: Scope,
    pub(crate) on_expiry: i64,
}

impl Amount {
    /// Owner, kind and subject.
    pub fn key(&self) -> Key {
        self.key
    }
    /// The current value.
    pub fn value(&self) -> i64 {
        self.value
    }
    /// The floor (K1).
    pub fn floor(&self) -> i64 {
        self.floor
    }
    /// The cap, if any (K1).
    pub fn cap(&self) -> Option<i64> {
        self.cap
    }
    /// How much could be spent now: the value above the floor.
    pub fn available(&self) -> u64 {
        self.value.abs_diff(self.floor)
    }
    /// The scope whose end empties or resets it (K2); [`Scope::Game`] for a persistent amount.
    pub fn lifetime(&self) -> Scope {
        self.lifetime
    }
}

/// How to create an [`Amount`]: `AmountSpec::new(key).cap(20)` is a capped purse, `.lasts(Scope::Phase)` a pool.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct AmountSpec {
    /// Owner, kind and subject.
    pub key: Key,
    /// The starting value (clamped into `[floor, cap]` is refused: it must already lie there).
    pub start: i64,
    /// The floor; 0 unless set.
    pub floor: i64,
    /// The cap; none unless set.
    pub cap: Option<i64>,
    /// When it expires (K2); [`Scope::Game`] never does.
    pub lifetime: Scope,
    /// On expiry, reset to `start` instead of emptying to the floor.
    pub resets: bool,
}

impl AmountSpec {
    /// A persistent amount from 0 with floor 0 and no cap.
    pub fn new(key: Key) -> AmountSpec {
        AmountSpec {
            key,
            start: 0,
            floor: 0,
            cap: None,
            lifetime: Scope::Game,
            resets: false,
        }
    }
    /// Starting value.
    pub fn start(mut self, start: i64) -> Self {
        self.start = start;
        self
    }
    /// Floor.
    pub fn floor(mut self, floor: i64) -> Self {
        self.floor = floor;
        self
    }
    /// Cap.
    pub fn cap(mut self, cap: i64) -> Self {
        self.cap = Some(cap);
        self
    }
    /// Empties at the end of `scope` (K2).
    pub fn lasts(mut self, scope: Scope) -> Self {
        self.lifetime = scope;
        self
    }
    /// Resets to its start value, rather than emptying, when its lifetime ends.
    pub fn resets(mut self) -> Self {
        self.resets = true;
        self
    }
}

/// How a track's recurrence is worked out from its capacity sources (K3.5, K3.7).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Recurrence {
    /// The sum of every source's recurrence.
    Sum,
    /// The highest recurrence among the sources (a rule of charges that recur by their best source).
    Max,
    /// A fixed recurrence, whatever the sources print.
    Fixed(i32),
}

/// K3: a two-faced charge track: `limit` charges, `active` of them active side up.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Track {
    pub(crate) key: Key,
    pub(crate) limit: u32,
    pub(crate) active: u32,
    pub(crate) recurs_at: Scope,
    pub(crate) recurrence: Recurrence,
    pub(crate) unrecoverable: bool,
}

impl Track {
    /// Owner, kind and subject.
    pub fn key(&self) -> Key {
        self.key
    }
    /// The charge limit: the sum of every source's capacity.
    pub fn limit(&self) -> u32 {
        self.limit
    }
    /// Active charges.
    pub fn active(&self) -> u32 {
        self.active
    }
    /// Inactive charges.
    pub fn inactive(&self) -> u32 {
        // Saturating: a `Track` deserialized on its own has not been checked against its limit.
        self.limit.saturating_sub(self.active)
    }
    /// Whether the track is marked "cannot be recovered" (K3.6).
    pub fn unrecoverable(&self) -> bool {
        self.unrecoverable
    }
    /// The scope whose end triggers recurrence.
    pub fn recurs_at(&self) -> Scope {
        self.recurs_at
    }
}

/// One source of a track's capacity and recurrence (K3.7): a card and the cards attached to it feed one shared track.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Contribution {
    /// The track fed.
    pub track: crate::id::TrackId,
    /// Ruleset-defined source (a card instance).
    pub source: u32,
    /// Charges it adds to the limit.
    pub capacity: u32,
    /// Its printed recurrence (signed).
    pub recurrence: i32,
}

/// How to create a [`Track`].
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct TrackSpec {
    /// Owner, kind and subject.
    pub key: Key,
    /// The printed limit of the track's own card (its first capacity source, with source id `key.subject`).
    pub limit: u32,
    /// The printed recurrence of the track's own card (signed, K3.5).
    pub recurrence: i32,
    /// How recurrence combines over sources.
    pub policy: Recurrence,
    /// When recurrence happens.
    pub recurs_at: Scope,
    /// "Cannot be recovered" (K3.6).
    pub unrecoverable: bool,
}

impl TrackSpec {
    /// A track of `limit` charges that does not recur and sums its sources.
    pub fn new(key: Key, limit: u32) -> TrackSpec {
        TrackSpec {
            key,
            limit,
            recurrence: 0,
            policy: Recurrence::Sum,
            recurs_at: Scope::Act,
            unrecoverable: false,
        }
    }
    /// Recurs by `r` (signed) at the end of `scope`.
    pub fn recurring(mut self, r: i32, scope: Scope) -> Self {
        self.recurrence = r;
        self.recurs_at = scope;
        self
    }
    /// How recurrence combines over sources.
    pub fn policy(mut self, policy: Recurrence) -> Self {
        self.policy = policy;
        self
    }
    /// Marks the track "cannot be recovered".
    pub fn unrecoverable(mut self) -> Self {
        self.unrecoverable = true;
        self
    }
}

/// K4: a place tokens can be: an owner's reserve, a pool, a place on the board.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Zone {
    /// Owner, kind and subject of the zone itself.
    pub key: Key,
    /// K4.3: at most one token per owner; another one goes to that owner's reserve instead.
    pub one_per_owner: bool,
    /// K4.5: the face tokens show here (ruleset-defined; 0 when faces do not matter).
    pub face: u8,
    /// K4: which of an owner's supplies the tokens here belong to (0 unless set). An owner may have
    /// several finite supplies (tokens of one kind, pieces of each class...), each with its own
    /// reserve and its own conserved total; tokens never move between zones of different supplies.
    pub supply: u16,
}

impl Zone {
    /// A zone without restrictions, face 0.
    pub fn new(key: Key) -> Zone {
        Zone {
            key,
            one_per_owner: false,
            face: 0,
            supply: 0,
        }
    }
    /// At most one token per owner (K4.3).
    pub fn one_per_owner(mut self) -> Self {
        self.one_per_owner = true;
        self
    }
    /// Tokens here show `face` (K4.5).
    pub fn face(mut self, face: u8) -> Self {
        self.face = face;
        self
    }
    /// Tokens here belong to the owners' supply number `supply` (K4).
    pub fn supply(mut self, supply: u16) -> Self {
        self.supply = supply;
        self
    }
}

/// K5: a permanent that is ready or exhausted.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Permanent {
    pub(crate) key: Key,
    pub(crate) exhausted: bool,
    pub(crate) ready_at: Option<Scope>,
}

impl Permanent {
    /// Owner, kind and subject.
    pub fn key(&self) -> Key {
        self.key
    }
    /// Whether it is exhausted (activated).
    pub fn exhausted(&self) -> bool {
        self.exhausted
    }
}

//! Events (K9): every change to a [`Ledger`](crate::Ledger) is one typed, serializable [`Event`].
//!
//! An event carries both sides of its change, so the log can be replayed forward
//! ([`Ledger::redo`](crate::Ledger::redo)) or undone backward (how refused actions are rolled back).

use crate::clock::{Clock, Scope};
use crate::id::{AmountId, Key, Owner, PermanentId, TrackId, ZoneId};
use serde::{Deserialize, Serialize};

/// Why a change happened.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Cause {
    /// Setting up the game.
    Setup,
    /// A player's action; `code` is ruleset-defined (typically the action's variant).
    Action {
        /// Who acted.
        player: Owner,
        /// Which action, in the ruleset's numbering.
        code: u16,
    },
    /// A ruleset effect that is not a player's action (a triggered ability, a scoring step...).
    Effect(u16),
    /// The kernel's upkeep when a scope of the clock ended (K10).
    Upkeep(Scope),
    /// A state-based check (K1.4, K11).
    StateCheck,
}

/// Which way a charge track changed (K3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum ChargeOp {
    /// Voluntarily spent (K3.2).
    Spend,
    /// Lost (K3.3).
    Lose,
    /// Recovered (K3.4).
    Recover,
    /// Recurrence at a scope end (K3.5), either sign.
    Recur,
}

/// How tokens moved (K4).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum TokenOp {
    /// Created in zone `to` at setup, which becomes the owner's reserve; `from` is the owner's
    /// reserve before (`to` when it had none), so that the change can be undone.
    Stock,
    /// Moved from one zone to another (K4.1).
    Move,
    /// Gained from the reserve (K4.2).
    Gain,
    /// Meant for a one-per-owner zone that already held one, sent to the reserve instead (K4.3).
    Bounce,
    /// Taken from a fallback source because the reserve was empty (K4.4).
    Fallback,
    /// Created in zone `to` (`from` is `to`) at setup, outside the owner's reserve: tokens that start on
    /// the board (K4).
    Place,
    /// Returned from a zone of the board to the owner's reserve in a bulk return (K4.8).
    Return,
}

/// A pending choice: the owner must bring a measured count down by `excess` (K6).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Demand {
    /// What is over its limit (owner, ruleset kind, subject).
    pub key: Key,
    /// How many must go.
    pub excess: u32,
    /// What the kernel measures to follow the demand (K6.2); [`Measure::Ruleset`] when the ruleset
    /// measures and calls [`Ledger::check_limit`](crate::Ledger::check_limit) again.
    pub measure: Measure,
    /// The count the measure must come down to (K6.2); 0 for [`Measure::Ruleset`].
    pub target: u32,
}

impl Demand {
    /// A demand the ruleset measures itself (K6).
    pub const fn new(key: Key, excess: u32) -> Demand {
        Demand {
            key,
            excess,
            measure: Measure::Ruleset,
            target: 0,
        }
    }
}

/// What a bounded demand measures (K6.2), so that the kernel follows it as the owner chooses what goes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Measure {
    /// The ruleset measures, and calls `check_limit` after each choice.
    Ruleset,
    /// What an amount holds above its floor.
    Amount(#[serde(rename = "amount_index")] AmountId),
    /// An owner's tokens in one zone (a hand).
    Tokens {
        /// Whose tokens (the game's, for cards of a bank held in a player's zone).
        owner: Owner,
        /// The zone.
        #[serde(rename = "zone_index")]
        zone: ZoneId,
    },
    /// An owner's tokens over every zone of a class (K4.8).
    Class {
        /// Whose tokens.
        owner: Owner,
        /// The class: the kind of the zones' keys.
        class: crate::id::Kind,
    },
    /// An owner's tokens over `count` zones made one after the other, from `first`: one player's hand
    /// of several kinds, each kind its own zone (and supply), as one count (K6.2).
    Zones {
        /// Whose tokens (the game's, for cards of a bank held in a player's zones).
        owner: Owner,
        /// The first zone.
        #[serde(rename = "first_zone_index")]
        first: ZoneId,
        /// How many zones, from `first` on.
        count: u16,
    },
}

/// How far a bounded demand must bring its measure down (K6.2).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Bound {
    /// Down to at most this many ("down to 7").
    AtMost(u32),
    /// Lose half of what is measured when the demand is raised, rounded down ("half of them, your choice").
    LoseHalf,
}

impl Bound {
    /// The count a measure of `measured` must come down to.
    pub fn target(self, measured: u32) -> u32 {
        match self {
            Bound::AtMost(n) => n,
            Bound::LoseHalf => measured - measured / 2,
        }
    }
}

/// What changed. Each variant holds what is needed to apply it again or to undo it. Handles are written
/// as `amount_index`, `track_index`... in JSON: positions in the ledger's tables, not quantities.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub enum Change {
    /// K1.1: an amount rose; `lost` is what the cap refused.
    Gain {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// Value before.
        before: i64,
        /// Value after.
        after: i64,
        /// Excess lost to the cap.
        lost: u64,
    },
    /// K1.2: a voluntary spend.
    Spend {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// Value before.
        before: i64,
        /// Value after.
        after: i64,
    },
    /// K1.3: a mandatory payment; `shortfall` is what could not be paid.
    Pay {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// Value before.
        before: i64,
        /// Value after.
        after: i64,
        /// What the floor prevented from being paid.
        shortfall: u64,
    },
    /// A ruleset set an amount directly (for example a track position chosen by a player).
    Set {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// Value before.
        before: i64,
        /// Value after.
        after: i64,
    },
    /// K2: the amount's scope ended; it emptied or reset to its start.
    Expire {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// Value before.
        before: i64,
        /// Value after (the floor, or the start value for a resetting amount).
        after: i64,
    },
    /// K1.4: the cap changed; a value above the new cap was clamped in the same change.
    Cap {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// Cap before.
        before: Option<i64>,
        /// Cap after.
        after: Option<i64>,
        /// Value before.
        value_before: i64,
        /// Value after (clamped).
        value_after: i64,
    },
    /// K1.5: the amount reached its floor. Observable only: changes nothing.
    Floor {
        /// The amount.
        #[serde(rename = "amount_index")]
        amount: AmountId,
        /// The floor it reached.
        at: i64,
    },
    /// K3: active charges changed.
    Charges {
        /// The track.
        #[serde(rename = "track_index")]
        track: TrackId,
        /// How.
        op: ChargeOp,
        /// Active charges before.
        before: u32,
        /// Active charges after.
        after: u32,
    },
    /// K3.7: a capacity source was added to (`added`) or removed from a track, at position `index` of
    /// the ledger's source list. Added capacity arrives active; active charges above a lowered limit go.
    Capacity {
        /// The source, naming its track.
        source: crate::spec::Contribution,
        /// Added or removed.
        added: bool,
        /// Position in the ledger's list of sources.
        index: u32,
        /// Active charges before.
        active_before: u32,
        /// Active charges after.
        active_after: u32,
    },
    /// K4: `n` of `owner`'s tokens went from `from` to `to`.
    Tokens {
        /// Whose tokens.
        owner: Owner,
        /// How they moved.
        op: TokenOp,
        /// Source zone.
        #[serde(rename = "from_zone_index")]
        from: ZoneId,
        /// Destination zone.
        #[serde(rename = "to_zone_index")]
        to: ZoneId,
        /// How many.
        n: u32,
    },
    /// K4.2: `lost` of `owner`'s tokens could not be gained into `zone` (the reserve ran short, or a
    /// one-per-owner zone already held one). Observable only: changes nothing.
    Short {
        /// Whose tokens.
        owner: Owner,
        /// The zone they were meant for.
        #[serde(rename = "zone_index")]
        zone: ZoneId,
        /// How many could not be gained.
        lost: u32,
    },
    /// K4.7: a payout from `zone` was owed `owed` of `owner`'s tokens but the zone held only `held`, so
    /// nobody received any. Observable only: changes nothing.
    Withheld {
        /// Whose tokens (the game's, for a bank).
        owner: Owner,
        /// The zone that could not pay.
        #[serde(rename = "zone_index")]
        zone: ZoneId,
        /// How many were owed in all.
        owed: u32,
        /// How many the zone held.
        held: u32,
    },
    /// K5: a permanent was exhausted (`true`) or readied (`false`).
    Exhaust {
        /// The permanent.
        #[serde(rename = "permanent_index")]
        permanent: PermanentId,
        /// Its state after the change.
        exhausted: bool,
    },
    /// K6: a demand was raised (`raised`) or satisfied, at position `index` of the pending list.
    Demand {
        /// The demand.
        demand: Demand,
        /// Its position in the pending list.
        index: u32,
        /// Raised or satisfied.
        raised: bool,
    },
    /// Draws from the game's RNG (replaying them keeps the generator in step).
    Random {
        /// How many 64-bit draws.
        draws: u32,
    },
    /// A ruleset's own event (a card picked, a move planned, dice rolled): `code` in the ruleset's
    /// numbering, written in words through its vocabulary's [`NoteTerm`](crate::NoteTerm). Observable
    /// only: changes nothing.
    Note {
        /// Which note, in the ruleset's numbering.
        code: u16,
        /// Up to three numbers the note's text names.
        args: [i32; 3],
    },
    /// K10: a scope of the clock ended.
    Scope {
        /// The scope that ended.
        scope: Scope,
        /// The clock before.
        before: Clock,
        /// The clock after.
        after: Clock,
    },
}

/// One change to a ledger: which resource, what changed, and why.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct Event {
    /// The resource (owner, kind, subject). For token moves, the destination zone's key.
    pub key: Key,
    /// What changed.
    pub change: Change,
    /// Why.
    pub cause: Cause,
}

impl Change {
    /// For the five changes that move an amount's value (gain, spend, pay, set, expire): the amount, and its
    /// value before and after.
    pub fn amount_value(&self) -> Option<(AmountId, i64, i64)> {
        match *self {
            Change::Gain {
                amount,
                before,
                after,
                ..
            }
            | Change::Spend {
                amount,
                before,
                after,
            }
            | Change::Pay {
                amount,
                before,
                after,
                ..
            }
            | Change::Set {
                amount,
                before,
                after,
            }
            | Change::Expire {
                amount,
                before,
                after,
            } => Some((amount, before, after)),
            _ => None,
        }
    }
}

impl Event {
    /// The `(before, after)` values of an amount or track change, if the event is one.
    pub fn values(&self) -> Option<(i64, i64)> {
        match self.change {
            Change::Gain { .. }
            | Change::Spend { .. }
            | Change::Pay { .. }
            | Change::Set { .. }
            | Change::Expire { .. } => self.change.amount_value().map(|(_, b, a)| (b, a)),
            Change::Cap {
                value_before,
                value_after,
                ..
            } => Some((value_before, value_after)),
            Change::Charges { before, after, .. } => Some((i64::from(before), i64::from(after))),
            Change::Capacity {
                active_before,
                active_after,
                ..
            } => Some((i64::from(active_before), i64::from(active_after))),
            _ => None,
        }
    }
}

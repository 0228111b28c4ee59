//! The [`Ledger`]: every resource of one game, the clock, the RNG, and the log of what changed.

use crate::clock::{Clock, Scope};
use crate::error::Refusal;
use crate::event::{Cause, Change, ChargeOp, Demand, Event, TokenOp};
use crate::id::{AmountId, Key, Kind, Owner, PermanentId, TrackId, ZoneId};
use crate::rng::GameRng;
use crate::spec::{
    Amount, AmountSpec, Contribution, Permanent, Recurrence, Track, TrackSpec, Zone,
};
use serde::{Deserialize, Serialize};

/// What a gain did (K1.1, K4.2).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Gained {
    /// How much arrived.
    pub gained: u64,
    /// How much was lost to the cap, or could not be gained for want of tokens in the reserve.
    pub lost: u64,
}

/// What a mandatory payment did (K1.3).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Paid {
    /// How much was paid.
    pub paid: u64,
    /// How much could not be paid: the amount is at its floor.
    pub shortfall: u64,
}

/// Where a token placed "from the reserve" came from (K4.3, K4.4).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Placement {
    /// From the reserve to the zone.
    FromReserve,
    /// The reserve was empty; it came from the fallback pool.
    FromFallback,
    /// The zone already held one of the owner's tokens: the token is (or stays) in the reserve.
    Bounced,
}

/// One part of an atomic cost (K8).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Part {
    /// Voluntarily spend `n` of an amount (K1.2).
    Spend(AmountId, u64),
    /// Spend `k` active charges (K3.2).
    Charges(TrackId, u32),
    /// Recover `k` charges, required to succeed (a cost whose effect must resolve, K3.4).
    Recover(TrackId, u32),
    /// Move `n` of `owner`'s tokens between zones (K4.1).
    Tokens {
        /// Whose tokens.
        owner: Owner,
        /// From.
        from: ZoneId,
        /// To.
        to: ZoneId,
        /// How many.
        n: u32,
    },
    /// Exhaust a ready permanent (K5).
    Exhaust(PermanentId),
}

/// A cap as messages write it: the number, or "no cap".
fn cap_text(cap: Option<i64>) -> String {
    cap.map_or_else(|| "no cap".to_owned(), |c| c.to_string())
}

/// A position in the event log, taken by [`Ledger::begin`]; [`Ledger::rollback`] returns to it.
#[derive(Clone, Debug)]
#[must_use = "a transaction must be committed or rolled back"]
pub struct Mark {
    events: usize,
    rng: GameRng,
    /// Table lengths: resources created inside the transaction (not logged as events) are dropped again.
    amounts: usize,
    tracks: usize,
    contributions: usize,
    zones: usize,
    permanents: usize,
    supplies: usize,
}

/// A broken kernel invariant, found by [`Ledger::check_invariants`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invariant broken: {0}")]
pub struct Violation(pub String);

/// Every resource of one game: amounts, charge tracks, token zones, permanents, pending choices, the clock
/// and the seeded RNG. Each change is recorded as an [`Event`] in the log until [`Ledger::take_events`].
///
/// ```
/// use coffer_core::{AmountSpec, Cause, Key, Kind, Ledger, Owner, Refusal};
///
/// let mut ledger = Ledger::new(2, 7);
/// let gold = ledger.add_amount(AmountSpec::new(Key::new(Owner(0), Kind(0), 0)).cap(20)).unwrap();
/// let gained = ledger.gain(gold, 25, Cause::Setup).unwrap();
/// assert_eq!((gained.gained, gained.lost), (20, 5)); // K1.1: the excess is lost and reported
/// let refused = ledger.spend(gold, 21, Cause::Setup);
/// assert!(matches!(refused, Err(Refusal::Insufficient { need: 21, have: 20, .. })));
/// assert_eq!(ledger.value(gold), 20); // a refusal changes nothing
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "LedgerData")]
pub struct Ledger {
    owners: u16,
    #[serde(serialize_with = "crate::rows::serialize")]
    amounts: Vec<Amount>,
    tracks: Vec<Track>,
    contributions: Vec<Contribution>,
    #[serde(serialize_with = "crate::rows::serialize")]
    zones: Vec<Zone>,
    /// Token counts, `zone * owners + owner`.
    #[serde(serialize_with = "crate::rows::serialize_matrix")]
    tokens: Vec<u32>,
    /// Each owner's total tokens of each supply (K4 conservation), `supply * owners + owner`.
    #[serde(serialize_with = "crate::rows::serialize")]
    supply: Vec<u32>,
    /// Each owner's reserve zone of each supply, if it has tokens there, `supply * owners + owner`.
    #[serde(serialize_with = "crate::rows::serialize")]
    reserve: Vec<Option<ZoneId>>,
    #[serde(serialize_with = "crate::rows::serialize")]
    permanents: Vec<Permanent>,
    pending: Vec<Demand>,
    clock: Clock,
    rng: GameRng,
    #[serde(skip)]
    log: Vec<Event>,
    #[serde(skip)]
    depth: u32,
}

/// The serialized form of a [`Ledger`], checked (structure and invariants) before it becomes one, so a
/// damaged snapshot is a clear error rather than a panic later.
#[derive(Deserialize)]
struct LedgerData {
    owners: u16,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    amounts: Vec<Amount>,
    tracks: Vec<Track>,
    contributions: Vec<Contribution>,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    zones: Vec<Zone>,
    tokens: crate::rows::Matrix,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    supply: Vec<u32>,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    reserve: Vec<Option<ZoneId>>,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    permanents: Vec<Permanent>,
    pending: Vec<Demand>,
    clock: Clock,
    rng: GameRng,
}

impl TryFrom<LedgerData> for Ledger {
    type Error = Violation;
    fn try_from(d: LedgerData) -> Result<Ledger, Violation> {
        let cells = d.zones.len().checked_mul(usize::from(d.owners));
        let tokens = d.tokens.cells(cells).map_err(|e| {
            Violation(format!(
                "{e} for {} zones of {} owners",
                d.zones.len(),
                d.owners
            ))
        })?;
        let ledger = Ledger {
            owners: d.owners,
            amounts: d.amounts,
            tracks: d.tracks,
            contributions: d.contributions,
            zones: d.zones,
            tokens,
            supply: d.supply,
            reserve: d.reserve,
            permanents: d.permanents,
            pending: d.pending,
            clock: d.clock,
            rng: d.rng,
            log: Vec::new(),
            depth: 0,
        };
        ledger.check_invariants()?;
        Ok(ledger)
    }
}

impl PartialEq for Ledger {
    /// Two ledgers are equal when their states are; the event logs are not compared.
    fn eq(&self, other: &Ledger) -> bool {
        self.owners == other.owners
            && self.amounts == other.amounts
            && self.tracks == other.tracks
            && self.contributions == other.contributions
            && self.zones == other.zones
            && self.tokens == other.tokens
            && self.supply == other.supply
            && self.reserve == other.reserve
            && self.permanents == other.permanents
            && self.pending == other.pending
            && self.clock == other.clock
            && self.rng == other.rng
    }
}

fn missing(what: &'static str, index: u32) -> Refusal {
    Refusal::NoSuchResource {
        what: std::borrow::Cow::Borrowed(what),
        index,
    }
}

impl Ledger {
    /// An empty ledger for `owners` players, with the RNG seeded by `seed`.
    pub fn new(owners: u16, seed: u64) -> Ledger {
        Ledger {
            owners,
            amounts: Vec::new(),
            tracks: Vec::new(),
            contributions: Vec::new(),
            zones: Vec::new(),
            tokens: Vec::new(),
            supply: vec![0; usize::from(owners)],
            reserve: vec![None; usize::from(owners)],
            permanents: Vec::new(),
            pending: Vec::new(),
            clock: Clock::default(),
            rng: GameRng::new(seed),
            log: Vec::new(),
            depth: 0,
        }
    }

    /// How many players own things here.
    pub fn owners(&self) -> u16 {
        self.owners
    }

    // ----- the log and transactions (K8, K9) -----

    // Always inlined: out of line, every event is built on the stack and copied again into the log.
    #[inline(always)]
    fn emit(&mut self, key: Key, change: Change, cause: Cause) {
        self.log.push(Event { key, change, cause });
        // The level check is one relaxed atomic load; the `tracing` call itself stays out of line, so
        // the hot path keeps the event in registers instead of spilling it around a large call site.
        if self.depth == 0 && tracing::level_enabled!(tracing::Level::DEBUG) {
            if let Some(event) = self.log.last() {
                publish(event);
            }
        }
    }

    /// Events recorded since the last call, oldest first; the log is left empty. Call it outside
    /// transactions: events taken inside one can no longer be rolled back.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.log)
    }

    /// Events an action's log is reserved for once a game is set up ([`shrink_to_fit`](Self::shrink_to_fit)):
    /// most actions record fewer (a note and a few changes), so a short game never grows the log, for
    /// about 1 KiB per idle game.
    pub const ACTION_EVENTS: usize = 16;

    /// Gives back the spare capacity of every table (setup grows them one resource at a time), keeping
    /// room for [`ACTION_EVENTS`](Self::ACTION_EVENTS) events. Hosts call it once a new game is set up:
    /// it is most of an idle game's memory. Changes no state.
    pub fn shrink_to_fit(&mut self) {
        self.amounts.shrink_to_fit();
        self.tracks.shrink_to_fit();
        self.contributions.shrink_to_fit();
        self.zones.shrink_to_fit();
        self.tokens.shrink_to_fit();
        self.supply.shrink_to_fit();
        self.reserve.shrink_to_fit();
        self.permanents.shrink_to_fit();
        self.pending.shrink_to_fit();
        self.log.shrink_to_fit();
        self.log.reserve_exact(Self::ACTION_EVENTS);
    }

    /// Events recorded and not yet taken.
    pub fn events(&self) -> &[Event] {
        &self.log
    }

    /// Moves the recorded events to the end of `out`, leaving the log empty but keeping its memory.
    pub fn drain_events_into(&mut self, out: &mut Vec<Event>) {
        out.append(&mut self.log);
    }

    /// Opens a transaction: until [`commit`](Self::commit) or [`rollback`](Self::rollback), changes are
    /// recorded but not yet published to `tracing`. Transactions nest.
    pub fn begin(&mut self) -> Mark {
        self.depth += 1;
        Mark {
            events: self.log.len(),
            rng: self.rng.clone(),
            amounts: self.amounts.len(),
            tracks: self.tracks.len(),
            contributions: self.contributions.len(),
            zones: self.zones.len(),
            permanents: self.permanents.len(),
            supplies: self.supply.len(),
        }
    }

    /// Keeps the transaction's changes; the outermost commit publishes their events to `tracing`.
    pub fn commit(&mut self, mark: Mark) {
        self.depth = self.depth.saturating_sub(1);
        if self.depth == 0 && tracing::level_enabled!(tracing::Level::DEBUG) {
            for event in &self.log[mark.events.min(self.log.len())..] {
                publish(event);
            }
        }
    }

    /// Undoes every change since `mark`, newest first, and forgets their events: the ledger is equal
    /// (same state hash) to what it was at [`begin`](Self::begin) (K8). Amounts, tracks, zones and
    /// permanents created inside the transaction are removed again.
    ///
    /// Events taken out of the log inside the transaction ([`take_events`](Self::take_events),
    /// [`drain_events_into`](Self::drain_events_into)) can no longer be undone: take events only after the
    /// outermost commit.
    pub fn rollback(&mut self, mark: Mark) {
        self.depth = self.depth.saturating_sub(1);
        while self.log.len() > mark.events {
            if let Some(event) = self.log.pop() {
                self.undo(&event);
            }
        }
        self.rng = mark.rng;
        self.amounts.truncate(mark.amounts);
        self.tracks.truncate(mark.tracks);
        self.contributions.truncate(mark.contributions);
        self.zones.truncate(mark.zones);
        self.tokens.truncate(mark.zones * usize::from(self.owners));
        self.permanents.truncate(mark.permanents);
        self.supply.truncate(mark.supplies);
        self.reserve.truncate(mark.supplies);
    }

    /// Runs `f` as one transaction: all its changes stay, or (on `Err`) none do.
    pub fn atomically<T, E>(
        &mut self,
        f: impl FnOnce(&mut Ledger) -> Result<T, E>,
    ) -> Result<T, E> {
        let mark = self.begin();
        match f(self) {
            Ok(value) => {
                self.commit(mark);
                Ok(value)
            }
            Err(error) => {
                self.rollback(mark);
                Err(error)
            }
        }
    }

    /// Applies an event forward, as if the change happened again: replaying a game's events, in order, on
    /// the ledger as it was before them rebuilds the same state (K9). The event is not logged.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] for an event that does not fit this ledger: it names something the ledger does
    /// not have, its "before" side is not the current state, or its "after" side breaks a bound. Nothing
    /// changes then.
    pub fn redo(&mut self, event: &Event) -> Result<(), Refusal> {
        self.check_target(&event.change)?;
        self.apply_change(&event.change, true);
        Ok(())
    }

    /// Whether `change` can be applied forward here: it names resources this ledger has, its "before" side
    /// is the current state, and its "after" side respects every bound. So a replayed log either rebuilds
    /// the state exactly or stops at the first event that does not fit, never panicking or breaking K1-K4.
    fn check_target(&self, change: &Change) -> Result<(), Refusal> {
        let in_bounds = |a: &Amount, v: i64| v >= a.floor && a.cap.is_none_or(|c| v <= c);
        let ok = match *change {
            Change::Gain { .. }
            | Change::Spend { .. }
            | Change::Pay { .. }
            | Change::Set { .. }
            | Change::Expire { .. } => {
                change
                    .amount_value()
                    .is_some_and(|(amount, before, after)| {
                        self.amounts
                            .get(amount.index())
                            .is_some_and(|a| a.value == before && in_bounds(a, after))
                    })
            }
            Change::Cap {
                amount,
                before,
                after,
                value_before,
                value_after,
            } => self.amounts.get(amount.index()).is_some_and(|a| {
                a.cap == before
                    && a.value == value_before
                    && after.is_none_or(|c| c >= a.floor)
                    && in_bounds(&Amount { cap: after, ..*a }, value_after)
            }),
            Change::Floor { amount, at } => self
                .amounts
                .get(amount.index())
                .is_some_and(|a| a.floor == at && a.value == at),
            Change::Charges {
                track,
                before,
                after,
                ..
            } => self
                .tracks
                .get(track.index())
                .is_some_and(|t| t.active == before && after <= t.limit),
            Change::Capacity {
                source,
                added,
                index,
                active_before,
                active_after,
            } => {
                let index = index as usize;
                self.tracks.get(source.track.index()).is_some_and(|t| {
                    t.active == active_before
                        && if added {
                            index <= self.contributions.len()
                                && t.limit
                                    .checked_add(source.capacity)
                                    .is_some_and(|l| active_after <= l)
                        } else {
                            self.contributions.get(index) == Some(&source)
                                && active_after <= t.limit - source.capacity
                        }
                })
            }
            Change::Tokens {
                owner,
                op,
                from,
                to,
                n,
            } => {
                let o = usize::from(self.owners);
                owner.0 < self.owners
                    && from.index() < self.zones.len()
                    && to.index() < self.zones.len()
                    && if op == TokenOp::Stock {
                        let slot = self.slot(self.zones[to.index()].supply, owner);
                        n > 0
                            && from.index() < self.zones.len()
                            && self.zones[from.index()].supply == self.zones[to.index()].supply
                            && self.reserve[slot].unwrap_or(to) == from
                            && self.supply[slot].checked_add(n).is_some()
                    } else {
                        self.tokens[from.index() * o + owner.index()] >= n
                    }
            }
            Change::Exhaust {
                permanent,
                exhausted,
            } => self
                .permanents
                .get(permanent.index())
                .is_some_and(|p| p.exhausted != exhausted),
            Change::Demand {
                demand,
                index,
                raised,
            } => {
                let index = index as usize;
                if raised {
                    index <= self.pending.len()
                } else {
                    self.pending.get(index) == Some(&demand)
                }
            }
            Change::Scope {
                scope,
                before,
                after,
            } => self.clock == before && before.after(scope) == after,
            Change::Random { .. } | Change::Note { .. } => true,
            Change::Short { owner, zone, .. } => {
                owner.0 < self.owners && zone.index() < self.zones.len()
            }
        };
        if ok {
            Ok(())
        } else {
            Err(Refusal::Invalid(format!(
                "an event of the log does not fit this game's state: {}",
                crate::Names::plain()
                    .change(
                        &Event {
                            key: Key::new(Owner::GAME, Kind::CLOCK, 0),
                            change: *change,
                            cause: Cause::StateCheck,
                        },
                        None,
                    )
                    .unwrap_or_else(|| "a draw at random".to_owned())
            )))
        }
    }

    fn undo(&mut self, event: &Event) {
        self.apply_change(&event.change, false);
    }

    /// Sets the state to the change's "after" side (`forward`) or its "before" side.
    fn apply_change(&mut self, change: &Change, forward: bool) {
        let pick = |before: i64, after: i64| if forward { after } else { before };
        match *change {
            Change::Gain { .. }
            | Change::Spend { .. }
            | Change::Pay { .. }
            | Change::Set { .. }
            | Change::Expire { .. } => {
                if let Some((amount, before, after)) = change.amount_value() {
                    self.amounts[amount.index()].value = pick(before, after);
                }
            }
            Change::Cap {
                amount,
                before,
                after,
                value_before,
                value_after,
            } => {
                let a = &mut self.amounts[amount.index()];
                a.cap = if forward { after } else { before };
                a.value = pick(value_before, value_after);
            }
            Change::Floor { .. } | Change::Short { .. } | Change::Note { .. } => {}
            Change::Charges {
                track,
                before,
                after,
                ..
            } => {
                self.tracks[track.index()].active = if forward { after } else { before };
            }
            Change::Capacity {
                source,
                added,
                index,
                active_before,
                active_after,
            } => {
                let t = &mut self.tracks[source.track.index()];
                if added == forward {
                    t.limit += source.capacity;
                    self.contributions.insert(index as usize, source);
                } else {
                    t.limit -= source.capacity;
                    self.contributions.remove(index as usize);
                }
                t.active = if forward { active_after } else { active_before };
            }
            Change::Tokens {
                owner,
                op,
                from,
                to,
                n,
            } => {
                let o = usize::from(self.owners);
                let (src, dst) = if forward { (from, to) } else { (to, from) };
                if op == TokenOp::Stock {
                    // `to` becomes the reserve; `from` was the reserve before (`to` when there was none).
                    // A supply is never empty (`stock` refuses 0), so "had a reserve" is "had tokens".
                    let slot = self.slot(self.zones[to.index()].supply, owner);
                    let cell = &mut self.tokens[to.index() * o + owner.index()];
                    let total = &mut self.supply[slot];
                    if forward {
                        *cell += n;
                        *total += n;
                        self.reserve[slot] = Some(to);
                    } else {
                        *cell -= n;
                        *total -= n;
                        self.reserve[slot] = (*total > 0).then_some(from);
                    }
                } else {
                    self.tokens[src.index() * o + owner.index()] -= n;
                    self.tokens[dst.index() * o + owner.index()] += n;
                }
            }
            Change::Exhaust {
                permanent,
                exhausted,
            } => {
                self.permanents[permanent.index()].exhausted =
                    if forward { exhausted } else { !exhausted };
            }
            Change::Demand {
                demand,
                index,
                raised,
            } => {
                let index = index as usize;
                if raised == forward {
                    self.pending.insert(index, demand);
                } else {
                    self.pending.remove(index);
                }
            }
            Change::Scope { before, after, .. } => {
                self.clock = if forward { after } else { before };
            }
            Change::Random { draws } => {
                if forward {
                    for _ in 0..draws {
                        self.rng.next_u64();
                    }
                }
                // Backward: `rollback` restores the RNG from its mark.
            }
        }
    }

    // ----- amounts (K1, K2) -----

    /// Creates an amount.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] when the start lies outside `[floor, cap]`, or the cap is below the floor.
    pub fn add_amount(&mut self, spec: AmountSpec) -> Result<AmountId, Refusal> {
        if let Some(cap) = spec.cap {
            if cap < spec.floor {
                return Err(Refusal::Invalid(format!(
                    "cap {cap} below floor {} for {}",
                    spec.floor, spec.key
                )));
            }
        }
        if spec.start < spec.floor || spec.cap.is_some_and(|c| spec.start > c) {
            return Err(Refusal::Invalid(format!(
                "start {} outside [{}, {}] for {}",
                spec.start,
                spec.floor,
                cap_text(spec.cap),
                spec.key
            )));
        }
        let id = AmountId(index_u32(self.amounts.len())?);
        self.amounts.push(Amount {
            key: spec.key,
            value: spec.start,
            floor: spec.floor,
            cap: spec.cap,
            lifetime: spec.lifetime,
            on_expiry: if spec.resets { spec.start } else { spec.floor },
        });
        Ok(id)
    }

    /// The amount behind a handle.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`] for a handle from another ledger.
    #[inline]
    pub fn amount(&self, id: AmountId) -> Result<&Amount, Refusal> {
        self.amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))
    }

    /// The value of an amount; 0 for a handle this ledger does not have.
    #[inline]
    pub fn value(&self, id: AmountId) -> i64 {
        self.amounts.get(id.index()).map_or(0, |a| a.value)
    }

    /// Every amount, in creation order (handles are their indices).
    pub fn amounts(&self) -> &[Amount] {
        &self.amounts
    }

    /// K1.1: gains `n`; the value rises to at most the cap and the excess is lost and reported.
    ///
    /// # Errors
    /// [`Refusal::Overflow`] when an uncapped value would leave `i64`.
    #[inline]
    pub fn gain(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<Gained, Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if n == 0 {
            return Ok(Gained::default());
        }
        let before = a.value;
        let (after, lost) = match a.cap {
            Some(cap) => {
                let room = cap.abs_diff(before);
                let gained = n.min(room);
                // `before + gained <= cap`: the sum fits even when `gained` does not fit an i64.
                (before.wrapping_add_unsigned(gained), n - gained)
            }
            None => {
                let after = before.checked_add_unsigned(n).ok_or(Refusal::Overflow {
                    op: std::borrow::Cow::Borrowed("gain"),
                    n,
                    key: a.key,
                })?;
                (after, 0)
            }
        };
        let key = a.key;
        self.amounts[id.index()].value = after;
        self.emit(
            key,
            Change::Gain {
                amount: id,
                before,
                after,
                lost,
            },
            cause,
        );
        Ok(Gained {
            gained: n - lost,
            lost,
        })
    }

    /// K1.2: voluntarily spends `n`: refused, changing nothing, if `n` exceeds what is above the floor.
    ///
    /// # Errors
    /// [`Refusal::Insufficient`] when short.
    #[inline]
    pub fn spend(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<(), Refusal> {
        let a = self
            .amounts
            .get_mut(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        let have = a.available();
        if n > have {
            return Err(Refusal::Insufficient {
                key: a.key,
                need: n,
                have,
            });
        }
        if n == 0 {
            return Ok(());
        }
        let (key, before, floor) = (a.key, a.value, a.floor);
        // `n <= before - floor`, so the difference fits even when `n` does not fit an i64.
        let after = before.wrapping_sub_unsigned(n);
        a.value = after;
        self.emit(
            key,
            Change::Spend {
                amount: id,
                before,
                after,
            },
            cause,
        );
        if after == floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok(())
    }

    /// The change of a voluntary spend whose handle and means were already checked. `spend` repeats this
    /// body rather than calling it, to look its amount up once (measured: 3.5 against 4.2 ns per spend).
    #[inline]
    fn spend_checked(&mut self, id: AmountId, n: u64, cause: Cause) {
        if n == 0 {
            return;
        }
        let a = &mut self.amounts[id.index()];
        let (key, before, floor) = (a.key, a.value, a.floor);
        // `n <= before - floor`, so the difference fits even when `n` does not fit an i64.
        let after = before.wrapping_sub_unsigned(n);
        a.value = after;
        self.emit(
            key,
            Change::Spend {
                amount: id,
                before,
                after,
            },
            cause,
        );
        if after == floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
    }

    /// K1.3: a mandatory payment of `n`: pays what it can, ending at the floor, and reports the shortfall.
    ///
    /// # Errors
    /// Only [`Refusal::NoSuchResource`].
    #[inline]
    pub fn pay(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<Paid, Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if n == 0 {
            return Ok(Paid::default());
        }
        let paid = n.min(a.available());
        let (key, before, floor) = (a.key, a.value, a.floor);
        let after = before.wrapping_sub_unsigned(paid);
        let shortfall = n - paid;
        self.amounts[id.index()].value = after;
        self.emit(
            key,
            Change::Pay {
                amount: id,
                before,
                after,
                shortfall,
            },
            cause,
        );
        if after == floor && before != floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok(Paid { paid, shortfall })
    }

    /// Sets an amount to `value` (a track position a rule chooses), which must lie in `[floor, cap]`.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] outside the bounds.
    pub fn set(&mut self, id: AmountId, value: i64, cause: Cause) -> Result<(), Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if value < a.floor || a.cap.is_some_and(|c| value > c) {
            return Err(Refusal::Invalid(format!(
                "{value} outside [{}, {}] for {}",
                a.floor,
                cap_text(a.cap),
                a.key
            )));
        }
        let (key, before, floor) = (a.key, a.value, a.floor);
        if before == value {
            return Ok(());
        }
        self.amounts[id.index()].value = value;
        self.emit(
            key,
            Change::Set {
                amount: id,
                before,
                after: value,
            },
            cause,
        );
        if value == floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok(())
    }

    /// K1.4: changes the cap (`None` removes it); a value above the new cap is clamped at once, in the
    /// same event.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] for a cap below the floor.
    pub fn set_cap(&mut self, id: AmountId, cap: Option<i64>, cause: Cause) -> Result<(), Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if cap.is_some_and(|c| c < a.floor) {
            return Err(Refusal::Invalid(format!(
                "cap {} below floor {} for {}",
                cap_text(cap),
                a.floor,
                a.key
            )));
        }
        if cap == a.cap {
            return Ok(());
        }
        let (key, before, value_before, floor) = (a.key, a.cap, a.value, a.floor);
        let value_after = cap.map_or(value_before, |c| value_before.min(c));
        let am = &mut self.amounts[id.index()];
        am.cap = cap;
        am.value = value_after;
        self.emit(
            key,
            Change::Cap {
                amount: id,
                before,
                after: cap,
                value_before,
                value_after,
            },
            cause,
        );
        if value_after == floor && value_before != floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                Cause::StateCheck,
            );
        }
        Ok(())
    }

    /// K7: pays a cost of `need` split over several amounts in the payer's allocation, as one step.
    /// Every part is a voluntary spend; the allocation must sum to `need` and each holder must afford its
    /// part (parts on the same holder add up).
    ///
    /// # Errors
    /// [`Refusal::BadAllocation`] or [`Refusal::Insufficient`]; nothing changes.
    #[inline]
    pub fn spend_split(
        &mut self,
        allocation: &[(AmountId, u64)],
        need: u64,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let sum = allocation
            .iter()
            .try_fold(0u64, |s, &(_, n)| s.checked_add(n));
        if sum != Some(need) {
            return Err(Refusal::BadAllocation {
                sum: sum.unwrap_or(u64::MAX),
                need,
            });
        }
        for (i, &(id, _)) in allocation.iter().enumerate() {
            if allocation[..i].iter().any(|&(other, _)| other == id) {
                continue;
            }
            let total = allocation
                .iter()
                .filter(|&&(other, _)| other == id)
                .map(|&(_, n)| n)
                .sum::<u64>();
            let a = self.amount(id)?;
            if total > a.available() {
                return Err(Refusal::Insufficient {
                    key: a.key,
                    need: total,
                    have: a.available(),
                });
            }
        }
        for &(id, n) in allocation {
            // Checked above: every handle exists and each holder affords the sum of its parts.
            self.spend_checked(id, n, cause);
        }
        Ok(())
    }

    // ----- charge tracks (K3) -----

    /// Creates a charge track with its own card as first capacity source (K3.1: all charges active).
    ///
    /// # Errors
    /// Only when the ledger is full (2^32 tracks).
    pub fn add_track(&mut self, spec: TrackSpec) -> Result<TrackId, Refusal> {
        let id = TrackId(index_u32(self.tracks.len())?);
        self.tracks.push(Track {
            key: spec.key,
            limit: spec.limit,
            active: spec.limit,
            recurs_at: spec.recurs_at,
            recurrence: spec.policy,
            unrecoverable: spec.unrecoverable,
        });
        self.contributions.push(Contribution {
            track: id,
            source: spec.key.subject,
            capacity: spec.limit,
            recurrence: spec.recurrence,
        });
        Ok(id)
    }

    /// The track behind a handle.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`].
    #[inline]
    pub fn track(&self, id: TrackId) -> Result<&Track, Refusal> {
        self.tracks
            .get(id.index())
            .ok_or(missing(TrackId::WHAT, id.0))
    }

    /// Every track, in creation order.
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }

    /// Active charges of a track; 0 for a handle this ledger does not have.
    #[inline]
    pub fn active(&self, id: TrackId) -> u32 {
        self.tracks.get(id.index()).map_or(0, |t| t.active)
    }

    #[inline]
    fn set_active(&mut self, id: TrackId, after: u32, op: ChargeOp, cause: Cause) {
        let t = &mut self.tracks[id.index()];
        let before = t.active;
        if before == after {
            return;
        }
        t.active = after;
        let key = t.key;
        self.emit(
            key,
            Change::Charges {
                track: id,
                op,
                before,
                after,
            },
            cause,
        );
    }

    /// K3.2: spends `k` charges, all or nothing.
    ///
    /// # Errors
    /// [`Refusal::InsufficientCharges`] unless `k` are active.
    #[inline]
    pub fn spend_charges(&mut self, id: TrackId, k: u32, cause: Cause) -> Result<(), Refusal> {
        let t = self.track(id)?;
        if k > t.active {
            return Err(Refusal::InsufficientCharges {
                key: t.key,
                need: k,
                active: t.active,
            });
        }
        let after = t.active - k;
        self.set_active(id, after, ChargeOp::Spend, cause);
        Ok(())
    }

    /// K3.3: loses up to `k` charges; returns how many flipped.
    ///
    /// # Errors
    /// Only [`Refusal::NoSuchResource`].
    #[inline]
    pub fn lose_charges(&mut self, id: TrackId, k: u32, cause: Cause) -> Result<u32, Refusal> {
        let t = self.track(id)?;
        let lost = k.min(t.active);
        let after = t.active - lost;
        self.set_active(id, after, ChargeOp::Lose, cause);
        Ok(lost)
    }

    /// K3.4: recovers up to `k` charges; returns how many flipped (0, a reported no-op, when all are
    /// active).
    ///
    /// # Errors
    /// [`Refusal::Unrecoverable`] for a track marked "cannot be recovered" (K3.6).
    #[inline]
    pub fn recover_charges(&mut self, id: TrackId, k: u32, cause: Cause) -> Result<u32, Refusal> {
        let t = self.track(id)?;
        if t.unrecoverable {
            return Err(Refusal::Unrecoverable { key: t.key });
        }
        let got = k.min(t.limit - t.active);
        let after = t.active + got;
        self.set_active(id, after, ChargeOp::Recover, cause);
        Ok(got)
    }

    /// K3.4 as a cost: recovers exactly `k` charges or refuses ("a cost that needs it cannot be paid").
    ///
    /// # Errors
    /// [`Refusal::NothingToRecover`] when fewer than `k` are inactive; [`Refusal::Unrecoverable`].
    pub fn recover_exactly(&mut self, id: TrackId, k: u32, cause: Cause) -> Result<(), Refusal> {
        let t = self.track(id)?;
        if t.unrecoverable {
            return Err(Refusal::Unrecoverable { key: t.key });
        }
        if t.limit - t.active < k {
            return Err(Refusal::NothingToRecover {
                key: t.key,
                limit: t.limit,
            });
        }
        self.recover_charges(id, k, cause).map(|_| ())
    }

    /// K3.7: adds a capacity source to a shared track. The added charges arrive active.
    ///
    /// # Errors
    /// [`Refusal::Overflow`] past `u32::MAX` charges.
    pub fn add_capacity(
        &mut self,
        id: TrackId,
        source: u32,
        capacity: u32,
        recurrence: i32,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let t = *self.track(id)?;
        let after = t.limit.checked_add(capacity).ok_or(Refusal::Overflow {
            op: std::borrow::Cow::Borrowed("add capacity"),
            n: u64::from(capacity),
            key: t.key,
        })?;
        let _ = after;
        let source = Contribution {
            track: id,
            source,
            capacity,
            recurrence,
        };
        let index = index_u32(self.contributions.len())?;
        let change = Change::Capacity {
            source,
            added: true,
            index,
            active_before: t.active,
            active_after: t.active + capacity,
        };
        self.apply_change(&change, true);
        self.emit(t.key, change, cause);
        Ok(())
    }

    /// K3.7: removes every capacity source `source` gave a track (a card leaving play). Active charges
    /// above the lowered limit are removed. Returns the capacity removed.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`].
    pub fn remove_capacity(
        &mut self,
        id: TrackId,
        source: u32,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let key = self.track(id)?.key;
        let mut removed = 0;
        while let Some(index) = self
            .contributions
            .iter()
            .position(|c| c.track == id && c.source == source)
        {
            let c = self.contributions[index];
            let t = self.tracks[id.index()];
            let change = Change::Capacity {
                source: c,
                added: false,
                index: index as u32,
                active_before: t.active,
                active_after: t.active.min(t.limit - c.capacity),
            };
            self.apply_change(&change, true);
            self.emit(key, change, cause);
            removed += c.capacity;
        }
        Ok(removed)
    }

    /// The capacity sources feeding a track, in the order they were added.
    pub fn contributions(&self, id: TrackId) -> impl Iterator<Item = &Contribution> {
        self.contributions.iter().filter(move |c| c.track == id)
    }

    /// The recurrence a track has now, from its sources and policy (K3.5, K3.7).
    pub fn recurrence(&self, id: TrackId) -> i32 {
        let Some(t) = self.tracks.get(id.index()) else {
            return 0;
        };
        match t.recurrence {
            Recurrence::Fixed(r) => r,
            Recurrence::Sum => self
                .contributions(id)
                .fold(0i32, |s, c| s.saturating_add(c.recurrence)),
            Recurrence::Max => self
                .contributions(id)
                .map(|c| c.recurrence)
                .max()
                .unwrap_or(0),
        }
    }

    // ----- tokens (K4) -----

    /// Creates a token zone.
    ///
    /// # Errors
    /// Only when the ledger is full.
    pub fn add_zone(&mut self, zone: Zone) -> Result<ZoneId, Refusal> {
        let id = ZoneId(index_u32(self.zones.len())?);
        let needed = (usize::from(zone.supply) + 1) * usize::from(self.owners);
        if needed > self.supply.len() {
            self.supply.resize(needed, 0);
            self.reserve.resize(needed, None);
        }
        self.zones.push(zone);
        self.tokens
            .extend(std::iter::repeat_n(0, usize::from(self.owners)));
        Ok(id)
    }

    /// The zone behind a handle.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`].
    #[inline]
    pub fn zone(&self, id: ZoneId) -> Result<&Zone, Refusal> {
        self.zones
            .get(id.index())
            .ok_or(missing(ZoneId::WHAT, id.0))
    }

    /// Every zone, in creation order.
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    /// Gives `owner` a supply: `n` tokens created in `reserve`, which becomes the owner's reserve.
    /// Setup only; the owner's total then never changes (K4). Stocking several zones (tokens that start on
    /// the board, then the reserve) makes the last one the reserve.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`]; [`Refusal::Invalid`] for a non-player owner or `n == 0`;
    /// [`Refusal::Overflow`] past `u32::MAX` tokens.
    pub fn stock(
        &mut self,
        owner: Owner,
        reserve: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let Zone {
            key,
            supply,
            one_per_owner,
            ..
        } = *self.zone(reserve)?;
        if owner.0 >= self.owners {
            return Err(Refusal::Invalid(format!(
                "{owner} is not one of {} owners",
                self.owners
            )));
        }
        if n == 0 {
            return Err(Refusal::Invalid(format!(
                "a supply of 0 tokens for {owner} in {reserve}"
            )));
        }
        if one_per_owner && u64::from(self.tokens(reserve, owner)) + u64::from(n) > 1 {
            return Err(Refusal::Invalid(format!(
                "{n} tokens of {owner} in one-per-owner {key}"
            )));
        }
        let slot = self.slot(supply, owner);
        self.supply[slot].checked_add(n).ok_or(Refusal::Overflow {
            op: std::borrow::Cow::Borrowed("stock"),
            n: u64::from(n),
            key,
        })?;
        let change = Change::Tokens {
            owner,
            op: TokenOp::Stock,
            from: self.reserve[slot].unwrap_or(reserve),
            to: reserve,
            n,
        };
        self.apply_change(&change, true);
        self.emit(key, change, cause);
        Ok(())
    }

    /// Every owner's tokens in `zone`, indexed by owner (empty for a missing zone).
    #[inline]
    pub fn zone_tokens(&self, zone: ZoneId) -> &[u32] {
        let o = usize::from(self.owners);
        self.tokens
            .get(zone.index() * o..(zone.index() + 1) * o)
            .unwrap_or(&[])
    }

    /// How many of `owner`'s tokens are in `zone` (0 for unknown handles).
    #[inline]
    pub fn tokens(&self, zone: ZoneId, owner: Owner) -> u32 {
        let o = usize::from(self.owners);
        if owner.0 >= self.owners {
            return 0;
        }
        self.tokens
            .get(zone.index() * o + owner.index())
            .copied()
            .unwrap_or(0)
    }

    /// The index of `(supply, owner)` in the per-supply tables.
    #[inline]
    fn slot(&self, supply: u16, owner: Owner) -> usize {
        usize::from(supply) * usize::from(self.owners) + owner.index()
    }

    /// How many supplies the owners have: one more than the highest [`Zone::supply`] of any zone (at
    /// least 1).
    pub fn supplies(&self) -> u16 {
        let o = usize::from(self.owners).max(1);
        u16::try_from((self.supply.len() / o).max(1)).unwrap_or(u16::MAX)
    }

    /// The owner's reserve zone of supply 0 (see [`reserve_of`](Self::reserve_of)).
    #[inline]
    pub fn reserve(&self, owner: Owner) -> Option<ZoneId> {
        self.reserve_of(0, owner)
    }

    /// The owner's reserve zone of a supply: the zone last stocked for it.
    #[inline]
    pub fn reserve_of(&self, supply: u16, owner: Owner) -> Option<ZoneId> {
        if owner.0 >= self.owners {
            return None;
        }
        self.reserve
            .get(self.slot(supply, owner))
            .copied()
            .flatten()
    }

    /// The owner's total number of tokens of supply 0 (see [`supply_of`](Self::supply_of)).
    pub fn supply(&self, owner: Owner) -> u32 {
        self.supply_of(0, owner)
    }

    /// The owner's total number of tokens of a supply, over all its zones. It never changes after setup.
    pub fn supply_of(&self, supply: u16, owner: Owner) -> u32 {
        if owner.0 >= self.owners {
            return 0;
        }
        self.supply
            .get(self.slot(supply, owner))
            .copied()
            .unwrap_or(0)
    }

    #[inline]
    fn owner_reserve(&self, supply: u16, owner: Owner) -> Result<ZoneId, Refusal> {
        self.reserve_of(supply, owner)
            .ok_or_else(|| Refusal::Invalid(format!("{owner} has no tokens of supply {supply}")))
    }

    #[inline]
    fn same_supply(&self, from: &Zone, to: &Zone) -> Result<(), Refusal> {
        if from.supply == to.supply {
            Ok(())
        } else {
            Err(Refusal::Invalid(format!(
                "cannot move tokens from {} (supply {}) to {} (supply {})",
                from.key, from.supply, to.key, to.supply
            )))
        }
    }

    #[inline]
    fn shift(&mut self, owner: Owner, op: TokenOp, from: ZoneId, to: ZoneId, n: u32, cause: Cause) {
        let o = usize::from(self.owners);
        self.tokens[from.index() * o + owner.index()] -= n;
        self.tokens[to.index() * o + owner.index()] += n;
        let key = self.zones[to.index()].key;
        self.emit(
            key,
            Change::Tokens {
                owner,
                op,
                from,
                to,
                n,
            },
            cause,
        );
    }

    /// K4.1: moves `n` of `owner`'s tokens. K4.3: a token for a one-per-owner zone that already holds one
    /// of the owner's tokens (or a second token in the same move) goes to the reserve instead; the
    /// returned count says how many were sent there.
    ///
    /// # Errors
    /// [`Refusal::NotEnoughTokens`] when `from` holds fewer than `n`.
    #[inline]
    pub fn move_tokens(
        &mut self,
        owner: Owner,
        from: ZoneId,
        to: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let src = *self.zone(from)?;
        let dst = *self.zone(to)?;
        self.same_supply(&src, &dst)?;
        // An owner with a reserve is a player (`stock` refuses others), so the cells below exist.
        let reserve = self.owner_reserve(src.supply, owner)?;
        let o = usize::from(self.owners);
        let (at_from, at_to) = (
            from.index() * o + owner.index(),
            to.index() * o + owner.index(),
        );
        let have = self.tokens[at_from];
        if n > have {
            return Err(Refusal::NotEnoughTokens {
                owner,
                zone: src.key,
                need: n,
                have,
            });
        }
        if n == 0 || from == to {
            return Ok(0);
        }
        let placed = if dst.one_per_owner {
            u32::from(self.tokens[at_to] == 0).min(n)
        } else {
            n
        };
        let bounced = n - placed;
        if placed > 0 {
            self.tokens[at_from] -= placed;
            self.tokens[at_to] += placed;
            let change = Change::Tokens {
                owner,
                op: TokenOp::Move,
                from,
                to,
                n: placed,
            };
            self.emit(dst.key, change, cause);
        }
        if bounced > 0 {
            self.shift(owner, TokenOp::Bounce, from, reserve, bounced, cause);
        }
        Ok(bounced)
    }

    /// K4.2: gains up to `n` tokens from the owner's reserve into `to`; what the reserve lacks is
    /// reported in [`Gained::lost`], not refused. K4.3: a one-per-owner zone takes at most one of the
    /// owner's tokens; the others stay in the reserve and are reported in [`Gained::lost`] too.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] for an owner without supply.
    pub fn gain_tokens(
        &mut self,
        owner: Owner,
        to: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<Gained, Refusal> {
        let dst = *self.zone(to)?;
        let reserve = self.owner_reserve(dst.supply, owner)?;
        let room = if dst.one_per_owner {
            u32::from(self.tokens(to, owner) == 0)
        } else {
            u32::MAX
        };
        let got = n.min(self.tokens(reserve, owner)).min(room);
        if got > 0 && reserve != to {
            self.shift(owner, TokenOp::Gain, reserve, to, got, cause);
        }
        if got < n {
            self.emit(
                dst.key,
                Change::Short {
                    owner,
                    zone: to,
                    lost: n - got,
                },
                cause,
            );
        }
        Ok(Gained {
            gained: u64::from(got),
            lost: u64::from(n - got),
        })
    }

    /// K4.3/K4.4: places one of `owner`'s tokens in `to` from the reserve. If `to` is one-per-owner and
    /// already holds one, the token goes to (stays in) the reserve. If reserve is empty, it comes
    /// from `fallback` (a pool the owner chose).
    ///
    /// # Errors
    /// [`Refusal::NotEnoughTokens`] when the reserve and the fallback are both empty.
    pub fn place_from_reserve(
        &mut self,
        owner: Owner,
        to: ZoneId,
        fallback: Option<ZoneId>,
        cause: Cause,
    ) -> Result<Placement, Refusal> {
        let dst = *self.zone(to)?;
        let reserve = self.owner_reserve(dst.supply, owner)?;
        if let Some(pool) = fallback {
            self.same_supply(self.zone(pool)?, &dst)?;
        }
        if dst.one_per_owner && self.tokens(to, owner) > 0 {
            // The token would go straight back to the reserve: report it, move nothing.
            self.emit(
                dst.key,
                Change::Tokens {
                    owner,
                    op: TokenOp::Bounce,
                    from: reserve,
                    to: reserve,
                    n: 0,
                },
                cause,
            );
            return Ok(Placement::Bounced);
        }
        if self.tokens(reserve, owner) > 0 {
            self.shift(owner, TokenOp::Move, reserve, to, 1, cause);
            return Ok(Placement::FromReserve);
        }
        match fallback {
            Some(pool) => {
                let src = *self.zone(pool)?;
                if self.tokens(pool, owner) == 0 {
                    return Err(Refusal::NotEnoughTokens {
                        owner,
                        zone: src.key,
                        need: 1,
                        have: 0,
                    });
                }
                self.shift(owner, TokenOp::Fallback, pool, to, 1, cause);
                Ok(Placement::FromFallback)
            }
            None => Err(Refusal::NotEnoughTokens {
                owner,
                zone: self.zones[reserve.index()].key,
                need: 1,
                have: 0,
            }),
        }
    }

    // ----- permanents (K5) -----

    /// Creates a ready permanent; `ready_at` readies it automatically when that scope ends.
    ///
    /// # Errors
    /// Only when the ledger is full.
    pub fn add_permanent(
        &mut self,
        key: Key,
        ready_at: Option<Scope>,
    ) -> Result<PermanentId, Refusal> {
        let id = PermanentId(index_u32(self.permanents.len())?);
        self.permanents.push(Permanent {
            key,
            exhausted: false,
            ready_at,
        });
        Ok(id)
    }

    /// The permanent behind a handle.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`].
    #[inline]
    pub fn permanent(&self, id: PermanentId) -> Result<&Permanent, Refusal> {
        self.permanents
            .get(id.index())
            .ok_or(missing(PermanentId::WHAT, id.0))
    }

    /// Every permanent, in creation order.
    pub fn permanents(&self) -> &[Permanent] {
        &self.permanents
    }

    /// Whether a permanent is exhausted (false for unknown handles).
    #[inline]
    pub fn is_exhausted(&self, id: PermanentId) -> bool {
        self.permanents.get(id.index()).is_some_and(|p| p.exhausted)
    }

    /// K5: activates (exhausts) a ready permanent.
    ///
    /// # Errors
    /// [`Refusal::Exhausted`] if it already is.
    #[inline]
    pub fn activate(&mut self, id: PermanentId, cause: Cause) -> Result<(), Refusal> {
        let p = self.permanent(id)?;
        if p.exhausted {
            return Err(Refusal::Exhausted { key: p.key });
        }
        let key = p.key;
        self.permanents[id.index()].exhausted = true;
        self.emit(
            key,
            Change::Exhaust {
                permanent: id,
                exhausted: true,
            },
            cause,
        );
        Ok(())
    }

    /// K5: readies a permanent (nothing happens if it is ready).
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`].
    #[inline]
    pub fn ready(&mut self, id: PermanentId, cause: Cause) -> Result<(), Refusal> {
        let p = self.permanent(id)?;
        if p.exhausted {
            let key = p.key;
            self.permanents[id.index()].exhausted = false;
            self.emit(
                key,
                Change::Exhaust {
                    permanent: id,
                    exhausted: false,
                },
                cause,
            );
        }
        Ok(())
    }

    /// K5: readies every exhausted permanent of `owner` (a Ready Phase).
    pub fn ready_owner(&mut self, owner: Owner, cause: Cause) {
        for i in 0..self.permanents.len() {
            let p = self.permanents[i];
            if p.key.owner == owner && p.exhausted {
                self.permanents[i].exhausted = false;
                self.emit(
                    p.key,
                    Change::Exhaust {
                        permanent: PermanentId(i as u32),
                        exhausted: false,
                    },
                    cause,
                );
            }
        }
    }

    // ----- limits checked at a boundary (K6) -----

    /// K6: compares a measured count with its limit. Over the limit, a [`Demand`] for the excess is raised
    /// (or updated) and the owner must choose what goes; at or under it, a pending demand is satisfied.
    /// Returns the excess still pending.
    pub fn check_limit(&mut self, key: Key, measured: u64, max: u64, cause: Cause) -> u32 {
        let excess = u32::try_from(measured.saturating_sub(max)).unwrap_or(u32::MAX);
        let at = self.pending.iter().position(|d| d.key == key);
        match at {
            Some(i) if self.pending[i].excess == excess => {}
            Some(i) => {
                let old = self.pending[i];
                self.emit(
                    key,
                    Change::Demand {
                        demand: old,
                        index: i as u32,
                        raised: false,
                    },
                    cause,
                );
                self.pending.remove(i);
                if excess > 0 {
                    let demand = Demand { key, excess };
                    self.pending.insert(i, demand);
                    self.emit(
                        key,
                        Change::Demand {
                            demand,
                            index: i as u32,
                            raised: true,
                        },
                        cause,
                    );
                }
            }
            None if excess > 0 => {
                let demand = Demand { key, excess };
                let i = self.pending.len();
                self.pending.push(demand);
                self.emit(
                    key,
                    Change::Demand {
                        demand,
                        index: i as u32,
                        raised: true,
                    },
                    cause,
                );
            }
            None => {}
        }
        excess
    }

    /// Choices that must be made before anything else, oldest first (K6).
    pub fn pending(&self) -> &[Demand] {
        &self.pending
    }

    /// K6: refuses while a choice is pending for anybody, naming the first.
    ///
    /// # Errors
    /// [`Refusal::AwaitingChoice`].
    #[inline]
    pub fn ensure_nothing_pending(&self) -> Result<(), Refusal> {
        match self.pending.first() {
            None => Ok(()),
            Some(d) => Err(Refusal::AwaitingChoice {
                owner: d.key.owner,
                key: d.key,
                excess: d.excess,
            }),
        }
    }

    // ----- atomic costs (K8) -----

    /// K8: pays a cost of several parts whole or not at all.
    ///
    /// # Errors
    /// The first part's refusal; nothing changes.
    pub fn pay_cost(&mut self, parts: &[Part], cause: Cause) -> Result<(), Refusal> {
        self.atomically(|l| {
            for part in parts {
                match *part {
                    Part::Spend(id, n) => l.spend(id, n, cause)?,
                    Part::Charges(id, k) => l.spend_charges(id, k, cause)?,
                    Part::Recover(id, k) => l.recover_exactly(id, k, cause)?,
                    Part::Tokens { owner, from, to, n } => {
                        l.move_tokens(owner, from, to, n, cause)?;
                    }
                    Part::Exhaust(id) => l.activate(id, cause)?,
                }
            }
            Ok(())
        })
    }

    // ----- the clock (K10) and state-based checks (K11) -----

    /// Where the clock stands.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// K10: ends `scope` (and every scope inside it) and runs the kernel's upkeep, in this order:
    /// 1. amounts whose lifetime ends empty to their floor (or reset to their start), in creation order;
    /// 2. tracks recurring at this scope recover (r > 0) or lose (r < 0) `|r|` charges, in creation order;
    ///    a track that cannot be recovered does not recover;
    /// 3. permanents that ready at this scope ready;
    /// 4. the clock advances.
    ///
    /// Limit checks (K6) and ruleset hooks follow, in the ruleset, after this returns.
    #[inline]
    pub fn end_scope(&mut self, scope: Scope) {
        let cause = Cause::Upkeep(scope);
        for i in 0..self.amounts.len() {
            let a = self.amounts[i];
            // A resetting amount whose cap was lowered below its start resets to the cap (K1.4).
            let target = a
                .cap
                .map_or(a.on_expiry, |c| a.on_expiry.min(c))
                .max(a.floor);
            if a.lifetime != Scope::Game && a.lifetime.ends_with(scope) && a.value != target {
                self.amounts[i].value = target;
                self.emit(
                    a.key,
                    Change::Expire {
                        amount: AmountId(i as u32),
                        before: a.value,
                        after: target,
                    },
                    cause,
                );
            }
        }
        for i in 0..self.tracks.len() {
            let t = self.tracks[i];
            if !t.recurs_at.ends_with(scope) {
                continue;
            }
            let id = TrackId(i as u32);
            let r = self.recurrence(id);
            let after = if r > 0 && !t.unrecoverable {
                t.active.saturating_add(r.unsigned_abs()).min(t.limit)
            } else if r < 0 {
                t.active.saturating_sub(r.unsigned_abs())
            } else {
                t.active
            };
            self.set_active(id, after, ChargeOp::Recur, cause);
        }
        for i in 0..self.permanents.len() {
            let p = self.permanents[i];
            if p.exhausted && p.ready_at.is_some_and(|s| s.ends_with(scope)) {
                self.permanents[i].exhausted = false;
                self.emit(
                    p.key,
                    Change::Exhaust {
                        permanent: PermanentId(i as u32),
                        exhausted: false,
                    },
                    cause,
                );
            }
        }
        let before = self.clock;
        let after = before.after(scope);
        self.clock = after;
        self.emit(
            Key::new(Owner::GAME, Kind::CLOCK, 0),
            Change::Scope {
                scope,
                before,
                after,
            },
            cause,
        );
    }

    /// K11: state-based checks. Calls `react` with every event recorded from position `from` of the log on,
    /// including the events `react` itself causes, until none is left; returns the log's length at the end.
    /// Events are visited in the order they happened.
    ///
    /// On `Err`, the changes `react` made stay: run it inside a transaction ([`atomically`](Self::atomically),
    /// or the plugin adapter's per-action transaction) so that a failed check rolls them back.
    ///
    /// # Errors
    /// The first error `react` returns, or [`Refusal::Invalid`] if more than `max_rounds` events were
    /// visited (a rule that never settles).
    pub fn settle<E: From<Refusal>>(
        &mut self,
        from: usize,
        max_rounds: usize,
        mut react: impl FnMut(&mut Ledger, Event) -> Result<(), E>,
    ) -> Result<usize, E> {
        let mut at = from;
        let mut visited = 0usize;
        while at < self.log.len() {
            let event = self.log[at];
            at += 1;
            visited += 1;
            if visited > max_rounds {
                return Err(Refusal::Invalid(format!(
                    "state-based checks did not settle after {max_rounds} events"
                ))
                .into());
            }
            react(self, event)?;
        }
        Ok(at)
    }

    // ----- randomness -----

    /// A uniform integer in `0..n` from the game's RNG, recorded as an event so that replays agree.
    pub fn random_below(&mut self, n: u64, cause: Cause) -> u64 {
        let v = self.rng.below(n);
        self.emit(
            Key::new(Owner::GAME, Kind::CLOCK, 0),
            Change::Random { draws: 1 },
            cause,
        );
        v
    }

    /// Shuffles `items` with the game's RNG, recorded as one event.
    pub fn shuffle<T>(&mut self, items: &mut [T], cause: Cause) {
        self.rng.shuffle(items);
        let draws = u32::try_from(items.len().saturating_sub(1)).unwrap_or(u32::MAX);
        if draws > 0 {
            self.emit(
                Key::new(Owner::GAME, Kind::CLOCK, 0),
                Change::Random { draws },
                cause,
            );
        }
    }

    // ----- the ruleset's own events -----

    /// Records a ruleset's own event: something an action or effect did to the ruleset's state rather
    /// than the ledger's (a card picked, a move planned), named by `code` in the ruleset's
    /// [`Vocabulary::notes`](crate::Vocabulary::notes), about the resource or subject `key`, with up to
    /// three numbers. It changes nothing; hosts write it in words.
    #[inline]
    pub fn note(&mut self, key: Key, code: u16, args: [i32; 3], cause: Cause) {
        self.emit(key, Change::Note { code, args }, cause);
    }

    // ----- invariants -----

    /// The tables agree with each other, so that no handle stored in the ledger indexes out of bounds.
    fn check_structure(&self) -> Result<(), Violation> {
        let o = usize::from(self.owners);
        if self.supply.len() != self.reserve.len()
            || self.supply.len() < o
            || self.supply.len() % o.max(1) != 0
        {
            return Err(Violation(format!(
                "{} owners but {} supply totals and {} reserves",
                self.owners,
                self.supply.len(),
                self.reserve.len()
            )));
        }
        let supplies = self.supply.len() / o.max(1);
        if let Some(z) = self
            .zones
            .iter()
            .find(|z| usize::from(z.supply) >= supplies.max(1))
        {
            return Err(Violation(format!(
                "{} holds supply {} but owners have {supplies}",
                z.key, z.supply
            )));
        }
        if Some(self.tokens.len()) != self.zones.len().checked_mul(o) {
            return Err(Violation(format!(
                "{} token counts for {} zones of {} owners",
                self.tokens.len(),
                self.zones.len(),
                self.owners
            )));
        }
        if let Some(c) = self
            .contributions
            .iter()
            .find(|c| c.track.index() >= self.tracks.len())
        {
            return Err(Violation(format!(
                "capacity source {} feeds missing {}",
                c.source, c.track
            )));
        }
        // Supply by supply, owner by owner (a division per slot was a tenth of a restore).
        let slots = self
            .reserve
            .chunks_exact(o.max(1))
            .zip(self.supply.chunks_exact(o.max(1)));
        for (s, (reserves, supplies)) in slots.enumerate() {
            for (owner, (reserve, supply)) in reserves.iter().zip(supplies).enumerate() {
                if reserve.is_some_and(|z| {
                    z.index() >= self.zones.len() || usize::from(self.zones[z.index()].supply) != s
                }) || reserve.is_some() != (*supply > 0)
                {
                    return Err(Violation(format!(
                        "p{owner} has {supply} tokens of supply {s} and reserve {}",
                        reserve.map_or_else(|| "none".to_owned(), |z| z.to_string())
                    )));
                }
            }
        }
        if let Some(a) = self.amounts.iter().find(|a| a.on_expiry < a.floor) {
            return Err(Violation(format!(
                "{} expires to {} below its floor {}",
                a.key, a.on_expiry, a.floor
            )));
        }
        Ok(())
    }

    /// Checks every kernel invariant: floors and caps (K1), `0 <= active <= limit` and limits equal to the
    /// sum of capacity sources (K3), per-owner conservation of each token supply (K4), at most one token
    /// per owner in a one-per-owner zone (K4.3).
    ///
    /// # Errors
    /// The first [`Violation`] found.
    pub fn check_invariants(&self) -> Result<(), Violation> {
        self.check_structure()?;
        for a in &self.amounts {
            if a.value < a.floor || a.cap.is_some_and(|c| a.value > c) {
                return Err(Violation(format!(
                    "{} = {} outside [{}, {}]",
                    a.key,
                    a.value,
                    a.floor,
                    cap_text(a.cap)
                )));
            }
        }
        let mut capacity = vec![0u64; self.tracks.len()];
        for c in &self.contributions {
            capacity[c.track.index()] += u64::from(c.capacity);
        }
        for (t, &sum) in self.tracks.iter().zip(&capacity) {
            if t.active > t.limit {
                return Err(Violation(format!(
                    "{}: {} active of {}",
                    t.key, t.active, t.limit
                )));
            }
            if sum != u64::from(t.limit) {
                return Err(Violation(format!(
                    "{}: limit {} but sources sum to {sum}",
                    t.key, t.limit
                )));
            }
        }
        let o = usize::from(self.owners);
        // One pass over the token matrix (zones x owners): each zone's counts are added to their
        // (supply, owner) totals, and a one-per-owner zone's are checked on the way.
        let mut held = vec![0u64; self.supply.len()];
        for (zone, counts) in self.zones.iter().zip(self.tokens.chunks_exact(o.max(1))) {
            let totals = &mut held[usize::from(zone.supply) * o..][..o];
            for (sum, &count) in totals.iter_mut().zip(counts) {
                *sum += u64::from(count);
            }
            if zone.one_per_owner && counts.iter().any(|&n| n > 1) {
                let owner = counts.iter().position(|&n| n > 1).unwrap_or_default();
                return Err(Violation(format!(
                    "one-per-owner {} holds {} tokens of p{owner}",
                    zone.key, counts[owner]
                )));
            }
        }
        if let Some(slot) = (0..held.len()).find(|&i| held[i] != u64::from(self.supply[i])) {
            let (s, owner) = (slot / o.max(1), slot % o.max(1));
            return Err(Violation(format!(
                "p{owner} owns {} tokens of supply {s} but {} are in its zones",
                self.supply[slot], held[slot]
            )));
        }
        Ok(())
    }
}

fn index_u32(len: usize) -> Result<u32, Refusal> {
    u32::try_from(len).map_err(|_| Refusal::Invalid("ledger is full".into()))
}

/// K9: every committed event is also a `tracing` event (target `coffer::event`, level DEBUG).
#[cold]
#[inline(never)]
fn publish(event: &Event) {
    tracing::debug!(target: "coffer::event", owner = %event.key.owner, kind = event.key.kind.0,
        subject = event.key.subject, change = ?event.change, cause = ?event.cause, "resource changed");
}

/// The crate README's code blocks, compiled and run as doctests so that the README cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

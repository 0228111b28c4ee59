//! The [`Ledger`]: every resource of one game, the clock, the RNG, and the log of what changed.
//!
//! One file per section of the kernel: [`log`] (events, transactions, replay), [`amounts`] (K1, K2),
//! [`tracks`] (K3), [`tokens`] (K4), [`permanents`] (K5), [`limits`] (K6), [`costs`] (K7, K8),
//! [`upkeep`] (K10, K11, randomness, notes) and [`invariants`].

mod amounts;
mod board;
mod costs;
mod invariants;
mod layout;
mod limits;
mod log;
mod permanents;
mod routes;
mod tokens;
mod tracks;
mod upkeep;

pub use board::ZoneSet;
pub use costs::Generic;
pub use layout::{LaidOut, Layout, Unlaid};
pub use routes::TokenRoute;
pub use tokens::Payout;

use crate::clock::{Clock, Scope};
use crate::error::Refusal;
use crate::event::{Bound, Cause, Change, ChargeOp, Demand, Event, Measure, TokenOp};
use crate::id::{AmountId, Key, Kind, Owner, PermanentId, TrackId, ZoneId};
use crate::rng::GameRng;
use crate::spec::{
    Amount, AmountSpec, Contribution, Permanent, Recurrence, Track, TrackSpec, Zone,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

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
pub enum Part<'a> {
    /// Voluntarily spend `n` of an amount (K1.2).
    Spend(AmountId, u64),
    /// Spend `need` split over several amounts as the payer allocated it (K7): the generic part of a
    /// cost, one way of [`Ledger::payments`].
    Split {
        /// How much each amount gives; the same amount may appear more than once.
        allocation: &'a [(AmountId, u64)],
        /// What the allocation must sum to.
        need: u64,
    },
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
    game_supplies: usize,
}

/// A broken kernel invariant, found by [`Ledger::check_invariants`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invariant broken: {0}")]
pub struct Violation(pub String);

/// Every resource of one game: amounts, charge tracks, token zones, permanents, pending choices, the clock
/// and the seeded RNG. Each change is recorded as an [`Event`] in the log until [`Ledger::take_events`].
///
/// ```
/// use coffer_kernel::{AmountSpec, Cause, Key, Kind, Ledger, Owner, Refusal};
///
/// let mut ledger = Ledger::new(2, 7);
/// let gold = ledger.add_amount(AmountSpec::new(Key::new(Owner(0), Kind(0), 0)).cap(20)).unwrap();
/// let gained = ledger.gain(gold, 25, Cause::Setup).unwrap();
/// assert_eq!((gained.gained, gained.lost), (20, 5)); // K1.1: the excess is lost and reported
/// let refused = ledger.spend(gold, 21, Cause::Setup);
/// assert!(matches!(refused, Err(Refusal::Insufficient { need: 21, have: 20, .. })));
/// assert_eq!(ledger.value(gold), 20); // a refusal changes nothing
/// ```
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "LedgerData")]
pub struct Ledger {
    owners: u16,
    amounts: Vec<Amount>,
    tracks: Vec<Track>,
    contributions: Vec<Contribution>,
    /// The zones. This and the four supply tables below are the ledger's [`Layout`]: fixed by setup,
    /// shared (copied on write) with the layout handles taken from it and with other games' ledgers that
    /// adopted it.
    zones: Arc<Vec<Zone>>,
    /// The players' token counts, `zone * owners + owner`.
    tokens: Vec<u32>,
    /// Each player's total tokens of each supply (K4 conservation), `supply * owners + owner`.
    supply: Arc<Vec<u32>>,
    /// Each player's reserve zone of each supply, if it has tokens there, `supply * owners + owner`.
    reserve: Arc<Vec<Option<ZoneId>>>,
    /// The game's own tokens ([`Owner::GAME`], a bank's) in each zone, apart from the players' matrix so
    /// that a game without a bank is written exactly as before banks existed.
    game_tokens: Vec<u32>,
    /// The game's total tokens of each supply (K4.6).
    game_supply: Arc<Vec<u32>>,
    /// The game's reserve zone (its bank) of each supply.
    game_reserve: Arc<Vec<Option<ZoneId>>>,
    permanents: Vec<Permanent>,
    pending: Vec<Demand>,
    clock: Clock,
    rng: GameRng,
    /// Derived from the token tables (never written): which zones hold whose tokens, and each class's zones;
    /// kept from its first zone on by a new ledger, built on first use by a restored one.
    board: std::sync::OnceLock<board::Board>,
    log: Vec<Event>,
    depth: u32,
    /// Set while bounded demands are being re-measured or replaced (K6.2), so their own events do not
    /// re-measure again.
    measuring: bool,
    /// Which layout [`TokenRoute`]s see: dropped by every change of the layout (never written).
    stamp: routes::Stamp,
}

/// A [`Ledger`] as it is written. Without game-owned tokens the tables have one column per player, as
/// they had before banks; with them, each row of the token matrix and of the supply tables gains the game's
/// column after the players'.
#[derive(Serialize)]
struct LedgerOut<'a> {
    owners: u16,
    #[serde(serialize_with = "crate::rows::serialize")]
    amounts: &'a [Amount],
    tracks: &'a [Track],
    contributions: &'a [Contribution],
    #[serde(serialize_with = "crate::rows::zones::serialize_zones")]
    zones: &'a [Zone],
    #[serde(serialize_with = "crate::rows::matrix::serialize_matrix")]
    tokens: &'a [u32],
    #[serde(serialize_with = "crate::rows::serialize")]
    supply: &'a [u32],
    #[serde(serialize_with = "crate::rows::serialize")]
    reserve: &'a [Option<ZoneId>],
    #[serde(serialize_with = "crate::rows::serialize")]
    permanents: &'a [Permanent],
    pending: &'a [Demand],
    clock: Clock,
    rng: &'a GameRng,
}

/// Each row of `players` (`width` cells) followed by its cell of `game`.
fn widen<T: Copy>(players: &[T], width: usize, game: &[T]) -> Vec<T> {
    let mut out = Vec::with_capacity(players.len() + game.len());
    for (row, &g) in players.chunks_exact(width.max(1)).zip(game) {
        out.extend_from_slice(row);
        out.push(g);
    }
    out
}

/// The players' cells and the game's column of a table written wide (see [`LedgerOut`]).
fn narrow<T: Copy>(wide: Vec<T>, width: usize) -> (Vec<T>, Vec<T>) {
    let mut players = Vec::with_capacity(wide.len() / (width + 1) * width);
    let mut game = Vec::with_capacity(wide.len() / (width + 1));
    for row in wide.chunks_exact(width + 1) {
        players.extend_from_slice(&row[..width]);
        game.push(row[width]);
    }
    (players, game)
}

impl Serialize for Ledger {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let o = usize::from(self.owners);
        let wide;
        let (tokens, supply, reserve) = if self.game_supply.iter().all(|&n| n == 0) {
            (&self.tokens[..], &self.supply[..], &self.reserve[..])
        } else {
            wide = (
                widen(&self.tokens, o, &self.game_tokens),
                widen(&self.supply, o, &self.game_supply),
                widen(&self.reserve, o, &self.game_reserve),
            );
            (&wide.0[..], &wide.1[..], &wide.2[..])
        };
        LedgerOut {
            owners: self.owners,
            amounts: &self.amounts,
            tracks: &self.tracks,
            contributions: &self.contributions,
            zones: &self.zones,
            tokens,
            supply,
            reserve,
            permanents: &self.permanents,
            pending: &self.pending,
            clock: self.clock,
            rng: &self.rng,
        }
        .serialize(s)
    }
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
    #[serde(deserialize_with = "crate::rows::zones::deserialize_zones")]
    zones: Vec<Zone>,
    tokens: crate::rows::matrix::Matrix,
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
        let o = usize::from(d.owners);
        let zones = d.zones.len();
        let sized = |e: String| Violation(format!("{e} for {zones} zones of {} owners", d.owners));
        // Written wide (a column for the game's tokens) only when the game has tokens; see `LedgerOut`.
        let wide = zones > 0 && Some(d.tokens.len()) == zones.checked_mul(o + 1);
        let (tokens, supply, reserve, game_tokens, game_supply, game_reserve) = if wide {
            let cells = d.tokens.cells(zones.checked_mul(o + 1)).map_err(sized)?;
            if !d.supply.len().is_multiple_of(o + 1) || d.reserve.len() != d.supply.len() {
                return Err(Violation(format!(
                    "{} supply totals and {} reserves for {} owners and the game",
                    d.supply.len(),
                    d.reserve.len(),
                    d.owners
                )));
            }
            let (tokens, game_tokens) = narrow(cells, o);
            let (supply, game_supply) = narrow(d.supply, o);
            let (reserve, game_reserve) = narrow(d.reserve, o);
            (
                tokens,
                supply,
                reserve,
                game_tokens,
                game_supply,
                game_reserve,
            )
        } else {
            let tokens = d.tokens.cells(zones.checked_mul(o)).map_err(sized)?;
            let supplies = (d.supply.len() / o.max(1)).max(1);
            (
                tokens,
                d.supply,
                d.reserve,
                vec![0; zones],
                vec![0; supplies],
                vec![None; supplies],
            )
        };
        let ledger = Ledger {
            owners: d.owners,
            amounts: d.amounts,
            tracks: d.tracks,
            contributions: d.contributions,
            zones: Arc::new(d.zones),
            tokens,
            supply: Arc::new(supply),
            reserve: Arc::new(reserve),
            game_tokens,
            game_supply: Arc::new(game_supply),
            game_reserve: Arc::new(game_reserve),
            permanents: d.permanents,
            pending: d.pending,
            clock: d.clock,
            rng: d.rng,
            board: std::sync::OnceLock::new(),
            log: Vec::new(),
            depth: 0,
            measuring: false,
            stamp: routes::Stamp::default(),
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
            && self.game_tokens == other.game_tokens
            && self.game_supply == other.game_supply
            && self.game_reserve == other.game_reserve
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

std::thread_local! {
    /// The ledger [`Ledger::recycle`] last gave back on this thread, for the next [`Ledger::new`] here.
    static SPARE: std::cell::Cell<Option<Ledger>> = const { std::cell::Cell::new(None) };
}

/// Empties `table` for reuse if this ledger is its only holder (to `cells` cells of `cell`), else starts
/// it again from the empty layout's `empty()`.
fn reuse<T: Clone>(
    table: &mut Arc<Vec<T>>,
    cells: usize,
    cell: T,
    empty: impl FnOnce() -> Arc<Vec<T>>,
) {
    match Arc::get_mut(table) {
        Some(own) => {
            own.clear();
            own.resize(cells, cell);
        }
        None => *table = empty(),
    }
}

impl Ledger {
    /// An empty ledger for `owners` players, with the RNG seeded by `seed`.
    ///
    /// It takes the tables of the ledger last given back on this thread with [`recycle`](Self::recycle),
    /// emptied, if there is one: a game set up again after it (a new playout's, a re-deal's) grows none
    /// of the tables the one before grew. Which it takes changes nothing but where its tables live: the
    /// ledger is equal to a new one in every other way.
    pub fn new(owners: u16, seed: u64) -> Ledger {
        // `try_with`: a ledger made while the thread's locals are being torn down gets new tables.
        match SPARE.try_with(std::cell::Cell::take).ok().flatten() {
            Some(mut spare) => {
                spare.empty(owners, seed);
                spare
            }
            None => Ledger::blank(owners, seed),
        }
    }

    /// Gives this ledger's tables to the next [`Ledger::new`] on this thread, leaving `self` an empty
    /// ledger of no players: what a host does with the ledger of a game it sets up again
    /// ([`Ruleset::reset`](../coffer_sdk/trait.Ruleset.html#method.reset)). One ledger is kept per
    /// thread; giving back another replaces it. Tables it shares with other ledgers (an adopted
    /// [`Layout`]) stay theirs.
    pub fn recycle(&mut self) {
        let spare = std::mem::replace(self, Ledger::blank(0, 0));
        // While the thread's locals are being torn down (a game dropped by another local's destructor)
        // the tables are simply freed.
        let _ = SPARE.try_with(|slot| slot.set(Some(spare)));
    }

    /// Makes this ledger equal to `Ledger::blank(owners, seed)`, keeping the capacity of its own tables.
    fn empty(&mut self, owners: u16, seed: u64) {
        let players = usize::from(owners);
        // Every field by name: a new one does not compile until it is emptied here too.
        let Ledger {
            owners: o,
            amounts,
            tracks,
            contributions,
            zones,
            tokens,
            supply,
            reserve,
            game_tokens,
            game_supply,
            game_reserve,
            permanents,
            pending,
            clock,
            rng,
            board,
            log,
            depth,
            measuring,
            stamp,
        } = self;
        stamp.clear();
        *o = owners;
        amounts.clear();
        tracks.clear();
        contributions.clear();
        // The empty layout's tables (`Layout::empty`), only where this ledger shares its own.
        match Arc::get_mut(zones) {
            Some(own) => own.clear(),
            None => *zones = Layout::empty(owners).zones,
        }
        tokens.clear();
        reuse(supply, players, 0, || Layout::empty(owners).supply);
        reuse(reserve, players, None, || Layout::empty(owners).reserve);
        game_tokens.clear();
        reuse(game_supply, 1, 0, || Layout::empty(owners).game_supply);
        reuse(game_reserve, 1, None, || Layout::empty(owners).game_reserve);
        permanents.clear();
        pending.clear();
        *clock = Clock::default();
        *rng = GameRng::new(seed);
        // The index of a ledger without zones, on the old index's tables.
        match board.get_mut() {
            Some(index) => index.empty(owners),
            None => *board = std::sync::OnceLock::new(),
        }
        log.clear();
        *depth = 0;
        *measuring = false;
    }

    /// A new ledger's tables, allocated anew.
    fn blank(owners: u16, seed: u64) -> Ledger {
        let Layout {
            zones,
            supply,
            reserve,
            game_supply,
            game_reserve,
            ..
        } = Layout::empty(owners);
        Ledger {
            owners,
            amounts: Vec::new(),
            tracks: Vec::new(),
            contributions: Vec::new(),
            zones,
            tokens: Vec::new(),
            supply,
            reserve,
            game_tokens: Vec::new(),
            game_supply,
            game_reserve,
            permanents: Vec::new(),
            pending: Vec::new(),
            clock: Clock::default(),
            rng: GameRng::new(seed),
            board: std::sync::OnceLock::new(),
            log: Vec::new(),
            depth: 0,
            measuring: false,
            stamp: routes::Stamp::default(),
        }
    }

    /// How many players own things here.
    pub fn owners(&self) -> u16 {
        self.owners
    }

    /// Whether this ledger drew random numbers since `earlier`, a copy of it taken before (a die rolled,
    /// a card drawn, a pile shuffled): what a draw showed cannot be taken back. One comparison of the
    /// generators' states.
    pub fn drew_since(&self, earlier: &Ledger) -> bool {
        self.rng != earlier.rng
    }
}

fn index_u32(len: usize) -> Result<u32, Refusal> {
    u32::try_from(len).map_err(|_| Refusal::Invalid("ledger is full".into()))
}

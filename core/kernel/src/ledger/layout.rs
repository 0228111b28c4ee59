//! A ledger's [`Layout`]: what setup fixes and play never changes (the zones, and each owner's total and
//! reserve of each supply, K4), shared by the games of one setup and left out of their snapshots
//! ([`LaidOut`], [`Unlaid`]).

use super::*;
use crate::rows::matrix::Matrix;
use std::sync::OnceLock;

/// What a ledger's setup fixes and play never changes: its zones, and each owner's total and reserve of
/// each supply (K4). A ruleset whose setup lays out every game of one configuration alike keeps one
/// `Layout` with the content it shares by that configuration ([`Shared`](../coffer_sdk/struct.Shared.html)); its games'
/// ledgers share the layout's tables ([`Ledger::adopt_layout`]) and its snapshots leave them out
/// ([`Ledger::laid_out`]), to be laid on the layout of the configuration they name when they are read
/// ([`Unlaid::lay`]).
///
/// A `Layout` is only ever taken from a live ledger ([`Ledger::layout`]), never read from bytes: the
/// kernel keeps a live ledger's layout consistent (built by its own calls, or read from a snapshot and
/// checked), so a ledger laid on it is spared the layout's structural checks and is checked for what the
/// snapshot carried: its token counts (conserved against the layout's totals), amounts, tracks,
/// permanents and pending choices.
///
/// The tables are shared copy-on-write: a ledger that changes its layout after sharing it (stocking or
/// adding a zone during play) gets its own copy, and its snapshots then carry it.
///
/// ```
/// use coffer_kernel::{Cause, Key, Kind, Ledger, Owner, Unlaid, Zone};
///
/// // Setup: every game of this configuration lays out the same zones and supplies.
/// let setup = |seed| {
///     let mut l = Ledger::new(2, seed);
///     let reserve = l.add_zone(Zone::new(Key::new(Owner(0), Kind(0), 0))).unwrap();
///     let board = l.add_zone(Zone::new(Key::new(Owner::GAME, Kind(1), 0))).unwrap();
///     l.stock(Owner(0), reserve, 5, Cause::Setup).unwrap();
///     (l, board)
/// };
/// let (first, _) = setup(1);
/// let layout = first.layout(); // kept with the configuration's shared content
/// let (mut game, board) = setup(2);
/// assert!(game.adopt_layout(&layout)); // equal: the game shares the layout's tables
/// game.move_tokens(Owner(0), first.reserve(Owner(0)).unwrap(), board, 2, Cause::Setup).unwrap();
///
/// let bytes = postcard::to_stdvec(&game.laid_out(&layout)).unwrap();
/// let whole = postcard::to_stdvec(&game).unwrap();
/// assert!(bytes.len() < whole.len()); // no zones, totals or reserves
/// let read: Unlaid = postcard::from_bytes(&bytes).unwrap();
/// let restored = read.lay(&layout).unwrap();
/// assert_eq!(restored, game);
/// assert!(restored.has_layout(&layout));
///
/// // The layout of another setup (here, another player count) does not fit: a clear error.
/// let other = Ledger::new(3, 0).layout();
/// let read: Unlaid = postcard::from_bytes(&bytes).unwrap();
/// assert!(read.lay(&other).is_err());
/// ```
#[derive(Clone, Debug)]
pub struct Layout {
    owners: u16,
    pub(super) zones: Arc<Vec<Zone>>,
    pub(super) supply: Arc<Vec<u32>>,
    pub(super) reserve: Arc<Vec<Option<ZoneId>>>,
    pub(super) game_supply: Arc<Vec<u32>>,
    pub(super) game_reserve: Arc<Vec<Option<ZoneId>>>,
}

impl Layout {
    /// How many players the layout's ledger has.
    pub fn owners(&self) -> u16 {
        self.owners
    }

    /// The zones, in creation order.
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    /// The layout of a ledger with no zones and no supplies for `owners` players: one per player count
    /// (up to 16) shared by every such ledger of the process, so that a game whose setup lays out no
    /// tokens holds no tables of its own (built anew for more players).
    pub(super) fn empty(owners: u16) -> Layout {
        static EMPTY: [OnceLock<Layout>; 17] = [const { OnceLock::new() }; 17];
        let build = || {
            let o = usize::from(owners);
            Layout {
                owners,
                zones: Arc::new(Vec::new()),
                supply: Arc::new(vec![0; o]),
                reserve: Arc::new(vec![None; o]),
                game_supply: Arc::new(vec![0]),
                game_reserve: Arc::new(vec![None]),
            }
        };
        match EMPTY.get(usize::from(owners)) {
            Some(cell) => cell.get_or_init(build).clone(),
            None => build(),
        }
    }

    /// Whether the game owns tokens (K4.6): its ledgers then write the game's column of the token matrix.
    fn banked(&self) -> bool {
        self.game_supply.iter().any(|&n| n > 0)
    }
}

impl PartialEq for Layout {
    /// Equal tables (shared ones compare by address first).
    fn eq(&self, other: &Layout) -> bool {
        self.owners == other.owners
            && self.zones == other.zones
            && self.supply == other.supply
            && self.reserve == other.reserve
            && self.game_supply == other.game_supply
            && self.game_reserve == other.game_reserve
    }
}

impl Eq for Layout {}

impl Ledger {
    /// Creates token zones one after another, as [`add_zone`](Self::add_zone) would, and appends their
    /// handles to `out`: a board's setup in one call, which checks that the layout's zone table is this
    /// ledger's own (an atomic operation) twice in all rather than once per zone (a sixth of setting a
    /// 36-zone game up).
    ///
    /// # Errors
    /// Only when the ledger is full; no zone is added then.
    pub fn add_zones(
        &mut self,
        zones: impl IntoIterator<Item = Zone>,
        out: &mut Vec<ZoneId>,
    ) -> Result<(), Refusal> {
        let before = (
            self.zones.len(),
            self.supply.len(),
            self.game_supply.len(),
            out.len(),
        );
        let mut zones = zones.into_iter();
        if self.board.get().is_none() {
            // The first zone builds the board index; the others extend it.
            match zones.next() {
                Some(zone) => out.push(self.add_zone(zone)?),
                None => return Ok(()),
            }
        }
        self.stamp.clear();
        // Taken out of the shared table for the loop, and put back: two writable checks in all. The board
        // index exists, so adding a zone's entry does not read the table.
        let mut table = std::mem::take(Arc::make_mut(&mut self.zones));
        let mut full = false;
        for zone in zones {
            let Ok(index) = u32::try_from(table.len()) else {
                full = true;
                break;
            };
            self.fit_supplies(zone.supply);
            table.push(zone);
            self.zone_added(ZoneId(index), zone.key.kind);
            out.push(ZoneId(index));
        }
        *Arc::make_mut(&mut self.zones) = table;
        if full {
            let (zones, supplies, game_supplies, listed) = before;
            self.truncate_layout(zones, supplies, game_supplies);
            out.truncate(listed);
            return Err(Refusal::Invalid("ledger is full".into()));
        }
        Ok(())
    }

    /// This ledger's layout (its zones, supply totals and reserves), sharing its tables.
    pub fn layout(&self) -> Layout {
        Layout {
            owners: self.owners,
            zones: Arc::clone(&self.zones),
            supply: Arc::clone(&self.supply),
            reserve: Arc::clone(&self.reserve),
            game_supply: Arc::clone(&self.game_supply),
            game_reserve: Arc::clone(&self.game_reserve),
        }
    }

    /// Whether this ledger's layout is `layout`'s very tables, not merely equal ones (what
    /// [`laid_out`](Self::laid_out) leaves out of a snapshot).
    pub fn has_layout(&self, layout: &Layout) -> bool {
        self.owners == layout.owners
            && Arc::ptr_eq(&self.zones, &layout.zones)
            && Arc::ptr_eq(&self.supply, &layout.supply)
            && Arc::ptr_eq(&self.reserve, &layout.reserve)
            && Arc::ptr_eq(&self.game_supply, &layout.game_supply)
            && Arc::ptr_eq(&self.game_reserve, &layout.game_reserve)
    }

    /// Shares `layout`'s tables instead of this ledger's own if they are equal; whether the ledger now has
    /// `layout` ([`has_layout`](Self::has_layout)). Changes no state.
    pub fn adopt_layout(&mut self, layout: &Layout) -> bool {
        if self.layout() != *layout {
            return false;
        }
        self.zones = Arc::clone(&layout.zones);
        self.supply = Arc::clone(&layout.supply);
        self.reserve = Arc::clone(&layout.reserve);
        self.game_supply = Arc::clone(&layout.game_supply);
        self.game_reserve = Arc::clone(&layout.game_reserve);
        true
    }

    /// This ledger as a ruleset writes it on its setup's `layout`: without the layout when the ledger has
    /// it ([`has_layout`](Self::has_layout)), whole otherwise. Read back with [`Unlaid`].
    pub fn laid_out<'a>(&'a self, layout: &'a Layout) -> LaidOut<'a> {
        LaidOut {
            ledger: self,
            layout,
        }
    }
}

/// A [`Ledger`] written on its setup's [`Layout`] ([`Ledger::laid_out`]).
pub struct LaidOut<'a> {
    ledger: &'a Ledger,
    layout: &'a Layout,
}

/// How a [`LaidOut`] is written: what the ledger holds besides its setup's layout, or (a ledger whose
/// layout is not its setup's) the whole ledger.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum Written<'a> {
    Setup(BodyOut<'a>),
    Own(&'a Ledger),
}

/// A ledger without its layout, written as [`LedgerOut`] writes the same tables but for the token
/// matrix, whose binary form lists only the cells that hold tokens
/// ([`serialize_bitmap`](crate::rows::matrix::serialize_bitmap)).
#[derive(Serialize)]
struct BodyOut<'a> {
    owners: u16,
    #[serde(serialize_with = "crate::rows::serialize")]
    amounts: &'a [Amount],
    tracks: &'a [Track],
    contributions: &'a [Contribution],
    #[serde(serialize_with = "crate::rows::matrix::serialize_bitmap")]
    tokens: &'a [u32],
    #[serde(serialize_with = "crate::rows::serialize")]
    permanents: &'a [Permanent],
    pending: &'a [Demand],
    clock: Clock,
    rng: &'a GameRng,
}

impl Serialize for LaidOut<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let l = self.ledger;
        if !l.has_layout(self.layout) {
            return Written::Own(l).serialize(s);
        }
        // With a bank, each row of the matrix gains the game's column, as in a whole ledger.
        let wide;
        let tokens = if self.layout.banked() {
            wide = widen(&l.tokens, usize::from(l.owners), &l.game_tokens);
            &wide[..]
        } else {
            &l.tokens[..]
        };
        Written::Setup(BodyOut {
            owners: l.owners,
            amounts: &l.amounts,
            tracks: &l.tracks,
            contributions: &l.contributions,
            tokens,
            permanents: &l.permanents,
            pending: &l.pending,
            clock: l.clock,
            rng: &l.rng,
        })
        .serialize(s)
    }
}

/// A ledger read as [`Ledger::laid_out`] wrote it, not yet usable: [`lay`](Unlaid::lay) joins it with its
/// setup's layout and checks it.
#[derive(Deserialize)]
#[serde(transparent)]
pub struct Unlaid(Read);

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Read {
    Setup(Body),
    /// Checked whole as it was read.
    Own(Ledger),
}

/// What [`BodyOut`] wrote.
#[derive(Deserialize)]
struct Body {
    owners: u16,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    amounts: Vec<Amount>,
    tracks: Vec<Track>,
    contributions: Vec<Contribution>,
    #[serde(deserialize_with = "crate::rows::matrix::deserialize_bitmap")]
    tokens: Matrix,
    #[serde(deserialize_with = "crate::rows::deserialize")]
    permanents: Vec<Permanent>,
    pending: Vec<Demand>,
    clock: Clock,
    rng: GameRng,
}

impl Unlaid {
    /// The ledger, laid on `layout` (its setup's) unless it was written whole, and checked: everything the
    /// snapshot carried must fit the layout and keep every kernel invariant
    /// ([`Ledger::check_invariants`]; the layout's own structure holds by construction). A ledger written
    /// whole was checked whole as it was read; if its layout equals `layout`, it shares it.
    ///
    /// # Errors
    /// The first [`Violation`]: a ledger of another player count than the layout's, a token matrix of
    /// another size, or a broken invariant.
    pub fn lay(self, layout: &Layout) -> Result<Ledger, Violation> {
        match self.0 {
            // A layout equal to the setup's is shared again, so that the ledger is written (and hashed)
            // as one that never left it.
            Read::Own(mut ledger) => {
                ledger.adopt_layout(layout);
                Ok(ledger)
            }
            Read::Setup(body) => body.lay(layout),
        }
    }
}

impl Body {
    fn lay(self, layout: &Layout) -> Result<Ledger, Violation> {
        let owners = self.owners;
        if owners != layout.owners {
            return Err(Violation(format!(
                "a ledger of {owners} owners on the layout of a game of {}",
                layout.owners
            )));
        }
        let (o, zones) = (usize::from(owners), layout.zones.len());
        let sized = |e: String| Violation(format!("{e} for {zones} zones of {owners} owners"));
        let (tokens, game_tokens) = if layout.banked() {
            let cells = self.tokens.cells(zones.checked_mul(o + 1)).map_err(sized)?;
            narrow(cells, o)
        } else {
            let cells = self.tokens.cells(zones.checked_mul(o)).map_err(sized)?;
            (cells, vec![0; zones])
        };
        let ledger = Ledger {
            owners,
            amounts: self.amounts,
            tracks: self.tracks,
            contributions: self.contributions,
            zones: Arc::clone(&layout.zones),
            tokens,
            supply: Arc::clone(&layout.supply),
            reserve: Arc::clone(&layout.reserve),
            game_tokens,
            game_supply: Arc::clone(&layout.game_supply),
            game_reserve: Arc::clone(&layout.game_reserve),
            permanents: self.permanents,
            pending: self.pending,
            clock: self.clock,
            rng: self.rng,
            board: std::sync::OnceLock::new(),
            log: Vec::new(),
            depth: 0,
            measuring: false,
            stamp: super::routes::Stamp::default(),
        };
        ledger.check_state()?;
        Ok(ledger)
    }
}

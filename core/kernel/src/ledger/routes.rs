//! K4.1 asked again and again: a move between two zones checked once ([`Ledger::route`]), then asked for
//! a count ([`Ledger::can_move_along`]) or made ([`Ledger::move_along`]) with one look-up of the owner's
//! count.
//!
//! What a route leaves out of each check (both zones exist, they share a supply, the owner has a reserve of
//! it, where the destination sends a second token) is fixed by the ledger's layout. A route remembers which
//! layout it was checked against by its [`Stamp`]: a number no other layout had, shared by the ledger's
//! clones (whose layouts are equal) and dropped by every change of the layout (a zone added, a reserve
//! stocked, a rollback of either, a reset). Asked of a ledger whose stamp differs (another game, a clone
//! that added a zone since, a restored snapshot), a route is checked in full: its answer is always the one
//! [`Ledger::can_move_tokens`] gives, only its cost differs.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Ledger, index_u32};
use crate::error::Refusal;
use crate::event::{Cause, TokenOp};
use crate::id::{Owner, ZoneId};

/// The next stamp to give a layout; 0 means "none yet", and [`NEVER`] is never given.
static NEXT: AtomicU64 = AtomicU64::new(1);

/// The stamp of a route that is always checked in full (one of the game's own tokens).
const NEVER: u64 = u64::MAX;

/// Which layout a ledger has, as routes see it: 0 until a route is asked of it, then a number no other
/// layout had. A clone keeps it (its layout is equal); a change of the layout sets it back to 0.
#[derive(Debug, Default)]
pub(super) struct Stamp(AtomicU64);

impl Clone for Stamp {
    fn clone(&self) -> Stamp {
        Stamp(AtomicU64::new(self.get()))
    }
}

impl Stamp {
    #[inline(always)]
    fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// This layout's stamp, given now if it has none.
    fn issue(&self) -> u64 {
        match self.get() {
            0 => {
                let new = NEXT.fetch_add(1, Ordering::Relaxed);
                // Two threads asking at once of one shared ledger: the first stamp stays, and a route made
                // with the other is checked in full (still exact).
                match self
                    .0
                    .compare_exchange(0, new, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => new,
                    Err(current) => current,
                }
            }
            stamp => stamp,
        }
    }

    /// The layout changed: routes checked against it are checked in full from now on.
    #[inline(always)]
    pub(super) fn clear(&mut self) {
        *self.0.get_mut() = 0;
    }
}

/// A move of one owner's tokens from one zone to another, checked once by [`Ledger::route`]: what
/// [`Ledger::move_tokens`] would refuse whatever the count (a zone that does not exist, zones of two
/// supplies, an owner without a reserve of theirs) was refused there. Keep the routes your rules ask
/// about at every step (a player's reserve to their pool, say) in your state, made once after setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenRoute {
    owner: Owner,
    from: ZoneId,
    to: ZoneId,
    /// The owner's cells of `from` and `to` in the token table.
    from_cell: u32,
    to_cell: u32,
    /// The destination takes one token per owner (K4.3).
    one_per_owner: bool,
    stamp: u64,
}

impl TokenRoute {
    /// Whose tokens move.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// The zone they leave.
    pub fn from(&self) -> ZoneId {
        self.from
    }

    /// The zone they enter.
    pub fn to(&self) -> ZoneId {
        self.to
    }
}

impl Ledger {
    /// Checks a move of `owner`'s tokens from `from` to `to` once, for [`can_move_along`](Self::can_move_along)
    /// and [`move_along`](Self::move_along) to ask for any count with one look-up.
    ///
    /// ```
    /// # use coffer_kernel::{Cause, Key, Kind, Ledger, Owner, Zone};
    /// let mut ledger = Ledger::new(2, 0);
    /// let reserve = ledger.add_zone(Zone::new(Key::new(Owner(0), Kind(1), 0))).unwrap();
    /// let pool = ledger.add_zone(Zone::new(Key::new(Owner(0), Kind(2), 0))).unwrap();
    /// ledger.stock(Owner(0), reserve, 3, Cause::Setup).unwrap();
    /// let route = ledger.route(Owner(0), reserve, pool).unwrap(); // once, after setup
    /// assert!(ledger.can_move_along(&route, 3).is_ok()); // then at every step: one look-up
    /// assert!(ledger.can_move_along(&route, 4).is_err()); // the same refusal as move_tokens
    /// assert_eq!(ledger.move_along(&route, 2, Cause::Setup), Ok(0));
    /// assert_eq!(ledger.tokens(pool, Owner(0)), 2);
    /// ```
    ///
    /// # Errors
    /// Those [`move_tokens`](Self::move_tokens) gives whatever the count.
    pub fn route(&self, owner: Owner, from: ZoneId, to: ZoneId) -> Result<TokenRoute, Refusal> {
        self.can_move_tokens(owner, from, to, 0)?;
        let o = usize::from(self.owners);
        let (stamp, (from_cell, to_cell)) = if owner.0 < self.owners {
            (
                self.stamp.issue(),
                (
                    index_u32(from.index() * o + owner.index())?,
                    index_u32(to.index() * o + owner.index())?,
                ),
            )
        } else {
            (NEVER, (0, 0))
        };
        Ok(TokenRoute {
            owner,
            from,
            to,
            from_cell,
            to_cell,
            one_per_owner: self.zones[to.index()].one_per_owner,
            stamp,
        })
    }

    /// [`can_move_tokens`](Self::can_move_tokens) along a route: the same answer, in one look-up of the
    /// owner's count while the route's layout is the ledger's.
    ///
    /// # Errors
    /// Exactly those of `can_move_tokens(route.owner(), route.from(), route.to(), n)`.
    #[inline]
    pub fn can_move_along(&self, route: &TokenRoute, n: u32) -> Result<(u32, u32), Refusal> {
        // A route of another layout looks past the table's end, so one bounds check answers both
        // whether the layout is the route's and whether its cell is in the table.
        let cell = if route.stamp == self.stamp.get() {
            route.from_cell as usize
        } else {
            usize::MAX
        };
        if let Some(&have) = self.tokens.get(cell)
            && n <= have
        {
            if n == 0 || route.from == route.to {
                return Ok((0, 0));
            }
            let placed = if route.one_per_owner {
                u32::from(self.tokens.get(route.to_cell as usize) == Some(&0)).min(n)
            } else {
                n
            };
            return Ok((placed, n - placed));
        }
        self.check_in_full(route, n)
    }

    /// A route asked of another layout, or a refusal: out of line, off the path of the moves that can be
    /// made.
    #[cold]
    #[inline(never)]
    fn check_in_full(&self, route: &TokenRoute, n: u32) -> Result<(u32, u32), Refusal> {
        self.can_move_tokens(route.owner, route.from, route.to, n)
    }

    /// [`move_tokens`](Self::move_tokens) along a route: the same change, events and answer.
    ///
    /// # Errors
    /// Exactly those of `move_tokens(route.owner(), route.from(), route.to(), n, cause)`.
    #[inline]
    pub fn move_along(&mut self, route: &TokenRoute, n: u32, cause: Cause) -> Result<u32, Refusal> {
        let split = self.can_move_along(route, n)?;
        self.make_move(route.owner, route.from, route.to, split, cause)
    }

    /// Makes a checked move: `placed` tokens into `to`, `bounced` to the owner's reserve.
    #[inline(always)]
    pub(super) fn make_move(
        &mut self,
        owner: Owner,
        from: ZoneId,
        to: ZoneId,
        (placed, bounced): (u32, u32),
        cause: Cause,
    ) -> Result<u32, Refusal> {
        if placed > 0 {
            self.shift(owner, TokenOp::Move, from, to, placed, cause);
        }
        if bounced > 0 {
            let reserve = self.owner_reserve(self.zones[from.index()].supply, owner)?;
            self.shift(owner, TokenOp::Bounce, from, reserve, bounced, cause);
        }
        Ok(bounced)
    }
}

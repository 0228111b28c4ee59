//! Finite token supplies in zones (K4), the game's own supplies (banks, K4.6) and payouts from them (K4.7).

use super::*;

/// The `from` of a [`TokenOp::Stock`] change whose zone became the reserve (there was none before), so
/// that undoing it leaves the owner without a reserve again.
const NO_RESERVE: ZoneId = ZoneId(u32::MAX);

/// What a payout did (K4.7).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Payout {
    /// Whether everyone owed was paid in full; when not, nobody was paid anything.
    pub paid: bool,
    /// How many tokens were owed in all.
    pub owed: u32,
    /// How many the paying zone held.
    pub held: u32,
}

impl Ledger {
    /// Creates a token zone.
    ///
    /// # Errors
    /// Only when the ledger is full.
    pub fn add_zone(&mut self, zone: Zone) -> Result<ZoneId, Refusal> {
        let id = ZoneId(index_u32(self.zones.len())?);
        self.stamp.clear();
        self.fit_supplies(zone.supply);
        Arc::make_mut(&mut self.zones).push(zone);
        self.zone_added(id, zone.key.kind);
        Ok(id)
    }

    /// The token cells and the board index's entry of zone `id`, just put in the zone table (or, with the
    /// board index built already, about to be: [`add_zones`](Self::add_zones)).
    #[inline]
    pub(super) fn zone_added(&mut self, id: ZoneId, kind: Kind) {
        self.tokens
            .extend(std::iter::repeat_n(0, usize::from(self.owners)));
        self.game_tokens.push(0);
        match self.board.get_mut() {
            Some(board) => board.add_zone(id, kind, self.owners),
            // A new ledger's first zone (or a restored ledger's, never asked yet): the index is built now,
            // so that a game set up zone by zone has it before its first query (its first legal-action
            // list, inside the first action's time) instead of building it there.
            None => {
                let board = self.build_board();
                let _ = self.board.set(board);
            }
        }
    }

    /// Grows the supply tables (each owner's total and reserve, the game's) to hold `supply`.
    #[inline]
    pub(super) fn fit_supplies(&mut self, supply: u16) {
        let supplies = usize::from(supply) + 1;
        let needed = supplies * usize::from(self.owners);
        if needed > self.supply.len() {
            Arc::make_mut(&mut self.supply).resize(needed, 0);
            Arc::make_mut(&mut self.reserve).resize(needed, None);
        }
        if supplies > self.game_supply.len() {
            Arc::make_mut(&mut self.game_supply).resize(supplies, 0);
            Arc::make_mut(&mut self.game_reserve).resize(supplies, None);
        }
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

    /// Every zone with its handle, in creation order.
    pub fn zone_entries(&self) -> impl ExactSizeIterator<Item = (ZoneId, &Zone)> {
        self.zones
            .iter()
            .enumerate()
            .map(|(i, zone)| (ZoneId(i as u32), zone))
    }

    /// Whether `owner` can hold tokens here: a player of this ledger, or the game itself (K4.6).
    #[inline]
    pub(super) fn holder(&self, owner: Owner) -> Result<(), Refusal> {
        if owner.0 < self.owners || owner == Owner::GAME {
            Ok(())
        } else {
            Err(Refusal::Invalid(format!(
                "{owner} is not one of {} owners",
                self.owners
            )))
        }
    }

    /// K4, K4.6: gives `owner` (a player, or [`Owner::GAME`] for a bank every player draws from and pays
    /// back to) `n` tokens created in `reserve`, which is (or becomes) the owner's reserve of the zone's
    /// supply. Setup only; the owner's total then never changes.
    ///
    /// The reserve does not depend on the order of calls: a second reserve for the same supply is refused,
    /// and tokens that start elsewhere (on the board, in a pool) are created there with
    /// [`stock_on`](Self::stock_on), before or after the reserve. When every token starts elsewhere, `n`
    /// may be 0: the zone only becomes the reserve.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`]; [`Refusal::Invalid`] for an owner that is neither a player nor the
    /// game, `n == 0` for an owner with no tokens of the supply yet, a one-per-owner zone given more than
    /// one, or a second reserve for one supply;
    /// [`Refusal::Overflow`] past `u32::MAX` tokens.
    pub fn stock(
        &mut self,
        owner: Owner,
        reserve: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let zone = *self.zone(reserve)?;
        self.check_stock(owner, reserve, &zone, n, true)?;
        let before = self.slot_reserve(zone.supply, owner);
        if let Some(other) = before.filter(|&r| r != reserve) {
            return Err(Refusal::Invalid(format!(
                "{owner} already keeps its reserve of supply {} in {}; tokens that start in {} are stocked \
                 with stock_on",
                zone.supply,
                self.zones[other.index()].key,
                zone.key
            )));
        }
        let change = Change::Tokens {
            owner,
            op: TokenOp::Stock,
            from: before.unwrap_or(NO_RESERVE),
            to: reserve,
            n,
        };
        self.apply_change(&change, true);
        self.emit(zone.key, change, cause);
        Ok(())
    }

    /// K4: gives `owner` `n` tokens that start in `zone` rather than in its reserve (tokens on the board
    /// at setup). The reserve is not changed; conservation counts them from now on.
    ///
    /// # Errors
    /// As [`stock`](Self::stock), but never for a second reserve.
    pub fn stock_on(
        &mut self,
        owner: Owner,
        zone: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let z = *self.zone(zone)?;
        self.check_stock(owner, zone, &z, n, false)?;
        let change = Change::Tokens {
            owner,
            op: TokenOp::Place,
            from: zone,
            to: zone,
            n,
        };
        self.apply_change(&change, true);
        self.emit(z.key, change, cause);
        Ok(())
    }

    fn check_stock(
        &self,
        owner: Owner,
        id: ZoneId,
        zone: &Zone,
        n: u32,
        reserve: bool,
    ) -> Result<(), Refusal> {
        self.holder(owner)?;
        // Naming the reserve of tokens that all start elsewhere takes none.
        if n == 0 && !(reserve && self.slot_total(zone.supply, owner) > 0) {
            return Err(Refusal::Invalid(format!(
                "a supply of 0 tokens for {owner} in {id}"
            )));
        }
        if zone.one_per_owner && u64::from(self.tokens(id, owner)) + u64::from(n) > 1 {
            return Err(Refusal::Invalid(format!(
                "{n} tokens of {owner} in one-per-owner {}",
                zone.key
            )));
        }
        self.slot_total(zone.supply, owner)
            .checked_add(n)
            .ok_or(Refusal::Overflow {
                op: std::borrow::Cow::Borrowed("stock"),
                n: u64::from(n),
                key: zone.key,
            })?;
        Ok(())
    }

    /// Every player's tokens in `zone`, indexed by owner (empty for a missing zone); the game's own are
    /// [`tokens`](Self::tokens)`(zone, Owner::GAME)`.
    #[inline]
    pub fn zone_tokens(&self, zone: ZoneId) -> &[u32] {
        let o = usize::from(self.owners);
        self.tokens
            .get(zone.index() * o..(zone.index() + 1) * o)
            .unwrap_or(&[])
    }

    /// Every player's tokens in the `count` consecutive zones from `first` on, as one slice: the row of
    /// [`zone_tokens`](Self::zone_tokens) of each zone, one after the other (empty unless all `count`
    /// zones exist). A ruleset that made a block of zones in one go reads it without a look-up per zone.
    #[inline]
    pub fn zones_tokens(&self, first: ZoneId, count: usize) -> &[u32] {
        let o = usize::from(self.owners);
        first
            .index()
            .checked_add(count)
            .and_then(|end| end.checked_mul(o))
            .and_then(|end| self.tokens.get(first.index() * o..end))
            .unwrap_or(&[])
    }

    /// How many of `owner`'s tokens are in `zone`: a player's, or the game's for [`Owner::GAME`] (0 for
    /// unknown handles).
    #[inline]
    pub fn tokens(&self, zone: ZoneId, owner: Owner) -> u32 {
        if owner.0 < self.owners {
            let o = usize::from(self.owners);
            self.tokens
                .get(zone.index() * o + owner.index())
                .copied()
                .unwrap_or(0)
        } else if owner == Owner::GAME {
            self.game_tokens.get(zone.index()).copied().unwrap_or(0)
        } else {
            0
        }
    }

    /// The cell of a checked holder in a checked zone.
    #[inline]
    fn cell_mut(&mut self, zone: ZoneId, owner: Owner) -> &mut u32 {
        if owner == Owner::GAME {
            &mut self.game_tokens[zone.index()]
        } else {
            let o = usize::from(self.owners);
            &mut self.tokens[zone.index() * o + owner.index()]
        }
    }

    /// Adds `n` of `owner`'s tokens to `zone` (checked handles), keeping the board index.
    #[inline]
    pub(super) fn put(&mut self, zone: ZoneId, owner: Owner, n: u32) {
        let owners = self.owners;
        let cell = self.cell_mut(zone, owner);
        let was = *cell;
        *cell += n;
        if was == 0
            && n > 0
            && let Some(board) = self.board.get_mut()
        {
            board.set(zone, owner, owners, true);
        }
    }

    /// Takes `n` of `owner`'s tokens from `zone` (checked handles and count), keeping the board index.
    #[inline]
    pub(super) fn take(&mut self, zone: ZoneId, owner: Owner, n: u32) {
        let owners = self.owners;
        let cell = self.cell_mut(zone, owner);
        *cell -= n;
        if *cell == 0
            && n > 0
            && let Some(board) = self.board.get_mut()
        {
            board.set(zone, owner, owners, false);
        }
    }

    /// The index of `(supply, player)` in the per-supply tables.
    #[inline]
    pub(super) fn slot(&self, supply: u16, owner: Owner) -> usize {
        usize::from(supply) * usize::from(self.owners) + owner.index()
    }

    /// An owner's (player's or the game's) total of a supply; 0 for others.
    #[inline]
    pub(super) fn slot_total(&self, supply: u16, owner: Owner) -> u32 {
        if owner == Owner::GAME {
            self.game_supply
                .get(usize::from(supply))
                .copied()
                .unwrap_or(0)
        } else if owner.0 < self.owners {
            self.supply
                .get(self.slot(supply, owner))
                .copied()
                .unwrap_or(0)
        } else {
            0
        }
    }

    /// An owner's (player's or the game's) reserve of a supply.
    #[inline]
    pub(super) fn slot_reserve(&self, supply: u16, owner: Owner) -> Option<ZoneId> {
        if owner == Owner::GAME {
            self.game_reserve
                .get(usize::from(supply))
                .copied()
                .flatten()
        } else if owner.0 < self.owners {
            self.reserve
                .get(self.slot(supply, owner))
                .copied()
                .flatten()
        } else {
            None
        }
    }

    /// Changes a checked holder's total and reserve of a checked supply.
    pub(super) fn set_slot(
        &mut self,
        supply: u16,
        owner: Owner,
        total: u32,
        reserve: Option<ZoneId>,
    ) {
        // The layout is shared once setup is over: changing it then copies it (see `Layout`).
        self.stamp.clear();
        if owner == Owner::GAME {
            Arc::make_mut(&mut self.game_supply)[usize::from(supply)] = total;
            Arc::make_mut(&mut self.game_reserve)[usize::from(supply)] = reserve;
        } else {
            let slot = self.slot(supply, owner);
            Arc::make_mut(&mut self.supply)[slot] = total;
            Arc::make_mut(&mut self.reserve)[slot] = reserve;
        }
    }

    /// Applies (`forward`) or undoes a stocking change (checked by `check_target` or built by `stock`).
    pub(super) fn apply_stock(&mut self, change: &Change, forward: bool) {
        let Change::Tokens {
            owner,
            op,
            from,
            to,
            n,
        } = *change
        else {
            return;
        };
        let supply = self.zones[to.index()].supply;
        let total = self.slot_total(supply, owner);
        let reserve = self.slot_reserve(supply, owner);
        if forward {
            self.put(to, owner, n);
            let reserve = if op == TokenOp::Stock {
                Some(to)
            } else {
                reserve
            };
            self.set_slot(supply, owner, total + n, reserve);
        } else {
            self.take(to, owner, n);
            let reserve = if op == TokenOp::Stock && from == NO_RESERVE {
                None
            } else {
                reserve
            };
            self.set_slot(supply, owner, total - n, reserve);
        }
    }

    /// Whether a stocking change fits this ledger (see `check_target`).
    pub(super) fn stock_fits(
        &self,
        owner: Owner,
        op: TokenOp,
        from: ZoneId,
        to: ZoneId,
        n: u32,
    ) -> bool {
        let Some(zone) = self.zones.get(to.index()) else {
            return false;
        };
        let reserve = self.slot_reserve(zone.supply, owner);
        let total = self.slot_total(zone.supply, owner);
        (n > 0 || (op == TokenOp::Stock && total > 0))
            && total.checked_add(n).is_some()
            && match op {
                TokenOp::Stock if from == NO_RESERVE => reserve.is_none(),
                // Stocking the reserve again (or, in a log written before `NO_RESERVE`, the first time).
                TokenOp::Stock => from == to && reserve.is_none_or(|r| r == to),
                _ => from == to,
            }
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

    /// The owner's (a player's, or the game's bank for [`Owner::GAME`]) reserve zone of a supply.
    #[inline]
    pub fn reserve_of(&self, supply: u16, owner: Owner) -> Option<ZoneId> {
        self.slot_reserve(supply, owner)
    }

    /// The owner's total number of tokens of supply 0 (see [`supply_of`](Self::supply_of)).
    pub fn supply(&self, owner: Owner) -> u32 {
        self.supply_of(0, owner)
    }

    /// The owner's (a player's, or the game's for [`Owner::GAME`]) total number of tokens of a supply,
    /// over all its zones. It never changes after setup.
    pub fn supply_of(&self, supply: u16, owner: Owner) -> u32 {
        self.slot_total(supply, owner)
    }

    #[inline]
    pub(super) fn owner_reserve(&self, supply: u16, owner: Owner) -> Result<ZoneId, Refusal> {
        self.slot_reserve(supply, owner)
            .ok_or_else(|| Refusal::Invalid(format!("{owner} has no reserve of supply {supply}")))
    }

    #[inline]
    pub(super) fn same_supply(&self, from: &Zone, to: &Zone) -> Result<(), Refusal> {
        if from.supply == to.supply {
            Ok(())
        } else {
            Err(Refusal::Invalid(format!(
                "cannot move tokens from {} (supply {}) to {} (supply {})",
                from.key, from.supply, to.key, to.supply
            )))
        }
    }

    #[inline(always)]
    pub(super) fn shift(
        &mut self,
        owner: Owner,
        op: TokenOp,
        from: ZoneId,
        to: ZoneId,
        n: u32,
        cause: Cause,
    ) {
        self.take(from, owner, n);
        self.put(to, owner, n);
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

    /// The read-only check of [`move_tokens`](Self::move_tokens): the refusal it would return, or what it
    /// would do (how many would be placed in `to`, how many sent to the reserve).
    ///
    /// # Errors
    /// Exactly those of `move_tokens`.
    #[inline]
    pub fn can_move_tokens(
        &self,
        owner: Owner,
        from: ZoneId,
        to: ZoneId,
        n: u32,
    ) -> Result<(u32, u32), Refusal> {
        // The common answer, yes, in a few loads and compares; a refusal is built out of line.
        let Some(dst) = self.zones.get(to.index()).filter(|dst| {
            self.zones.get(from.index()).is_some_and(|src| {
                src.supply == dst.supply
                    && self.slot_reserve(src.supply, owner).is_some()
                    && n <= self.tokens(from, owner)
            })
        }) else {
            return Err(self.move_refusal(owner, from, to, n));
        };
        if n == 0 || from == to {
            return Ok((0, 0));
        }
        let placed = if dst.one_per_owner {
            u32::from(self.tokens(to, owner) == 0).min(n)
        } else {
            n
        };
        Ok((placed, n - placed))
    }

    /// The refusal `move_tokens` gives for a move [`can_move_tokens`](Self::can_move_tokens) found
    /// impossible: out of line, off the path of the moves that can be made.
    #[cold]
    #[inline(never)]
    fn move_refusal(&self, owner: Owner, from: ZoneId, to: ZoneId, n: u32) -> Refusal {
        let refused = || -> Result<Refusal, Refusal> {
            let src = self.zone(from)?;
            let dst = self.zone(to)?;
            self.same_supply(src, dst)?;
            self.owner_reserve(src.supply, owner)?;
            Ok(Refusal::NotEnoughTokens {
                owner,
                zone: src.key,
                need: n,
                have: self.tokens(from, owner),
            })
        };
        refused().unwrap_or_else(|refusal| refusal)
    }

    /// K4.1: moves `n` of `owner`'s tokens. K4.3: a token for a one-per-owner zone that already holds one
    /// of the owner's tokens (or a second token in the same move) goes to the reserve instead; the
    /// returned count says how many were sent there.
    ///
    /// # Errors
    /// [`Refusal::NotEnoughTokens`] when `from` holds fewer than `n`; see
    /// [`can_move_tokens`](Self::can_move_tokens).
    #[inline]
    pub fn move_tokens(
        &mut self,
        owner: Owner,
        from: ZoneId,
        to: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let split = self.can_move_tokens(owner, from, to, n)?;
        self.make_move(owner, from, to, split, cause)
    }

    /// K4.2: gains up to `n` tokens from the owner's reserve into `to`; what the reserve lacks is
    /// reported in [`Gained::lost`], not refused. K4.3: a one-per-owner zone takes at most one of the
    /// owner's tokens; the others stay in the reserve and are reported in [`Gained::lost`] too. For
    /// [`Owner::GAME`] this is a draw from the bank.
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

    /// The read-only check of [`place_from_reserve`](Self::place_from_reserve): what it would do, or the
    /// refusal it would return.
    ///
    /// # Errors
    /// Exactly those of `place_from_reserve`.
    pub fn can_place(
        &self,
        owner: Owner,
        to: ZoneId,
        fallback: Option<ZoneId>,
    ) -> Result<Placement, Refusal> {
        let dst = self.zone(to)?;
        let reserve = self.owner_reserve(dst.supply, owner)?;
        if let Some(pool) = fallback {
            self.same_supply(self.zone(pool)?, dst)?;
        }
        if dst.one_per_owner && self.tokens(to, owner) > 0 {
            return Ok(Placement::Bounced);
        }
        if self.tokens(reserve, owner) > 0 {
            return Ok(Placement::FromReserve);
        }
        match fallback {
            Some(pool) if self.tokens(pool, owner) > 0 => Ok(Placement::FromFallback),
            Some(pool) => Err(Refusal::NotEnoughTokens {
                owner,
                zone: self.zones[pool.index()].key,
                need: 1,
                have: 0,
            }),
            None => Err(Refusal::NotEnoughTokens {
                owner,
                zone: self.zones[reserve.index()].key,
                need: 1,
                have: 0,
            }),
        }
    }

    /// K4.3/K4.4: places one of `owner`'s tokens in `to` from the reserve. If `to` is one-per-owner and
    /// already holds one, the token goes to (stays in) the reserve. If reserve is empty, it comes
    /// from `fallback` (a pool the owner chose).
    ///
    /// # Errors
    /// [`Refusal::NotEnoughTokens`] when the reserve and the fallback are both empty; see
    /// [`can_place`](Self::can_place).
    pub fn place_from_reserve(
        &mut self,
        owner: Owner,
        to: ZoneId,
        fallback: Option<ZoneId>,
        cause: Cause,
    ) -> Result<Placement, Refusal> {
        let placement = self.can_place(owner, to, fallback)?;
        let dst = self.zones[to.index()];
        let reserve = self.owner_reserve(dst.supply, owner)?;
        match placement {
            // The token would go straight back to the reserve: report it, move nothing.
            Placement::Bounced => self.emit(
                dst.key,
                Change::Tokens {
                    owner,
                    op: TokenOp::Bounce,
                    from: reserve,
                    to: reserve,
                    n: 0,
                },
                cause,
            ),
            Placement::FromReserve => self.shift(owner, TokenOp::Move, reserve, to, 1, cause),
            Placement::FromFallback => {
                if let Some(pool) = fallback {
                    self.shift(owner, TokenOp::Fallback, pool, to, 1, cause);
                }
            }
        }
        Ok(placement)
    }

    /// K4.7: pays `owner`'s tokens (a bank's, for [`Owner::GAME`]) from `from` to every zone owed, all or
    /// nothing: if `from` cannot pay everyone in full, nobody receives any, and a
    /// [`Change::Withheld`] event says so. A game where a single recipient takes what is left instead calls
    /// [`gain_tokens`](Self::gain_tokens) or [`move_tokens`](Self::move_tokens) for that case.
    ///
    /// ```
    /// use coffer_kernel::{Cause, Key, Kind, Ledger, Owner, Zone};
    ///
    /// let mut l = Ledger::new(2, 0);
    /// let bank = l.add_zone(Zone::new(Key::new(Owner::GAME, Kind(1), 0))).unwrap();
    /// let hands = [0, 1].map(|p| l.add_zone(Zone::new(Key::new(Owner(p), Kind(2), 0))).unwrap());
    /// l.stock(Owner::GAME, bank, 3, Cause::Setup).unwrap();
    /// // Two are owed 2 each; the bank holds 3: nobody receives.
    /// let paid = l.payout(Owner::GAME, bank, &[(hands[0], 2), (hands[1], 2)], Cause::Setup).unwrap();
    /// assert!(!paid.paid);
    /// assert_eq!(l.tokens(hands[0], Owner::GAME), 0);
    /// let paid = l.payout(Owner::GAME, bank, &[(hands[0], 2), (hands[1], 1)], Cause::Setup).unwrap();
    /// assert!(paid.paid);
    /// assert_eq!(l.tokens(bank, Owner::GAME), 0);
    /// ```
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`]; [`Refusal::Invalid`] for zones of another supply, a one-per-owner
    /// recipient, an owner without a reserve of the supply, or a total past `u32::MAX`. Nothing changes.
    pub fn payout(
        &mut self,
        owner: Owner,
        from: ZoneId,
        to: &[(ZoneId, u32)],
        cause: Cause,
    ) -> Result<Payout, Refusal> {
        let src = *self.zone(from)?;
        self.owner_reserve(src.supply, owner)?;
        let mut owed = 0u32;
        for &(zone, n) in to {
            let dst = self.zone(zone)?;
            self.same_supply(&src, dst)?;
            if dst.one_per_owner {
                return Err(Refusal::Invalid(format!(
                    "a payout into one-per-owner {}",
                    dst.key
                )));
            }
            owed = owed.checked_add(n).ok_or(Refusal::Overflow {
                op: std::borrow::Cow::Borrowed("payout"),
                n: u64::from(n),
                key: dst.key,
            })?;
        }
        let held = self.tokens(from, owner);
        if owed > held {
            self.emit(
                src.key,
                Change::Withheld {
                    owner,
                    zone: from,
                    owed,
                    held,
                },
                cause,
            );
            return Ok(Payout {
                paid: false,
                owed,
                held,
            });
        }
        for &(zone, n) in to {
            if n > 0 && zone != from {
                self.shift(owner, TokenOp::Gain, from, zone, n, cause);
            }
        }
        Ok(Payout {
            paid: true,
            owed,
            held,
        })
    }
}

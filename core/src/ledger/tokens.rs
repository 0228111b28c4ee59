//! Finite token supplies in zones (K4).

use super::*;

impl Ledger {
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
    pub(super) fn slot(&self, supply: u16, owner: Owner) -> usize {
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
    pub(super) fn owner_reserve(&self, supply: u16, owner: Owner) -> Result<ZoneId, Refusal> {
        self.reserve_of(supply, owner)
            .ok_or_else(|| Refusal::Invalid(format!("{owner} has no tokens of supply {supply}")))
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

    #[inline]
    pub(super) fn shift(
        &mut self,
        owner: Owner,
        op: TokenOp,
        from: ZoneId,
        to: ZoneId,
        n: u32,
        cause: Cause,
    ) {
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
}

//! Two-faced charge tracks (K3).

use super::*;

impl Ledger {
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
    pub(super) fn set_active(&mut self, id: TrackId, after: u32, op: ChargeOp, cause: Cause) {
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

    /// The read-only check of [`spend_charges`](Self::spend_charges): the refusal it would return.
    ///
    /// # Errors
    /// Exactly those of `spend_charges`.
    #[inline]
    pub fn can_spend_charges(&self, id: TrackId, k: u32) -> Result<(), Refusal> {
        self.check_charges_after(id, k, &costs::Taken::default())
    }

    /// The read-only check of [`recover_exactly`](Self::recover_exactly): the refusal it would return.
    ///
    /// # Errors
    /// Exactly those of `recover_exactly`.
    #[inline]
    pub fn can_recover(&self, id: TrackId, k: u32) -> Result<(), Refusal> {
        self.check_recover_after(id, k, &costs::Taken::default())
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
}

//! Permanents: ready or exhausted (K5).

use super::*;

impl Ledger {
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

    /// The read-only check of [`activate`](Self::activate): the refusal it would return.
    ///
    /// # Errors
    /// Exactly those of `activate`.
    #[inline]
    pub fn can_exhaust(&self, id: PermanentId) -> Result<(), Refusal> {
        let p = self.permanent(id)?;
        if p.exhausted {
            return Err(Refusal::Exhausted { key: p.key });
        }
        Ok(())
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
}

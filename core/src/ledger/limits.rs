//! Limits checked at a boundary, and the demands they raise (K6).

use super::*;

impl Ledger {
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
}

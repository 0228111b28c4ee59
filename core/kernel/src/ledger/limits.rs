//! Limits checked at a boundary, and the demands they raise (K6).

use super::*;

impl Ledger {
    // ----- limits checked at a boundary (K6) -----

    /// K6: compares a measured count with its limit. Over the limit, a [`Demand`] for the excess is raised
    /// (or updated) and the owner must choose what goes; at or under it, a pending demand is satisfied.
    /// Returns the excess still pending. The ruleset measures, and calls this again after each choice;
    /// [`demand`](Self::demand) raises a demand the kernel follows itself.
    pub fn check_limit(&mut self, key: Key, measured: u64, max: u64, cause: Cause) -> u32 {
        let excess = u32::try_from(measured.saturating_sub(max)).unwrap_or(u32::MAX);
        let at = self.pending.iter().position(|d| d.key == key);
        self.set_demand(at, Demand::new(key, excess), cause);
        excess
    }

    /// K6.2: raises a bounded demand: `measure` must come down to `bound` (at most N, or by half rounded
    /// down, of what it measures now), and the owner chooses what goes. The kernel re-measures after every
    /// change to amounts and tokens and satisfies the demand (with its event) once the measure is down to
    /// its target, so the ruleset raises it once and only lets the owner choose. A pending demand of the
    /// same key is replaced. Returns the excess (0: nothing to do, nothing raised).
    ///
    /// ```
    /// use coffer_kernel::{Bound, Cause, Key, Kind, Ledger, Measure, Owner, Zone};
    ///
    /// let mut l = Ledger::new(1, 0);
    /// let (p, hand_kind) = (Owner(0), Kind(2));
    /// let bank = l.add_zone(Zone::new(Key::new(Owner::GAME, Kind(1), 0))).unwrap();
    /// let hand = l.add_zone(Zone::new(Key::new(p, hand_kind, 0))).unwrap();
    /// l.stock(Owner::GAME, bank, 19, Cause::Setup).unwrap();
    /// l.gain_tokens(Owner::GAME, hand, 9, Cause::Setup).unwrap();
    /// // Half of them must go, rounded down: 4 of 9.
    /// let key = Key::new(p, Kind(3), 0);
    /// let measure = Measure::Tokens { owner: Owner::GAME, zone: hand };
    /// assert_eq!(l.demand(key, measure, Bound::LoseHalf, Cause::Setup).unwrap(), 4);
    /// l.move_tokens(Owner::GAME, hand, bank, 3, Cause::Setup).unwrap();
    /// assert_eq!(l.pending()[0].excess, 1);
    /// l.move_tokens(Owner::GAME, hand, bank, 1, Cause::Setup).unwrap();
    /// assert!(l.pending().is_empty());
    /// ```
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`] or [`Refusal::Invalid`] for a measure naming what this ledger does not
    /// have, or [`Measure::Ruleset`] (that is [`check_limit`](Self::check_limit)).
    pub fn demand(
        &mut self,
        key: Key,
        measure: Measure,
        bound: Bound,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let measured = self.measure(measure)?;
        let target = bound.target(measured);
        let demand = Demand {
            key,
            excess: measured.saturating_sub(target),
            measure,
            target,
        };
        let at = self.pending.iter().position(|d| d.key == key);
        self.set_demand(at, demand, cause);
        Ok(demand.excess)
    }

    /// What a kernel measure counts now.
    ///
    /// # Errors
    /// As [`demand`](Self::demand).
    pub fn measure(&self, measure: Measure) -> Result<u32, Refusal> {
        let count = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        match measure {
            Measure::Ruleset => Err(Refusal::Invalid(
                "the ruleset measures this demand: use check_limit".into(),
            )),
            Measure::Amount(id) => Ok(count(self.amount(id)?.available())),
            Measure::Tokens { owner, zone } => {
                self.zone(zone)?;
                self.holder(owner)?;
                Ok(self.tokens(zone, owner))
            }
            Measure::Class { owner, class } => {
                self.holder(owner)?;
                Ok(self.tokens_in(owner, class))
            }
            Measure::Zones {
                owner,
                first,
                count: zones,
            } => {
                self.holder(owner)?;
                if zones == 0 {
                    return Err(Refusal::Invalid("a measure over no zones".into()));
                }
                let last = first
                    .0
                    .checked_add(u32::from(zones) - 1)
                    .ok_or_else(|| Refusal::Invalid("a measure past the last zone".into()))?;
                self.zone(first)?;
                self.zone(ZoneId(last))?;
                Ok(count(
                    (first.0..=last)
                        .map(|z| u64::from(self.tokens(ZoneId(z), owner)))
                        .sum(),
                ))
            }
        }
    }

    /// Replaces the pending demand at `at` (or adds one) by `demand`, removing it when its excess is 0;
    /// one event per change, so that it can be undone and replayed.
    fn set_demand(&mut self, at: Option<usize>, demand: Demand, cause: Cause) {
        // Its own events must not re-measure the list it is changing.
        let measuring = std::mem::replace(&mut self.measuring, true);
        self.replace_demand(at, demand, cause);
        self.measuring = measuring;
    }

    fn replace_demand(&mut self, at: Option<usize>, demand: Demand, cause: Cause) {
        let key = demand.key;
        match at {
            Some(i) if self.pending[i] == demand => {}
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
                if demand.excess > 0 {
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
            None if demand.excess > 0 => {
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
    }

    /// K6.2: brings every bounded demand up to date after a change; called for each event recorded while
    /// a choice is pending (see `emit`), never from inside itself.
    pub(super) fn remeasure_pending(&mut self, cause: Cause) {
        if self.measuring {
            return;
        }
        self.measuring = true;
        let mut i = 0;
        while i < self.pending.len() {
            let d = self.pending[i];
            let Ok(measured) = self.measure(d.measure) else {
                i += 1;
                continue;
            };
            let excess = measured.saturating_sub(d.target);
            self.set_demand(Some(i), Demand { excess, ..d }, cause);
            // A satisfied demand left the list; the next one moved into its place.
            if excess > 0 {
                i += 1;
            }
        }
        self.measuring = false;
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

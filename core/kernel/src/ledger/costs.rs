//! Atomic costs of several parts (K8), their read-only check, and the ways to pay a generic part (K7.2).

use super::*;

/// A generic part of a cost (K7.2): `n` more, payable from any of `pools` in any split, as in a cost of
/// "two of anything and two green". The specific parts are ordinary [`Part`]s.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Generic<'a> {
    /// How much the generic part asks.
    pub n: u64,
    /// The amounts it may be paid from, each at most once in the list.
    pub pools: &'a [AmountId],
}

/// What the parts before a part have already taken, for the read-only check of a cost.
#[derive(Default)]
pub(super) struct Taken {
    spent: Vec<(AmountId, u64)>,
    charges: Vec<(TrackId, i64)>,
    cells: Vec<(ZoneId, Owner, i64)>,
    exhausted: Vec<PermanentId>,
}

impl Taken {
    fn spent(&self, id: AmountId) -> u64 {
        self.spent
            .iter()
            .filter(|&&(a, _)| a == id)
            .map(|&(_, n)| n)
            .sum()
    }
    /// Active charges added (recovered) minus spent.
    fn charges(&self, id: TrackId) -> i64 {
        self.charges
            .iter()
            .filter(|&&(t, _)| t == id)
            .map(|&(_, n)| n)
            .sum()
    }
    fn cell(&self, zone: ZoneId, owner: Owner) -> i64 {
        self.cells
            .iter()
            .filter(|&&(z, o, _)| z == zone && o == owner)
            .map(|&(_, _, n)| n)
            .sum()
    }
}

impl Ledger {
    /// K8: pays a cost of several parts whole or not at all, in order: a part sees what the parts before it
    /// took (two spends of one amount add up).
    ///
    /// # Errors
    /// The first part's refusal, the one [`check_cost`](Self::check_cost) gives; nothing changes.
    pub fn pay_cost(&mut self, parts: &[Part<'_>], cause: Cause) -> Result<(), Refusal> {
        self.atomically(|l| {
            for part in parts {
                match *part {
                    Part::Spend(id, n) => l.spend(id, n, cause)?,
                    Part::Split { allocation, need } => l.spend_split(allocation, need, cause)?,
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

    /// K8.3: gives back a cost that [`pay_cost`](Self::pay_cost) paid with the same `parts`, whole or
    /// not at all, newest part first: spent amounts and charges come back, recovered charges flip back
    /// to inactive, moved tokens return, an exhausted permanent is readied. For play that the rules
    /// reverse ("play is reversed to before ..., any charges spent and other costs paid are recovered"):
    /// a refund is not a recovery, so a track marked "cannot be recovered" (K3.6) gets its spent charges
    /// back too, and a capped amount must have room for all it gave. Right after the payment, the
    /// refund leaves the resources equal to what they were before it (the events stay in the log).
    ///
    /// Meant for the state right after the payment: tokens that a one-per-owner zone sent to the
    /// reserve (K4.3) are not where the refund looks for them, and the refund is then refused.
    ///
    /// # Errors
    /// The first part that cannot be given back: [`Refusal::InsufficientCharges`] when a recovered charge is no longer
    /// active, [`Refusal::NothingToRecover`] when fewer charges are inactive than were spent,
    /// [`Refusal::NotEnoughTokens`], [`Refusal::Invalid`] for an amount whose cap has no room for what
    /// it gave or a permanent that is not exhausted. Nothing changes then.
    pub fn refund_cost(&mut self, parts: &[Part<'_>], cause: Cause) -> Result<(), Refusal> {
        self.atomically(|l| {
            for part in parts.iter().rev() {
                match *part {
                    Part::Spend(id, n) => l.give_back(id, n, cause)?,
                    Part::Split { allocation, .. } => {
                        for &(id, n) in allocation.iter().rev() {
                            l.give_back(id, n, cause)?;
                        }
                    }
                    Part::Charges(id, k) => {
                        let t = l.track(id)?;
                        if t.limit - t.active < k {
                            return Err(Refusal::NothingToRecover {
                                key: t.key,
                                limit: t.limit,
                            });
                        }
                        let after = t.active + k;
                        l.set_active(id, after, ChargeOp::Recover, cause);
                    }
                    Part::Recover(id, k) => l.spend_charges(id, k, cause)?,
                    Part::Tokens { owner, from, to, n } => {
                        let bounced = l.move_tokens(owner, to, from, n, cause)?;
                        if bounced > 0 {
                            let key = l.zone(from)?.key;
                            return Err(Refusal::Invalid(format!(
                                "{key} cannot take back {n} tokens: it holds one per owner"
                            )));
                        }
                    }
                    Part::Exhaust(id) => {
                        let p = l.permanent(id)?;
                        if !p.exhausted {
                            let key = p.key;
                            return Err(Refusal::Invalid(format!(
                                "{key} is ready: there is no use of it to give back"
                            )));
                        }
                        l.ready(id, cause)?;
                    }
                }
            }
            Ok(())
        })
    }

    /// Gains back exactly `n` of an amount, refusing (through the caller's transaction) when its cap
    /// would cut the gain short.
    fn give_back(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<(), Refusal> {
        let gained = self.gain(id, n, cause)?;
        if gained.lost > 0 {
            let key = self.amount(id)?.key;
            return Err(Refusal::Invalid(format!(
                "{key} has room under its cap for {} of the {n} to give back",
                gained.gained
            )));
        }
        Ok(())
    }

    /// K8: the read-only check of [`pay_cost`](Self::pay_cost): `Ok` exactly when it would pay, else the
    /// refusal it would return, without changing anything or recording an event. For `legal_actions` and
    /// validation.
    ///
    /// # Errors
    /// The refusal `pay_cost` would return.
    pub fn check_cost(&self, parts: &[Part<'_>]) -> Result<(), Refusal> {
        let mut taken = Taken::default();
        for (i, part) in parts.iter().enumerate() {
            self.check_part(part, &taken)?;
            // What the last part takes is seen by no later part: not recorded (no allocation for a cost
            // of one part).
            if i + 1 < parts.len() {
                self.record(part, &mut taken);
            }
        }
        Ok(())
    }

    /// The check of one part of a cost, after what the parts before it took.
    fn check_part(&self, part: &Part<'_>, taken: &Taken) -> Result<(), Refusal> {
        match *part {
            Part::Spend(id, n) => self.check_spend_after(id, n, taken),
            Part::Split { allocation, need } => {
                self.check_split_after(allocation, need, |id| taken.spent(id))
            }
            Part::Charges(id, k) => self.check_charges_after(id, k, taken),
            Part::Recover(id, k) => self.check_recover_after(id, k, taken),
            Part::Tokens { owner, from, to, n } => {
                let src = self.zone(from)?;
                let dst = self.zone(to)?;
                self.same_supply(src, dst)?;
                self.owner_reserve(src.supply, owner)?;
                let have = i64::from(self.tokens(from, owner)) + taken.cell(from, owner);
                if i64::from(n) > have {
                    return Err(Refusal::NotEnoughTokens {
                        owner,
                        zone: src.key,
                        need: n,
                        have: u32::try_from(have).unwrap_or(0),
                    });
                }
                Ok(())
            }
            Part::Exhaust(id) => {
                let p = self.permanent(id)?;
                if p.exhausted || taken.exhausted.contains(&id) {
                    return Err(Refusal::Exhausted { key: p.key });
                }
                Ok(())
            }
        }
    }

    /// Records what a checked part takes, for the parts after it.
    fn record(&self, part: &Part<'_>, taken: &mut Taken) {
        match *part {
            Part::Spend(id, n) => taken.spent.push((id, n)),
            Part::Split { allocation, .. } => taken.spent.extend_from_slice(allocation),
            Part::Charges(id, k) => taken.charges.push((id, -i64::from(k))),
            Part::Recover(id, k) => taken.charges.push((id, i64::from(k))),
            Part::Tokens { owner, from, to, n } => {
                if n == 0 || from == to {
                    return;
                }
                let (src, dst) = (&self.zones[from.index()], &self.zones[to.index()]);
                let placed = if dst.one_per_owner {
                    let now = i64::from(self.tokens(to, owner)) + taken.cell(to, owner);
                    i64::from(now == 0).min(i64::from(n))
                } else {
                    i64::from(n)
                };
                taken.cells.push((from, owner, -i64::from(n)));
                taken.cells.push((to, owner, placed));
                if let Some(reserve) = self.slot_reserve(src.supply, owner) {
                    taken.cells.push((reserve, owner, i64::from(n) - placed));
                }
            }
            Part::Exhaust(id) => taken.exhausted.push(id),
        }
    }

    pub(super) fn check_charges_after(
        &self,
        id: TrackId,
        k: u32,
        taken: &Taken,
    ) -> Result<(), Refusal> {
        let t = self.track(id)?;
        let active = i64::from(t.active) + taken.charges(id);
        if i64::from(k) > active {
            return Err(Refusal::InsufficientCharges {
                key: t.key,
                need: k,
                active: u32::try_from(active).unwrap_or(0),
            });
        }
        Ok(())
    }

    pub(super) fn check_recover_after(
        &self,
        id: TrackId,
        k: u32,
        taken: &Taken,
    ) -> Result<(), Refusal> {
        let t = self.track(id)?;
        if t.unrecoverable {
            return Err(Refusal::Unrecoverable { key: t.key });
        }
        let active = i64::from(t.active) + taken.charges(id);
        if i64::from(t.limit) - active < i64::from(k) {
            return Err(Refusal::NothingToRecover {
                key: t.key,
                limit: t.limit,
            });
        }
        Ok(())
    }

    fn check_spend_after(&self, id: AmountId, n: u64, taken: &Taken) -> Result<(), Refusal> {
        let a = self.amount(id)?;
        let have = a.available() - taken.spent(id);
        if n > have {
            return Err(Refusal::Insufficient {
                key: a.key,
                need: n,
                have,
            });
        }
        Ok(())
    }

    /// The check of a split payment, after `spent(amount)` was taken from each amount by earlier parts.
    #[inline]
    pub(super) fn check_split_after(
        &self,
        allocation: &[(AmountId, u64)],
        need: u64,
        spent: impl Fn(AmountId) -> u64,
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
            let have = a.available() - spent(id);
            if total > have {
                return Err(Refusal::Insufficient {
                    key: a.key,
                    need: total,
                    have,
                });
            }
        }
        Ok(())
    }

    /// K7.2: every distinct way to pay `generic` after the specific `parts`, as allocations aligned with
    /// `generic.pools` (way `i` is `out[i * pools.len()..(i + 1) * pools.len()]`, how much each pool
    /// gives), appended to `out` in lexicographic order (most from the first pool first). Returns how many.
    /// `Ok(0)` when the specific parts cannot be paid. Each way pays with
    /// `pay_cost(&[parts.., Part::Split { .. }])` (see [`Ledger::split_of`]); every way that pays is listed
    /// once. There are at most C(n + k - 1, k - 1) ways for `n` over `k` pools.
    ///
    /// ```
    /// use coffer_kernel::{AmountSpec, Cause, Generic, Key, Kind, Ledger, Owner, Part};
    ///
    /// let mut l = Ledger::new(1, 0);
    /// let pool = |l: &mut Ledger, k| l.add_amount(AmountSpec::new(Key::new(Owner(0), Kind(k), 0))).unwrap();
    /// let (green, white) = (pool(&mut l, 1), pool(&mut l, 2));
    /// l.gain(green, 3, Cause::Setup).unwrap();
    /// l.gain(white, 1, Cause::Setup).unwrap();
    /// // {1}{G}{G}: two green, then one of anything.
    /// let specific = [Part::Spend(green, 2)];
    /// let pools = [green, white];
    /// let mut ways = Vec::new();
    /// let n = l.payments(&specific, Generic { n: 1, pools: &pools }, &mut ways).unwrap();
    /// assert_eq!((n, ways), (2, vec![1, 0, 0, 1]));
    /// ```
    ///
    /// # Errors
    /// [`Refusal::Invalid`] for a pool listed twice; [`Refusal::NoSuchResource`].
    pub fn payments(
        &self,
        parts: &[Part<'_>],
        generic: Generic<'_>,
        out: &mut Vec<u64>,
    ) -> Result<usize, Refusal> {
        let pools = generic.pools;
        for (i, id) in pools.iter().enumerate() {
            self.amount(*id)?;
            if pools[..i].contains(id) {
                return Err(Refusal::Invalid(format!(
                    "{} is listed twice among a generic cost's pools",
                    self.amounts[id.index()].key
                )));
            }
        }
        if self.check_cost(parts).is_err() {
            return Ok(0);
        }
        let mut taken = Taken::default();
        for part in parts {
            self.record(part, &mut taken);
        }
        if pools.is_empty() {
            return Ok(usize::from(generic.n == 0));
        }
        let room: Vec<u64> = pools
            .iter()
            .map(|&id| self.amounts[id.index()].available() - taken.spent(id))
            .collect();
        // What the pools after each position can give together: a way is cut as soon as it cannot finish.
        let mut after = vec![0u64; pools.len() + 1];
        for i in (0..pools.len()).rev() {
            after[i] = after[i + 1].saturating_add(room[i]);
        }
        if after[0] < generic.n {
            return Ok(0);
        }
        let mut way = vec![0u64; pools.len()];
        let mut count = 0;
        compose(&room, &after, generic.n, 0, &mut way, out, &mut count);
        Ok(count)
    }

    /// The allocation of one way listed by [`payments`](Self::payments), as the pairs a
    /// [`Part::Split`] takes (pools that give nothing left out).
    pub fn split_of(pools: &[AmountId], way: &[u64]) -> Vec<(AmountId, u64)> {
        pools
            .iter()
            .zip(way)
            .filter(|&(_, &n)| n > 0)
            .map(|(&id, &n)| (id, n))
            .collect()
    }
}

/// Appends every split of `left` over pools `i..` (each at most its room) to `out`, largest first.
fn compose(
    room: &[u64],
    after: &[u64],
    left: u64,
    i: usize,
    way: &mut [u64],
    out: &mut Vec<u64>,
    count: &mut usize,
) {
    if i + 1 == room.len() {
        if left <= room[i] {
            way[i] = left;
            out.extend_from_slice(way);
            *count += 1;
        }
        return;
    }
    if room.is_empty() {
        return;
    }
    // Give at least what the later pools cannot.
    let least = left.saturating_sub(after[i + 1]);
    let most = left.min(room[i]);
    let mut give = most;
    loop {
        if give < least {
            break;
        }
        way[i] = give;
        compose(room, after, left - give, i + 1, way, out, count);
        if give == 0 {
            break;
        }
        give -= 1;
    }
    way[i] = 0;
}

//! Bounded amounts and their lifetimes (K1, K2), split payment (K7).

use super::*;

impl Ledger {
    // ----- amounts (K1, K2) -----

    /// Creates an amount.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] when the start lies outside `[floor, cap]`, or the cap is below the floor.
    pub fn add_amount(&mut self, spec: AmountSpec) -> Result<AmountId, Refusal> {
        if let Some(cap) = spec.cap
            && cap < spec.floor
        {
            return Err(Refusal::Invalid(format!(
                "cap {cap} below floor {} for {}",
                spec.floor, spec.key
            )));
        }
        if spec.start < spec.floor || spec.cap.is_some_and(|c| spec.start > c) {
            return Err(Refusal::Invalid(format!(
                "start {} outside [{}, {}] for {}",
                spec.start,
                spec.floor,
                cap_text(spec.cap),
                spec.key
            )));
        }
        let id = AmountId(index_u32(self.amounts.len())?);
        self.amounts.push(Amount {
            key: spec.key,
            value: spec.start,
            floor: spec.floor,
            cap: spec.cap,
            lifetime: spec.lifetime,
            on_expiry: if spec.resets { spec.start } else { spec.floor },
        });
        Ok(id)
    }

    /// The amount behind a handle.
    ///
    /// # Errors
    /// [`Refusal::NoSuchResource`] for a handle from another ledger.
    #[inline]
    pub fn amount(&self, id: AmountId) -> Result<&Amount, Refusal> {
        self.amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))
    }

    /// The value of an amount; 0 for a handle this ledger does not have.
    #[inline]
    pub fn value(&self, id: AmountId) -> i64 {
        self.amounts.get(id.index()).map_or(0, |a| a.value)
    }

    /// Every amount, in creation order (handles are their indices).
    pub fn amounts(&self) -> &[Amount] {
        &self.amounts
    }

    /// K1.1: gains `n`; the value rises to at most the cap and the excess is lost and reported.
    ///
    /// # Errors
    /// [`Refusal::Overflow`] when an uncapped value would leave `i64`.
    #[inline]
    pub fn gain(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<Gained, Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if n == 0 {
            return Ok(Gained::default());
        }
        let before = a.value;
        let (after, lost) = match a.cap {
            Some(cap) => {
                let room = cap.abs_diff(before);
                let gained = n.min(room);
                // `before + gained <= cap`: the sum fits even when `gained` does not fit an i64.
                (before.wrapping_add_unsigned(gained), n - gained)
            }
            None => {
                let after = before.checked_add_unsigned(n).ok_or(Refusal::Overflow {
                    op: std::borrow::Cow::Borrowed("gain"),
                    n,
                    key: a.key,
                })?;
                (after, 0)
            }
        };
        let key = a.key;
        self.amounts[id.index()].value = after;
        self.emit(
            key,
            Change::Gain {
                amount: id,
                before,
                after,
                lost,
            },
            cause,
        );
        Ok(Gained {
            gained: n - lost,
            lost,
        })
    }

    /// K1.2: voluntarily spends `n`: refused, changing nothing, if `n` exceeds what is above the floor.
    ///
    /// # Errors
    /// [`Refusal::Insufficient`] when short.
    #[inline]
    pub fn spend(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<(), Refusal> {
        let a = self
            .amounts
            .get_mut(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        let have = a.available();
        if n > have {
            return Err(Refusal::Insufficient {
                key: a.key,
                need: n,
                have,
            });
        }
        if n == 0 {
            return Ok(());
        }
        let (key, before, floor) = (a.key, a.value, a.floor);
        // `n <= before - floor`, so the difference fits even when `n` does not fit an i64.
        let after = before.wrapping_sub_unsigned(n);
        a.value = after;
        self.emit(
            key,
            Change::Spend {
                amount: id,
                before,
                after,
            },
            cause,
        );
        if after == floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok(())
    }

    /// The change of a voluntary spend whose handle and means were already checked. `spend` repeats this
    /// body rather than calling it, to look its amount up once (measured: 3.5 against 4.2 ns per spend).
    #[inline]
    pub(super) fn spend_checked(&mut self, id: AmountId, n: u64, cause: Cause) {
        if n == 0 {
            return;
        }
        let a = &mut self.amounts[id.index()];
        let (key, before, floor) = (a.key, a.value, a.floor);
        // `n <= before - floor`, so the difference fits even when `n` does not fit an i64.
        let after = before.wrapping_sub_unsigned(n);
        a.value = after;
        self.emit(
            key,
            Change::Spend {
                amount: id,
                before,
                after,
            },
            cause,
        );
        if after == floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
    }

    /// K1.3: a mandatory payment of `n`: pays what it can, ending at the floor, and reports the shortfall.
    ///
    /// # Errors
    /// Only [`Refusal::NoSuchResource`].
    #[inline]
    pub fn pay(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<Paid, Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if n == 0 {
            return Ok(Paid::default());
        }
        let paid = n.min(a.available());
        let (key, before, floor) = (a.key, a.value, a.floor);
        let after = before.wrapping_sub_unsigned(paid);
        let shortfall = n - paid;
        self.amounts[id.index()].value = after;
        self.emit(
            key,
            Change::Pay {
                amount: id,
                before,
                after,
                shortfall,
            },
            cause,
        );
        if after == floor && before != floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok(Paid { paid, shortfall })
    }

    /// Sets an amount to `value` (a track position a rule chooses), which must lie in `[floor, cap]`.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] outside the bounds.
    pub fn set(&mut self, id: AmountId, value: i64, cause: Cause) -> Result<(), Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if value < a.floor || a.cap.is_some_and(|c| value > c) {
            return Err(Refusal::Invalid(format!(
                "{value} outside [{}, {}] for {}",
                a.floor,
                cap_text(a.cap),
                a.key
            )));
        }
        let (key, before, floor) = (a.key, a.value, a.floor);
        if before == value {
            return Ok(());
        }
        self.amounts[id.index()].value = value;
        self.emit(
            key,
            Change::Set {
                amount: id,
                before,
                after: value,
            },
            cause,
        );
        if value == floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok(())
    }

    /// K1.4: changes the cap (`None` removes it); a value above the new cap is clamped at once, in the
    /// same event.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] for a cap below the floor.
    pub fn set_cap(&mut self, id: AmountId, cap: Option<i64>, cause: Cause) -> Result<(), Refusal> {
        let a = self
            .amounts
            .get(id.index())
            .ok_or(missing(AmountId::WHAT, id.0))?;
        if cap.is_some_and(|c| c < a.floor) {
            return Err(Refusal::Invalid(format!(
                "cap {} below floor {} for {}",
                cap_text(cap),
                a.floor,
                a.key
            )));
        }
        if cap == a.cap {
            return Ok(());
        }
        let (key, before, value_before, floor) = (a.key, a.cap, a.value, a.floor);
        let value_after = cap.map_or(value_before, |c| value_before.min(c));
        let am = &mut self.amounts[id.index()];
        am.cap = cap;
        am.value = value_after;
        self.emit(
            key,
            Change::Cap {
                amount: id,
                before,
                after: cap,
                value_before,
                value_after,
            },
            cause,
        );
        if value_after == floor && value_before != floor {
            self.emit(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                Cause::StateCheck,
            );
        }
        Ok(())
    }

    /// The read-only check of [`spend`](Self::spend): the refusal it would return.
    ///
    /// # Errors
    /// Exactly those of `spend`.
    #[inline]
    pub fn can_spend(&self, id: AmountId, n: u64) -> Result<(), Refusal> {
        let a = self.amount(id)?;
        let have = a.available();
        if n > have {
            return Err(Refusal::Insufficient {
                key: a.key,
                need: n,
                have,
            });
        }
        Ok(())
    }

    /// The read-only check of [`spend_split`](Self::spend_split): the refusal it would return.
    ///
    /// # Errors
    /// Exactly those of `spend_split`.
    pub fn can_spend_split(
        &self,
        allocation: &[(AmountId, u64)],
        need: u64,
    ) -> Result<(), Refusal> {
        self.check_split_after(allocation, need, |_| 0)
    }

    /// K7: pays a cost of `need` split over several amounts in the payer's allocation, as one step.
    /// Every part is a voluntary spend; the allocation must sum to `need` and each holder must afford its
    /// part (parts on the same holder add up).
    ///
    /// # Errors
    /// [`Refusal::BadAllocation`] or [`Refusal::Insufficient`]; nothing changes.
    #[inline]
    pub fn spend_split(
        &mut self,
        allocation: &[(AmountId, u64)],
        need: u64,
        cause: Cause,
    ) -> Result<(), Refusal> {
        self.can_spend_split(allocation, need)?;
        for &(id, n) in allocation {
            // Checked by `can_spend_split`: every handle exists and each holder affords the sum of its parts.
            self.spend_checked(id, n, cause);
        }
        Ok(())
    }
}

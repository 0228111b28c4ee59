//! The event log, transactions and replay (K8, K9).

use super::*;

impl Ledger {
    // ----- the log and transactions (K8, K9) -----

    // Always inlined: out of line, every event is built on the stack and copied again into the log.
    #[inline(always)]
    pub(super) fn emit(&mut self, key: Key, change: Change, cause: Cause) {
        self.log.push(Event { key, change, cause });
        // The re-measuring of pending choices stays out of line, so the hot path keeps the event in
        // registers instead of spilling it around a large call site.
        if !self.pending.is_empty() {
            self.after_emit(cause);
        }
    }

    /// What follows an event off the hot path: bringing bounded demands up to date (K6.2). The kernel
    /// publishes nothing to `tracing`: it cannot tell what a seat may see; the plugin SDK publishes each
    /// action's events as a spectator reads them.
    #[cold]
    #[inline(never)]
    fn after_emit(&mut self, cause: Cause) {
        self.remeasure_pending(cause);
    }

    /// Events recorded since the last call, oldest first; the log is left empty. Call it outside
    /// transactions: events taken inside one can no longer be rolled back.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.log)
    }

    /// Events an action's log is reserved for once a game is set up ([`shrink_to_fit`](Self::shrink_to_fit)):
    /// most actions record fewer (a note and a few changes), so a short game never grows the log, for
    /// about 1 KiB per idle game.
    pub const ACTION_EVENTS: usize = 16;

    /// Gives back the spare capacity of every table (setup grows them one resource at a time), keeping
    /// room for [`ACTION_EVENTS`](Self::ACTION_EVENTS) events, and shares the process's empty layout if
    /// the ledger lays out no tokens. Hosts call it once a new game is set up: it is most of an idle
    /// game's memory. Changes no state.
    pub fn shrink_to_fit(&mut self) {
        // A ledger that lays out no tokens (one restored from a snapshot, say) shares the empty layout.
        self.adopt_layout(&Layout::empty(self.owners));
        self.amounts.shrink_to_fit();
        self.tracks.shrink_to_fit();
        self.contributions.shrink_to_fit();
        // The layout's tables only while no other ledger or layout handle shares them.
        if let Some(zones) = Arc::get_mut(&mut self.zones) {
            zones.shrink_to_fit();
        }
        self.tokens.shrink_to_fit();
        if let Some(supply) = Arc::get_mut(&mut self.supply) {
            supply.shrink_to_fit();
        }
        if let Some(reserve) = Arc::get_mut(&mut self.reserve) {
            reserve.shrink_to_fit();
        }
        self.permanents.shrink_to_fit();
        self.pending.shrink_to_fit();
        self.log.shrink_to_fit();
        self.log.reserve_exact(Self::ACTION_EVENTS);
    }

    /// Events recorded and not yet taken.
    pub fn events(&self) -> &[Event] {
        &self.log
    }

    /// Moves the recorded events to the end of `out`, leaving the log empty but keeping its memory.
    pub fn drain_events_into(&mut self, out: &mut Vec<Event>) {
        out.append(&mut self.log);
    }

    /// Forgets the `n` oldest recorded events (all of them if there are fewer), keeping the newer ones and
    /// the log's memory. A host that keeps an action's events in the log until the next action is
    /// accepted forgets them so: one buffer, no copy to a second one, and a refused action (rolled back to
    /// its [`begin`](Self::begin)) leaves them in place.
    #[inline]
    pub fn forget_events(&mut self, n: usize) {
        self.log.drain(..n.min(self.log.len()));
    }

    /// Opens a transaction: until [`commit`](Self::commit) or [`rollback`](Self::rollback), changes are
    /// recorded and can be undone. Transactions nest.
    pub fn begin(&mut self) -> Mark {
        self.depth += 1;
        Mark {
            events: self.log.len(),
            rng: self.rng.clone(),
            amounts: self.amounts.len(),
            tracks: self.tracks.len(),
            contributions: self.contributions.len(),
            zones: self.zones.len(),
            permanents: self.permanents.len(),
            supplies: self.supply.len(),
            game_supplies: self.game_supply.len(),
        }
    }

    /// Keeps the transaction's changes.
    // Inlined: every action commits, and the out-of-line call was 1.6% of a wide-board playout's
    // instructions.
    #[inline]
    pub fn commit(&mut self, mark: Mark) {
        let _ = mark;
        self.depth = self.depth.saturating_sub(1);
    }

    /// Undoes every change since `mark`, newest first, and forgets their events: the ledger is equal
    /// (same state hash) to what it was at [`begin`](Self::begin) (K8). Amounts, tracks, zones and
    /// permanents created inside the transaction are removed again.
    ///
    /// Events taken out of the log inside the transaction ([`take_events`](Self::take_events),
    /// [`drain_events_into`](Self::drain_events_into)) can no longer be undone: take events only after the
    /// outermost commit.
    pub fn rollback(&mut self, mark: Mark) {
        self.depth = self.depth.saturating_sub(1);
        while self.log.len() > mark.events {
            if let Some(event) = self.log.pop() {
                self.undo(&event);
            }
        }
        self.rng = mark.rng;
        self.amounts.truncate(mark.amounts);
        self.tracks.truncate(mark.tracks);
        self.contributions.truncate(mark.contributions);
        self.permanents.truncate(mark.permanents);
        self.truncate_layout(mark.zones, mark.supplies, mark.game_supplies);
    }

    /// Removes the zones past the first `zones`, and the supply tables' rows past `supplies` (the
    /// players') and `game_supplies` (the game's): what setup added since.
    pub(super) fn truncate_layout(&mut self, zones: usize, supplies: usize, game_supplies: usize) {
        if zones < self.zones.len() {
            self.stamp.clear();
            Arc::make_mut(&mut self.zones).truncate(zones);
            self.tokens.truncate(zones * usize::from(self.owners));
            self.game_tokens.truncate(zones);
            self.truncate_board(zones);
        }
        // The layout's tables are copied only if a zone of a new supply is undone (setup).
        if supplies < self.supply.len() {
            self.stamp.clear();
            Arc::make_mut(&mut self.supply).truncate(supplies);
            Arc::make_mut(&mut self.reserve).truncate(supplies);
        }
        if game_supplies < self.game_supply.len() {
            self.stamp.clear();
            Arc::make_mut(&mut self.game_supply).truncate(game_supplies);
            Arc::make_mut(&mut self.game_reserve).truncate(game_supplies);
        }
    }

    /// Runs `f` as one transaction: all its changes stay, or (on `Err`) none do.
    pub fn atomically<T, E>(
        &mut self,
        f: impl FnOnce(&mut Ledger) -> Result<T, E>,
    ) -> Result<T, E> {
        let mark = self.begin();
        match f(self) {
            Ok(value) => {
                self.commit(mark);
                Ok(value)
            }
            Err(error) => {
                self.rollback(mark);
                Err(error)
            }
        }
    }

    /// Applies an event forward, as if the change happened again: replaying a game's events, in order, on
    /// the ledger as it was before them rebuilds the same state (K9). The event is not logged.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] for an event that does not fit this ledger: it names something the ledger does
    /// not have, its "before" side is not the current state, or its "after" side breaks a bound. Nothing
    /// changes then.
    pub fn redo(&mut self, event: &Event) -> Result<(), Refusal> {
        self.check_target(&event.change)?;
        self.apply_change(&event.change, true);
        Ok(())
    }

    /// Whether `change` can be applied forward here: it names resources this ledger has, its "before" side
    /// is the current state, and its "after" side respects every bound. So a replayed log either rebuilds
    /// the state exactly or stops at the first event that does not fit, never panicking or breaking K1-K4.
    pub(super) fn check_target(&self, change: &Change) -> Result<(), Refusal> {
        let in_bounds = |a: &Amount, v: i64| v >= a.floor && a.cap.is_none_or(|c| v <= c);
        let ok = match *change {
            Change::Gain { .. }
            | Change::Spend { .. }
            | Change::Pay { .. }
            | Change::Set { .. }
            | Change::Expire { .. } => {
                change
                    .amount_value()
                    .is_some_and(|(amount, before, after)| {
                        self.amounts
                            .get(amount.index())
                            .is_some_and(|a| a.value == before && in_bounds(a, after))
                    })
            }
            Change::Cap {
                amount,
                before,
                after,
                value_before,
                value_after,
            } => self.amounts.get(amount.index()).is_some_and(|a| {
                a.cap == before
                    && a.value == value_before
                    && after.is_none_or(|c| c >= a.floor)
                    && in_bounds(&Amount { cap: after, ..*a }, value_after)
            }),
            Change::Floor { amount, at } => self
                .amounts
                .get(amount.index())
                .is_some_and(|a| a.floor == at && a.value == at),
            Change::Charges {
                track,
                before,
                after,
                ..
            } => self
                .tracks
                .get(track.index())
                .is_some_and(|t| t.active == before && after <= t.limit),
            Change::Capacity {
                source,
                added,
                index,
                active_before,
                active_after,
            } => {
                let index = index as usize;
                self.tracks.get(source.track.index()).is_some_and(|t| {
                    t.active == active_before
                        && if added {
                            index <= self.contributions.len()
                                && t.limit
                                    .checked_add(source.capacity)
                                    .is_some_and(|l| active_after <= l)
                        } else {
                            self.contributions.get(index) == Some(&source)
                                && active_after <= t.limit - source.capacity
                        }
                })
            }
            Change::Tokens {
                owner,
                op,
                from,
                to,
                n,
            } => {
                self.holder(owner).is_ok()
                    && to.index() < self.zones.len()
                    && if matches!(op, TokenOp::Stock | TokenOp::Place) {
                        self.stock_fits(owner, op, from, to, n)
                    } else {
                        from.index() < self.zones.len() && self.tokens(from, owner) >= n
                    }
            }
            Change::Exhaust {
                permanent,
                exhausted,
            } => self
                .permanents
                .get(permanent.index())
                .is_some_and(|p| p.exhausted != exhausted),
            Change::Demand {
                demand,
                index,
                raised,
            } => {
                let index = index as usize;
                if raised {
                    index <= self.pending.len()
                } else {
                    self.pending.get(index) == Some(&demand)
                }
            }
            Change::Scope {
                scope,
                before,
                after,
            } => self.clock == before && before.after(scope) == after,
            Change::Random { .. } | Change::Note { .. } => true,
            Change::Short { owner, zone, .. } | Change::Withheld { owner, zone, .. } => {
                self.holder(owner).is_ok() && zone.index() < self.zones.len()
            }
        };
        if ok {
            Ok(())
        } else {
            Err(Refusal::Invalid(format!(
                "an event of the log does not fit this game's state: {}",
                crate::Names::plain()
                    .change(
                        &Event {
                            key: Key::new(Owner::GAME, Kind::CLOCK, 0),
                            change: *change,
                            cause: Cause::StateCheck,
                        },
                        None,
                    )
                    .unwrap_or_else(|| "a draw at random".to_owned())
            )))
        }
    }

    pub(super) fn undo(&mut self, event: &Event) {
        self.apply_change(&event.change, false);
    }

    /// Sets the state to the change's "after" side (`forward`) or its "before" side.
    pub(super) fn apply_change(&mut self, change: &Change, forward: bool) {
        let pick = |before: i64, after: i64| if forward { after } else { before };
        match *change {
            Change::Gain { .. }
            | Change::Spend { .. }
            | Change::Pay { .. }
            | Change::Set { .. }
            | Change::Expire { .. } => {
                if let Some((amount, before, after)) = change.amount_value() {
                    self.amounts[amount.index()].value = pick(before, after);
                }
            }
            Change::Cap {
                amount,
                before,
                after,
                value_before,
                value_after,
            } => {
                let a = &mut self.amounts[amount.index()];
                a.cap = if forward { after } else { before };
                a.value = pick(value_before, value_after);
            }
            Change::Floor { .. }
            | Change::Short { .. }
            | Change::Withheld { .. }
            | Change::Note { .. } => {}
            Change::Charges {
                track,
                before,
                after,
                ..
            } => {
                self.tracks[track.index()].active = if forward { after } else { before };
            }
            Change::Capacity {
                source,
                added,
                index,
                active_before,
                active_after,
            } => {
                let t = &mut self.tracks[source.track.index()];
                if added == forward {
                    t.limit += source.capacity;
                    self.contributions.insert(index as usize, source);
                } else {
                    t.limit -= source.capacity;
                    self.contributions.remove(index as usize);
                }
                t.active = if forward { active_after } else { active_before };
            }
            Change::Tokens {
                owner,
                op,
                from,
                to,
                n,
            } => {
                if matches!(op, TokenOp::Stock | TokenOp::Place) {
                    self.apply_stock(change, forward);
                } else {
                    let (src, dst) = if forward { (from, to) } else { (to, from) };
                    self.take(src, owner, n);
                    self.put(dst, owner, n);
                }
            }
            Change::Exhaust {
                permanent,
                exhausted,
            } => {
                self.permanents[permanent.index()].exhausted =
                    if forward { exhausted } else { !exhausted };
            }
            Change::Demand {
                demand,
                index,
                raised,
            } => {
                let index = index as usize;
                if raised == forward {
                    self.pending.insert(index, demand);
                } else {
                    self.pending.remove(index);
                }
            }
            Change::Scope { before, after, .. } => {
                self.clock = if forward { after } else { before };
            }
            Change::Random { draws } => {
                if forward {
                    for _ in 0..draws {
                        self.rng.next_u64();
                    }
                }
                // Backward: `rollback` restores the RNG from its mark.
            }
        }
    }
}

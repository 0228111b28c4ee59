//! The clock's upkeep (K10), state-based checks (K11), randomness and the ruleset's own notes.

use super::*;

impl Ledger {
    // ----- the clock (K10) and state-based checks (K11) -----

    /// Where the clock stands.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// K10: ends `scope` (and every scope inside it) and runs the kernel's upkeep, in this order:
    /// 1. amounts whose lifetime ends empty to their floor (or reset to their start), in creation order;
    /// 2. tracks recurring at this scope recover (r > 0) or lose (r < 0) `|r|` charges, in creation order;
    ///    a track that cannot be recovered does not recover;
    /// 3. permanents that ready at this scope ready;
    /// 4. the clock advances.
    ///
    /// Limit checks (K6) and ruleset hooks follow, in the ruleset, after this returns.
    #[inline]
    pub fn end_scope(&mut self, scope: Scope) {
        let cause = Cause::Upkeep(scope);
        for i in 0..self.amounts.len() {
            let a = self.amounts[i];
            // A resetting amount whose cap was lowered below its start resets to the cap (K1.4).
            let target = a
                .cap
                .map_or(a.on_expiry, |c| a.on_expiry.min(c))
                .max(a.floor);
            if a.lifetime != Scope::Game && a.lifetime.ends_with(scope) && a.value != target {
                self.amounts[i].value = target;
                self.emit(
                    a.key,
                    Change::Expire {
                        amount: AmountId(i as u32),
                        before: a.value,
                        after: target,
                    },
                    cause,
                );
            }
        }
        for i in 0..self.tracks.len() {
            let t = self.tracks[i];
            if !t.recurs_at.ends_with(scope) {
                continue;
            }
            let id = TrackId(i as u32);
            let r = self.recurrence(id);
            let after = if r > 0 && !t.unrecoverable {
                t.active.saturating_add(r.unsigned_abs()).min(t.limit)
            } else if r < 0 {
                t.active.saturating_sub(r.unsigned_abs())
            } else {
                t.active
            };
            self.set_active(id, after, ChargeOp::Recur, cause);
        }
        for i in 0..self.permanents.len() {
            let p = self.permanents[i];
            if p.exhausted && p.ready_at.is_some_and(|s| s.ends_with(scope)) {
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
        let before = self.clock;
        let after = before.after(scope);
        self.clock = after;
        self.emit(
            Key::new(Owner::GAME, Kind::CLOCK, 0),
            Change::Scope {
                scope,
                before,
                after,
            },
            cause,
        );
    }

    /// K11: state-based checks. Calls `react` with every event recorded from position `from` of the log on,
    /// including the events `react` itself causes, until none is left; returns the log's length at the end.
    /// Events are visited in the order they happened.
    ///
    /// On `Err`, the changes `react` made stay: run it inside a transaction ([`atomically`](Self::atomically),
    /// or the plugin adapter's per-action transaction) so that a failed check rolls them back.
    ///
    /// # Errors
    /// The first error `react` returns, or [`Refusal::Invalid`] if more than `max_rounds` events were
    /// visited (a rule that never settles).
    pub fn settle<E: From<Refusal>>(
        &mut self,
        from: usize,
        max_rounds: usize,
        mut react: impl FnMut(&mut Ledger, Event) -> Result<(), E>,
    ) -> Result<usize, E> {
        let mut at = from;
        let mut visited = 0usize;
        while at < self.log.len() {
            let event = self.log[at];
            at += 1;
            visited += 1;
            if visited > max_rounds {
                return Err(Refusal::Invalid(format!(
                    "state-based checks did not settle after {max_rounds} events"
                ))
                .into());
            }
            react(self, event)?;
        }
        Ok(at)
    }

    // ----- randomness -----

    /// A uniform integer in `0..n` from the game's RNG, recorded as an event so that replays agree.
    pub fn random_below(&mut self, n: u64, cause: Cause) -> u64 {
        let v = self.rng.below(n);
        self.emit(
            Key::new(Owner::GAME, Kind::CLOCK, 0),
            Change::Random { draws: 1 },
            cause,
        );
        v
    }

    /// Shuffles `items` with the game's RNG, recorded as one event.
    pub fn shuffle<T>(&mut self, items: &mut [T], cause: Cause) {
        self.rng.shuffle(items);
        let draws = u32::try_from(items.len().saturating_sub(1)).unwrap_or(u32::MAX);
        if draws > 0 {
            self.emit(
                Key::new(Owner::GAME, Kind::CLOCK, 0),
                Change::Random { draws },
                cause,
            );
        }
    }

    // ----- the ruleset's own events -----

    /// Records a ruleset's own event: something an action or effect did to the ruleset's state rather
    /// than the ledger's (a card picked, a move planned), named by `code` in the ruleset's
    /// [`Vocabulary::notes`](crate::Vocabulary::notes), about the resource or subject `key`, with up to
    /// three numbers. It changes nothing; hosts write it in words.
    #[inline]
    pub fn note(&mut self, key: Key, code: u16, args: [i32; 3], cause: Cause) {
        self.emit(key, Change::Note { code, args }, cause);
    }
}

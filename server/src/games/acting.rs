//! Acting on a hosted game: joining, views, legal moves, and acts (committing and storing after).

use super::*;

impl Games {
    /// Gives the free seat `seat` (or the first free one) a new token.
    ///
    /// # Errors
    /// [`GameError::NotFound`], [`GameError::SeatTaken`] when that seat is taken or none is free.
    pub async fn join(
        self: &Arc<Self>,
        id: u64,
        seat: Option<u32>,
    ) -> Result<(u32, String), GameError> {
        let slot = self.find(id).await?;
        let players = slot.setup.players;
        if let Some(seat) = seat
            && seat >= players
        {
            return Err(GameError::NotFound(format!(
                "game {id} has no seat {seat}: its seats are 0 to {}",
                players.saturating_sub(1)
            )));
        }
        if let Some(seat) = seat
            && slot.is_bot(seat)
        {
            return Err(GameError::SeatTaken(format!(
                "seat {seat} of game {id} is played by the server's bot"
            )));
        }
        let token = new_token()?;
        let hash = TokenHash::of_token(token.as_bytes());
        // Without a seat asked for: the first free one; when another client claims it first, the next.
        let mut tried = 0u32;
        loop {
            let candidate = match seat {
                Some(seat) => seat,
                None => {
                    let seats = slot.seats.lock().unwrap_or_else(PoisonError::into_inner);
                    seats
                        .iter()
                        .enumerate()
                        .skip(tried as usize)
                        .find(|&(i, s)| s.is_none() && !slot.is_bot(i as u32))
                        .map(|(i, _)| i as u32)
                        .ok_or_else(|| {
                            GameError::SeatTaken(format!("game {id} has no free seat"))
                        })?
                }
            };
            let store = Arc::clone(&self.store);
            let claimed =
                tokio::task::spawn_blocking(move || store.claim_seat(GameId(id), candidate, hash))
                    .await
                    .map_err(|_| GameError::Internal("the store panicked".into()))?;
            match claimed {
                Ok(()) => {
                    slot.seats.lock().unwrap_or_else(PoisonError::into_inner)[candidate as usize] =
                        Some(hash);
                    return Ok((candidate, token));
                }
                Err(StoreError::SeatTaken { .. }) if seat.is_none() => tried = candidate + 1,
                Err(StoreError::SeatTaken { .. }) => {
                    return Err(GameError::SeatTaken(format!(
                        "seat {candidate} of game {id} is taken"
                    )));
                }
                Err(e) => return Err(storage(&e)),
            }
        }
    }

    /// The seat `seat` resigns: it forfeits where the game's policy and the ruleset allow it, and the
    /// random bot plays it for the rest of the game otherwise.
    ///
    /// # Errors
    /// [`GameError::Finished`] when the game is over, [`GameError::SeatTaken`] when a bot plays the seat
    /// already, [`GameError::Stopped`].
    pub async fn resign(self: &Arc<Self>, slot: &Arc<Slot>, seat: u16) -> Result<Left, GameError> {
        slot.check_running()?;
        if slot.finished.load(Ordering::Acquire) {
            return Err(GameError::Finished(slot.id.0));
        }
        if slot.is_bot(u32::from(seat)) {
            return Err(GameError::SeatTaken(format!(
                "seat {seat} of game {} is played by the server's bot already",
                slot.id
            )));
        }
        if let Some(left) = self.leave(slot, seat, "it resigned").await {
            Ok(left)
        } else {
            Err(GameError::SeatTaken(format!(
                "seat {seat} of game {} is played by the server's bot already",
                slot.id
            )))
        }
    }

    /// What `audience` sees of game `slot` now: `{"type":"view","seq","seat","view":{table,resources}}`,
    /// and `"clock"` when the game has one, as text (no JSON tree in between: every watcher that
    /// connects asks for one).
    ///
    /// # Errors
    /// [`GameError::Stopped`] and the plugin's failures.
    pub async fn view(&self, slot: &Arc<Slot>, audience: Audience) -> Result<View, GameError> {
        let clock = slot.clock_json();
        let (view, _guard) = self
            .call(slot, move |live| {
                let game = live
                    .game
                    .as_deref()
                    .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                let text = view_message(game, live.seq, audience, clock.as_ref());
                plugin_failed(game).map_err(CallError::Stop)?;
                Ok(View {
                    seq: live.seq,
                    text,
                })
            })
            .await?;
        Ok(view)
    }

    /// The legal actions of `seat` now: `{"seq", "actions": [...]}`. Those kept at the game's last
    /// committed action answer without a call into the game; else one call computes every seat's.
    ///
    /// # Errors
    /// [`GameError::Stopped`] and the plugin's failures.
    pub async fn legal(&self, slot: &Arc<Slot>, seat: u16) -> Result<Legal, GameError> {
        slot.check_running()?;
        if let Some(legal) = slot.kept_legal(seat) {
            self.metrics.legal_kept.inc();
            return Ok(legal);
        }
        let call_slot = Arc::clone(slot);
        let (legal, _guard) = self
            .call(slot, move |live| {
                let game = live
                    .game
                    .as_deref_mut()
                    .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                let every = every_legal(game, live.seq);
                plugin_failed(game).map_err(CallError::Stop)?;
                let legal = every.get(usize::from(seat)).cloned();
                call_slot.keep_legal(live.seq, every);
                legal.ok_or_else(|| {
                    CallError::Refused(GameError::NotFound(format!(
                        "game {} has no seat {seat}",
                        call_slot.id
                    )))
                })
            })
            .await?;
        Ok(legal)
    }

    /// Applies an action of a seat, commits it, and answers it as that seat reads it:
    /// `{"type":"action","seq","actor","action","events"}`. Everyone listening to the game gets it as
    /// they may read it, after the commit.
    ///
    /// # Errors
    /// [`GameError::Finished`], [`GameError::Stale`] (nothing applied), [`GameError::Refused`] (the ruleset's
    /// reason in words; nothing applied), [`GameError::Stopped`], [`GameError::Internal`] when the store
    /// failed (the game is stopped: what is in memory was not saved).
    pub async fn act(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        submit: Submit,
        token: &str,
    ) -> Result<Acted, GameError> {
        if slot.is_bot(u32::from(submit.seat)) {
            return Err(GameError::SeatTaken(format!(
                "seat {} of game {} was handed to the server's bot (resigned or abandoned): its \
                 token takes no more actions",
                submit.seat, slot.id
            )));
        }
        // On a task of its own: a client that goes away (a closed connection drops its request) must
        // not stop an action between its application in memory and its commit.
        let games = Arc::clone(self);
        let game = Arc::clone(slot);
        let token = token.to_owned();
        tokio::spawn(async move {
            match &games.node {
                None => games.act_here(&game, submit, None).await,
                Some(node) => games.act_in_cluster(node, &game, submit, &token).await,
            }
        })
        .await
        .unwrap_or_else(|_| Err(GameError::Internal("applying the action failed".into())))
        .inspect(|acted| {
            if acted.first {
                self.after_action(slot);
            }
        })
    }

    /// [`act`](Self::act) on this node, holding the game's lease with fencing number `fence` when it
    /// is one of several.
    pub(super) async fn act_here(
        &self,
        slot: &Arc<Slot>,
        submit: Submit,
        fence: Option<u64>,
    ) -> Result<Acted, GameError> {
        // A retry (same key) answers its first result whatever happened since: the key comes first.
        if let Some(key) = &submit.key
            && let Some((seq, answer)) = slot.remembered(submit.seat, key)
        {
            return Ok(Acted {
                seq,
                answer,
                first: false,
                legal: None,
            });
        }
        if submit.key.is_none() && slot.finished.load(Ordering::Acquire) {
            return Err(GameError::Finished(slot.id.0));
        }
        let Submit {
            seat,
            action,
            expected_seq,
            key,
        } = submit;
        let id = slot.id;
        let applying = Applying {
            store: Arc::clone(&self.store),
            ruleset: slot.ruleset.clone(),
            slot: Arc::clone(slot),
            seat,
            action: action.clone(),
            expected_seq,
            key: key.clone(),
            snapshot_every: self.limits.snapshot_every.max(1),
        };
        let (applied, mut guard) = self
            .call(slot, move |live| applying.apply(live))
            .await
            .inspect_err(|e| {
                // The code only: a refusal's words are for the seat that acted and may name what it
                // alone sees.
                tracing::debug!(target: "coffer_server::games", game = %id, code = e.code(), "rejected");
                self.metrics.rejected.inc();
            })?;
        let (seq, hash, answer, pushes, finished, snapshot, undo, to_act, legal) = match applied {
            Applied::Refused(message) => {
                self.metrics.refusals.inc();
                return Err(GameError::Refused { message });
            }
            Applied::Duplicate(first) => {
                drop(guard);
                let audience = Some(Owner(seat));
                let mut history = self.history(slot, audience, first - 1, first).await?;
                return history
                    .pop()
                    .map(|answer| Acted {
                        seq: first,
                        answer: Arc::from(answer),
                        first: false,
                        legal: None,
                    })
                    .ok_or_else(|| {
                        GameError::Internal(format!("action {first} is not in the log"))
                    });
            }
            Applied::Remembered(seq, answer) => {
                return Ok(Acted {
                    seq,
                    answer,
                    first: false,
                    legal: None,
                });
            }
            Applied::Done(done) => (
                done.seq,
                done.hash,
                done.answer,
                done.pushes,
                done.finished,
                done.snapshot,
                done.undo,
                done.to_act,
                done.legal,
            ),
        };
        let stored = Action {
            seq,
            seat: u32::from(seat),
            action,
            hash,
            key: key.clone(),
            at_unix_ms: now_unix_ms(),
        };
        if let Err(error) = self.commit(slot, stored, fence).await {
            return Err(self.commit_failed(slot, guard, error));
        }
        guard.seq = seq;
        guard.moves.note(seat, key.as_deref(), undo);
        slot.seq.store(seq, Ordering::Release);
        self.metrics.actions.inc();
        let answer: Arc<str> = Arc::from(answer);
        let decided = match Chooser::of(key.as_deref()) {
            Some(Chooser::Timeout) => Decided::TimedOut,
            _ if undo => Decided::TookBack,
            _ => Decided::Played,
        };
        if let Some(key) = key {
            slot.remember(seat, key, seq, Arc::clone(&answer));
        }
        // The actor's own list goes with its answer when it may act again (a seat's list is its own).
        let own = legal
            .get(usize::from(seat))
            .filter(|l| !l.is_empty())
            .cloned();
        slot.keep_legal(seq, legal);
        slot.publish(seq, pushes);
        if finished {
            slot.finish();
            self.release_creator(slot);
        }
        if slot.setup.clock.is_some() {
            // The clocks restart for the next decision once the action is answered (`after_action`).
            slot.clock_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .next = Some((seq, seat, to_act, decided));
        }
        drop(guard);
        let acted = Acted {
            seq,
            answer,
            first: true,
            legal: own,
        };
        if snapshot.is_some() || finished {
            self.store_after(slot.id, seq, hash, snapshot, finished);
        }
        Ok(acted)
    }

    /// Appends `action` to the game's log (fenced by the lease's `fence` when the node is one of several)
    /// and waits for its group's commit.
    async fn commit(
        &self,
        slot: &Slot,
        action: Action,
        fence: Option<u64>,
    ) -> Result<(), StoreError> {
        let (sender, committed) = oneshot::channel();
        let started = Instant::now();
        let done: crate::store::Done = Box::new(move |result| {
            let _ = sender.send(result);
        });
        match fence {
            Some(fence) => self.store.append_fenced_then(slot.id, action, fence, done),
            None => self.store.append_then(slot.id, action, done),
        }
        let result = committed.await.unwrap_or(Err(StoreError::WriterStopped));
        self.metrics
            .commit_seconds
            .observe(started.elapsed().as_secs_f64());
        result
    }

    /// An action applied in memory whose commit failed: nobody may see it. With several nodes the game
    /// goes on (this node rebuilds it from the store before its next use); alone, the game stops and is
    /// recovered as saved when the server restarts.
    pub(super) fn commit_failed(
        &self,
        slot: &Arc<Slot>,
        mut guard: OwnedMutexGuard<Live>,
        error: StoreError,
    ) -> GameError {
        // What is in memory was not saved: nobody may see it. The game is recovered from the store
        // when the server restarts.
        // Freeing a game is a call into its ruleset: not on the executor's threads either.
        let game = guard.game.take();
        slot.forget_legal();
        drop(guard);
        tokio::task::spawn_blocking(move || drop(game));
        if self.node.is_some() {
            // With several nodes the game goes on: this node rebuilds it from the store before its
            // next use, at the last action it saw committed, and follows the log from there.
            if let StoreError::Fenced { .. } = error {
                self.metrics.fenced.inc();
                self.lose_lease(slot);
                return GameError::Moved(slot.id.0);
            }
            tracing::warn!(target: "coffer_server::games", game = %slot.id, "an action could not be saved: {error}");
            return GameError::Unavailable(
                "the server could not save this action to its store, or cannot tell whether \
                 it did: submit it again with the same idempotency key"
                    .into(),
            );
        }
        slot.stop(
            format!(
                "game {} is stopped: the server could not save its last action ({error}); it is \
                 recovered as saved when the server restarts",
                slot.id
            ),
            &self.metrics,
        );
        storage(&error)
    }

    /// Stores a snapshot taken with an action, and marks a finished game, off the executor's threads.
    pub(super) fn store_after(
        &self,
        id: GameId,
        seq: u64,
        hash: StateHash,
        snapshot: Option<Vec<u8>>,
        finished: bool,
    ) {
        let store = Arc::clone(&self.store);
        tokio::task::spawn_blocking(move || {
            if let Some(bytes) = snapshot {
                let snapshot = Snapshot { seq, bytes, hash };
                if let Err(e) = store.put_snapshot(id, snapshot) {
                    tracing::warn!(target: "coffer_server::games", game = %id, "snapshot not stored: {e}");
                }
            }
            if finished && let Err(e) = store.finish(id) {
                tracing::warn!(target: "coffer_server::games", game = %id, "game not marked finished: {e}");
            }
        });
    }
}

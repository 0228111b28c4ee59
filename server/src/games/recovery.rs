//! Recovering unfinished games from the store and rebuilding them from their logs.

use super::*;
use crate::store::GameRecord;

impl Games {
    /// Brings back every unfinished game of the store: its latest snapshot (its hash checked) and the
    /// actions after it, each checked against its stored hash. A game whose ruleset is not loaded, or
    /// that does not replay to its hashes, is hosted stopped, saying why. Returns how many games were
    /// recovered, and how many of them are stopped.
    ///
    /// # Errors
    /// A storage failure.
    pub fn recover(&self) -> Result<(usize, usize), StoreError> {
        let ids = self.store.unfinished_games()?;
        let mut stopped = 0;
        for id in &ids {
            let slot = self.load_game(*id)?;
            if slot.stopped().is_some() {
                stopped += 1;
            }
            if slot.finished.load(Ordering::Acquire) {
                self.store.finish(*id)?;
            }
            self.slots
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(*id, Arc::new(slot));
            self.hosted.fetch_add(1, Ordering::AcqRel);
            self.metrics.games.inc();
        }
        Ok((ids.len(), stopped))
    }

    /// Game `id` from the store, as [`recover`](Self::recover) brings it back (not yet hosted). With
    /// several nodes it starts as a follower: the lease says who owns it.
    pub(super) fn load_game(&self, id: GameId) -> Result<Slot, StoreError> {
        let recovery = self.store.recover(id)?;
        let record = recovery.game;
        let seats = self.store.seats(id)?;
        let exact = self.exact_ruleset(&record);
        let setup = CoreSetup::new(record.setup.players as u16, record.setup.seed)
            .config(record.setup.config.clone());
        let hole = contiguous(record.seq, recovery.snapshot.as_ref(), &recovery.tail);
        let (game, problem) = match &exact {
            None => (None, Some(not_loaded(&record))),
            Some(_) if hole.is_err() => {
                let hole = hole.unwrap_err();
                tracing::error!(target: "coffer_server::games", game = %id, "recovery refused: {hole}");
                (None, Some(format!("game {id} is stopped: {hole}")))
            }
            Some(ruleset) => match rebuild(
                &**ruleset,
                &setup,
                recovery.snapshot.as_ref(),
                &recovery.tail,
            ) {
                Ok(game) => (Some(game), None),
                Err(reason) => (None, Some(format!("game {id} is stopped: {reason}"))),
            },
        };
        let finished = game
            .as_ref()
            .is_some_and(|g| matches!(g.outcome(), Outcome::Finished { .. }));
        let moves = Moves::of(&recovery.tail);
        let slot = self.stored_slot(record, seats, exact, game, moves, finished);
        if let Some(reason) = problem {
            slot.stop(reason, &self.metrics);
        }
        Ok(slot)
    }

    /// Game `id` as a node of several that nobody asked for it hosts it: its record and seats only (what
    /// the lobby lists), its state left unbuilt until a request or a viewer wants it (then rebuilt from
    /// the store up to the record's sequence, and caught up from there).
    pub(super) fn load_lazily(&self, id: GameId) -> Result<Slot, StoreError> {
        let record = self.store.game(id)?;
        let seats = self.store.seats(id)?;
        let exact = self.exact_ruleset(&record);
        let problem = exact.is_none().then(|| not_loaded(&record));
        let finished = record.finished;
        let slot = self.stored_slot(record, seats, exact, None, Moves::default(), finished);
        if let Some(reason) = problem {
            slot.stop(reason, &self.metrics);
        }
        // Unbuilt: the first request or viewer builds it (`find` wakes a dormant game).
        slot.dormant.store(true, Ordering::Release);
        Ok(slot)
    }

    /// The loaded ruleset of exactly the stored game's key, if any.
    fn exact_ruleset(&self, record: &GameRecord) -> Option<Arc<dyn DynRuleset>> {
        let entry = self.registry.get(record.ruleset.as_str()).ok()?;
        (entry.key() == record.ruleset.as_str()).then(|| Arc::clone(&entry.ruleset))
    }

    /// A stored game hosted here, a follower with several nodes (the lease says who owns it).
    fn stored_slot(
        &self,
        record: GameRecord,
        seats: Vec<Option<TokenHash>>,
        ruleset: Option<Arc<dyn DynRuleset>>,
        game: Option<Box<dyn DynGame>>,
        moves: Moves,
        finished: bool,
    ) -> Slot {
        Slot::from(Hosting {
            id: record.id,
            ruleset,
            key: record.ruleset.to_string(),
            bots: stored_bots(record.id, &record.setup.bots, record.setup.players),
            setup: record.setup,
            created_unix_ms: record.created_unix_ms,
            seats,
            game,
            seq: record.seq,
            moves,
            finished,
            role: if self.node.is_some() {
                Role::Follower(None)
            } else {
                Role::Sole
            },
            creator: None,
        })
    }
}

/// Why a stored game whose ruleset this server does not load is stopped.
fn not_loaded(record: &GameRecord) -> String {
    format!(
        "game {} is stopped: its ruleset {} is not loaded on this server",
        record.id, record.ruleset
    )
}

/// Whether a stored game's log runs without a hole from its snapshot (or its first action) to its
/// stored sequence number `seq`: a deleted action or a bumped `seq` is refused, saying where.
pub(super) fn contiguous(
    seq: u64,
    snapshot: Option<&Snapshot>,
    tail: &[Action],
) -> Result<(), String> {
    let mut last = snapshot.map_or(0, |snapshot| snapshot.seq);
    if last > seq {
        return Err(format!(
            "its snapshot is at action {last} but the store says the game is at action {seq}"
        ));
    }
    for action in tail {
        if action.seq != last + 1 {
            return Err(format!(
                "its log has no action {} (the next stored one is {}): the store lost actions",
                last + 1,
                action.seq
            ));
        }
        last = action.seq;
    }
    if last != seq {
        return Err(format!(
            "the store says the game is at action {seq} but its log ends at action {last}"
        ));
    }
    Ok(())
}

/// A game from its setup or snapshot and the actions after, each checked against its stored hash.
pub(super) fn rebuild(
    ruleset: &dyn DynRuleset,
    setup: &CoreSetup,
    snapshot: Option<&Snapshot>,
    tail: &[Action],
) -> Result<Box<dyn DynGame>, String> {
    let mut game = match snapshot {
        Some(snapshot) => {
            let game = ruleset
                .restore(Format::Binary, &snapshot.bytes)
                .map_err(|e| {
                    format!(
                        "its snapshot at action {} does not restore: {e}",
                        snapshot.seq
                    )
                })?;
            if game.state_hash().0 != snapshot.hash.0 {
                return Err(format!(
                    "its snapshot at action {} does not have its stored hash",
                    snapshot.seq
                ));
            }
            game
        }
        None => ruleset
            .new_game(setup)
            .map_err(|e| format!("it cannot be started again: {e}"))?,
    };
    for action in tail {
        if let Err(e) = game.apply_json(Owner(action.seat as u16), action.action.get()) {
            return Err(format!(
                "its action {} is refused on replay: {e}",
                action.seq
            ));
        }
        if game.state_hash().0 != action.hash.0 {
            return Err(format!(
                "its state after action {} does not have its stored hash",
                action.seq
            ));
        }
    }
    plugin_failed(&*game)?;
    Ok(game)
}

//! Replaying a game's history for an audience.

use super::*;

impl Games {
    /// The actions after `since` up to `until`, at most [`Limits::history_page`] of them, each as
    /// `audience` reads it (without the view).
    ///
    /// Rebuilt on a copy of the game from the store: the latest stored snapshot at or before `since`,
    /// then the actions after it, each checked against its stored hash. A read therefore replays at
    /// most a snapshot interval plus the actions it answers, whatever the log's length. At most
    /// [`Limits::history_replays`] run at once, on threads of their own; a read that waits past
    /// [`Limits::history_wait`] for one is refused `saturated`. A history read never stops the live
    /// game: whatever goes wrong with it is its own error.
    ///
    /// # Errors
    /// [`GameError::Saturated`] when every replay stayed busy, or the replay ran past the plugin
    /// deadline; [`GameError::Internal`] when the log does not replay to its hashes; a storage failure.
    pub async fn history(
        &self,
        slot: &Arc<Slot>,
        audience: Audience,
        since: u64,
        until: u64,
    ) -> Result<Vec<String>, GameError> {
        let until = until.min(since.saturating_add(self.limits.history_page.max(1)));
        if since >= until {
            return Ok(Vec::new());
        }
        let Some(ruleset) = slot.ruleset.clone() else {
            return Err(GameError::Stopped(
                "the ruleset of this game is not loaded".into(),
            ));
        };
        let permit = match tokio::time::timeout(
            self.limits.history_wait,
            Arc::clone(&self.replays).acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => permit,
            _ => {
                self.metrics.saturated.inc();
                return Err(GameError::Saturated(format!(
                    "the server is reading as many game histories as it may at once ({}): try again \
                     in a moment; no game is affected",
                    self.limits.history_replays
                )));
            }
        };
        let store = Arc::clone(&self.store);
        let metrics = Arc::clone(&self.metrics);
        let id = slot.id;
        let setup =
            CoreSetup::new(slot.players(), slot.setup.seed).config(slot.setup.config.clone());
        let calls = Arc::clone(&self.calls);
        let key = slot.key.clone();
        let work = tokio::task::spawn_blocking(move || -> Result<Vec<String>, GameError> {
            // Held until the replay ends, even one the reader stopped waiting for: replays never pile up.
            let _permit = permit;
            let _running = calls.enter(id, &key, "a history read");
            let passage = store.passage(id, since, until).map_err(|e| storage(&e))?;
            let description = ruleset.description();
            let not_replayable = |why: String| {
                tracing::warn!(target: "coffer_server::games", game = %id, "history cannot be rebuilt: {why}");
                GameError::Internal(format!(
                    "the history of game {id} cannot be rebuilt from the store ({why}); the game \
                     itself goes on"
                ))
            };
            let mut game = match &passage.snapshot {
                Some(snapshot) => {
                    let game = ruleset
                        .restore(Format::Binary, &snapshot.bytes)
                        .map_err(|e| {
                            not_replayable(format!(
                                "its snapshot at action {} does not restore: {e}",
                                snapshot.seq
                            ))
                        })?;
                    if game.state_hash().0 != snapshot.hash.0 {
                        return Err(not_replayable(format!(
                            "its snapshot at action {} does not have its stored hash",
                            snapshot.seq
                        )));
                    }
                    game
                }
                None => ruleset
                    .new_game(&setup)
                    .map_err(|e| not_replayable(format!("it cannot be started again: {e}")))?,
            };
            let mut expected = passage.snapshot.as_ref().map_or(0, |s| s.seq);
            let mut out = Vec::with_capacity(usize::try_from(until - since).unwrap_or(0));
            for action in &passage.actions {
                expected += 1;
                if action.seq != expected {
                    return Err(not_replayable(format!(
                        "its log has no action {expected} (the next stored one is {})",
                        action.seq
                    )));
                }
                let seat = action.seat as u16;
                if game.apply_json(Owner(seat), action.action.get()).is_err()
                    || game.state_hash().0 != action.hash.0
                {
                    return Err(not_replayable(format!(
                        "its log does not replay at action {} (a different ruleset build?)",
                        action.seq
                    )));
                }
                metrics.history_replayed.inc();
                if action.seq > since {
                    out.push(
                        action_message(
                            &mut *game,
                            description,
                            Told::of(action.seq, seat, action.key.as_deref(), action.action.get()),
                            audience,
                            Forms::Plain,
                        )
                        .0
                        .unwrap_or_default(),
                    );
                }
            }
            plugin_failed(&*game).map_err(not_replayable)?;
            Ok(out)
        });
        match tokio::time::timeout(self.limits.plugin_deadline, work).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(GameError::Internal(format!(
                "the ruleset {} failed while rebuilding the history of game {id}; the game itself goes on",
                slot.key
            ))),
            Err(_) => {
                self.metrics.saturated.inc();
                Err(GameError::Saturated(format!(
                    "reading the history of game {id} took longer than {} s: try again later; the game \
                     itself goes on",
                    self.limits.plugin_deadline.as_secs_f64()
                )))
            }
        }
    }
}

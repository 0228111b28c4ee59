//! Places and quotas for new games, sweeping and purging finished games.

use super::*;

impl Games {
    /// Takes a place for a new game among the server's `max_games` and the client's
    /// `max_games_per_client`, within the memory budget.
    pub(super) fn reserve(&self, client: Option<IpAddr>) -> Result<Reservation<'_>, GameError> {
        if self.hosted.fetch_add(1, Ordering::AcqRel) >= self.limits.max_games {
            self.hosted.fetch_sub(1, Ordering::AcqRel);
            return Err(GameError::Full(format!(
                "this server hosts {} games, its limit: no more can be created",
                self.limits.max_games
            )));
        }
        let mut reservation = Reservation {
            games: self,
            client: None,
            kept: false,
        };
        if let Some(resident) = crate::resident::resident_bytes()
            && resident >= self.limits.max_memory_bytes
        {
            self.metrics.quota_refused.inc();
            return Err(GameError::Full(format!(
                "this server uses {} MiB of its {} MiB memory budget: no more games can be created now",
                resident >> 20,
                self.limits.max_memory_bytes >> 20
            )));
        }
        if let Some(client) = client {
            let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
            let count = clients.entry(client).or_insert(0);
            if *count >= self.limits.max_games_per_client {
                self.metrics.quota_refused.inc();
                return Err(GameError::Quota(format!(
                    "this address has {} unfinished games on this server, its limit: finish or leave one \
                     before creating another",
                    self.limits.max_games_per_client
                )));
            }
            *count += 1;
            reservation.client = Some(client);
        }
        Ok(reservation)
    }

    /// Gives back one of `client`'s games.
    pub(super) fn release_client(&self, client: IpAddr) {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = clients.get_mut(&client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                clients.remove(&client);
            }
        }
    }

    /// A game that finished or left memory no longer counts against its creator's games.
    pub(super) fn release_creator(&self, slot: &Slot) {
        let creator = slot
            .creator
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(client) = creator {
            self.release_client(client);
        }
    }

    /// Lets finished games that lingered [`Limits::finished_linger`] leave memory (their logs stay in
    /// the store). Returns how many left.
    pub fn sweep_finished(&self) -> usize {
        let linger = self.limits.finished_linger;
        let gone: Vec<Arc<Slot>> = {
            let mut slots = self.slots.write().unwrap_or_else(PoisonError::into_inner);
            let ids: Vec<GameId> = slots
                .values()
                .filter(|slot| {
                    slot.finished_at
                        .get()
                        .is_some_and(|at| at.elapsed() >= linger)
                })
                .map(|slot| slot.id)
                .collect();
            ids.iter().filter_map(|id| slots.remove(id)).collect()
        };
        for slot in &gone {
            self.release_creator(slot);
            self.hosted.fetch_sub(1, Ordering::AcqRel);
            self.metrics.games.dec();
        }
        let count = gone.len();
        // A game's state is freed by its ruleset: not on the executor's threads.
        if count > 0 {
            tokio::task::spawn_blocking(move || drop(gone));
        }
        count
    }

    /// The retention policy: deletes from the store the finished games that finished longer than
    /// [`Limits::keep_finished`] ago, [`PURGE_BATCH`] at most per call, on a blocking thread; a call
    /// while another runs does nothing. Returns how many were deleted.
    pub async fn purge_finished(&self) -> usize {
        let keep = self.limits.keep_finished;
        if keep.is_zero() || self.purging.swap(true, Ordering::AcqRel) {
            return 0;
        }
        let store = Arc::clone(&self.store);
        let before =
            now_unix_ms().saturating_sub(u64::try_from(keep.as_millis()).unwrap_or(u64::MAX));
        let work = tokio::task::spawn_blocking(move || -> (Vec<GameId>, Option<StoreError>) {
            let mut deleted = Vec::new();
            let ids = match store.finished_before(before, PURGE_BATCH) {
                Ok(ids) => ids,
                Err(error) => return (deleted, Some(error)),
            };
            for id in ids {
                match store.forget(id) {
                    Ok(()) => deleted.push(id),
                    // Deleted meanwhile (another node), or found unfinished: not ours to delete.
                    Err(StoreError::NoSuchGame(_) | StoreError::NotFinished(_)) => {}
                    Err(error) => return (deleted, Some(error)),
                }
            }
            (deleted, None)
        })
        .await;
        self.purging.store(false, Ordering::Release);
        let (deleted, error) = work.unwrap_or_else(|_| (Vec::new(), None));
        if let Some(error) = error {
            tracing::error!(target: "coffer_server::games", error = %error, "the retention policy could not delete finished games");
        }
        if !deleted.is_empty() {
            // A finished game still lingering in memory leaves with its log.
            let gone: Vec<Arc<Slot>> = {
                let mut slots = self.slots.write().unwrap_or_else(PoisonError::into_inner);
                deleted.iter().filter_map(|id| slots.remove(id)).collect()
            };
            for slot in &gone {
                self.release_creator(slot);
                self.hosted.fetch_sub(1, Ordering::AcqRel);
                self.metrics.games.dec();
            }
            if !gone.is_empty() {
                tokio::task::spawn_blocking(move || drop(gone));
            }
            self.metrics.games_deleted.inc_by(deleted.len() as u64);
            tracing::info!(target: "coffer_server::games",
                deleted = deleted.len(),
                keep_days = keep.as_secs() / 86_400,
                "deleted finished games past the retention time"
            );
        }
        deleted.len()
    }
}

/// How long the server waits between sweeps of the rate limiter's idle entries.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);

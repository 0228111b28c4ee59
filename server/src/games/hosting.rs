//! Hosting games: building [`Games`], its accessors, calling a ruleset on a blocking thread, creating.

use super::*;

impl Games {
    /// Hosts the games of `store`'s unfinished games (see [`recover`](Self::recover)) with `registry`'s
    /// rulesets.
    pub fn new(
        registry: Registry,
        store: Arc<dyn Store>,
        limits: Limits,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            registry,
            store,
            slots: RwLock::new(HashMap::new()),
            replays: Arc::new(tokio::sync::Semaphore::new(limits.history_replays.max(1))),
            limits,
            metrics,
            node: None,
            hosted: AtomicUsize::new(0),
            purging: std::sync::atomic::AtomicBool::new(false),
            clients: Mutex::new(HashMap::new()),
            calls: Arc::new(Calls::default()),
            timers: OnceLock::new(),
        }
    }

    /// The ruleset calls running now (an action, a history read, a game being started), each named by
    /// its game and ruleset.
    pub fn calls(&self) -> &Calls {
        &self.calls
    }

    /// The same, as one node of several sharing the store: games are owned through `cluster`'s leases,
    /// followed from the store when another node owns them, and their actions passed on to their owner.
    #[must_use]
    pub fn with_cluster(mut self, cluster: Arc<Cluster>) -> Self {
        // A submission passed on is keyed, so one that takes longer than a lease is asked again (of
        // whoever owns the game by then) without being applied twice.
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(1))
            .timeout(cluster.node().lease.max(Duration::from_secs(1)))
            .build()
            .unwrap_or_default();
        self.node = Some(Node { cluster, http });
        self
    }

    /// This node's side of the cluster, when it is one of several.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.node.as_ref().map(|n| &n.cluster)
    }

    /// The rulesets.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The metrics.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// The game `id`.
    ///
    /// # Errors
    /// [`GameError::NotFound`].
    pub fn slot(&self, id: u64) -> Result<Arc<Slot>, GameError> {
        self.slots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&GameId(id))
            .cloned()
            .ok_or_else(|| GameError::NotFound(format!("no game {id} on this server")))
    }

    /// The lobby: games in id order after `after`, at most `limit`, only those with a free seat when
    /// `open`.
    pub fn list(&self, open: bool, after: u64, limit: usize) -> Vec<Summary> {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        let mut ids: Vec<GameId> = slots.keys().copied().filter(|id| id.0 > after).collect();
        ids.sort_unstable();
        ids.iter()
            .filter_map(|id| slots.get(id))
            .map(|slot| slot.summary())
            .filter(|s| !open || (!s.free_seats.is_empty() && !s.finished && s.stopped.is_none()))
            .take(limit)
            .collect()
    }

    /// The number of games hosted.
    pub fn len(&self) -> usize {
        self.slots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no game is hosted.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Runs `f` on the game's live state on a blocking thread, under its lock and the plugin deadline.
    /// Returns the lock too, so the caller can finish (commit) before anyone else uses the game.
    pub(super) async fn call<T: Send + 'static>(
        &self,
        slot: &Arc<Slot>,
        f: impl FnOnce(&mut Live) -> Result<T, CallError> + Send + 'static,
    ) -> Result<(T, OwnedMutexGuard<Live>), GameError> {
        slot.check_running()?;
        let deadline = self.limits.plugin_deadline;
        let guard = match tokio::time::timeout(deadline, Arc::clone(&slot.live).lock_owned()).await
        {
            Ok(guard) => guard,
            Err(_) => {
                slot.check_running()?;
                return Err(GameError::Busy(slot.id.0));
            }
        };
        slot.check_running()?;
        // With several nodes, a game whose last append failed was dropped: rebuilt from the store first.
        let reload = self
            .node
            .is_some()
            .then(|| (Arc::clone(&self.store), Arc::clone(slot)));
        // The deadline is the ruleset's: it runs from the moment the call starts on its thread. A call
        // still waiting for a thread when the deadline passes is withdrawn (nothing applied) and
        // answered `saturated`: the server is short of threads, which is no fault of this game.
        let state = Arc::new(AtomicU8::new(CALL_WAITING));
        let (started_tx, started) = oneshot::channel::<()>();
        let call_state = Arc::clone(&state);
        let calls = Arc::clone(&self.calls);
        let (game, ruleset) = (slot.id, slot.key.clone());
        let mut handle = tokio::task::spawn_blocking(move || {
            let mut guard = guard;
            if call_state
                .compare_exchange(
                    CALL_WAITING,
                    CALL_RUNNING,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_err()
            {
                return (Err(CallError::Withdrawn), guard);
            }
            let _running = calls.enter(game, &ruleset, "a call");
            let _ = started_tx.send(());
            if let Some((store, slot)) = reload
                && guard.game.is_none()
                && let Err(error) = slot.reload(&mut guard, &*store)
            {
                return (Err(error), guard);
            }
            let result = f(&mut guard);
            (result, guard)
        });
        if tokio::time::timeout(deadline, started).await.is_err()
            && state
                .compare_exchange(
                    CALL_WAITING,
                    CALL_WITHDRAWN,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_ok()
        {
            self.metrics.saturated.inc();
            return Err(GameError::Saturated(format!(
                "the server had no thread free for game {} within {} s; nothing was applied: try again",
                slot.id,
                deadline.as_secs_f64()
            )));
        }
        match tokio::time::timeout(deadline, &mut handle).await {
            Ok(Ok((Err(CallError::Withdrawn), _))) => Err(GameError::Saturated(format!(
                "the server had no thread free for game {}; nothing was applied: try again",
                slot.id
            ))),
            Ok(Ok((Ok(value), guard))) => Ok((value, guard)),
            Ok(Ok((Err(CallError::Refused(error)), _))) => Err(error),
            Ok(Ok((Err(CallError::Stop(reason)), _))) => {
                slot.stop(reason, &self.metrics);
                Err(slot.stopped_error())
            }
            Ok(Err(join)) => {
                let what = if join.is_panic() {
                    "panicked"
                } else {
                    "was cancelled"
                };
                slot.stop(
                    format!(
                        "game {} is stopped: its ruleset {} {what} during a call; the other games go on",
                        slot.id, slot.key
                    ),
                    &self.metrics,
                );
                Err(slot.stopped_error())
            }
            Err(_) => {
                slot.stop(
                    format!(
                        "game {} is stopped: its ruleset {} did not answer within {} s (the plugin deadline); \
                         the other games go on",
                        slot.id,
                        slot.key,
                        deadline.as_secs_f64()
                    ),
                    &self.metrics,
                );
                Err(slot.stopped_error())
            }
        }
    }

    /// What [`create`](Self::create) checks before any token, hash or allocation scales with the
    /// request: the ruleset's name and its player range, the open seats (sorted, each once, each a
    /// seat of the game). Returns the ruleset, its key and the open seats.
    pub(super) fn checked_setup(&self, create: &Create) -> Result<CheckedSetup, GameError> {
        if create.ruleset.len() > MAX_RULESET_NAME {
            return Err(GameError::NotFound(format!(
                "no ruleset is named '{}' ({} bytes): see GET /api/rulesets for the names",
                clip(&create.ruleset, 40),
                create.ruleset.len()
            )));
        }
        let entry = self
            .registry
            .get(&create.ruleset)
            .map_err(|e| GameError::NotFound(e.to_string()))?;
        let ruleset = Arc::clone(&entry.ruleset);
        let description = ruleset.description();
        let key = description.key();
        let players = create.players;
        if !(description.min_players..=description.max_players).contains(&players) {
            return Err(GameError::Invalid(format!(
                "cannot start a game of {key}: {players} players: this ruleset takes {} to {}",
                description.min_players, description.max_players
            )));
        }
        let mut open_seats = create.open_seats.clone();
        open_seats.sort_unstable();
        open_seats.dedup();
        if let Some(&seat) = open_seats.iter().find(|&&s| s >= u32::from(players)) {
            return Err(GameError::Invalid(format!(
                "open seat {seat} does not exist: a game of {players} players has seats 0 to {}",
                players.saturating_sub(1)
            )));
        }
        let bots = checked_bots(&create.bots, players, &open_seats)?;
        let clock = checked_clock(create.clock)?;
        Ok(CheckedSetup {
            ruleset,
            key,
            open_seats,
            bots,
            clock,
        })
    }

    /// Creates a game: starts it (refused by the ruleset if its players or configuration are wrong),
    /// stores it, and answers a token for each seat not left open.
    ///
    /// Everything that costs in proportion to the request is checked before it is done: the players
    /// against the ruleset's range before any token is drawn, the seats left open against the players,
    /// the server's games, the client's games and the memory budget before the game is started, and the
    /// new game's size before it is stored.
    ///
    /// # Errors
    /// [`GameError::NotFound`] for an unknown ruleset, [`GameError::Invalid`] when the ruleset refuses
    /// the setup or a seat to leave open does not exist, [`GameError::Full`] past `max_games` or the
    /// memory budget, [`GameError::Quota`] past the client's games, [`GameError::GameTooLarge`] past
    /// `max_game_bytes`.
    pub async fn create(self: &Arc<Self>, create: Create) -> Result<Created, GameError> {
        let CheckedSetup {
            ruleset,
            key,
            open_seats,
            bots,
            clock,
        } = self.checked_setup(&create)?;
        let players = create.players;
        let reservation = self.reserve(create.client)?;
        let seed = match create.seed {
            Some(seed) => seed,
            None => random_u64()?,
        };
        let setup = CoreSetup::new(players, seed).config(create.config.clone());
        let mut tokens = Vec::with_capacity(usize::from(players));
        let mut hashes = Vec::with_capacity(usize::from(players));
        for seat in 0..u32::from(players) {
            if open_seats.binary_search(&seat).is_ok() || bots[seat as usize].is_some() {
                tokens.push(None);
                hashes.push(None);
            } else {
                let token = new_token()?;
                hashes.push(Some(TokenHash::of_token(token.as_bytes())));
                tokens.push(Some(token));
            }
        }
        let store = Arc::clone(&self.store);
        let deadline = self.limits.plugin_deadline;
        let max_game_bytes = self.limits.max_game_bytes;
        let ruleset_key = RulesetKey::new(&key).map_err(|e| GameError::Internal(e.to_string()))?;
        let stored_setup = Setup {
            players: u32::from(players),
            seed,
            config: create.config,
            bots: bot_names_of(&bots),
            clock,
        };
        let (started, to_act) = {
            let ruleset = Arc::clone(&ruleset);
            let setup = setup.clone();
            let calls = Arc::clone(&self.calls);
            let work = tokio::task::spawn_blocking(move || {
                let key = ruleset.description().key();
                let _running = calls.enter("(a new game)", &key, "starting a game");
                let mut game = ruleset.new_game(&setup).map_err(|e| {
                    GameError::Invalid(clip(&format!("cannot start a game of {key}: {e}"), 500))
                })?;
                plugin_failed(&*game).map_err(GameError::Internal)?;
                // The game's size, as its binary snapshot measures it, within the per-game budget.
                let size = game
                    .snapshot(Format::Binary)
                    .map_err(|e| {
                        GameError::Internal(format!(
                            "the ruleset {key} cannot snapshot a new game: {e}"
                        ))
                    })?
                    .len();
                if size > max_game_bytes {
                    return Err(GameError::GameTooLarge(format!(
                        "a game of {key} with this configuration holds {} KiB of state; this server \
                         hosts games of at most {} KiB (--max-game-kib): choose smaller options",
                        size.div_ceil(1024),
                        max_game_bytes / 1024
                    )));
                }
                let to_act = seats_to_act(&mut *game);
                Ok::<_, GameError>((game, to_act))
            });
            match tokio::time::timeout(deadline, work).await {
                Ok(Ok(result)) => result?,
                Ok(Err(_)) => {
                    return Err(GameError::Internal(format!(
                        "the ruleset {key} panicked while starting a game"
                    )));
                }
                Err(_) => {
                    return Err(GameError::Internal(format!(
                        "the ruleset {key} did not start a game within {} s",
                        deadline.as_secs_f64()
                    )));
                }
            }
        };
        let created_unix_ms = now_unix_ms();
        // A random id (below 2^53, so JavaScript reads it exactly); drawn again if taken.
        let mut id = GameId(random_u64()? >> 11);
        for _ in 0..8 {
            let new = NewGame {
                id,
                ruleset: ruleset_key.clone(),
                setup: stored_setup.clone(),
                created_unix_ms,
                seats: hashes.clone(),
            };
            let store = Arc::clone(&store);
            match tokio::task::spawn_blocking(move || store.create_game(new)).await {
                Ok(Ok(())) => break,
                Ok(Err(StoreError::GameExists(_))) => id = GameId(random_u64()? >> 11),
                Ok(Err(e)) => return Err(storage(&e)),
                Err(_) => return Err(GameError::Internal("the store panicked".into())),
            }
        }
        let slot = Arc::new(Slot::from(Hosting {
            id,
            ruleset: Some(ruleset),
            key: key.clone(),
            setup: stored_setup,
            created_unix_ms,
            seats: hashes,
            game: Some(started),
            seq: 0,
            moves: Moves::default(),
            finished: false,
            // The store gave the new game a lease held by this node, fencing number 1.
            role: if self.node.is_some() {
                Role::Owner(1)
            } else {
                Role::Sole
            },
            creator: create.client,
            bots,
        }));
        self.slots
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, Arc::clone(&slot));
        reservation.keep();
        self.metrics.games.inc();
        self.restart_clocks(&slot, 0, None, &to_act, 0);
        self.wake_bots(&slot);
        Ok(Created {
            game: id.0,
            ruleset: key,
            players: u32::from(players),
            tokens,
        })
    }
}

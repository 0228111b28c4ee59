//! The cluster half: following other nodes' games, forwarding actions to their owner, taking games over.

use super::*;

/// A forwarded submission as the owner's API reads it.
#[derive(serde::Serialize)]
pub(super) struct Forwarded<'a> {
    pub(super) action: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) expected_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) key: Option<&'a str>,
}

/// The header a node sends with a submission it passes on: the owner answers `moved` rather than pass
/// it on again.
pub const FORWARDED_HEADER: &str = "coffer-forwarded-by";

/// The header of an answer that repeats an earlier submission's (same idempotency key).
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// What passing a submission on to its owner gave.
pub(super) enum Passed {
    /// The owner's answer, applied or refused.
    Answer(Result<Acted, GameError>),
    /// Nothing was applied there: look the owner up again.
    Retry,
}

/// An error answer from another node, as this node answers it.
pub(super) fn relayed(
    id: u64,
    expected: Option<u64>,
    status: reqwest::StatusCode,
    retry_after: Option<Duration>,
    body: &str,
) -> GameError {
    #[derive(serde::Deserialize)]
    struct Body {
        error: String,
        message: String,
        current_seq: Option<u64>,
    }
    let Ok(body) = serde_json::from_str::<Body>(body) else {
        return GameError::Unavailable(format!(
            "the server node owning game {id} answered {status} without an explanation"
        ));
    };
    match body.error.as_str() {
        "bad_request" | "too_large" => GameError::Invalid(body.message),
        "unauthorized" => GameError::Unauthorized,
        "forbidden" => GameError::Forbidden(id),
        "not_found" => GameError::NotFound(body.message),
        "stale" => GameError::Stale {
            expected: expected.unwrap_or_default(),
            current: body.current_seq.unwrap_or_default(),
        },
        "finished" => GameError::Finished(id),
        "stopped" => GameError::Stopped(body.message),
        "refused" => GameError::Refused {
            message: body.message,
        },
        "rate_limited" => GameError::RateLimited {
            retry_after: retry_after.unwrap_or(Duration::from_secs(1)),
        },
        "busy" => GameError::Busy(id),
        "saturated" => GameError::Saturated(body.message),
        "quota" => GameError::Quota(body.message),
        "moved" => GameError::Moved(id),
        "internal" => GameError::Internal(body.message),
        _ => GameError::Unavailable(body.message),
    }
}

/// Actions kept per game from notices, waiting to be applied: past this, the follower reads the store.
const CARRIED_KEPT: usize = 256;

impl Slot {
    /// Keeps an action a notice carried, to apply it without reading the store.
    fn carry(&self, action: Action) {
        if action.seq <= self.seq() {
            return;
        }
        let mut carried = self.carried.lock().unwrap_or_else(PoisonError::into_inner);
        if carried.len() >= CARRIED_KEPT {
            // Far behind: the store serves the catch-up, from wherever this copy is.
            carried.clear();
        }
        carried.insert(action.seq, action);
    }

    /// The carried actions that continue a copy at `seq` (`seq + 1`, `seq + 2`, ... without a gap), taken
    /// out; `None` when the next one was not carried. Older ones are forgotten.
    fn carried_after(&self, seq: u64) -> Option<Vec<Action>> {
        let mut carried = self.carried.lock().unwrap_or_else(PoisonError::into_inner);
        while carried.first_key_value().is_some_and(|(&s, _)| s <= seq) {
            carried.pop_first();
        }
        let mut run = Vec::new();
        while let Some(entry) = carried.first_entry() {
            if *entry.key() != seq + 1 + run.len() as u64 {
                break;
            }
            run.push(entry.remove());
        }
        (!run.is_empty()).then_some(run)
    }

    /// Waits until this copy reaches `seq` or `most` has passed; answers whether it did.
    async fn wait_for(&self, seq: u64, most: Duration) -> bool {
        let deadline = tokio::time::Instant::now() + most;
        loop {
            // Made before the check, so that a move in between still wakes it.
            let moved = self.caught_up.notified();
            if self.seq() >= seq {
                return true;
            }
            if tokio::time::timeout_at(deadline, moved).await.is_err() {
                return self.seq() >= seq;
            }
        }
    }
}

/// How long a node that passed an action on waits for the notice announcing it (which carries it)
/// before reading the action from the store: a notice reaches the other nodes in 3 ms at the median
/// and 10 ms at p99 (docs/PERFORMANCE.md, "Several nodes").
const NOTICE_WAIT: Duration = Duration::from_millis(20);

/// The cluster side of the hosted games: who owns each, following the others' logs, passing actions on.
impl Games {
    pub(super) fn node_id(&self) -> &str {
        self.node
            .as_ref()
            .map_or("", |n| n.cluster.node().id.as_str())
    }

    /// The game `id`, loaded from the store if this node does not host it yet (with several nodes, a
    /// game another node created).
    ///
    /// # Errors
    /// [`GameError::NotFound`]; [`GameError::Unavailable`] when the store cannot be read.
    pub async fn find(self: &Arc<Self>, id: u64) -> Result<Arc<Slot>, GameError> {
        let slot = match self.slot(id) {
            Ok(slot) => slot,
            Err(missing) if self.node.is_none() => return Err(missing),
            Err(missing) => match self.host_from_store(GameId(id)).await {
                Ok(slot) => slot,
                Err(StoreError::NoSuchGame(_)) => return Err(missing),
                Err(error) => return Err(unreadable(GameId(id), &error)),
            },
        };
        if self.node.is_some() && !self.owns(&slot) {
            // Watched from now on; brought up to its log first if announcements were left unapplied.
            slot.asked_ms.store(process_ms(), Ordering::Release);
            self.wake(&slot).await;
        }
        Ok(slot)
    }

    /// Brings every game this node hosts but nobody watches here up to its log, one game at a time:
    /// the announcements it left unapplied, read from the store in one go per game.
    pub async fn catch_up_dormant(&self) {
        let now = process_ms();
        for slot in self.all() {
            if self.owns(&slot) {
                continue;
            }
            if !slot.built() && !slot.watched(now) {
                // Never built here and nobody watches it: its record (how far it went, whether it
                // ended) is all the lobby and the sweep need.
                self.refresh_record(&slot).await;
            } else if self.wake(&slot).await {
                self.metrics.dormant_caught_up.inc();
            }
        }
    }

    /// Reads how far game `slot` went and whether it ended from its record in the store, without
    /// building it.
    async fn refresh_record(&self, slot: &Arc<Slot>) {
        let store = Arc::clone(&self.store);
        let id = slot.id;
        if let Ok(Ok(record)) = tokio::task::spawn_blocking(move || store.game(id)).await {
            // Under the game's lock, and only while it is still unbuilt: a copy built meanwhile says
            // itself how far it went.
            match slot.live.try_lock() {
                Ok(live) if live.game.is_none() => {
                    slot.seq.fetch_max(record.seq, Ordering::AcqRel);
                }
                _ => return,
            }
            if record.finished && !slot.finished.load(Ordering::Acquire) {
                slot.finish();
                self.release_creator(slot);
            }
        }
    }

    /// Catches `slot` up with its log if announcements of it were left unapplied; answers whether it
    /// was. A catch-up that fails leaves the game marked, for the next request or sweep.
    async fn wake(&self, slot: &Arc<Slot>) -> bool {
        if slot.stopped().is_some() || !slot.dormant.swap(false, Ordering::AcqRel) {
            return false;
        }
        if self.catch_up(slot).await.is_err() {
            slot.dormant.store(true, Ordering::Release);
        }
        true
    }

    /// Hosts game `id` from the store (as a follower), unless it is hosted already.
    pub(super) async fn host_from_store(
        self: &Arc<Self>,
        id: GameId,
    ) -> Result<Arc<Slot>, StoreError> {
        self.host_stored(id, Games::load_game).await
    }

    /// Hosts game `id` from the store (as a follower) for the lobby, unless it is hosted already: its
    /// state is built when someone asks for the game here (see `load_lazily`).
    pub(super) async fn host_lazily(self: &Arc<Self>, id: GameId) -> Result<Arc<Slot>, StoreError> {
        self.host_stored(id, Games::load_lazily).await
    }

    /// Hosts the game `load` reads from the store, unless game `id` is hosted already.
    async fn host_stored(
        self: &Arc<Self>,
        id: GameId,
        load: fn(&Games, GameId) -> Result<Slot, StoreError>,
    ) -> Result<Arc<Slot>, StoreError> {
        let games = Arc::clone(self);
        let slot = tokio::task::spawn_blocking(move || load(&games, id))
            .await
            .map_err(|_| StoreError::WriterStopped)??;
        let mut slots = self.slots.write().unwrap_or_else(PoisonError::into_inner);
        let slot = slots.entry(id).or_insert_with(|| {
            self.hosted.fetch_add(1, Ordering::AcqRel);
            self.metrics.games.inc();
            Arc::new(slot)
        });
        Ok(Arc::clone(slot))
    }

    /// The seat whose token this is; with several nodes, a token this node does not know yet (a seat
    /// joined through another node) has the game's seats read again from the store.
    ///
    /// # Errors
    /// [`GameError::Forbidden`].
    pub async fn seat_of(&self, slot: &Arc<Slot>, token: &str) -> Result<u16, GameError> {
        if let Some(seat) = slot.seat_of(token) {
            return Ok(seat);
        }
        if self.node.is_some() {
            self.refresh_seats(slot).await;
            if let Some(seat) = slot.seat_of(token) {
                return Ok(seat);
            }
        }
        Err(GameError::Forbidden(slot.id.0))
    }

    pub(super) async fn refresh_seats(&self, slot: &Arc<Slot>) {
        let store = Arc::clone(&self.store);
        let id = slot.id;
        if let Ok(Ok(seats)) = tokio::task::spawn_blocking(move || store.seats(id)).await {
            *slot.seats.lock().unwrap_or_else(PoisonError::into_inner) = seats;
        }
    }

    /// [`act`](Self::act) with several nodes: applied here while this node holds the lease; otherwise
    /// passed on to the owner (its address read from the lease), or the game taken over when its lease
    /// has expired. Gives up after twice the lease's length with [`GameError::Unavailable`].
    pub(super) async fn act_in_cluster(
        self: &Arc<Self>,
        node: &Node,
        slot: &Arc<Slot>,
        submit: Submit,
        token: &str,
    ) -> Result<Acted, GameError> {
        let id = slot.id;
        let give_up = Instant::now() + node.cluster.node().lease * 2 + Duration::from_secs(1);
        let mut submit = submit;
        // A submission passed on gets a key if it has none, so it may be passed on again (or applied
        // here after a takeover) without being applied twice.
        let mut keyed_here = false;
        let mut unanswered = false;
        let mut failed: Option<Arc<str>> = None;
        loop {
            match slot.role() {
                Role::Sole => return self.act_here(slot, submit, None).await,
                Role::Owner(fence) => {
                    match self.act_here(slot, submit.clone(), Some(fence)).await {
                        Err(GameError::Moved(_)) => {}
                        answer => return answer,
                    }
                }
                Role::Follower(Some(addr)) => {
                    if submit.key.is_none() {
                        submit.key = Some(format!("~{}", new_token()?));
                        keyed_here = true;
                    }
                    match self.pass_on(node, &addr, slot, &submit, token).await {
                        Passed::Answer(Err(GameError::Stale { expected, current }))
                            if slot.seq() < current =>
                        {
                            // This node's copy is behind the owner's: brought up to it, so that the
                            // client's next look at this node is not stale again.
                            let _ = self.catch_up(slot).await;
                            return Err(GameError::Stale { expected, current });
                        }
                        Passed::Answer(mut answer) => {
                            if let Ok(acted) = &mut answer {
                                // Asked again only by this node: the client's first submission.
                                acted.first |= keyed_here;
                                self.metrics.forwarded.inc();
                                // What this client reads next from this node includes its action:
                                // from its notice when that comes soon, else from the store.
                                if !slot.wait_for(acted.seq, NOTICE_WAIT).await {
                                    let _ = self.catch_up(slot).await;
                                }
                            }
                            return answer;
                        }
                        Passed::Retry => {
                            unanswered = true;
                            failed = Some(addr);
                            slot.set_role(Role::Follower(None));
                            continue;
                        }
                    }
                }
                Role::Follower(None) => {
                    let cluster = Arc::clone(&node.cluster);
                    let lease = tokio::task::spawn_blocking(move || cluster.lease(id))
                        .await
                        .map_err(|_| GameError::Internal("the store panicked".into()))?;
                    match lease {
                        Ok(Some(lease)) if lease.live && lease.node != self.node_id() => {
                            let again = failed.as_deref() == Some(lease.addr.as_str());
                            if matches!(slot.role(), Role::Follower(_)) {
                                slot.set_role(Role::Follower(Some(Arc::from(lease.addr))));
                            }
                            if !again {
                                continue;
                            }
                            // The owner that did not answer still holds the lease: wait a little.
                        }
                        Ok(_) => {
                            // Expired, missing, or this node's own: take it (over).
                            let cluster = Arc::clone(&node.cluster);
                            match tokio::task::spawn_blocking(move || cluster.claim(id)).await {
                                Ok(Ok(Some(fence))) => self.take_over(slot, fence).await?,
                                Ok(Ok(None)) => {}
                                Ok(Err(error)) => {
                                    tracing::warn!(target: "coffer_server::games", game = %id, "cannot claim the game: {error}");
                                }
                                Err(_) => {
                                    return Err(GameError::Internal("the store panicked".into()));
                                }
                            }
                        }
                        Err(error) => {
                            tracing::debug!(target: "coffer_server::games", game = %id, "cannot read the lease: {error}")
                        }
                    }
                }
            }
            if Instant::now() > give_up {
                let applied = if !unanswered {
                    "nothing was applied"
                } else if keyed_here {
                    "it may have been applied: read the game before submitting it again"
                } else {
                    "submit it again with the same idempotency key to learn whether it was applied"
                };
                return Err(GameError::Unavailable(format!(
                    "the server node owning game {id} does not answer, and its lease has not expired \
                     yet: try again ({applied})"
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Passes a submission on to the node at `addr`, with the client's token.
    pub(super) async fn pass_on(
        &self,
        node: &Node,
        addr: &str,
        slot: &Slot,
        submit: &Submit,
        token: &str,
    ) -> Passed {
        let id = slot.id.0;
        let body = Forwarded {
            action: &submit.action,
            expected_seq: submit.expected_seq,
            key: submit.key.as_deref(),
        };
        // Asked with the actor's next legal actions, which this node's own answer may carry.
        let sent = node
            .http
            .post(format!("{addr}/api/games/{id}/actions?then=legal"))
            .bearer_auth(token)
            .header(FORWARDED_HEADER, self.node_id())
            .json(&body)
            .send()
            .await;
        let response = match sent {
            Ok(response) => response,
            // Not reached, cut, or slower than a lease (a paused or dying node): the submission is
            // keyed, so asking again, of whoever owns the game then, cannot apply it twice.
            Err(error) => {
                tracing::debug!(target: "coffer_server::games", game = id, "passing an action on to {addr} failed: {error}");
                return Passed::Retry;
            }
        };
        let status = response.status();
        let replayed = response
            .headers()
            .get(REPLAYED_HEADER)
            .is_some_and(|v| v.as_bytes() == b"true");
        let retry_after = response
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .map(Duration::from_secs);
        let Ok(text) = response.text().await else {
            return Passed::Retry;
        };
        if status.is_success() {
            #[derive(serde::Deserialize)]
            struct Seq {
                seq: u64,
            }
            return Passed::Answer(match serde_json::from_str::<Seq>(&text) {
                Ok(Seq { seq }) => {
                    let (answer, legal) = Legal::split_from(text);
                    Ok(Acted {
                        seq,
                        answer: Arc::from(answer),
                        first: !replayed,
                        legal,
                    })
                }
                Err(_) => Err(GameError::Internal(format!(
                    "the server node owning game {id} answered an action without its sequence number"
                ))),
            });
        }
        match relayed(id, submit.expected_seq, status, retry_after, &text) {
            GameError::Moved(_) | GameError::ShuttingDown => Passed::Retry,
            error => Passed::Answer(Err(error)),
        }
    }

    /// Whether this node owns game `slot` (or is the only node).
    pub fn owns(&self, slot: &Slot) -> bool {
        matches!(slot.role(), Role::Owner(_) | Role::Sole)
    }

    /// Makes this node the owner of `slot` (its lease taken with fencing number `fence`), once its
    /// state has caught up with the store's log.
    ///
    /// # Errors
    /// When the log cannot be read or does not replay.
    pub async fn take_over(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        fence: u64,
    ) -> Result<(), GameError> {
        if slot.role() == Role::Owner(fence) {
            return Ok(());
        }
        self.catch_up(slot).await?;
        let was = std::mem::replace(
            &mut *slot.role.lock().unwrap_or_else(PoisonError::into_inner),
            Role::Owner(fence),
        );
        if was != Role::Owner(fence) {
            self.metrics.takeovers.inc();
            tracing::info!(target: "coffer_server::games", game = %slot.id, fence, "took the game over");
            self.resume(slot);
        }
        Ok(())
    }

    /// This node no longer holds the lease of `slot`: it follows the game from now on.
    pub(super) fn lose_lease(&self, slot: &Slot) {
        let mut role = slot.role.lock().unwrap_or_else(PoisonError::into_inner);
        if let Role::Owner(fence) = *role {
            *role = Role::Follower(None);
            self.metrics.leases_lost.inc();
            tracing::info!(target: "coffer_server::games", game = %slot.id, fence, "lost the game's lease: following it");
        }
    }

    /// Brings game `slot` up to its log in the store: applies each action committed since the last one
    /// this node has, checks its stored hash, and shows it to this node's viewers as the owner would.
    ///
    /// # Errors
    /// [`GameError::Unavailable`] when the store cannot be read; [`GameError::Stopped`] when the log does
    /// not replay (the game is stopped).
    ///
    /// Every caller runs on a task of its own (an action's, a follow task, a sweep), so a client going
    /// away cannot cut it between applying actions and showing them.
    pub async fn catch_up(&self, slot: &Arc<Slot>) -> Result<(), GameError> {
        self.catch_up_from(slot, false).await
    }

    /// [`catch_up`](Self::catch_up), applying first the actions notices carried that continue this copy;
    /// with `carried_suffice`, those alone when there are any (a follow task, which comes back while
    /// the game's `heard` is ahead), else the store's actions after them too.
    async fn catch_up_from(
        &self,
        slot: &Arc<Slot>,
        carried_suffice: bool,
    ) -> Result<(), GameError> {
        let store = Arc::clone(&self.store);
        let task_slot = Arc::clone(slot);
        type Shown = Vec<(u64, Vec<(Audience, Arc<str>)>)>;
        let ((shown, finished, carried), guard) = self
            .call(slot, move |live| -> Result<(Shown, bool, usize), CallError> {
                let slot = task_slot;
                let Some(ruleset) = slot.ruleset.clone() else {
                    return Err(CallError::Stop(
                        "the ruleset of this game is not loaded".into(),
                    ));
                };
                let description = ruleset.description();
                // What the notices carried that continues this copy, then (or instead) the store.
                let mut actions = slot.carried_after(live.seq).unwrap_or_default();
                let carried = actions.len();
                if actions.is_empty() || !carried_suffice {
                    let after = actions.last().map_or(live.seq, |a| a.seq);
                    actions.extend(
                        store
                            .actions_after(slot.id, after)
                            .map_err(|e| CallError::Refused(unreadable(slot.id, &e)))?,
                    );
                }
                let game = live
                    .game
                    .as_deref_mut()
                    .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                let listening = slot.listening();
                let mut shown = Vec::with_capacity(actions.len());
                for action in actions {
                    let seat = action.seat as u16;
                    if action.seq != live.seq + 1
                        || game.apply_json(Owner(seat), action.action.get()).is_err()
                        || game.state_hash().0 != action.hash.0
                    {
                        return Err(CallError::Stop(format!(
                            "game {} is stopped: its log does not replay at action {} (a different \
                             ruleset build on another node?)",
                            slot.id, action.seq
                        )));
                    }
                    live.seq = action.seq;
                    live.moves
                        .note(seat, action.key.as_deref(), is_undo(action.action.get()));
                    let pushes = listening
                        .iter()
                        .map(|&audience| {
                            let told = Told::of(
                                action.seq,
                                seat,
                                action.key.as_deref(),
                                action.action.get(),
                            );
                            let (_, with_view) = action_message(
                                game,
                                description,
                                told,
                                audience,
                                Forms::Viewed,
                            );
                            (audience, Arc::<str>::from(with_view.unwrap_or_default()))
                        })
                        .collect();
                    shown.push((action.seq, pushes));
                }
                let finished = matches!(game.outcome(), Outcome::Finished { .. });
                plugin_failed(game).map_err(CallError::Stop)?;
                Ok((shown, finished, carried))
            })
            .await?;
        if self.node.is_some() {
            self.metrics.followed_from_notices.inc_by(carried as u64);
            self.metrics
                .followed_from_store
                .inc_by(shown.len().saturating_sub(carried) as u64);
        }
        slot.seq.store(guard.seq, Ordering::Release);
        slot.caught_up.notify_waiters();
        for (seq, pushes) in shown {
            slot.publish(seq, pushes);
        }
        if finished {
            slot.finish();
            self.release_creator(slot);
        }
        drop(guard);
        Ok(())
    }

    /// Another node announced action `seq` of game `id` (`carried` when the notice held it): a task
    /// brings this node's copy up to it, one task per game at a time however many announcements arrive.
    pub(super) fn heard(self: &Arc<Self>, id: GameId, seq: u64, carried: Option<Box<Action>>) {
        let slot = match self.slot(id.0) {
            Ok(slot) => slot,
            Err(_) => {
                // Hosted from the store, then followed up to `seq`: the copy may have been read just
                // before that action's commit.
                let games = Arc::clone(self);
                tokio::spawn(async move {
                    match games.host_lazily(id).await {
                        // Hosted from the store, which holds the carried action too.
                        Ok(_) => games.heard(id, seq, None),
                        Err(error) => {
                            tracing::warn!(target: "coffer_server::games", game = %id, "cannot follow the game: {error}")
                        }
                    }
                });
                return;
            }
        };
        if self.owns(&slot) || slot.stopped().is_some() {
            return;
        }
        slot.heard.fetch_max(seq, Ordering::AcqRel);
        if !slot.watched(process_ms()) {
            // Nobody watches it here: applied later, in one catch-up (a request, or the sweep).
            slot.dormant.store(true, Ordering::Release);
            self.metrics.notices_left.inc();
            return;
        }
        if let Some(action) = carried {
            slot.carry(*action);
        }
        if slot.following.swap(true, Ordering::AcqRel) {
            return;
        }
        let games = Arc::clone(self);
        tokio::spawn(async move {
            let mut failures = 0;
            loop {
                if slot.seq() < slot.heard.load(Ordering::Acquire) && !games.owns(&slot) {
                    match games.catch_up_from(&slot, true).await {
                        Ok(()) => failures = 0,
                        // A stopped game is followed no more.
                        Err(GameError::Stopped(_)) => failures = 20,
                        Err(error) => {
                            failures += 1;
                            if failures < 20 {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                continue;
                            }
                            tracing::warn!(target: "coffer_server::games", game = %slot.id, "cannot follow the game: {error}");
                        }
                    }
                }
                slot.following.store(false, Ordering::Release);
                if slot.seq() >= slot.heard.load(Ordering::Acquire)
                    || games.owns(&slot)
                    || failures >= 20
                    || slot.following.swap(true, Ordering::AcqRel)
                {
                    break;
                }
            }
        });
    }

    /// Acts on what the store's channel said.
    pub fn on_notice(self: &Arc<Self>, notice: Notice) {
        match notice {
            Notice::Action { game, seq, carried } => self.heard(game, seq, carried),
            Notice::Game(id) => {
                let games = Arc::clone(self);
                tokio::spawn(async move {
                    match games.slot(id.0) {
                        Ok(slot) => games.refresh_seats(&slot).await,
                        Err(_) => {
                            if let Err(error) = games.host_lazily(id).await {
                                tracing::warn!(target: "coffer_server::games", game = %id, "cannot follow the game: {error}");
                            }
                        }
                    }
                });
            }
            Notice::Resync => {
                let games = Arc::clone(self);
                tokio::spawn(async move { games.resync().await });
            }
        }
    }

    /// After announcements may have been missed: every game this node follows is brought up to the
    /// store's log, and games it does not host yet are hosted.
    pub async fn resync(self: &Arc<Self>) {
        let store = Arc::clone(&self.store);
        if let Ok(Ok(ids)) = tokio::task::spawn_blocking(move || store.unfinished_games()).await {
            for id in ids {
                if self.slot(id.0).is_err()
                    && let Err(error) = self.host_lazily(id).await
                {
                    tracing::warn!(target: "coffer_server::games", game = %id, "cannot follow the game: {error}");
                }
            }
        }
        let now = process_ms();
        for slot in self.all() {
            if !self.owns(&slot) && slot.stopped().is_none() {
                if slot.watched(now) {
                    let _ = self.catch_up(&slot).await;
                } else {
                    slot.dormant.store(true, Ordering::Release);
                }
            }
        }
    }

    pub(super) fn all(&self) -> Vec<Arc<Slot>> {
        self.slots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// After a renewal: `held` are the games whose leases this node still holds, with their fencing
    /// numbers; every other game it believed it owned was taken over.
    pub fn renewed(self: &Arc<Self>, held: &HashMap<GameId, u64>) {
        for slot in self.all() {
            if let Role::Owner(fence) = slot.role()
                && held.get(&slot.id) != Some(&fence)
            {
                self.lose_lease(&slot);
                self.follow_now(slot);
            }
        }
    }

    /// No renewal succeeded for a whole lease: every lease of this node may have been taken.
    pub fn lost_all(self: &Arc<Self>) {
        for slot in self.all() {
            if self.owns(&slot) {
                self.lose_lease(&slot);
                self.follow_now(slot);
            }
        }
    }

    /// Brings a game this node just stopped owning up to the new owner's log, without waiting for its
    /// next announcement.
    pub(super) fn follow_now(self: &Arc<Self>, slot: Arc<Slot>) {
        let games = Arc::clone(self);
        tokio::spawn(async move {
            let _ = games.catch_up(&slot).await;
        });
    }

    /// Takes over the games `taken` (their leases just claimed by this node, with their fencing
    /// numbers), hosting those it did not host yet.
    pub async fn took(self: &Arc<Self>, taken: Vec<(GameId, u64)>) {
        for (id, fence) in taken {
            let slot = match self.slot(id.0) {
                Ok(slot) => slot,
                Err(_) => match self.host_from_store(id).await {
                    Ok(slot) => slot,
                    Err(error) => {
                        tracing::warn!(target: "coffer_server::games", game = %id, "cannot take the game over: {error}");
                        continue;
                    }
                },
            };
            if let Err(error) = self.take_over(&slot, fence).await {
                tracing::warn!(target: "coffer_server::games", game = %id, "cannot take the game over: {error}");
            }
        }
    }
}

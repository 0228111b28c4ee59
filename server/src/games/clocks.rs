//! Clocks (time controls): a limit per decision, or a bank per seat with an increment per action. The
//! server runs the clock of every seat the game lists as acting (bots excepted: they act at once); one
//! task holds every game's deadlines in a timer wheel (`tokio_util`'s `DelayQueue`), not a task per
//! game. When a clock runs out, the seat's move is played by the random bot through the path any
//! action takes, keyed `~timeout@<seq>` in the log: the store refuses a second one for the same
//! decision, and replaying the log needs no clock.

use std::sync::Weak;

use futures_util::StreamExt as _;
use tokio::sync::mpsc;
use tokio_util::time::DelayQueue;

use coffer_host::bots::Bot;

use super::*;
use crate::store::Clock;

/// The shortest clock a game may have, in milliseconds: shorter than a few of the server's own round
/// trips is no time control.
pub const MIN_CLOCK_MS: u64 = 50;

/// The longest decision or bank a game may have: 7 days, in milliseconds.
pub const MAX_CLOCK_MS: u64 = 7 * 24 * 3600 * 1000;

/// A creation's clock, checked: exactly one kind, each time within bounds.
pub(super) fn checked_clock(clock: Option<Clock>) -> Result<Option<Clock>, GameError> {
    let Some(clock) = clock else {
        return Ok(None);
    };
    let within = |name: &str, ms: u64| {
        if (MIN_CLOCK_MS..=MAX_CLOCK_MS).contains(&ms) {
            Ok(())
        } else {
            Err(GameError::Invalid(format!(
                "clock: {name} is {ms} ms: give {MIN_CLOCK_MS} ms to {MAX_CLOCK_MS} ms (7 days)"
            )))
        }
    };
    match (clock.per_action_ms, clock.bank_ms) {
        (Some(per_action), None) => {
            within("per_action_ms", per_action)?;
            if clock.increment_ms != 0 {
                return Err(GameError::Invalid(
                    "clock: increment_ms goes with bank_ms, not with per_action_ms".into(),
                ));
            }
        }
        (None, Some(bank)) => {
            within("bank_ms", bank)?;
            if clock.increment_ms > MAX_CLOCK_MS {
                return Err(GameError::Invalid(format!(
                    "clock: increment_ms is {} ms: give at most {MAX_CLOCK_MS} ms",
                    clock.increment_ms
                )));
            }
        }
        _ => {
            return Err(GameError::Invalid(
                "clock: give either per_action_ms (a limit per decision) or bank_ms (a bank per \
                 seat, with increment_ms after each action)"
                    .into(),
            ));
        }
    }
    if let Some(grace) = clock.disconnect_grace_ms {
        within("disconnect_grace_ms", grace)?;
    }
    if clock.abandon_after.is_some_and(|n| n > 1_000) {
        return Err(GameError::Invalid(
            "clock: abandon_after is at most 1000 timeouts in a row (0: never)".into(),
        ));
    }
    Ok(Some(clock))
}

/// The clocks of one game now.
#[derive(Debug)]
pub(super) struct ClockState {
    /// The sequence number the running clocks are for.
    seq: u64,
    /// Each seat's bank at `since`, in milliseconds (bank clocks only).
    banks: Vec<u64>,
    /// The seats whose clocks run since `since`, each with its deadline.
    running: Vec<(u16, Instant)>,
    since: Instant,
    /// The last committed action's sequence number, seat, the seats to act after it, and how it was
    /// decided, until the clocks restart for it.
    pub(super) next: Option<(u64, u16, Vec<u16>, Decided)>,
    /// Each seat's time left when it last played (per-action clocks): what it has again when it takes
    /// that action back, so that taking back and playing again never gains time.
    left: Vec<u64>,
    /// Each seat's timeouts in a row.
    missed: Vec<u32>,
    /// The decision whose timeout is being played: another seat's clock that ran out at the same
    /// decision waits for the clocks to restart after that move.
    firing: Option<u64>,
}

impl ClockState {
    pub(super) fn new(clock: Option<Clock>, players: u32) -> Self {
        ClockState {
            seq: 0,
            banks: vec![clock.and_then(|c| c.bank_ms).unwrap_or(0); players as usize],
            running: Vec::new(),
            since: Instant::now(),
            next: None,
            missed: vec![0; players as usize],
            firing: None,
            left: vec![0; players as usize],
        }
    }
}

/// How a committed action came.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Decided {
    /// Chosen at the table (or by the seat's bot).
    Played,
    /// Played by the random bot when the seat's clock ran out.
    TimedOut,
    /// The seat took its last action back: its clock goes on from where that action stopped it, and a
    /// bank gives back the increment that action earned.
    TookBack,
}

/// What the timer task is told: game `game`'s clocks at `seq` run out at these deadlines (none: no
/// clock runs).
pub(super) struct Deadlines {
    game: GameId,
    seq: u64,
    deadlines: Vec<(u16, Instant)>,
}

/// The timer task's inbox.
pub(super) type Timers = mpsc::UnboundedSender<Deadlines>;

/// Holds every deadline of every game in one wheel; fires each when it passes.
async fn run_timers(games: Weak<Games>, mut inbox: mpsc::UnboundedReceiver<Deadlines>) {
    let mut wheel: DelayQueue<(GameId, u64, u16)> = DelayQueue::new();
    let mut keys: HashMap<GameId, Vec<tokio_util::time::delay_queue::Key>> = HashMap::new();
    loop {
        tokio::select! {
            told = inbox.recv() => {
                let Some(Deadlines { game, seq, deadlines }) = told else { return };
                for key in keys.remove(&game).unwrap_or_default() {
                    wheel.try_remove(&key);
                }
                let set: Vec<_> = deadlines
                    .iter()
                    .map(|&(seat, at)| wheel.insert_at((game, seq, seat), at.into()))
                    .collect();
                if !set.is_empty() {
                    keys.insert(game, set);
                }
            }
            Some(expired) = wheel.next(), if !wheel.is_empty() => {
                let fired = Instant::now();
                let key = expired.key();
                let deadline = expired.deadline().into_std();
                let (game, seq, seat) = expired.into_inner();
                if let Some(list) = keys.get_mut(&game) {
                    list.retain(|k| *k != key);
                    if list.is_empty() {
                        keys.remove(&game);
                    }
                }
                let Some(games) = games.upgrade() else { return };
                games.timed_out(game, seq, seat, deadline, fired);
            }
        }
    }
}

/// The move played for `seat` whose clock ran out at `seq`: the ruleset's default move (`"~default"`:
/// pass, end the turn) where it has one; else with the `forfeit` policy the seat forfeits
/// (`"~forfeit"`) where the ruleset can take it out; else the random bot's move. Each is tried on a copy
/// of the game first, so that what is submitted applies.
fn timeout_move(
    game: &mut dyn DynGame,
    seat: Owner,
    forfeit: bool,
    seed: u64,
    seq: u64,
) -> Option<String> {
    let applies =
        |game: &dyn DynGame, action: &str| game.clone_game().apply_json(seat, action).is_ok();
    if applies(game, coffer_core::DEFAULT) {
        return Some(coffer_core::DEFAULT.to_owned());
    }
    if forfeit && applies(game, coffer_core::FORFEIT) {
        return Some(coffer_core::FORFEIT.to_owned());
    }
    choose_for(game, seat, Bot::Random, seed, seq)
}

/// Milliseconds from `from` to `to`, 0 if `to` is earlier.
fn ms_between(from: Instant, to: Instant) -> u64 {
    u64::try_from(to.saturating_duration_since(from).as_millis()).unwrap_or(u64::MAX)
}

impl Slot {
    /// The game's clocks as a client reads them: the time control, and each seat's time left and
    /// whether it runs, at `at_unix_ms`.
    pub(super) fn clock_json(&self) -> Option<Value> {
        let clock = self.setup.clock?;
        let state = self
            .clock_state
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        let seats: Vec<Value> = (0..self.setup.players as u16)
            .map(|seat| {
                let running = state.running.iter().find(|(s, _)| *s == seat);
                let remaining = match (running, clock.bank_ms) {
                    (Some(&(_, deadline)), _) => ms_between(now, deadline),
                    (None, Some(_)) => state.banks[usize::from(seat)],
                    (None, None) => clock.per_action_ms.unwrap_or(0),
                };
                json!({"seat": seat, "remaining_ms": remaining, "running": running.is_some()})
            })
            .collect();
        Some(json!({"control": clock, "seats": seats, "at_unix_ms": now_unix_ms()}))
    }
}

impl Games {
    /// A WebSocket of `seat` opened.
    pub(crate) fn seat_connected(&self, slot: &Slot, seat: u16) {
        let mut connections = slot
            .connections
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((open, generation)) = connections.get_mut(usize::from(seat)) {
            *open += 1;
            *generation += 1;
        }
    }

    /// A WebSocket of `seat` closed: with the game's `disconnect_grace_ms`, a seat left with none open
    /// that long is abandoned to the random bot (one task per disconnection, none when the game has no
    /// grace).
    pub(crate) fn seat_disconnected(self: &Arc<Self>, slot: &Arc<Slot>, seat: u16) {
        let left = {
            let mut connections = slot
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let Some((open, generation)) = connections.get_mut(usize::from(seat)) else {
                return;
            };
            *open = open.saturating_sub(1);
            *generation += 1;
            (*open == 0).then_some(*generation)
        };
        let (Some(generation), Some(grace)) =
            (left, slot.setup.clock.and_then(|c| c.disconnect_grace_ms))
        else {
            return;
        };
        let games = Arc::clone(self);
        let slot = Arc::clone(slot);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(grace)).await;
            let still_gone = slot
                .connections
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .get(usize::from(seat))
                .is_some_and(|&(open, now)| open == 0 && now == generation);
            if still_gone
                && !slot.finished.load(Ordering::Acquire)
                && slot.stopped().is_none()
                && games.owns(&slot)
            {
                let why = format!("it was disconnected for {:.1} s", grace as f64 / 1e3);
                games.leave(&slot, seat, &why).await;
            }
        });
    }

    /// The timer task, started on first use.
    fn timers(self: &Arc<Self>) -> &Timers {
        self.timers.get_or_init(|| {
            let (timers, inbox) = mpsc::unbounded_channel();
            tokio::spawn(run_timers(Arc::downgrade(self), inbox));
            timers
        })
    }

    /// Starts the clocks of the decision at `seq`: the seats in `to_act` (bots excepted) run; with a
    /// bank, the time since the last decision is charged to the seats whose clocks ran, and `actor`,
    /// who just acted (by a timeout when its flag says so), gains the increment. A seat whose
    /// timeouts in a row reach the clock's `abandon_after` is handed to the random bot. `spent_ms` of the
    /// decision went by already (a game resumed after a restart or a takeover): it comes off each
    /// running clock, and a clock it exhausts runs out at once. Tells every audience the clocks.
    pub(super) fn restart_clocks(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        seq: u64,
        actor: Option<(u16, Decided)>,
        to_act: &[u16],
        spent_ms: u64,
    ) {
        let Some(clock) = slot.setup.clock else {
            return;
        };
        let abandon_after = clock.abandon_after.unwrap_or(Clock::DEFAULT_ABANDON_AFTER);
        if let Some((seat, decided)) = actor {
            let abandoned = {
                let mut state = slot
                    .clock_state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                match state.missed.get_mut(usize::from(seat)) {
                    Some(missed) if decided == Decided::TimedOut => {
                        *missed += 1;
                        abandon_after > 0 && *missed >= abandon_after
                    }
                    Some(missed) => {
                        *missed = 0;
                        false
                    }
                    None => false,
                }
            };
            if abandoned {
                let games = Arc::clone(self);
                let slot = Arc::clone(slot);
                tokio::spawn(async move {
                    let why = format!("its clock ran out {abandon_after} times in a row");
                    games.leave(&slot, seat, &why).await;
                });
            }
        }
        let now = Instant::now();
        let deadlines = {
            let mut state = slot
                .clock_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if seq < state.seq {
                return;
            }
            let mut took_back = None;
            match actor {
                Some((seat, Decided::Played)) => {
                    // What the seat had left as it played: a per-action clock's own deadline.
                    let left = state
                        .running
                        .iter()
                        .find(|(s, _)| *s == seat)
                        .map(|&(_, deadline)| ms_between(now, deadline));
                    if let (Some(left), Some(kept)) = (left, state.left.get_mut(usize::from(seat)))
                    {
                        *kept = left;
                    }
                }
                Some((seat, Decided::TookBack)) => took_back = Some(seat),
                _ => {}
            }
            if clock.bank_ms.is_some() {
                let spent = ms_between(state.since, now);
                let running: Vec<u16> = state.running.iter().map(|(s, _)| *s).collect();
                for seat in running {
                    let bank = &mut state.banks[usize::from(seat)];
                    *bank = bank.saturating_sub(spent);
                }
                if let Some((actor, decided)) = actor
                    && let Some(bank) = state.banks.get_mut(usize::from(actor))
                {
                    // A bank holds at most MAX_CLOCK_MS: the timer wheel's deadlines stay near.
                    *bank = match decided {
                        Decided::TookBack => bank.saturating_sub(clock.increment_ms),
                        _ => bank.saturating_add(clock.increment_ms).min(MAX_CLOCK_MS),
                    };
                }
            }
            let finished = slot.finished.load(Ordering::Acquire);
            let running: Vec<(u16, Instant)> = to_act
                .iter()
                .filter(|&&seat| !finished && !slot.is_bot(u32::from(seat)))
                .map(|&seat| {
                    let limit = match clock.per_action_ms {
                        Some(_) if took_back == Some(seat) => state.left[usize::from(seat)],
                        Some(per_action) => per_action,
                        None => state.banks[usize::from(seat)],
                    }
                    .saturating_sub(spent_ms);
                    (seat, now + Duration::from_millis(limit.min(MAX_CLOCK_MS)))
                })
                .collect();
            state.seq = seq;
            state.since = now;
            state.running.clone_from(&running);
            running
        };
        let _ = self.timers().send(Deadlines {
            game: slot.id,
            seq,
            deadlines,
        });
        if let Some(clocks) = slot.clock_json() {
            let message: Arc<str> = json!({"type": "clock", "seq": seq, "clock": clocks})
                .to_string()
                .into();
            for feed in slot.feeds().iter().flatten() {
                let _ = feed.send((u64::MAX, Arc::clone(&message)));
            }
        }
    }

    /// Starts the clocks of game `slot` as it stands (after a restart or a takeover): the decision
    /// started when its last action was applied (the store keeps each action's time; the game's
    /// creation for its first), so the time since comes off the running clocks and an overdue timeout
    /// fires at once. Banks are what they held in this process (their starting time after a restart),
    /// less that time. Without `overdue` the decision starts now (a timeout that played no move).
    pub(super) fn resume_clocks(self: &Arc<Self>, slot: &Arc<Slot>, overdue: bool) {
        if slot.setup.clock.is_none() || slot.finished.load(Ordering::Acquire) {
            return;
        }
        let games = Arc::clone(self);
        let slot = Arc::clone(slot);
        tokio::spawn(async move {
            let to_act = games
                .call(&slot, |live| {
                    let seq = live.seq;
                    let game = live
                        .game
                        .as_deref_mut()
                        .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                    Ok((seq, seats_to_act(game)))
                })
                .await;
            if let Ok(((seq, to_act), guard)) = to_act {
                drop(guard);
                let spent = match overdue {
                    true => games.decision_started(&slot, seq).await,
                    false => None,
                }
                .map_or(0, |started| now_unix_ms().saturating_sub(started));
                games.restart_clocks(&slot, seq, None, &to_act, spent);
            }
        });
    }

    /// When the decision at `seq` of game `slot` started, in milliseconds since the epoch: when action
    /// `seq` was applied, or the game created for the first. `None` when the store cannot say (an
    /// action stored before it kept times, or a read that failed).
    async fn decision_started(&self, slot: &Arc<Slot>, seq: u64) -> Option<u64> {
        if seq == 0 {
            return Some(slot.created_unix_ms);
        }
        let store = Arc::clone(&self.store);
        let id = slot.id;
        let read = tokio::task::spawn_blocking(move || store.actions_after(id, seq - 1));
        match read.await {
            Ok(Ok(actions)) => actions
                .first()
                .filter(|a| a.seq == seq && a.at_unix_ms > 0)
                .map(|a| a.at_unix_ms),
            _ => None,
        }
    }

    /// A clock ran out: if the decision is still open, the seat's move is played by the random bot,
    /// keyed so that the log records it as the timeout's and the store refuses a second one.
    fn timed_out(
        self: &Arc<Self>,
        id: GameId,
        seq: u64,
        seat: u16,
        deadline: Instant,
        fired: Instant,
    ) {
        let Ok(slot) = self.slot(id.0) else {
            return;
        };
        if !self.owns(&slot) || slot.finished.load(Ordering::Acquire) || slot.stopped().is_some() {
            return;
        }
        {
            let mut state = slot
                .clock_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            if state.seq != seq
                || state.firing == Some(seq)
                || !state.running.iter().any(|(s, _)| *s == seat)
            {
                return;
            }
            state.firing = Some(seq);
        }
        let now_ms = now_unix_ms();
        let late_ms = ms_between(deadline, fired);
        self.metrics.timeouts.inc();
        self.metrics
            .timeout_late_seconds
            .observe(fired.saturating_duration_since(deadline).as_secs_f64());
        tracing::info!(target: "coffer_server::games", game = %id, seat, seq, late_ms,
            "a seat's clock ran out: the random bot plays its move");
        let message: Arc<str> = json!({
            "type": "timeout", "seq": seq, "seat": seat,
            "deadline_unix_ms": now_ms.saturating_sub(late_ms),
            "fired_unix_ms": now_ms,
        })
        .to_string()
        .into();
        for feed in slot.feeds().iter().flatten() {
            let _ = feed.send((u64::MAX, Arc::clone(&message)));
        }
        let games = Arc::clone(self);
        let forfeit = slot.setup.clock.is_some_and(|c| c.forfeit);
        tokio::spawn(async move {
            let seed = slot.setup.seed;
            let chosen = games
                .call(&slot, move |live| {
                    if live.seq != seq {
                        return Ok(None);
                    }
                    let game = live
                        .game
                        .as_deref_mut()
                        .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                    let chosen = timeout_move(game, Owner(seat), forfeit, seed, seq);
                    plugin_failed(game).map_err(CallError::Stop)?;
                    Ok(chosen)
                })
                .await;
            let played = match chosen {
                Ok((Some(action), guard)) => {
                    drop(guard);
                    games
                        .submit_for(&slot, Owner(seat), action, seq, Chooser::Timeout)
                        .await
                        .is_some_and(|result| result.is_ok())
                }
                _ => false,
            };
            // No move came of it (nothing legal, another seat acted first, a failure): unless the
            // clocks moved on meanwhile, they restart for the decision as it stands, so no seat's clock
            // is left without a deadline.
            let unchanged = {
                let mut state = slot
                    .clock_state
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let unchanged = state.seq == seq;
                if unchanged {
                    state.firing = None;
                }
                unchanged
            };
            if !played && unchanged {
                tracing::warn!(target: "coffer_server::games", game = %slot.id, seat, seq,
                    "a timeout played no move; the clocks restart for the decision");
                games.resume_clocks(&slot, false);
            }
        });
    }
}

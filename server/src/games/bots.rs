//! The server's bots: seats the server plays itself. A bot's move is chosen on the game's thread (under
//! the plugin deadline, like any call into the ruleset) and then submitted as that seat's action through
//! the path a client's takes: checked against the sequence number it was chosen at, committed, logged,
//! and shown to every audience as they may see it. Replaying the log needs no bot: the moves are in it.

use coffer_core::GameRng;
use coffer_host::bots::{Bot, choose};

use super::*;

/// Most actions of one playout of a search bot: bounded by the server, not by anyone's request.
const PLAYOUT_ACTIONS: u64 = 5_000;

/// How many times in a row a bot's move may find the game moved on (another seat acted first) before
/// the bots of that game wait for the next action to wake them.
const STALE_RETRIES: u32 = 16;

/// The bots of a game: one entry per seat, `None` for a seat people play.
pub(super) type Bots = Vec<Option<Bot>>;

/// The bot of each seat of a creation, checked: each seat exists and is not also left open, each name
/// is a bot's.
pub(super) fn checked_bots(
    bots: &BTreeMap<u32, String>,
    players: u16,
    open_seats: &[u32],
) -> Result<Bots, GameError> {
    let mut out = vec![None; usize::from(players)];
    for (&seat, name) in bots {
        if seat >= u32::from(players) {
            return Err(GameError::Invalid(format!(
                "bot seat {seat} does not exist: a game of {players} players has seats 0 to {}",
                players.saturating_sub(1)
            )));
        }
        if open_seats.binary_search(&seat).is_ok() {
            return Err(GameError::Invalid(format!(
                "seat {seat} cannot be both left open and played by a bot"
            )));
        }
        let bot = Bot::named(name, Bot::DEFAULT_PLAYOUTS)
            .map_err(|e| GameError::Invalid(format!("bot of seat {seat}: {e}")))?;
        out[seat as usize] = Some(bot);
    }
    Ok(out)
}

/// Each bot seat with its bot's name: the lobby's and the store's form of `bots`.
pub(super) fn bot_names_of(bots: &Bots) -> BTreeMap<u32, String> {
    bots.iter()
        .enumerate()
        .filter_map(|(seat, bot)| bot.map(|b| (seat as u32, b.name().to_owned())))
        .collect()
}

/// The seats a game lists as acting now.
pub(super) fn seats_to_act(game: &mut dyn DynGame) -> Vec<u16> {
    game.to_act().iter().map(|o| o.0).collect()
}

/// The bots of a stored game. A name this server does not know (written by a newer one) leaves the seat
/// to nobody: the game waits there, and says so in the log.
pub(super) fn stored_bots(id: GameId, bots: &BTreeMap<u32, String>, players: u32) -> Bots {
    let mut out = vec![None; players as usize];
    for (&seat, name) in bots {
        match (
            Bot::named(name, Bot::DEFAULT_PLAYOUTS),
            out.get_mut(seat as usize),
        ) {
            (Ok(bot), Some(entry)) => *entry = Some(bot),
            _ => tracing::warn!(target: "coffer_server::games", game = %id, seat,
                "the stored bot of this seat is not one this server plays; nobody plays the seat"),
        }
    }
    out
}

/// The generator a bot of `seat` draws from at `seq`: from the game's seed, so the same game gives the
/// same moves (the log holds them anyway).
fn bot_rng(seed: u64, seq: u64, seat: Owner) -> GameRng {
    GameRng::new(
        seed ^ seq.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (u64::from(seat.0) + 1).rotate_left(48),
    )
}

impl Slot {
    /// Whether the server plays any seat of this game.
    pub(super) fn has_bots(&self) -> bool {
        self.bots().iter().any(Option::is_some)
    }

    /// The bot of each seat now.
    pub(super) fn bots(&self) -> std::sync::RwLockReadGuard<'_, Bots> {
        self.bots.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Whether the server's bot plays `seat`.
    pub(super) fn is_bot(&self, seat: u32) -> bool {
        self.bots().get(seat as usize).is_some_and(Option::is_some)
    }

    /// Each bot seat with its bot's name, as the lobby lists them.
    pub(super) fn bot_names(&self) -> BTreeMap<u32, String> {
        bot_names_of(&self.bots())
    }
}

impl Games {
    /// Lets the bots of game `slot` play while one of them is to act, on a task of their own. One task
    /// per game at most: a wake while it runs makes it look once more before it ends.
    pub(super) fn wake_bots(self: &Arc<Self>, slot: &Arc<Slot>) {
        if !slot.has_bots() {
            return;
        }
        slot.bots_wanted.store(true, Ordering::Release);
        if slot.bots_running.swap(true, Ordering::AcqRel) {
            return;
        }
        let games = Arc::clone(self);
        let slot = Arc::clone(slot);
        tokio::spawn(async move {
            loop {
                slot.bots_wanted.store(false, Ordering::Release);
                games.play_bots(&slot).await;
                slot.bots_running.store(false, Ordering::Release);
                if !slot.bots_wanted.load(Ordering::Acquire)
                    || slot.bots_running.swap(true, Ordering::AcqRel)
                {
                    break;
                }
            }
        });
    }

    /// Resumes the bots and clocks of every hosted game (after recovering games from the store).
    pub fn resume_all(self: &Arc<Self>) {
        let slots: Vec<Arc<Slot>> = self
            .slots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .filter(|s| s.has_bots() || s.setup.clock.is_some())
            .cloned()
            .collect();
        for slot in &slots {
            self.resume(slot);
        }
    }

    /// Hands `seat` of game `slot` to the random bot for the rest of the game (`why`: it resigned, or
    /// let its clock run out too often): kept in the store, told to every audience, and the bot plays
    /// at once if the seat is to act. Answers whether the seat was a person's until now.
    pub(super) fn abandon(self: &Arc<Self>, slot: &Arc<Slot>, seat: u16, why: &str) -> bool {
        let names = {
            let mut bots = slot.bots.write().unwrap_or_else(PoisonError::into_inner);
            match bots.get_mut(usize::from(seat)) {
                Some(entry @ None) => *entry = Some(Bot::Random),
                _ => return false,
            }
            bot_names_of(&bots)
        };
        tracing::info!(target: "coffer_server::games", game = %slot.id, seat, why,
            "a seat is handed to the random bot");
        let store = Arc::clone(&self.store);
        let id = slot.id;
        tokio::task::spawn_blocking(move || {
            if let Err(e) = store.set_bots(id, names) {
                tracing::warn!(target: "coffer_server::games", game = %id,
                    "the seat handed to the bot is not stored: {e}");
            }
        });
        let message: Arc<str> =
            json!({"type": "abandoned", "seat": seat, "bot": "random", "why": why})
                .to_string()
                .into();
        for feed in slot.feeds().iter().flatten() {
            let _ = feed.send((u64::MAX, Arc::clone(&message)));
        }
        self.wake_bots(slot);
        true
    }

    /// Seat `seat` leaves game `slot` for good (`why`: it resigned, its clock ran out too often, it was
    /// disconnected too long): with the `forfeit` policy it forfeits where the ruleset can take it out
    /// of the game (`"~forfeit"`, submitted as the server's move); otherwise, or where the ruleset
    /// cannot, the random bot plays it. `None`: a bot plays the seat already.
    pub(super) async fn leave(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        seat: u16,
        why: &str,
    ) -> Option<Left> {
        if slot.setup.clock.is_some_and(|c| c.forfeit) {
            // A move of another seat may come first: the forfeit is tried again at the new number.
            for _ in 0..3 {
                let seq = slot.seq();
                match self
                    .submit_for(
                        slot,
                        Owner(seat),
                        coffer_core::FORFEIT.to_owned(),
                        seq,
                        Chooser::Server,
                    )
                    .await
                {
                    Some(Ok(())) => {
                        tracing::info!(target: "coffer_server::games", game = %slot.id, seat, why,
                            "a seat forfeited");
                        return Some(Left::Forfeited);
                    }
                    Some(Err(GameError::Stale { .. })) => continue,
                    _ => break,
                }
            }
        }
        self.abandon(slot, seat, why).then_some(Left::ToBot)
    }

    /// Resumes the bots and clocks of one game this node now owns.
    pub(super) fn resume(self: &Arc<Self>, slot: &Arc<Slot>) {
        self.resume_clocks(slot, true);
        self.wake_bots(slot);
    }

    /// Plays the bots' moves of game `slot` until no bot is to act, the game ends or stops, or this node
    /// no longer owns it.
    async fn play_bots(self: &Arc<Self>, slot: &Arc<Slot>) {
        let mut stale = 0;
        loop {
            if slot.finished.load(Ordering::Acquire) || slot.stopped().is_some() || !self.owns(slot)
            {
                return;
            }
            let bots = slot.bots().clone();
            let seed = slot.setup.seed;
            let chosen = self
                .call(slot, move |live| {
                    let seq = live.seq;
                    let game = live
                        .game
                        .as_deref_mut()
                        .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                    let chosen = bot_move(game, &bots, seed, seq);
                    plugin_failed(game).map_err(CallError::Stop)?;
                    Ok(chosen.map(|(seat, action)| (seat, action, seq)))
                })
                .await;
            let (seat, action, seq) = match chosen {
                Ok((Some(chosen), guard)) => {
                    drop(guard);
                    chosen
                }
                Ok((None, _)) => return,
                Err(error) => {
                    tracing::debug!(target: "coffer_server::games", game = %slot.id, code = error.code(),
                        "the bots wait: {error}");
                    return;
                }
            };
            // Keyed: the log says who chose the move, and a second one is refused.
            match self.submit_for(slot, seat, action, seq, Chooser::Bot).await {
                Some(Ok(())) => {
                    stale = 0;
                    // A bot acts no faster than a person's seat may (`--actions-per-second`): a client
                    // that creates games of bots sets the server no more work than one that plays.
                    let per_second = self.limits.actions_per_second.max(1);
                    tokio::time::sleep(Duration::from_secs_f64(1.0 / f64::from(per_second))).await;
                }
                Some(Err(GameError::Stale { .. })) if stale < STALE_RETRIES => stale += 1,
                Some(Err(error)) => {
                    tracing::warn!(target: "coffer_server::games", game = %slot.id, seat = seat.0,
                        code = error.code(), "the bot's move was not applied; its bots wait for the next action");
                    return;
                }
                None => return,
            }
        }
    }

    /// Submits `action`, chosen by the server (`by`) for `seat` at `seq`, through the path a client's
    /// action takes, keyed as [`Chooser::key`] says; then starts what follows an action. `None` when
    /// the action was not JSON.
    pub(super) async fn submit_for(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        seat: Owner,
        action: String,
        seq: u64,
        by: Chooser,
    ) -> Option<Result<(), GameError>> {
        let Ok(action) = RawValue::from_string(action) else {
            tracing::warn!(target: "coffer_server::games", game = %slot.id, seat = seat.0,
                "the ruleset listed a legal action that is not JSON; the server does not play it");
            return None;
        };
        let submit = Submit {
            seat: seat.0,
            action,
            expected_seq: Some(seq),
            key: Some(by.key(seq)),
        };
        let acted = match &self.node {
            None => self.act_here(slot, submit, None).await,
            // The server's own move has no token: an owner applies it; a node that lost the game
            // leaves it to the new owner, which resumes the game's bots and clocks when it takes over.
            Some(node) => self.act_in_cluster(node, slot, submit, "").await,
        };
        Some(acted.map(|acted| {
            self.metrics.bot_actions.inc();
            if acted.first {
                self.after_action(slot);
            }
        }))
    }

    /// What follows a committed action: the clocks restart for the next decision, and the bots play if
    /// one of them is to act.
    pub(super) fn after_action(self: &Arc<Self>, slot: &Arc<Slot>) {
        if slot.setup.clock.is_some() {
            let next = slot
                .clock_state
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .next
                .take();
            if let Some((seq, actor, to_act, decided)) = next {
                self.restart_clocks(slot, seq, Some((actor, decided)), &to_act, 0);
            }
        }
        self.wake_bots(slot);
    }
}

/// How a seat left a game ([`Games::resign`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Left {
    /// It forfeited: the ruleset took it out of the game.
    Forfeited,
    /// The random bot plays it for the rest of the game.
    ToBot,
}

/// The move `bot` chooses for `seat` at `seq` (as JSON), if `seat` has a legal action.
pub(super) fn choose_for(
    game: &mut dyn DynGame,
    seat: Owner,
    bot: Bot,
    seed: u64,
    seq: u64,
) -> Option<String> {
    let legal = game.legal_actions(seat);
    if legal == 0 {
        return None;
    }
    let mut rng = bot_rng(seed, seq, seat);
    let index = match choose(bot, game, seat, legal, &mut rng, PLAYOUT_ACTIONS, 0) {
        Ok((index, _)) => index,
        // A search whose playout failed plays like the random bot: the seat is not left waiting.
        Err(_) => rng.below(legal as u64) as usize,
    };
    // The list read again: the search played out copies, and the list read is this seat's.
    game.legal_actions(seat);
    game.legal_action_json(index)
}

/// The first bot seat to act with a legal action, and the action its bot chooses (as JSON).
fn bot_move(game: &mut dyn DynGame, bots: &Bots, seed: u64, seq: u64) -> Option<(Owner, String)> {
    let movers: Vec<Owner> = game.to_act().to_vec();
    movers.into_iter().find_map(|seat| {
        let Some(Some(bot)) = bots.get(seat.index()) else {
            return None;
        };
        choose_for(game, seat, *bot, seed, seq).map(|action| (seat, action))
    })
}

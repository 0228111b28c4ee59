//! A game on the plugin's side of the boundary: the ruleset's game, the cache of who may act, and the
//! checkpoint and log of actions that rebuild it when a call panics halfway.

use crate::guard::{put, refuse, rulesets};
use crate::{
    Buf, CHECKPOINT_EVERY, EVERYONE, GameHandle, OK, PANICKED, Status, audience, panic_message,
};
use coffer_kernel::{GameRng, Owner};
use coffer_sdk::{
    Acting, ActionError, DynGame, EventsFor, PlayoutError, Progress, Setup, SetupError,
};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// An action to apply to a plugin-side game.
#[derive(Clone, Copy)]
pub(crate) enum Applied<'a> {
    /// Legal action `index` of the player.
    Legal(usize),
    /// An action's JSON.
    Json(&'a str),
    /// Legal action `index` of the player, then the players who may act next, written to the
    /// out-parameters of [`VTable::apply_legal_then_acting`].
    LegalThenActing(usize, *mut *const Acting, *mut usize),
    /// An action's JSON, then the answers written to the out-parameters of
    /// [`VTable::apply_json_reporting`].
    JsonReporting(Reporting<'a>),
}

/// The JSON action and the out-parameters of one [`VTable::apply_json_reporting`] call.
#[derive(Clone, Copy)]
pub(crate) struct Reporting<'a> {
    pub(crate) text: &'a str,
    /// The audience of the events, as [`VTable::events`] reads it.
    pub(crate) seat: i32,
    pub(crate) hash: *mut u64,
    pub(crate) list: *mut *const Acting,
    pub(crate) count: *mut usize,
}

/// An action applied since the last checkpoint, to rebuild the game after a panic: 8 bytes, no allocation
/// of its own.
#[derive(Clone, Copy)]
pub(crate) enum Logged {
    /// Legal action `index` of `player`.
    Legal(u16, u32),
    /// The JSON action `PluginGame::texts[text]` of `player`.
    Json(u16, u32),
    /// A random playout, `PluginGame::playouts[playout]`: replayed from the generator state it started
    /// from, for as many actions as it applied.
    Playout(u32),
}

/// The log's capacity when a game is made from its setup (128 bytes): a short game never grows it, and
/// applying an action never allocates for it until then. A restored or copied game makes it at its first
/// action, which copies the game anyway.
pub(crate) const LOG_RESERVE: usize = 16;

/// Where a plugin-side game is rebuilt from after a panic, before replaying the actions since.
pub(crate) enum Checkpoint {
    /// Nothing yet: a clone is taken at the game's first action (restored and copied games).
    Lazy,
    /// The game's setup: `new_game` is deterministic, so it rebuilds the initial state for free.
    Setup(usize, Setup),
    /// A copy of the game (taken lazily, then every [`CHECKPOINT_EVERY`] actions).
    Game(Box<dyn DynGame>),
}

/// A game as the plugin keeps it: the live game, a checkpoint and the actions applied since. Idle games
/// hold one state, not two: a new game's checkpoint is its setup, other games clone at their first action.
pub(crate) struct PluginGame {
    pub(crate) game: Box<dyn DynGame>,
    /// The index of the game's ruleset in the library (what a reset's checkpoint rebuilds from).
    pub(crate) ruleset: usize,
    pub(crate) checkpoint: Checkpoint,
    pub(crate) log: Vec<Logged>,
    /// The texts of the logged JSON actions.
    pub(crate) texts: Vec<String>,
    /// The logged playouts: the generator state each started from, and how many actions it applied.
    pub(crate) playouts: Vec<([u64; 2], u64)>,
}

impl PluginGame {
    pub(crate) fn new(
        game: Box<dyn DynGame>,
        ruleset: usize,
        checkpoint: Checkpoint,
    ) -> PluginGame {
        // A restored or copied game's first action copies the whole game (its checkpoint): its log is
        // made then too, not with every restore.
        let log = match checkpoint {
            Checkpoint::Lazy => Vec::new(),
            _ => Vec::with_capacity(LOG_RESERVE),
        };
        PluginGame {
            game,
            ruleset,
            checkpoint,
            log,
            texts: Vec::new(),
            playouts: Vec::new(),
        }
    }

    pub(crate) fn into_handle(self) -> *mut GameHandle {
        Box::into_raw(Box::new(self)).cast()
    }

    /// Applies `action` and on success logs it and returns [`OK`]; a refusal is written to `out`
    /// ([`REFUSED`]). A panic unwinds out of here: the caller catches it and calls
    /// [`PluginGame::rebuild`] (see [`guard_apply`]).
    #[inline(never)]
    pub(crate) fn apply(&mut self, player: Owner, action: Applied<'_>, out: *mut Buf) -> Status {
        if matches!(self.checkpoint, Checkpoint::Lazy) {
            self.checkpoint = Checkpoint::Game(self.game.clone_game());
        }
        let applied = match action {
            Applied::Legal(index) | Applied::LegalThenActing(index, ..) => {
                self.game.apply_legal(player, index)
            }
            Applied::Json(text) => self.game.apply_json(player, text),
            Applied::JsonReporting(reporting) => {
                // Answered before the action is logged, as below: a panic while answering rebuilds the
                // game as it was before the call.
                match self.game.apply_json_reporting(
                    player,
                    reporting.text,
                    events_audience(reporting.seat),
                ) {
                    Ok(report) => {
                        // Events that cannot be encoded are no answer: unwinding from here rebuilds the
                        // game and reports a panic, as for a failure of the ruleset itself.
                        let events = postcard::to_stdvec(&report.events).unwrap_or_else(|e| {
                            panic!("the action's events cannot be encoded: {e}")
                        });
                        // SAFETY: the host passes a writable u64, pointer and usize. The entries live in
                        // the game's cache, unchanged until the next call on this game (`record` only
                        // reads the game).
                        unsafe {
                            reporting.hash.write(report.hash.0);
                            reporting.list.write(report.acting.as_ptr());
                            reporting.count.write(report.acting.len());
                        }
                        put(out, events);
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
        };
        if let Err(e) = applied {
            return refuse(out, &e);
        }
        match action {
            Applied::Legal(_) | Applied::Json(_) | Applied::JsonReporting(_) => {}
            Applied::LegalThenActing(_, list, count) => {
                // Listed before the action is logged: a panic while listing rebuilds the game as it
                // was before the call.
                let acting = self.game.acting();
                // SAFETY: the host passes a writable pointer and a writable usize. The entries live in
                // the game's cache, unchanged until the next call on this game (`record` only reads the
                // game).
                unsafe {
                    list.write(acting.as_ptr());
                    count.write(acting.len());
                }
            }
        }
        self.record(player, action);
        OK
    }

    /// A random playout inside the library, logged as one entry (the generator state it starts from and
    /// how many actions it applied, by [`PluginGame::log_playout`]): it is deterministic, so a rebuild
    /// replays it. `progress` is kept step by step; a panic unwinds out of here, as from `apply`.
    pub(crate) fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<(), PlayoutError> {
        if matches!(self.checkpoint, Checkpoint::Lazy) {
            self.checkpoint = Checkpoint::Game(self.game.clone_game());
        }
        self.game.playout(rng, max_actions, progress).map(drop)
    }

    /// Logs a playout that started from generator state `from` and applied `applied` actions (whether it
    /// ended, was refused or panicked).
    pub(crate) fn log_playout(&mut self, from: [u64; 2], applied: u64) {
        if applied == 0 {
            return;
        }
        let room = self.log.len() + 1 < CHECKPOINT_EVERY;
        match u32::try_from(self.playouts.len()) {
            Ok(n) if room => {
                if self.log.len() == self.log.capacity() {
                    self.make_room();
                }
                self.playouts.push((from, applied));
                self.log.push(Logged::Playout(n));
            }
            _ => self.checkpoint_now(),
        }
    }

    /// Makes room in a full log for one more entry: four times larger, up to [`CHECKPOINT_EVERY`] - 1
    /// entries, then a new checkpoint and an empty log.
    pub(crate) fn make_room(&mut self) {
        if self.log.len() + 1 < CHECKPOINT_EVERY {
            // Four times larger, not twice: a random playout's game grew its log four times (16 to 256
            // entries), each a reallocation that cost as much as an action.
            let target = (self.log.capacity() * 4).clamp(LOG_RESERVE, CHECKPOINT_EVERY - 1);
            self.log.reserve_exact(target - self.log.len());
        } else {
            self.checkpoint_now();
        }
    }

    /// A checkpoint of the game as it is now; the log is emptied.
    pub(crate) fn checkpoint_now(&mut self) {
        self.checkpoint = Checkpoint::Game(self.game.clone_game());
        self.log.clear();
        self.texts.clear();
        self.playouts.clear();
    }

    /// Logs an applied action. The fast path appends a legal action's entry to a log with room; the rest
    /// (a JSON action, a log to grow or full) is [`PluginGame::record_slow`].
    #[inline(always)]
    pub(crate) fn record(&mut self, player: Owner, action: Applied<'_>) {
        if let Applied::Legal(index) | Applied::LegalThenActing(index, ..) = action
            && self.log.len() < self.log.capacity()
            && let Ok(index) = u32::try_from(index)
        {
            self.log.push(Logged::Legal(player.0, index));
        } else {
            self.record_slow(player, action);
        }
    }

    /// [`PluginGame::record`] off the fast path. The log's capacity stays below [`CHECKPOINT_EVERY`]: when
    /// it is full at that length (or an action does not fit an entry: an index or a text count past
    /// `u32::MAX`), a new checkpoint is taken instead and the log emptied.
    #[cold]
    #[inline(never)]
    pub(crate) fn record_slow(&mut self, player: Owner, action: Applied<'_>) {
        let room = self.log.len() + 1 < CHECKPOINT_EVERY;
        let entry = match action {
            _ if !room => None,
            Applied::Legal(index) | Applied::LegalThenActing(index, ..) => u32::try_from(index)
                .ok()
                .map(|i| Logged::Legal(player.0, i)),
            Applied::Json(text) | Applied::JsonReporting(Reporting { text, .. }) => {
                u32::try_from(self.texts.len()).ok().map(|n| {
                    self.texts.push(text.to_owned());
                    Logged::Json(player.0, n)
                })
            }
        };
        match entry {
            Some(entry) => {
                if self.log.len() == self.log.capacity() {
                    self.make_room();
                }
                self.log.push(entry);
            }
            None => self.checkpoint_now(),
        }
    }

    /// Sets the game up again from `setup` ([`DynGame::reset`]): on success the setup is the checkpoint
    /// and the log is emptied; on a refusal the game is unchanged. A panic unwinds out of here with the
    /// checkpoint and log as they were, so [`rebuild`](Self::rebuild) returns to the game before the call.
    pub(crate) fn reset(&mut self, setup: Setup) -> Result<(), SetupError> {
        // As before an action: a restored or copied game keeps a copy to return to first.
        if matches!(self.checkpoint, Checkpoint::Lazy) {
            self.checkpoint = Checkpoint::Game(self.game.clone_game());
        }
        self.game.reset(&setup)?;
        self.checkpoint = Checkpoint::Setup(self.ruleset, setup);
        self.log.clear();
        self.texts.clear();
        self.playouts.clear();
        if self.log.capacity() == 0 {
            self.log.reserve_exact(LOG_RESERVE);
        }
        Ok(())
    }

    /// The game as it was before the action that panicked: the checkpoint plus the actions since.
    pub(crate) fn rebuild(&mut self) {
        let mut game = match &self.checkpoint {
            Checkpoint::Lazy => return,
            Checkpoint::Game(game) => game.clone_game(),
            Checkpoint::Setup(index, setup) => {
                match rulesets().get(*index).map(|r| r.new_game(setup)) {
                    Some(Ok(game)) => game,
                    _ => return,
                }
            }
        };
        for logged in &self.log {
            let replayed = match *logged {
                Logged::Legal(player, index) => game.apply_legal(Owner(player), index as usize),
                Logged::Json(player, text) => {
                    game.apply_json(Owner(player), &self.texts[text as usize])
                }
                Logged::Playout(playout) => {
                    let (from, applied) = self.playouts[playout as usize];
                    replay_playout(&mut *game, from, applied)
                }
            };
            debug_assert!(replayed.is_ok(), "a logged action replays");
        }
        self.game = game;
    }
}

/// # Safety
/// `game` must be a live handle from this library.
pub(crate) unsafe fn game_ref<'a>(game: *const GameHandle) -> &'a PluginGame {
    // SAFETY: handles are `Box<PluginGame>` pointers from `into_handle`, live until `free_game`.
    unsafe { &*game.cast::<PluginGame>() }
}

/// # Safety
/// `game` must be a live handle from this library, used by one thread at a time.
pub(crate) unsafe fn game_mut<'a>(game: *mut GameHandle) -> &'a mut PluginGame {
    // SAFETY: as `game_ref`; the host serialises calls on one game (`DynGame` methods take `&mut self`).
    unsafe { &mut *game.cast::<PluginGame>() }
}

/// # Safety
/// `ptr` must point to `len` readable bytes (or be anything when `len` is 0).
pub(crate) unsafe fn bytes_in<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller passes `len` readable bytes at `ptr`, borrowed for the call.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

/// Plays again `applied` actions of a playout that started from generator state `from` (deterministic:
/// the same actions as the first time).
pub(crate) fn replay_playout(
    game: &mut dyn DynGame,
    from: [u64; 2],
    applied: u64,
) -> Result<(), ActionError> {
    let mut rng = GameRng::try_from(from).map_err(ActionError::Malformed)?;
    match game.playout(&mut rng, applied, &mut Progress::default()) {
        Ok(n) if n == applied => Ok(()),
        Ok(n) => Err(ActionError::Illegal(format!(
            "a replayed playout applied {n} actions, not {applied}"
        ))),
        Err(PlayoutError::Refused { error, .. }) => Err(error),
        Err(PlayoutError::Observer(never)) => match never {},
    }
}

/// The audience of events an `i32` carries: [`EVERYONE`], a seat, or (any other negative) a spectator.
pub(crate) fn events_audience(code: i32) -> EventsFor {
    if code == EVERYONE {
        EventsFor::Everyone
    } else {
        EventsFor::Seat(audience(code))
    }
}

/// [`guard_hot`] for applying an action: on a panic, the game is rebuilt as it was before the call
/// ([`PluginGame::rebuild`]) before the panic is reported.
#[inline(always)]
pub(crate) fn guard_apply(
    out: *mut Buf,
    g: &mut PluginGame,
    player: Owner,
    action: Applied<'_>,
) -> Status {
    match catch_unwind(AssertUnwindSafe(|| g.apply(player, action, out))) {
        Ok(status) => status,
        Err(payload) => {
            // A panic while rebuilding leaves the game as the first panic left it; the library is
            // poisoned either way.
            let _ = catch_unwind(AssertUnwindSafe(|| g.rebuild()));
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    }
}

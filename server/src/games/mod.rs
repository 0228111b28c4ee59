//! The hosted games: each game's live state behind its own lock, every call into its ruleset on a
//! blocking thread under the plugin deadline, every action committed to the store before it is
//! acknowledged or shown to anyone.
//!
//! # Isolation
//! A game's ruleset is only ever called from [`tokio::task::spawn_blocking`], never on the executor's
//! threads, and only while holding that game's own lock (no lock another game needs). A call that
//! outlives [`Limits::plugin_deadline`] stops the game (quarantine): its players are told why, its lock
//! stays with the stuck thread, which is abandoned, and every other game goes on. A call that panics,
//! a plugin failure, or a library poisoned by an earlier panic stops the game the same way.
//!
//! # Secrecy
//! Every message for an audience (a seat, or the spectators) is built from what the game shows that
//! audience: its table, resources and events filtered by the ruleset at the source. No message holds the
//! state hash, the seed or another audience's view.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use coffer_core::{
    Description, DynGame, DynRuleset, Event, EventsFor, Format, Outcome, Owner, Seat,
    Setup as CoreSetup,
};
use coffer_host::{Registry, names_for, refusal_reason, render};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{OwnedMutexGuard, broadcast, oneshot};

use crate::calls::Calls;
use crate::cluster::{Cluster, Notice};
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::store::{
    Action, GameId, NewGame, RulesetKey, Setup, Snapshot, StateHash, Store, StoreError, TokenHash,
};

mod acting;
mod applying;
mod bots;
mod clocks;
mod cluster;
mod error;
mod history;
mod hosting;
mod recovery;
mod sweeping;
mod undo;

use applying::*;
pub use applying::{Legal, View};
pub use bots::Left;
use bots::*;
use clocks::*;
pub use clocks::{MAX_CLOCK_MS, MIN_CLOCK_MS};
pub use cluster::{FORWARDED_HEADER, REPLAYED_HEADER};
pub use error::GameError;
use recovery::*;
pub use sweeping::SWEEP_EVERY;
use undo::*;

/// How many recent keyed submissions a game remembers with their answers (older ones are found in the
/// store, and their answer rebuilt from the log).
const RECENT_KEYS: usize = 32;

/// How many messages a slow WebSocket viewer may fall behind before it is told to reconnect.
const FEED_CAPACITY: usize = 256;

/// With several nodes, how long after a request for a game another node owns this node keeps following
/// it (applying each announced action as it comes) when no feed of it is subscribed to here.
pub const WATCHED_FOR: Duration = Duration::from_secs(10);

/// With several nodes, how often the games nobody watches here are caught up with their logs in one
/// read each (what keeps their lobby entries current and lets the finished ones leave memory).
pub const DORMANT_CATCH_UP_EVERY: Duration = Duration::from_secs(5);

/// Milliseconds since this process first asked, at least 1.
fn process_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    let start = *START.get_or_init(Instant::now);
    u64::try_from(start.elapsed().as_millis())
        .unwrap_or(u64::MAX)
        .saturating_add(1)
}

/// Where a call into a game's ruleset is: waiting for a thread, running, or withdrawn before it ran.
const CALL_WAITING: u8 = 0;
const CALL_RUNNING: u8 = 1;
const CALL_WITHDRAWN: u8 = 2;

/// The longest ruleset name looked up, in bytes (`id@version`); a longer one is no ruleset's.
const MAX_RULESET_NAME: usize = 200;

/// The first `max` characters of `text`, without control characters, with `…` where it was cut: to
/// quote a client's input back without echoing all of it.
pub fn clip(text: &str, max: usize) -> String {
    let mut out: String = text.chars().filter(|c| !c.is_control()).take(max).collect();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

/// The longest idempotency key accepted, in bytes.
pub const MAX_KEY_LEN: usize = 128;

/// A message on a game's feed: the sequence number it is about (`u64::MAX` for news of the game itself,
/// such as being stopped) and its JSON text.
pub type Feed = (u64, Arc<str>);

/// Who reads a message: a seat, or the spectators.
pub type Audience = Seat;

/// Every game the server hosts.
pub struct Games {
    registry: Registry,
    store: Arc<dyn Store>,
    slots: RwLock<HashMap<GameId, Arc<Slot>>>,
    limits: Limits,
    metrics: Arc<Metrics>,
    /// With several nodes sharing the store: this node's leases and its client for the others.
    node: Option<Node>,
    /// Games hosted plus creations under way: `max_games` holds exactly under concurrent creates.
    hosted: AtomicUsize,
    /// A retention pass is under way ([`Games::purge_finished`]).
    purging: std::sync::atomic::AtomicBool,
    /// Unfinished games each client address created, hosted now (creations under way included).
    clients: Mutex<HashMap<IpAddr, usize>>,
    /// The history replays that may run at once ([`Limits::history_replays`]).
    replays: Arc<tokio::sync::Semaphore>,
    /// The ruleset calls running now: what shutdown waits for, and names when it abandons one.
    calls: Arc<Calls>,
    /// Every game's clock deadlines, in one task (started with the first game that has a clock).
    timers: OnceLock<Timers>,
}

/// A place among the hosted games and the creating client's, taken before a game is made and given
/// back when dropped unless the game was hosted ([`keep`](Reservation::keep)).
struct Reservation<'a> {
    games: &'a Games,
    client: Option<IpAddr>,
    kept: bool,
}

impl Reservation<'_> {
    /// The game is hosted: its slot holds the places now.
    fn keep(mut self) {
        self.kept = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.kept {
            self.games.hosted.fetch_sub(1, Ordering::AcqRel);
            if let Some(client) = self.client {
                self.games.release_client(client);
            }
        }
    }
}

/// This node's side of a cluster.
struct Node {
    cluster: Arc<Cluster>,
    http: reqwest::Client,
}

/// Who applies a game's actions.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Role {
    /// The only node: every game is its own.
    Sole,
    /// This node holds the game's lease, with this fencing number.
    Owner(u64),
    /// Another node owns the game (at this address, when known): this node follows its log.
    Follower(Option<Arc<str>>),
}

/// One hosted game.
pub struct Slot {
    id: GameId,
    ruleset: Option<Arc<dyn DynRuleset>>,
    key: String,
    setup: Setup,
    created_unix_ms: u64,
    seats: Mutex<Vec<Option<TokenHash>>>,
    live: Arc<tokio::sync::Mutex<Live>>,
    seq: AtomicU64,
    finished: AtomicBool,
    stopped: OnceLock<String>,
    /// One feed per audience: seats `0..players`, then the spectators. Made when someone subscribes.
    feeds: Mutex<Vec<Option<broadcast::Sender<Feed>>>>,
    recent: Mutex<VecDeque<Recent>>,
    role: Mutex<Role>,
    /// The highest sequence number another node announced for this game.
    heard: AtomicU64,
    /// Whether a task is bringing this game up to `heard`.
    following: AtomicBool,
    /// When a request last asked this node for the game ([`process_ms`]; 0: never): with several
    /// nodes, a game another node owns is followed while someone watches it here (see
    /// [`Slot::watched`]).
    asked_ms: AtomicU64,
    /// Announced actions were left unapplied because nobody watched the game here: the next request
    /// for it, or the next sweep of such games, catches it up from the store first.
    dormant: AtomicBool,
    /// Actions another node's notices carried, past `seq`, waiting to be applied here without reading
    /// the store (see [`Slot::carried_after`]).
    carried: Mutex<BTreeMap<u64, Action>>,
    /// Woken when a follower's copy moves on (see [`Slot::wait_for`]).
    caught_up: tokio::sync::Notify,
    /// The client address that created the game, while it counts against that client's games.
    creator: Mutex<Option<IpAddr>>,
    /// When the game finished, as this server saw it: it leaves memory [`Limits::finished_linger`]
    /// later.
    finished_at: OnceLock<Instant>,
    /// The seats the server's bots play (a seat abandoned or resigned joins them).
    bots: RwLock<Bots>,
    /// A task plays this game's bots now; and it was asked to look again.
    bots_running: AtomicBool,
    bots_wanted: AtomicBool,
    /// The game's clocks now (its time control is `setup.clock`).
    clock_state: Mutex<ClockState>,
    /// Each seat's open WebSockets, and how often that count changed (a disconnection's grace ends
    /// only if it did not change since).
    connections: Mutex<Vec<(u32, u64)>>,
    /// Every seat's legal actions at one committed action: a `legal` request at that action needs no
    /// call into the game (see [`Slot::kept_legal`]).
    legal: Mutex<Option<(u64, Box<[Legal]>)>>,
}

/// What a hosted game is made of.
struct Hosting {
    id: GameId,
    ruleset: Option<Arc<dyn DynRuleset>>,
    key: String,
    setup: Setup,
    created_unix_ms: u64,
    seats: Vec<Option<TokenHash>>,
    game: Option<Box<dyn DynGame>>,
    seq: u64,
    moves: Moves,
    finished: bool,
    role: Role,
    creator: Option<IpAddr>,
    bots: Bots,
}

impl From<Hosting> for Slot {
    fn from(h: Hosting) -> Self {
        Slot {
            clock_state: Mutex::new(ClockState::new(h.setup.clock, h.setup.players)),
            connections: Mutex::new(vec![(0, 0); h.setup.players as usize]),
            id: h.id,
            ruleset: h.ruleset,
            key: h.key,
            setup: h.setup,
            created_unix_ms: h.created_unix_ms,
            seats: Mutex::new(h.seats),
            live: Arc::new(tokio::sync::Mutex::new(Live {
                game: h.game,
                seq: h.seq,
                moves: h.moves,
                snapshot_owed: false,
            })),
            seq: AtomicU64::new(h.seq),
            finished: AtomicBool::new(h.finished),
            stopped: OnceLock::new(),
            feeds: Mutex::new(Vec::new()),
            recent: Mutex::new(VecDeque::new()),
            role: Mutex::new(h.role),
            heard: AtomicU64::new(h.seq),
            following: AtomicBool::new(false),
            asked_ms: AtomicU64::new(0),
            dormant: AtomicBool::new(false),
            carried: Mutex::new(BTreeMap::new()),
            caught_up: tokio::sync::Notify::new(),
            creator: Mutex::new(h.creator),
            finished_at: if h.finished {
                OnceLock::from(Instant::now())
            } else {
                OnceLock::new()
            },
            bots: RwLock::new(h.bots),
            bots_running: AtomicBool::new(false),
            bots_wanted: AtomicBool::new(false),
            legal: Mutex::new(None),
        }
    }
}

struct Live {
    game: Option<Box<dyn DynGame>>,
    seq: u64,
    /// Who chose the last committed actions: what a seat may take back.
    moves: Moves,
    /// A snapshot was due while a seat could take actions back: it is taken after the next action
    /// that closes the window.
    snapshot_owed: bool,
}

struct Recent {
    seat: u16,
    key: String,
    seq: u64,
    answer: Arc<str>,
}

/// An applied action's answer.
#[derive(Clone, Debug)]
pub struct Acted {
    /// Its sequence number.
    pub seq: u64,
    /// The action as the seat that acted reads it (JSON).
    pub answer: Arc<str>,
    /// Whether this submission applied it; `false`: a retry of an earlier one with the same key.
    pub first: bool,
    /// The acting seat's own legal actions after it, when this submission applied it and the seat may act
    /// again (`None` otherwise): a client plays its next action without asking for them.
    pub legal: Option<Legal>,
}

/// A game as the lobby lists it.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Summary {
    /// The game's id.
    pub game: u64,
    /// Its ruleset, `id@version`.
    pub ruleset: String,
    /// Its number of players (and seats).
    pub players: u32,
    /// The number of actions applied so far.
    pub seq: u64,
    /// The seats nobody holds yet, which anyone may join.
    pub free_seats: Vec<u32>,
    /// The seats the server's bots play, with each bot's name (`random`, `search`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub bots: BTreeMap<u32, String>,
    /// The game's time control, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clock: Option<crate::store::Clock>,
    /// Whether the game is over.
    pub finished: bool,
    /// Why the game is stopped, if it is: it takes no more requests.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_unix_ms: u64,
}

/// A game just created: its id and the token of each seat that was not left open.
#[derive(Clone, Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Created {
    /// The game's id.
    pub game: u64,
    /// Its ruleset, `id@version`.
    pub ruleset: String,
    /// Its number of players.
    pub players: u32,
    /// One entry per seat: its token, or `null` for a seat left open for someone to join or played by
    /// the server's bot.
    pub tokens: Vec<Option<String>>,
}

/// What creating a game asks for.
#[derive(Clone, Debug)]
pub struct Create {
    /// A ruleset name: `id` or `id@version`.
    pub ruleset: String,
    /// The number of players.
    pub players: u16,
    /// The seed; `None`: the server draws one (and never tells it).
    pub seed: Option<u64>,
    /// The ruleset's configuration.
    pub config: Value,
    /// Seats left without a token, for others to join.
    pub open_seats: Vec<u32>,
    /// Seats the server's bots play, each with its bot's name (`random`, `search`).
    pub bots: BTreeMap<u32, String>,
    /// The game's time control; `None`: no clock.
    pub clock: Option<crate::store::Clock>,
    /// The address of the client asking, counted against its games ([`Limits::max_games_per_client`]);
    /// `None`: not counted (a program hosting games in-process).
    pub client: Option<IpAddr>,
}

/// An action to apply.
#[derive(Clone, Debug)]
pub struct Submit {
    /// The seat acting.
    pub seat: u16,
    /// The action's JSON, as the ruleset reads it.
    pub action: Box<RawValue>,
    /// Refuse unless the game is at this sequence number.
    pub expected_seq: Option<u64>,
    /// The idempotency key: a retry with the same key answers the first result and applies nothing.
    pub key: Option<String>,
}

use crate::store::now_unix_ms;

/// A creation's ruleset, its key, its open seats and its bots, once [`Games::checked_setup`] accepted
/// them.
struct CheckedSetup {
    ruleset: Arc<dyn DynRuleset>,
    key: String,
    open_seats: Vec<u32>,
    bots: Bots,
    clock: Option<crate::store::Clock>,
}

/// Most finished games one retention pass deletes: a pass is a bounded stretch of store work, and the
/// next sweep goes on.
pub const PURGE_BATCH: usize = 1_000;

fn storage(error: &StoreError) -> GameError {
    tracing::error!(error = %error, "store failure");
    match error {
        // The database restarts or the network to it is cut: the next call tries again.
        StoreError::Postgres(_) | StoreError::Unreachable(_) => {
            GameError::Unavailable("the server cannot reach its store now: try again".into())
        }
        _ => GameError::Internal(format!("the server could not use its store: {error}")),
    }
}

/// A game whose log cannot be read now: logged with why, answered without the store's details.
fn unreadable(id: GameId, error: &StoreError) -> GameError {
    tracing::warn!(game = %id, "cannot read the game from the store: {error}");
    GameError::Unavailable(format!(
        "game {id} cannot be read from the store now: try again"
    ))
}

/// A fresh secret: 32 random bytes, base64url without padding (43 characters).
pub fn new_token() -> Result<String, GameError> {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| GameError::Internal(format!("no randomness for a token: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn random_u64() -> Result<u64, GameError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| GameError::Internal(format!("no randomness: {e}")))?;
    Ok(u64::from_le_bytes(bytes))
}

impl Slot {
    /// The game's id.
    pub fn id(&self) -> GameId {
        self.id
    }

    /// The number of players.
    pub fn players(&self) -> u16 {
        self.setup.players as u16
    }

    /// The ruleset's description, when the ruleset is loaded.
    pub fn description(&self) -> Option<&Description> {
        self.ruleset.as_ref().map(|r| r.description())
    }

    /// The sequence number of the last committed action.
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }

    /// Why the game is stopped, if it is.
    pub fn stopped(&self) -> Option<&str> {
        self.stopped.get().map(String::as_str)
    }

    /// Whether this node has built the game's state (a node of several hosts the games nobody asked
    /// it for without it); a game in use counts as built.
    fn built(&self) -> bool {
        self.live
            .try_lock()
            .map_or(true, |live| live.game.is_some())
    }

    /// Marks the game over: it takes no more actions, and leaves memory after the linger.
    fn finish(&self) {
        self.finished.store(true, Ordering::Release);
        let _ = self.finished_at.set(Instant::now());
    }

    fn stop(&self, reason: String, metrics: &Metrics) {
        if self.stopped.set(reason.clone()).is_ok() {
            metrics.games_stopped.inc();
            tracing::error!(game = %self.id, ruleset = %self.key, "game stopped: {reason}");
            let message: Arc<str> = json!({"type": "stopped", "message": reason})
                .to_string()
                .into();
            for feed in self.feeds().iter().flatten() {
                let _ = feed.send((u64::MAX, Arc::clone(&message)));
            }
        }
    }

    fn stopped_error(&self) -> GameError {
        GameError::Stopped(
            self.stopped
                .get()
                .cloned()
                .unwrap_or_else(|| format!("game {} is stopped", self.id)),
        )
    }

    fn check_running(&self) -> Result<(), GameError> {
        match self.stopped.get() {
            Some(reason) => Err(GameError::Stopped(reason.clone())),
            None => Ok(()),
        }
    }

    fn feeds(&self) -> std::sync::MutexGuard<'_, Vec<Option<broadcast::Sender<Feed>>>> {
        self.feeds.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn audience_index(&self, audience: Audience) -> usize {
        match audience {
            Some(Owner(seat)) => usize::from(seat),
            None => self.setup.players as usize,
        }
    }

    /// Subscribes to the messages of `audience`.
    pub fn subscribe(&self, audience: Audience) -> broadcast::Receiver<Feed> {
        let index = self.audience_index(audience);
        let mut feeds = self.feeds();
        if feeds.len() <= index {
            feeds.resize_with(self.setup.players as usize + 1, || None);
        }
        match &feeds[index] {
            Some(feed) => feed.subscribe(),
            None => {
                let (feed, receiver) = broadcast::channel(FEED_CAPACITY);
                feeds[index] = Some(feed);
                receiver
            }
        }
    }

    /// Forgets the feed of `audience` once nobody listens to it, and every feed once none is listened
    /// to, so a game nobody watches holds no channel.
    pub fn unsubscribe(&self, audience: Audience) {
        let index = self.audience_index(audience);
        let mut feeds = self.feeds();
        if let Some(feed) = feeds.get_mut(index)
            && feed.as_ref().is_some_and(|f| f.receiver_count() == 0)
        {
            *feed = None;
        }
        if feeds.iter().all(Option::is_none) {
            *feeds = Vec::new();
        }
    }

    /// Whether someone watches this game on this node: a feed someone subscribed to, or a request
    /// for it within the last [`WATCHED_FOR`].
    fn watched(&self, now_ms: u64) -> bool {
        let asked = self.asked_ms.load(Ordering::Acquire);
        (asked > 0 && now_ms.saturating_sub(asked) < WATCHED_FOR.as_millis() as u64)
            || self.feeds().iter().any(Option::is_some)
    }

    /// The audiences someone listens to now.
    fn listening(&self) -> Vec<Audience> {
        let players = self.setup.players as usize;
        self.feeds()
            .iter()
            .enumerate()
            .filter(|(_, feed)| feed.as_ref().is_some_and(|f| f.receiver_count() > 0))
            .map(|(i, _)| (i < players).then_some(Owner(i as u16)))
            .collect()
    }

    fn publish(&self, seq: u64, messages: Vec<(Audience, Arc<str>)>) {
        let feeds = self.feeds();
        for (audience, message) in messages {
            if let Some(Some(feed)) = feeds.get(self.audience_index(audience)) {
                let _ = feed.send((seq, message));
            }
        }
    }

    /// The seat whose token this is.
    pub fn seat_of(&self, token: &str) -> Option<u16> {
        let seats = self.seats.lock().unwrap_or_else(PoisonError::into_inner);
        let hash = TokenHash::of_token(token.as_bytes());
        // Every seat is compared, so the time taken does not tell which one matched.
        let mut found = None;
        for (seat, stored) in seats.iter().enumerate() {
            if let Some(stored) = stored
                && stored == &hash
            {
                found = Some(seat as u16);
            }
        }
        found
    }

    /// The lobby's view of this game.
    pub fn summary(&self) -> Summary {
        let seats = self.seats.lock().unwrap_or_else(PoisonError::into_inner);
        Summary {
            game: self.id.0,
            ruleset: self.key.clone(),
            players: self.setup.players,
            seq: self.seq(),
            free_seats: seats
                .iter()
                .enumerate()
                .filter(|&(i, s)| s.is_none() && !self.is_bot(i as u32))
                .map(|(i, _)| i as u32)
                .collect(),
            bots: self.bot_names(),
            clock: self.setup.clock,
            finished: self.finished.load(Ordering::Acquire),
            stopped: self.stopped.get().cloned(),
            created_unix_ms: self.created_unix_ms,
        }
    }

    /// Rebuilds the dropped game at the last action this node saw committed (`seq`), from the store: the
    /// actions after it are then followed (and shown to viewers) like any other node's.
    fn reload(&self, live: &mut Live, store: &dyn Store) -> Result<(), CallError> {
        let Some(ruleset) = &self.ruleset else {
            return Err(CallError::Stop(
                "the ruleset of this game is not loaded".into(),
            ));
        };
        let unavailable = |e: StoreError| CallError::Refused(unreadable(self.id, &e));
        let target = self.seq();
        let recovery = store.recover(self.id).map_err(unavailable)?;
        let (snapshot, tail) = match recovery.snapshot {
            Some(snapshot) if snapshot.seq <= target => (Some(snapshot), recovery.tail),
            _ => (None, store.actions_after(self.id, 0).map_err(unavailable)?),
        };
        let tail: Vec<Action> = tail.into_iter().take_while(|a| a.seq <= target).collect();
        let setup =
            CoreSetup::new(self.players(), self.setup.seed).config(self.setup.config.clone());
        let game = rebuild(&**ruleset, &setup, snapshot.as_ref(), &tail)
            .map_err(|reason| CallError::Stop(format!("game {} is stopped: {reason}", self.id)))?;
        live.game = Some(game);
        live.moves = Moves::of(&tail);
        live.seq = target;
        Ok(())
    }

    fn role(&self) -> Role {
        self.role
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn set_role(&self, role: Role) {
        *self.role.lock().unwrap_or_else(PoisonError::into_inner) = role;
    }

    /// `seat`'s legal actions when they were kept at the game's last committed action.
    fn kept_legal(&self, seat: u16) -> Option<Legal> {
        let kept = self.legal.lock().unwrap_or_else(PoisonError::into_inner);
        let (seq, seats) = kept.as_ref()?;
        if *seq != self.seq() {
            return None;
        }
        seats.get(usize::from(seat)).cloned()
    }

    /// Keeps every seat's legal actions at committed action `seq`, the game being there: called under
    /// the game's lock, so that what is kept follows the committed actions in their order.
    fn keep_legal(&self, seq: u64, legal: Box<[Legal]>) {
        *self.legal.lock().unwrap_or_else(PoisonError::into_inner) = Some((seq, legal));
    }

    /// Forgets the legal actions kept: what is in memory may no longer be what the store holds.
    fn forget_legal(&self) {
        *self.legal.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    fn remembered(&self, seat: u16, key: &str) -> Option<(u64, Arc<str>)> {
        self.recent
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|r| r.seat == seat && r.key == key)
            .map(|r| (r.seq, Arc::clone(&r.answer)))
    }

    fn remember(&self, seat: u16, key: String, seq: u64, answer: Arc<str>) {
        let mut recent = self.recent.lock().unwrap_or_else(PoisonError::into_inner);
        if recent.len() == RECENT_KEYS {
            recent.pop_front();
        }
        recent.push_back(Recent {
            seat,
            key,
            seq,
            answer,
        });
    }
}

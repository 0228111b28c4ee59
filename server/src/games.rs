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

use std::collections::{HashMap, VecDeque};
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
use crate::error::ApiError;
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::store::{
    Action, GameId, NewGame, RulesetKey, Setup, Snapshot, StateHash, Store, StoreError, TokenHash,
};

/// How many recent keyed submissions a game remembers with their answers (older ones are found in the
/// store, and their answer rebuilt from the log).
const RECENT_KEYS: usize = 32;

/// How many messages a slow WebSocket viewer may fall behind before it is told to reconnect.
const FEED_CAPACITY: usize = 256;

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
    /// The client address that created the game, while it counts against that client's games.
    creator: Mutex<Option<IpAddr>>,
    /// When the game finished, as this server saw it: it leaves memory [`Limits::finished_linger`]
    /// later.
    finished_at: OnceLock<Instant>,
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
    finished: bool,
    role: Role,
    creator: Option<IpAddr>,
}

impl From<Hosting> for Slot {
    fn from(h: Hosting) -> Self {
        Slot {
            id: h.id,
            ruleset: h.ruleset,
            key: h.key,
            setup: h.setup,
            created_unix_ms: h.created_unix_ms,
            seats: Mutex::new(h.seats),
            live: Arc::new(tokio::sync::Mutex::new(Live {
                game: h.game,
                seq: h.seq,
            })),
            seq: AtomicU64::new(h.seq),
            finished: AtomicBool::new(h.finished),
            stopped: OnceLock::new(),
            feeds: Mutex::new(Vec::new()),
            recent: Mutex::new(VecDeque::new()),
            role: Mutex::new(h.role),
            heard: AtomicU64::new(h.seq),
            following: AtomicBool::new(false),
            creator: Mutex::new(h.creator),
            finished_at: if h.finished {
                OnceLock::from(Instant::now())
            } else {
                OnceLock::new()
            },
        }
    }
}

struct Live {
    game: Option<Box<dyn DynGame>>,
    seq: u64,
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
    /// One entry per seat: its token, or `null` for a seat left open for someone to join.
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

/// A creation's ruleset, its key and its open seats, once [`Games::checked_setup`] accepted them.
struct CheckedSetup {
    ruleset: Arc<dyn DynRuleset>,
    key: String,
    open_seats: Vec<u32>,
}

/// Most finished games one retention pass deletes: a pass is a bounded stretch of store work, and the
/// next sweep goes on.
pub const PURGE_BATCH: usize = 1_000;

fn storage(error: &StoreError) -> ApiError {
    tracing::error!(error = %error, "store failure");
    match error {
        // The database restarts or the network to it is cut: the next call tries again.
        StoreError::Postgres(_) | StoreError::Unreachable(_) => {
            ApiError::Unavailable("the server cannot reach its store now: try again".into())
        }
        _ => ApiError::Internal(format!("the server could not use its store: {error}")),
    }
}

/// A game whose log cannot be read now: logged with why, answered without the store's details.
fn unreadable(id: GameId, error: &StoreError) -> ApiError {
    tracing::warn!(game = %id, "cannot read the game from the store: {error}");
    ApiError::Unavailable(format!(
        "game {id} cannot be read from the store now: try again"
    ))
}

/// A fresh secret: 32 random bytes, base64url without padding (43 characters).
pub fn new_token() -> Result<String, ApiError> {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)
        .map_err(|e| ApiError::Internal(format!("no randomness for a token: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

fn random_u64() -> Result<u64, ApiError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
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

    fn stopped_error(&self) -> ApiError {
        ApiError::Stopped(
            self.stopped
                .get()
                .cloned()
                .unwrap_or_else(|| format!("game {} is stopped", self.id)),
        )
    }

    fn check_running(&self) -> Result<(), ApiError> {
        match self.stopped.get() {
            Some(reason) => Err(ApiError::Stopped(reason.clone())),
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
                .filter(|(_, s)| s.is_none())
                .map(|(i, _)| i as u32)
                .collect(),
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
        let unavailable = |e: StoreError| CallError::Api(unreadable(self.id, &e));
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

/// One event as the API writes it (the JSON of `coffer log --format json`).
#[derive(serde::Serialize)]
struct EventOut<'a> {
    text: Option<String>,
    key: coffer_core::Key,
    label: String,
    change: &'a coffer_core::Change,
    cause: String,
}

/// The table and resources an audience sees.
#[derive(serde::Serialize)]
struct ViewOut<'a> {
    table: &'a coffer_core::Table,
    resources: &'a [coffer_core::ResourceView],
}

/// An `action` message, serialized straight to text (no JSON tree in between: this is the hot path).
#[derive(serde::Serialize)]
struct ActionOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    seq: u64,
    actor: u16,
    action: &'a str,
    events: &'a [EventOut<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    view: Option<ViewOut<'a>>,
}

fn to_text(value: &impl serde::Serialize) -> String {
    // Serializing these types cannot fail: every map key is a string.
    serde_json::to_string(value).unwrap_or_default()
}

/// One action as `audience` reads it: who acted, the action's heading and its events in the game's
/// words; and, with `view`, the same message with the table and resources after it too.
fn action_message(
    game: &mut dyn DynGame,
    description: &Description,
    seq: u64,
    actor: u16,
    audience: Audience,
    view: bool,
) -> (String, Option<String>) {
    let events = game.events_for(audience);
    action_message_of(game, description, seq, actor, audience, &events, view)
}

/// [`action_message`] with `audience`'s events at hand (as applying the action answered them).
fn action_message_of(
    game: &dyn DynGame,
    description: &Description,
    seq: u64,
    actor: u16,
    audience: Audience,
    events: &[Event],
    view: bool,
) -> (String, Option<String>) {
    let table = game.table(audience);
    let resources = game.resources(audience);
    let names = names_for(description, &resources, &table);
    let out: Vec<EventOut<'_>> = events
        .iter()
        .map(|event| EventOut {
            text: names.change(event, audience),
            key: event.key,
            label: names.key(event.key),
            change: &event.change,
            cause: names.cause(&event.cause),
        })
        .collect();
    let heading = render::action_heading(&names, actor, events);
    let mut message = ActionOut {
        kind: "action",
        seq,
        actor,
        action: &heading,
        events: &out,
        view: None,
    };
    let plain = to_text(&message);
    let with_view = view.then(|| {
        message.view = Some(ViewOut {
            table: &table,
            resources: &resources,
        });
        to_text(&message)
    });
    (plain, with_view)
}

/// What `audience` sees of the game now.
fn view_message(game: &dyn DynGame, seq: u64, audience: Audience) -> Value {
    json!({
        "type": "view",
        "seq": seq,
        "seat": audience,
        "view": {"table": game.table(audience), "resources": game.resources(audience)},
    })
}

fn plugin_failed(game: &dyn DynGame) -> Result<(), String> {
    match game.failure() {
        Some(message) => Err(message),
        None => Ok(()),
    }
}

/// A seat's legal actions at one sequence number.
#[derive(Debug)]
pub struct Legal {
    /// The sequence number they are legal at.
    pub seq: u64,
    /// Each legal action's JSON, as the ruleset wrote it.
    pub actions: Vec<Box<RawValue>>,
}

impl Legal {
    /// `{"seq": N, "actions": [...]}`, or with `kind` `{"type": kind, "seq": N, "actions": [...]}`.
    pub fn to_json(&self, kind: Option<&str>) -> String {
        #[derive(serde::Serialize)]
        struct Out<'a> {
            #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
            kind: Option<&'a str>,
            seq: u64,
            actions: &'a [Box<RawValue>],
        }
        to_text(&Out {
            kind,
            seq: self.seq,
            actions: &self.actions,
        })
    }
}

/// What applying an action gave, before it is committed.
enum Applied {
    Refused(String),
    Duplicate(u64),
    Remembered(u64, Arc<str>),
    Done(Done),
}

/// An action applied in memory, waiting for its commit: what to store, answer and push.
struct Done {
    seq: u64,
    hash: StateHash,
    answer: String,
    pushes: Vec<(Audience, Arc<str>)>,
    finished: bool,
    snapshot: Option<Vec<u8>>,
}

/// What applying one submitted action needs on the game's thread.
struct Applying {
    store: Arc<dyn Store>,
    ruleset: Option<Arc<dyn DynRuleset>>,
    slot: Arc<Slot>,
    seat: u16,
    action: Box<RawValue>,
    expected_seq: Option<u64>,
    key: Option<String>,
    snapshot_every: u64,
}

impl Applying {
    /// Applies the action to the live game: a retry's first answer, a refusal in the seat's words, or
    /// the action applied with its answer and each audience's push (not yet committed).
    fn apply(self, live: &mut Live) -> Result<Applied, CallError> {
        let seat = self.seat;
        let expected_seq = self.expected_seq;
        let id = self.slot.id;
        let slot = &self.slot;
        if let Some(key) = &self.key {
            if let Some((seq, answer)) = slot.remembered(seat, key) {
                return Ok(Applied::Remembered(seq, answer));
            }
            match self.store.keyed_action(id, u32::from(seat), key) {
                Ok(Some(first)) => return Ok(Applied::Duplicate(first)),
                Ok(None) => {}
                Err(e) => return Err(CallError::Api(storage(&e))),
            }
        }
        if slot.finished.load(Ordering::Acquire) {
            return Err(CallError::Api(ApiError::Finished(id.0)));
        }
        if let Some(expected) = expected_seq
            && expected != live.seq
        {
            return Err(CallError::Api(ApiError::Stale {
                expected,
                current: live.seq,
            }));
        }
        let Some(ruleset) = &self.ruleset else {
            return Err(CallError::Stop(
                "the ruleset of this game is not loaded".into(),
            ));
        };
        let description = ruleset.description();
        let game = live
            .game
            .as_deref_mut()
            .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
        // One call applies the action and answers its hash and the actor's events.
        let actor = Some(Owner(seat));
        let applied =
            game.apply_json_reporting(Owner(seat), self.action.get(), EventsFor::Seat(actor));
        let (hash, actor_events) = match applied {
            Ok(report) => (StateHash(report.hash.0), report.events),
            Err(refusal) => {
                if let coffer_core::ActionError::Panicked(_)
                | coffer_core::ActionError::Poisoned(_) = refusal
                {
                    return Err(CallError::Stop(format!(
                        "game {id} is stopped: its ruleset's plugin failed ({refusal}); its games take no more actions"
                    )));
                }
                let audience = actor;
                let table = game.table(audience);
                let resources = game.resources(audience);
                let reason = refusal_reason(&names_for(description, &resources, &table), &refusal);
                plugin_failed(game).map_err(CallError::Stop)?;
                return Ok(Applied::Refused(reason));
            }
        };
        let seq = live.seq + 1;
        let mut actor_events = Some(actor_events);
        let mut answer = None;
        let mut pushes = Vec::new();
        for audience in slot.listening() {
            let events = match actor_events.take_if(|_| audience == actor) {
                Some(events) => events,
                None => game.events_for(audience),
            };
            let (plain, with_view) =
                action_message_of(game, description, seq, seat, audience, &events, true);
            pushes.push((audience, Arc::<str>::from(with_view.unwrap_or_default())));
            if audience == actor {
                // The actor's answer is its own feed's message without the view.
                answer = Some(plain);
            }
        }
        let answer = match (answer, actor_events) {
            (Some(answer), _) => answer,
            (None, Some(events)) => {
                action_message_of(game, description, seq, seat, actor, &events, false).0
            }
            (None, None) => action_message(game, description, seq, seat, actor, false).0,
        };
        let finished = matches!(game.outcome(), Outcome::Finished { .. });
        let snapshot = if seq.is_multiple_of(self.snapshot_every) || finished {
            game.snapshot(Format::Binary).ok()
        } else {
            None
        };
        plugin_failed(game).map_err(CallError::Stop)?;
        Ok(Applied::Done(Done {
            seq,
            hash,
            answer,
            pushes,
            finished,
            snapshot,
        }))
    }
}

/// A failure inside a blocking call: the game must stop, or the request fails on its own.
enum CallError {
    Stop(String),
    Api(ApiError),
    /// The call was withdrawn before it started (it waited past the deadline for a thread).
    Withdrawn,
}

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
    /// [`ApiError::NotFound`].
    pub fn slot(&self, id: u64) -> Result<Arc<Slot>, ApiError> {
        self.slots
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&GameId(id))
            .cloned()
            .ok_or_else(|| ApiError::NotFound(format!("no game {id} on this server")))
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
    async fn call<T: Send + 'static>(
        &self,
        slot: &Arc<Slot>,
        f: impl FnOnce(&mut Live) -> Result<T, CallError> + Send + 'static,
    ) -> Result<(T, OwnedMutexGuard<Live>), ApiError> {
        slot.check_running()?;
        let deadline = self.limits.plugin_deadline;
        let guard = match tokio::time::timeout(deadline, Arc::clone(&slot.live).lock_owned()).await
        {
            Ok(guard) => guard,
            Err(_) => {
                slot.check_running()?;
                return Err(ApiError::Busy(slot.id.0));
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
            return Err(ApiError::Saturated(format!(
                "the server had no thread free for game {} within {} s; nothing was applied: try again",
                slot.id,
                deadline.as_secs_f64()
            )));
        }
        match tokio::time::timeout(deadline, &mut handle).await {
            Ok(Ok((Err(CallError::Withdrawn), _))) => Err(ApiError::Saturated(format!(
                "the server had no thread free for game {}; nothing was applied: try again",
                slot.id
            ))),
            Ok(Ok((Ok(value), guard))) => Ok((value, guard)),
            Ok(Ok((Err(CallError::Api(error)), _))) => Err(error),
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
    fn checked_setup(&self, create: &Create) -> Result<CheckedSetup, ApiError> {
        if create.ruleset.len() > MAX_RULESET_NAME {
            return Err(ApiError::NotFound(format!(
                "no ruleset is named '{}' ({} bytes): see GET /api/rulesets for the names",
                clip(&create.ruleset, 40),
                create.ruleset.len()
            )));
        }
        let entry = self
            .registry
            .get(&create.ruleset)
            .map_err(|e| ApiError::NotFound(e.to_string()))?;
        let ruleset = Arc::clone(&entry.ruleset);
        let description = ruleset.description();
        let key = description.key();
        let players = create.players;
        if !(description.min_players..=description.max_players).contains(&players) {
            return Err(ApiError::BadRequest(format!(
                "cannot start a game of {key}: {players} players: this ruleset takes {} to {}",
                description.min_players, description.max_players
            )));
        }
        let mut open_seats = create.open_seats.clone();
        open_seats.sort_unstable();
        open_seats.dedup();
        if let Some(&seat) = open_seats.iter().find(|&&s| s >= u32::from(players)) {
            return Err(ApiError::BadRequest(format!(
                "open seat {seat} does not exist: a game of {players} players has seats 0 to {}",
                players.saturating_sub(1)
            )));
        }
        Ok(CheckedSetup {
            ruleset,
            key,
            open_seats,
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
    /// [`ApiError::NotFound`] for an unknown ruleset, [`ApiError::BadRequest`] when the ruleset refuses
    /// the setup or a seat to leave open does not exist, [`ApiError::Full`] past `max_games` or the
    /// memory budget, [`ApiError::Quota`] past the client's games, [`ApiError::GameTooLarge`] past
    /// `max_game_bytes`.
    pub async fn create(self: &Arc<Self>, create: Create) -> Result<Created, ApiError> {
        let CheckedSetup {
            ruleset,
            key,
            open_seats,
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
            if open_seats.binary_search(&seat).is_ok() {
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
        let ruleset_key = RulesetKey::new(&key).map_err(|e| ApiError::Internal(e.to_string()))?;
        let stored_setup = Setup {
            players: u32::from(players),
            seed,
            config: create.config,
        };
        let started = {
            let ruleset = Arc::clone(&ruleset);
            let setup = setup.clone();
            let calls = Arc::clone(&self.calls);
            let work = tokio::task::spawn_blocking(move || {
                let key = ruleset.description().key();
                let _running = calls.enter("(a new game)", &key, "starting a game");
                let game = ruleset.new_game(&setup).map_err(|e| {
                    ApiError::BadRequest(clip(&format!("cannot start a game of {key}: {e}"), 500))
                })?;
                plugin_failed(&*game).map_err(ApiError::Internal)?;
                // The game's size, as its binary snapshot measures it, within the per-game budget.
                let size = game
                    .snapshot(Format::Binary)
                    .map_err(|e| {
                        ApiError::Internal(format!(
                            "the ruleset {key} cannot snapshot a new game: {e}"
                        ))
                    })?
                    .len();
                if size > max_game_bytes {
                    return Err(ApiError::GameTooLarge(format!(
                        "a game of {key} with this configuration holds {} KiB of state; this server \
                         hosts games of at most {} KiB (--max-game-kib): choose smaller options",
                        size.div_ceil(1024),
                        max_game_bytes / 1024
                    )));
                }
                Ok::<_, ApiError>(game)
            });
            match tokio::time::timeout(deadline, work).await {
                Ok(Ok(result)) => result?,
                Ok(Err(_)) => {
                    return Err(ApiError::Internal(format!(
                        "the ruleset {key} panicked while starting a game"
                    )));
                }
                Err(_) => {
                    return Err(ApiError::Internal(format!(
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
                Err(_) => return Err(ApiError::Internal("the store panicked".into())),
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
            finished: false,
            // The store gave the new game a lease held by this node, fencing number 1.
            role: if self.node.is_some() {
                Role::Owner(1)
            } else {
                Role::Sole
            },
            creator: create.client,
        }));
        self.slots
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, slot);
        reservation.keep();
        self.metrics.games.inc();
        Ok(Created {
            game: id.0,
            ruleset: key,
            players: u32::from(players),
            tokens,
        })
    }

    /// Takes a place for a new game among the server's `max_games` and the client's
    /// `max_games_per_client`, within the memory budget.
    fn reserve(&self, client: Option<IpAddr>) -> Result<Reservation<'_>, ApiError> {
        if self.hosted.fetch_add(1, Ordering::AcqRel) >= self.limits.max_games {
            self.hosted.fetch_sub(1, Ordering::AcqRel);
            return Err(ApiError::Full(format!(
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
            return Err(ApiError::Full(format!(
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
                return Err(ApiError::Quota(format!(
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
    fn release_client(&self, client: IpAddr) {
        let mut clients = self.clients.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = clients.get_mut(&client) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                clients.remove(&client);
            }
        }
    }

    /// A game that finished or left memory no longer counts against its creator's games.
    fn release_creator(&self, slot: &Slot) {
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
            tracing::error!(error = %error, "the retention policy could not delete finished games");
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
            tracing::info!(
                deleted = deleted.len(),
                keep_days = keep.as_secs() / 86_400,
                "deleted finished games past the retention time"
            );
        }
        deleted.len()
    }

    /// Gives the free seat `seat` (or the first free one) a new token.
    ///
    /// # Errors
    /// [`ApiError::NotFound`], [`ApiError::SeatTaken`] when that seat is taken or none is free.
    pub async fn join(
        self: &Arc<Self>,
        id: u64,
        seat: Option<u32>,
    ) -> Result<(u32, String), ApiError> {
        let slot = self.find(id).await?;
        let players = slot.setup.players;
        if let Some(seat) = seat
            && seat >= players
        {
            return Err(ApiError::NotFound(format!(
                "game {id} has no seat {seat}: its seats are 0 to {}",
                players.saturating_sub(1)
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
                        .find(|(_, s)| s.is_none())
                        .map(|(i, _)| i as u32)
                        .ok_or_else(|| ApiError::SeatTaken(format!("game {id} has no free seat")))?
                }
            };
            let store = Arc::clone(&self.store);
            let claimed =
                tokio::task::spawn_blocking(move || store.claim_seat(GameId(id), candidate, hash))
                    .await
                    .map_err(|_| ApiError::Internal("the store panicked".into()))?;
            match claimed {
                Ok(()) => {
                    slot.seats.lock().unwrap_or_else(PoisonError::into_inner)[candidate as usize] =
                        Some(hash);
                    return Ok((candidate, token));
                }
                Err(StoreError::SeatTaken { .. }) if seat.is_none() => tried = candidate + 1,
                Err(StoreError::SeatTaken { .. }) => {
                    return Err(ApiError::SeatTaken(format!(
                        "seat {candidate} of game {id} is taken"
                    )));
                }
                Err(e) => return Err(storage(&e)),
            }
        }
    }

    /// What `audience` sees of game `slot` now: `{"type":"view","seq","seat","view":{table,resources}}`.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] and the plugin's failures.
    pub async fn view(&self, slot: &Arc<Slot>, audience: Audience) -> Result<Value, ApiError> {
        let (view, _guard) = self
            .call(slot, move |live| {
                let game = live
                    .game
                    .as_deref()
                    .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                let view = view_message(game, live.seq, audience);
                plugin_failed(game).map_err(CallError::Stop)?;
                Ok(view)
            })
            .await?;
        Ok(view)
    }

    /// The legal actions of `seat` now: `{"seq", "actions": [...]}`.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] and the plugin's failures.
    pub async fn legal(&self, slot: &Arc<Slot>, seat: u16) -> Result<Legal, ApiError> {
        let (legal, _guard) = self
            .call(slot, move |live| {
                let game = live
                    .game
                    .as_deref_mut()
                    .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                let count = game.legal_actions(Owner(seat));
                // The ruleset's JSON is passed on as written, checked to be JSON but not parsed into a tree.
                let actions: Vec<Box<RawValue>> = (0..count)
                    .filter_map(|i| game.legal_action_json(i))
                    .filter_map(|j| RawValue::from_string(j).ok())
                    .collect();
                plugin_failed(game).map_err(CallError::Stop)?;
                Ok(Legal {
                    seq: live.seq,
                    actions,
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
    /// [`ApiError::Finished`], [`ApiError::Stale`] (nothing applied), [`ApiError::Refused`] (the ruleset's
    /// reason in words; nothing applied), [`ApiError::Stopped`], [`ApiError::Internal`] when the store
    /// failed (the game is stopped: what is in memory was not saved).
    pub async fn act(
        self: &Arc<Self>,
        slot: &Arc<Slot>,
        submit: Submit,
        token: &str,
    ) -> Result<Acted, ApiError> {
        // On a task of its own: a client that goes away (a closed connection drops its request) must
        // not stop an action between its application in memory and its commit.
        let games = Arc::clone(self);
        let slot = Arc::clone(slot);
        let token = token.to_owned();
        tokio::spawn(async move {
            match &games.node {
                None => games.act_here(&slot, submit, None).await,
                Some(node) => games.act_in_cluster(node, &slot, submit, &token).await,
            }
        })
        .await
        .unwrap_or_else(|_| Err(ApiError::Internal("applying the action failed".into())))
    }

    /// [`act`](Self::act) on this node, holding the game's lease with fencing number `fence` when it
    /// is one of several.
    async fn act_here(
        &self,
        slot: &Arc<Slot>,
        submit: Submit,
        fence: Option<u64>,
    ) -> Result<Acted, ApiError> {
        // A retry (same key) answers its first result whatever happened since: the key comes first.
        if let Some(key) = &submit.key
            && let Some((seq, answer)) = slot.remembered(submit.seat, key)
        {
            return Ok(Acted {
                seq,
                answer,
                first: false,
            });
        }
        if submit.key.is_none() && slot.finished.load(Ordering::Acquire) {
            return Err(ApiError::Finished(slot.id.0));
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
                tracing::debug!(game = %id, code = e.code(), "rejected");
                self.metrics.rejected.inc();
            })?;
        let (seq, hash, answer, pushes, finished, snapshot) = match applied {
            Applied::Refused(message) => {
                self.metrics.refusals.inc();
                return Err(ApiError::Refused { message });
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
                    })
                    .ok_or_else(|| {
                        ApiError::Internal(format!("action {first} is not in the log"))
                    });
            }
            Applied::Remembered(seq, answer) => {
                return Ok(Acted {
                    seq,
                    answer,
                    first: false,
                });
            }
            Applied::Done(done) => (
                done.seq,
                done.hash,
                done.answer,
                done.pushes,
                done.finished,
                done.snapshot,
            ),
        };
        let (sender, committed) = oneshot::channel();
        let started = Instant::now();
        let stored = Action {
            seq,
            seat: u32::from(seat),
            action,
            hash,
            key: key.clone(),
        };
        let done: crate::store::Done = Box::new(move |result| {
            let _ = sender.send(result);
        });
        match fence {
            Some(fence) => self.store.append_fenced_then(slot.id, stored, fence, done),
            None => self.store.append_then(slot.id, stored, done),
        }
        let result = committed.await.unwrap_or(Err(StoreError::WriterStopped));
        self.metrics
            .commit_seconds
            .observe(started.elapsed().as_secs_f64());
        if let Err(error) = result {
            return Err(self.commit_failed(slot, guard, error));
        }
        guard.seq = seq;
        slot.seq.store(seq, Ordering::Release);
        self.metrics.actions.inc();
        let answer: Arc<str> = Arc::from(answer);
        if let Some(key) = key {
            slot.remember(seat, key, seq, Arc::clone(&answer));
        }
        slot.publish(seq, pushes);
        if finished {
            slot.finish();
            self.release_creator(slot);
        }
        drop(guard);
        let acted = Acted {
            seq,
            answer,
            first: true,
        };
        if snapshot.is_some() || finished {
            self.store_after(slot.id, seq, hash, snapshot, finished);
        }
        Ok(acted)
    }

    /// An action applied in memory whose commit failed: nobody may see it. With several nodes the game
    /// goes on (this node rebuilds it from the store before its next use); alone, the game stops and is
    /// recovered as saved when the server restarts.
    fn commit_failed(
        &self,
        slot: &Arc<Slot>,
        mut guard: OwnedMutexGuard<Live>,
        error: StoreError,
    ) -> ApiError {
        // What is in memory was not saved: nobody may see it. The game is recovered from the store
        // when the server restarts.
        // Freeing a game is a call into its ruleset: not on the executor's threads either.
        let game = guard.game.take();
        drop(guard);
        tokio::task::spawn_blocking(move || drop(game));
        if self.node.is_some() {
            // With several nodes the game goes on: this node rebuilds it from the store before its
            // next use, at the last action it saw committed, and follows the log from there.
            if let StoreError::Fenced { .. } = error {
                self.metrics.fenced.inc();
                self.lose_lease(slot);
                return ApiError::Moved(slot.id.0);
            }
            tracing::warn!(game = %slot.id, "an action could not be saved: {error}");
            return ApiError::Unavailable(
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
    fn store_after(
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
                    tracing::warn!(game = %id, "snapshot not stored: {e}");
                }
            }
            if finished && let Err(e) = store.finish(id) {
                tracing::warn!(game = %id, "game not marked finished: {e}");
            }
        });
    }

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
    /// [`ApiError::Saturated`] when every replay stayed busy, or the replay ran past the plugin
    /// deadline; [`ApiError::Internal`] when the log does not replay to its hashes; a storage failure.
    pub async fn history(
        &self,
        slot: &Arc<Slot>,
        audience: Audience,
        since: u64,
        until: u64,
    ) -> Result<Vec<String>, ApiError> {
        let until = until.min(since.saturating_add(self.limits.history_page.max(1)));
        if since >= until {
            return Ok(Vec::new());
        }
        let Some(ruleset) = slot.ruleset.clone() else {
            return Err(ApiError::Stopped(
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
                return Err(ApiError::Saturated(format!(
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
        let work = tokio::task::spawn_blocking(move || -> Result<Vec<String>, ApiError> {
            // Held until the replay ends, even one the reader stopped waiting for: replays never pile up.
            let _permit = permit;
            let _running = calls.enter(id, &key, "a history read");
            let passage = store.passage(id, since, until).map_err(|e| storage(&e))?;
            let description = ruleset.description();
            let not_replayable = |why: String| {
                tracing::warn!(game = %id, "history cannot be rebuilt: {why}");
                ApiError::Internal(format!(
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
                        action_message(&mut *game, description, action.seq, seat, audience, false)
                            .0,
                    );
                }
            }
            plugin_failed(&*game).map_err(not_replayable)?;
            Ok(out)
        });
        match tokio::time::timeout(self.limits.plugin_deadline, work).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(ApiError::Internal(format!(
                "the ruleset {} failed while rebuilding the history of game {id}; the game itself goes on",
                slot.key
            ))),
            Err(_) => {
                self.metrics.saturated.inc();
                Err(ApiError::Saturated(format!(
                    "reading the history of game {id} took longer than {} s: try again later; the game \
                     itself goes on",
                    self.limits.plugin_deadline.as_secs_f64()
                )))
            }
        }
    }

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
    fn load_game(&self, id: GameId) -> Result<Slot, StoreError> {
        let recovery = self.store.recover(id)?;
        let record = recovery.game;
        let seats = self.store.seats(id)?;
        let entry = self.registry.get(record.ruleset.as_str()).ok();
        let exact = entry.filter(|e| e.key() == record.ruleset.as_str());
        let setup = CoreSetup::new(record.setup.players as u16, record.setup.seed)
            .config(record.setup.config.clone());
        let hole = contiguous(record.seq, recovery.snapshot.as_ref(), &recovery.tail);
        let (game, problem) = match exact {
            None => (
                None,
                Some(format!(
                    "game {id} is stopped: its ruleset {} is not loaded on this server",
                    record.ruleset
                )),
            ),
            Some(_) if hole.is_err() => {
                let hole = hole.unwrap_err();
                tracing::error!(game = %id, "recovery refused: {hole}");
                (None, Some(format!("game {id} is stopped: {hole}")))
            }
            Some(entry) => match rebuild(
                &*entry.ruleset,
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
        let slot = Slot::from(Hosting {
            id,
            ruleset: exact.map(|e| Arc::clone(&e.ruleset)),
            key: record.ruleset.to_string(),
            setup: record.setup.clone(),
            created_unix_ms: record.created_unix_ms,
            seats,
            game,
            seq: record.seq,
            finished,
            role: if self.node.is_some() {
                Role::Follower(None)
            } else {
                Role::Sole
            },
            creator: None,
        });
        if let Some(reason) = problem {
            slot.stop(reason, &self.metrics);
        }
        Ok(slot)
    }
}

/// Whether a stored game's log runs without a hole from its snapshot (or its first action) to its
/// stored sequence number `seq`: a deleted action or a bumped `seq` is refused, saying where.
fn contiguous(seq: u64, snapshot: Option<&Snapshot>, tail: &[Action]) -> Result<(), String> {
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
fn rebuild(
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

/// How long the server waits between sweeps of the rate limiter's idle entries.
pub const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// A forwarded submission as the owner's API reads it.
#[derive(serde::Serialize)]
struct Forwarded<'a> {
    action: &'a RawValue,
    #[serde(skip_serializing_if = "Option::is_none")]
    expected_seq: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    key: Option<&'a str>,
}

/// The header a node sends with a submission it passes on: the owner answers `moved` rather than pass
/// it on again.
pub const FORWARDED_HEADER: &str = "coffer-forwarded-by";

/// The header of an answer that repeats an earlier submission's (same idempotency key).
pub const REPLAYED_HEADER: &str = "idempotent-replayed";

/// What passing a submission on to its owner gave.
enum Passed {
    /// The owner's answer, applied or refused.
    Answer(Result<Acted, ApiError>),
    /// Nothing was applied there: look the owner up again.
    Retry,
}

/// An error answer from another node, as this node answers it.
fn relayed(
    id: u64,
    expected: Option<u64>,
    status: reqwest::StatusCode,
    retry_after: Option<Duration>,
    body: &str,
) -> ApiError {
    #[derive(serde::Deserialize)]
    struct Body {
        error: String,
        message: String,
        current_seq: Option<u64>,
    }
    let Ok(body) = serde_json::from_str::<Body>(body) else {
        return ApiError::Unavailable(format!(
            "the server node owning game {id} answered {status} without an explanation"
        ));
    };
    match body.error.as_str() {
        "bad_request" | "too_large" => ApiError::BadRequest(body.message),
        "unauthorized" => ApiError::Unauthorized,
        "forbidden" => ApiError::Forbidden(id),
        "not_found" => ApiError::NotFound(body.message),
        "stale" => ApiError::Stale {
            expected: expected.unwrap_or_default(),
            current: body.current_seq.unwrap_or_default(),
        },
        "finished" => ApiError::Finished(id),
        "stopped" => ApiError::Stopped(body.message),
        "refused" => ApiError::Refused {
            message: body.message,
        },
        "rate_limited" => ApiError::RateLimited {
            retry_after: retry_after.unwrap_or(Duration::from_secs(1)),
        },
        "busy" => ApiError::Busy(id),
        "saturated" => ApiError::Saturated(body.message),
        "quota" => ApiError::Quota(body.message),
        "moved" => ApiError::Moved(id),
        "internal" => ApiError::Internal(body.message),
        _ => ApiError::Unavailable(body.message),
    }
}

/// The cluster side of the hosted games: who owns each, following the others' logs, passing actions on.
impl Games {
    fn node_id(&self) -> &str {
        self.node
            .as_ref()
            .map_or("", |n| n.cluster.node().id.as_str())
    }

    /// The game `id`, loaded from the store if this node does not host it yet (with several nodes, a
    /// game another node created).
    ///
    /// # Errors
    /// [`ApiError::NotFound`]; [`ApiError::Unavailable`] when the store cannot be read.
    pub async fn find(self: &Arc<Self>, id: u64) -> Result<Arc<Slot>, ApiError> {
        match self.slot(id) {
            Ok(slot) => Ok(slot),
            Err(missing) if self.node.is_none() => Err(missing),
            Err(missing) => match self.host_from_store(GameId(id)).await {
                Ok(slot) => Ok(slot),
                Err(StoreError::NoSuchGame(_)) => Err(missing),
                Err(error) => Err(unreadable(GameId(id), &error)),
            },
        }
    }

    /// Hosts game `id` from the store (as a follower), unless it is hosted already.
    async fn host_from_store(self: &Arc<Self>, id: GameId) -> Result<Arc<Slot>, StoreError> {
        let games = Arc::clone(self);
        let slot = tokio::task::spawn_blocking(move || games.load_game(id))
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
    /// [`ApiError::Forbidden`].
    pub async fn seat_of(&self, slot: &Arc<Slot>, token: &str) -> Result<u16, ApiError> {
        if let Some(seat) = slot.seat_of(token) {
            return Ok(seat);
        }
        if self.node.is_some() {
            self.refresh_seats(slot).await;
            if let Some(seat) = slot.seat_of(token) {
                return Ok(seat);
            }
        }
        Err(ApiError::Forbidden(slot.id.0))
    }

    async fn refresh_seats(&self, slot: &Arc<Slot>) {
        let store = Arc::clone(&self.store);
        let id = slot.id;
        if let Ok(Ok(seats)) = tokio::task::spawn_blocking(move || store.seats(id)).await {
            *slot.seats.lock().unwrap_or_else(PoisonError::into_inner) = seats;
        }
    }

    /// [`act`](Self::act) with several nodes: applied here while this node holds the lease; otherwise
    /// passed on to the owner (its address read from the lease), or the game taken over when its lease
    /// has expired. Gives up after twice the lease's length with [`ApiError::Unavailable`].
    async fn act_in_cluster(
        self: &Arc<Self>,
        node: &Node,
        slot: &Arc<Slot>,
        submit: Submit,
        token: &str,
    ) -> Result<Acted, ApiError> {
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
                        Err(ApiError::Moved(_)) => {}
                        answer => return answer,
                    }
                }
                Role::Follower(Some(addr)) => {
                    if submit.key.is_none() {
                        submit.key = Some(format!("~{}", new_token()?));
                        keyed_here = true;
                    }
                    match self.pass_on(node, &addr, slot, &submit, token).await {
                        Passed::Answer(Err(ApiError::Stale { expected, current }))
                            if slot.seq() < current =>
                        {
                            // This node's copy is behind the owner's: brought up to it, so that the
                            // client's next look at this node is not stale again.
                            let _ = self.catch_up(slot).await;
                            return Err(ApiError::Stale { expected, current });
                        }
                        Passed::Answer(mut answer) => {
                            if let Ok(acted) = &mut answer {
                                // Asked again only by this node: the client's first submission.
                                acted.first |= keyed_here;
                                self.metrics.forwarded.inc();
                                // What this client reads next from this node includes its action.
                                if slot.seq() < acted.seq {
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
                        .map_err(|_| ApiError::Internal("the store panicked".into()))?;
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
                                    tracing::warn!(game = %id, "cannot claim the game: {error}");
                                }
                                Err(_) => {
                                    return Err(ApiError::Internal("the store panicked".into()));
                                }
                            }
                        }
                        Err(error) => tracing::debug!(game = %id, "cannot read the lease: {error}"),
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
                return Err(ApiError::Unavailable(format!(
                    "the server node owning game {id} does not answer, and its lease has not expired \
                     yet: try again ({applied})"
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Passes a submission on to the node at `addr`, with the client's token.
    async fn pass_on(
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
        let sent = node
            .http
            .post(format!("{addr}/api/games/{id}/actions"))
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
                tracing::debug!(game = id, "passing an action on to {addr} failed: {error}");
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
                Ok(Seq { seq }) => Ok(Acted {
                    seq,
                    answer: Arc::from(text),
                    first: !replayed,
                }),
                Err(_) => Err(ApiError::Internal(format!(
                    "the server node owning game {id} answered an action without its sequence number"
                ))),
            });
        }
        match relayed(id, submit.expected_seq, status, retry_after, &text) {
            ApiError::Moved(_) | ApiError::ShuttingDown => Passed::Retry,
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
    pub async fn take_over(self: &Arc<Self>, slot: &Arc<Slot>, fence: u64) -> Result<(), ApiError> {
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
            tracing::info!(game = %slot.id, fence, "took the game over");
        }
        Ok(())
    }

    /// This node no longer holds the lease of `slot`: it follows the game from now on.
    fn lose_lease(&self, slot: &Slot) {
        let mut role = slot.role.lock().unwrap_or_else(PoisonError::into_inner);
        if let Role::Owner(fence) = *role {
            *role = Role::Follower(None);
            self.metrics.leases_lost.inc();
            tracing::info!(game = %slot.id, fence, "lost the game's lease: following it");
        }
    }

    /// Brings game `slot` up to its log in the store: applies each action committed since the last one
    /// this node has, checks its stored hash, and shows it to this node's viewers as the owner would.
    ///
    /// # Errors
    /// [`ApiError::Unavailable`] when the store cannot be read; [`ApiError::Stopped`] when the log does
    /// not replay (the game is stopped).
    ///
    /// Every caller runs on a task of its own (an action's, a follow task, a sweep), so a client going
    /// away cannot cut it between applying actions and showing them.
    pub async fn catch_up(&self, slot: &Arc<Slot>) -> Result<(), ApiError> {
        let store = Arc::clone(&self.store);
        let task_slot = Arc::clone(slot);
        type Shown = Vec<(u64, Vec<(Audience, Arc<str>)>)>;
        let ((shown, finished), guard) = self
            .call(slot, move |live| -> Result<(Shown, bool), CallError> {
                let slot = task_slot;
                let Some(ruleset) = slot.ruleset.clone() else {
                    return Err(CallError::Stop(
                        "the ruleset of this game is not loaded".into(),
                    ));
                };
                let description = ruleset.description();
                let actions = store
                    .actions_after(slot.id, live.seq)
                    .map_err(|e| CallError::Api(unreadable(slot.id, &e)))?;
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
                    let pushes = listening
                        .iter()
                        .map(|&audience| {
                            let (_, with_view) =
                                action_message(game, description, action.seq, seat, audience, true);
                            (audience, Arc::<str>::from(with_view.unwrap_or_default()))
                        })
                        .collect();
                    shown.push((action.seq, pushes));
                }
                let finished = matches!(game.outcome(), Outcome::Finished { .. });
                plugin_failed(game).map_err(CallError::Stop)?;
                Ok((shown, finished))
            })
            .await?;
        slot.seq.store(guard.seq, Ordering::Release);
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

    /// Another node announced action `seq` of game `id`: a task brings this node's copy up to it, one
    /// task per game at a time however many announcements arrive.
    fn heard(self: &Arc<Self>, id: GameId, seq: u64) {
        let slot = match self.slot(id.0) {
            Ok(slot) => slot,
            Err(_) => {
                // Hosted from the store, then followed up to `seq`: the copy may have been read just
                // before that action's commit.
                let games = Arc::clone(self);
                tokio::spawn(async move {
                    match games.host_from_store(id).await {
                        Ok(_) => games.heard(id, seq),
                        Err(error) => tracing::warn!(game = %id, "cannot follow the game: {error}"),
                    }
                });
                return;
            }
        };
        if self.owns(&slot) || slot.stopped().is_some() {
            return;
        }
        slot.heard.fetch_max(seq, Ordering::AcqRel);
        if slot.following.swap(true, Ordering::AcqRel) {
            return;
        }
        let games = Arc::clone(self);
        tokio::spawn(async move {
            let mut failures = 0;
            loop {
                if slot.seq() < slot.heard.load(Ordering::Acquire) && !games.owns(&slot) {
                    match games.catch_up(&slot).await {
                        Ok(()) => failures = 0,
                        // A stopped game is followed no more.
                        Err(ApiError::Stopped(_)) => failures = 20,
                        Err(error) => {
                            failures += 1;
                            if failures < 20 {
                                tokio::time::sleep(Duration::from_millis(100)).await;
                                continue;
                            }
                            tracing::warn!(game = %slot.id, "cannot follow the game: {error}");
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
            Notice::Action { game, seq } => self.heard(game, seq),
            Notice::Game(id) => {
                let games = Arc::clone(self);
                tokio::spawn(async move {
                    match games.slot(id.0) {
                        Ok(slot) => games.refresh_seats(&slot).await,
                        Err(_) => {
                            if let Err(error) = games.host_from_store(id).await {
                                tracing::warn!(game = %id, "cannot follow the game: {error}");
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
                    && let Err(error) = self.host_from_store(id).await
                {
                    tracing::warn!(game = %id, "cannot follow the game: {error}");
                }
            }
        }
        for slot in self.all() {
            if !self.owns(&slot) && slot.stopped().is_none() {
                let _ = self.catch_up(&slot).await;
            }
        }
    }

    fn all(&self) -> Vec<Arc<Slot>> {
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
    fn follow_now(self: &Arc<Self>, slot: Arc<Slot>) {
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
                        tracing::warn!(game = %id, "cannot take the game over: {error}");
                        continue;
                    }
                },
            };
            if let Err(error) = self.take_over(&slot, fence).await {
                tracing::warn!(game = %id, "cannot take the game over: {error}");
            }
        }
    }
}

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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError, RwLock};
use std::time::{Duration, Instant};

use coffer_core::{
    Description, DynGame, DynRuleset, Format, Outcome, Owner, Seat, Setup as CoreSetup,
};
use coffer_host::{Registry, names_for, refusal_reason, render};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{OwnedMutexGuard, broadcast, oneshot};

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
}

/// An action to apply.
#[derive(Debug)]
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

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn storage(error: &StoreError) -> ApiError {
    tracing::error!(error = %error, "store failure");
    ApiError::Internal(format!("the server could not use its store: {error}"))
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
    let heading = render::action_heading(&names, actor, &events);
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
    Done {
        seq: u64,
        hash: StateHash,
        answer: String,
        pushes: Vec<(Audience, Arc<str>)>,
        finished: bool,
        snapshot: Option<Vec<u8>>,
    },
}

/// A failure inside a blocking call: the game must stop, or the request fails on its own.
enum CallError {
    Stop(String),
    Api(ApiError),
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
            limits,
            metrics,
        }
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
        let handle = tokio::task::spawn_blocking(move || {
            let mut guard = guard;
            let result = f(&mut guard);
            (result, guard)
        });
        match tokio::time::timeout(deadline, handle).await {
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

    /// Creates a game: starts it (refused by the ruleset if its players or configuration are wrong),
    /// stores it, and answers a token for each seat not left open.
    ///
    /// # Errors
    /// [`ApiError::NotFound`] for an unknown ruleset, [`ApiError::BadRequest`] when the ruleset refuses
    /// the setup or a seat to leave open does not exist, [`ApiError::Full`] past `max_games`.
    pub async fn create(self: &Arc<Self>, create: Create) -> Result<Created, ApiError> {
        if self.len() >= self.limits.max_games {
            return Err(ApiError::Full(format!(
                "this server hosts {} games, its limit: no more can be created",
                self.limits.max_games
            )));
        }
        let entry = self
            .registry
            .get(&create.ruleset)
            .map_err(|e| ApiError::NotFound(e.to_string()))?;
        let ruleset = Arc::clone(&entry.ruleset);
        let key = ruleset.description().key();
        if let Some(&seat) = create
            .open_seats
            .iter()
            .find(|&&s| s >= u32::from(create.players))
        {
            return Err(ApiError::BadRequest(format!(
                "open seat {seat} does not exist: a game of {} players has seats 0 to {}",
                create.players,
                create.players.saturating_sub(1)
            )));
        }
        let seed = match create.seed {
            Some(seed) => seed,
            None => random_u64()?,
        };
        let setup = CoreSetup::new(create.players, seed).config(create.config.clone());
        let mut tokens = Vec::with_capacity(usize::from(create.players));
        let mut hashes = Vec::with_capacity(usize::from(create.players));
        for seat in 0..u32::from(create.players) {
            if create.open_seats.contains(&seat) {
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
        let ruleset_key = RulesetKey::new(&key).map_err(|e| ApiError::Internal(e.to_string()))?;
        let stored_setup = Setup {
            players: u32::from(create.players),
            seed,
            config: create.config,
        };
        let started = {
            let ruleset = Arc::clone(&ruleset);
            let setup = setup.clone();
            let work = tokio::task::spawn_blocking(move || {
                let game = ruleset.new_game(&setup).map_err(|e| {
                    ApiError::BadRequest(format!(
                        "cannot start a game of {}: {e}",
                        ruleset.description().key()
                    ))
                })?;
                plugin_failed(&*game).map_err(ApiError::Internal)?;
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
        let slot = Arc::new(Slot {
            id,
            ruleset: Some(ruleset),
            key: key.clone(),
            setup: stored_setup,
            created_unix_ms,
            seats: Mutex::new(hashes),
            live: Arc::new(tokio::sync::Mutex::new(Live {
                game: Some(started),
                seq: 0,
            })),
            seq: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            stopped: OnceLock::new(),
            feeds: Mutex::new(Vec::new()),
            recent: Mutex::new(VecDeque::new()),
        });
        self.slots
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, slot);
        self.metrics.games.inc();
        Ok(Created {
            game: id.0,
            ruleset: key,
            players: u32::from(create.players),
            tokens,
        })
    }

    /// Gives the free seat `seat` (or the first free one) a new token.
    ///
    /// # Errors
    /// [`ApiError::NotFound`], [`ApiError::SeatTaken`] when that seat is taken or none is free.
    pub async fn join(&self, id: u64, seat: Option<u32>) -> Result<(u32, String), ApiError> {
        let slot = self.slot(id)?;
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
    pub async fn act(&self, slot: &Arc<Slot>, submit: Submit) -> Result<Acted, ApiError> {
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
        let store = Arc::clone(&self.store);
        let ruleset = slot.ruleset.clone();
        let snapshot_every = self.limits.snapshot_every.max(1);
        let task_slot = Arc::clone(slot);
        let id = slot.id;
        let action_for_call = action.clone();
        let key_for_call = key.clone();
        let (applied, mut guard) = self
            .call(slot, move |live| {
                let slot = task_slot;
                if let Some(key) = &key_for_call {
                    if let Some((seq, answer)) = slot.remembered(seat, key) {
                        return Ok(Applied::Remembered(seq, answer));
                    }
                    match store.keyed_action(id, u32::from(seat), key) {
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
                let Some(ruleset) = ruleset else {
                    return Err(CallError::Stop("the ruleset of this game is not loaded".into()));
                };
                let description = ruleset.description();
                let game = live
                    .game
                    .as_deref_mut()
                    .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
                if let Err(refusal) = game.apply_json(Owner(seat), action_for_call.get()) {
                    if let coffer_core::ActionError::Panicked(_) | coffer_core::ActionError::Poisoned(_) = refusal {
                        return Err(CallError::Stop(format!(
                            "game {id} is stopped: its ruleset's plugin failed ({refusal}); its games take no more actions"
                        )));
                    }
                    let audience = Some(Owner(seat));
                    let table = game.table(audience);
                    let resources = game.resources(audience);
                    let reason = refusal_reason(&names_for(description, &resources, &table), &refusal);
                    plugin_failed(game).map_err(CallError::Stop)?;
                    return Ok(Applied::Refused(reason));
                }
                let seq = live.seq + 1;
                let hash = StateHash(game.state_hash().0);
                let actor = Some(Owner(seat));
                let mut answer = None;
                let mut pushes = Vec::new();
                for audience in slot.listening() {
                    let (plain, with_view) =
                        action_message(game, description, seq, seat, audience, true);
                    pushes.push((audience, Arc::<str>::from(with_view.unwrap_or_default())));
                    if audience == actor {
                        // The actor's answer is its own feed's message without the view.
                        answer = Some(plain);
                    }
                }
                let answer = answer.unwrap_or_else(|| {
                    action_message(game, description, seq, seat, actor, false).0
                });
                let finished = matches!(game.outcome(), Outcome::Finished { .. });
                let snapshot = if seq % snapshot_every == 0 || finished {
                    game.snapshot(Format::Binary).ok()
                } else {
                    None
                };
                plugin_failed(game).map_err(CallError::Stop)?;
                Ok(Applied::Done {
                    seq,
                    hash,
                    answer,
                    pushes,
                    finished,
                    snapshot,
                })
            })
            .await
            .inspect_err(|_| {
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
            Applied::Done {
                seq,
                hash,
                answer,
                pushes,
                finished,
                snapshot,
            } => (seq, hash, answer, pushes, finished, snapshot),
        };
        let (sender, committed) = oneshot::channel();
        let started = Instant::now();
        self.store.append_then(
            slot.id,
            Action {
                seq,
                seat: u32::from(seat),
                action,
                hash,
                key: key.clone(),
            },
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        );
        let result = committed.await.unwrap_or(Err(StoreError::WriterStopped));
        self.metrics
            .commit_seconds
            .observe(started.elapsed().as_secs_f64());
        if let Err(error) = result {
            // What is in memory was not saved: nobody may see it. The game is recovered from the store
            // when the server restarts.
            // Freeing a game is a call into its ruleset: not on the executor's threads either.
            let game = guard.game.take();
            drop(guard);
            tokio::task::spawn_blocking(move || drop(game));
            slot.stop(
                format!(
                    "game {} is stopped: the server could not save its last action ({error}); it is \
                     recovered as saved when the server restarts",
                    slot.id
                ),
                &self.metrics,
            );
            return Err(storage(&error));
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
            slot.finished.store(true, Ordering::Release);
        }
        drop(guard);
        let acted = Acted {
            seq,
            answer,
            first: true,
        };
        if snapshot.is_some() || finished {
            let store = Arc::clone(&self.store);
            let id = slot.id;
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
        Ok(acted)
    }

    /// The actions after `since` up to `until`, each as `audience` reads it (without the view): the
    /// game replayed from its setup on a copy, from the store's log, checking every stored hash.
    ///
    /// # Errors
    /// [`ApiError::Stopped`] when the log does not replay to its hashes (the game is stopped too).
    pub async fn history(
        &self,
        slot: &Arc<Slot>,
        audience: Audience,
        since: u64,
        until: u64,
    ) -> Result<Vec<String>, ApiError> {
        if since >= until {
            return Ok(Vec::new());
        }
        let Some(ruleset) = slot.ruleset.clone() else {
            return Err(ApiError::Stopped(
                "the ruleset of this game is not loaded".into(),
            ));
        };
        let store = Arc::clone(&self.store);
        let id = slot.id;
        let setup =
            CoreSetup::new(slot.players(), slot.setup.seed).config(slot.setup.config.clone());
        let deadline = self.limits.plugin_deadline;
        let work = tokio::task::spawn_blocking(move || -> Result<Vec<String>, CallError> {
            let actions = store
                .actions_after(id, 0)
                .map_err(|e| CallError::Api(storage(&e)))?;
            let description = ruleset.description();
            let mut game = ruleset
                .new_game(&setup)
                .map_err(|e| CallError::Stop(format!("game {id} cannot be rebuilt: {e}")))?;
            let mut out = Vec::new();
            for action in actions.iter().take_while(|a| a.seq <= until) {
                let seat = action.seat as u16;
                if game.apply_json(Owner(seat), action.action.get()).is_err()
                    || game.state_hash().0 != action.hash.0
                {
                    return Err(CallError::Stop(format!(
                        "game {id} is stopped: its log does not replay at action {} (a different ruleset build?)",
                        action.seq
                    )));
                }
                if action.seq > since {
                    out.push(
                        action_message(&mut *game, description, action.seq, seat, audience, false)
                            .0,
                    );
                }
            }
            plugin_failed(&*game).map_err(CallError::Stop)?;
            Ok(out)
        });
        match tokio::time::timeout(deadline * 4, work).await {
            Ok(Ok(Ok(out))) => Ok(out),
            Ok(Ok(Err(CallError::Api(e)))) => Err(e),
            Ok(Ok(Err(CallError::Stop(reason)))) => {
                slot.stop(reason.clone(), &self.metrics);
                Err(ApiError::Stopped(reason))
            }
            Ok(Err(_)) | Err(_) => {
                let reason =
                    format!("game {id} is stopped: its ruleset failed while replaying its history");
                slot.stop(reason.clone(), &self.metrics);
                Err(ApiError::Stopped(reason))
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
            let recovery = self.store.recover(*id)?;
            let record = recovery.game;
            let seats = self.store.seats(*id)?;
            let entry = self.registry.get(record.ruleset.as_str()).ok();
            let exact = entry.filter(|e| e.key() == record.ruleset.as_str());
            let setup = CoreSetup::new(record.setup.players as u16, record.setup.seed)
                .config(record.setup.config.clone());
            let (game, problem) = match exact {
                None => (
                    None,
                    Some(format!(
                        "game {id} is stopped: its ruleset {} is not loaded on this server",
                        record.ruleset
                    )),
                ),
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
            let slot = Slot {
                id: *id,
                ruleset: exact.map(|e| Arc::clone(&e.ruleset)),
                key: record.ruleset.to_string(),
                setup: record.setup.clone(),
                created_unix_ms: record.created_unix_ms,
                seats: Mutex::new(seats),
                live: Arc::new(tokio::sync::Mutex::new(Live {
                    game,
                    seq: record.seq,
                })),
                seq: AtomicU64::new(record.seq),
                finished: AtomicBool::new(finished),
                stopped: OnceLock::new(),
                feeds: Mutex::new(Vec::new()),
                recent: Mutex::new(VecDeque::new()),
            };
            if let Some(reason) = problem {
                slot.stop(reason, &self.metrics);
                stopped += 1;
            }
            if finished {
                self.store.finish(*id)?;
            }
            self.slots
                .write()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(*id, Arc::new(slot));
            self.metrics.games.inc();
        }
        Ok((ids.len(), stopped))
    }
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

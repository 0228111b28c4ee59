//! The HTTP JSON API and the WebSocket of each game. `docs/SERVER.md` documents every route and
//! message; `/openapi.json` is generated from the annotations here.

use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::{Arc, PoisonError};
use std::time::Instant;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use futures_util::{SinkExt as _, StreamExt as _};
use governor::clock::{Clock as _, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};
use tower_http::set_header::SetResponseHeaderLayer;
use utoipa::{OpenApi, ToSchema};

use crate::error::ApiError;
use crate::games::{
    Audience, Create, Created, FORWARDED_HEADER, Games, MAX_KEY_LEN, REPLAYED_HEADER, Slot, Submit,
    Summary,
};
use crate::limits::too_deep;
use coffer_core::Owner;

/// The address of the client a request came from, put in the request's extensions by the server's
/// listener ([`crate::serve`]). Quotas per client count by it; without it (a router served some other
/// way) none applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ClientAddr(pub IpAddr);

/// What every handler shares.
#[derive(Clone)]
pub struct App {
    games: Arc<Games>,
    limiter: Arc<DefaultKeyedRateLimiter<(u64, u16)>>,
    /// Reads per client address: history and WebSocket opens.
    readers: Arc<DefaultKeyedRateLimiter<IpAddr>>,
    /// Open WebSockets per seat (game, seat).
    sockets: Arc<std::sync::Mutex<HashMap<(u64, u16), usize>>>,
    shutdown: watch::Receiver<bool>,
    openapi: Arc<String>,
    connections: Option<Arc<tokio::sync::Semaphore>>,
}

impl App {
    /// The API over `games`; `shutdown` turns true when the server stops (WebSockets then close).
    pub fn new(games: Arc<Games>, shutdown: watch::Receiver<bool>) -> Self {
        let limits = games.limits();
        let rate = NonZeroU32::new(limits.actions_per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(limits.action_burst.max(1)).unwrap_or(NonZeroU32::MIN);
        let limiter = RateLimiter::keyed(Quota::per_second(rate).allow_burst(burst));
        let read_rate = NonZeroU32::new(limits.reads_per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let read_burst = NonZeroU32::new(limits.read_burst.max(1)).unwrap_or(NonZeroU32::MIN);
        let readers = RateLimiter::keyed(Quota::per_second(read_rate).allow_burst(read_burst));
        let openapi = ApiDoc::openapi()
            .to_pretty_json()
            .unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
        Self {
            games,
            limiter: Arc::new(limiter),
            readers: Arc::new(readers),
            sockets: Arc::default(),
            shutdown,
            openapi: Arc::new(openapi),
            connections: None,
        }
    }

    /// Counts every open WebSocket against the server's connections (`--max-connections`): a socket
    /// holds one permit of `connections` until it closes, so the limit bounds open sockets too, and
    /// shutdown, which waits for every permit, waits for every socket to close.
    pub fn limit_connections(mut self, connections: Arc<tokio::sync::Semaphore>) -> Self {
        self.connections = Some(connections);
        self
    }

    /// The games.
    pub fn games(&self) -> &Arc<Games> {
        &self.games
    }

    /// Forgets rate-limit entries of tokens and addresses idle long enough to be back at their full
    /// burst, and lets finished games that lingered long enough leave memory.
    pub fn sweep(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
        self.readers.retain_recent();
        self.readers.shrink_to_fit();
        self.games.sweep_finished();
        let games = Arc::clone(&self.games);
        tokio::spawn(async move { games.purge_finished().await });
    }

    /// Counts a read (history, a WebSocket opened) against its client address's rate.
    fn admit_read(&self, client: Option<ClientAddr>) -> Result<(), ApiError> {
        let Some(ClientAddr(addr)) = client else {
            return Ok(());
        };
        self.readers.check_key(&addr).map_err(|not_until| {
            self.games.metrics().quota_refused.inc();
            ApiError::ReadLimited {
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            }
        })
    }

    /// Takes one of a seat's WebSockets ([`Limits::max_sockets_per_token`](crate::Limits)); given back
    /// when the returned guard drops.
    fn take_socket(&self, game: u64, seat: u16) -> Result<SocketSlot, ApiError> {
        let mut sockets = self.sockets.lock().unwrap_or_else(PoisonError::into_inner);
        let count = sockets.entry((game, seat)).or_insert(0);
        let max = self.games.limits().max_sockets_per_token;
        if *count >= max {
            self.games.metrics().quota_refused.inc();
            return Err(ApiError::Quota(format!(
                "seat {seat} of game {game} has {max} WebSockets open, its limit: close one first"
            )));
        }
        *count += 1;
        Ok(SocketSlot {
            sockets: Arc::clone(&self.sockets),
            key: (game, seat),
        })
    }

    fn admit(&self, game: u64, seat: u16) -> Result<(), ApiError> {
        self.limiter.check_key(&(game, seat)).map_err(|not_until| {
            self.games.metrics().rejected.inc();
            ApiError::RateLimited {
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            }
        })
    }
}

/// One of a seat's open WebSockets, given back on drop.
struct SocketSlot {
    sockets: Arc<std::sync::Mutex<HashMap<(u64, u16), usize>>>,
    key: (u64, u16),
}

impl Drop for SocketSlot {
    fn drop(&mut self) {
        let mut sockets = self.sockets.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = sockets.get_mut(&self.key) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                sockets.remove(&self.key);
            }
        }
    }
}

/// The router of the whole API.
pub fn router(app: App) -> Router {
    let limit = app.games.limits().max_body_bytes;
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route("/api/rulesets", get(rulesets))
        .route("/api/games", get(list_games).post(create_game))
        .route("/api/games/{id}", get(game_summary))
        .route("/api/games/{id}/join", post(join_game))
        .route("/api/games/{id}/view", get(view))
        .route("/api/games/{id}/legal", get(legal))
        .route("/api/games/{id}/actions", post(act))
        .route("/api/games/{id}/events", get(events))
        .route("/api/games/{id}/ws", get(websocket))
        .merge(crate::web::routes())
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(axum::extract::DefaultBodyLimit::max(limit))
        .layer(axum::middleware::from_fn(trace_request))
        // No answer is to be sniffed as another type, or tell another site where it came from.
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
        .with_state(app)
}

/// Logs each request at TRACE: its method, its route (the pattern, `/api/games/{id}/view`, not the
/// path) and its status. Never a header, a query or a body: a seat's token, its view and its actions
/// stay out of the logs.
async fn trace_request(request: Request, next: axum::middleware::Next) -> Response {
    if !tracing::enabled!(tracing::Level::TRACE) {
        return next.run(request).await;
    }
    let method = request.method().clone();
    let route = request
        .extensions()
        .get::<axum::extract::MatchedPath>()
        .map(|path| path.as_str().to_owned());
    let response = next.run(request).await;
    tracing::trace!(%method, route = route.as_deref().unwrap_or("(no route)"),
        status = response.status().as_u16(), "request answered");
    response
}

async fn not_found() -> ApiError {
    ApiError::NotFound("no such route: see /openapi.json for the API".into())
}

async fn method_not_allowed() -> Response {
    (
        StatusCode::METHOD_NOT_ALLOWED,
        Json(json!({"error": "method_not_allowed", "message": "this route does not take that method: see /openapi.json"})),
    )
        .into_response()
}

// ----- extractors that answer in the API's JSON errors -----

/// A body's bytes, size-limited by the router; refusals in the API's JSON errors (413 `too_large`).
pub struct RawBody(pub Bytes);

impl<S: Send + Sync> FromRequest<S> for RawBody
where
    App: axum::extract::FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let app = <App as axum::extract::FromRef<S>>::from_ref(state);
        let limits = app.games.limits();
        let limit = limits.max_body_bytes;
        // A body announced larger than the limit is refused before any of it is read.
        if let Some(length) = req.headers().get(header::CONTENT_LENGTH)
            && length
                .to_str()
                .ok()
                .and_then(|length| length.trim().parse::<u64>().ok())
                .is_none_or(|length| length > limit as u64)
        {
            return Err(ApiError::TooLarge(limit));
        }
        let timeout = limits.body_timeout;
        match tokio::time::timeout(timeout, Bytes::from_request(req, state)).await {
            Err(_) => Err(ApiError::BodyTimeout(timeout.as_secs())),
            Ok(read) => read
                .map(RawBody)
                .map_err(|e: BytesRejection| match e.status() {
                    StatusCode::PAYLOAD_TOO_LARGE => ApiError::TooLarge(limit),
                    _ => ApiError::BadRequest(format!("cannot read the body: {e}")),
                }),
        }
    }
}

/// A JSON body: size-limited by the router, depth-checked before parsing.
pub struct Body<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T>
where
    App: axum::extract::FromRef<S>,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let app = <App as axum::extract::FromRef<S>>::from_ref(state);
        let max_json_depth = app.games.limits().max_json_depth;
        let RawBody(bytes) = RawBody::from_request(req, state).await?;
        parse_json(&bytes, max_json_depth).map(Body)
    }
}

fn parse_json<T: DeserializeOwned>(bytes: &[u8], max_depth: usize) -> Result<T, ApiError> {
    if too_deep(bytes, max_depth) {
        return Err(ApiError::BadRequest(format!(
            "the JSON nests deeper than {max_depth} levels"
        )));
    }
    serde_json::from_slice(bytes)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))
}

/// A path's game id.
pub struct GameIdPath(pub u64);

impl<S: Send + Sync> FromRequestParts<S> for GameIdPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let Path(id) = Path::<String>::from_request_parts(parts, state)
            .await
            .map_err(|e: PathRejection| ApiError::BadRequest(e.body_text()))?;
        id.parse::<u64>().map(GameIdPath).map_err(|_| {
            ApiError::NotFound(format!(
                "no game '{}' on this server: game ids are numbers",
                render_id(&id)
            ))
        })
    }
}

/// An id as given, cut and stripped of control characters, to quote it back.
fn render_id(id: &str) -> String {
    id.chars().filter(|c| !c.is_control()).take(40).collect()
}

/// Query parameters.
pub struct Params<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(t)| Params(t))
            .map_err(|e: QueryRejection| ApiError::BadRequest(e.body_text()))
    }
}

/// The bearer token of the request, if any.
fn bearer(headers: &HeaderMap) -> Result<Option<&str>, ApiError> {
    match headers.get(header::AUTHORIZATION) {
        None => Ok(None),
        Some(value) => {
            let value = value
                .to_str()
                .map_err(|_| ApiError::BadRequest("the Authorization header is not text".into()))?;
            match value.split_once(' ') {
                Some((scheme, token))
                    if scheme.eq_ignore_ascii_case("bearer") && !token.trim().is_empty() =>
                {
                    Ok(Some(token.trim()))
                }
                _ => Err(ApiError::BadRequest(
                    "the Authorization header must read 'Bearer <token>'".into(),
                )),
            }
        }
    }
}

/// The seat of a token, or 403.
async fn seat_of(app: &App, slot: &Arc<Slot>, token: &str) -> Result<u16, ApiError> {
    app.games.seat_of(slot, token).await
}

/// The audience of a request: the seat of its token, or the spectators without one.
async fn audience(app: &App, slot: &Arc<Slot>, token: Option<&str>) -> Result<Audience, ApiError> {
    match token {
        Some(token) => Ok(Some(Owner(seat_of(app, slot, token).await?))),
        None => Ok(None),
    }
}

// ----- schemas of the API document -----

/// `{"error": code, "message": words}`; a stale submission adds `current_seq`.
#[derive(ToSchema)]
#[allow(dead_code)]
struct ErrorBody {
    /// A machine-readable code: bad_request, unauthorized, forbidden, not_found, method_not_allowed,
    /// stale, seat_taken,
    /// finished, stopped, refused, rate_limited, too_large, full, busy, moved, unavailable, shutting_down,
    /// internal.
    error: String,
    /// What happened, in words.
    message: String,
    /// With `stale`: the game's sequence number now.
    current_seq: Option<u64>,
}

/// A game to create.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateGame {
    /// The ruleset: `id` or `id@version`, as `GET /api/rulesets` lists them.
    pub ruleset: String,
    /// The number of players.
    pub players: u16,
    /// The random seed; leave it out and the server draws one it never tells (a known seed lets
    /// whoever knows it work out hidden state).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The ruleset's configuration (its options, `GET /api/rulesets`); `{}` for the defaults.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub config: Option<Value>,
    /// Seats to leave without a token, for others to join (`POST /api/games/{id}/join`).
    #[serde(default)]
    pub open_seats: Vec<u32>,
}

/// A seat to join.
#[derive(Deserialize, ToSchema, Default)]
#[serde(deny_unknown_fields)]
pub struct JoinGame {
    /// The seat; leave it out for the first free one.
    #[serde(default)]
    pub seat: Option<u32>,
}

/// A seat joined.
#[derive(serde::Serialize, ToSchema)]
pub struct Joined {
    /// The game.
    pub game: u64,
    /// The seat.
    pub seat: u32,
    /// Its secret token: send it as `Authorization: Bearer <token>`. It is shown once.
    pub token: String,
}

/// An action to submit.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SubmitAction {
    /// The action, as the ruleset reads it (one of `GET /api/games/{id}/legal`).
    #[schema(value_type = Object)]
    pub action: Box<RawValue>,
    /// Refuse with 409 unless the game is at this sequence number (the number of actions applied).
    #[serde(default)]
    pub expected_seq: Option<u64>,
    /// An idempotency key (at most 128 bytes): a retry with the same key answers the first result and
    /// applies nothing. The `Idempotency-Key` header does the same.
    #[serde(default)]
    pub key: Option<String>,
}

/// The lobby's query; each part is optional.
#[derive(Default, Deserialize, utoipa::IntoParams)]
#[serde(default)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// Only games with a free seat.
    pub open: Option<bool>,
    /// Only games with an id above this one (paging).
    pub after: Option<u64>,
    /// At most this many (default 100, at most 1000).
    pub limit: Option<usize>,
}

/// Where a history or a WebSocket starts; each part is optional.
#[derive(Default, Deserialize, utoipa::IntoParams)]
#[serde(default)]
#[into_params(parameter_in = Query)]
pub struct SinceQuery {
    /// The actions after this sequence number (0: from the start).
    pub since: Option<u64>,
    /// `GET /events` only: at most this many actions (default and most: the server's history page,
    /// 500); page on with `since` set to the last one's `seq`.
    pub limit: Option<u64>,
    /// For a WebSocket from a browser, which cannot set headers: the seat's token.
    pub token: Option<String>,
}

/// A message of a game: `view` (the table and resources an audience sees), `action` (one action as
/// the audience reads it), `hello`, `acted`, `legal`, `stopped`, `lagged` or `error`. See
/// docs/SERVER.md for each.
#[derive(ToSchema)]
#[allow(dead_code)]
struct GameMessage {
    /// The kind of message.
    r#type: String,
    /// The sequence number it is about.
    seq: Option<u64>,
}

/// A ruleset the server hosts: its key, where it came from, and its full description (actions,
/// options, vocabulary).
#[derive(ToSchema)]
#[allow(dead_code)]
struct RulesetInfo {
    /// `id@version`.
    key: String,
    /// `static` or the library it was loaded from.
    origin: String,
    /// The ruleset's description.
    #[schema(value_type = Object)]
    description: Value,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Coffer game server",
        description = "Host games of every loaded ruleset: create, join, act, watch. Errors are \
                       {\"error\": code, \"message\": words}. Seat requests carry 'Authorization: Bearer <token>'."
    ),
    paths(
        healthz,
        metrics,
        rulesets,
        list_games,
        create_game,
        game_summary,
        join_game,
        view,
        legal,
        act,
        events,
        websocket
    ),
    components(schemas(
        ErrorBody,
        CreateGame,
        JoinGame,
        Joined,
        SubmitAction,
        Summary,
        Created,
        GameMessage,
        RulesetInfo
    ))
)]
struct ApiDoc;

// ----- handlers -----

/// Whether the server runs: 200 `{"status":"ok"}`, 503 while it shuts down.
#[utoipa::path(get, path = "/healthz", responses(
    (status = 200, description = "Serving", body = Object),
    (status = 503, description = "Shutting down", body = ErrorBody)
))]
async fn healthz(State(app): State<App>) -> Response {
    if *app.shutdown.borrow() {
        return ApiError::ShuttingDown.into_response();
    }
    Json(json!({"status": "ok", "games": app.games.len()})).into_response()
}

/// The metrics, in Prometheus' text format.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text", body = String)))]
async fn metrics(State(app): State<App>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        app.games.metrics().render(),
    )
        .into_response()
}

async fn openapi(State(app): State<App>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        app.openapi.as_str().to_owned(),
    )
        .into_response()
}

/// The rulesets this server hosts, with their descriptions.
#[utoipa::path(get, path = "/api/rulesets", responses((status = 200, body = [RulesetInfo])))]
async fn rulesets(State(app): State<App>) -> Json<Value> {
    let list: Vec<Value> = app
        .games
        .registry()
        .iter()
        .map(|entry| {
            let description = entry.ruleset.description();
            json!({
                "key": entry.key(),
                "origin": entry.origin.to_string(),
                "description": description,
                "web_view": crate::web::view_for(&description.id),
            })
        })
        .collect();
    Json(Value::Array(list))
}

/// The lobby: hosted games in id order.
#[utoipa::path(get, path = "/api/games", params(ListQuery), responses(
    (status = 200, body = [Summary]),
    (status = 400, body = ErrorBody)
))]
async fn list_games(
    State(app): State<App>,
    Params(query): Params<ListQuery>,
) -> Json<Vec<Summary>> {
    let limit = query.limit.unwrap_or(100).clamp(1, 1000);
    Json(
        app.games
            .list(query.open.unwrap_or(false), query.after.unwrap_or(0), limit),
    )
}

/// Creates a game; answers a token for every seat not left open. Tokens are shown only here.
#[utoipa::path(post, path = "/api/games", request_body = CreateGame, responses(
    (status = 201, body = Created),
    (status = 400, description = "Malformed, or refused by the ruleset", body = ErrorBody),
    (status = 404, description = "No such ruleset", body = ErrorBody),
    (status = 413, body = ErrorBody),
    (status = 503, description = "The server hosts as many games as it may", body = ErrorBody)
))]
async fn create_game(
    State(app): State<App>,
    client: Option<Extension<ClientAddr>>,
    Body(body): Body<CreateGame>,
) -> Result<Response, ApiError> {
    let config = match body.config {
        None | Some(Value::Null) => json!({}),
        Some(config) => config,
    };
    let created = app
        .games
        .create(Create {
            ruleset: body.ruleset,
            players: body.players,
            seed: body.seed,
            config,
            open_seats: body.open_seats,
            client: client.map(|Extension(ClientAddr(addr))| addr),
        })
        .await?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

/// One game as the lobby shows it.
#[utoipa::path(get, path = "/api/games/{id}", params(("id" = u64, Path, description = "The game's id")), responses(
    (status = 200, body = Summary),
    (status = 404, body = ErrorBody)
))]
async fn game_summary(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
) -> Result<Json<Summary>, ApiError> {
    Ok(Json(app.games.find(id).await?.summary()))
}

/// Takes a free seat: answers its token.
#[utoipa::path(post, path = "/api/games/{id}/join", params(("id" = u64, Path, description = "The game's id")),
    request_body = JoinGame, responses(
    (status = 200, body = Joined),
    (status = 400, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, description = "That seat is taken, or none is free", body = ErrorBody)
))]
async fn join_game(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    RawBody(body): RawBody,
) -> Result<Json<Joined>, ApiError> {
    let join: JoinGame = if body.iter().all(u8::is_ascii_whitespace) {
        JoinGame::default()
    } else {
        parse_json(&body, app.games.limits().max_json_depth)?
    };
    let (seat, token) = app.games.join(id, join.seat).await?;
    Ok(Json(Joined {
        game: id,
        seat,
        token,
    }))
}

/// What the caller's seat (its token) or a spectator (no token) sees now: `{"type":"view", "seq",
/// "seat", "view": {"table", "resources"}}`.
#[utoipa::path(get, path = "/api/games/{id}/view", params(("id" = u64, Path, description = "The game's id")),
    security((), ("bearer" = [])), responses(
    (status = 200, body = GameMessage),
    (status = 400, body = ErrorBody),
    (status = 403, description = "Not a seat of this game", body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, description = "The game is stopped", body = ErrorBody)
))]
async fn view(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
) -> Result<Json<Value>, ApiError> {
    let slot = app.games.find(id).await?;
    let audience = audience(&app, &slot, bearer(&headers)?).await?;
    Ok(Json(app.games.view(&slot, audience).await?))
}

/// The legal actions of the caller's seat now: `{"seq", "actions": [...]}`.
#[utoipa::path(get, path = "/api/games/{id}/legal", params(("id" = u64, Path, description = "The game's id")),
    security(("bearer" = [])), responses(
    (status = 200, body = Object),
    (status = 400, body = ErrorBody),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody)
))]
async fn legal(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let slot = app.games.find(id).await?;
    let token = bearer(&headers)?.ok_or(ApiError::Unauthorized)?;
    let seat = seat_of(&app, &slot, token).await?;
    let legal = app.games.legal(&slot, seat).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        legal.to_json(None),
    )
        .into_response())
}

/// Submits an action for the caller's seat. Answers it as the seat reads it: `{"type":"action", "seq",
/// "actor", "action", "events"}`; a retry with the same idempotency key answers the same and applies
/// nothing.
#[utoipa::path(post, path = "/api/games/{id}/actions", params(
        ("id" = u64, Path, description = "The game's id"),
        ("Idempotency-Key" = Option<String>, Header, description = "Same as the body's `key`")
    ),
    request_body = SubmitAction, security(("bearer" = [])), responses(
    (status = 200, description = "Applied and committed", body = GameMessage, headers(
        ("idempotent-replayed" = String, description = "`true` when this answer repeats an earlier submission's (same key), `false` otherwise")
    )),
    (status = 400, body = ErrorBody),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, description = "Stale expected_seq (with current_seq), game over or stopped", body = ErrorBody),
    (status = 413, body = ErrorBody),
    (status = 422, description = "Refused by the rules, the reason in words", body = ErrorBody),
    (status = 429, body = ErrorBody),
    (status = 503, description = "busy, unavailable (the store or, with several nodes, the game's owner \
        cannot be reached: the message says whether it may have been applied), moved or shutting_down", body = ErrorBody)
))]
async fn act(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
    Body(body): Body<SubmitAction>,
) -> Result<Response, ApiError> {
    let slot = app.games.find(id).await?;
    let token = bearer(&headers)?.ok_or(ApiError::Unauthorized)?;
    let seat = seat_of(&app, &slot, token).await?;
    let header_key = match headers.get("idempotency-key") {
        Some(value) => Some(
            value
                .to_str()
                .map_err(|_| ApiError::BadRequest("the Idempotency-Key header is not text".into()))?
                .to_owned(),
        ),
        None => None,
    };
    let key = check_key(body.key.or(header_key))?;
    // Passed on by another node that believed this one owns the game: never passed on again.
    if headers.contains_key(FORWARDED_HEADER) && !app.games.owns(&slot) {
        return Err(ApiError::Moved(id));
    }
    app.admit(id, seat)?;
    let acted = app
        .games
        .act(
            &slot,
            Submit {
                seat,
                action: body.action,
                expected_seq: body.expected_seq,
                key,
            },
            token,
        )
        .await?;
    let replayed = if acted.first { "false" } else { "true" };
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (HeaderName::from_static(REPLAYED_HEADER), replayed),
        ],
        acted.answer.to_string(),
    )
        .into_response())
}

fn check_key(key: Option<String>) -> Result<Option<String>, ApiError> {
    match key {
        Some(key) if key.is_empty() || key.len() > MAX_KEY_LEN => Err(ApiError::BadRequest(
            format!("an idempotency key has 1 to {MAX_KEY_LEN} bytes"),
        )),
        other => Ok(other),
    }
}

/// The actions after `since`, each as the caller's seat (or a spectator) reads it.
#[utoipa::path(get, path = "/api/games/{id}/events", params(("id" = u64, Path, description = "The game's id"), SinceQuery),
    security((), ("bearer" = [])), responses(
    (status = 200, body = [GameMessage]),
    (status = 400, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, body = ErrorBody)
))]
async fn events(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
    client: Option<Extension<ClientAddr>>,
    Params(query): Params<SinceQuery>,
) -> Result<Response, ApiError> {
    app.admit_read(client.map(|Extension(client)| client))?;
    let slot = app.games.find(id).await?;
    let token = bearer(&headers)?.or(query.token.as_deref());
    let audience = audience(&app, &slot, token).await?;
    let since = query.since.unwrap_or(0).min(slot.seq());
    let until = match query.limit {
        Some(0) => return Err(ApiError::BadRequest("limit is at least 1".into())),
        Some(limit) => slot.seq().min(since.saturating_add(limit)),
        None => slot.seq(),
    };
    let history = app.games.history(&slot, audience, since, until).await?;
    let mut body = String::from("[");
    for (i, message) in history.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(message);
    }
    body.push(']');
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The game's live feed over a WebSocket (see docs/SERVER.md, "WebSocket"): `hello`, the actions
/// after `since` if given, the view, then every change as it is committed. A seat (its token) may
/// also act through it.
#[utoipa::path(get, path = "/api/games/{id}/ws", params(("id" = u64, Path, description = "The game's id"), SinceQuery),
    responses(
    (status = 101, description = "Switching to the WebSocket protocol"),
    (status = 400, description = "Not a WebSocket request", body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody)
))]
async fn websocket(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
    client: Option<Extension<ClientAddr>>,
    connection: Option<Extension<crate::clients::ConnectionShare>>,
    Params(query): Params<SinceQuery>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    // A socket that asks for history reads it: counted like `GET /events`.
    if query.since.is_some() {
        app.admit_read(client.map(|Extension(client)| client))?;
    }
    let slot = app.games.find(id).await?;
    let token = bearer(&headers)?.or(query.token.as_deref());
    let audience = audience(&app, &slot, token).await?;
    let socket_slot = match audience {
        Some(Owner(seat)) => Some(app.take_socket(id, seat)?),
        None => None,
    };
    let upgrade = upgrade.map_err(|_| {
        ApiError::BadRequest("this route is a WebSocket: connect with a WebSocket client".into())
    })?;
    if *app.shutdown.borrow() {
        return Err(ApiError::ShuttingDown);
    }
    let permit = match &app.connections {
        Some(connections) => Some(Arc::clone(connections).try_acquire_owned().map_err(|_| {
            app.games.metrics().connections_refused.inc();
            ApiError::Full(
                "the server has as many connections open as it may: try again later".into(),
            )
        })?),
        None => None,
    };
    // The socket keeps the place its connection held in the address's share of connections.
    let share = connection.and_then(|Extension(connection)| connection.take_over());
    let size = app.games.limits().max_ws_message_bytes;
    let token: Option<Arc<str>> = token.map(Arc::from);
    Ok(upgrade
        .max_message_size(size)
        .max_frame_size(size)
        .on_upgrade(move |socket| async move {
            session(app, slot, audience, token, query.since, socket).await;
            drop(permit);
            drop(share);
            drop(socket_slot);
        }))
}

/// What a client may send over the WebSocket: `{"type":"act","action":{...},"expected_seq":N,"key":"k"}`,
/// `{"type":"legal"}` or `{"type":"view"}`. Read as one struct and checked by hand: a raw action cannot
/// be read inside an internally tagged enum (serde buffers it first, which `RawValue` refuses).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ClientMessage {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    action: Option<Box<RawValue>>,
    #[serde(default)]
    expected_seq: Option<u64>,
    #[serde(default)]
    key: Option<String>,
}

/// What a WebSocket client asks for.
enum ClientRequest {
    Act {
        action: Box<RawValue>,
        expected_seq: Option<u64>,
        key: Option<String>,
    },
    Legal,
    View,
}

impl ClientMessage {
    fn request(self) -> Option<ClientRequest> {
        let bare = self.action.is_none() && self.expected_seq.is_none() && self.key.is_none();
        match (self.kind.as_str(), self.action) {
            ("act", Some(action)) => Some(ClientRequest::Act {
                action,
                expected_seq: self.expected_seq,
                key: self.key,
            }),
            ("legal", _) if bare => Some(ClientRequest::Legal),
            ("view", _) if bare => Some(ClientRequest::View),
            _ => None,
        }
    }
}

async fn session(
    app: App,
    slot: Arc<Slot>,
    audience: Audience,
    token: Option<Arc<str>>,
    since: Option<u64>,
    socket: WebSocket,
) {
    let metrics = Arc::clone(app.games.metrics());
    metrics.connected_clients.inc();
    let (mut sink, mut stream) = socket.split();
    let result = run_session(
        &app,
        &slot,
        (audience, token.as_deref()),
        since,
        &mut sink,
        &mut stream,
    )
    .await;
    // The session's feed receiver is gone: a game nobody watches keeps no channel.
    slot.unsubscribe(audience);
    let frame = result.unwrap_or_default();
    if let Some(frame) = frame {
        let _ = sink.send(Message::Close(Some(frame))).await;
    }
    let _ = sink.close().await;
    metrics.connected_clients.dec();
}

type Sink = futures_util::stream::SplitSink<WebSocket, Message>;
type Stream = futures_util::stream::SplitStream<WebSocket>;

fn close(code: u16, reason: &str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

async fn send(sink: &mut Sink, text: &str) -> Result<(), axum::Error> {
    trace_message("sent", text);
    sink.send(Message::Text(text.into())).await
}

/// Logs a WebSocket message at TRACE by its `type` alone: its other fields (a seat's view, an action)
/// stay out of the logs.
fn trace_message(what: &'static str, text: &str) {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    if tracing::enabled!(tracing::Level::TRACE) {
        let kind = serde_json::from_str::<Kind<'_>>(text)
            .ok()
            .and_then(|k| k.kind)
            .unwrap_or(std::borrow::Cow::Borrowed("(untyped)"));
        tracing::trace!(kind = %crate::games::clip(&kind, 32), "websocket message {what}");
    }
}

/// Runs one WebSocket until it ends; answers the close frame to send, if any.
async fn run_session(
    app: &App,
    slot: &Arc<Slot>,
    (audience, token): (Audience, Option<&str>),
    since: Option<u64>,
    sink: &mut Sink,
    stream: &mut Stream,
) -> Result<Option<CloseFrame>, axum::Error> {
    let mut feed = slot.subscribe(audience);
    let view = match app.games.view(slot, audience).await {
        Ok(view) => view,
        Err(error) => {
            send(sink, &ws_error(&error, None)).await?;
            return Ok(Some(close(1011, "game unavailable")));
        }
    };
    let mut seen = view["seq"].as_u64().unwrap_or(0);
    let hello = json!({
        "type": "hello",
        "game": slot.id().0,
        "seat": audience,
        "players": slot.players(),
        "ruleset": slot.description().map(|d| d.key()),
        "seq": seen,
    });
    send(sink, &hello.to_string()).await?;
    if let Some(since) = since {
        // Page by page: each page is one bounded history read.
        let mut from = since.min(seen);
        while from < seen {
            match app.games.history(slot, audience, from, seen).await {
                Ok(history) if history.is_empty() => break,
                Ok(history) => {
                    from += history.len() as u64;
                    for message in history {
                        send(sink, &message).await?;
                    }
                }
                Err(error) => {
                    send(sink, &ws_error(&error, None)).await?;
                    return Ok(Some(close(
                        1011,
                        "history unavailable: reconnect with since",
                    )));
                }
            }
        }
    }
    send(sink, &view.to_string()).await?;

    let period = app.games.limits().ws_ping;
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut last_heard = Instant::now();
    let mut shutdown = app.shutdown.clone();
    loop {
        tokio::select! {
            news = feed.recv() => match news {
                Ok((seq, message)) => {
                    if seq == u64::MAX || seq > seen {
                        if seq != u64::MAX {
                            seen = seq;
                        }
                        send(sink, &message).await?;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let message = json!({"type": "lagged", "message": format!(
                        "this connection fell too far behind; reconnect with since={seen}")});
                    send(sink, &message.to_string()).await?;
                    return Ok(Some(close(1008, "lagged: reconnect with since")));
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(Some(close(1011, "game closed"))),
            },
            incoming = stream.next() => {
                let Some(incoming) = incoming else { return Ok(None) };
                last_heard = Instant::now();
                let incoming = match incoming {
                    Ok(incoming) => incoming,
                    // Past `max_ws_message_bytes`: closed with 1009 (message too big), as documented.
                    Err(error) if too_big(&error) => {
                        return Ok(Some(close(1009, "message too big")));
                    }
                    Err(error) => return Err(error),
                };
                match incoming {
                    Message::Text(text) => {
                        trace_message("received", &text);
                        let answer = client_message(app, slot, (audience, token), text.as_bytes()).await;
                        send(sink, &answer).await?;
                    }
                    Message::Binary(_) => {
                        let error = ApiError::BadRequest("messages are JSON text, not binary".into());
                        send(sink, &ws_error(&error, None)).await?;
                    }
                    Message::Close(_) => return Ok(None),
                    Message::Ping(_) | Message::Pong(_) => {}
                }
            },
            _ = ping.tick() => {
                if last_heard.elapsed() > period * 2 {
                    return Ok(Some(close(1001, "idle: no answer to pings")));
                }
                sink.send(Message::Ping(Bytes::new())).await?;
            },
            _ = shutdown.changed() => return Ok(Some(close(1001, "the server is shutting down"))),
        }
    }
}

/// Whether a WebSocket read failed because the client's message or frame passed the size limit.
fn too_big(error: &axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error as WsError;
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<WsError>())
        .is_some_and(|source| matches!(source, WsError::Capacity(_)))
}

fn ws_error(error: &ApiError, key: Option<&str>) -> String {
    let mut body = error.body();
    body["type"] = json!("error");
    if let Some(key) = key {
        body["key"] = json!(key);
    }
    body.to_string()
}

/// Answers one client message.
async fn client_message(
    app: &App,
    slot: &Arc<Slot>,
    (audience, token): (Audience, Option<&str>),
    text: &[u8],
) -> String {
    let message = parse_json::<ClientMessage>(text, app.games.limits().max_json_depth)
        .ok()
        .and_then(ClientMessage::request);
    let message = match message {
        Some(message) => message,
        None => {
            let error = ApiError::BadRequest(
                "expected {\"type\":\"act\",\"action\":{...}}, {\"type\":\"legal\"} or {\"type\":\"view\"}".into(),
            );
            return ws_error(&error, None);
        }
    };
    match message {
        ClientRequest::View => match app.games.view(slot, audience).await {
            Ok(view) => view.to_string(),
            Err(error) => ws_error(&error, None),
        },
        ClientRequest::Legal => {
            let Some(Owner(seat)) = audience else {
                return ws_error(&ApiError::Unauthorized, None);
            };
            match app.games.legal(slot, seat).await {
                Ok(legal) => legal.to_json(Some("legal")),
                Err(error) => ws_error(&error, None),
            }
        }
        ClientRequest::Act {
            action,
            expected_seq,
            key,
        } => {
            let (Some(Owner(seat)), Some(token)) = (audience, token) else {
                return ws_error(&ApiError::Unauthorized, key.as_deref());
            };
            let key = match check_key(key) {
                Ok(key) => key,
                Err(error) => return ws_error(&error, None),
            };
            if let Err(error) = app.admit(slot.id().0, seat) {
                return ws_error(&error, key.as_deref());
            }
            let submit = Submit {
                seat,
                action,
                expected_seq,
                key: key.clone(),
            };
            match app.games.act(slot, submit, token).await {
                Ok(acted) => {
                    json!({"type": "acted", "seq": acted.seq, "key": key, "first": acted.first})
                        .to_string()
                }
                Err(error) => ws_error(&error, key.as_deref()),
            }
        }
    }
}

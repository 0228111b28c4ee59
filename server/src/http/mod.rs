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
use crate::games::GameError;
use crate::games::{
    Audience, Create, Created, FORWARDED_HEADER, Games, MAX_KEY_LEN, REPLAYED_HEADER, Slot, Submit,
    Summary,
};
use crate::limits::too_deep;
use coffer_core::Owner;

mod auth;
mod extract;
mod openapi;
mod routes;
mod ws;

pub use extract::{Body, GameIdPath, Params, RawBody};
pub use openapi::{
    CreateGame, JoinGame, Joined, ListQuery, SinceQuery, SubmitAction, Then, ThenQuery,
};

use auth::*;
use extract::*;
use openapi::*;
use routes::*;
use ws::*;

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
            return Err(GameError::Quota(format!(
                "seat {seat} of game {game} has {max} WebSockets open, its limit: close one first"
            ))
            .into());
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
            GameError::RateLimited {
                retry_after: not_until.wait_time_from(DefaultClock::default().now()),
            }
            .into()
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
        .route("/api/games/{id}/resign", post(resign))
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

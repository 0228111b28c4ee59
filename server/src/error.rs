//! What the API answers when it refuses or fails: an HTTP status and a JSON body
//! `{"error": "<code>", "message": "<in words>", ...}`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::time::Duration;

/// Why a request was refused or failed. Every message speaks the game's words or the API's, never a
/// kernel type's, and never holds another seat's hidden state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApiError {
    /// The request is malformed: not JSON, a missing or wrong field, too deep.
    #[error("{0}")]
    BadRequest(String),
    /// A seat's request without a token.
    #[error(
        "this request needs a seat's token: send the header 'Authorization: Bearer <token>' (or, for a WebSocket, '?token=<token>')"
    )]
    Unauthorized,
    /// A token that is not one of this game's seats.
    #[error("this token is not a seat of game {0}")]
    Forbidden(u64),
    /// No such game, route or seat.
    #[error("{0}")]
    NotFound(String),
    /// `expected_seq` is not the game's sequence number: someone acted first. Nothing was applied.
    #[error(
        "the game is at action {current}, not {expected}: someone acted first; nothing was applied"
    )]
    Stale {
        /// The sequence number the client expected.
        expected: u64,
        /// The game's sequence number now.
        current: u64,
    },
    /// The seat asked for is taken, or no seat is free.
    #[error("{0}")]
    SeatTaken(String),
    /// The game has ended.
    #[error("game {0} is over: it takes no more actions")]
    Finished(u64),
    /// The game is stopped (quarantined) and takes no more requests; why, in words.
    #[error("{0}")]
    Stopped(String),
    /// The ruleset refused the action; the game is unchanged.
    #[error("{message}")]
    Refused {
        /// Why, in the game's words.
        message: String,
    },
    /// Past the seat's action rate.
    #[error("too many actions from this seat: wait {:.3} s", retry_after.as_secs_f64())]
    RateLimited {
        /// How long until the next action is accepted.
        retry_after: Duration,
    },
    /// Past the reads one client address may make per second (history, WebSocket opens).
    #[error("too many reads from this address: wait {:.3} s", retry_after.as_secs_f64())]
    ReadLimited {
        /// How long until the next read is accepted.
        retry_after: Duration,
    },
    /// The request body is larger than the limit.
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    /// The server hosts as many games as it may.
    #[error("{0}")]
    Full(String),
    /// The game was busy for longer than the plugin deadline.
    #[error("game {0} is busy: try again")]
    Busy(u64),
    /// With several nodes: another node owns this game now, and the request could not be passed on to
    /// it; nothing was applied. Try again.
    #[error("game {0} moved to another server node: try again")]
    Moved(u64),
    /// The server cannot do this now (its store or the node owning the game cannot be reached); what it
    /// could not do is said, and whether anything was applied.
    #[error("{0}")]
    Unavailable(String),
    /// The server is saturated: every slot for what the request needs (a history replay, a thread for
    /// a ruleset's call) stayed busy for as long as a request may wait. Nothing was applied, and no
    /// game is at fault: try again after `Retry-After`.
    #[error("{0}")]
    Saturated(String),
    /// A client's quota is used up (games or connections per client); what, in words.
    #[error("{0}")]
    Quota(String),
    /// The game a request would create is larger than the server's per-game budget.
    #[error("{0}")]
    GameTooLarge(String),
    /// The request's body did not arrive within the server's body timeout.
    #[error("the request body did not arrive within {0} s")]
    BodyTimeout(u64),
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// A failure of the server (its store); the message says what, without internals of the game.
    #[error("{0}")]
    Internal(String),
}

#[derive(Serialize)]
struct Body<'a> {
    error: &'a str,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    current_seq: Option<u64>,
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Stale { .. }
            | ApiError::SeatTaken(_)
            | ApiError::Finished(_)
            | ApiError::Stopped(_) => StatusCode::CONFLICT,
            ApiError::Refused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::RateLimited { .. } | ApiError::ReadLimited { .. } => {
                StatusCode::TOO_MANY_REQUESTS
            }
            ApiError::TooLarge(_) | ApiError::GameTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Quota(_) => StatusCode::TOO_MANY_REQUESTS,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Saturated(_)
            | ApiError::Full(_)
            | ApiError::Busy(_)
            | ApiError::Moved(_)
            | ApiError::Unavailable(_)
            | ApiError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The machine-readable code in the body's `error` field.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::Unauthorized => "unauthorized",
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound(_) => "not_found",
            ApiError::Stale { .. } => "stale",
            ApiError::SeatTaken(_) => "seat_taken",
            ApiError::Finished(_) => "finished",
            ApiError::Stopped(_) => "stopped",
            ApiError::Refused { .. } => "refused",
            ApiError::RateLimited { .. } | ApiError::ReadLimited { .. } => "rate_limited",
            ApiError::TooLarge(_) | ApiError::GameTooLarge(_) => "too_large",
            ApiError::Quota(_) => "quota",
            ApiError::BodyTimeout(_) => "timeout",
            ApiError::Saturated(_) => "saturated",
            ApiError::Full(_) => "full",
            ApiError::Busy(_) => "busy",
            ApiError::Moved(_) => "moved",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::ShuttingDown => "shutting_down",
            ApiError::Internal(_) => "internal",
        }
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::to_value(Body {
            error: self.code(),
            message: self.to_string(),
            current_seq: match self {
                ApiError::Stale { current, .. } => Some(*current),
                _ => None,
            },
        })
        .unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        match &self {
            ApiError::Unauthorized => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            ApiError::Saturated(_) | ApiError::Quota(_) => {
                response
                    .headers_mut()
                    .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
            }
            ApiError::RateLimited { retry_after } | ApiError::ReadLimited { retry_after } => {
                let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
                if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
                    response.headers_mut().insert(header::RETRY_AFTER, value);
                }
            }
            _ => {}
        }
        response
    }
}

//! What the API answers when it refuses or fails: an HTTP status and a JSON body
//! `{"error": "<code>", "message": "<in words>", ...}`.

use crate::games::GameError;
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
    /// No such route or file.
    #[error("{0}")]
    NotFound(String),
    /// Past the reads one client address may make per second (history, WebSocket opens).
    #[error("too many reads from this address: wait {:.3} s", retry_after.as_secs_f64())]
    ReadLimited {
        /// How long until the next read is accepted.
        retry_after: Duration,
    },
    /// The request body is larger than the limit.
    #[error("the request body is larger than {0} bytes")]
    TooLarge(usize),
    /// The request's body did not arrive within the server's body timeout.
    #[error("the request body did not arrive within {0} s")]
    BodyTimeout(u64),
    /// A refusal or failure of the games layer.
    #[error(transparent)]
    Game(#[from] GameError),
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
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::ReadLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::BodyTimeout(_) => StatusCode::REQUEST_TIMEOUT,
            ApiError::Game(e) => match e {
                GameError::Invalid(_) => StatusCode::BAD_REQUEST,
                GameError::Unauthorized => StatusCode::UNAUTHORIZED,
                GameError::Forbidden(_) => StatusCode::FORBIDDEN,
                GameError::NotFound(_) => StatusCode::NOT_FOUND,
                GameError::Stale { .. }
                | GameError::SeatTaken(_)
                | GameError::Finished(_)
                | GameError::Stopped(_) => StatusCode::CONFLICT,
                GameError::Refused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
                GameError::RateLimited { .. } | GameError::Quota(_) => {
                    StatusCode::TOO_MANY_REQUESTS
                }
                GameError::GameTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
                GameError::Saturated(_)
                | GameError::Full(_)
                | GameError::Busy(_)
                | GameError::Moved(_)
                | GameError::Unavailable(_)
                | GameError::ShuttingDown => StatusCode::SERVICE_UNAVAILABLE,
                GameError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            },
        }
    }

    /// The machine-readable code in the body's `error` field.
    pub fn code(&self) -> &'static str {
        match self {
            ApiError::BadRequest(_) => "bad_request",
            ApiError::NotFound(_) => "not_found",
            ApiError::ReadLimited { .. } => "rate_limited",
            ApiError::TooLarge(_) => "too_large",
            ApiError::BodyTimeout(_) => "timeout",
            ApiError::Game(e) => e.code(),
        }
    }

    /// The JSON body.
    pub fn body(&self) -> serde_json::Value {
        serde_json::to_value(Body {
            error: self.code(),
            message: self.to_string(),
            current_seq: match self {
                ApiError::Game(GameError::Stale { current, .. }) => Some(*current),
                _ => None,
            },
        })
        .unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status(), axum::Json(self.body())).into_response();
        let retry_after = match &self {
            ApiError::Game(GameError::Unauthorized) => {
                response
                    .headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
                None
            }
            ApiError::Game(GameError::Saturated(_) | GameError::Quota(_)) => {
                Some(Duration::from_secs(1))
            }
            ApiError::Game(GameError::RateLimited { retry_after })
            | ApiError::ReadLimited { retry_after } => Some(*retry_after),
            _ => None,
        };
        if let Some(wait) = retry_after {
            let secs = wait.as_secs_f64().ceil().max(1.0) as u64;
            if let Ok(value) = HeaderValue::from_str(&secs.to_string()) {
                response.headers_mut().insert(header::RETRY_AFTER, value);
            }
        }
        response
    }
}

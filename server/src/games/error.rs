//! What the games layer answers when it refuses or fails: its own error, in the game's and the server's
//! words, with no transport in it. The HTTP and WebSocket layers give each a status and a code
//! ([`ApiError`](crate::ApiError)).

use std::time::Duration;

/// Why a request to the games layer was refused or failed. Every message speaks the game's words or the
/// server's, never a kernel type's, and never holds another seat's hidden state.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GameError {
    /// The request asks for what cannot be: a seat, option, bot or clock out of range.
    #[error("{0}")]
    Invalid(String),
    /// A seat's request without a token.
    #[error(
        "this request needs a seat's token: send the header 'Authorization: Bearer <token>' (or, for a WebSocket, '?token=<token>')"
    )]
    Unauthorized,
    /// A token that is not one of this game's seats.
    #[error("this token is not a seat of game {0}")]
    Forbidden(u64),
    /// No such game or seat.
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
    /// The game a request would create is larger than the server's per-game budget.
    #[error("{0}")]
    GameTooLarge(String),
    /// A client's quota is used up (games or connections per client); what, in words.
    #[error("{0}")]
    Quota(String),
    /// The server is saturated: every slot for what the request needs (a history replay, a thread for
    /// a ruleset's call) stayed busy for as long as a request may wait. Nothing was applied, and no
    /// game is at fault: try again after `Retry-After`.
    #[error("{0}")]
    Saturated(String),
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
    /// The server is shutting down.
    #[error("the server is shutting down")]
    ShuttingDown,
    /// A failure of the server (its store); the message says what, without internals of the game.
    #[error("{0}")]
    Internal(String),
}

impl GameError {
    /// The machine-readable code the API gives it (the `error` field of a refusal's body, a log's
    /// `code`).
    pub fn code(&self) -> &'static str {
        match self {
            GameError::Invalid(_) => "bad_request",
            GameError::Unauthorized => "unauthorized",
            GameError::Forbidden(_) => "forbidden",
            GameError::NotFound(_) => "not_found",
            GameError::Stale { .. } => "stale",
            GameError::SeatTaken(_) => "seat_taken",
            GameError::Finished(_) => "finished",
            GameError::Stopped(_) => "stopped",
            GameError::Refused { .. } => "refused",
            GameError::RateLimited { .. } => "rate_limited",
            GameError::GameTooLarge(_) => "too_large",
            GameError::Quota(_) => "quota",
            GameError::Saturated(_) => "saturated",
            GameError::Full(_) => "full",
            GameError::Busy(_) => "busy",
            GameError::Moved(_) => "moved",
            GameError::Unavailable(_) => "unavailable",
            GameError::ShuttingDown => "shutting_down",
            GameError::Internal(_) => "internal",
        }
    }
}

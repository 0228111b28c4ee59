//! The OpenAPI document served at `/openapi.json`: the request and response bodies and the `ApiDoc`.

use super::*;

/// `{"error": code, "message": words}`; a stale submission adds `current_seq`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(super) struct ErrorBody {
    /// A machine-readable code: bad_request, unauthorized, forbidden, not_found, method_not_allowed,
    /// stale, seat_taken,
    /// finished, stopped, refused, rate_limited, too_large, full, busy, moved, unavailable, shutting_down,
    /// internal.
    pub(super) error: String,
    /// What happened, in words.
    pub(super) message: String,
    /// With `stale`: the game's sequence number now.
    pub(super) current_seq: Option<u64>,
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
    /// Seats the server plays itself, each with its bot: `{"1": "random"}`. `random` picks any legal
    /// action; `search` plays each legal action out in random playouts (64 a move) and picks the best.
    /// A bot seat has no token; a game whose seats are all bots plays itself to its end.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub bots: std::collections::BTreeMap<u32, String>,
    /// A time control: `{"per_action_ms": N}` (each decision) or `{"bank_ms": N, "increment_ms": M}`
    /// (a bank per seat, M added after each of its actions); 50 ms to 7 days. Left out: no clock.
    #[serde(default)]
    pub clock: Option<crate::store::Clock>,
    /// What happens when a seat's clock runs out: `"bot"` (the default and, for now, the only
    /// policy): the random bot plays that seat's move.
    #[serde(default)]
    pub on_timeout: Option<String>,
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

/// What an action's answer carries besides the action (`POST .../actions?then=legal`).
#[derive(Default, Deserialize, utoipa::IntoParams)]
#[serde(default, deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ThenQuery {
    /// `legal`: a fresh answer also carries `"legal": {"seq", "actions"}`, the seat's own legal actions
    /// after its action, when it may act again (a repeated answer, same key, never does).
    pub then: Option<Then>,
}

/// What an action's answer may carry besides the action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Then {
    /// The seat's own legal actions after its action.
    Legal,
}

/// A message of a game: `view` (the table and resources an audience sees), `action` (one action as
/// the audience reads it), `hello`, `acted`, `legal`, `stopped`, `lagged` or `error`. See
/// docs/SERVER.md for each.
#[derive(ToSchema)]
#[allow(dead_code)]
pub(super) struct GameMessage {
    /// The kind of message.
    r#type: String,
    /// The sequence number it is about.
    pub(super) seq: Option<u64>,
}

/// A ruleset the server hosts: its key, where it came from, and its full description (actions,
/// options, vocabulary).
#[derive(ToSchema)]
#[allow(dead_code)]
pub(super) struct RulesetInfo {
    /// `id@version`.
    pub(super) key: String,
    /// `static` or the library it was loaded from.
    pub(super) origin: String,
    /// The ruleset's description.
    #[schema(value_type = Object)]
    pub(super) description: Value,
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
        resign,
        events,
        websocket
    ),
    components(schemas(
        ErrorBody,
        Then,
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
pub(super) struct ApiDoc;

// ----- handlers -----

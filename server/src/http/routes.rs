//! The handlers of the HTTP routes, each annotated for the OpenAPI document.

use super::*;

/// Whether the server runs: 200 `{"status":"ok"}`, 503 while it shuts down.
#[utoipa::path(get, path = "/healthz", responses(
    (status = 200, description = "Serving", body = Object),
    (status = 503, description = "Shutting down", body = ErrorBody)
))]
pub(super) async fn healthz(State(app): State<App>) -> Response {
    if *app.shutdown.borrow() {
        return ApiError::from(GameError::ShuttingDown).into_response();
    }
    Json(json!({"status": "ok", "games": app.games.len()})).into_response()
}

/// The metrics, in Prometheus' text format.
#[utoipa::path(get, path = "/metrics", responses((status = 200, description = "Prometheus text", body = String)))]
pub(super) async fn metrics(State(app): State<App>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        app.games.metrics().render(),
    )
        .into_response()
}

pub(super) async fn openapi(State(app): State<App>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        app.openapi.as_str().to_owned(),
    )
        .into_response()
}

/// The rulesets this server hosts, with their descriptions.
#[utoipa::path(get, path = "/api/rulesets", responses((status = 200, body = [RulesetInfo])))]
pub(super) async fn rulesets(State(app): State<App>) -> Json<Value> {
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
pub(super) async fn list_games(
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
pub(super) async fn create_game(
    State(app): State<App>,
    client: Option<Extension<ClientAddr>>,
    Body(body): Body<CreateGame>,
) -> Result<Response, ApiError> {
    let mut clock = body.clock;
    match (body.on_timeout.as_deref(), clock.as_mut()) {
        (None | Some("bot"), _) => {}
        (Some("forfeit"), Some(clock)) => clock.forfeit = true,
        (Some("forfeit"), None) => {
            return Err(ApiError::BadRequest(
                "on_timeout: forfeit goes with a clock (\"clock\": {\"per_action_ms\": ...})"
                    .into(),
            ));
        }
        (Some(other), _) => {
            return Err(ApiError::BadRequest(format!(
                "on_timeout: '{}' is not a policy: use \"bot\" or \"forfeit\"",
                crate::games::clip(other, 40)
            )));
        }
    }
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
            bots: body.bots,
            clock,
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
pub(super) async fn game_summary(
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
pub(super) async fn join_game(
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
pub(super) async fn view(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let slot = app.games.find(id).await?;
    let audience = audience(&app, &slot, bearer(&headers)?).await?;
    let view = app.games.view(&slot, audience).await?;
    Ok(([(header::CONTENT_TYPE, "application/json")], view.text).into_response())
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
pub(super) async fn legal(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (slot, _, seat) = seated(&app, id, &headers).await?;
    let legal = app.games.legal(&slot, seat).await?;
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        legal.to_json(None),
    )
        .into_response())
}

/// The caller's seat resigns: the server's random bot plays it for the rest of the game, and its token
/// takes no more actions. Answers `{"game", "seat", "bot": "random"}`.
#[utoipa::path(post, path = "/api/games/{id}/resign", params(("id" = u64, Path, description = "The game's id")),
    security(("bearer" = [])), responses(
    (status = 200, description = "The seat is the bot's now, or it forfeited (`on_timeout: forfeit`)", body = Object),
    (status = 401, body = ErrorBody),
    (status = 403, body = ErrorBody),
    (status = 404, body = ErrorBody),
    (status = 409, description = "The game is over or stopped, or a bot plays the seat already", body = ErrorBody),
    (status = 503, description = "moved: another node owns the game", body = ErrorBody)
))]
pub(super) async fn resign(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (slot, _, seat) = seated(&app, id, &headers).await?;
    if !app.games.owns(&slot) {
        return Err(GameError::Moved(id).into());
    }
    let body = match app.games.resign(&slot, seat).await? {
        crate::games::Left::Forfeited => json!({"game": id, "seat": seat, "forfeited": true}),
        crate::games::Left::ToBot => json!({"game": id, "seat": seat, "bot": "random"}),
    };
    Ok(Json(body).into_response())
}

/// Submits an action for the caller's seat. Answers it as the seat reads it: `{"type":"action", "seq",
/// "actor", "action", "events"}`; a retry with the same idempotency key answers the same and applies
/// nothing. With `then=legal`, a fresh answer also carries `"legal": {"seq", "actions"}` (the seat's own
/// legal actions after it, as `GET legal` would answer them) when the seat may act again.
#[utoipa::path(post, path = "/api/games/{id}/actions", params(
        ("id" = u64, Path, description = "The game's id"), ThenQuery,
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
pub(super) async fn act(
    State(app): State<App>,
    GameIdPath(id): GameIdPath,
    headers: HeaderMap,
    Params(then): Params<ThenQuery>,
    Body(body): Body<SubmitAction>,
) -> Result<Response, ApiError> {
    let (slot, token, seat) = seated(&app, id, &headers).await?;
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
        return Err(GameError::Moved(id).into());
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
        match then.then {
            Some(Then::Legal) => with_legal(&acted.answer, acted.legal.as_ref()),
            None => acted.answer.to_string(),
        },
    )
        .into_response())
}

/// The answer to an action with the seat's own legal actions after it, when it may act again:
/// `{..., "legal": {"seq": N, "actions": [...]}}`, the shape a WebSocket push carries them in.
fn with_legal(answer: &str, legal: Option<&crate::games::Legal>) -> String {
    match (legal, answer.strip_suffix('}')) {
        (Some(legal), Some(open)) => format!(r#"{open},"legal":{}}}"#, legal.to_json(None)),
        _ => answer.to_owned(),
    }
}

pub(super) fn check_key(key: Option<String>) -> Result<Option<String>, ApiError> {
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
pub(super) async fn events(
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

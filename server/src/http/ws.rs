//! The WebSocket of a game: the upgrade, the session and the client messages it answers.

use super::*;

/// The read buffer of a WebSocket connection, in bytes (see where it is set).
pub(crate) const WS_READ_BUFFER: usize = 4096;

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
pub(super) async fn websocket(
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
        return Err(GameError::ShuttingDown.into());
    }
    let permit = match &app.connections {
        Some(connections) => Some(Arc::clone(connections).try_acquire_owned().map_err(|_| {
            app.games.metrics().connections_refused.inc();
            ApiError::from(GameError::Full(
                "the server has as many connections open as it may: try again later".into(),
            ))
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
        // Each read zero-fills the read buffer's free space first (tungstenite's `read_in`): the
        // default 128 KiB was 7% of the server's CPU under load, for client messages of a few hundred
        // bytes. A larger message is read in more than one call.
        .read_buffer_size(WS_READ_BUFFER)
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
pub(super) struct ClientMessage {
    #[serde(rename = "type")]
    pub(super) kind: String,
    #[serde(default)]
    pub(super) action: Option<Box<RawValue>>,
    #[serde(default)]
    pub(super) expected_seq: Option<u64>,
    #[serde(default)]
    pub(super) key: Option<String>,
}

/// What a WebSocket client asks for.
pub(super) enum ClientRequest {
    Act {
        action: Box<RawValue>,
        expected_seq: Option<u64>,
        key: Option<String>,
    },
    Legal,
    View,
}

impl ClientMessage {
    pub(super) fn request(self) -> Option<ClientRequest> {
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

pub(super) async fn session(
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
    if let Some(Owner(seat)) = audience {
        app.games.seat_connected(&slot, seat);
    }
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
    if let Some(Owner(seat)) = audience {
        app.games.seat_disconnected(&slot, seat);
    }
    let frame = result.unwrap_or_default();
    if let Some(frame) = frame {
        let _ = sink.send(Message::Close(Some(frame))).await;
    }
    let _ = sink.close().await;
    metrics.connected_clients.dec();
}

pub(super) type Sink = futures_util::stream::SplitSink<WebSocket, Message>;
pub(super) type Stream = futures_util::stream::SplitStream<WebSocket>;

pub(super) fn close(code: u16, reason: &str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

pub(super) async fn send(sink: &mut Sink, text: &str) -> Result<(), axum::Error> {
    trace_message("sent", text);
    sink.send(Message::Text(text.into())).await
}

/// Queues a message without writing it to the socket yet: the caller flushes once for several (one
/// `send` system call for an answer and the broadcasts already waiting, 9% of the server's CPU under
/// WebSocket load when each was written on its own).
async fn queue(sink: &mut Sink, text: &str) -> Result<(), axum::Error> {
    trace_message("sent", text);
    sink.feed(Message::Text(text.into())).await
}

/// What the feed gave one client, and what to do about it.
enum Fed {
    /// Sent (or already seen): go on.
    Sent,
    /// The connection is to be closed with this frame.
    Close(CloseFrame),
}

/// What the feed holds now, without waiting, as `recv` would answer it; `None` when it holds nothing.
fn ready(
    feed: &mut broadcast::Receiver<(u64, Arc<str>)>,
) -> Option<Result<(u64, Arc<str>), broadcast::error::RecvError>> {
    use broadcast::error::{RecvError, TryRecvError};
    match feed.try_recv() {
        Ok(next) => Some(Ok(next)),
        Err(TryRecvError::Empty) => None,
        Err(TryRecvError::Lagged(n)) => Some(Err(RecvError::Lagged(n))),
        Err(TryRecvError::Closed) => Some(Err(RecvError::Closed)),
    }
}

/// Queues the feed's `news` for the client if it is newer than `seen`, then whatever else the feed already
/// holds, then flushes everything queued (an answer queued before included) in one write.
async fn forward(
    sink: &mut Sink,
    feed: &mut broadcast::Receiver<(u64, Arc<str>)>,
    seen: &mut u64,
    news: Option<Result<(u64, Arc<str>), broadcast::error::RecvError>>,
) -> Result<Fed, axum::Error> {
    use broadcast::error::RecvError;
    let mut news = news;
    while let Some(next) = news {
        match next {
            Ok((seq, message)) => {
                if seq == u64::MAX || seq > *seen {
                    if seq != u64::MAX {
                        *seen = seq;
                    }
                    queue(sink, &message).await?;
                }
            }
            Err(RecvError::Lagged(_)) => {
                let message = json!({"type": "lagged", "message": format!(
                    "this connection fell too far behind; reconnect with since={seen}")});
                queue(sink, &message.to_string()).await?;
                sink.flush().await?;
                return Ok(Fed::Close(close(1008, "lagged: reconnect with since")));
            }
            Err(RecvError::Closed) => {
                sink.flush().await?;
                return Ok(Fed::Close(close(1011, "game closed")));
            }
        }
        news = ready(feed);
    }
    sink.flush().await?;
    Ok(Fed::Sent)
}

/// Logs a WebSocket message at TRACE by its `type` alone: its other fields (a seat's view, an action)
/// stay out of the logs.
pub(super) fn trace_message(what: &'static str, text: &str) {
    #[derive(Deserialize)]
    struct Kind<'a> {
        #[serde(rename = "type", borrow)]
        kind: Option<std::borrow::Cow<'a, str>>,
    }
    if tracing::enabled!(target: "coffer_server::http", tracing::Level::TRACE) {
        let kind = serde_json::from_str::<Kind<'_>>(text)
            .ok()
            .and_then(|k| k.kind)
            .unwrap_or(std::borrow::Cow::Borrowed("(untyped)"));
        tracing::trace!(target: "coffer_server::http", kind = %crate::games::clip(&kind, 32), "websocket message {what}");
    }
}

/// Runs one WebSocket until it ends; answers the close frame to send, if any.
pub(super) async fn run_session(
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
            send(sink, &ws_error(&ApiError::from(error), None)).await?;
            return Ok(Some(close(1011, "game unavailable")));
        }
    };
    let mut seen = view.seq;
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
                    send(sink, &ws_error(&ApiError::from(error), None)).await?;
                    return Ok(Some(close(
                        1011,
                        "history unavailable: reconnect with since",
                    )));
                }
            }
        }
    }
    send(sink, &view.text).await?;

    let period = app.games.limits().ws_ping;
    let mut ping = tokio::time::interval_at(tokio::time::Instant::now() + period, period);
    let mut last_heard = Instant::now();
    let mut shutdown = app.shutdown.clone();
    loop {
        tokio::select! {
            news = feed.recv() => {
                if let Fed::Close(frame) = forward(sink, &mut feed, &mut seen, Some(news)).await? {
                    return Ok(Some(frame));
                }
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
                        queue(sink, &answer).await?;
                        // The action's broadcast is usually waiting already: written with the answer.
                        let next = ready(&mut feed);
                        if let Fed::Close(frame) = forward(sink, &mut feed, &mut seen, next).await? {
                            return Ok(Some(frame));
                        }
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
pub(super) fn too_big(error: &axum::Error) -> bool {
    use tokio_tungstenite::tungstenite::Error as WsError;
    std::error::Error::source(error)
        .and_then(|source| source.downcast_ref::<WsError>())
        .is_some_and(|source| matches!(source, WsError::Capacity(_)))
}

pub(super) fn ws_error(error: &ApiError, key: Option<&str>) -> String {
    let mut body = error.body();
    body["type"] = json!("error");
    if let Some(key) = key {
        body["key"] = json!(key);
    }
    body.to_string()
}

/// Answers one client message.
pub(super) async fn client_message(
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
            Ok(view) => view.text,
            Err(error) => ws_error(&ApiError::from(error), None),
        },
        ClientRequest::Legal => {
            let Some(Owner(seat)) = audience else {
                return ws_error(&GameError::Unauthorized.into(), None);
            };
            match app.games.legal(slot, seat).await {
                Ok(legal) => legal.to_json(Some("legal")),
                Err(error) => ws_error(&ApiError::from(error), None),
            }
        }
        ClientRequest::Act {
            action,
            expected_seq,
            key,
        } => {
            let (Some(Owner(seat)), Some(token)) = (audience, token) else {
                return ws_error(&GameError::Unauthorized.into(), key.as_deref());
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
                Err(error) => ws_error(&ApiError::from(error), key.as_deref()),
            }
        }
    }
}

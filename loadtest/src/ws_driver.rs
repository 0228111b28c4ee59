//! The WebSocket driver: one connection and task per seat, acting on the pushed views.

use super::*;

/// One game after another over WebSocket: one task and connection per seat.
pub(super) async fn ws_driver(ctx: Arc<Ctx>, shared: Arc<Shared>, seed: u64) -> Stats {
    let mut stats = Stats::default();
    let mut rng = Rng(seed);
    let mut ready = false;
    while !shared.stopping() {
        let Some(game) = next_game(&ctx, &shared, &mut stats, &mut ready).await else {
            continue;
        };
        let game = Arc::new(game);
        let seats: Vec<_> = (0..game.tokens.len())
            .map(|seat| {
                let ctx = Arc::clone(&ctx);
                let shared = Arc::clone(&shared);
                let game = Arc::clone(&game);
                let seed = rng.next();
                tokio::spawn(async move { ws_seat(&ctx, &shared, &game, seat, seed).await })
            })
            .collect();
        let mut ended = false;
        for seat in seats {
            match seat.await {
                Ok((seat_stats, over)) => {
                    stats.merge(seat_stats);
                    ended |= over;
                }
                Err(e) => stats.error(&shared, || format!("a seat's task failed: {e}")),
            }
        }
        if ended {
            stats.games_ended += 1;
        }
    }
    if !ready {
        shared.set_ready();
    }
    stats
}

pub(super) type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A seat's knowledge of its game: the latest sequence number seen, the first seat that may act then,
/// whether the game is over.
#[derive(Default)]
pub(super) struct SeatView {
    pub(super) seq: u64,
    pub(super) known: bool,
    pub(super) first_acting: Option<u16>,
    pub(super) over: bool,
    /// The seat's legal actions pushed with the latest action, and their sequence number.
    pub(super) legal: Option<(u64, Vec<Box<RawValue>>)>,
}

impl SeatView {
    /// Takes in a view or pushed action (and its legal actions); answers whether it was news.
    pub(super) fn update(&mut self, message: &mut Incoming) -> bool {
        let (Some(seq), Some(view)) = (message.seq, &message.view) else {
            return false;
        };
        if self.known && seq < self.seq {
            return false;
        }
        self.known = true;
        self.seq = seq;
        self.first_acting = view.table.acting.first().map(|a| a.seat);
        self.over = view.table.over();
        self.legal = message.legal.take().map(|legal| (legal.seq, legal.actions));
        true
    }
}

/// Opens the WebSocket at `url` with a small read buffer, as the server's: tungstenite zero-fills a read
/// buffer's free space before every read.
pub(super) async fn connect(url: String) -> Result<Socket, tokio_tungstenite::tungstenite::Error> {
    let config = tokio_tungstenite::tungstenite::protocol::WebSocketConfig::default()
        .read_buffer_size(READ_BUFFER);
    tokio_tungstenite::connect_async_with_config(url, Some(config), true)
        .await
        .map(|(socket, _)| socket)
}

/// The next message of the socket, parsed; `None` when it closed.
pub(super) async fn next_message(socket: &mut Socket) -> Result<Option<Incoming>, String> {
    loop {
        match socket.next().await {
            None => return Ok(None),
            Some(Err(e)) => return Err(format!("WebSocket: {e}")),
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(text.as_str())
                    .map(Some)
                    .map_err(|e| format!("WebSocket message not understood: {e}"));
            }
            Some(Ok(Message::Close(_))) => return Ok(None),
            Some(Ok(_)) => {}
        }
    }
}

/// The answer to a request (`legal` or `act`: `legal`, `acted` or `error`), taking in the pushes before it.
pub(super) async fn reply(socket: &mut Socket, view: &mut SeatView) -> Result<Incoming, String> {
    loop {
        let Some(mut message) = next_message(socket).await? else {
            return Err("the server closed the WebSocket".into());
        };
        match message.kind.as_str() {
            // A view is never the answer awaited here: it answers an earlier `view` request (sent when
            // no push came for a while), arriving late on a loaded server.
            "action" | "hello" | "view" => {
                view.update(&mut message);
            }
            "stopped" | "lagged" => {
                return Err(format!(
                    "{}: {}",
                    message.kind,
                    message.message.unwrap_or_default()
                ));
            }
            _ => return Ok(message),
        }
    }
}

/// One seat of one game over its WebSocket, until the game ends or the point stops. Answers its counts
/// and whether the game ended.
pub(super) async fn ws_seat(
    ctx: &Ctx,
    shared: &Shared,
    game: &Game,
    seat: usize,
    seed: u64,
) -> (Stats, bool) {
    let mut stats = Stats::default();
    let mut rng = Rng(seed);
    let url = format!(
        "{}/api/games/{}/ws?token={}",
        ctx.ws_base(game, seat),
        game.id,
        game.tokens[seat]
    );
    let mut socket = match connect(url).await {
        Ok(socket) => socket,
        Err(e) => {
            stats.error(shared, || format!("WebSocket connect: {e}"));
            return (stats, false);
        }
    };
    let mut stop = shared.stop.clone();
    let mut view = SeatView::default();
    let me = seat as u16;
    let over = loop {
        if shared.stopping() {
            break false;
        }
        if view.over {
            break true;
        }
        if view.known && view.first_acting == Some(me) {
            // The legal actions pushed with the last action, or asked for (the game's first move).
            let pushed = view.legal.take().filter(|(seq, _)| *seq == view.seq);
            let (seq, list) = match pushed {
                Some((seq, list)) => (Some(seq), list),
                None => {
                    stats.legal_calls += 1;
                    if let Err(e) = socket.send(Message::text(r#"{"type":"legal"}"#)).await {
                        stats.error(shared, || format!("WebSocket send: {e}"));
                        break false;
                    }
                    let legal = match reply(&mut socket, &mut view).await {
                        Ok(legal) => legal,
                        Err(e) => {
                            stats.error(shared, || e);
                            break false;
                        }
                    };
                    let seq = legal.seq.filter(|_| legal.kind == "legal");
                    (seq, legal.actions.unwrap_or_default())
                }
            };
            let Some(seq) = seq.filter(|_| !list.is_empty()) else {
                // Nothing to do after all: wait for news.
                view.first_acting = None;
                continue;
            };
            let action = &list[rng.below(list.len())];
            let text = format!(
                r#"{{"type":"act","action":{},"expected_seq":{seq}}}"#,
                action.get()
            );
            let started = Instant::now();
            shared.sending(game.id, seq + 1, started);
            if let Err(e) = socket.send(Message::text(text)).await {
                stats.error(shared, || format!("WebSocket send: {e}"));
                break false;
            }
            let answer = match reply(&mut socket, &mut view).await {
                Ok(answer) => answer,
                Err(e) => {
                    stats.error(shared, || e);
                    break false;
                }
            };
            let result = if answer.kind == "acted" {
                Submitted::Acked
            } else {
                classify(
                    answer.error.as_deref(),
                    &format!(
                        "act: {} {}",
                        answer.error.as_deref().unwrap_or(&answer.kind),
                        answer.message.as_deref().unwrap_or_default()
                    ),
                )
            };
            match result {
                Submitted::Acked => {
                    stats.ack(shared, started.elapsed());
                    // Act again only on the view after this action, pushed to every seat.
                    if view.seq < answer.seq.unwrap_or(u64::MAX) {
                        view.first_acting = None;
                    }
                }
                Submitted::Stale => {
                    stats.stale += 1;
                    view.first_acting = None;
                }
                Submitted::Refused => stats.refused += 1,
                Submitted::Finished => break true,
                Submitted::Failed(e) => {
                    stats.error(shared, || e);
                    break false;
                }
            }
            continue;
        }
        // Not this seat's turn: wait for the next push (asking for a view if none comes for a while).
        tokio::select! {
            message = tokio::time::timeout(Duration::from_secs(2), next_message(&mut socket)) => {
                match message {
                    Ok(Ok(Some(mut message))) => match message.kind.as_str() {
                        "stopped" | "lagged" => {
                            stats.error(shared, || format!("{}: {}", message.kind, message.message.unwrap_or_default()));
                            break false;
                        }
                        _ => {
                            view.update(&mut message);
                        }
                    },
                    Ok(Ok(None)) => break false,
                    Ok(Err(e)) => {
                        stats.error(shared, || e);
                        break false;
                    }
                    Err(_) => {
                        if let Err(e) = socket.send(Message::text(r#"{"type":"view"}"#)).await {
                            stats.error(shared, || format!("WebSocket send: {e}"));
                            break false;
                        }
                    }
                }
            }
            _ = stop.changed() => break false,
        }
    };
    let _ = socket.close(None).await;
    (stats, over)
}

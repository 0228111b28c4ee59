//! The HTTP driver: creating games, `legal` and action submission over the JSON API.

use super::*;

/// Sends `request` and reads its whole answer: its status and body, or why `what` (the request, as the
/// message names it) failed.
pub(super) async fn exchange(
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<(reqwest::StatusCode, bytes::Bytes), String> {
    let response = request.send().await.map_err(|e| format!("{what}: {e}"))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| format!("{what}: {e}"))?;
    Ok((status, bytes))
}

pub(super) async fn create_game(ctx: &Ctx) -> Result<Game, String> {
    create_game_with(ctx, None).await
}

/// [`create_game`], with a clock of `clock_ms` per decision when given.
pub(super) async fn create_game_with(ctx: &Ctx, clock_ms: Option<u64>) -> Result<Game, String> {
    let mut body = json!({"ruleset": ctx.ruleset, "players": ctx.players, "seed": ctx.next_seed()});
    if let Some(ms) = clock_ms {
        // Never abandoned: the seats keep timing out, which is what is measured.
        body["clock"] = json!({"per_action_ms": ms, "abandon_after": 0});
    }
    let node = ctx.next_node.fetch_add(1, Ordering::Relaxed) % ctx.bases.len();
    let request = ctx
        .http
        .post(format!("{}/api/games", ctx.bases[node]))
        .header("content-type", "application/json")
        .body(body.to_string());
    let (status, bytes) = exchange(request, "POST /api/games").await?;
    if !status.is_success() {
        return Err(format!(
            "POST /api/games: {status}: {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    let created: CreatedBody =
        serde_json::from_slice(&bytes).map_err(|e| format!("POST /api/games answered: {e}"))?;
    let tokens = created
        .tokens
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or("a game was created with an open seat")?;
    Ok(Game {
        id: created.game,
        tokens,
        node,
    })
}

pub(super) async fn http_legal(ctx: &Ctx, game: &Game, seat: usize) -> Result<Incoming, String> {
    let request = ctx
        .http
        .get(format!(
            "{}/api/games/{}/legal",
            ctx.base(game, seat),
            game.id
        ))
        .bearer_auth(&game.tokens[seat]);
    let (status, bytes) = exchange(request, "GET legal").await?;
    let body: Incoming = serde_json::from_slice(&bytes).unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "GET legal: {status} {}",
            body.error.unwrap_or_default()
        ));
    }
    Ok(body)
}

/// What a submission got.
pub(super) enum Submitted {
    Acked,
    Stale,
    Refused,
    Finished,
    Failed(String),
}

/// Submits `action` at `seq`; an accepted one also answers the seat's legal actions after it (with their
/// sequence number) when the server sent them: the seat may act again.
pub(super) async fn http_act(
    ctx: &Ctx,
    game: &Game,
    seat: usize,
    action: &RawValue,
    seq: u64,
) -> (Submitted, Option<LegalPart>) {
    let body = format!(r#"{{"action":{},"expected_seq":{seq}}}"#, action.get());
    let sent = ctx
        .http
        .post(format!(
            "{}/api/games/{}/actions?then=legal",
            ctx.base(game, seat),
            game.id
        ))
        .bearer_auth(&game.tokens[seat])
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(e) => return (Submitted::Failed(format!("POST actions: {e}")), None),
    };
    let status = response.status();
    let bytes = match response.bytes().await {
        Ok(bytes) => bytes,
        Err(e) => return (Submitted::Failed(format!("POST actions: {e}")), None),
    };
    let body: Incoming = serde_json::from_slice(&bytes).unwrap_or_default();
    if status.is_success() {
        return (Submitted::Acked, body.legal);
    }
    let submitted = classify(
        body.error.as_deref(),
        &format!(
            "POST actions: {status} {}",
            body.message.unwrap_or_default()
        ),
    );
    (submitted, None)
}

pub(super) fn classify(code: Option<&str>, what: &str) -> Submitted {
    match code {
        Some("stale") => Submitted::Stale,
        Some("refused") => Submitted::Refused,
        Some("finished") => Submitted::Finished,
        _ => Submitted::Failed(what.to_owned()),
    }
}

/// Plays up to `actions` actions of `game` over HTTP (fewer if it ends).
pub(super) async fn play_http(
    ctx: &Ctx,
    game: &Game,
    actions: usize,
    rng: &mut Rng,
) -> Result<(), String> {
    let players = game.tokens.len();
    let mut seat = 0;
    let mut played = 0;
    let mut empty = 0;
    while played < actions && empty < players {
        let legal = http_legal(ctx, game, seat).await?;
        let list = legal.actions.unwrap_or_default();
        if list.is_empty() {
            empty += 1;
            seat = (seat + 1) % players;
            continue;
        }
        empty = 0;
        let action = &list[rng.below(list.len())];
        match http_act(ctx, game, seat, action, legal.seq.unwrap_or(0))
            .await
            .0
        {
            Submitted::Acked => played += 1,
            Submitted::Finished => return Ok(()),
            Submitted::Stale | Submitted::Refused => {}
            Submitted::Failed(e) => return Err(e),
        }
    }
    Ok(())
}

/// A new game for a driver; the first one it gets marks the driver `ready`. A failure is counted and
/// paused on, then `None`: the driver tries again unless stopping.
pub(super) async fn next_game(
    ctx: &Ctx,
    shared: &Shared,
    stats: &mut Stats,
    ready: &mut bool,
) -> Option<Game> {
    match create_game(ctx).await {
        Ok(game) => {
            shared.created(&game);
            if !*ready {
                *ready = true;
                shared.set_ready();
            }
            Some(game)
        }
        Err(e) => {
            stats.error(shared, || e);
            tokio::time::sleep(Duration::from_millis(100)).await;
            None
        }
    }
}

/// One game after another over HTTP, one task for all seats of the game.
pub(super) async fn http_driver(ctx: Arc<Ctx>, shared: Arc<Shared>, seed: u64) -> Stats {
    let mut stats = Stats::default();
    let mut rng = Rng(seed);
    let mut ready = false;
    let players = usize::from(ctx.players);
    'games: while !shared.stopping() {
        let Some(game) = next_game(&ctx, &shared, &mut stats, &mut ready).await else {
            continue;
        };
        let mut seat = 0;
        let mut empty = 0;
        // The seat's legal actions that came with its last accepted action, when it may act again.
        let mut next: Option<LegalPart> = None;
        while !shared.stopping() {
            let (seq, list) = match next.take() {
                Some(LegalPart { seq, actions }) => (seq, actions),
                None => {
                    stats.legal_calls += 1;
                    match http_legal(&ctx, &game, seat).await {
                        Ok(legal) => (legal.seq.unwrap_or(0), legal.actions.unwrap_or_default()),
                        Err(e) => {
                            stats.error(&shared, || e);
                            continue 'games;
                        }
                    }
                }
            };
            if list.is_empty() {
                empty += 1;
                seat = (seat + 1) % players;
                if empty >= players {
                    // Nobody may act: the game is over.
                    stats.games_ended += 1;
                    continue 'games;
                }
                continue;
            }
            empty = 0;
            let action = &list[rng.below(list.len())];
            let started = Instant::now();
            shared.sending(game.id, seq + 1, started);
            let (submitted, legal) = http_act(&ctx, &game, seat, action, seq).await;
            match submitted {
                Submitted::Acked => {
                    stats.ack(&shared, started.elapsed());
                    // Not sent: another seat acts next (the game goes round to it) or it is over.
                    match legal {
                        Some(legal) => next = Some(legal),
                        None => seat = (seat + 1) % players,
                    }
                }
                Submitted::Stale => stats.stale += 1,
                Submitted::Refused => stats.refused += 1,
                Submitted::Finished => {
                    stats.games_ended += 1;
                    continue 'games;
                }
                Submitted::Failed(e) => {
                    stats.error(&shared, || e);
                    continue 'games;
                }
            }
        }
    }
    if !ready {
        shared.set_ready();
    }
    stats
}

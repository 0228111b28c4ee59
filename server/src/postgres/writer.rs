//! The writer thread and group commit: lease fencing, and the writes it applies.

use super::*;

pub(super) fn run_writer(mut client: Client, writer: &Writer, inbox: &mpsc::Receiver<Request>) {
    let mut batch = Vec::with_capacity(1024);
    let node = writer.node.as_ref();
    let mut prepared: Option<Prepared> = None;
    while let Ok(first) = inbox.recv() {
        batch.push(first);
        while batch.len() < 1024 {
            match inbox.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        if client.is_closed() {
            // The database restarted or the connection was cut: a new connection, or this group
            // fails (nothing written) and the next one tries again.
            match connect_writer(&writer.url, node) {
                Ok(fresh) => {
                    client = fresh;
                    prepared = None;
                }
                Err(error) => {
                    tracing::warn!(target: "coffer_server::postgres", "the store's database cannot be reached: {error}");
                    let error = Arc::new(error);
                    for request in batch.drain(..) {
                        (request.reply)(Err(StoreError::Unreachable(Arc::clone(&error))));
                    }
                    continue;
                }
            }
        }
        if prepared.is_none() {
            match Prepared::on(&mut client) {
                Ok(fresh) => prepared = Some(fresh),
                Err(error) => {
                    tracing::warn!(target: "coffer_server::postgres", "the store's statements cannot be prepared: {error}");
                    let error = Arc::new(pg(error));
                    for request in batch.drain(..) {
                        (request.reply)(Err(StoreError::Unreachable(Arc::clone(&error))));
                    }
                    continue;
                }
            }
        }
        let Some(statements) = &prepared else {
            continue;
        };
        match commit_group(&mut client, node, statements, batch.iter().map(|r| &r.op)) {
            Ok(results) => {
                for (request, result) in batch.drain(..).zip(results) {
                    (request.reply)(result);
                }
            }
            Err(_) => {
                // The group failed as a whole: each request on its own, so one cannot fail another.
                for request in batch.drain(..) {
                    let result = match commit_group(
                        &mut client,
                        node,
                        statements,
                        std::iter::once(&request.op),
                    ) {
                        Ok(mut results) => results.pop().unwrap_or(Err(StoreError::WriterStopped)),
                        Err(error) => Err(pg(error)),
                    };
                    (request.reply)(result);
                }
            }
        }
    }
}

fn commit_group<'a>(
    client: &mut Client,
    node: Option<&NodeConfig>,
    prepared: &Prepared,
    ops: impl Iterator<Item = &'a Op>,
) -> Result<Vec<Result<(), StoreError>>, postgres::Error> {
    let ops: Vec<&Op> = ops.collect();
    let mut tx = client.transaction()?;
    // The lease rows of every fenced append, read and locked at once: they stay locked until this
    // transaction ends, so a node taking a game over waits for this commit, and this group sees any
    // takeover committed before it.
    let mut held = std::collections::HashMap::new();
    if let Some(node) = node {
        let games: Vec<i64> = ops
            .iter()
            .filter_map(|op| match op {
                Op::Append {
                    game,
                    fence: Some(_),
                    ..
                } => Some(game.0 as i64),
                _ => None,
            })
            .collect();
        if !games.is_empty() {
            for row in tx.query(&prepared.leases, &[&games, &node.id])? {
                held.insert(row.get::<_, i64>(0) as u64, row.get::<_, i64>(1) as u64);
            }
        }
    }
    let mut group = Group {
        node,
        prepared,
        held,
        notices: Vec::new(),
    };
    let mut results = Vec::new();
    for op in ops {
        results.push(apply(&mut tx, &mut group, op)?);
    }
    // The group's notices, as few as fit PostgreSQL's payload limit (8,000 bytes), space-separated;
    // delivered to every listening node when, and only if, this transaction commits.
    let mut payload = String::new();
    for notice in &group.notices {
        if !payload.is_empty() && payload.len() + 1 + notice.len() > 7_900 {
            notify(&mut tx, &payload)?;
            payload.clear();
        }
        if !payload.is_empty() {
            payload.push(' ');
        }
        payload.push_str(notice);
    }
    if !payload.is_empty() {
        notify(&mut tx, &payload)?;
    }
    tx.commit()?;
    Ok(results)
}

fn apply(
    tx: &mut impl GenericClient,
    group: &mut Group<'_>,
    op: &Op,
) -> Result<Result<(), StoreError>, postgres::Error> {
    let node = group.node;
    match op {
        Op::Create(game) => {
            let created = create(tx, game)?;
            if created.is_ok()
                && let Some(node) = node
            {
                tx.execute(
                    "INSERT INTO leases (game, node, addr, fence, expires_at)
                     VALUES ($1, $2, $3, 1, now() + $4::BIGINT * INTERVAL '1 millisecond')",
                    &[
                        &(game.id.0 as i64),
                        &node.id,
                        &node.addr,
                        &(node.lease.as_millis() as i64),
                    ],
                )?;
                group.notices.push(format!("g:{}", game.id.0));
            }
            Ok(created)
        }
        Op::Claim { game, seat, token } => {
            let claimed = claim(tx, *game, *seat, token)?;
            if claimed.is_ok() && node.is_some() {
                group.notices.push(format!("g:{}", game.0));
            }
            Ok(claimed)
        }
        Op::Append {
            game,
            action,
            fence: None,
        } => append(tx, group.prepared, *game, action),
        Op::Append {
            game,
            action,
            fence: Some(fence),
        } => {
            if node.is_none() || group.held.get(&game.0) != Some(fence) {
                return Ok(Err(StoreError::Fenced {
                    game: *game,
                    fence: *fence,
                }));
            }
            let appended = append(tx, group.prepared, *game, action)?;
            if appended.is_ok() {
                group
                    .notices
                    .push(crate::cluster::action_notice(*game, action));
            }
            Ok(appended)
        }
        Op::Snapshot { game, snapshot } => put_snapshot(tx, *game, snapshot),
        Op::Finish(game) => {
            // Finishing a finished game keeps when it first finished.
            let now = i64::try_from(crate::store::now_unix_ms()).unwrap_or(i64::MAX);
            let changed = tx.execute(
                "UPDATE games SET finished = TRUE,
                     finished_unix_ms = CASE WHEN finished THEN finished_unix_ms ELSE $2 END
                 WHERE id = $1",
                &[&(game.0 as i64), &now],
            )?;
            Ok(if changed == 0 {
                Err(StoreError::NoSuchGame(*game))
            } else {
                Ok(())
            })
        }
        Op::SetBots { game, bots } => {
            let changed = tx.execute(
                "UPDATE games SET bots = $2 WHERE id = $1",
                &[&(game.0 as i64), &crate::store::json_column(bots)],
            )?;
            Ok(if changed == 1 {
                Ok(())
            } else {
                Err(StoreError::NoSuchGame(*game))
            })
        }
        Op::Forget(game) => {
            let id = game.0 as i64;
            let finished: Option<bool> = tx
                .query_opt(
                    "SELECT finished FROM games WHERE id = $1 FOR UPDATE",
                    &[&id],
                )?
                .map(|row| row.get(0));
            match finished {
                None => return Ok(Err(StoreError::NoSuchGame(*game))),
                Some(false) => return Ok(Err(StoreError::NotFinished(*game))),
                Some(true) => {}
            }
            for table in ["actions", "snapshots", "seats", "leases"] {
                tx.execute(&format!("DELETE FROM {table} WHERE game = $1"), &[&id])?;
            }
            tx.execute("DELETE FROM games WHERE id = $1", &[&id])?;
            Ok(Ok(()))
        }
    }
}

/// Tells every listening node `payload` when, and only if, this transaction commits.
fn notify(tx: &mut impl GenericClient, payload: &str) -> Result<(), postgres::Error> {
    tx.execute("SELECT pg_notify($1, $2)", &[&ACTIONS_CHANNEL, &payload])?;
    Ok(())
}

fn create(
    tx: &mut impl GenericClient,
    game: &NewGame,
) -> Result<Result<(), StoreError>, postgres::Error> {
    if game.seats.len() != game.setup.players as usize {
        return Ok(Err(StoreError::SeatCount {
            game: game.id,
            players: game.setup.players,
            seats: game.seats.len(),
        }));
    }
    let inserted = tx.execute(
        "INSERT INTO games (id, ruleset, players, seed, config, created_unix_ms, bots, clock)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING",
        &[
            &(game.id.0 as i64),
            &game.ruleset.as_str(),
            &(game.setup.players as i32),
            &(game.setup.seed as i64),
            &game.setup.config.to_string(),
            &(game.created_unix_ms as i64),
            &crate::store::json_column(&game.setup.bots),
            &crate::store::json_column(&game.setup.clock),
        ],
    )?;
    if inserted == 0 {
        return Ok(Err(StoreError::GameExists(game.id)));
    }
    let statement =
        tx.prepare("INSERT INTO seats (game, seat, token_sha256) VALUES ($1, $2, $3)")?;
    for (index, token) in game.seats.iter().enumerate() {
        let digest: Option<&[u8]> = token.as_ref().map(|t| &t.digest()[..]);
        tx.execute(&statement, &[&(game.id.0 as i64), &(index as i32), &digest])?;
    }
    Ok(Ok(()))
}

fn claim(
    tx: &mut impl GenericClient,
    game: GameId,
    seat: u32,
    token: &TokenHash,
) -> Result<Result<(), StoreError>, postgres::Error> {
    let digest: &[u8] = &token.digest()[..];
    let changed = tx.execute(
        "UPDATE seats SET token_sha256 = $3 WHERE game = $1 AND seat = $2 AND token_sha256 IS NULL",
        &[&(game.0 as i64), &(seat as i32), &digest],
    )?;
    if changed == 1 {
        return Ok(Ok(()));
    }
    let players = tx
        .query_opt(
            "SELECT players FROM games WHERE id = $1",
            &[&(game.0 as i64)],
        )?
        .map(|row| row.get::<_, i32>(0) as u32);
    Ok(Err(match players {
        None => StoreError::NoSuchGame(game),
        Some(seats) if seat >= seats => StoreError::NoSuchSeat { game, seat, seats },
        Some(_) => StoreError::SeatTaken { game, seat },
    }))
}

fn append(
    tx: &mut impl GenericClient,
    prepared: &Prepared,
    game: GameId,
    action: &Action,
) -> Result<Result<(), StoreError>, postgres::Error> {
    let changed = tx.execute(
        &prepared.advance,
        &[
            &(game.0 as i64),
            &(action.seq as i64),
            &(action.seat as i32),
        ],
    )?;
    if changed == 0 {
        let row = tx.query_opt(
            "SELECT finished, seq, players FROM games WHERE id = $1",
            &[&(game.0 as i64)],
        )?;
        return Ok(Err(match row {
            None => StoreError::NoSuchGame(game),
            Some(row) if row.get::<_, bool>(0) => StoreError::GameFinished(game),
            Some(row) if row.get::<_, i64>(1) as u64 + 1 != action.seq => {
                StoreError::SequenceConflict {
                    game,
                    given: action.seq,
                    current: row.get::<_, i64>(1) as u64,
                }
            }
            Some(row) => StoreError::NoSuchSeat {
                game,
                seat: action.seat,
                seats: row.get::<_, i32>(2) as u32,
            },
        }));
    }
    if let Some(key) = &action.key
        && let Some(first) = keyed(tx, &prepared.keyed, game, action.seat, key)?
    {
        tx.execute(
            "UPDATE games SET seq = $2::BIGINT - 1 WHERE id = $1",
            &[&(game.0 as i64), &(action.seq as i64)],
        )?;
        return Ok(Err(StoreError::Duplicate {
            game,
            seat: action.seat,
            seq: first,
        }));
    }
    tx.execute(
        &prepared.insert_action,
        &[
            &(game.0 as i64),
            &(action.seq as i64),
            &(action.seat as i32),
            &action.action.get(),
            &(action.hash.0 as i64),
            &action.key,
            &i64::try_from(action.at_unix_ms).unwrap_or(i64::MAX),
        ],
    )?;
    Ok(Ok(()))
}

fn put_snapshot(
    tx: &mut impl GenericClient,
    game: GameId,
    snapshot: &Snapshot,
) -> Result<Result<(), StoreError>, postgres::Error> {
    let Some(row) = tx.query_opt("SELECT seq FROM games WHERE id = $1", &[&(game.0 as i64)])?
    else {
        return Ok(Err(StoreError::NoSuchGame(game)));
    };
    let current = row.get::<_, i64>(0) as u64;
    if snapshot.seq > current {
        return Ok(Err(StoreError::SnapshotAhead {
            game,
            seq: snapshot.seq,
            current,
        }));
    }
    tx.execute(
        "INSERT INTO snapshots (game, seq, bytes, hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT (game, seq) DO UPDATE SET bytes = EXCLUDED.bytes, hash = EXCLUDED.hash",
        &[
            &(game.0 as i64),
            &(snapshot.seq as i64),
            &snapshot.bytes,
            &(snapshot.hash.0 as i64),
        ],
    )?;
    Ok(Ok(()))
}

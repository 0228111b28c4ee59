//! The writer thread: committing requests in groups, one transaction per group, and the writes it applies.

use super::*;

pub(super) fn run_writer(
    mut conn: Connection,
    inbox: &mpsc::Receiver<Request>,
    max_batch: usize,
    counters: &Counters,
) {
    let mut batch = Vec::with_capacity(max_batch.min(4096));
    while let Ok(first) = inbox.recv() {
        batch.push(first);
        while batch.len() < max_batch {
            match inbox.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        counters
            .requests
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        counters.transactions.fetch_add(1, Ordering::Relaxed);
        match commit_group(&mut conn, &batch) {
            Ok(results) => {
                for (request, result) in batch.drain(..).zip(results) {
                    request.reply.send(result);
                }
            }
            Err(error) => {
                let error = Arc::new(error);
                for request in batch.drain(..) {
                    request
                        .reply
                        .send(Err(StoreError::Sqlite(Arc::clone(&error))));
                }
            }
        }
    }
}

/// Applies a group of requests in one transaction. The outer error is a database failure, which
/// rolls the whole group back; the inner results are each request's own refusals.
fn commit_group(
    conn: &mut Connection,
    batch: &[Request],
) -> rusqlite::Result<Vec<Result<(), StoreError>>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let results = batch
        .iter()
        .map(|request| apply(&tx, &request.op))
        .collect::<rusqlite::Result<Vec<_>>>()?;
    tx.commit()?;
    Ok(results)
}

/// Each request checks before it writes, so a refused one writes nothing.
fn apply(conn: &Connection, op: &Op) -> rusqlite::Result<Result<(), StoreError>> {
    match op {
        Op::Create(game) => create(conn, game),
        Op::Claim { game, seat, token } => claim(conn, *game, *seat, token),
        Op::Append { game, action, .. } => append(conn, *game, action),
        Op::Snapshot { game, snapshot } => put_snapshot(conn, *game, snapshot),
        Op::Finish(game) => {
            // Finishing a finished game keeps when it first finished.
            conn.prepare_cached("UPDATE games SET finished = ?2 WHERE id = ?1 AND finished = 0")?
                .execute([game.0 as i64, finished_now()])?;
            let exists = conn
                .prepare_cached("SELECT 1 FROM games WHERE id = ?1")?
                .exists([game.0 as i64])?;
            Ok(if exists {
                Ok(())
            } else {
                Err(StoreError::NoSuchGame(*game))
            })
        }
        Op::SetBots { game, bots } => {
            let changed = conn
                .prepare_cached("UPDATE games SET bots = ?2 WHERE id = ?1")?
                .execute(params![game.0 as i64, crate::store::json_column(bots)])?;
            Ok(if changed == 1 {
                Ok(())
            } else {
                Err(StoreError::NoSuchGame(*game))
            })
        }
        Op::Forget(game) => {
            let id = game.0 as i64;
            let finished: Option<i64> = conn
                .prepare_cached("SELECT finished FROM games WHERE id = ?1")?
                .query_row([id], |row| row.get(0))
                .optional()?;
            match finished {
                None => return Ok(Err(StoreError::NoSuchGame(*game))),
                Some(0) => return Ok(Err(StoreError::NotFinished(*game))),
                Some(_) => {}
            }
            for table in ["actions", "snapshots", "seats"] {
                conn.prepare_cached(&format!("DELETE FROM {table} WHERE game = ?1"))?
                    .execute([id])?;
            }
            conn.prepare_cached("DELETE FROM games WHERE id = ?1")?
                .execute([id])?;
            Ok(Ok(()))
        }
    }
}

fn create(conn: &Connection, game: &NewGame) -> rusqlite::Result<Result<(), StoreError>> {
    if game.seats.len() != game.setup.players as usize {
        return Ok(Err(StoreError::SeatCount {
            game: game.id,
            players: game.setup.players,
            seats: game.seats.len(),
        }));
    }
    let exists = conn
        .prepare_cached("SELECT 1 FROM games WHERE id = ?1")?
        .exists([game.id.0 as i64])?;
    if exists {
        return Ok(Err(StoreError::GameExists(game.id)));
    }
    conn.prepare_cached(
        "INSERT INTO games (id, ruleset, players, seed, config, created_unix_ms, bots, clock)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        game.id.0 as i64,
        game.ruleset.as_str(),
        game.setup.players,
        game.setup.seed as i64,
        game.setup.config.to_string(),
        game.created_unix_ms as i64,
        crate::store::json_column(&game.setup.bots),
        crate::store::json_column(&game.setup.clock),
    ])?;
    let mut seat =
        conn.prepare_cached("INSERT INTO seats (game, seat, token_sha256) VALUES (?1, ?2, ?3)")?;
    for (index, token) in game.seats.iter().enumerate() {
        seat.execute(params![
            game.id.0 as i64,
            index as i64,
            token.as_ref().map(|token| &token.digest()[..]),
        ])?;
    }
    Ok(Ok(()))
}

fn claim(
    conn: &Connection,
    game: GameId,
    seat: u32,
    token: &TokenHash,
) -> rusqlite::Result<Result<(), StoreError>> {
    let changed = conn
        .prepare_cached(
            "UPDATE seats SET token_sha256 = ?3
             WHERE game = ?1 AND seat = ?2 AND token_sha256 IS NULL",
        )?
        .execute(params![game.0 as i64, seat, &token.digest()[..]])?;
    if changed == 1 {
        return Ok(Ok(()));
    }
    let players: Option<u32> = conn
        .prepare_cached("SELECT players FROM games WHERE id = ?1")?
        .query_row([game.0 as i64], |row| row.get(0))
        .optional()?;
    Ok(Err(match players {
        None => StoreError::NoSuchGame(game),
        Some(seats) if seat >= seats => StoreError::NoSuchSeat { game, seat, seats },
        Some(_) => StoreError::SeatTaken { game, seat },
    }))
}

fn append(
    conn: &Connection,
    game: GameId,
    action: &Action,
) -> rusqlite::Result<Result<(), StoreError>> {
    // Check and advance in one statement: the game exists, is not finished, the seat is one of its
    // seats and the sequence is the next one.
    let changed = conn
        .prepare_cached(
            "UPDATE games SET seq = ?2
             WHERE id = ?1 AND seq = ?2 - 1 AND finished = 0 AND players > ?3",
        )?
        .execute(params![game.0 as i64, action.seq as i64, action.seat])?;
    if changed == 0 {
        let row: Option<(bool, i64, u32)> = conn
            .prepare_cached("SELECT finished, seq, players FROM games WHERE id = ?1")?
            .query_row([game.0 as i64], |row| {
                Ok((row.get(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        return Ok(Err(match row {
            None => StoreError::NoSuchGame(game),
            Some((true, _, _)) => StoreError::GameFinished(game),
            Some((false, current, _)) if current as u64 + 1 != action.seq => {
                StoreError::SequenceConflict {
                    game,
                    given: action.seq,
                    current: current as u64,
                }
            }
            Some((false, _, seats)) => StoreError::NoSuchSeat {
                game,
                seat: action.seat,
                seats,
            },
        }));
    }
    if let Some(key) = &action.key
        && let Some(first) = keyed(conn, game, action.seat, key)?
    {
        // Undo the advance above; the transaction holds other requests' writes.
        conn.prepare_cached("UPDATE games SET seq = ?2 - 1 WHERE id = ?1")?
            .execute(params![game.0 as i64, action.seq as i64])?;
        return Ok(Err(StoreError::Duplicate {
            game,
            seat: action.seat,
            seq: first,
        }));
    }
    conn.prepare_cached(
        "INSERT INTO actions (game, seq, seat, action, hash, idem, at_unix_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        game.0 as i64,
        action.seq as i64,
        action.seat,
        action.action.get(),
        action.hash.0 as i64,
        action.key,
        i64::try_from(action.at_unix_ms).unwrap_or(i64::MAX),
    ])?;
    Ok(Ok(()))
}

fn put_snapshot(
    conn: &Connection,
    game: GameId,
    snapshot: &Snapshot,
) -> rusqlite::Result<Result<(), StoreError>> {
    let current: Option<i64> = conn
        .prepare_cached("SELECT seq FROM games WHERE id = ?1")?
        .query_row([game.0 as i64], |row| row.get(0))
        .optional()?;
    let Some(current) = current else {
        return Ok(Err(StoreError::NoSuchGame(game)));
    };
    let current = current as u64;
    if snapshot.seq > current {
        return Ok(Err(StoreError::SnapshotAhead {
            game,
            seq: snapshot.seq,
            current,
        }));
    }
    conn.prepare_cached(
        "INSERT OR REPLACE INTO snapshots (game, seq, bytes, hash) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![
        game.0 as i64,
        snapshot.seq as i64,
        snapshot.bytes,
        snapshot.hash.0 as i64,
    ])?;
    Ok(Ok(()))
}

//! Reads: games, seats, actions and snapshots, for recovery, passages and history; and the `Store` impl.

use super::*;

fn read_game(conn: &Connection, game: GameId) -> Result<GameRecord, StoreError> {
    type Row = (String, u32, i64, String, i64, bool, i64, String, String);
    let row: Option<Row> = conn
        .prepare_cached(
            "SELECT ruleset, players, seed, config, created_unix_ms, finished, seq, bots, clock
             FROM games WHERE id = ?1",
        )?
        .query_row([game.0 as i64], |row| {
            Ok((
                row.get(0)?,
                row.get(1)?,
                row.get(2)?,
                row.get(3)?,
                row.get(4)?,
                row.get(5)?,
                row.get(6)?,
                row.get(7)?,
                row.get(8)?,
            ))
        })
        .optional()?;
    let (ruleset, players, seed, config, created, finished, seq, bots, clock) =
        row.ok_or(StoreError::NoSuchGame(game))?;
    let ruleset = RulesetKey::new(&ruleset)
        .map_err(|_| StoreError::Corrupt(format!("game {game} has ruleset key '{ruleset}'")))?;
    let config = serde_json::from_str(&config).map_err(|error| {
        StoreError::Corrupt(format!(
            "game {game} has a configuration that is not json: {error}"
        ))
    })?;
    Ok(GameRecord {
        id: game,
        ruleset,
        setup: Setup {
            players,
            seed: seed as u64,
            config,
            bots: crate::store::from_json_column(game, "bots", &bots)?,
            clock: crate::store::from_json_column(game, "clock settings", &clock)?,
        },
        created_unix_ms: created as u64,
        finished,
        seq: seq as u64,
    })
}

fn read_actions(conn: &Connection, game: GameId, after: u64) -> Result<Vec<Action>, StoreError> {
    read_actions_until(conn, game, after, i64::MAX as u64)
}

/// The actions after `after` up to `until`, inclusive.
fn read_actions_until(
    conn: &Connection,
    game: GameId,
    after: u64,
    until: u64,
) -> Result<Vec<Action>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT seq, seat, action, hash, idem, at_unix_ms FROM actions WHERE game = ?1 AND seq > ?2 AND seq <= ?3 ORDER BY seq",
    )?;
    let until = i64::try_from(until).unwrap_or(i64::MAX);
    let rows = statement.query_map(params![game.0 as i64, after as i64, until], |row| {
        Ok((
            row.get::<_, i64>(0)?,
            row.get::<_, u32>(1)?,
            row.get::<_, String>(2)?,
            row.get::<_, i64>(3)?,
            row.get::<_, Option<String>>(4)?,
            row.get::<_, i64>(5)?,
        ))
    })?;
    let mut actions = Vec::new();
    for row in rows {
        let (seq, seat, action, hash, key, at) = row?;
        let action = RawValue::from_string(action).map_err(|error| {
            StoreError::Corrupt(format!("action {seq} of game {game} is not json: {error}"))
        })?;
        actions.push(Action {
            seq: seq as u64,
            seat,
            action,
            hash: StateHash(hash as u64),
            key,
            at_unix_ms: at.max(0) as u64,
        });
    }
    Ok(actions)
}

fn read_latest_snapshot(conn: &Connection, game: GameId) -> Result<Option<Snapshot>, StoreError> {
    read_snapshot_at_or_before(conn, game, i64::MAX as u64)
}

/// The latest snapshot at or before action `seq`.
fn read_snapshot_at_or_before(
    conn: &Connection,
    game: GameId,
    seq: u64,
) -> Result<Option<Snapshot>, StoreError> {
    let seq = i64::try_from(seq).unwrap_or(i64::MAX);
    Ok(conn
        .prepare_cached(
            "SELECT seq, bytes, hash FROM snapshots WHERE game = ?1 AND seq <= ?2 ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![game.0 as i64, seq], |row| {
            Ok(Snapshot {
                seq: row.get::<_, i64>(0)? as u64,
                bytes: row.get(1)?,
                hash: StateHash(row.get::<_, i64>(2)? as u64),
            })
        })
        .optional()?)
}

impl Store for SqliteStore {
    fn create_game(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(Op::Create(game))
    }

    fn claim_seat(&self, game: GameId, seat: u32, token: TokenHash) -> Result<(), StoreError> {
        self.write(Op::Claim { game, seat, token })
    }

    fn seats(&self, game: GameId) -> Result<Vec<Option<TokenHash>>, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        read_game(&tx, game)?;
        let mut statement =
            tx.prepare_cached("SELECT token_sha256 FROM seats WHERE game = ?1 ORDER BY seat")?;
        let rows = statement.query_map([game.0 as i64], |row| row.get::<_, Option<Vec<u8>>>(0))?;
        let mut seats = Vec::new();
        for row in rows {
            seats.push(match row? {
                None => None,
                Some(bytes) => Some(TokenHash::from_digest(bytes.try_into().map_err(
                    |bytes: Vec<u8>| {
                        StoreError::Corrupt(format!(
                            "a seat of game {game} has a {}-byte token hash, not 32",
                            bytes.len()
                        ))
                    },
                )?)),
            });
        }
        Ok(seats)
    }

    fn append(&self, game: GameId, action: Action) -> Result<(), StoreError> {
        self.write(Op::append(game, action))
    }

    fn append_then(&self, game: GameId, action: Action, done: Done) {
        self.write_then(Op::append(game, action), done);
    }

    fn keyed_action(&self, game: GameId, seat: u32, key: &str) -> Result<Option<u64>, StoreError> {
        let conn = self.reader();
        let exists = conn
            .prepare_cached("SELECT 1 FROM games WHERE id = ?1")?
            .exists([game.0 as i64])?;
        if !exists {
            return Err(StoreError::NoSuchGame(game));
        }
        Ok(keyed(&conn, game, seat, key)?)
    }

    fn put_snapshot(&self, game: GameId, snapshot: Snapshot) -> Result<(), StoreError> {
        self.write(Op::Snapshot { game, snapshot })
    }

    fn finish(&self, game: GameId) -> Result<(), StoreError> {
        self.write(Op::Finish(game))
    }

    fn set_bots(
        &self,
        game: GameId,
        bots: std::collections::BTreeMap<u32, String>,
    ) -> Result<(), StoreError> {
        self.write(Op::SetBots { game, bots })
    }

    fn finished_before(
        &self,
        before_unix_ms: u64,
        limit: usize,
    ) -> Result<Vec<GameId>, StoreError> {
        let conn = self.reader();
        let mut statement = conn.prepare_cached(
            "SELECT id FROM games WHERE finished != 0 AND finished < ?1 ORDER BY finished LIMIT ?2",
        )?;
        let before = i64::try_from(before_unix_ms).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let ids = statement
            .query_map([before, limit], |row| row.get::<_, i64>(0))?
            .map(|id| id.map(|id| GameId(id as u64)))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(ids)
    }

    fn forget(&self, game: GameId) -> Result<(), StoreError> {
        self.write(Op::Forget(game))
    }

    fn game(&self, game: GameId) -> Result<GameRecord, StoreError> {
        read_game(&self.reader(), game)
    }

    fn actions_after(&self, game: GameId, after: u64) -> Result<Vec<Action>, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        read_game(&tx, game)?;
        read_actions(&tx, game, after)
    }

    fn unfinished_games(&self) -> Result<Vec<GameId>, StoreError> {
        let conn = self.reader();
        let mut statement =
            conn.prepare_cached("SELECT id FROM games WHERE finished = 0 ORDER BY id")?;
        let ids = statement
            .query_map([], |row| row.get::<_, i64>(0))?
            .map(|id| id.map(|id| GameId(id as u64)))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        Ok(ids)
    }

    fn recover(&self, game: GameId) -> Result<Recovery, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        let record = read_game(&tx, game)?;
        let snapshot = read_latest_snapshot(&tx, game)?;
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        let tail = read_actions(&tx, game, after)?;
        Ok(Recovery {
            game: record,
            snapshot,
            tail,
        })
    }

    fn passage(&self, game: GameId, since: u64, until: u64) -> Result<Passage, StoreError> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        read_game(&tx, game)?;
        let snapshot = read_snapshot_at_or_before(&tx, game, since)?;
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        let actions = read_actions_until(&tx, game, after, until)?;
        Ok(Passage { snapshot, actions })
    }
}

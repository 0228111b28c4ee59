//! Reads in snapshot transactions (recovery, passages, history, retention) and the `Store` impl.

use super::*;

fn read_game(client: &mut impl GenericClient, game: GameId) -> Result<GameRecord, StoreError> {
    let row = client
        .query_opt(
            "SELECT ruleset, players, seed, config, created_unix_ms, finished, seq, bots, clock FROM games WHERE id = $1",
            &[&(game.0 as i64)],
        )
        .map_err(pg)?
        .ok_or(StoreError::NoSuchGame(game))?;
    let ruleset: String = row.get(0);
    let config: String = row.get(3);
    Ok(GameRecord {
        id: game,
        ruleset: RulesetKey::new(&ruleset)
            .map_err(|_| StoreError::Corrupt(format!("game {game} has ruleset key '{ruleset}'")))?,
        setup: Setup {
            players: row.get::<_, i32>(1) as u32,
            seed: row.get::<_, i64>(2) as u64,
            config: serde_json::from_str(&config).map_err(|e| {
                StoreError::Corrupt(format!("game {game}'s config is not JSON: {e}"))
            })?,
            bots: crate::store::from_json_column(game, "bots", &row.get::<_, String>(7))?,
            clock: crate::store::from_json_column(
                game,
                "clock settings",
                &row.get::<_, String>(8),
            )?,
        },
        created_unix_ms: row.get::<_, i64>(4) as u64,
        finished: row.get(5),
        seq: row.get::<_, i64>(6) as u64,
    })
}

fn read_actions(
    client: &mut impl GenericClient,
    game: GameId,
    after: u64,
) -> Result<Vec<Action>, StoreError> {
    read_actions_until(client, game, after, i64::MAX as u64)
}

/// The actions after `after` up to `until`, inclusive.
fn read_actions_until(
    client: &mut impl GenericClient,
    game: GameId,
    after: u64,
    until: u64,
) -> Result<Vec<Action>, StoreError> {
    let until = i64::try_from(until).unwrap_or(i64::MAX);
    let rows = client
        .query(
            "SELECT seq, seat, action, hash, idem, at_unix_ms FROM actions WHERE game = $1 AND seq > $2 AND seq <= $3 ORDER BY seq",
            &[&(game.0 as i64), &(after as i64), &until],
        )
        .map_err(pg)?;
    rows.into_iter()
        .map(|row| {
            let seq = row.get::<_, i64>(0) as u64;
            let text: String = row.get(2);
            Ok(Action {
                seq,
                seat: row.get::<_, i32>(1) as u32,
                action: RawValue::from_string(text).map_err(|e| {
                    StoreError::Corrupt(format!("action {seq} of game {game} is not JSON: {e}"))
                })?,
                hash: StateHash(row.get::<_, i64>(3) as u64),
                key: row.get(4),
                at_unix_ms: row.get::<_, i64>(5).max(0) as u64,
            })
        })
        .collect()
}

/// A read-only transaction at one point in time, so a multi-statement read is consistent.
fn snapshot_read<T>(
    client: &mut Client,
    read: impl FnOnce(&mut postgres::Transaction<'_>) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .map_err(pg)?;
    let value = read(&mut tx)?;
    tx.commit().map_err(pg)?;
    Ok(value)
}

impl Store for PgStore {
    fn create_game(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(Op::Create(game))
    }

    fn claim_seat(&self, game: GameId, seat: u32, token: TokenHash) -> Result<(), StoreError> {
        self.write(Op::Claim { game, seat, token })
    }

    fn seats(&self, game: GameId) -> Result<Vec<Option<TokenHash>>, StoreError> {
        // One statement (one round trip, one snapshot): the game's row, joined with its seats in order;
        // a game without seats gives one row whose seat is null.
        let rows = self
            .reader()
            .query(
                "SELECT s.seat, s.token_sha256 FROM games g LEFT JOIN seats s ON s.game = g.id
                 WHERE g.id = $1 ORDER BY s.seat",
                &[&(game.0 as i64)],
            )
            .map_err(pg)?;
        if rows.is_empty() {
            return Err(StoreError::NoSuchGame(game));
        }
        rows.into_iter()
            .filter(|row| row.get::<_, Option<i32>>(0).is_some())
            .map(|row| match row.get::<_, Option<Vec<u8>>>(1) {
                None => Ok(None),
                Some(bytes) => bytes
                    .try_into()
                    .map(|d| Some(TokenHash::from_digest(d)))
                    .map_err(|bytes: Vec<u8>| {
                        StoreError::Corrupt(format!(
                            "a seat of game {game} has a {}-byte token hash, not 32",
                            bytes.len()
                        ))
                    }),
            })
            .collect()
    }

    fn append(&self, game: GameId, action: Action) -> Result<(), StoreError> {
        self.write(Op::append(game, action))
    }

    fn append_then(&self, game: GameId, action: Action, done: Done) {
        self.write_then(Op::append(game, action), done);
    }

    fn append_fenced_then(&self, game: GameId, action: Action, fence: u64, done: Done) {
        self.write_then(
            Op::Append {
                game,
                action,
                fence: Some(fence),
            },
            done,
        );
    }

    fn keyed_action(&self, game: GameId, seat: u32, key: &str) -> Result<Option<u64>, StoreError> {
        snapshot_read(&mut self.reader(), |tx| {
            read_game(tx, game)?;
            keyed(tx, KEYED_SQL, game, seat, key).map_err(pg)
        })
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
        let before = i64::try_from(before_unix_ms).unwrap_or(i64::MAX);
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .reader()
            .query(
                "SELECT id FROM games WHERE finished AND finished_unix_ms < $1
                 ORDER BY finished_unix_ms LIMIT $2",
                &[&before, &limit],
            )
            .map_err(pg)?;
        Ok(rows
            .into_iter()
            .map(|row| GameId(row.get::<_, i64>(0) as u64))
            .collect())
    }

    fn forget(&self, game: GameId) -> Result<(), StoreError> {
        self.write(Op::Forget(game))
    }

    fn game(&self, game: GameId) -> Result<GameRecord, StoreError> {
        read_game(&mut *self.reader(), game)
    }

    fn actions_after(&self, game: GameId, after: u64) -> Result<Vec<Action>, StoreError> {
        snapshot_read(&mut self.reader(), |tx| {
            read_game(tx, game)?;
            read_actions(tx, game, after)
        })
    }

    fn unfinished_games(&self) -> Result<Vec<GameId>, StoreError> {
        let rows = self
            .reader()
            .query("SELECT id FROM games WHERE NOT finished ORDER BY id", &[])
            .map_err(pg)?;
        Ok(rows
            .into_iter()
            .map(|row| GameId(row.get::<_, i64>(0) as u64))
            .collect())
    }

    fn recover(&self, game: GameId) -> Result<Recovery, StoreError> {
        snapshot_read(&mut self.reader(), |tx| {
            let record = read_game(tx, game)?;
            let snapshot = tx
                .query_opt(
                    "SELECT seq, bytes, hash FROM snapshots WHERE game = $1 ORDER BY seq DESC LIMIT 1",
                    &[&(game.0 as i64)],
                )
                .map_err(pg)?
                .map(|row| Snapshot {
                    seq: row.get::<_, i64>(0) as u64,
                    bytes: row.get(1),
                    hash: StateHash(row.get::<_, i64>(2) as u64),
                });
            let after = snapshot.as_ref().map_or(0, |s| s.seq);
            let tail = read_actions(tx, game, after)?;
            Ok(Recovery {
                game: record,
                snapshot,
                tail,
            })
        })
    }

    fn passage(&self, game: GameId, since: u64, until: u64) -> Result<Passage, StoreError> {
        snapshot_read(&mut self.reader(), |tx| {
            read_game(tx, game)?;
            let since = i64::try_from(since).unwrap_or(i64::MAX);
            let snapshot = tx
                .query_opt(
                    "SELECT seq, bytes, hash FROM snapshots WHERE game = $1 AND seq <= $2 ORDER BY seq DESC LIMIT 1",
                    &[&(game.0 as i64), &since],
                )
                .map_err(pg)?
                .map(|row| Snapshot {
                    seq: row.get::<_, i64>(0) as u64,
                    bytes: row.get(1),
                    hash: StateHash(row.get::<_, i64>(2) as u64),
                });
            let after = snapshot.as_ref().map_or(0, |s| s.seq);
            let actions = read_actions_until(tx, game, after, until)?;
            Ok(Passage { snapshot, actions })
        })
    }
}

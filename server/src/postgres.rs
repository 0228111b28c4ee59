//! `PgStore`: the store in a PostgreSQL database, for several server nodes sharing one store (issue 16's
//! first part). Same contract and the same test suite as the SQLite store.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::JoinHandle;

use postgres::types::ToSql;
use postgres::{Client, GenericClient, NoTls, Statement};
use serde_json::value::RawValue;

use crate::store::{
    Action, Done, GameId, GameRecord, NewGame, Op, Passage, Recovery, RulesetKey, Setup, Snapshot,
    StateHash, Store, StoreError, TokenHash,
};

/// The migrations, in order; `coffer_schema` records how many were applied. Embedded and applied when the
/// store opens, under an advisory lock so that nodes starting together apply each once.
const MIGRATIONS: &[&str] = &[
    "
CREATE TABLE games (
    id BIGINT PRIMARY KEY,
    ruleset TEXT NOT NULL,
    players INTEGER NOT NULL,
    seed BIGINT NOT NULL,
    config TEXT NOT NULL,
    created_unix_ms BIGINT NOT NULL,
    finished BOOLEAN NOT NULL DEFAULT FALSE,
    seq BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX games_unfinished ON games (id) WHERE NOT finished;
CREATE TABLE seats (
    game BIGINT NOT NULL REFERENCES games (id),
    seat INTEGER NOT NULL,
    token_sha256 BYTEA,
    PRIMARY KEY (game, seat)
);
CREATE TABLE actions (
    game BIGINT NOT NULL REFERENCES games (id),
    seq BIGINT NOT NULL,
    seat INTEGER NOT NULL,
    action TEXT NOT NULL,
    hash BIGINT NOT NULL,
    idem TEXT,
    PRIMARY KEY (game, seq)
);
CREATE UNIQUE INDEX actions_idem ON actions (game, seat, idem) WHERE idem IS NOT NULL;
CREATE TABLE snapshots (
    game BIGINT NOT NULL REFERENCES games (id),
    seq BIGINT NOT NULL,
    bytes BYTEA NOT NULL,
    hash BIGINT NOT NULL,
    PRIMARY KEY (game, seq)
);
",
    "
CREATE TABLE leases (
    game BIGINT PRIMARY KEY REFERENCES games (id),
    node TEXT NOT NULL,
    addr TEXT NOT NULL,
    fence BIGINT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX leases_node ON leases (node);
CREATE INDEX leases_expires_at ON leases (expires_at);
",
    // When a game finished, for the retention of finished games; those finished before count as
    // finished now, so a retention policy gives them its whole time.
    "
ALTER TABLE games ADD COLUMN finished_unix_ms BIGINT;
UPDATE games SET finished_unix_ms = (EXTRACT(EPOCH FROM now()) * 1000)::BIGINT WHERE finished;
CREATE INDEX games_finished_at ON games (finished_unix_ms) WHERE finished;
",
];

/// The channel on which nodes announce, at commit: every fenced append as `a:<game>:<seq>`, and a game
/// created or a seat claimed as `g:<game>`.
pub const ACTIONS_CHANNEL: &str = "coffer_actions";

/// A server node sharing the store with others: who it is, where others reach it, how long its leases
/// last without renewal.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Its identity, unique among the nodes (a new one each time a node starts).
    pub id: String,
    /// Its base URL as the other nodes reach it (`http://10.0.0.5:8080`).
    pub addr: String,
    /// How long a lease lasts without renewal; a node that dies loses its games after this long.
    pub lease: std::time::Duration,
}

/// How many connections serve reads.
const READERS: usize = 4;

/// A [`Store`] in a PostgreSQL database.
///
/// Like [`SqliteStore`](crate::SqliteStore), one writer thread owns the writing connection, takes every
/// request waiting (up to 1,024), applies them in one transaction and commits before answering each:
/// group commit, so many games' appends share one commit. Each request checks before it writes (an append
/// is one conditional `UPDATE games SET seq` that matches only at the previous sequence), so a refused
/// request writes nothing and the others in its group commit. If the group's transaction fails as a whole
/// (a constraint, a lost connection), each request is retried in a transaction of its own, so one bad
/// request cannot fail its neighbours. Reads go through a small pool of connections.
///
/// # Durability
/// A write is acknowledged after `COMMIT` returns, which with PostgreSQL's defaults (`synchronous_commit =
/// on`, `fsync = on`) means its WAL record is flushed to the database server's disk.
pub struct PgStore {
    url: String,
    requests: Option<mpsc::Sender<Request>>,
    writer: Option<JoinHandle<()>>,
    readers: Vec<Mutex<Client>>,
    next_reader: AtomicUsize,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("readers", &self.readers.len())
            .finish_non_exhaustive()
    }
}

struct Request {
    op: Op,
    reply: Done,
}

fn pg(error: postgres::Error) -> StoreError {
    StoreError::Postgres(Arc::new(error))
}

fn connect(url: &str) -> Result<Client, StoreError> {
    Client::connect(url, NoTls).map_err(pg)
}

/// A connection for the writer. With several nodes, a transaction left open by a node that was paused
/// (SIGSTOP) is ended by the database after the lease's length, so it cannot hold a lease row locked
/// against the node taking the game over.
fn connect_writer(url: &str, node: Option<&NodeConfig>) -> Result<Client, StoreError> {
    let mut client = connect(url)?;
    if let Some(node) = node {
        let millis = node.lease.as_millis().max(1);
        client
            .batch_execute(&format!(
                "SET idle_in_transaction_session_timeout = {millis}"
            ))
            .map_err(pg)?;
    }
    Ok(client)
}

const ADVANCE_SQL: &str = "UPDATE games SET seq = $2::BIGINT WHERE id = $1 AND seq = $2::BIGINT - 1 AND NOT finished AND players > $3::INTEGER";
const INSERT_ACTION_SQL: &str =
    "INSERT INTO actions (game, seq, seat, action, hash, idem) VALUES ($1, $2, $3, $4, $5, $6)";
const KEYED_SQL: &str = "SELECT seq FROM actions WHERE game = $1 AND seat = $2 AND idem = $3";
const LEASES_SQL: &str =
    "SELECT game, fence FROM leases WHERE game = ANY($1) AND node = $2 ORDER BY game FOR SHARE";

/// The statements of an append, prepared once per writer connection: a statement given as text is
/// prepared again at every use, one more round trip to the database each time.
struct Prepared {
    advance: Statement,
    insert_action: Statement,
    keyed: Statement,
    leases: Statement,
}

impl Prepared {
    fn on(client: &mut Client) -> Result<Self, postgres::Error> {
        Ok(Self {
            advance: client.prepare(ADVANCE_SQL)?,
            insert_action: client.prepare(INSERT_ACTION_SQL)?,
            keyed: client.prepare(KEYED_SQL)?,
            leases: client.prepare(LEASES_SQL)?,
        })
    }
}

/// What the ops of one transaction share: the node, the prepared statements, and the notices that
/// go out with its commit.
struct Group<'a> {
    node: Option<&'a NodeConfig>,
    prepared: &'a Prepared,
    /// The fencing numbers of this node's leases on the games the group appends to with one.
    held: std::collections::HashMap<u64, u64>,
    notices: Vec<String>,
}

/// The writer's view of its node, when it is one of several.
struct Writer {
    url: String,
    node: Option<NodeConfig>,
}

impl PgStore {
    /// Connects to the database at `url` (`postgres://user@host:port/database`, or the key-value form),
    /// applies the migrations it lacks, and starts the writer thread.
    ///
    /// # Errors
    /// [`StoreError::Postgres`] when the database cannot be reached or migrated, [`StoreError::NewerSchema`]
    /// when a newer build migrated it, [`StoreError::WriterStart`] when no thread can be started.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::open_node(url, None)
    }

    /// [`open`](Self::open) for a node of several: each game it creates gets a lease held by `node`
    /// (fencing number 1), and [`append_fenced_then`](Store::append_fenced_then) checks the lease in
    /// the append's transaction and announces the append on [`ACTIONS_CHANNEL`] at its commit.
    ///
    /// # Errors
    /// As [`open`](Self::open).
    pub fn open_node(url: &str, node: Option<NodeConfig>) -> Result<Self, StoreError> {
        let mut writer = connect_writer(url, node.as_ref())?;
        migrate(&mut writer)?;
        let readers = (0..READERS)
            .map(|_| connect(url).map(Mutex::new))
            .collect::<Result<Vec<_>, _>>()?;
        let (requests, inbox) = mpsc::channel();
        let writer = std::thread::Builder::new()
            .name("coffer-pg-writer".into())
            .spawn({
                let config = Writer {
                    url: url.to_owned(),
                    node,
                };
                move || run_writer(writer, &config, &inbox)
            })
            .map_err(StoreError::WriterStart)?;
        Ok(Self {
            url: url.to_owned(),
            requests: Some(requests),
            writer: Some(writer),
            readers,
            next_reader: AtomicUsize::new(0),
        })
    }

    fn write_then(&self, op: Op, reply: Done) {
        let Some(requests) = self.requests.as_ref() else {
            return reply(Err(StoreError::WriterStopped));
        };
        if let Err(mpsc::SendError(request)) = requests.send(Request { op, reply }) {
            (request.reply)(Err(StoreError::WriterStopped));
        }
    }

    fn write(&self, op: Op) -> Result<(), StoreError> {
        let (sender, answer) = mpsc::sync_channel(1);
        self.write_then(
            op,
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        );
        answer.recv().map_err(|_| StoreError::WriterStopped)?
    }

    fn reader(&self) -> MutexGuard<'_, Client> {
        let start = self.next_reader.fetch_add(1, Ordering::Relaxed);
        let mut client = (0..self.readers.len())
            .find_map(|i| {
                self.readers[(start + i) % self.readers.len()]
                    .try_lock()
                    .ok()
            })
            .unwrap_or_else(|| {
                self.readers[start % self.readers.len()]
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
            });
        // After the database restarted, or the connection was cut: a new one. If that fails too,
        // the closed one answers this read with the error.
        if client.is_closed()
            && let Ok(fresh) = connect(&self.url)
        {
            *client = fresh;
        }
        client
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        // A blocking client owns a runtime, which cannot be dropped inside an async one: the readers
        // close on a thread of their own, wherever the store is dropped.
        let readers = std::mem::take(&mut self.readers);
        let _ = std::thread::spawn(move || drop(readers)).join();
    }
}

fn migrate(client: &mut Client) -> Result<(), StoreError> {
    let mut tx = client.transaction().map_err(pg)?;
    // One node migrates at a time; the others wait and find the work done.
    tx.execute("SELECT pg_advisory_xact_lock(7236911)", &[])
        .map_err(pg)?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS coffer_schema (version INTEGER NOT NULL)")
        .map_err(pg)?;
    let version: i32 = match tx
        .query_opt("SELECT version FROM coffer_schema", &[])
        .map_err(pg)?
    {
        Some(row) => row.get(0),
        None => {
            tx.execute("INSERT INTO coffer_schema (version) VALUES (0)", &[])
                .map_err(pg)?;
            0
        }
    };
    let known = MIGRATIONS.len() as i32;
    if version > known {
        return Err(StoreError::NewerSchema {
            found: i64::from(version),
            supported: i64::from(known),
        });
    }
    for migration in &MIGRATIONS[version as usize..] {
        tx.batch_execute(migration).map_err(pg)?;
    }
    tx.execute("UPDATE coffer_schema SET version = $1", &[&known])
        .map_err(pg)?;
    tx.commit().map_err(pg)
}

fn run_writer(mut client: Client, writer: &Writer, inbox: &mpsc::Receiver<Request>) {
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
                    tracing::warn!("the store's database cannot be reached: {error}");
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
                    tracing::warn!("the store's statements cannot be prepared: {error}");
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
                group.notices.push(format!("a:{}:{}", game.0, action.seq));
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
        "INSERT INTO games (id, ruleset, players, seed, config, created_unix_ms)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (id) DO NOTHING",
        &[
            &(game.id.0 as i64),
            &game.ruleset.as_str(),
            &(game.setup.players as i32),
            &(game.setup.seed as i64),
            &game.setup.config.to_string(),
            &(game.created_unix_ms as i64),
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
        ],
    )?;
    Ok(Ok(()))
}

fn keyed<S: postgres::ToStatement + ?Sized>(
    client: &mut impl GenericClient,
    query: &S,
    game: GameId,
    seat: u32,
    key: &str,
) -> Result<Option<u64>, postgres::Error> {
    let params: [&(dyn ToSql + Sync); 3] = [&(game.0 as i64), &(seat as i32), &key];
    Ok(client
        .query_opt(query, &params)?
        .map(|row| row.get::<_, i64>(0) as u64))
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

fn read_game(client: &mut impl GenericClient, game: GameId) -> Result<GameRecord, StoreError> {
    let row = client
        .query_opt(
            "SELECT ruleset, players, seed, config, created_unix_ms, finished, seq FROM games WHERE id = $1",
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
            "SELECT seq, seat, action, hash, idem FROM actions WHERE game = $1 AND seq > $2 AND seq <= $3 ORDER BY seq",
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
        snapshot_read(&mut self.reader(), |tx| {
            read_game(tx, game)?;
            let rows = tx
                .query(
                    "SELECT token_sha256 FROM seats WHERE game = $1 ORDER BY seat",
                    &[&(game.0 as i64)],
                )
                .map_err(pg)?;
            rows.into_iter()
                .map(|row| match row.get::<_, Option<Vec<u8>>>(0) {
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
        })
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

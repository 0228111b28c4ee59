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
mod open;
mod reads;
mod writer;

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
const INSERT_ACTION_SQL: &str = "INSERT INTO actions (game, seq, seat, action, hash, idem, at_unix_ms) VALUES ($1, $2, $3, $4, $5, $6, $7)";
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

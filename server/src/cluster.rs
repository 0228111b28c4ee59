//! Several server nodes on one PostgreSQL database: who owns which game, and news of every append.
//!
//! # Ownership
//! Each unfinished game has one row in `leases`: the node that owns it, that node's address, a fencing
//! number and an expiry, all in the database's clock. Only the owner applies actions; every append it
//! makes checks, in the append's own transaction, that the lease row still names it with the same
//! fencing number (see [`PgStore`](crate::PgStore)). A node renews all its leases together every third
//! of the lease's length. A lease that has expired is taken over by another node in one `UPDATE` that
//! raises the fencing number, so the old owner's appends, however late, are refused from then on.
//!
//! # News
//! A fenced append runs `pg_notify` in its transaction: PostgreSQL delivers `a:<game>:<seq>` on
//! [`ACTIONS_CHANNEL`] to every listening node when, and only when, the append commits, in commit
//! order. Where it fits, the notice carries the action itself (its seat, hash, time, key and JSON:
//! [`action_notice`]), so that a node following the game applies it without reading the store. A node
//! whose listening connection was cut has missed some: it is told to catch up from the store
//! ([`Notice::Resync`]).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use postgres::fallible_iterator::FallibleIterator;
use postgres::{Client, NoTls};

use percent_encoding::{AsciiSet, CONTROLS, percent_decode_str, utf8_percent_encode};
use serde_json::value::RawValue;

use crate::postgres::{ACTIONS_CHANNEL, NodeConfig};
use crate::store::{Action, GameId, StateHash, StoreError};

/// A lease as read from the database.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The node holding it.
    pub node: String,
    /// That node's base URL.
    pub addr: String,
    /// Its fencing number.
    pub fence: u64,
    /// Whether it has not expired yet.
    pub live: bool,
}

/// What the listening connection hears.
#[derive(Clone, Debug, PartialEq)]
pub enum Notice {
    /// Action `seq` of `game` was committed.
    Action {
        /// The game.
        game: GameId,
        /// The action's sequence number.
        seq: u64,
        /// The action itself, when it fitted in the notice.
        carried: Option<Box<Action>>,
    },
    /// A game was created, or one of its seats claimed: its record or seats changed.
    Game(GameId),
    /// Notices may have been missed (the connection was cut and made again): catch up from the store.
    Resync,
}

/// This node's side of the leases.
pub struct Cluster {
    url: String,
    node: NodeConfig,
    /// Renewals and sweeps: a connection of their own, so requests looking leases up never hold up
    /// the renewal that keeps this node's games its own.
    control: Mutex<Option<Client>>,
    /// Requests' look-ups and claims.
    client: Mutex<Option<Client>>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // A blocking client owns a runtime, which cannot be dropped inside an async one.
        let control = self.control.get_mut().map(Option::take).unwrap_or(None);
        let client = self.client.get_mut().map(Option::take).unwrap_or(None);
        let _ = std::thread::spawn(move || drop((control, client))).join();
    }
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

/// A `(game, fence)` row.
fn game_and_fence(row: &postgres::Row) -> (GameId, u64) {
    (
        GameId(row.get::<_, i64>(0) as u64),
        row.get::<_, i64>(1) as u64,
    )
}

fn pg(error: postgres::Error) -> StoreError {
    StoreError::Postgres(std::sync::Arc::new(error))
}

impl Cluster {
    /// This node's side of the leases in the database at `url` (already migrated by
    /// [`PgStore::open_node`](crate::PgStore::open_node)). Unfinished games that have no lease (made by
    /// a node of an earlier version, or by a single node) get an expired one, so some node takes them.
    ///
    /// # Errors
    /// [`StoreError::Postgres`] when the database cannot be reached.
    pub fn open(url: &str, node: NodeConfig) -> Result<Self, StoreError> {
        let cluster = Self {
            url: url.to_owned(),
            node,
            control: Mutex::new(None),
            client: Mutex::new(None),
        };
        cluster.with_client(|client| {
            client.execute(
                "INSERT INTO leases (game, node, addr, fence, expires_at)
                 SELECT id, '', '', 0, 'epoch' FROM games
                 WHERE NOT finished AND NOT EXISTS (SELECT 1 FROM leases WHERE game = games.id)
                 ON CONFLICT (game) DO NOTHING",
                &[],
            )
        })?;
        Ok(cluster)
    }

    /// This node.
    pub fn node(&self) -> &NodeConfig {
        &self.node
    }

    fn lease_millis(&self) -> i64 {
        self.node.lease.as_millis() as i64
    }

    fn with_client<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        self.with(&self.client, f)
    }

    fn with_control<T>(
        &self,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        self.with(&self.control, f)
    }

    fn with<T>(
        &self,
        connection: &Mutex<Option<Client>>,
        f: impl FnOnce(&mut Client) -> Result<T, postgres::Error>,
    ) -> Result<T, StoreError> {
        let mut slot = connection.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.as_ref().is_none_or(Client::is_closed) {
            let mut client = Client::connect(&self.url, NoTls).map_err(pg)?;
            // A lease call that cannot finish within a lease is of no use: it fails instead of hanging.
            client
                .batch_execute(&format!(
                    "SET statement_timeout = {}",
                    self.lease_millis().max(1)
                ))
                .map_err(pg)?;
            *slot = Some(client);
        }
        let client = slot.as_mut().expect("connected above");
        f(client).map_err(pg)
    }

    /// Renews every lease this node holds; answers the games it still holds, with their fencing
    /// numbers. A game this node believed it owned and that is not in the answer was taken over.
    ///
    /// # Errors
    /// A database failure: nothing is known, and the leases expire unless a later renewal works.
    pub fn renew(&self) -> Result<HashMap<GameId, u64>, StoreError> {
        let millis = self.lease_millis();
        self.with_control(|client| {
            let rows = client.query(
                // Rows locked in game order, as appends lock them: the two never deadlock.
                "UPDATE leases SET expires_at = now() + $2::BIGINT * INTERVAL '1 millisecond'
                 WHERE game IN (SELECT game FROM leases WHERE node = $1 ORDER BY game FOR UPDATE)
                   AND node = $1
                 RETURNING game, fence",
                &[&self.node.id, &millis],
            )?;
            Ok(rows.iter().map(game_and_fence).collect())
        })
    }

    /// Takes over up to `limit` unfinished games whose leases have expired; answers them with their
    /// new fencing numbers. Rows another node is taking at the same moment are skipped, not waited for.
    ///
    /// # Errors
    /// A database failure: nothing was taken.
    pub fn claim_expired(&self, limit: i64) -> Result<Vec<(GameId, u64)>, StoreError> {
        let millis = self.lease_millis();
        self.with_control(|client| {
            let rows = client.query(
                "UPDATE leases SET node = $1, addr = $2, fence = leases.fence + 1,
                     expires_at = now() + $3::BIGINT * INTERVAL '1 millisecond'
                 WHERE game IN (
                     SELECT l.game FROM leases l JOIN games g ON g.id = l.game
                     WHERE l.expires_at < now() AND NOT g.finished
                     ORDER BY l.expires_at LIMIT $4
                     FOR UPDATE OF l SKIP LOCKED)
                 RETURNING game, fence",
                &[&self.node.id, &self.node.addr, &millis, &limit],
            )?;
            Ok(rows.iter().map(game_and_fence).collect())
        })
    }

    /// Takes `game` over if its lease has expired (or it has none), or answers this node's fencing
    /// number if it holds the lease already; `None` when another node holds a live lease.
    ///
    /// # Errors
    /// A database failure.
    pub fn claim(&self, game: GameId) -> Result<Option<u64>, StoreError> {
        let millis = self.lease_millis();
        self.with_client(|client| {
            let row = client.query_opt(
                "INSERT INTO leases (game, node, addr, fence, expires_at)
                 VALUES ($1, $2, $3, 1, now() + $4::BIGINT * INTERVAL '1 millisecond')
                 ON CONFLICT (game) DO UPDATE SET node = EXCLUDED.node, addr = EXCLUDED.addr,
                     fence = CASE WHEN leases.node = EXCLUDED.node THEN leases.fence
                             ELSE leases.fence + 1 END,
                     expires_at = EXCLUDED.expires_at
                 WHERE leases.node = EXCLUDED.node OR leases.expires_at < now()
                 RETURNING fence",
                &[&(game.0 as i64), &self.node.id, &self.node.addr, &millis],
            )?;
            Ok(row.map(|row| row.get::<_, i64>(0) as u64))
        })
    }

    /// The lease of `game`, if it has one.
    ///
    /// # Errors
    /// A database failure.
    pub fn lease(&self, game: GameId) -> Result<Option<Lease>, StoreError> {
        self.with_client(|client| {
            let row = client.query_opt(
                "SELECT node, addr, fence, expires_at > now() FROM leases WHERE game = $1",
                &[&(game.0 as i64)],
            )?;
            Ok(row.map(|row| Lease {
                node: row.get(0),
                addr: row.get(1),
                fence: row.get::<_, i64>(2) as u64,
                live: row.get(3),
            }))
        })
    }

    /// Lets every lease of this node expire now, so other nodes take its games at once (a graceful
    /// shutdown, after the last commit).
    ///
    /// # Errors
    /// A database failure: the leases then expire in their own time.
    pub fn release_all(&self) -> Result<u64, StoreError> {
        self.with_control(|client| {
            client.execute(
                "UPDATE leases SET expires_at = 'epoch' WHERE node = $1",
                &[&self.node.id],
            )
        })
    }

    /// Listens on [`ACTIONS_CHANNEL`] on a thread of its own for as long as the process lives, calling
    /// `hear` with each notice. When the connection is lost it connects again (every second until the
    /// database answers), then calls `hear(Notice::Resync)`.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn listen(
        &self,
        hear: impl Fn(Notice) + Send + 'static,
    ) -> std::io::Result<std::thread::JoinHandle<()>> {
        let url = self.url.clone();
        std::thread::Builder::new()
            .name("coffer-listen".into())
            .spawn(move || {
                let mut first = true;
                loop {
                    let mut client = match Client::connect(&url, NoTls)
                        .and_then(|mut c| c.batch_execute(&format!("LISTEN {ACTIONS_CHANNEL}")).map(|()| c))
                    {
                        Ok(client) => client,
                        Err(error) => {
                            tracing::warn!("cannot listen for other nodes' actions: {error}");
                            std::thread::sleep(Duration::from_secs(1));
                            continue;
                        }
                    };
                    if !first {
                        tracing::info!("listening for other nodes' actions again");
                        hear(Notice::Resync);
                    }
                    first = false;
                    // Listens a second at a time, so a closed connection is noticed even when quiet.
                    'listening: while !client.is_closed() {
                        let mut notifications = client.notifications();
                        let mut heard = notifications.timeout_iter(Duration::from_secs(1));
                        loop {
                            match heard.next() {
                                Ok(Some(notification)) => {
                                    // One notification carries a commit's notices, space-separated.
                                    for notice in notification.payload().split(' ') {
                                        if let Some(notice) = parse_notice(notice) {
                                            hear(notice);
                                        }
                                    }
                                }
                                Ok(None) => break,
                                Err(error) => {
                                    tracing::warn!(
                                        "lost the connection listening for other nodes' actions: {error}"
                                    );
                                    break 'listening;
                                }
                            }
                        }
                    }
                }
            })
    }
}

/// The longest notice that carries its action: longer ones name it only, and the nodes following the
/// game read it from the store. A commit's notices share payloads of at most 8,000 bytes.
const CARRIED_NOTICE_BYTES: usize = 2_000;

/// What a notice escapes in the JSON it carries: controls, `%` and spaces (which separate notices); and
/// everything else outside ASCII.
const IN_JSON: &AsciiSet = &CONTROLS.add(b'%').add(b' ');
/// What it escapes in a key: the same, and `:` (which separates fields before the JSON).
const IN_KEY: &AsciiSet = &IN_JSON.add(b':');

/// The notice of action `action` of `game`, appended: `a:<game>:<seq>:<seat>:<hash>:<at>:<key>:<json>`
/// (`<key>` empty for none, else `k` and the key), percent-encoded ([`IN_KEY`], [`IN_JSON`]); or
/// `a:<game>:<seq>` alone when that would be longer than [`CARRIED_NOTICE_BYTES`].
pub(crate) fn action_notice(game: GameId, action: &Action) -> String {
    let key = action.key.as_deref().map_or(String::new(), |key| {
        format!("k{}", utf8_percent_encode(key, IN_KEY))
    });
    let carried = format!(
        "a:{}:{}:{}:{}:{}:{key}:{}",
        game.0,
        action.seq,
        action.seat,
        action.hash.0,
        action.at_unix_ms,
        utf8_percent_encode(action.action.get(), IN_JSON)
    );
    if carried.len() <= CARRIED_NOTICE_BYTES {
        carried
    } else {
        format!("a:{}:{}", game.0, action.seq)
    }
}

fn unescape(text: &str) -> Option<String> {
    percent_decode_str(text)
        .decode_utf8()
        .ok()
        .map(|text| text.into_owned())
}

fn parse_notice(payload: &str) -> Option<Notice> {
    let mut parts = payload.splitn(8, ':');
    let notice = match (parts.next()?, parts.next()?, parts.next()) {
        ("a", game, Some(seq)) => {
            let (game, seq) = (GameId(game.parse().ok()?), seq.parse().ok()?);
            let carried = match parts.next() {
                None => None,
                Some(seat) => {
                    let (hash, at, key, json) =
                        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
                    let key = match key {
                        "" => None,
                        key => Some(unescape(key.strip_prefix('k')?)?),
                    };
                    Some(Box::new(Action {
                        seq,
                        seat: seat.parse().ok()?,
                        action: RawValue::from_string(unescape(json)?).ok()?,
                        hash: StateHash(hash.parse().ok()?),
                        key,
                        at_unix_ms: at.parse().ok()?,
                    }))
                }
            };
            Notice::Action { game, seq, carried }
        }
        ("g", game, None) => Notice::Game(GameId(game.parse().ok()?)),
        _ => return None,
    };
    parts.next().is_none().then_some(notice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn action(json: &str, key: Option<&str>) -> Action {
        Action {
            seq: 7,
            seat: 1,
            action: RawValue::from_string(json.to_owned()).unwrap(),
            hash: StateHash(u64::MAX - 3),
            key: key.map(str::to_owned),
            at_unix_ms: 1_700_000_000_123,
        }
    }

    #[test]
    fn notices_read_as_written() {
        assert_eq!(
            parse_notice("a:12:7"),
            Some(Notice::Action {
                game: GameId(12),
                seq: 7,
                carried: None
            })
        );
        assert_eq!(parse_notice("g:12"), Some(Notice::Game(GameId(12))));
        for bad in [
            "",
            "a:12",
            "g:x",
            "a:1:2:3",
            "z:1",
            "g:1:2",
            "a:1:2:3:4:5",
            "a:1:2:0:1:2:x:{}",
            "a:1:2:0:1:2::%zz",
            "a:1:2:0:1:2::not json",
        ] {
            assert_eq!(parse_notice(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_carried_action_reads_back_exactly_whatever_its_json_and_key_hold() {
        for (json, key) in [
            (r#"{"Pass":null}"#, None),
            (
                r#"{ "say" : "a b:c %20 100%" }"#,
                Some("key with spaces: and % signs"),
            ),
            ("[1,\n 2]", Some("k")),
            (r#""é ü""#, Some("")),
        ] {
            let sent = action(json, key);
            let notice = action_notice(GameId(12), &sent);
            assert!(!notice.contains(' '), "a space separates notices: {notice}");
            let Some(Notice::Action {
                game,
                seq,
                carried: Some(got),
            }) = parse_notice(&notice)
            else {
                panic!("{notice} does not read back");
            };
            assert_eq!((game, seq), (GameId(12), 7));
            assert_eq!(got.action.get(), sent.action.get());
            assert_eq!(
                (got.seat, got.hash, got.key, got.at_unix_ms),
                (sent.seat, sent.hash, sent.key, sent.at_unix_ms)
            );
        }
    }

    #[test]
    fn an_action_too_long_for_a_notice_is_only_named() {
        let long = format!("[{}1]", "1,".repeat(CARRIED_NOTICE_BYTES));
        let notice = action_notice(GameId(3), &action(&long, None));
        assert_eq!(notice, "a:3:7");
    }
}

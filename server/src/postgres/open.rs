//! Opening a `PgStore`: connecting, applying the migrations, starting the writer; and closing it.

use super::writer::run_writer;
use super::*;

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
    // Which seats the server's bots play, and the game's clock (none in earlier games).
    "
ALTER TABLE games ADD COLUMN bots TEXT NOT NULL DEFAULT '{}';
ALTER TABLE games ADD COLUMN clock TEXT NOT NULL DEFAULT 'null';
",
    // When each action was applied (0 for earlier ones), for the clocks of a game taken over.
    "
ALTER TABLE actions ADD COLUMN at_unix_ms BIGINT NOT NULL DEFAULT 0;
",
];

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

    pub(super) fn write_then(&self, op: Op, reply: Done) {
        let Some(requests) = self.requests.as_ref() else {
            return reply(Err(StoreError::WriterStopped));
        };
        if let Err(mpsc::SendError(request)) = requests.send(Request { op, reply }) {
            (request.reply)(Err(StoreError::WriterStopped));
        }
    }

    pub(super) fn write(&self, op: Op) -> Result<(), StoreError> {
        let (sender, answer) = mpsc::sync_channel(1);
        self.write_then(
            op,
            Box::new(move |result| {
                let _ = sender.send(result);
            }),
        );
        answer.recv().map_err(|_| StoreError::WriterStopped)?
    }

    pub(super) fn reader(&self) -> MutexGuard<'_, Client> {
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

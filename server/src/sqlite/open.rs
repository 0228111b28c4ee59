//! Opening a `SqliteStore`: checking the file, migrating the schema, starting the writer; and closing it.

use super::writer::run_writer;
use super::*;

impl SqliteStore {
    /// Opens the store at `path` (or makes a new one, as [`SqliteConfig::opening`] allows) and starts its
    /// writer thread. A new store is stamped with [`APPLICATION_ID`]; an existing one must carry the
    /// stamp or, made before it, Coffer's tables (it is stamped then).
    ///
    /// # Errors
    /// [`StoreError::NoStore`], [`StoreError::AlreadyExists`] and [`StoreError::NotAStore`] as the
    /// opening says, [`StoreError::Sqlite`] when the file cannot be opened or set up,
    /// [`StoreError::NewerSchema`] when a newer build wrote it, [`StoreError::WriterStart`] when no
    /// thread can be started.
    pub fn open(path: &Path, config: SqliteConfig) -> Result<Self, StoreError> {
        let writer = open_checked(path, config.opening)?;
        writer.busy_timeout(std::time::Duration::from_secs(5))?;
        let mode: String = writer.query_row("PRAGMA journal_mode = WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(StoreError::Corrupt(format!(
                "journal mode is '{mode}', not wal"
            )));
        }
        let synchronous = match config.durability {
            Durability::PowerLoss => "FULL",
            Durability::ProcessCrash => "NORMAL",
        };
        writer.pragma_update(None, "synchronous", synchronous)?;
        let version: i64 = writer.query_row("PRAGMA user_version", [], |row| row.get(0))?;
        if version > SCHEMA_VERSION {
            return Err(StoreError::NewerSchema {
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        if version == 1 {
            // Version 2 added idempotency keys to actions.
            writer.execute_batch("ALTER TABLE actions ADD COLUMN idem TEXT")?;
        }
        if (1..3).contains(&version) {
            // Version 3 keeps when a game finished in `finished` (ms since the epoch; 0 while it is
            // not): games finished before count as finished now, so a retention policy gives them
            // its whole time.
            writer.execute(
                "UPDATE games SET finished = ?1 WHERE finished != 0",
                [finished_now()],
            )?;
        }
        if (1..4).contains(&version) {
            // Version 4 keeps which seats the server's bots play and the game's clock (none in
            // earlier games).
            for (column, default) in [("bots", "'{}'"), ("clock", "'null'")] {
                let present: bool = writer.query_row(
                    "SELECT COUNT(*) > 0 FROM pragma_table_info('games') WHERE name = ?1",
                    [column],
                    |row| row.get(0),
                )?;
                if !present {
                    writer.execute_batch(&format!(
                        "ALTER TABLE games ADD COLUMN {column} TEXT NOT NULL DEFAULT {default}"
                    ))?;
                }
            }
        }
        if (1..5).contains(&version) {
            // Version 5 keeps when each action was applied (0 for earlier ones).
            let present: bool = writer.query_row(
                "SELECT COUNT(*) > 0 FROM pragma_table_info('actions') WHERE name = 'at_unix_ms'",
                [],
                |row| row.get(0),
            )?;
            if !present {
                writer.execute_batch(
                    "ALTER TABLE actions ADD COLUMN at_unix_ms INTEGER NOT NULL DEFAULT 0",
                )?;
            }
        }
        writer.execute_batch(SCHEMA)?;
        writer.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        writer.pragma_update(None, "application_id", APPLICATION_ID)?;

        let reader = Connection::open(path)?;
        reader.busy_timeout(std::time::Duration::from_secs(5))?;
        reader.pragma_update(None, "query_only", true)?;

        let counters = Arc::new(Counters::default());
        let (requests, inbox) = mpsc::channel();
        let max_batch = config.max_batch.max(1);
        let thread_counters = Arc::clone(&counters);
        let writer = std::thread::Builder::new()
            .name("coffer-store-writer".into())
            .spawn(move || run_writer(writer, &inbox, max_batch, &thread_counters))
            .map_err(StoreError::WriterStart)?;
        Ok(Self {
            requests: Some(requests),
            writer: Some(writer),
            reader: Mutex::new(reader),
            counters,
        })
    }

    /// What the writer has done so far.
    pub fn stats(&self) -> WriterStats {
        WriterStats {
            requests: self.counters.requests.load(Ordering::Relaxed),
            transactions: self.counters.transactions.load(Ordering::Relaxed),
        }
    }

    /// Sends `op` to the writer and waits until its group is committed.
    pub(super) fn write(&self, op: Op) -> Result<(), StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        let requests = self.requests.as_ref().ok_or(StoreError::WriterStopped)?;
        requests
            .send(Request {
                op,
                reply: Reply::Wait(reply),
            })
            .map_err(|_| StoreError::WriterStopped)?;
        answer.recv().map_err(|_| StoreError::WriterStopped)?
    }

    /// Sends `op` to the writer; `done` gets the result once its group is committed.
    pub(super) fn write_then(&self, op: Op, done: Done) {
        let Some(requests) = self.requests.as_ref() else {
            return done(Err(StoreError::WriterStopped));
        };
        if let Err(mpsc::SendError(request)) = requests.send(Request {
            op,
            reply: Reply::Then(done),
        }) {
            request.reply.send(Err(StoreError::WriterStopped));
        }
    }

    pub(super) fn reader(&self) -> MutexGuard<'_, Connection> {
        // The connection holds no state of ours between calls; a panic in another reader leaves it
        // usable.
        self.reader.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The write-ahead log of the database at `path` (`<path>-wal`).
fn wal_path(path: &Path) -> std::path::PathBuf {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    wal.into()
}

/// Whether a file exists and holds bytes.
fn has_data(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|meta| meta.len() > 0)
}

/// Opens the database at `path` for writing, after checking that it is what `opening` accepts.
fn open_checked(path: &Path, opening: Opening) -> Result<Connection, StoreError> {
    let no_store = |why| StoreError::NoStore {
        path: path.to_owned(),
        why,
    };
    let empty = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(StoreError::NotAStore {
                path: path.to_owned(),
                why: "it is a directory".to_owned(),
            });
        }
        // An empty file whose write-ahead log holds data is no empty store: SQLite reads it.
        Ok(meta) => meta.len() == 0 && !has_data(&wal_path(path)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if opening == Opening::Existing {
                return Err(no_store("the file does not exist"));
            }
            return Ok(Connection::open(path)?);
        }
        // Unreadable metadata: SQLite says why as it opens.
        Err(_) => false,
    };
    match (empty, opening) {
        (true, Opening::Existing) => return Err(no_store("the file is empty")),
        (true, _) => return Ok(Connection::open(path)?),
        (false, Opening::Create) => {
            return Err(StoreError::AlreadyExists {
                path: path.to_owned(),
            });
        }
        (false, _) => {}
    }
    // Never creates: the file was there a moment ago, and one removed since is no store.
    let connection = Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let not_a_store = |why: String| StoreError::NotAStore {
        path: path.to_owned(),
        why,
    };
    let id: i32 = connection
        .query_row("PRAGMA application_id", [], |row| row.get(0))
        .map_err(|e| not_a_store(format!("it does not read as a SQLite database ({e})")))?;
    if id == APPLICATION_ID {
        return Ok(connection);
    }
    if id != 0 {
        return Err(not_a_store(format!(
            "its SQLite application id is {id:#010x}, not Coffer's {APPLICATION_ID:#010x}"
        )));
    }
    // Made before stores were stamped: Coffer's tables say it is one.
    let mut missing = Vec::new();
    for table in TABLES {
        let found: Option<String> = connection
            .query_row(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?1",
                [table],
                |row| row.get(0),
            )
            .optional()?;
        if found.is_none() {
            missing.push(table);
        }
    }
    if missing.is_empty() {
        Ok(connection)
    } else {
        Err(not_a_store(format!(
            "it is a SQLite database without Coffer's tables (no {})",
            missing.join(", ")
        )))
    }
}

impl Drop for SqliteStore {
    fn drop(&mut self) {
        // Closing the channel ends the writer once it has answered every request already sent.
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
    }
}

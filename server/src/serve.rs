//! Running the server: the store, recovery, the listener with its connection limit and header
//! timeout, and graceful shutdown.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{Semaphore, watch};

use crate::calls::RunningCall;
use crate::games::{Games, SWEEP_EVERY};
use crate::http::{App, ClientAddr, router};
use crate::limits::Limits;
use crate::metrics::Metrics;
use crate::{Durability, MemoryStore, Opening, SqliteConfig, SqliteStore, Store, StoreError};
use coffer_host::Registry;
use tower::ServiceExt as _;

/// Where the server keeps its games.
#[derive(Clone, Debug)]
pub enum StoreChoice {
    /// One SQLite file, the embedded default.
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What an acknowledged action survives.
        durability: Durability,
        /// Whether the file must hold a store already ([`Opening::Existing`], the server's default) or
        /// one is made where none is ([`Opening::OpenOrCreate`], `--create`).
        opening: Opening,
    },
    /// A PostgreSQL database (`postgres://user@host:port/database`), migrated on start.
    Postgres {
        /// The connection URL.
        url: String,
        /// As one node of several sharing this database: how.
        cluster: Option<ClusterOptions>,
    },
    /// Memory only: nothing survives the process. For tests and trials.
    Memory,
}

/// How a node joins the others on the same PostgreSQL database.
#[derive(Clone, Debug)]
pub struct ClusterOptions {
    /// The base URL the other nodes reach this one at; `None`: `http://<the address it listens on>`.
    pub advertise: Option<String>,
    /// How long its leases last without renewal: a node that dies has its games taken over after this
    /// long (plus a quarter of it, the other nodes' sweep).
    pub lease: std::time::Duration,
}

/// How to run a server.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// The address to listen on; port 0 picks a free one.
    pub listen: SocketAddr,
    /// The store.
    pub store: StoreChoice,
    /// The bounds.
    pub limits: Limits,
}

/// Why the server could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The store could not be opened or read.
    #[error("cannot open the store")]
    Store(#[source] StoreError),
    /// A node of several listens on all interfaces and was not told the address others reach it at.
    #[error(
        "a node of several that listens on {0} needs --advertise URL: the address the other nodes reach it at"
    )]
    NoAdvertise(SocketAddr),
    /// The listening address could not be bound.
    #[error("cannot listen on {addr}")]
    Listen {
        /// The address.
        addr: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// How a server that stopped without error ended.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct Stopped {
    /// The ruleset calls still running when the shutdown grace ran out, abandoned on their threads
    /// (each was logged at `error`, naming its game and ruleset). A program should end its process
    /// soon after: the threads never return.
    pub abandoned: Vec<RunningCall>,
}

/// Opens the store, recovers its unfinished games, listens, and serves until `stop` resolves (or
/// SIGTERM/SIGINT when `stop` is `None`; their handlers are installed before anything else, so a
/// signal that comes while the server starts stops it once it listens); then stops accepting, closes
/// WebSockets, waits up to [`Limits::shutdown_grace`] for requests in flight and ruleset calls, and
/// closes the store once every commit is done. A ruleset call still running when the grace runs out
/// is abandoned, logged and answered in [`Stopped::abandoned`]. `ready` is called with the bound
/// address once the server accepts connections.
///
/// # Errors
/// [`ServeError`] when the store cannot be opened or the address bound.
pub async fn serve(
    registry: Registry,
    config: ServeConfig,
    ready: impl FnOnce(SocketAddr, &Games),
    stop: Option<tokio::sync::oneshot::Receiver<()>>,
) -> Result<Stopped, ServeError> {
    let stop = match stop {
        Some(stop) => Stop::Told(stop),
        None => Stop::Signals(Signals::install()),
    };
    // The server keeps its own deadline around every plugin call and stops only the game concerned.
    coffer_host::loader::contain_overdue_calls();
    let limits = config.limits.clone();
    // Bound first: a node of several tells the others where it listens when it takes a lease.
    let listener = TcpListener::bind(config.listen)
        .await
        .map_err(|source| ServeError::Listen {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| ServeError::Listen {
        addr: config.listen,
        source,
    })?;
    let mut node = None;
    let store: Arc<dyn Store> = match &config.store {
        StoreChoice::Sqlite {
            path,
            durability,
            opening,
        } => {
            let sqlite = SqliteConfig {
                durability: *durability,
                opening: *opening,
                ..SqliteConfig::default()
            };
            let path = path.clone();
            let opened = tokio::task::spawn_blocking(move || SqliteStore::open(&path, sqlite))
                .await
                .map_err(|_| ServeError::Store(StoreError::WriterStopped))?;
            Arc::new(opened.map_err(ServeError::Store)?)
        }
        StoreChoice::Postgres { url, cluster } => {
            let config = match cluster {
                Some(options) => {
                    let advertise = match &options.advertise {
                        Some(advertise) => advertise.trim_end_matches('/').to_owned(),
                        None if addr.ip().is_unspecified() => {
                            return Err(ServeError::NoAdvertise(addr));
                        }
                        None => format!("http://{addr}"),
                    };
                    let id = crate::games::new_token()
                        .map_err(|_| ServeError::Store(StoreError::WriterStopped))?;
                    Some(crate::NodeConfig {
                        id: format!("node-{}", &id[..12]),
                        addr: advertise,
                        lease: options.lease,
                    })
                }
                None => None,
            };
            let url = url.clone();
            let opened = tokio::task::spawn_blocking(move || {
                let store = crate::PgStore::open_node(&url, config.clone())?;
                let cluster = config
                    .map(|config| crate::cluster::Cluster::open(&url, config))
                    .transpose()?;
                Ok::<_, StoreError>((store, cluster))
            })
            .await
            .map_err(|_| ServeError::Store(StoreError::WriterStopped))?;
            let (store, cluster) = opened.map_err(ServeError::Store)?;
            node = cluster.map(Arc::new);
            Arc::new(store)
        }
        StoreChoice::Memory => Arc::new(MemoryStore::new()),
    };
    let metrics = Arc::new(Metrics::default());
    let mut games = Games::new(registry, store, limits.clone(), metrics.clone());
    if let Some(cluster) = &node {
        tracing::info!(node = %cluster.node().id, advertise = %cluster.node().addr,
            lease_secs = cluster.node().lease.as_secs_f64(), "one node of several on the store");
        games = games.with_cluster(Arc::clone(cluster));
    }
    let games = Arc::new(games);
    let recovering = Arc::clone(&games);
    let (recovered, stopped) = tokio::task::spawn_blocking(move || recovering.recover())
        .await
        .map_err(|_| ServeError::Store(StoreError::WriterStopped))?
        .map_err(ServeError::Store)?;
    if recovered > 0 {
        tracing::info!(
            recovered,
            stopped,
            "unfinished games recovered from the store"
        );
    }

    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let max_connections = limits.max_connections.max(1);
    let connections = Arc::new(Semaphore::new(max_connections));
    let per_client = crate::clients::PerClient::new(limits.connections_per_client());
    let running = match node {
        Some(_) => Some(
            crate::follow::start(&games)
                .map_err(|e| ServeError::Store(StoreError::WriterStart(e)))?,
        ),
        None => None,
    };
    let app = App::new(Arc::clone(&games), shutdown_rx.clone())
        .limit_connections(Arc::clone(&connections));
    let service = router(app.clone());
    ready(addr, &games);

    // Often enough that a finished game leaves within its linger's time again.
    let sweep_every = SWEEP_EVERY.min(limits.finished_linger);
    let sweeper = {
        let app = app.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(sweep_every);
            loop {
                every.tick().await;
                app.sweep();
            }
        })
    };

    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let stop = stop.wait();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(accepted) => accepted,
                    Err(e) => {
                        // Out of descriptors and the like: wait a little rather than spin.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let Ok(permit) = Arc::clone(&connections).try_acquire_owned() else {
                    metrics.connections_refused.inc();
                    drop(stream);
                    continue;
                };
                // Each client address holds at most its share of the connections.
                let Some(share) = per_client.take(peer.ip()) else {
                    metrics.connections_refused.inc();
                    metrics.quota_refused.inc();
                    drop(stream);
                    continue;
                };
                let client = ClientAddr(peer.ip());
                let share = crate::clients::ConnectionShare::new(share);
                let held = share.clone();
                let service = service.clone().map_request(move |mut request: hyper::Request<hyper::body::Incoming>| {
                    request.extensions_mut().insert(client);
                    request.extensions_mut().insert(held.clone());
                    request
                });
                let _ = stream.set_nodelay(true);
                metrics.connections.inc();
                let connection = builder
                    .serve_connection(TokioIo::new(crate::canned::JsonErrors::new(stream)), TowerToHyperService::new(service))
                    .with_upgrades();
                let metrics = Arc::clone(&metrics);
                let mut closing = shutdown_rx.clone();
                tokio::spawn(async move {
                    tokio::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = closing.changed() => {
                            // Finish the request in flight, then close; an upgraded WebSocket closes
                            // itself on the same signal.
                            connection.as_mut().graceful_shutdown();
                            let _ = connection.await;
                        }
                    }
                    metrics.connections.dec();
                    drop(share);
                    drop(permit);
                });
            }
            () = &mut stop => break,
        }
    }
    tracing::info!("shutting down: no new connections; closing WebSockets, finishing requests");
    let grace_ends = std::time::Instant::now() + limits.shutdown_grace;
    drop(listener);
    let _ = shutdown_tx.send(true);
    sweeper.abort();
    let all = u32::try_from(max_connections).unwrap_or(u32::MAX);
    if tokio::time::timeout(limits.shutdown_grace, connections.acquire_many(all))
        .await
        .is_err()
    {
        tracing::warn!(
            "requests still open after {} s are cut",
            limits.shutdown_grace.as_secs_f64()
        );
    }
    // A request cut above may leave its ruleset call running: it has what is left of the grace.
    let abandoned = games.calls().settle(grace_ends).await;
    for call in &abandoned {
        tracing::error!(game = %call.game, ruleset = %call.ruleset,
            "shutdown abandons a ruleset call still running after the {} s grace: {call}; its thread is \
             left behind and nothing it did is stored",
            limits.shutdown_grace.as_secs_f64());
    }
    // Every acknowledged action is committed already; dropping the last handle on the store lets its
    // writer finish what is queued and close the database.
    drop(service);
    drop(app);
    let closing = tokio::task::spawn_blocking(move || drop(games));
    let _ = closing.await;
    if let Some(running) = running {
        running.release().await;
    }
    if abandoned.is_empty() {
        tracing::info!("stopped");
    } else {
        tracing::error!(
            abandoned = abandoned.len(),
            "stopped, abandoning ruleset calls that did not end within the grace"
        );
    }
    Ok(Stopped { abandoned })
}

/// What ends serving: a channel the caller holds, or the process's signals.
enum Stop {
    Told(tokio::sync::oneshot::Receiver<()>),
    Signals(Signals),
}

impl Stop {
    async fn wait(self) {
        match self {
            Stop::Told(stop) => {
                let _ = stop.await;
            }
            Stop::Signals(signals) => signals.recv().await,
        }
    }
}

/// SIGTERM and SIGINT, listened to from [`install`](Signals::install) on: one that comes before
/// anyone waits is kept, not lost (nor does it end the process the default way).
struct Signals {
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    interrupt: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    fn install() -> Signals {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Signals {
                term: signal(SignalKind::terminate()).ok(),
                interrupt: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Signals {}
        }
    }

    /// Resolves on SIGTERM or SIGINT.
    async fn recv(self) {
        #[cfg(unix)]
        {
            async fn next(signal: Option<tokio::signal::unix::Signal>) {
                match signal {
                    Some(mut signal) => {
                        signal.recv().await;
                    }
                    None => std::future::pending().await,
                }
            }
            if self.term.is_none() && self.interrupt.is_none() {
                let _ = tokio::signal::ctrl_c().await;
                return;
            }
            tokio::select! {
                () = next(self.term) => {}
                () = next(self.interrupt) => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}

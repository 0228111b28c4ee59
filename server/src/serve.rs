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
use crate::cluster::Cluster;
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
    let (listener, addr) = bind(config.listen).await?;
    let (store, node) = open_store(&config.store, addr).await?;
    let metrics = Arc::new(Metrics::default());
    let games = recover(registry, store, node.as_ref(), &limits, &metrics).await?;
    let running = match node {
        Some(_) => Some(
            crate::follow::start(&games)
                .map_err(|e| ServeError::Store(StoreError::WriterStart(e)))?,
        ),
        None => None,
    };
    let (shutdown_tx, shutdown_rx) = watch::channel(false);
    let max_connections = limits.max_connections.max(1);
    let connections = Arc::new(Semaphore::new(max_connections));
    let app = App::new(Arc::clone(&games), shutdown_rx.clone())
        .limit_connections(Arc::clone(&connections));
    let service = router(app.clone());
    ready(addr, &games);
    let sweeper = sweep(app.clone(), &limits);
    let accepting = Accepting {
        service,
        connections: Arc::clone(&connections),
        per_client: crate::clients::PerClient::new(limits.connections_per_client()),
        metrics,
        closing: shutdown_rx,
        limits: limits.clone(),
    };
    accepting.run(listener, stop.wait()).await;
    tracing::info!("shutting down: no new connections; closing WebSockets, finishing requests");
    let _ = shutdown_tx.send(true);
    sweeper.abort();
    let closing = Closing {
        limits,
        connections,
        max_connections,
        app,
        games,
        running,
    };
    Ok(closing.shut_down().await)
}

/// Binds the listening address, and reads back the one bound (port 0 picks a free port).
async fn bind(listen: SocketAddr) -> Result<(TcpListener, SocketAddr), ServeError> {
    let failed = |source| ServeError::Listen {
        addr: listen,
        source,
    };
    let listener = TcpListener::bind(listen).await.map_err(failed)?;
    let addr = listener.local_addr().map_err(failed)?;
    Ok((listener, addr))
}

/// Opens the chosen store off the async threads; for a node of several, also its place in the cluster.
async fn open_store(
    choice: &StoreChoice,
    addr: SocketAddr,
) -> Result<(Arc<dyn Store>, Option<Arc<Cluster>>), ServeError> {
    let stopped = |_| ServeError::Store(StoreError::WriterStopped);
    match choice {
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
                .map_err(stopped)?;
            Ok((Arc::new(opened.map_err(ServeError::Store)?), None))
        }
        StoreChoice::Postgres { url, cluster } => {
            let config = cluster
                .as_ref()
                .map(|options| node_config(options, addr))
                .transpose()?;
            let url = url.clone();
            let opened = tokio::task::spawn_blocking(move || {
                let store = crate::PgStore::open_node(&url, config.clone())?;
                let cluster = config
                    .map(|config| Cluster::open(&url, config))
                    .transpose()?;
                Ok::<_, StoreError>((store, cluster))
            })
            .await
            .map_err(stopped)?;
            let (store, cluster) = opened.map_err(ServeError::Store)?;
            Ok((Arc::new(store), cluster.map(Arc::new)))
        }
        StoreChoice::Memory => Ok((Arc::new(MemoryStore::new()), None)),
    }
}

/// A node's name and the address the others reach it at.
fn node_config(
    options: &ClusterOptions,
    addr: SocketAddr,
) -> Result<crate::NodeConfig, ServeError> {
    let advertise = match &options.advertise {
        Some(advertise) => advertise.trim_end_matches('/').to_owned(),
        None if addr.ip().is_unspecified() => return Err(ServeError::NoAdvertise(addr)),
        None => format!("http://{addr}"),
    };
    let id = crate::games::new_token().map_err(|_| ServeError::Store(StoreError::WriterStopped))?;
    Ok(crate::NodeConfig {
        id: format!("node-{}", &id[..12]),
        addr: advertise,
        lease: options.lease,
    })
}

/// The games of the store, with the unfinished ones recovered from their logs.
async fn recover(
    registry: Registry,
    store: Arc<dyn Store>,
    node: Option<&Arc<Cluster>>,
    limits: &Limits,
    metrics: &Arc<Metrics>,
) -> Result<Arc<Games>, ServeError> {
    let mut games = Games::new(registry, store, limits.clone(), Arc::clone(metrics));
    if let Some(cluster) = node {
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
    // A game recovered with a bot to act goes on by itself; clocks run again.
    games.resume_all();
    Ok(games)
}

/// Sweeps finished games out of memory, often enough that one leaves within its linger's time.
fn sweep(app: App, limits: &Limits) -> tokio::task::JoinHandle<()> {
    let sweep_every = SWEEP_EVERY.min(limits.finished_linger);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(sweep_every);
        loop {
            every.tick().await;
            app.sweep();
        }
    })
}

/// What accepting connections needs: the service, the connection limits and the signal to close.
struct Accepting {
    service: axum::Router,
    connections: Arc<Semaphore>,
    per_client: crate::clients::PerClient,
    metrics: Arc<Metrics>,
    closing: watch::Receiver<bool>,
    limits: Limits,
}

impl Accepting {
    /// Accepts connections until `stop` resolves, each served on a task of its own; then lets go of the
    /// service, so the games and their store close once the last connection has.
    async fn run(self, listener: TcpListener, stop: impl std::future::Future<Output = ()>) {
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(self.limits.header_timeout)
            .keep_alive(true);
        tokio::pin!(stop);
        loop {
            tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((stream, peer)) => self.connection(&builder, stream, peer),
                    Err(e) => {
                        // Out of descriptors and the like: wait a little rather than spin.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    }
                },
                () = &mut stop => break,
            }
        }
    }

    /// Serves one accepted connection within the limits: the whole server's and its address's share.
    fn connection(
        &self,
        builder: &http1::Builder,
        stream: tokio::net::TcpStream,
        peer: SocketAddr,
    ) {
        let metrics = &self.metrics;
        let Ok(permit) = Arc::clone(&self.connections).try_acquire_owned() else {
            metrics.connections_refused.inc();
            return;
        };
        // Each client address holds at most its share of the connections.
        let Some(share) = self.per_client.take(peer.ip()) else {
            metrics.connections_refused.inc();
            metrics.quota_refused.inc();
            return;
        };
        let client = ClientAddr(peer.ip());
        let share = crate::clients::ConnectionShare::new(share);
        let held = share.clone();
        let service = self.service.clone().map_request(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(client);
                request.extensions_mut().insert(held.clone());
                request
            },
        );
        let _ = stream.set_nodelay(true);
        metrics.connections.inc();
        let connection = builder
            .serve_connection(
                TokioIo::new(crate::canned::JsonErrors::new(stream)),
                TowerToHyperService::new(service),
            )
            .with_upgrades();
        let metrics = Arc::clone(metrics);
        let mut closing = self.closing.clone();
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
}

/// What a shutdown finishes: the connections still open, the ruleset calls still running, the store.
struct Closing {
    limits: Limits,
    connections: Arc<Semaphore>,
    max_connections: usize,
    app: App,
    games: Arc<Games>,
    running: Option<crate::follow::Running>,
}

impl Closing {
    /// Waits up to the grace for requests and ruleset calls, closes the store after its last commit and
    /// hands a node's leases to the others.
    async fn shut_down(self) -> Stopped {
        let grace = self.limits.shutdown_grace;
        let grace_ends = std::time::Instant::now() + grace;
        let all = u32::try_from(self.max_connections).unwrap_or(u32::MAX);
        if tokio::time::timeout(grace, self.connections.acquire_many(all))
            .await
            .is_err()
        {
            tracing::warn!(
                "requests still open after {} s are cut",
                grace.as_secs_f64()
            );
        }
        // A request cut above may leave its ruleset call running: it has what is left of the grace.
        let abandoned = self.games.calls().settle(grace_ends).await;
        for call in &abandoned {
            tracing::error!(game = %call.game, ruleset = %call.ruleset,
                "shutdown abandons a ruleset call still running after the {} s grace: {call}; its thread is \
                 left behind and nothing it did is stored",
                grace.as_secs_f64());
        }
        // Every acknowledged action is committed already; dropping the last handle on the store lets its
        // writer finish what is queued and close the database.
        drop(self.app);
        let games = self.games;
        let _ = tokio::task::spawn_blocking(move || drop(games)).await;
        if let Some(running) = self.running {
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
        Stopped { abandoned }
    }
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

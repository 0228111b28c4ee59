//! `coffer-server`: the game server (`coffer serve` runs it). Its load generator is the program
//! `coffer-loadtest` (`coffer loadtest`).

use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand, ValueEnum};
use coffer_cli::{Global, load_registry};
use coffer_server::serve::{ClusterOptions, ServeConfig, ServeError, StoreChoice, serve};
use coffer_server::{Durability, Limits, Opening, StoreError};

const AFTER_HELP: &str = "\
Examples:
  coffer --plugin-dir target/release serve --create     (makes coffer.db if it is not there)
  coffer --plugin-dir target/release serve --listen 0.0.0.0:8080 --store games.db
  coffer --plugin-dir target/release export --store games.db --game 42 -o game42.json";

/// The Coffer game server.
#[derive(Debug, Parser)]
#[command(name = "coffer", bin_name = "coffer", version, about = "The Coffer game server", after_long_help = AFTER_HELP)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Host games of every loaded ruleset over HTTP and WebSocket, on a durable store.
    Serve(Box<ServeArgs>),
    /// Write one game of a store as a `coffer` save file (replayed and checked action by action), to
    /// keep a finished game past the retention policy or read it with `coffer show`.
    Export(coffer_server::export::Args),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum DurabilityArg {
    /// An acknowledged action survives a power loss (every commit synced; the default).
    PowerLoss,
    /// An acknowledged action survives a crash of the server, not of the machine.
    ProcessCrash,
}

#[derive(Debug, clap::Args)]
struct ServeArgs {
    /// Address to listen on (port 0: any free port; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDR")]
    listen: SocketAddr,
    /// Where the games are kept: a SQLite database file holding a Coffer store (see --create), or a
    /// PostgreSQL database given as a `postgres://user@host:port/database` URL (migrated on start).
    #[arg(long, default_value = "coffer.db", value_name = "PATH")]
    store: PathBuf,
    /// Make a new SQLite store at --store where no file or an empty one is, and open the store there
    /// otherwise. Without it a missing or empty file is refused, so a mistyped path never starts an
    /// empty server. Either way a file that is not a Coffer store is refused, never written over.
    #[arg(long, conflicts_with = "memory")]
    create: bool,
    /// Keep games in memory only: nothing survives the process.
    #[arg(long, conflicts_with = "store")]
    memory: bool,
    /// What an acknowledged action survives.
    #[arg(long, value_enum, default_value_t = DurabilityArg::PowerLoss)]
    durability: DurabilityArg,
    /// Largest request body, in bytes.
    #[arg(long, default_value_t = Limits::default().max_body_bytes, value_name = "BYTES")]
    max_body_bytes: usize,
    /// Deepest nesting of a JSON body or WebSocket message.
    #[arg(long, default_value_t = Limits::default().max_json_depth, value_name = "N")]
    max_json_depth: usize,
    /// Largest WebSocket message a client may send, in bytes.
    #[arg(long, default_value_t = Limits::default().max_ws_message_bytes, value_name = "BYTES")]
    max_ws_message_bytes: usize,
    /// Connections open at once; more are closed at once.
    #[arg(long, default_value_t = Limits::default().max_connections, value_name = "N")]
    max_connections: usize,
    /// Games hosted at once.
    #[arg(long, default_value_t = Limits::default().max_games, value_name = "N")]
    max_games: usize,
    /// Actions per second one seat's token may submit, sustained.
    #[arg(long, default_value_t = Limits::default().actions_per_second, value_name = "N")]
    actions_per_second: u32,
    /// Actions one seat's token may submit at once before the rate applies.
    #[arg(long, default_value_t = Limits::default().action_burst, value_name = "N")]
    action_burst: u32,
    /// Seconds a connection may take to send its request headers.
    #[arg(long, default_value_t = Limits::default().header_timeout.as_secs_f64(), value_name = "SECS")]
    header_timeout: f64,
    /// Seconds between pings of an idle WebSocket (closed after two unanswered).
    #[arg(long, default_value_t = Limits::default().ws_ping.as_secs_f64(), value_name = "SECS")]
    ws_ping: f64,
    /// Directory of rulesets' own views for the web table: `<ruleset id>.js` ES modules (docs/WEB.md).
    #[arg(long, value_name = "DIR")]
    web_views: Option<PathBuf>,
    /// Most actions one history read answers (`GET /events`, a page of a WebSocket's `since`).
    #[arg(long, default_value_t = Limits::default().history_page, value_name = "N")]
    history_page: u64,
    /// History replays running at once; more wait up to 2 s, then are refused `503 saturated`.
    #[arg(long, default_value_t = Limits::default().history_replays, value_name = "N")]
    history_replays: usize,
    /// Reads (history, WebSocket opens) per second one client address may make, sustained.
    #[arg(long, default_value_t = Limits::default().reads_per_second, value_name = "N")]
    reads_per_second: u32,
    /// Reads one client address may make at once before the rate applies.
    #[arg(long, default_value_t = Limits::default().read_burst, value_name = "N")]
    read_burst: u32,
    /// Unfinished games one client address may have created at once.
    #[arg(long, default_value_t = Limits::default().max_games_per_client, value_name = "N")]
    max_games_per_client: usize,
    /// Connections one client address may hold open at once (0: a quarter of --max-connections).
    #[arg(long, default_value_t = Limits::default().max_connections_per_client, value_name = "N")]
    max_connections_per_client: usize,
    /// WebSockets one seat's token may hold open at once.
    #[arg(long, default_value_t = Limits::default().max_sockets_per_token, value_name = "N")]
    max_sockets_per_token: usize,
    /// Largest state a new game may hold, in KiB of its snapshot; larger games are refused.
    #[arg(long, default_value_t = Limits::default().max_game_bytes / 1024, value_name = "KIB")]
    max_game_kib: usize,
    /// Memory budget in MiB of resident memory: past it, new games are refused (default: three
    /// quarters of the machine's memory).
    #[arg(long, value_name = "MIB")]
    max_memory_mib: Option<u64>,
    /// Seconds a request body may take to arrive once its headers have.
    #[arg(long, default_value_t = Limits::default().body_timeout.as_secs_f64(), value_name = "SECS")]
    body_timeout: f64,
    /// Seconds a finished game stays in memory (its last view readable) before it leaves; its log
    /// stays in the store.
    #[arg(long, default_value_t = Limits::default().finished_linger.as_secs_f64(), value_name = "SECS")]
    finished_linger: f64,
    /// Days the store keeps a finished game (record, seats, log, snapshots) after it finished; then
    /// the retention policy deletes it. 0 keeps finished games forever. Export one first with
    /// `coffer-server export`. Fractions are allowed (0.5: twelve hours).
    #[arg(long, default_value_t = Limits::default().keep_finished.as_secs_f64() / 86_400.0, value_name = "DAYS")]
    keep_finished_days: f64,
    /// Seconds shutdown (SIGTERM, Ctrl-C) waits for requests in flight and ruleset calls; a ruleset call
    /// still running then is abandoned and the program exits with status 124.
    #[arg(long, default_value_t = Limits::default().shutdown_grace.as_secs_f64(), value_name = "SECS")]
    shutdown_grace: f64,
    /// Store a snapshot of a game every N actions.
    #[arg(long, default_value_t = Limits::default().snapshot_every, value_name = "N")]
    snapshot_every: u64,
    /// Run as one node of several sharing the PostgreSQL store: each game is owned by one node through
    /// a lease, any node accepts any client and passes actions on to the owner, and a dead node's games
    /// are taken over by the others (docs/SERVER.md, "Several nodes").
    #[arg(long, requires = "store")]
    cluster: bool,
    /// With --cluster: the base URL the other nodes reach this one at (default: http://<--listen>).
    #[arg(long, requires = "cluster", value_name = "URL")]
    advertise: Option<String>,
    /// With --cluster: seconds a lease lasts without renewal; a dead node's games move after this long.
    #[arg(long, requires = "cluster", default_value_t = 3.0, value_name = "SECS")]
    lease: f64,
}

/// The exit status of a shutdown that abandoned a ruleset call still running after the grace (as
/// `timeout(1)` exits when its command outlives it). 1 is a failure to start or to serve, 2 a usage error.
const EXIT_ABANDONED: u8 = 124;

fn seconds(value: f64, name: &str) -> Result<Duration, String> {
    if value.is_finite() && (0.001..=86_400.0).contains(&value) {
        Ok(Duration::from_secs_f64(value))
    } else {
        Err(format!(
            "--{name} must be between 0.001 and 86400 seconds, not {value}"
        ))
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs();
    match cli.command {
        Command::Serve(args) => run_serve(&cli.global, *args),
        Command::Export(args) => coffer_server::export::run(&cli.global, args),
    }
}

/// Logs on stderr, filtered by `COFFER_LOG` (`info` by default), with every target outside Coffer's own
/// crates capped at INFO whatever `COFFER_LOG` asks: the HTTP, WebSocket and database libraries log
/// request and frame payloads (a seat's view, an action's hidden choice, a query's parameters) at DEBUG
/// and TRACE, and a log must never hold a seat's hidden state (docs/SECURITY.md, "Logs").
fn init_logs() {
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    let asked = tracing_subscriber::EnvFilter::try_from_env("COFFER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::registry().with(log_layer(asked)).init();
}

/// The stderr layer: `asked` and the cap on other crates' targets in one filter. `asked`'s level then
/// bounds what `tracing::enabled!` answers (a layer filtered twice answered yes to TRACE under
/// `COFFER_LOG=warn`, and the server parsed every WebSocket message it sent for a log line nobody
/// wrote), and the level the runtime-loaded rulesets are told to forward (`LevelFilter::current`): the
/// cap has a hint of its own, without which the pair had none and every ruleset formatted and sent
/// its DEBUG and TRACE events across the boundary for nothing.
fn log_layer<S>(asked: tracing_subscriber::EnvFilter) -> impl tracing_subscriber::Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::filter::FilterExt as _;
    let capped = tracing_subscriber::filter::filter_fn(|meta| {
        *meta.level() <= tracing::Level::INFO || is_coffers(meta.target())
    })
    // It lets every level through for Coffer's own targets.
    .with_max_level_hint(tracing::level_filters::LevelFilter::TRACE);
    tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(asked.and(capped))
}

/// Whether a `tracing` target is one of Coffer's own (`coffer_server::...`, `coffer::event`, a
/// plugin's events forwarded as `coffer::plugin`), which log no payload.
fn is_coffers(target: &str) -> bool {
    target == "coffer" || target.starts_with("coffer_") || target.starts_with("coffer::")
}

/// The server's limits from `serve`'s options; `Err` says in words which option is out of range.
fn limits_of(args: &ServeArgs) -> Result<Limits, String> {
    let mut limits = Limits::default();
    limits.max_body_bytes = args.max_body_bytes;
    limits.max_json_depth = args.max_json_depth;
    limits.max_ws_message_bytes = args.max_ws_message_bytes;
    limits.max_connections = args.max_connections;
    limits.max_games = args.max_games;
    limits.actions_per_second = args.actions_per_second;
    limits.action_burst = args.action_burst;
    limits.snapshot_every = args.snapshot_every;
    limits.history_page = args.history_page.max(1);
    limits.history_replays = args.history_replays.max(1);
    limits.reads_per_second = args.reads_per_second;
    limits.read_burst = args.read_burst;
    limits.max_games_per_client = args.max_games_per_client;
    limits.keep_finished = match args.keep_finished_days {
        0.0 => Duration::ZERO,
        days if days.is_finite() && days > 0.0 && days <= 36_500.0 => {
            Duration::from_secs_f64(days * 86_400.0)
        }
        days => {
            return Err(format!(
                "--keep-finished-days must be 0 (keep forever) or between 0 and 36500 days, not {days}"
            ));
        }
    };
    limits.max_connections_per_client = args.max_connections_per_client;
    limits.max_sockets_per_token = args.max_sockets_per_token.max(1);
    limits.max_game_bytes = args.max_game_kib.saturating_mul(1024);
    limits.max_memory_bytes = match args.max_memory_mib {
        Some(mib) => mib.saturating_mul(1 << 20),
        None => coffer_server::resident::physical_bytes().map_or(u64::MAX, |bytes| bytes / 4 * 3),
    };
    limits.plugin_deadline = coffer_host::loader::call_deadline();
    for (value, name, slot) in [
        (
            args.header_timeout,
            "header-timeout",
            &mut limits.header_timeout,
        ),
        (args.ws_ping, "ws-ping", &mut limits.ws_ping),
        (args.body_timeout, "body-timeout", &mut limits.body_timeout),
        (
            args.shutdown_grace,
            "shutdown-grace",
            &mut limits.shutdown_grace,
        ),
        (
            args.finished_linger,
            "finished-linger",
            &mut limits.finished_linger,
        ),
    ] {
        *slot = seconds(value, name)?;
    }
    Ok(limits)
}

fn run_serve(global: &Global, args: ServeArgs) -> ExitCode {
    let registry = match load_registry(global) {
        Ok(registry) => registry,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    if registry.is_empty() {
        eprintln!(
            "error: no ruleset is loaded: build the plugins with `cargo build --release --workspace` and pass \
             `--plugin-dir target/release` (or set COFFER_PLUGIN_PATH)"
        );
        return ExitCode::from(2);
    }
    let limits = match limits_of(&args) {
        Ok(limits) => limits,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    if let Some(dir) = &args.web_views {
        if !dir.is_dir() {
            eprintln!("error: --web-views {}: not a directory", dir.display());
            return ExitCode::from(2);
        }
        coffer_server::web::set_views_dir(dir.clone());
    }
    let store = match store_of(&args) {
        Ok(store) => store,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    let where_ = where_of(&args, &store);
    let keys = registry.keys().join(", ");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .max_blocking_threads(1024)
        .thread_name("coffer-server")
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the server's threads: {e}");
            return ExitCode::FAILURE;
        }
    };
    let config = ServeConfig {
        listen: args.listen,
        store,
        limits,
    };
    let result = runtime.block_on(serve(
        registry,
        config,
        |addr, games| {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "coffer serve: listening on http://{addr} with {keys}; games in {where_} ({} recovered)",
                games.len()
            );
            let _ = out.flush();
        },
        None,
    ));
    // A thread abandoned in a ruleset call never returns: the runtime is not waited for past a moment.
    runtime.shutdown_timeout(Duration::from_millis(200));
    exit_of(result)
}

/// The store the options choose, or what is wrong with them (a usage error).
fn store_of(args: &ServeArgs) -> Result<StoreChoice, String> {
    let store_text = args.store.to_string_lossy().into_owned();
    let store_is_postgres =
        store_text.starts_with("postgres://") || store_text.starts_with("postgresql://");
    if args.memory {
        Ok(StoreChoice::Memory)
    } else if store_is_postgres && !args.create {
        let cluster = if args.cluster {
            Some(cluster_of(args)?)
        } else {
            None
        };
        Ok(StoreChoice::Postgres {
            url: store_text,
            cluster,
        })
    } else if args.create && store_is_postgres {
        Err(
            "--create makes a SQLite file; a PostgreSQL store is migrated on start without it"
                .to_owned(),
        )
    } else if args.cluster {
        Err(
            "--cluster needs a PostgreSQL store (--store postgres://...): the nodes share it"
                .to_owned(),
        )
    } else {
        Ok(StoreChoice::Sqlite {
            path: args.store.clone(),
            durability: match args.durability {
                DurabilityArg::PowerLoss => Durability::PowerLoss,
                DurabilityArg::ProcessCrash => Durability::ProcessCrash,
            },
            opening: if args.create {
                Opening::OpenOrCreate
            } else {
                Opening::Existing
            },
        })
    }
}

/// How this node joins the others on its PostgreSQL store.
fn cluster_of(args: &ServeArgs) -> Result<ClusterOptions, String> {
    let lease = seconds(args.lease, "lease")?;
    if lease < Duration::from_millis(100) {
        return Err("--lease must be at least 0.1 s".to_owned());
    }
    if let Some(advertise) = &args.advertise
        && !(advertise.starts_with("http://") || advertise.starts_with("https://"))
    {
        return Err(format!(
            "--advertise {advertise}: expected a base URL like http://10.0.0.5:8080"
        ));
    }
    Ok(ClusterOptions {
        advertise: args.advertise.clone(),
        lease,
    })
}

/// Where the games are kept, as the start line tells it; a PostgreSQL URL's password is never printed.
fn where_of(args: &ServeArgs, store: &StoreChoice) -> String {
    if args.memory {
        "in memory (nothing survives a restart)".to_owned()
    } else if let StoreChoice::Postgres { url, .. } = store {
        // The URL may carry a password: only its host and database are printed.
        let host = url
            .rsplit('@')
            .next()
            .unwrap_or(url)
            .split('?')
            .next()
            .unwrap_or("");
        format!("postgres {host}")
    } else {
        args.store.display().to_string()
    }
}

/// The exit status of a server that stopped: 0, [`EXIT_ABANDONED`] when ruleset calls were abandoned, or
/// 1 with the whole error chain printed.
fn exit_of(result: Result<coffer_server::serve::Stopped, ServeError>) -> ExitCode {
    match result {
        Ok(stopped) if stopped.abandoned.is_empty() => ExitCode::SUCCESS,
        Ok(_) => ExitCode::from(EXIT_ABANDONED),
        Err(e) => {
            let mut message = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                message.push_str(": ");
                message.push_str(&cause.to_string());
                source = cause.source();
            }
            eprintln!("error: {message}");
            if let ServeError::Store(StoreError::NoStore { .. }) = &e {
                eprintln!("hint: to make a new store there, pass --create");
            }
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use tracing::level_filters::LevelFilter;
    use tracing_subscriber::{EnvFilter, Layer as _, Registry};

    /// The level `COFFER_LOG` asks for is the layer's hint, hence `LevelFilter::current()` and what the
    /// runtime-loaded rulesets are told to forward (without a hint they were told TRACE whatever was
    /// asked).
    #[test]
    fn the_log_level_asked_is_the_level_rulesets_are_told_to_forward() {
        for (asked, level) in [
            ("off", LevelFilter::OFF),
            ("warn", LevelFilter::WARN),
            ("info", LevelFilter::INFO),
            ("warn,coffer_server=debug", LevelFilter::DEBUG),
            ("trace", LevelFilter::TRACE),
        ] {
            let layer = super::log_layer::<Registry>(EnvFilter::new(asked));
            assert_eq!(layer.max_level_hint(), Some(level), "COFFER_LOG={asked}");
        }
    }
}

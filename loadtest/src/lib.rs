//! `coffer loadtest` (the program `coffer-loadtest`): measures a server's acknowledged durable actions per second and the latency of
//! action submission, at several numbers of concurrent games, over WebSocket and over HTTP, and the
//! server's memory per idle hosted game.
//!
//! By default it starts its own server (`coffer-server serve`, the program beside this one, on a temporary SQLite file with the
//! default durability, every commit synced) with its rate and size limits raised for the load, reads the
//! address from the server's first line, and stops it with SIGTERM at the end. `--url` measures a running
//! server instead (then without the memory figure, which reads the server's resident set size).
//!
//! Each point (a number of games and a transport) keeps that many games going at once: every game that
//! ends is replaced by a new one. Over HTTP one task drives each game, asking `GET .../legal` for the seat
//! that acted last (then the others) and submitting one of its legal actions with `expected_seq`. Over
//! WebSocket every seat has its own connection and task; a seat acts when it is the first of the
//! table's `acting` list in the latest view it was pushed, asks `legal` and submits `act`. The latency
//! of a submission runs from sending it to its acknowledgement (`200` or `acted`), which the server gives
//! only after the action is committed to the store; only acknowledged actions are counted.
//!
//! With `--spectators N`, each point also opens N WebSockets without a token on its newest games (see
//! the `spectators` module): the server's resident memory per socket, and the time from an action's
//! submission to its push to a spectator.

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use coffer_cli::{Global, OutputFormat};
use futures_util::{SinkExt as _, StreamExt as _};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Value, json};
use tokio::sync::{Notify, watch};
use tokio_tungstenite::tungstenite::Message;

/// The read buffer of each WebSocket connection, in bytes: as small as the server's, since tungstenite
/// zero-fills a buffer's free space before every read.
const READ_BUFFER: usize = 4096;

mod args;
mod http_driver;
mod idle;
mod report;
mod server;
mod spectators;
mod ws_driver;

pub use args::{Args, Transport};
pub use report::{Clocks, Memory, Point, Report};

use args::*;
use http_driver::*;
use idle::*;
use report::*;
use server::*;
use spectators::*;
use ws_driver::*;

/// Runs the load generator.
pub fn run(global: &Global, args: Args) -> ExitCode {
    match run_inner(global, &args) {
        Ok(report) => {
            match global.format {
                OutputFormat::Json => match serde_json::to_string_pretty(&report) {
                    Ok(text) => println!("{text}"),
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::FAILURE;
                    }
                },
                OutputFormat::Text => print!("{}", report.text()),
            }
            if report.points.iter().any(|p| p.acks == 0) {
                eprintln!("error: a point acknowledged no action (see its errors)");
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(global: &Global, args: &Args) -> Result<Report, String> {
    check_args(args)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.client_threads)
        .enable_all()
        .thread_name("coffer-loadtest")
        .build()
        .map_err(|e| format!("cannot start the load generator's threads: {e}"))?;
    let load_before = load_average();
    let mut server = if args.url.is_empty() {
        Some(Server::start(global)?)
    } else {
        None
    };
    let bases: Vec<String> = match &server {
        Some(server) => vec![format!("http://{}", server.addr)],
        None => args
            .url
            .iter()
            .map(|url| url.trim_end_matches('/').to_owned())
            .collect(),
    };
    let result = runtime.block_on(measure(args, &bases, server.as_ref().map(|s| s.pid)));
    let load_after = load_average();
    let stopped = server.as_mut().map(Server::stop);
    let (points, memory, clocks) = result?;
    if let Some(Err(message)) = stopped {
        eprintln!("warning: {message}");
    }
    Ok(Report {
        ruleset: args.ruleset.clone(),
        players: args.players,
        seconds: args.seconds,
        warmup: args.warmup,
        server: if args.url.is_empty() {
            "started by the load generator (temporary SQLite store, every commit synced)".into()
        } else if args.url.len() > 1 && args.seats == Seats::Together {
            format!(
                "{} (each game's seats on the node that created it)",
                args.url.join(", ")
            )
        } else {
            args.url.join(", ")
        },
        cores: std::thread::available_parallelism().map_or(0, usize::from),
        load_before,
        load_after,
        points,
        memory,
        clocks,
    })
}

// ----- the server child -----

/// What the clients share.
struct Ctx {
    /// Each node's base URL (one, unless a cluster is measured).
    bases: Vec<String>,
    ws_bases: Vec<String>,
    /// The node the next game is created on.
    next_node: AtomicUsize,
    /// Which nodes a game's seats use.
    seats: Seats,
    http: reqwest::Client,
    ruleset: String,
    players: u16,
    seeds: AtomicU64,
    server_pid: Option<u32>,
    /// The clock of the idle games, per decision.
    clock_ms: Option<u64>,
}

impl Ctx {
    /// The node a seat of `game` talks to: as `--seats` says, a different node for each seat, or the
    /// node that created the game.
    fn base(&self, game: &Game, seat: usize) -> &str {
        &self.bases[seat_node(self.seats, game.node, seat, self.bases.len())]
    }

    fn ws_base(&self, game: &Game, seat: usize) -> &str {
        &self.ws_bases[seat_node(self.seats, game.node, seat, self.ws_bases.len())]
    }

    fn next_seed(&self) -> u64 {
        splitmix(self.seeds.fetch_add(1, Ordering::Relaxed))
    }
}

async fn measure(
    args: &Args,
    bases: &[String],
    pid: Option<u32>,
) -> Result<(Vec<Point>, Option<Memory>, Option<Clocks>), String> {
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(usize::MAX)
        .pool_idle_timeout(Duration::from_secs(300))
        .tcp_nodelay(true)
        .no_proxy()
        .build()
        .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
    let mut ws_bases = Vec::with_capacity(bases.len());
    for base in bases {
        ws_bases.push(match base.strip_prefix("http://") {
            Some(rest) => format!("ws://{rest}"),
            None => match base.strip_prefix("https://") {
                Some(rest) => format!("wss://{rest}"),
                None => return Err(format!("--url must start with http://, not {base}")),
            },
        });
    }
    let base = bases.join(", ");
    let ctx = Arc::new(Ctx {
        bases: bases.to_vec(),
        ws_bases,
        next_node: AtomicUsize::new(0),
        seats: args.seats,
        http,
        ruleset: args.ruleset.clone(),
        players: args.players,
        seeds: AtomicU64::new(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        server_pid: pid,
        clock_ms: args.clock_ms,
    });
    // The server answers, and the ruleset is there: one game played a little.
    let probe = create_game(&ctx)
        .await
        .map_err(|e| format!("cannot create a game of {} on {base}: {e}", args.ruleset))?;
    play_http(&ctx, &probe, 2, &mut Rng(ctx.next_seed()))
        .await
        .map_err(|e| format!("cannot play a game of {} on {base}: {e}", args.ruleset))?;

    let memory = match pid {
        Some(pid) if args.idle_games > 0 => Some(measure_memory(&ctx, pid, args.idle_games).await?),
        _ => None,
    };
    let clocks = match args.clock_ms {
        // The idle games are made only where the memory is measured (a server the generator started).
        Some(ms) if memory.is_some() => {
            Some(measure_clocks(&ctx, &bases[0], args.idle_games, ms, args.clock_seconds).await?)
        }
        _ => None,
    };
    let mut points = Vec::new();
    for &games in &args.games {
        for &transport in &args.transport {
            let point = run_point(&ctx, args, transport, games).await;
            eprintln!(
                "  {games:>5} games {:<4}: {:>9.0} acks/s, p50 {:.2} ms, p99 {:.2} ms, {} errors",
                transport.name(),
                point.acks_per_second,
                point.p50_ms,
                point.p99_ms,
                point.errors
            );
            points.push(point);
        }
    }
    Ok((points, memory, clocks))
}

async fn create_and_play(
    ctx: &Arc<Ctx>,
    n: usize,
    actions: usize,
    progress: Option<&indicatif::ProgressBar>,
) -> Result<(), String> {
    let mut work = futures_util::stream::iter(0..n)
        .map(|_| {
            let ctx = Arc::clone(ctx);
            async move {
                let game = create_game_with(&ctx, ctx.clock_ms).await?;
                let mut rng = Rng(ctx.next_seed());
                play_http(&ctx, &game, actions, &mut rng).await
            }
        })
        .buffer_unordered(64);
    while let Some(result) = work.next().await {
        result?;
        if let Some(progress) = progress {
            progress.inc(1);
        }
    }
    Ok(())
}

fn progress_bar(len: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(len);
    bar.set_style(
        indicatif::ProgressStyle::with_template("  {msg} [{bar:30}] {pos}/{len} {elapsed}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_message(what.to_owned());
    bar
}

/// Where a point is: setting up and warming up, measuring, or stopping.
const WARMING: u8 = 0;
const MEASURING: u8 = 1;
const STOPPING: u8 = 2;

/// What the tasks of one point share.
struct Shared {
    /// What the spectators watch, when the point has any (the drivers then note their games and
    /// submissions there).
    watched: Option<Watched>,
    phase: AtomicU8,
    stop: watch::Receiver<bool>,
    ready: AtomicUsize,
    ready_notify: Notify,
    acks: AtomicU64,
}

impl Shared {
    fn measuring(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == MEASURING
    }

    fn stopping(&self) -> bool {
        self.phase.load(Ordering::Relaxed) == STOPPING
    }

    /// A driver created `game`.
    fn created(&self, game: &Game) {
        if let Some(watched) = &self.watched {
            watched.created(game);
        }
    }

    /// A driver sends the submission that would become action `seq` of `game`.
    fn sending(&self, game: u64, seq: u64, at: Instant) {
        if let Some(watched) = &self.watched {
            watched.sending(game, seq, at);
        }
    }

    /// How many spectators have connected.
    fn spectators_connected(&self) -> usize {
        self.watched
            .as_ref()
            .map_or(0, |w| w.connected.load(Ordering::Relaxed))
    }

    fn set_ready(&self) {
        self.ready.fetch_add(1, Ordering::Relaxed);
        self.ready_notify.notify_one();
    }
}

async fn run_point(ctx: &Arc<Ctx>, args: &Args, transport: Transport, games: usize) -> Point {
    let (stop_tx, stop_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
        watched: (args.spectators > 0).then(Watched::default),
        phase: AtomicU8::new(WARMING),
        stop: stop_rx,
        ready: AtomicUsize::new(0),
        ready_notify: Notify::new(),
        acks: AtomicU64::new(0),
    });
    let bar = progress_bar(
        games as u64,
        &format!("{games} games {}: setting up", transport.name()),
    );
    let mut tasks = Vec::with_capacity(games);
    for _ in 0..games {
        let ctx = Arc::clone(ctx);
        let shared = Arc::clone(&shared);
        let seed = ctx.next_seed();
        tasks.push(tokio::spawn(async move {
            match transport {
                Transport::Http => http_driver(ctx, shared, seed).await,
                Transport::Ws => ws_driver(ctx, shared, seed).await,
            }
        }));
    }
    // Every game created (or a minute passed), then the warm-up, then the measurement.
    let setup_deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ready = shared.ready.load(Ordering::Relaxed);
        bar.set_position(ready as u64);
        if ready >= games || Instant::now() > setup_deadline {
            break;
        }
        let _ =
            tokio::time::timeout(Duration::from_millis(100), shared.ready_notify.notified()).await;
    }
    let (watchers, watcher_rss) = open_spectators(ctx, args, &shared, games, &bar).await;
    bar.set_message(format!("{games} games {}: warming up", transport.name()));
    tokio::time::sleep(Duration::from_secs_f64(args.warmup)).await;
    let measured_ms = (args.seconds * 1000.0) as u64;
    bar.set_length(measured_ms.max(1));
    bar.set_position(0);
    bar.set_message(format!("{games} games {}: measuring", transport.name()));
    let server_cpu = ctx.server_pid.and_then(cpu_seconds);
    let own_cpu = cpu_seconds(std::process::id());
    shared.phase.store(MEASURING, Ordering::Relaxed);
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(args.seconds);
    while Instant::now() < until {
        let left = until.saturating_duration_since(Instant::now());
        tokio::time::sleep(left.min(Duration::from_millis(200))).await;
        bar.set_position(started.elapsed().as_millis() as u64);
    }
    shared.phase.store(STOPPING, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    let used = |pid: Option<u32>, before: Option<f64>| Some(cpu_seconds(pid?)? - before?);
    let server_cpu = used(ctx.server_pid, server_cpu);
    let client_cpu = used(Some(std::process::id()), own_cpu);
    let _ = stop_tx.send(true);
    bar.finish_and_clear();
    let mut total = Stats::default();
    let (drivers, failed) = joined(tasks).await;
    total.errors += failed;
    for stats in drivers {
        total.merge(stats);
    }
    let spectators = if watchers.is_empty() {
        None
    } else {
        let (mut pushes, mut latencies, mut stats) = (0, Vec::new(), Stats::default());
        let (watching, failed) = joined(watchers).await;
        stats.errors += failed;
        for watching in watching {
            pushes += watching.pushes;
            latencies.extend(watching.latencies_us);
            stats.merge(watching.stats);
        }
        latencies.sort_unstable();
        for e in std::mem::take(&mut stats.first_errors) {
            if total.first_errors.len() < 8 {
                total.first_errors.push(e);
            }
        }
        let (rss_before, rss_after) = watcher_rss.unzip();
        Some(Spectators {
            sockets: args.spectators,
            connected: shared.spectators_connected(),
            rss_before,
            rss_after,
            bytes_per_socket: watcher_rss
                .map(|(before, after)| (after as f64 - before as f64) / args.spectators as f64),
            pushes,
            timed: latencies.len() as u64,
            p50_ms: percentile_ms(&latencies, 50.0),
            p99_ms: percentile_ms(&latencies, 99.0),
            max_ms: latencies.last().map_or(0.0, |&us| f64::from(us) / 1000.0),
            errors: stats.errors,
        })
    };
    let mut latencies = std::mem::take(&mut total.latencies_us);
    latencies.sort_unstable();
    let per_ack = |cpu: Option<f64>| {
        cpu.filter(|_| total.acks > 0)
            .map(|s| s * 1e6 / total.acks as f64)
    };
    Point {
        server_cpu_us_per_ack: per_ack(server_cpu),
        client_cpu_us_per_ack: per_ack(client_cpu),
        server_cores: server_cpu.map(|s| s / elapsed),
        client_cores: client_cpu.map(|s| s / elapsed),
        games,
        transport,
        seconds: elapsed,
        acks: total.acks,
        acks_per_second: total.acks as f64 / elapsed,
        p50_ms: percentile_ms(&latencies, 50.0),
        p99_ms: percentile_ms(&latencies, 99.0),
        max_ms: latencies.last().map_or(0.0, |&us| f64::from(us) / 1000.0),
        stale: total.stale,
        refused: total.refused,
        errors: total.errors,
        games_ended: total.games_ended,
        legal_calls: total.legal_calls,
        spectators,
        first_errors: total.first_errors,
    }
}

/// What the point's tasks answered, once each has ended (given 30 s after the point stopped), and how
/// many failed or did not end in time (those are aborted).
async fn joined<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> (Vec<T>, u64) {
    let (mut answers, mut failed) = (Vec::with_capacity(tasks.len()), 0);
    for task in tasks {
        let abort = task.abort_handle();
        match tokio::time::timeout(Duration::from_secs(30), task).await {
            Ok(Ok(answer)) => answers.push(answer),
            Ok(Err(_)) => failed += 1,
            Err(_) => {
                abort.abort();
                failed += 1;
            }
        }
    }
    (answers, failed)
}

/// Opens the point's `--spectators` on its games, once they are made: answers their tasks and the
/// server's resident set size before and after they connected (a server started here only).
async fn open_spectators(
    ctx: &Arc<Ctx>,
    args: &Args,
    shared: &Arc<Shared>,
    games: usize,
    bar: &indicatif::ProgressBar,
) -> (Vec<tokio::task::JoinHandle<Watching>>, Option<(u64, u64)>) {
    let n = args.spectators;
    if n == 0 {
        return (Vec::new(), None);
    }
    bar.set_length(n as u64);
    bar.set_position(0);
    bar.set_message(format!("{games} games: {n} spectators connecting"));
    let before = ctx.server_pid.and_then(rss_bytes);
    let tasks: Vec<_> = (0..n)
        .map(|i| {
            let (ctx, shared) = (Arc::clone(ctx), Arc::clone(shared));
            tokio::spawn(spectator(ctx, shared, i, games))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let connected = shared.spectators_connected();
        bar.set_position(connected as u64);
        if connected >= n || Instant::now() > deadline {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = ctx.server_pid.and_then(rss_bytes);
    (tasks, before.zip(after))
}

/// A game created for the load.
struct Game {
    id: u64,
    tokens: Vec<String>,
    /// The node it was created on.
    node: usize,
}

#[derive(Deserialize)]
struct CreatedBody {
    game: u64,
    tokens: Vec<Option<String>>,
}

/// The parts of a server message the clients read; the rest is skipped.
#[derive(Deserialize, Default)]
struct Incoming {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    seq: Option<u64>,
    #[serde(default)]
    view: Option<ViewPart>,
    #[serde(default)]
    actions: Option<Vec<Box<RawValue>>>,
    /// A pushed action's legal actions for this seat, when it may act next.
    #[serde(default)]
    legal: Option<LegalPart>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

#[derive(Deserialize)]
struct LegalPart {
    seq: u64,
    actions: Vec<Box<RawValue>>,
}

#[derive(Deserialize)]
struct ViewPart {
    table: TablePart,
}

#[derive(Deserialize)]
struct TablePart {
    #[serde(default)]
    acting: Vec<ActingSeat>,
    #[serde(default)]
    outcome: Value,
}

#[derive(Deserialize)]
struct ActingSeat {
    seat: u16,
}

impl TablePart {
    fn over(&self) -> bool {
        !(self.outcome.is_null() || self.outcome == "Ongoing")
    }
}

/// A small generator of the load generator's choices (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0 | 1;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// The node (of `nodes`) that seat `seat` of a game created on node `created` uses.
fn seat_node(seats: Seats, created: usize, seat: usize, nodes: usize) -> usize {
    match seats {
        Seats::Apart => (created + seat) % nodes,
        Seats::Together => created % nodes,
    }
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ----- the report -----

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let sorted: Vec<u32> = (1..=100).map(|i| i * 1000).collect();
        assert_eq!(percentile_ms(&sorted, 50.0), 50.0);
        assert_eq!(percentile_ms(&sorted, 99.0), 99.0);
        assert_eq!(percentile_ms(&sorted, 100.0), 100.0);
        assert_eq!(percentile_ms(&[7000], 99.0), 7.0);
        assert_eq!(percentile_ms(&[], 50.0), 0.0);
        assert_eq!(percentile_ms(&[1000, 2000], 0.0), 1.0);
    }

    #[test]
    fn lists_parse_and_are_checked() {
        let cli = Cli::try_parse_from(["loadtest"]).unwrap();
        assert_eq!(cli.args.games, vec![1, 10, 100, 1000]);
        assert_eq!(cli.args.transport, vec![Transport::Ws, Transport::Http]);
        assert!(check_args(&cli.args).is_ok());
        let cli =
            Cli::try_parse_from(["loadtest", "--games", "5,50", "--transport", "http"]).unwrap();
        assert_eq!(cli.args.games, vec![5, 50]);
        assert_eq!(cli.args.transport, vec![Transport::Http]);
        let cli = Cli::try_parse_from(["loadtest", "--games", "0"]).unwrap();
        assert!(check_args(&cli.args).is_err());
        let cli = Cli::try_parse_from(["loadtest", "--seconds", "0"]).unwrap();
        assert!(check_args(&cli.args).is_err());
        assert!(Cli::try_parse_from(["loadtest", "--transport", "carrier-pigeon"]).is_err());
    }

    #[test]
    fn a_games_seats_use_different_nodes_or_the_node_that_created_it() {
        let cli = Cli::try_parse_from(["loadtest"]).unwrap();
        assert_eq!(cli.args.seats, Seats::Apart);
        // Three nodes, a game created on node 2: its seats 0 and 1 on nodes 2 and 0 when apart.
        assert_eq!(seat_node(Seats::Apart, 2, 0, 3), 2);
        assert_eq!(seat_node(Seats::Apart, 2, 1, 3), 0);
        let cli = Cli::try_parse_from(["loadtest", "--seats", "together"]).unwrap();
        assert_eq!(cli.args.seats, Seats::Together);
        for seat in 0..4 {
            assert_eq!(seat_node(Seats::Together, 2, seat, 3), 2);
        }
        // One node: every seat on it either way.
        assert_eq!(seat_node(Seats::Apart, 0, 1, 1), 0);
        assert!(Cli::try_parse_from(["loadtest", "--seats", "scattered"]).is_err());
    }

    #[test]
    fn the_address_is_read_from_the_first_line() {
        let line = "coffer serve: listening on http://127.0.0.1:40123 with charges@0.1.0; games in x.db (0 recovered)\n";
        assert_eq!(listening_addr(line).as_deref(), Some("127.0.0.1:40123"));
        assert_eq!(listening_addr("error: cannot open the store"), None);
    }

    #[test]
    fn cpu_time_is_read_from_stat() {
        let stat =
            "1234 (coffer (x) y) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0";
        assert_eq!(stat_cpu_seconds(stat), Some(3.0));
        assert_eq!(stat_cpu_seconds("garbage"), None);
    }

    #[test]
    fn vm_rss_is_read_in_bytes() {
        let status = "Name:\tcoffer-server\nVmPeak:\t  100 kB\nVmRSS:\t    2048 kB\nThreads:\t5\n";
        assert_eq!(vm_rss(status), Some(2048 * 1024));
        assert_eq!(vm_rss("Name: x\n"), None);
    }

    #[test]
    fn a_seat_acts_on_the_latest_view_only() {
        let mut view = SeatView::default();
        let push = |seq: u64, acting: &str, outcome: &str| -> Incoming {
            serde_json::from_str(&format!(
                r#"{{"type":"action","seq":{seq},"view":{{"table":{{"acting":{acting},"outcome":{outcome}}},"resources":[]}}}}"#
            ))
            .unwrap()
        };
        assert!(view.update(&mut push(3, r#"[{"seat":1,"why":"x"}]"#, r#""Ongoing""#)));
        assert_eq!(view.first_acting, Some(1));
        assert!(!view.update(&mut push(2, r#"[{"seat":0,"why":"x"}]"#, r#""Ongoing""#)));
        assert_eq!(view.first_acting, Some(1));
        assert!(view.update(&mut push(4, "[]", r#"{"Finished":{"winners":[0]}}"#)));
        assert!(view.over);
    }
}

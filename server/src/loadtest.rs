//! `coffer loadtest`: measures a server's acknowledged durable actions per second and the latency of
//! action submission, at several numbers of concurrent games, over WebSocket and over HTTP, and the
//! server's memory per idle hosted game.
//!
//! By default it starts its own server (this program's `serve`, on a temporary SQLite file with the
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

const AFTER_HELP: &str = "\
Examples:
  coffer --plugin-dir target/release loadtest
  coffer --plugin-dir target/release loadtest --games 100 --transport ws --seconds 10
  coffer --plugin-dir target/release loadtest --url http://127.0.0.1:8080 --games 10,100 --format json";

/// The load generator's options.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Measure the server at this address (`http://HOST:PORT`) instead of starting one (no memory
    /// figure); several, comma-separated, measure nodes of one cluster (`serve --cluster`): games are
    /// created on each in turn, and the seats of a game use different nodes.
    #[arg(long, value_name = "URL,...", value_delimiter = ',')]
    pub url: Vec<String>,
    /// Numbers of concurrent games to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "1,10,100,1000",
        value_name = "N,..."
    )]
    pub games: Vec<usize>,
    /// Transports to measure, comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        value_enum,
        default_value = "ws,http",
        value_name = "T,..."
    )]
    pub transport: Vec<Transport>,
    /// Seconds measured per point (after the warm-up).
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub seconds: f64,
    /// Seconds of load before each point's measurement starts (not counted).
    #[arg(long, default_value_t = 1.0, value_name = "SECS")]
    pub warmup: f64,
    /// The ruleset of the games played.
    #[arg(long, default_value = "charges", value_name = "RULESET")]
    pub ruleset: String,
    /// Players per game.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub players: u16,
    /// Idle games created (two actions played in each) for the memory figure; 0 skips it.
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    pub idle_games: usize,
    /// Seed of the load generator's choices (game seeds and actions).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Threads of the load generator's own runtime.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub client_threads: usize,
}

/// How actions are submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// One WebSocket per seat: `legal` and `act` messages, views pushed by the server.
    Ws,
    /// `GET /api/games/{id}/legal` and `POST /api/games/{id}/actions` over pooled keep-alive connections.
    Http,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Ws => "ws",
            Transport::Http => "http",
        }
    }
}

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

fn check_args(args: &Args) -> Result<(), String> {
    if args.games.is_empty() || args.games.contains(&0) {
        return Err("--games takes numbers of games from 1 up, comma-separated".into());
    }
    if args.transport.is_empty() {
        return Err("--transport takes ws, http or both".into());
    }
    for (value, name) in [(args.seconds, "seconds"), (args.warmup, "warmup")] {
        if !value.is_finite() || !(0.0..=3600.0).contains(&value) {
            return Err(format!(
                "--{name} must be between 0 and 3600 seconds, not {value}"
            ));
        }
    }
    if args.seconds <= 0.0 {
        return Err("--seconds must be above 0".into());
    }
    if args.players == 0 {
        return Err("--players must be at least 1".into());
    }
    if args.client_threads == 0 {
        return Err("--client-threads must be at least 1".into());
    }
    Ok(())
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
    let (points, memory) = result?;
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
        } else {
            args.url.join(", ")
        },
        cores: std::thread::available_parallelism().map_or(0, usize::from),
        load_before,
        load_after,
        points,
        memory,
    })
}

// ----- the server child -----

/// A server started by the load generator.
struct Server {
    child: Child,
    pid: u32,
    addr: String,
    store: PathBuf,
}

impl Server {
    fn start(global: &Global) -> Result<Self, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find this program's path to start a server: {e}"))?;
        if coffer_cli::plugin_dirs(global).is_empty() {
            return Err(
                "no plugin directory: pass --plugin-dir target/release (or set COFFER_PLUGIN_PATH)"
                    .into(),
            );
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let store =
            std::env::temp_dir().join(format!("coffer-loadtest-{}-{nanos}.db", std::process::id()));
        let mut command = Command::new(exe);
        // The environment's COFFER_PLUGIN_PATH reaches the child by itself.
        for dir in &global.plugin_dirs {
            command.arg("--plugin-dir").arg(dir);
        }
        if let Some(lock) = &global.lock {
            command.arg("--lock").arg(lock);
        }
        if let Some(deadline) = global.plugin_deadline {
            command
                .arg("--plugin-deadline")
                .arg(deadline.as_secs_f64().to_string());
        }
        command
            .arg("serve")
            .args(["--listen", "127.0.0.1:0", "--create", "--store"])
            .arg(&store)
            .args([
                "--actions-per-second",
                "1000000000",
                "--action-burst",
                "1000000000",
                "--max-connections",
                "100000",
                "--max-games",
                "10000000",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        if std::env::var_os("COFFER_LOG").is_none() {
            command.env("COFFER_LOG", "warn");
        }
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the server: {e}"))?;
        let pid = child.id();
        let stdout = child
            .stdout
            .take()
            .ok_or("the server's output is not piped")?;
        let (first, lines) = std::sync::mpsc::channel();
        // Reads the first line, then drains the rest so the server never blocks on a full pipe.
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut line = String::new();
            let _ = reader.read_line(&mut line);
            let _ = first.send(line);
            let mut sink = std::io::sink();
            let _ = std::io::copy(&mut reader, &mut sink);
        });
        let line = match lines.recv_timeout(Duration::from_secs(120)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err("the server did not say where it listens within 120 s".into());
            }
        };
        let Some(addr) = listening_addr(&line) else {
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            return Err(format!(
                "the server did not start ({status}); its first line: {:?}",
                line.trim()
            ));
        };
        Ok(Self {
            child,
            pid,
            addr,
            store,
        })
    }

    /// SIGTERM, a wait for the graceful stop, and the store's files removed.
    fn stop(&mut self) -> Result<(), String> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.pid.to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(30);
        let result = loop {
            match self.child.try_wait() {
                Ok(Some(status)) if status.success() => break Ok(()),
                Ok(Some(status)) => break Err(format!("the server stopped with {status}")),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(50));
                }
                Ok(None) => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break Err("the server did not stop within 30 s of SIGTERM: killed".into());
                }
                Err(e) => break Err(format!("cannot wait for the server: {e}")),
            }
        };
        for suffix in ["", "-wal", "-shm"] {
            let mut path = self.store.clone().into_os_string();
            path.push(suffix);
            let _ = std::fs::remove_file(path);
        }
        result
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.stop();
        }
    }
}

/// The address in the server's first line: `coffer serve: listening on http://ADDR with ...`.
fn listening_addr(line: &str) -> Option<String> {
    let rest = &line[line.find("listening on http://")? + "listening on http://".len()..];
    let addr = rest
        .split_whitespace()
        .next()?
        .trim_end_matches(['/', ';', ',']);
    (!addr.is_empty()).then(|| addr.to_owned())
}

/// VmRSS of a process, in bytes.
fn rss_bytes(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    vm_rss(&status)
}

fn vm_rss(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let mut words = line["VmRSS:".len()..].split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    match words.next() {
        Some("kB") | None => Some(value * 1024),
        Some(_) => None,
    }
}

/// User and system CPU time of a process so far, in seconds (clock ticks of 1/100 s).
fn cpu_seconds(pid: u32) -> Option<f64> {
    stat_cpu_seconds(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

fn stat_cpu_seconds(stat: &str) -> Option<f64> {
    // The fields after the command name in parentheses start at field 3; utime and stime are 14 and 15.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut parts = text.split_whitespace().map(|p| p.parse::<f64>().ok());
    Some([parts.next()??, parts.next()??, parts.next()??])
}

// ----- measuring -----

/// What the clients share.
struct Ctx {
    /// Each node's base URL (one, unless a cluster is measured).
    bases: Vec<String>,
    ws_bases: Vec<String>,
    /// The node the next game is created on.
    next_node: AtomicUsize,
    http: reqwest::Client,
    ruleset: String,
    players: u16,
    seeds: AtomicU64,
    server_pid: Option<u32>,
}

impl Ctx {
    /// The node a seat of `game` talks to: the seats of a game use different nodes.
    fn base(&self, game: &Game, seat: usize) -> &str {
        &self.bases[(game.node + seat) % self.bases.len()]
    }

    fn ws_base(&self, game: &Game, seat: usize) -> &str {
        &self.ws_bases[(game.node + seat) % self.ws_bases.len()]
    }

    fn next_seed(&self) -> u64 {
        splitmix(self.seeds.fetch_add(1, Ordering::Relaxed))
    }
}

async fn measure(
    args: &Args,
    bases: &[String],
    pid: Option<u32>,
) -> Result<(Vec<Point>, Option<Memory>), String> {
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
        http,
        ruleset: args.ruleset.clone(),
        players: args.players,
        seeds: AtomicU64::new(args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        server_pid: pid,
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
    Ok((points, memory))
}

/// The memory figure: RSS before and after `n` games are created and played two actions each.
async fn measure_memory(ctx: &Arc<Ctx>, pid: u32, n: usize) -> Result<Memory, String> {
    let progress = progress_bar(n as u64, "idle games");
    // Warm the server: code paths, the store's caches, the allocator's first arenas.
    create_and_play(ctx, 64, 2, None).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = rss_bytes(pid).ok_or("cannot read the server's VmRSS")?;
    let started = Instant::now();
    create_and_play(ctx, n, 2, Some(&progress)).await?;
    let seconds = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    // Let the allocator settle: the RSS read after a second of quiet, twice, the later one kept.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = rss_bytes(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_bytes(pid).ok_or("cannot read the server's VmRSS")?;
    let memory = Memory {
        games: n,
        rss_before: before,
        rss_after: after,
        bytes_per_game: after.saturating_sub(before) as f64 / n as f64,
        setup_seconds: seconds,
    };
    eprintln!(
        "  memory: {n} idle games, RSS {} -> {} bytes: {:.0} bytes per game",
        before, after, memory.bytes_per_game
    );
    Ok(memory)
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
                let game = create_game(&ctx).await?;
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

    fn set_ready(&self) {
        self.ready.fetch_add(1, Ordering::Relaxed);
        self.ready_notify.notify_one();
    }
}

/// What one task counted.
#[derive(Default)]
struct Stats {
    latencies_us: Vec<u32>,
    acks: u64,
    stale: u64,
    refused: u64,
    errors: u64,
    games_ended: u64,
    legal_calls: u64,
    first_errors: Vec<String>,
}

impl Stats {
    fn ack(&mut self, shared: &Shared, latency: Duration) {
        if shared.measuring() {
            self.acks += 1;
            self.latencies_us
                .push(u32::try_from(latency.as_micros()).unwrap_or(u32::MAX));
            shared.acks.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn error(&mut self, shared: &Shared, what: impl FnOnce() -> String) {
        if !shared.stopping() {
            self.errors += 1;
            if self.first_errors.len() < 3 {
                self.first_errors.push(what());
            }
        }
    }

    fn merge(&mut self, other: Stats) {
        self.latencies_us.extend(other.latencies_us);
        self.acks += other.acks;
        self.stale += other.stale;
        self.refused += other.refused;
        self.errors += other.errors;
        self.games_ended += other.games_ended;
        self.legal_calls += other.legal_calls;
        for e in other.first_errors {
            if self.first_errors.len() < 5 {
                self.first_errors.push(e);
            }
        }
    }
}

async fn run_point(ctx: &Arc<Ctx>, args: &Args, transport: Transport, games: usize) -> Point {
    let (stop_tx, stop_rx) = watch::channel(false);
    let shared = Arc::new(Shared {
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
    for task in tasks {
        let abort = task.abort_handle();
        match tokio::time::timeout(Duration::from_secs(30), task).await {
            Ok(Ok(stats)) => total.merge(stats),
            Ok(Err(_)) => total.errors += 1,
            Err(_) => {
                abort.abort();
                total.errors += 1;
            }
        }
    }
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
        first_errors: total.first_errors,
    }
}

/// The `p`th percentile (nearest rank) of sorted microseconds, in milliseconds; 0 when empty.
fn percentile_ms(sorted_us: &[u32], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted_us.len() as f64).ceil() as usize;
    let index = rank.clamp(1, sorted_us.len()) - 1;
    f64::from(sorted_us[index]) / 1000.0
}

// ----- the clients -----

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
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    message: Option<String>,
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

/// Sends `request` and reads its whole answer: its status and body, or why `what` (the request, as the
/// message names it) failed.
async fn exchange(
    request: reqwest::RequestBuilder,
    what: &str,
) -> Result<(reqwest::StatusCode, axum::body::Bytes), String> {
    let response = request.send().await.map_err(|e| format!("{what}: {e}"))?;
    let status = response.status();
    let bytes = response.bytes().await.map_err(|e| format!("{what}: {e}"))?;
    Ok((status, bytes))
}

async fn create_game(ctx: &Ctx) -> Result<Game, String> {
    let body = json!({"ruleset": ctx.ruleset, "players": ctx.players, "seed": ctx.next_seed()});
    let node = ctx.next_node.fetch_add(1, Ordering::Relaxed) % ctx.bases.len();
    let request = ctx
        .http
        .post(format!("{}/api/games", ctx.bases[node]))
        .header("content-type", "application/json")
        .body(body.to_string());
    let (status, bytes) = exchange(request, "POST /api/games").await?;
    if !status.is_success() {
        return Err(format!(
            "POST /api/games: {status}: {}",
            String::from_utf8_lossy(&bytes)
        ));
    }
    let created: CreatedBody =
        serde_json::from_slice(&bytes).map_err(|e| format!("POST /api/games answered: {e}"))?;
    let tokens = created
        .tokens
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or("a game was created with an open seat")?;
    Ok(Game {
        id: created.game,
        tokens,
        node,
    })
}

async fn http_legal(ctx: &Ctx, game: &Game, seat: usize) -> Result<Incoming, String> {
    let request = ctx
        .http
        .get(format!(
            "{}/api/games/{}/legal",
            ctx.base(game, seat),
            game.id
        ))
        .bearer_auth(&game.tokens[seat]);
    let (status, bytes) = exchange(request, "GET legal").await?;
    let body: Incoming = serde_json::from_slice(&bytes).unwrap_or_default();
    if !status.is_success() {
        return Err(format!(
            "GET legal: {status} {}",
            body.error.unwrap_or_default()
        ));
    }
    Ok(body)
}

/// What a submission got.
enum Submitted {
    Acked,
    Stale,
    Refused,
    Finished,
    Failed(String),
}

async fn http_act(ctx: &Ctx, game: &Game, seat: usize, action: &RawValue, seq: u64) -> Submitted {
    let body = format!(r#"{{"action":{},"expected_seq":{seq}}}"#, action.get());
    let sent = ctx
        .http
        .post(format!(
            "{}/api/games/{}/actions",
            ctx.base(game, seat),
            game.id
        ))
        .bearer_auth(&game.tokens[seat])
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await;
    let response = match sent {
        Ok(response) => response,
        Err(e) => return Submitted::Failed(format!("POST actions: {e}")),
    };
    let status = response.status();
    let bytes = match response.bytes().await {
        Ok(bytes) => bytes,
        Err(e) => return Submitted::Failed(format!("POST actions: {e}")),
    };
    if status.is_success() {
        return Submitted::Acked;
    }
    let body: Incoming = serde_json::from_slice(&bytes).unwrap_or_default();
    classify(
        body.error.as_deref(),
        &format!(
            "POST actions: {status} {}",
            body.message.unwrap_or_default()
        ),
    )
}

fn classify(code: Option<&str>, what: &str) -> Submitted {
    match code {
        Some("stale") => Submitted::Stale,
        Some("refused") => Submitted::Refused,
        Some("finished") => Submitted::Finished,
        _ => Submitted::Failed(what.to_owned()),
    }
}

/// Plays up to `actions` actions of `game` over HTTP (fewer if it ends).
async fn play_http(ctx: &Ctx, game: &Game, actions: usize, rng: &mut Rng) -> Result<(), String> {
    let players = game.tokens.len();
    let mut seat = 0;
    let mut played = 0;
    let mut empty = 0;
    while played < actions && empty < players {
        let legal = http_legal(ctx, game, seat).await?;
        let list = legal.actions.unwrap_or_default();
        if list.is_empty() {
            empty += 1;
            seat = (seat + 1) % players;
            continue;
        }
        empty = 0;
        let action = &list[rng.below(list.len())];
        match http_act(ctx, game, seat, action, legal.seq.unwrap_or(0)).await {
            Submitted::Acked => played += 1,
            Submitted::Finished => return Ok(()),
            Submitted::Stale | Submitted::Refused => {}
            Submitted::Failed(e) => return Err(e),
        }
    }
    Ok(())
}

/// A new game for a driver; the first one it gets marks the driver `ready`. A failure is counted and
/// paused on, then `None`: the driver tries again unless stopping.
async fn next_game(
    ctx: &Ctx,
    shared: &Shared,
    stats: &mut Stats,
    ready: &mut bool,
) -> Option<Game> {
    match create_game(ctx).await {
        Ok(game) => {
            if !*ready {
                *ready = true;
                shared.set_ready();
            }
            Some(game)
        }
        Err(e) => {
            stats.error(shared, || e);
            tokio::time::sleep(Duration::from_millis(100)).await;
            None
        }
    }
}

/// One game after another over HTTP, one task for all seats of the game.
async fn http_driver(ctx: Arc<Ctx>, shared: Arc<Shared>, seed: u64) -> Stats {
    let mut stats = Stats::default();
    let mut rng = Rng(seed);
    let mut ready = false;
    let players = usize::from(ctx.players);
    'games: while !shared.stopping() {
        let Some(game) = next_game(&ctx, &shared, &mut stats, &mut ready).await else {
            continue;
        };
        let mut seat = 0;
        let mut empty = 0;
        while !shared.stopping() {
            stats.legal_calls += 1;
            let legal = match http_legal(&ctx, &game, seat).await {
                Ok(legal) => legal,
                Err(e) => {
                    stats.error(&shared, || e);
                    continue 'games;
                }
            };
            let list = legal.actions.unwrap_or_default();
            if list.is_empty() {
                empty += 1;
                seat = (seat + 1) % players;
                if empty >= players {
                    // Nobody may act: the game is over.
                    stats.games_ended += 1;
                    continue 'games;
                }
                continue;
            }
            empty = 0;
            let action = &list[rng.below(list.len())];
            let started = Instant::now();
            match http_act(&ctx, &game, seat, action, legal.seq.unwrap_or(0)).await {
                Submitted::Acked => stats.ack(&shared, started.elapsed()),
                Submitted::Stale => stats.stale += 1,
                Submitted::Refused => stats.refused += 1,
                Submitted::Finished => {
                    stats.games_ended += 1;
                    continue 'games;
                }
                Submitted::Failed(e) => {
                    stats.error(&shared, || e);
                    continue 'games;
                }
            }
        }
    }
    if !ready {
        shared.set_ready();
    }
    stats
}

/// One game after another over WebSocket: one task and connection per seat.
async fn ws_driver(ctx: Arc<Ctx>, shared: Arc<Shared>, seed: u64) -> Stats {
    let mut stats = Stats::default();
    let mut rng = Rng(seed);
    let mut ready = false;
    while !shared.stopping() {
        let Some(game) = next_game(&ctx, &shared, &mut stats, &mut ready).await else {
            continue;
        };
        let game = Arc::new(game);
        let seats: Vec<_> = (0..game.tokens.len())
            .map(|seat| {
                let ctx = Arc::clone(&ctx);
                let shared = Arc::clone(&shared);
                let game = Arc::clone(&game);
                let seed = rng.next();
                tokio::spawn(async move { ws_seat(&ctx, &shared, &game, seat, seed).await })
            })
            .collect();
        let mut ended = false;
        for seat in seats {
            match seat.await {
                Ok((seat_stats, over)) => {
                    stats.merge(seat_stats);
                    ended |= over;
                }
                Err(e) => stats.error(&shared, || format!("a seat's task failed: {e}")),
            }
        }
        if ended {
            stats.games_ended += 1;
        }
    }
    if !ready {
        shared.set_ready();
    }
    stats
}

type Socket =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A seat's knowledge of its game: the latest sequence number seen, the first seat that may act then,
/// whether the game is over.
#[derive(Default)]
struct SeatView {
    seq: u64,
    known: bool,
    first_acting: Option<u16>,
    over: bool,
}

impl SeatView {
    /// Takes in a view or pushed action; answers whether it was news.
    fn update(&mut self, message: &Incoming) -> bool {
        let (Some(seq), Some(view)) = (message.seq, &message.view) else {
            return false;
        };
        if self.known && seq < self.seq {
            return false;
        }
        self.known = true;
        self.seq = seq;
        self.first_acting = view.table.acting.first().map(|a| a.seat);
        self.over = view.table.over();
        true
    }
}

/// The next message of the socket, parsed; `None` when it closed.
async fn next_message(socket: &mut Socket) -> Result<Option<Incoming>, String> {
    loop {
        match socket.next().await {
            None => return Ok(None),
            Some(Err(e)) => return Err(format!("WebSocket: {e}")),
            Some(Ok(Message::Text(text))) => {
                return serde_json::from_str(text.as_str())
                    .map(Some)
                    .map_err(|e| format!("WebSocket message not understood: {e}"));
            }
            Some(Ok(Message::Close(_))) => return Ok(None),
            Some(Ok(_)) => {}
        }
    }
}

/// The answer to a request (`legal`, `acted`, `error`, `view`), taking in the pushes before it.
async fn reply(socket: &mut Socket, view: &mut SeatView) -> Result<Incoming, String> {
    loop {
        let Some(message) = next_message(socket).await? else {
            return Err("the server closed the WebSocket".into());
        };
        match message.kind.as_str() {
            "action" | "hello" => {
                view.update(&message);
            }
            "stopped" | "lagged" => {
                return Err(format!(
                    "{}: {}",
                    message.kind,
                    message.message.unwrap_or_default()
                ));
            }
            _ => return Ok(message),
        }
    }
}

/// One seat of one game over its WebSocket, until the game ends or the point stops. Answers its counts
/// and whether the game ended.
async fn ws_seat(ctx: &Ctx, shared: &Shared, game: &Game, seat: usize, seed: u64) -> (Stats, bool) {
    let mut stats = Stats::default();
    let mut rng = Rng(seed);
    let url = format!(
        "{}/api/games/{}/ws?token={}",
        ctx.ws_base(game, seat),
        game.id,
        game.tokens[seat]
    );
    let mut socket = match tokio_tungstenite::connect_async_with_config(url, None, true).await {
        Ok((socket, _)) => socket,
        Err(e) => {
            stats.error(shared, || format!("WebSocket connect: {e}"));
            return (stats, false);
        }
    };
    let mut stop = shared.stop.clone();
    let mut view = SeatView::default();
    let me = seat as u16;
    let over = loop {
        if shared.stopping() {
            break false;
        }
        if view.over {
            break true;
        }
        if view.known && view.first_acting == Some(me) {
            stats.legal_calls += 1;
            if let Err(e) = socket.send(Message::text(r#"{"type":"legal"}"#)).await {
                stats.error(shared, || format!("WebSocket send: {e}"));
                break false;
            }
            let legal = match reply(&mut socket, &mut view).await {
                Ok(legal) => legal,
                Err(e) => {
                    stats.error(shared, || e);
                    break false;
                }
            };
            let list = legal.actions.unwrap_or_default();
            let Some(seq) = legal
                .seq
                .filter(|_| legal.kind == "legal" && !list.is_empty())
            else {
                // Nothing to do after all: wait for news.
                view.first_acting = None;
                continue;
            };
            let action = &list[rng.below(list.len())];
            let text = format!(
                r#"{{"type":"act","action":{},"expected_seq":{seq}}}"#,
                action.get()
            );
            let started = Instant::now();
            if let Err(e) = socket.send(Message::text(text)).await {
                stats.error(shared, || format!("WebSocket send: {e}"));
                break false;
            }
            let answer = match reply(&mut socket, &mut view).await {
                Ok(answer) => answer,
                Err(e) => {
                    stats.error(shared, || e);
                    break false;
                }
            };
            let result = if answer.kind == "acted" {
                Submitted::Acked
            } else {
                classify(
                    answer.error.as_deref(),
                    &format!(
                        "act: {} {}",
                        answer.error.as_deref().unwrap_or(&answer.kind),
                        answer.message.as_deref().unwrap_or_default()
                    ),
                )
            };
            match result {
                Submitted::Acked => {
                    stats.ack(shared, started.elapsed());
                    // Act again only on the view after this action, pushed to every seat.
                    if view.seq < answer.seq.unwrap_or(u64::MAX) {
                        view.first_acting = None;
                    }
                }
                Submitted::Stale => {
                    stats.stale += 1;
                    view.first_acting = None;
                }
                Submitted::Refused => stats.refused += 1,
                Submitted::Finished => break true,
                Submitted::Failed(e) => {
                    stats.error(shared, || e);
                    break false;
                }
            }
            continue;
        }
        // Not this seat's turn: wait for the next push (asking for a view if none comes for a while).
        tokio::select! {
            message = tokio::time::timeout(Duration::from_secs(2), next_message(&mut socket)) => {
                match message {
                    Ok(Ok(Some(message))) => match message.kind.as_str() {
                        "stopped" | "lagged" => {
                            stats.error(shared, || format!("{}: {}", message.kind, message.message.unwrap_or_default()));
                            break false;
                        }
                        _ => {
                            view.update(&message);
                        }
                    },
                    Ok(Ok(None)) => break false,
                    Ok(Err(e)) => {
                        stats.error(shared, || e);
                        break false;
                    }
                    Err(_) => {
                        if let Err(e) = socket.send(Message::text(r#"{"type":"view"}"#)).await {
                            stats.error(shared, || format!("WebSocket send: {e}"));
                            break false;
                        }
                    }
                }
            }
            _ = stop.changed() => break false,
        }
    };
    let _ = socket.close(None).await;
    (stats, over)
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

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

// ----- the report -----

/// One point: a number of games and a transport.
#[derive(Debug, Serialize)]
pub struct Point {
    games: usize,
    transport: Transport,
    seconds: f64,
    acks: u64,
    acks_per_second: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
    stale: u64,
    refused: u64,
    errors: u64,
    games_ended: u64,
    legal_calls: u64,
    /// CPU time of the server per acknowledged action, in microseconds (only a server started here).
    server_cpu_us_per_ack: Option<f64>,
    /// CPU time of the load generator per acknowledged action, in microseconds.
    client_cpu_us_per_ack: Option<f64>,
    /// Cores the server kept busy on average while measured.
    server_cores: Option<f64>,
    /// Cores the load generator kept busy on average while measured.
    client_cores: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    first_errors: Vec<String>,
}

/// The memory figure.
#[derive(Debug, Serialize)]
pub struct Memory {
    games: usize,
    rss_before: u64,
    rss_after: u64,
    bytes_per_game: f64,
    setup_seconds: f64,
}

/// Everything measured.
#[derive(Debug, Serialize)]
pub struct Report {
    ruleset: String,
    players: u16,
    seconds: f64,
    warmup: f64,
    server: String,
    cores: usize,
    load_before: Option<[f64; 3]>,
    load_after: Option<[f64; 3]>,
    points: Vec<Point>,
    memory: Option<Memory>,
}

impl Report {
    fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "coffer loadtest: {} games of {} players, {} s measured per point after {} s of warm-up; server {}",
            self.ruleset, self.players, self.seconds, self.warmup, self.server
        );
        let _ = writeln!(
            out,
            "{:>6} {:<9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>7} {:>7} {:>14} {:>14}",
            "games",
            "transport",
            "acks/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "acks",
            "stale",
            "refused",
            "errors",
            "ended",
            "server us/ack",
            "client us/ack"
        );
        let cpu = |us: Option<f64>, cores: Option<f64>| match (us, cores) {
            (Some(us), Some(cores)) => format!("{us:.0} ({cores:.2}c)"),
            _ => "-".to_owned(),
        };
        for p in &self.points {
            let _ = writeln!(
                out,
                "{:>6} {:<9} {:>10.0} {:>9.2} {:>9.2} {:>9.2} {:>9} {:>7} {:>8} {:>7} {:>7} {:>14} {:>14}",
                p.games,
                p.transport.name(),
                p.acks_per_second,
                p.p50_ms,
                p.p99_ms,
                p.max_ms,
                p.acks,
                p.stale,
                p.refused,
                p.errors,
                p.games_ended,
                cpu(p.server_cpu_us_per_ack, p.server_cores),
                cpu(p.client_cpu_us_per_ack, p.client_cores)
            );
        }
        let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
        for e in self.points.iter().flat_map(|p| &p.first_errors) {
            *errors.entry(e.as_str()).or_default() += 1;
        }
        for (e, n) in errors {
            let _ = writeln!(out, "  error (x{n}): {e}");
        }
        match &self.memory {
            Some(m) => {
                let _ = writeln!(
                    out,
                    "memory: {} idle games (two actions played in each): server RSS {} -> {} bytes, {:.0} bytes per game",
                    m.games, m.rss_before, m.rss_after, m.bytes_per_game
                );
            }
            None => {
                let _ = writeln!(out, "memory: not measured");
            }
        }
        let load = |l: &Option<[f64; 3]>| {
            l.map_or("unknown".to_owned(), |[a, b, c]| {
                format!("{a:.2} {b:.2} {c:.2}")
            })
        };
        let _ = writeln!(
            out,
            "machine: {} cores shared by the server and the load generator; load average {} before, {} after",
            self.cores,
            load(&self.load_before),
            load(&self.load_after)
        );
        out
    }
}

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
        assert!(view.update(&push(3, r#"[{"seat":1,"why":"x"}]"#, r#""Ongoing""#)));
        assert_eq!(view.first_acting, Some(1));
        assert!(!view.update(&push(2, r#"[{"seat":0,"why":"x"}]"#, r#""Ongoing""#)));
        assert_eq!(view.first_acting, Some(1));
        assert!(view.update(&push(4, "[]", r#"{"Finished":{"winners":[0]}}"#)));
        assert!(view.over);
    }
}

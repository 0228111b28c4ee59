//! The `coffer` command: argument parsing (clap) and one function per subcommand. Not a library API:
//! the binary calls [`main`]; `coffer-server` shares [`Global`] so both programs take the same plugin
//! options (see `crate::programs`).
//!
//! The command links no ruleset: every ruleset comes from plugin libraries loaded at runtime from the
//! directories the user names (`--plugin-dir`, `COFFER_PLUGIN_PATH`), optionally pinned by a lock file.

use crate::host::HostedGame;
use crate::registry::Registry;
use crate::render::{self, error_chain as chain};
use crate::save::SaveFile;
use crate::simulate::PlayoutError;
use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand, ValueEnum};
use coffer_core::{GameRng, Owner, Setup};
use serde::Deserialize;
use serde_json::json;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// `println!` that hands a write error (a closed pipe) back to the caller instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        writeln!(std::io::stdout().lock(), $($arg)*)?
    };
}

/// `print!` that hands a write error back to the caller instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {
        write!(std::io::stdout().lock(), $($arg)*)?
    };
}

const AFTER_HELP: &str = "\
Rulesets are plugin libraries (lib<name>.so, .dylib or .dll) loaded at runtime from the directories given by
--plugin-dir and by COFFER_PLUGIN_PATH (separated by ':'). Build the bundled ones with
`cargo build --release --workspace`, then pass `--plugin-dir target/release`.

Exit status: 0 on success, 1 when a command fails (a refused action, a damaged save file...), 2 on a usage
error, 3 when `act` saved the action but showing its result failed (the action is not lost); 123, 124 and
125 when a plugin called exit, passed its call deadline or crashed during a call. Libraries that cannot be
loaded are reported as warnings and skipped.

Examples:
  coffer --plugin-dir target/release rulesets
  coffer --plugin-dir target/release new charges --players 2 --seed 7 -o game.json
  coffer --plugin-dir target/release act game.json --player 0 '{\"type\":\"pass\"}'
  coffer --plugin-dir target/release show game.json
  coffer --plugin-dir target/release demo --scripts plugins";

/// The command line of `coffer`.
#[derive(Debug, Parser)]
#[command(
    name = "coffer",
    version,
    about = "Run games of tabletop rulesets loaded at runtime from plugin libraries",
    after_long_help = AFTER_HELP
)]
struct Cli {
    /// Options shared by every subcommand.
    #[command(flatten)]
    pub global: Global,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Options shared by every subcommand.
#[derive(Debug, clap::Args)]
pub struct Global {
    /// Load ruleset plugin libraries from DIR (repeatable; COFFER_PLUGIN_PATH adds more, ':'-separated).
    #[arg(long = "plugin-dir", value_name = "DIR", global = true)]
    pub plugin_dirs: Vec<PathBuf>,
    /// Lock file pinning the SHA-256 of each library allowed to load; others are refused.
    #[arg(long, value_name = "FILE", global = true)]
    pub lock: Option<PathBuf>,
    /// Output format: `text` for people, `json` for programs (one JSON document on stdout).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, global = true)]
    pub format: OutputFormat,
    /// Seconds a call into a plugin may take (0.01 to 86400; default 30, or COFFER_PLUGIN_DEADLINE). Native
    /// code cannot be interrupted: past the deadline `coffer` names the library and the call and exits 124.
    #[arg(long, value_name = "SECS", value_parser = parse_deadline, global = true)]
    pub plugin_deadline: Option<std::time::Duration>,
    /// More log output on stderr (-v: info, -vv: debug, -vvv: trace). RUST_LOG, when set, takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

/// A plugin call deadline in seconds, within the loader's bounds.
fn parse_deadline(text: &str) -> Result<std::time::Duration, String> {
    let (min, max) = (crate::loader::MIN_DEADLINE, crate::loader::MAX_DEADLINE);
    let bounds = format!(
        "a number of seconds from {} to {}",
        min.as_secs_f64(),
        max.as_secs()
    );
    let secs: f64 = text.parse().map_err(|_| format!("expected {bounds}"))?;
    if !(min.as_secs_f64()..=max.as_secs_f64()).contains(&secs) {
        return Err(format!("{secs} is not {bounds}"));
    }
    Ok(std::time::Duration::from_secs_f64(secs))
}

/// How results are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Human-readable text.
    Text,
    /// One JSON document on stdout.
    Json,
}

/// Players, seed and configuration of a new game.
#[derive(Debug, clap::Args)]
struct NewGame {
    /// The ruleset: `ID` or `ID@VERSION` (see `coffer rulesets`).
    #[arg(value_name = "ID")]
    pub ruleset: String,
    /// Number of players.
    #[arg(long, short = 'p', value_name = "N")]
    pub players: u16,
    /// Seed of the game's random number generator; the same seed and actions always give the same game.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// JSON file with the ruleset's configuration (see `coffer describe ID` for the options).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Players, seed and configuration of a scripted game: what is not given comes from the
/// `<script>.setup.json` beside the script (`{"players": N, "seed": S, "config": {...}}`), if there is one.
#[derive(Debug, clap::Args)]
struct ScriptedGame {
    /// The ruleset: `ID` or `ID@VERSION` (see `coffer rulesets`).
    #[arg(value_name = "ID")]
    pub ruleset: String,
    /// Number of players [default: the script's `<script>.setup.json`; required without one].
    #[arg(long, short = 'p', value_name = "N")]
    pub players: Option<u16>,
    /// Seed of the game's random number generator; the same seed and actions always give the same game
    /// [default: the script's `<script>.setup.json`, else 0].
    #[arg(long, value_name = "S")]
    pub seed: Option<u64>,
    /// JSON file with the ruleset's configuration (see `coffer describe ID` for the options) [default:
    /// the script's `<script>.setup.json`, else none].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
#[non_exhaustive]
enum Command {
    /// List the loaded rulesets with their version and the library they came from.
    Rulesets,
    /// Describe a ruleset: phases, resources, actions (with JSON examples) and configuration options.
    Describe {
        /// The ruleset: `ID` or `ID@VERSION`.
        #[arg(value_name = "ID")]
        ruleset: String,
        /// Print the description as JSON (same as `--format json`).
        #[arg(long)]
        json: bool,
    },
    /// Start a new game and write its save file.
    New {
        /// The game to start.
        #[command(flatten)]
        game: NewGame,
        /// Save file to write.
        #[arg(short, long, value_name = "GAME")]
        output: PathBuf,
        /// Replace the save file if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Apply one action to a saved game and rewrite the save.
    ///
    /// The save is rewritten atomically. A refused action prints the ruleset's reason, exits with status 1
    /// and leaves the file byte-identical; so does a game that would outgrow the save size limit. When the
    /// action is saved but showing its result fails (the plugin failed answering), exits with status 3.
    Act {
        /// The save file.
        #[arg(value_name = "GAME")]
        game: PathBuf,
        /// The acting player's index (0-based).
        #[arg(long, value_name = "P")]
        player: u16,
        /// The action as JSON, e.g. '{"type":"pass"}' (see `coffer describe ID` or `coffer legal GAME`).
        #[arg(value_name = "ACTION_JSON")]
        action: String,
    },
    /// Play a scripted game from a JSON Lines file.
    ///
    /// Each line is `{"player": 0, "action": {...}}`; blank lines are skipped. Prints each action's events,
    /// then the outcome and state hash. Stops with exit status 1 at the first refused action unless
    /// `--keep-going`.
    Play {
        /// The game to start.
        #[command(flatten)]
        game: ScriptedGame,
        /// The script (JSON Lines).
        #[arg(long, value_name = "FILE.jsonl")]
        script: PathBuf,
        /// Also write the final game to this save file.
        #[arg(short, long, value_name = "GAME")]
        output: Option<PathBuf>,
        /// Report refused actions and go on with the next line (the exit status is still 1 if any was refused).
        #[arg(long)]
        keep_going: bool,
        /// Replace the save file given by --output if it exists.
        #[arg(long)]
        force: bool,
    },
    /// Show a saved game's table from one seat, or as a spectator: the clock, whose turn, who may act and
    /// why, pending choices, the ruleset's own state, every resource that seat may see, and the outcome.
    ///
    /// Without --player, only public information is shown. Capped amounts are bars (`[#####.....] 5/10`),
    /// charge tracks filled/empty marks (`●●○ 2/3`), token zones counts per owner, permanents ready (●) or
    /// exhausted (○).
    Show {
        /// The save file.
        #[arg(value_name = "GAME")]
        game: PathBuf,
        /// See the game from this player's seat (0-based): their hidden state too, nobody else's.
        #[arg(long, value_name = "P")]
        player: Option<u16>,
    },
    /// Show a saved game's history in words: each action and what it changed, as one seat (or a
    /// spectator) may read it.
    Log {
        /// The save file.
        #[arg(value_name = "GAME")]
        game: PathBuf,
        /// Read the history from this player's seat (0-based); without it, as a spectator.
        #[arg(long, value_name = "P")]
        player: Option<u16>,
    },
    /// Re-apply a saved game's action log from scratch and verify the state hashes.
    ///
    /// Prints ok, or the first divergence (a refused action or the first hash that differs) and exits 1.
    Replay {
        /// The save file.
        #[arg(value_name = "GAME")]
        game: PathBuf,
    },
    /// List a player's legal actions in a saved game, as JSON ready for `coffer act`.
    Legal {
        /// The save file.
        #[arg(value_name = "GAME")]
        game: PathBuf,
        /// The player's index (0-based).
        #[arg(long, value_name = "P")]
        player: u16,
    },
    /// Play a short game of every loaded ruleset and show the final resources and outcome.
    ///
    /// With `--scripts DIR`, plays the first `DIR/<id>/examples/*.jsonl` script of each ruleset (by file
    /// name); without one, or with no script for a ruleset, a seeded random playout of legal actions.
    /// A script's game has as many players as the script names (at least the ruleset's minimum) and the
    /// demo's seed, unless a `<script>.setup.json` beside it says `{"players": N, "seed": S, "config": {}}`.
    /// A refused script action ends that ruleset's script; the demo goes on and exits with status 1.
    Demo {
        /// Directory holding one folder per ruleset id with an `examples/` folder of scripts
        /// (e.g. the repository's `plugins`).
        #[arg(long, value_name = "DIR")]
        scripts: Option<PathBuf>,
        /// Most actions in a random playout (1 to 1000000).
        #[arg(long, default_value_t = 40, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
        actions: u32,
        /// Seed of each game and of the random playout.
        #[arg(long, default_value_t = 1, value_name = "S")]
        seed: u64,
    },
    /// Check plugin libraries without loading them into this process.
    #[command(subcommand)]
    Plugins(PluginsCommand),
    /// Host games of every loaded ruleset for remote players over HTTP and WebSocket, on a durable store
    /// (runs the server program `coffer-server`; `coffer serve --help` lists its options).
    #[command(disable_help_flag = true)]
    Serve {
        /// The server's options (see `coffer serve --help`).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "OPTIONS"
        )]
        args: Vec<std::ffi::OsString>,
    },
    /// Measure a server's acknowledged actions per second and latency (runs `coffer-server loadtest`;
    /// `coffer loadtest --help` lists its options).
    #[command(disable_help_flag = true)]
    Loadtest {
        /// The load generator's options (see `coffer loadtest --help`).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "OPTIONS"
        )]
        args: Vec<std::ffi::OsString>,
    },
    /// Internal: probe one library in this child process for `coffer plugins check` (the library comes from
    /// the environment the parent sets).
    #[command(name = "probe-library", hide = true)]
    ProbeLibrary,
    /// Random playouts with invariant checks: uniform legal actions mixed with illegal and malformed ones.
    ///
    /// After every action the kernel and ruleset invariants are checked and every refusal must leave the
    /// state hash unchanged; every --check-every actions clone, JSON and binary snapshots and a replay of
    /// the log must reproduce the state hash. Each violation is shrunk to a minimal script (written to
    /// --repro-dir) that `coffer play` and `coffer simulate --check-script` re-run. Exits 1 on any violation.
    Simulate(SimulateArgs),
}

/// `coffer plugins ...`.
#[derive(Debug, Subcommand)]
#[non_exhaustive]
enum PluginsCommand {
    /// Probe every library of DIR in a child process of its own, one by one, with every check the loader
    /// makes (path policy, lock file, declaration, versions, a first call), and name each library that
    /// is refused or crashes. Exits 1 when any library would not load.
    Check {
        /// The plugin directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// A line of a `coffer play` script.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptLine {
    player: u16,
    action: serde_json::Value,
}

/// Runs the command line of this process and returns its exit status: 0 success, 1 failure, 2 usage
/// error, 3 an action saved but not shown ([`Status::SavedNotShown`]). Errors are printed once, with their
/// whole chain.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            // Help and version go to stdout with status 0; usage errors to stderr with status 2.
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    if let Command::ProbeLibrary = cli.command {
        // Only in a child that `plugins check` started: a stray environment variable never turns another
        // command into a probe.
        let code = crate::loader::probe_child_main().unwrap_or(2);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    match &cli.command {
        Command::Serve { args } => return server_program(&cli.global, "serve", args),
        Command::Loadtest { args } => return server_program(&cli.global, "loadtest", args),
        _ => {}
    }
    init_tracing(cli.global.verbose);
    match run(&cli) {
        Ok(status) => ExitCode::from(status.code()),
        // The reader went away (`coffer legal ... | head -1`): stop quietly, as ripgrep does.
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            let message = chain(err.as_ref());
            if cli.global.format == OutputFormat::Json {
                // Programs reading stdout get a JSON document on failure too.
                let _ = print_json(&json!({ "error": message }));
            }
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// `coffer serve` and `coffer loadtest`: the server program `coffer-server`, next to this one, given the
/// same plugin options. On Unix it replaces this process, so signals (SIGTERM for a graceful stop) reach
/// the server itself.
fn server_program(global: &Global, command: &str, args: &[std::ffi::OsString]) -> ExitCode {
    let name = format!("coffer-server{}", std::env::consts::EXE_SUFFIX);
    let program = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name(&name),
        Err(e) => {
            eprintln!("error: cannot find this program's own path to find {name} beside it: {e}");
            return ExitCode::from(2);
        }
    };
    if !program.is_file() {
        eprintln!(
            "error: `coffer {command}` runs the server program {}, which is not built: build it with \
             `cargo build --release --workspace`",
            program.display()
        );
        return ExitCode::from(2);
    }
    let mut child = std::process::Command::new(&program);
    for dir in &global.plugin_dirs {
        child.arg("--plugin-dir").arg(dir);
    }
    if let Some(lock) = &global.lock {
        child.arg("--lock").arg(lock);
    }
    if let Some(deadline) = global.plugin_deadline {
        child
            .arg("--plugin-deadline")
            .arg(deadline.as_secs_f64().to_string());
    }
    if global.format == OutputFormat::Json {
        child.arg("--format").arg("json");
    }
    child.arg(command).args(args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt as _;
        let error = child.exec();
        eprintln!("error: cannot run {}: {error}", program.display());
        ExitCode::from(2)
    }
    #[cfg(not(unix))]
    match child.status() {
        Ok(status) => ExitCode::from(u8::try_from(status.code().unwrap_or(1)).unwrap_or(1)),
        Err(error) => {
            eprintln!("error: cannot run {}: {error}", program.display());
            ExitCode::from(2)
        }
    }
}

/// Whether an error is a write to a closed pipe.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Whether a command that ran to its end succeeded (a failure already printed its reason).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Exit 0.
    Success,
    /// Exit 1.
    Failure,
    /// Exit 3: `act` saved the action, but showing its result failed (the plugin failed while answering).
    SavedNotShown,
}

impl Status {
    /// The process exit status: 0, 1, or 3 ([`Status::SavedNotShown`]).
    pub fn code(self) -> u8 {
        match self {
            Status::Success => 0,
            Status::Failure => 1,
            Status::SavedNotShown => 3,
        }
    }
}

fn init_tracing(verbose: u8) {
    use tracing_subscriber::EnvFilter;
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

/// Parses a command line (the program's name first) and runs it in this process, as [`main`] does but
/// without printing an error or exiting: what the command tests call.
///
/// # Errors
/// A usage error (clap's message), or whatever made the command fail, with context.
pub fn run_args<I, T>(args: I) -> anyhow::Result<Status>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    run(&Cli::try_parse_from(args)?)
}

/// Runs one parsed command line.
///
/// # Errors
/// Whatever made the command fail, with context.
fn run(cli: &Cli) -> anyhow::Result<Status> {
    let format = cli.global.format;
    match &cli.command {
        Command::Plugins(PluginsCommand::Check { dir }) => {
            return plugins_check(dir, &cli.global);
        }
        Command::ProbeLibrary => {
            bail!("probe-library runs only as a child of `coffer plugins check`")
        }
        Command::Serve { .. } | Command::Loadtest { .. } => {
            bail!(
                "`coffer serve` and `coffer loadtest` run the program coffer-server, which only the `coffer` binary starts"
            )
        }
        _ => {}
    }
    let (registry, refused) = load_registry_counting(&cli.global)?;
    match &cli.command {
        Command::Rulesets => {
            let status = rulesets(&registry, &cli.global)?;
            // Every library refused is a failure, not an empty list.
            if registry.is_empty() && refused > 0 {
                return Ok(Status::Failure);
            }
            Ok(status)
        }
        Command::Describe { ruleset, json } => describe(
            &registry,
            ruleset,
            if *json { OutputFormat::Json } else { format },
        ),
        Command::New {
            game,
            output,
            force,
        } => new(&registry, game, output, *force, format),
        Command::Act {
            game,
            player,
            action,
        } => act(&registry, game, *player, action, format),
        Command::Play {
            game,
            script,
            output,
            keep_going,
            force,
        } => play(
            &registry,
            game,
            script,
            output.as_deref().map(|o| (o, *force)),
            *keep_going,
            format,
        ),
        Command::Simulate(args) => simulate(&registry, args, format),
        Command::Show { game, player } => show(&registry, game, *player, format),
        Command::Log { game, player } => log(&registry, game, *player, format),
        Command::Replay { game } => replay(&registry, game, format),
        Command::Legal { game, player } => legal(&registry, game, *player, format),
        Command::Demo {
            scripts,
            actions,
            seed,
        } => demo(
            &registry,
            &cli.global,
            scripts.as_deref(),
            u64::from(*actions),
            *seed,
        ),
        Command::Plugins(_)
        | Command::ProbeLibrary
        | Command::Serve { .. }
        | Command::Loadtest { .. } => unreachable!("handled before loading"),
    }
}

/// `coffer plugins check DIR`: each library probed in a child process.
fn plugins_check(dir: &Path, global: &Global) -> anyhow::Result<Status> {
    let probe = crate::loader::ProbeCommand::new(std::env::current_exe()?, ["probe-library"]);
    let reports = crate::loader::check_dir(dir, global.lock.as_deref(), &probe);
    if global.format == OutputFormat::Json {
        let list: Vec<_> = reports
            .iter()
            .map(|r| json!({"library": r.path, "loads": r.loads(), "report": r.to_string()}))
            .collect();
        print_json(&serde_json::Value::Array(list))?;
    } else {
        if reports.is_empty() {
            outln!("{}: no plugin library here", dir.display());
        }
        for report in &reports {
            outln!("{report}");
        }
    }
    Ok(if reports.iter().all(crate::loader::CheckReport::loads) {
        Status::Success
    } else {
        Status::Failure
    })
}

/// The plugin directories: `--plugin-dir` ones first, then those of `COFFER_PLUGIN_PATH`.
pub fn plugin_dirs(global: &Global) -> Vec<PathBuf> {
    let mut dirs = global.plugin_dirs.clone();
    dirs.extend(crate::loader::plugin_dirs_from_env());
    dirs
}

/// Loads every plugin library of the plugin directories (pinned by `--lock` when given); each library
/// that fails is reported on stderr as a warning and skipped.
///
/// # Errors
/// Only an unreadable or invalid lock file: with pinning asked for, nothing loads unpinned.
pub fn load_registry(global: &Global) -> anyhow::Result<Registry> {
    load_registry_counting(global).map(|(registry, _)| registry)
}

/// [`load_registry`], and how many libraries were refused.
fn load_registry_counting(global: &Global) -> anyhow::Result<(Registry, usize)> {
    let lock = match &global.lock {
        Some(path) => Some(crate::loader::LockFile::read(path)?),
        None => None,
    };
    let mut registry = Registry::new();
    if let Some(deadline) = global.plugin_deadline {
        registry.set_plugin_deadline(deadline);
    }
    let report = registry.load_dirs(&plugin_dirs(global), lock.as_ref());
    let refused = report.errors.len();
    for err in report.errors {
        eprintln!("warning: skipped: {}", chain(&err));
    }
    for (key, path) in &report.loaded {
        tracing::info!(ruleset = %key, library = %path.display(), "loaded");
    }
    Ok((registry, refused))
}

fn print_json(value: &serde_json::Value) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)?;
    writeln!(out)?;
    Ok(())
}

fn no_rulesets_hint(global: &Global) -> String {
    let dirs = plugin_dirs(global);
    let searched = if dirs.is_empty() {
        "no plugin directory was given".to_owned()
    } else {
        format!(
            "searched {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "no ruleset is loaded ({searched}); build the plugins with `cargo build --release --workspace` and pass \
         `--plugin-dir target/release` (or set {})",
        crate::loader::PLUGIN_PATH_ENV
    )
}

fn rulesets(registry: &Registry, global: &Global) -> anyhow::Result<Status> {
    if global.format == OutputFormat::Json {
        let list: Vec<_> = registry
            .iter()
            .map(|e| {
                let d = e.ruleset.description();
                json!({"id": d.id, "version": d.version, "summary": d.summary, "origin": e.origin.to_string()})
            })
            .collect();
        print_json(&serde_json::Value::Array(list))?;
        return Ok(Status::Success);
    }
    if registry.is_empty() {
        outln!("{}", no_rulesets_hint(global));
        return Ok(Status::Success);
    }
    for e in registry.iter() {
        let d = e.ruleset.description();
        outln!("{:<28} {}  ({})", e.key(), d.summary, e.origin);
    }
    Ok(Status::Success)
}

fn describe(registry: &Registry, name: &str, format: OutputFormat) -> anyhow::Result<Status> {
    let entry = registry.get(name)?;
    let d = entry.ruleset.description();
    if format == OutputFormat::Json {
        print_json(&serde_json::to_value(d)?)?;
        return Ok(Status::Success);
    }
    outln!("{} — {}", d.key(), d.summary);
    outln!("players: {} to {}", d.min_players, d.max_players);
    outln!("loaded from: {}", entry.origin);
    // The vocabulary's names are the rulebook's; the older list is a fallback for rulesets without one.
    let phases = if d.vocabulary.phases.is_empty() {
        &d.phases
    } else {
        &d.vocabulary.phases
    };
    if !phases.is_empty() {
        outln!("\nphases:\n  {}", phases.join(" → "));
    }
    describe_docs("resources", &d.resources, "")?;
    describe_docs("actions", &d.actions, "e.g. ")?;
    describe_docs("configuration options", &d.options, "default: ")?;
    Ok(Status::Success)
}

/// One titled list of `describe`: each doc's name and text, and its example or default value.
fn describe_docs(title: &str, docs: &[coffer_core::Doc], value_label: &str) -> anyhow::Result<()> {
    if docs.is_empty() {
        return Ok(());
    }
    outln!("\n{title}:");
    for doc in docs {
        outln!("  {}: {}", doc.name, doc.doc);
        if !doc.value.is_null() {
            outln!("      {value_label}{}", doc.value);
        }
    }
    Ok(())
}

/// The configuration in a file: a JSON object of options (or `null`), at most
/// [`MAX_CONFIG_BYTES`](crate::save::MAX_CONFIG_BYTES) of text.
fn read_config(path: Option<&Path>) -> anyhow::Result<serde_json::Value> {
    let Some(path) = path else {
        return Ok(serde_json::Value::Null);
    };
    let text = crate::save::read_capped_text(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    let bad = || format!("config file {} is not a configuration", path.display());
    crate::save::check_config_text(text.trim()).with_context(bad)?;
    let config = serde_json::from_str(&text)
        .with_context(|| format!("config file {} is not valid JSON", path.display()))?;
    crate::save::check_config(&config).with_context(bad)?;
    Ok(config)
}

fn start(registry: &Registry, game: &NewGame) -> anyhow::Result<HostedGame> {
    let entry = registry.get(&game.ruleset)?;
    let setup = Setup {
        players: game.players,
        seed: game.seed,
        config: read_config(game.config.as_deref())?,
    };
    Ok(HostedGame::start(entry.ruleset.clone(), setup)?)
}

/// Starts the game of a script: the command line's players, seed and configuration, and for what it
/// leaves out the `<script>.setup.json` beside the script, when there is one.
fn start_scripted(
    registry: &Registry,
    game: &ScriptedGame,
    script: &Path,
) -> anyhow::Result<HostedGame> {
    let entry = registry.get(&game.ruleset)?;
    let sidecar = script.with_extension("setup.json");
    let from_file = if sidecar.is_file() {
        Some(crate::simulate::script_setup(
            script,
            0,
            entry.ruleset.description(),
            0,
        )?)
    } else {
        None
    };
    let players = match (game.players, &from_file) {
        (Some(n), _) => n,
        (None, Some(file)) => file.players,
        (None, None) => bail!(
            "--players is required: how many players the game has (or a {} beside the script with {{\"players\": N}})",
            sidecar.display()
        ),
    };
    let config = match (&game.config, from_file.as_ref()) {
        (None, Some(file)) => file.config.clone(),
        (path, _) => read_config(path.as_deref())?,
    };
    let setup = Setup {
        players,
        seed: game
            .seed
            .or(from_file.as_ref().map(|f| f.seed))
            .unwrap_or(0),
        config,
    };
    Ok(HostedGame::start(entry.ruleset.clone(), setup)?)
}

fn load(registry: &Registry, path: &Path) -> anyhow::Result<HostedGame> {
    crate::save::load(path, registry)
        .with_context(|| format!("cannot load game {}", path.display()))
}

fn summary_line(game: &HostedGame) -> String {
    let setup = game.setup();
    format!(
        "{}: {} players, seed {}, {} actions, state hash {}",
        game.key(),
        setup.players,
        setup.seed,
        game.log().len(),
        game.state_hash()
    )
}

fn new(
    registry: &Registry,
    game: &NewGame,
    output: &Path,
    force: bool,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    crate::save::check_new(output, force)?;
    let hosted = start(registry, game)?;
    hosted.check_plugin()?;
    crate::save::create(&hosted, output, force)?;
    if format == OutputFormat::Json {
        print_json(
            &json!({"game": output, "ruleset": hosted.key(), "state_hash": hosted.state_hash().to_string()}),
        )?;
    } else {
        outln!(
            "new game {} written to {}",
            summary_line(&hosted),
            output.display()
        );
    }
    Ok(Status::Success)
}

fn act(
    registry: &Registry,
    path: &Path,
    player: u16,
    action: &str,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    // Locked read, apply and write: two `act`s on one save never lose an action. A refused action writes
    // nothing.
    let applied = crate::save::update(path, registry, |game| {
        game.apply_json(player, action).map(|_| ())
    })
    .map_err(|err| {
        let context = match &err {
            crate::save::SaveError::TooLargeToWrite { .. } | crate::save::SaveError::Config(_) => {
                format!("the action was not saved to game {}", path.display())
            }
            _ => format!("cannot load game {}", path.display()),
        };
        anyhow::Error::new(err).context(context)
    })?;
    let mut game = match applied {
        Ok((game, ())) => game,
        Err(err) => {
            // JSON output carries the typed refusal for programs.
            let message = chain(&err);
            if format == OutputFormat::Json {
                let refusal = match &err {
                    crate::host::HostError::Action { refusal, .. } => {
                        serde_json::to_value(refusal)?
                    }
                    _ => serde_json::Value::Null,
                };
                print_json(&json!({"error": message, "refusal": refusal}))?;
            }
            eprintln!("error: {message}");
            return Ok(Status::Failure);
        }
    };
    // The action is saved: from here on, a failure to show it must not read as a lost action.
    match show_action(&mut game, player, format) {
        Ok(()) => Ok(Status::Success),
        Err(err) if is_broken_pipe(&err) => Err(err),
        Err(err) => {
            let message = format!(
                "the action was saved to game {}, but showing its result failed: {}",
                path.display(),
                chain(err.as_ref())
            );
            if format == OutputFormat::Json {
                let _ = print_json(&json!({"saved": true, "error": message}));
            }
            eprintln!("error: {message}");
            Ok(Status::SavedNotShown)
        }
    }
}

/// What `act` prints of the action just applied: its events as the actor's seat reads them, and the
/// outcome.
///
/// # Errors
/// The plugin's failure while answering, or a write error.
fn show_action(game: &mut HostedGame, player: u16, format: OutputFormat) -> anyhow::Result<()> {
    let seat = Some(Owner(player));
    let events = game.events_for(seat);
    let names = game.names(seat);
    let outcome = game.outcome();
    game.check_plugin()?;
    if format == OutputFormat::Json {
        print_json(&json!({
            "action": render::action_heading(&names, player, &events),
            "events": events.iter().map(|e| render::event_json(&names, e, seat)).collect::<Vec<_>>(),
            "outcome": outcome,
            "state_hash": game.state_hash().to_string(),
        }))?;
    } else {
        out!("{}", render::action(&names, player, &events, seat));
        outln!("outcome: {}", render::outcome(&outcome));
    }
    Ok(())
}

/// One step of a played script, for `--format json`: its events as the acting seat reads them, or why
/// it was refused.
fn step_json(
    game: &mut HostedGame,
    line: usize,
    player: u16,
    result: Result<(), String>,
) -> serde_json::Value {
    match result {
        Ok(()) => {
            let seat = Some(Owner(player));
            let events = game.events_for(seat);
            let names = game.names(seat);
            json!({
                "line": line,
                "player": player,
                "action": render::action_heading(&names, player, &events),
                "events": events.iter().map(|e| render::event_json(&names, e, seat)).collect::<Vec<_>>(),
            })
        }
        Err(error) => json!({"line": line, "player": player, "error": error}),
    }
}

/// Reads a script: `(line number, player, action)` for every non-blank line.
fn read_script(path: &Path) -> anyhow::Result<Vec<(usize, u16, serde_json::Value)>> {
    let text = crate::save::read_capped_text(path)
        .with_context(|| format!("cannot read script {}", path.display()))?;
    let mut steps = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let step: ScriptLine = serde_json::from_str(line).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}: expected {{\"player\": N, \"action\": {{...}}}}, found {}: {}",
                path.display(),
                i + 1,
                render::echo(line),
                render::echo(&e.to_string()),
            )
        })?;
        steps.push((i + 1, step.player, step.action));
    }
    Ok(steps)
}

/// Plays script steps on a game; prints as it goes in text mode (each action's events as the acting
/// seat reads them when `show_events`, its heading otherwise). Returns the JSON steps and whether any was
/// refused.
fn play_steps(
    game: &mut HostedGame,
    script: &Path,
    steps: &[(usize, u16, serde_json::Value)],
    keep_going: bool,
    format: OutputFormat,
    show_events: bool,
) -> anyhow::Result<(Vec<serde_json::Value>, bool)> {
    let mut out = Vec::new();
    let mut refused = false;
    for (line, player, action) in steps {
        match game.apply_json(*player, &action.to_string()) {
            Ok(_) => {
                if format == OutputFormat::Text {
                    let seat = Some(Owner(*player));
                    let events = game.events_for(seat);
                    let names = game.names(seat);
                    if show_events {
                        out!(
                            "{}:{line} {}",
                            script.display(),
                            render::action(&names, *player, &events, seat)
                        );
                    } else {
                        outln!("{}", render::action_heading(&names, *player, &events));
                    }
                }
                out.push(step_json(game, *line, *player, Ok(())));
            }
            Err(err) => {
                let message = chain(&err);
                eprintln!("error: {}:{line}: {message}", script.display());
                out.push(step_json(game, *line, *player, Err(message)));
                refused = true;
                if !keep_going {
                    break;
                }
            }
        }
    }
    Ok((out, refused))
}

fn play(
    registry: &Registry,
    game: &ScriptedGame,
    script: &Path,
    output: Option<(&Path, bool)>,
    keep_going: bool,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    // Refused before any work: an existing save is replaced only with --force.
    if let Some((output, force)) = output {
        crate::save::check_new(output, force)?;
    }
    let steps = read_script(script)?;
    let mut hosted = start_scripted(registry, game, script)?;
    let (json_steps, refused) = play_steps(&mut hosted, script, &steps, keep_going, format, true)?;
    hosted.check_plugin()?;
    if let Some((output, force)) = output {
        crate::save::create(&hosted, output, force)?;
    }
    if format == OutputFormat::Json {
        print_json(&json!({
            "ruleset": hosted.key(),
            "steps": json_steps,
            "outcome": hosted.outcome(),
            "state_hash": hosted.state_hash().to_string(),
        }))?;
    } else {
        outln!("outcome: {}", render::outcome(&hosted.outcome()));
        outln!("state hash: {}", hosted.state_hash());
    }
    Ok(if refused {
        Status::Failure
    } else {
        Status::Success
    })
}

fn seat_of(game: &HostedGame, player: Option<u16>) -> anyhow::Result<Option<Owner>> {
    let players = game.setup().players;
    match player {
        Some(p) if p >= players => bail!(
            "player {p} is not in this game: its players are 0 to {}",
            players.saturating_sub(1)
        ),
        Some(p) => Ok(Some(Owner(p))),
        None => Ok(None),
    }
}

fn show(
    registry: &Registry,
    path: &Path,
    player: Option<u16>,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    let game = load(registry, path)?;
    let seat = seat_of(&game, player)?;
    let table = game.table(seat);
    let views = game.resources(seat);
    game.check_plugin()?;
    if format == OutputFormat::Json {
        print_json(&json!({
            "ruleset": game.key(),
            "players": game.setup().players,
            "actions": game.log().len(),
            "seat": seat,
            "table": table,
            "resources": views,
            "state_hash": game.state_hash().to_string(),
        }))?;
    } else {
        let names = game.names_from(&views, &table);
        outln!("{}", summary_line(&game));
        outln!("seen by {}", render::audience(&names, seat));
        out!("{}", render::table(&names, &table));
        outln!("\nResources");
        out!("{}", render::resources(&names, &views));
        outln!("\noutcome: {}", render::outcome(&table.outcome));
    }
    Ok(Status::Success)
}

fn log(
    registry: &Registry,
    path: &Path,
    player: Option<u16>,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    let saved = load(registry, path)?;
    let seat = seat_of(&saved, player)?;
    // The history is the save's actions replayed from its setup; each step's events are filtered for
    // the seat at the source, by the game itself.
    let mut game = HostedGame::start(saved.ruleset().clone(), saved.setup().clone())?;
    let mut entries = Vec::new();
    if format == OutputFormat::Text {
        outln!("{}", summary_line(&saved));
        outln!(
            "history as {} reads it",
            render::audience(&game.names(seat), seat)
        );
    }
    for (n, logged) in saved.log().iter().enumerate() {
        game.apply_json(logged.player, &logged.action.to_string())
            .with_context(|| format!("action {} of the save no longer applies", n + 1))?;
        let events = game.events_for(seat);
        let names = game.names(seat);
        game.check_plugin()?;
        if format == OutputFormat::Json {
            entries.push(json!({
                "number": n + 1,
                "player": logged.player,
                "action": render::action_heading(&names, logged.player, &events),
                "events": events.iter().map(|e| render::event_json(&names, e, seat)).collect::<Vec<_>>(),
            }));
        } else {
            out!(
                "{}. {}",
                n + 1,
                render::action(&names, logged.player, &events, seat)
            );
        }
    }
    if format == OutputFormat::Json {
        print_json(&json!({
            "ruleset": saved.key(),
            "seat": seat,
            "actions": entries,
            "outcome": saved.outcome(),
        }))?;
    } else if saved.log().is_empty() {
        outln!("(no action yet)");
    }
    Ok(Status::Success)
}

fn replay(registry: &Registry, path: &Path, format: OutputFormat) -> anyhow::Result<Status> {
    let save =
        SaveFile::read(path).with_context(|| format!("cannot read game {}", path.display()))?;
    let result = save.replay(registry);
    let json_out = |ok: bool, detail: String| json!({"ok": ok, "actions": save.log.len(), "state_hash": save.state_hash.to_string(), "detail": detail});
    match result {
        Ok(_) => {
            if format == OutputFormat::Json {
                print_json(&json_out(true, String::new()))?;
            } else {
                outln!(
                    "ok: {} actions replayed to state hash {}",
                    save.log.len(),
                    save.state_hash
                );
            }
            Ok(Status::Success)
        }
        Err(err) => {
            let detail = chain(&err);
            if format == OutputFormat::Json {
                print_json(&json_out(false, detail.clone()))?;
            }
            eprintln!("error: {}: {detail}", path.display());
            Ok(Status::Failure)
        }
    }
}

fn legal(
    registry: &Registry,
    path: &Path,
    player: u16,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    let mut game = load(registry, path)?;
    seat_of(&game, Some(player))?;
    let actions = game.try_legal_actions(player)?;
    let outcome = game.try_outcome()?;
    if format == OutputFormat::Json {
        let values: Vec<serde_json::Value> = actions
            .iter()
            .map(|a| serde_json::from_str(a).unwrap_or(serde_json::Value::String(a.clone())))
            .collect();
        print_json(&serde_json::Value::Array(values))?;
    } else if actions.is_empty() {
        outln!(
            "p{player} has no legal action now (outcome: {})",
            render::outcome(&outcome)
        );
    } else {
        for action in &actions {
            outln!("{action}");
        }
    }
    Ok(Status::Success)
}

/// The first script (by name) in `DIR/<id>/examples/*.jsonl`.
fn demo_script(scripts: &Path, id: &str) -> anyhow::Result<Option<PathBuf>> {
    let dir = scripts.join(id).join("examples");
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .with_context(|| format!("cannot list {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    found.sort();
    Ok(found.into_iter().next())
}

/// A seeded random playout of at most `max` legal actions ([`HostedGame::playout`]: the simulation
/// engine's loop), each printed as its heading in text mode and returned as a JSON step with its events
/// as the acting seat reads them.
fn random_playout(
    game: &mut HostedGame,
    max: u64,
    seed: u64,
    format: OutputFormat,
) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut rng = GameRng::new(seed);
    let ruleset = std::sync::Arc::clone(game.ruleset());
    let mut steps = Vec::new();
    let played = game.playout(&mut rng, max, |logged, game| -> anyhow::Result<()> {
        let seat = Some(Owner(logged.player));
        let events = game.events_for(seat);
        let names = crate::host::names_for(
            ruleset.description(),
            &game.resources(seat),
            &game.table(seat),
        );
        if format == OutputFormat::Text {
            outln!("{}", render::action_heading(&names, logged.player, &events));
        }
        steps.push(json!({
            "player": logged.player,
            "action": logged.action,
            "events": events.iter().map(|e| render::event_json(&names, e, seat)).collect::<Vec<_>>(),
        }));
        Ok(())
    });
    match played {
        Ok(_) => Ok(steps),
        Err(PlayoutError::Refused {
            applied,
            player,
            index,
            error,
        }) => Err(anyhow::Error::new(error).context(format!(
            "random playout step {applied}: {player}'s listed legal action #{index} was refused"
        ))),
        Err(PlayoutError::Observer(e)) => Err(e),
    }
}

fn demo(
    registry: &Registry,
    global: &Global,
    scripts: Option<&Path>,
    actions: u64,
    seed: u64,
) -> anyhow::Result<Status> {
    if registry.is_empty() {
        bail!("{}", no_rulesets_hint(global));
    }
    let format = global.format;
    let mut status = Status::Success;
    let mut reports = Vec::new();
    for entry in registry.iter() {
        let d = entry.ruleset.description();
        if format == OutputFormat::Text {
            outln!("=== {} ({}) — {}", d.key(), entry.origin, d.summary);
        }
        let script = match scripts {
            Some(dir) => demo_script(dir, &d.id)?,
            None => None,
        };
        let lines = match &script {
            Some(path) => read_script(path)?,
            None => Vec::new(),
        };
        let (source, game, steps, refused) = match script {
            Some(path) if !lines.is_empty() => {
                let named = lines
                    .iter()
                    .map(|(_, p, _)| p.saturating_add(1))
                    .max()
                    .unwrap_or(0);
                let setup = crate::simulate::script_setup(&path, named, d, seed)?;
                if format == OutputFormat::Text {
                    outln!(
                        "script {}: {} actions, {} players, seed {}",
                        path.display(),
                        lines.len(),
                        setup.players,
                        setup.seed
                    );
                }
                let mut game = HostedGame::start(entry.ruleset.clone(), setup)?;
                let (steps, refused) = play_steps(&mut game, &path, &lines, false, format, false)?;
                (path.display().to_string(), game, steps, refused)
            }
            _ => {
                let players = d.min_players.max(2).min(d.max_players);
                if format == OutputFormat::Text {
                    if let Some(path) = &script {
                        outln!("script {} is empty", path.display());
                    }
                    outln!(
                        "random playout of up to {actions} legal actions, {players} players, seed {seed}"
                    );
                }
                let mut game = HostedGame::start(entry.ruleset.clone(), Setup::new(players, seed))?;
                let steps = random_playout(&mut game, actions, seed, format)?;
                ("random playout".to_owned(), game, steps, false)
            }
        };
        if refused {
            status = Status::Failure;
        }
        // The demo shows the table as a spectator sees it: public information only.
        let views = game.resources(None);
        game.check_plugin()?;
        if format == OutputFormat::Text {
            let table = game.table(None);
            let names = game.names_from(&views, &table);
            outln!(
                "--- the table after {} actions, as a spectator sees it",
                game.log().len()
            );
            out!("{}", render::table(&names, &table));
            outln!("\nResources");
            out!("{}", render::resources(&names, &views));
            outln!("outcome: {}\n", render::outcome(&game.outcome()));
        } else {
            reports.push(json!({
                "ruleset": d.key(),
                "source": source,
                "steps": steps,
                "resources": views,
                "outcome": game.outcome(),
                "state_hash": game.state_hash().to_string(),
            }));
        }
    }
    if format == OutputFormat::Json {
        print_json(&serde_json::Value::Array(reports))?;
    }
    Ok(status)
}

/// The arguments of `coffer simulate`.
#[derive(Debug, clap::Args)]
struct SimulateArgs {
    /// The ruleset: `ID` or `ID@VERSION`.
    #[arg(value_name = "ID")]
    pub ruleset: String,
    /// Games to play (1 to 100000000); game i is seeded with S + i.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub games: u64,
    /// Seed of the first game.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// Players per game (default: the ruleset's fewest; see --random-players).
    #[arg(long, short = 'p', value_name = "N")]
    pub players: Option<u16>,
    /// Draw each game's player count from its seed, within the ruleset's range, instead of one count.
    #[arg(long, conflicts_with = "players")]
    pub random_players: bool,
    /// JSON file with the ruleset's configuration.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Most actions per game (1 to 100000000).
    #[arg(long, default_value_t = 1_000, value_name = "M", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_actions: u64,
    /// Games run in parallel on T threads of this process (1 to 256).
    #[arg(long, default_value_t = 1, value_name = "T", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: u16,
    /// Share of steps that try an illegal or malformed action (0 to 0.9).
    #[arg(long, default_value_t = 0.1, value_name = "F")]
    pub illegal_share: f64,
    /// Clone, snapshot and replay checks every K actions (1 to 100000000; and at each game's end).
    #[arg(long, default_value_t = 64, value_name = "K", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub check_every: u64,
    /// Directory for the reproducing scripts of violations.
    #[arg(long, default_value = ".", value_name = "DIR")]
    pub repro_dir: PathBuf,
    /// Instead of simulating, re-run this script (JSON Lines, as `coffer play` reads) with every check
    /// after every line, for the game given by --players and --seed.
    #[arg(long, value_name = "FILE.jsonl")]
    pub check_script: Option<PathBuf>,
}

/// `coffer simulate`: prints the report (or the script check) and fails when a violation was found.
///
/// # Errors
/// An unknown ruleset, an unreadable configuration or script, or a script check without `--players`.
fn simulate(
    registry: &Registry,
    args: &SimulateArgs,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    use crate::simulate::{SimOptions, check_script, parse_script, progress_bar};
    let ruleset = std::sync::Arc::clone(&registry.get(&args.ruleset)?.ruleset);
    let config = read_config(args.config.as_deref())?;
    if let Some(path) = &args.check_script {
        let players = args
            .players
            .context("--check-script needs --players (and --seed) to start the scripted game")?;
        let text = crate::save::read_capped_text(path)
            .with_context(|| format!("cannot read script {}", path.display()))?;
        let script = parse_script(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let setup = Setup::new(players, args.seed).config(config);
        let found = check_script(&*ruleset, &setup, &script);
        if format == OutputFormat::Json {
            let v = found.as_ref().map(|v| {
                serde_json::json!({"line": v.line.map(|l| l + 1), "kind": v.kind.name(), "message": v.kind.to_string()})
            });
            outln!(
                "{}",
                serde_json::json!({"script": path, "lines": script.len(), "violation": v})
            );
        } else {
            match &found {
                None => outln!(
                    "{}: {} lines, every check passed",
                    path.display(),
                    script.len()
                ),
                Some(v) => match v.line {
                    Some(l) => outln!("{}:{}: {}", path.display(), l + 1, v.kind),
                    None => outln!("{}: before the first line: {}", path.display(), v.kind),
                },
            }
        }
        return Ok(if found.is_some() {
            Status::Failure
        } else {
            Status::Success
        });
    }
    if !(0.0..=0.9).contains(&args.illegal_share) {
        bail!("--illegal-share {} is outside 0 to 0.9", args.illegal_share);
    }
    std::fs::create_dir_all(&args.repro_dir)
        .with_context(|| format!("cannot create {}", args.repro_dir.display()))?;
    let options = SimOptions {
        games: args.games,
        seed: args.seed,
        // One player count unless asked otherwise: a run's figures then describe one kind of game.
        players: if args.random_players {
            None
        } else {
            Some(args.players.unwrap_or(ruleset.description().min_players))
        },
        config,
        max_actions: args.max_actions,
        threads: usize::from(args.threads.max(1)),
        illegal_share: args.illegal_share,
        check_every: args.check_every.max(1),
        repro_dir: args.repro_dir.clone(),
        ..SimOptions::default()
    };
    let report = crate::simulate::run(&ruleset, &options, &progress_bar(options.games));
    if format == OutputFormat::Json {
        outln!("{}", report.to_json());
    } else {
        outln!("{report}");
    }
    Ok(if report.is_clean() {
        Status::Success
    } else {
        Status::Failure
    })
}

//! The `coffer` command line (clap): the global plugin and output options, and every subcommand's
//! arguments.

use clap::{Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

pub(crate) const AFTER_HELP: &str = "\
Rulesets are plugin libraries (lib<name>.so, .dylib or .dll) or sandboxed WebAssembly modules (<name>.wasm)
loaded at runtime from the directories given by --plugin-dir and by COFFER_PLUGIN_PATH (separated by ':').
Build the bundled ones with `cargo build --release --workspace` and pass `--plugin-dir target/release`, or
as WebAssembly with `cargo xtask wasm` and pass `--plugin-dir target/wasm`. A native library runs with the
host's rights; a WebAssembly module runs sandboxed: a call past its deadline, a crash or a module out of
memory stops its own game only.

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
pub(crate) struct Cli {
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
    /// Seconds a call into a WebAssembly ruleset may take (0.01 to 86400; default 2); past it the call is
    /// stopped and its game with it, and every other game goes on.
    #[arg(long, value_name = "SECS", value_parser = parse_deadline, global = true)]
    pub wasm_deadline: Option<std::time::Duration>,
    /// Most memory one WebAssembly instance may use, in MiB (1 to 4096; default 256); past it the call
    /// traps and its game is stopped.
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=4096), global = true)]
    pub wasm_memory: Option<u64>,
    /// Most games one WebAssembly instance holds (default 512; 1: an instance per game, about a megabyte
    /// each). A trap rebuilds the other games of its instance from their checkpoints.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..), global = true)]
    pub wasm_games_per_instance: Option<u32>,
    /// Which form to load when a plugin directory holds a ruleset both as a native library and as a
    /// WebAssembly module: `native` or `wasm` (without it, such a ruleset is refused).
    #[arg(long, value_name = "FORM", value_parser = parse_form, global = true)]
    pub prefer: Option<coffer_host::Form>,
    /// More log output on stderr (-v: info, -vv: debug, -vvv: trace). RUST_LOG, when set, takes precedence.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
}

/// A form of runtime-loaded ruleset: `native` or `wasm`.
pub(crate) fn parse_form(text: &str) -> Result<coffer_host::Form, String> {
    text.parse()
}

/// A plugin call deadline in seconds, within the loader's bounds.
pub(crate) fn parse_deadline(text: &str) -> Result<std::time::Duration, String> {
    let (min, max) = (
        coffer_host::loader::MIN_DEADLINE,
        coffer_host::loader::MAX_DEADLINE,
    );
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
pub(crate) struct NewGame {
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
pub(crate) struct ScriptedGame {
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
pub(crate) enum Command {
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
    /// Measure a server's acknowledged actions per second and latency (runs `coffer-loadtest`;
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
    /// Bots against each other, in this process: each seat a bot (`random`, or `search`: flat Monte
    /// Carlo over the game's own playouts), games to their end; prints each seat's wins.
    ///
    /// The search bot plays out copies of the whole game: in a game with hidden information it sees
    /// what its seat could not. Bots draw only from a generator seeded by the game's seed, so a run
    /// replays exactly.
    Bots(BotsArgs),
}

/// The arguments of `coffer bots`.
#[derive(Debug, clap::Args)]
pub(crate) struct BotsArgs {
    /// The ruleset: `ID` or `ID@VERSION`.
    #[arg(value_name = "ID")]
    pub ruleset: String,
    /// One bot per seat, seat 0 first: `random` or `search`, comma-separated (e.g. search,random).
    #[arg(long, value_name = "BOT,...", value_delimiter = ',', required = true)]
    pub seats: Vec<String>,
    /// Players per game (default: one per bot of --seats; must match it when given).
    #[arg(long, short = 'p', value_name = "N")]
    pub players: Option<u16>,
    /// Games to play (1 to 1000000); game i is seeded with S + i.
    #[arg(long, default_value_t = 100, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub games: u64,
    /// Seed of the first game.
    #[arg(long, default_value_t = 0, value_name = "S")]
    pub seed: u64,
    /// The search bot's playouts per move (1 to 1000000): its budget for one decision.
    #[arg(long, default_value_t = coffer_host::bots::Bot::DEFAULT_PLAYOUTS, value_name = "P", value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub playouts: u32,
    /// Most actions per game, and per search playout (1 to 100000000).
    #[arg(long, default_value_t = 2_000, value_name = "M", value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    pub max_actions: u64,
    /// JSON file with the ruleset's configuration.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Watch one game (seed S) instead of counting wins: every action in words as a spectator reads
    /// it, then the outcome.
    #[arg(long, conflicts_with = "games")]
    pub watch: bool,
    /// With --watch: also write the game to this save file (for `coffer show`, `log`, `replay`).
    #[arg(short, long, value_name = "GAME", requires = "watch")]
    pub output: Option<PathBuf>,
    /// Replace the save file given by --output if it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
}

/// `coffer plugins ...`.
#[derive(Debug, Subcommand)]
#[non_exhaustive]
pub(crate) enum PluginsCommand {
    /// Probe every library of DIR in a child process of its own, one by one, with every check the loader
    /// makes (path policy, lock file, declaration, versions, a first call), and name each library that
    /// is refused or crashes. Exits 1 when any library would not load.
    Check {
        /// The plugin directory.
        #[arg(value_name = "DIR")]
        dir: PathBuf,
    },
}

/// The arguments of `coffer simulate`.
#[derive(Debug, clap::Args)]
pub(crate) struct SimulateArgs {
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

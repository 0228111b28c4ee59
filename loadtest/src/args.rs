//! The command line of `coffer loadtest`: its arguments, the transports and their checks.

use super::*;

pub(super) const AFTER_HELP: &str = "\
Examples:
  coffer --plugin-dir target/release loadtest
  coffer --plugin-dir target/release loadtest --games 100 --transport ws --seconds 10
  coffer --plugin-dir target/release loadtest --url http://127.0.0.1:8080 --games 10,100 --format json
  coffer --plugin-dir target/release loadtest --games 1000 --spectators 10000 --transport ws --idle-games 0";

/// The load generator's options.
#[derive(Debug, clap::Args)]
#[command(after_long_help = AFTER_HELP)]
pub struct Args {
    /// Measure the server at this address (`http://HOST:PORT`) instead of starting one (no memory
    /// figure); several, comma-separated, measure nodes of one cluster (`serve --cluster`): games are
    /// created on each in turn, and the seats of a game use the nodes `--seats` says.
    #[arg(long, value_name = "URL,...", value_delimiter = ',')]
    pub url: Vec<String>,
    /// With several `--url`s, which nodes a game's seats use: `apart`, each seat a different node
    /// (every action of a seat on another node than the game's is passed on to it, and followed by the
    /// node each seat watches from); `together`, every seat the node the game was created on, which
    /// owns it (as clients sent to their game's node).
    #[arg(long, value_enum, default_value = "apart", value_name = "HOW")]
    pub seats: Seats,
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
    /// Give the idle games of the memory figure a clock of MS per decision, nobody playing them: their
    /// clocks run out and the random bot plays on (never abandoning a seat); after the memory figure the generator waits
    /// --clock-seconds and reports the timeouts and how late they fired (the server's metrics).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u64).range(50..=604_800_000))]
    pub clock_ms: Option<u64>,
    /// With --clock-ms: seconds of timeouts measured after the idle games are made.
    #[arg(long, default_value_t = 30.0, value_name = "SECS")]
    pub clock_seconds: f64,
    /// Spectators watching each point's games (WebSockets without a token, spread over its newest
    /// games, each moving to another game when its game ends): the server's memory per socket and the
    /// time from an action's submission to its push to them. 0: none.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub spectators: usize,
    /// Seed of the load generator's choices (game seeds and actions).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub seed: u64,
    /// Threads of the load generator's own runtime.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub client_threads: usize,
}

/// Which nodes of a cluster a game's seats use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Seats {
    /// Each seat of a game a different node.
    Apart,
    /// Every seat of a game the node that created it.
    Together,
}

/// How actions are submitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// One WebSocket per seat: `act` messages on the legal actions and views the server pushes (`legal`
    /// only for a game's first move).
    Ws,
    /// `POST /api/games/{id}/actions?then=legal` over pooled keep-alive connections, on the legal
    /// actions the last answer carried (`GET /api/games/{id}/legal` when it carried none).
    Http,
}

impl Transport {
    pub(super) fn name(self) -> &'static str {
        match self {
            Transport::Ws => "ws",
            Transport::Http => "http",
        }
    }
}

pub(super) fn check_args(args: &Args) -> Result<(), String> {
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

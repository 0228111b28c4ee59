//! `coffer-loadtest`: the load generator of the Coffer game server (`coffer loadtest` runs it).

use std::process::ExitCode;

use clap::Parser;
use coffer_cli::Global;

const AFTER_HELP: &str = "\
Examples:
  coffer --plugin-dir target/release loadtest                          (1, 10, 100 and 1,000 games, both transports)
  coffer --plugin-dir target/release loadtest --games 100 --transport ws --seconds 5
  coffer loadtest --url http://127.0.0.1:8080 --games 100              (a running server)
  coffer --plugin-dir target/release loadtest --idle-games 10000 --clock-ms 10000";

/// Measures a Coffer game server.
#[derive(Debug, Parser)]
#[command(name = "coffer loadtest", bin_name = "coffer loadtest", version, about = "Measure a Coffer game server: acknowledged actions per second and latency, at several numbers of games", after_long_help = AFTER_HELP)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(flatten)]
    args: coffer_loadtest::Args,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    coffer_loadtest::run(&cli.global, cli.args)
}

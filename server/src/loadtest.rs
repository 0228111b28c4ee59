//! `coffer loadtest`: placeholder, replaced by the load generator.

/// The load generator's options.
#[derive(Debug, clap::Args)]
pub struct Args {}

/// Runs the load generator.
pub fn run(_global: &coffer_host::cli::Global, _args: Args) -> std::process::ExitCode {
    std::process::ExitCode::FAILURE
}

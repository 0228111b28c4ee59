//! The `coffer` process: parsing the command line, starting `coffer-server` for `serve` and
//! `coffer-loadtest` for `loadtest`, logging, and handing each subcommand to its function.

use crate::args::{Cli, Command, Global, OutputFormat, PluginsCommand};
use crate::demo::demo;
use crate::games::{act, new};
use crate::output::{Status, is_broken_pipe, print_json};
use crate::play::{legal, log, play, replay, show};
use crate::plugins::{describe, load_registry_counting, plugins_check, rulesets};
use crate::simulate::simulate;
use anyhow::bail;
use clap::Parser;
use coffer_host::render::error_chain as chain;
use serde_json::json;
use std::process::ExitCode;

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
        let code = coffer_host::loader::probe_child_main().unwrap_or(2);
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    match &cli.command {
        Command::Serve { args } => {
            return companion(&cli.global, Companion::Serve, args);
        }
        Command::Loadtest { args } => return companion(&cli.global, Companion::Loadtest, args),
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

/// The program `program` (its name without the platform's suffix) beside this one, where the workspace's
/// build puts every program; the error says why not, in words.
///
/// # Errors
/// This program's own path is unknown, or the program is not built.
pub fn program_beside(program: &str) -> Result<std::path::PathBuf, String> {
    let name = format!("{program}{}", std::env::consts::EXE_SUFFIX);
    let exe = std::env::current_exe().map_err(|e| {
        format!("cannot find this program's own path to find {name} beside it: {e}")
    })?;
    let path = exe.with_file_name(&name);
    if path.is_file() {
        Ok(path)
    } else {
        Err(format!(
            "the program {} is not built: build it with `cargo build --release --workspace`",
            path.display()
        ))
    }
}

/// A command `coffer` hands to a program beside it.
#[derive(Clone, Copy)]
pub(crate) enum Companion {
    /// `coffer serve`: `coffer-server serve`.
    Serve,
    /// `coffer loadtest`: `coffer-loadtest`.
    Loadtest,
}

impl Companion {
    /// The command as the user types it after `coffer`.
    fn command(self) -> &'static str {
        match self {
            Companion::Serve => "serve",
            Companion::Loadtest => "loadtest",
        }
    }

    /// The program that runs it, and the subcommand it is given there, if any.
    fn program(self) -> (&'static str, Option<&'static str>) {
        match self {
            Companion::Serve => ("coffer-server", Some("serve")),
            Companion::Loadtest => ("coffer-loadtest", None),
        }
    }
}

/// `coffer serve` and `coffer loadtest`: the server program `coffer-server` or the load generator
/// `coffer-loadtest`, next to this one, given the same plugin options. On Unix it replaces this process,
/// so signals (SIGTERM for a graceful stop) reach the program itself.
pub(crate) fn companion(
    global: &Global,
    which: Companion,
    args: &[std::ffi::OsString],
) -> ExitCode {
    let (program, subcommand) = which.program();
    let named = which.command();
    let program = match program_beside(program) {
        Ok(program) => program,
        Err(why) => {
            eprintln!("error: `coffer {named}`: {why}");
            return ExitCode::from(2);
        }
    };
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
    child.args(subcommand).args(args);
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

pub(crate) fn init_tracing(verbose: u8) {
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
pub(crate) fn run(cli: &Cli) -> anyhow::Result<Status> {
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
                "`coffer serve` and `coffer loadtest` run the programs coffer-server and coffer-loadtest, which only the `coffer` binary starts"
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
        Command::Bots(args) => crate::simulate::bots(&registry, args, format),
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

//! `coffer simulate`: the simulation engine's command-line front, with its progress bar.

use crate::args::{OutputFormat, SimulateArgs};
use crate::games::read_config;
use crate::output::Status;
use anyhow::{Context as _, bail};
use coffer_core::Setup;
use coffer_host::registry::Registry;
use std::io::Write as _;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal as _;

/// `coffer simulate`: prints the report (or the script check) and fails when a violation was found.
///
/// # Errors
/// An unknown ruleset, an unreadable configuration or script, or a script check without `--players`.
pub(crate) fn simulate(
    registry: &Registry,
    args: &SimulateArgs,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    use coffer_host::simulate::{SimOptions, check_script, parse_script};
    let ruleset = std::sync::Arc::clone(&registry.get(&args.ruleset)?.ruleset);
    let config = read_config(args.config.as_deref())?;
    if let Some(path) = &args.check_script {
        let players = args
            .players
            .context("--check-script needs --players (and --seed) to start the scripted game")?;
        let text = coffer_host::save::read_capped_text(path)
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
    let progress = progress_bar(options.games);
    let report = coffer_host::simulate::run(&ruleset, &options, &|| progress.inc(1));
    progress.finish_and_clear();
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

/// A progress bar counting games, drawn on standard error only when it is a terminal.
pub fn progress_bar(games: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(games), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{bar:40} {pos}/{len} games {msg} [{elapsed_precise}, eta {eta}]",
    ) {
        bar.set_style(style);
    }
    bar
}

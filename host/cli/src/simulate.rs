//! `coffer simulate`: the simulation engine's command-line front, with its progress bar; `coffer bots`.

use crate::args::{BotsArgs, OutputFormat, SimulateArgs};
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

/// `coffer bots --watch`: one game of bots, each action in words as a spectator reads it (or the log as
/// JSON), then the outcome; with `--output`, saved.
fn watch(
    ruleset: std::sync::Arc<dyn coffer_core::DynRuleset>,
    m: &coffer_host::bots::Match,
    args: &BotsArgs,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    use coffer_host::bots::play_one;
    use coffer_host::{HostedGame, render};
    if let Some(output) = &args.output {
        coffer_host::save::check_new(output, args.force)?;
    }
    let mut actions: Vec<(u16, String)> = Vec::new();
    play_one(&*ruleset, m, 0, |seat, _, action| {
        if let Some(action) = action {
            actions.push((seat.0, action));
        }
    })?;
    // The game again, as a host plays it: its log, its words, its save file.
    let players = u16::try_from(m.seats.len()).unwrap_or(u16::MAX);
    let setup = Setup::new(players, m.seed).config(m.config.clone());
    let mut hosted = HostedGame::start(ruleset, setup)?;
    let bots: Vec<&str> = m.seats.iter().map(coffer_host::bots::Bot::name).collect();
    if format == OutputFormat::Text {
        outln!(
            "{} ({} players, seed {}): {}",
            hosted.key(),
            players,
            m.seed,
            bots.iter()
                .enumerate()
                .map(|(s, b)| format!("p{s} {b}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut log = Vec::new();
    for (seat, action) in &actions {
        hosted
            .apply_json(*seat, action)
            .with_context(|| format!("replaying p{seat}'s {action}"))?;
        let events = hosted.events_for(None);
        let names = hosted.names(None);
        if format == OutputFormat::Text {
            out!("{}", render::action(&names, *seat, action, &events, None));
        } else {
            log.push(serde_json::json!({
                "player": seat,
                "action": serde_json::from_str::<serde_json::Value>(action)?,
                "heading": render::action_heading(&names, *seat, action, &events),
            }));
        }
    }
    hosted.check_plugin()?;
    if let Some(output) = &args.output {
        coffer_host::save::create(&hosted, output, args.force)?;
    }
    if format == OutputFormat::Json {
        outln!(
            "{}",
            serde_json::json!({
                "ruleset": hosted.key(),
                "seed": m.seed,
                "seats": bots,
                "actions": log,
                "outcome": hosted.outcome(),
                "state_hash": hosted.state_hash().to_string(),
            })
        );
    } else {
        outln!("outcome: {}", render::outcome(&hosted.outcome()));
        if let Some(output) = &args.output {
            outln!("saved to {}", output.display());
        }
    }
    Ok(Status::Success)
}

/// `coffer bots`: plays the seats' bots against each other and prints each seat's wins.
///
/// # Errors
/// An unknown ruleset or bot, a player count that is not the number of seats or not the ruleset's, an
/// unreadable configuration, or a game the ruleset refuses to play.
pub(crate) fn bots(
    registry: &Registry,
    args: &BotsArgs,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    use coffer_host::bots::{Bot, Match, play_bots};
    let ruleset = std::sync::Arc::clone(&registry.get(&args.ruleset)?.ruleset);
    let seats = args
        .seats
        .iter()
        .map(|name| Bot::named(name, args.playouts))
        .collect::<Result<Vec<_>, _>>()?;
    let players = u16::try_from(seats.len()).unwrap_or(u16::MAX);
    if let Some(p) = args.players
        && p != players
    {
        bail!(
            "--players {p} but --seats names {players} bots: name one bot per seat (e.g. --seats {})",
            vec!["random"; usize::from(p.min(8))].join(",")
        );
    }
    let d = ruleset.description();
    if players < d.min_players || players > d.max_players {
        bail!(
            "{} plays with {} to {} players; --seats names {players}",
            d.id,
            d.min_players,
            d.max_players
        );
    }
    let m = Match {
        seats: seats.clone(),
        games: args.games,
        seed: args.seed,
        max_actions: args.max_actions,
        config: read_config(args.config.as_deref())?,
    };
    if args.watch {
        return watch(ruleset, &m, args, format);
    }
    let progress = progress_bar(args.games);
    let started = std::time::Instant::now();
    let tally = play_bots(&*ruleset, &m, |_| progress.inc(1))?;
    progress.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    if format == OutputFormat::Json {
        let mut v = serde_json::to_value(&tally)?;
        v["ruleset"] = serde_json::json!(d.id);
        v["seats"] = serde_json::json!(seats.iter().map(Bot::name).collect::<Vec<_>>());
        v["playouts_per_move"] = serde_json::json!(args.playouts);
        v["seed"] = serde_json::json!(args.seed);
        v["wall_seconds"] = serde_json::json!(seconds);
        outln!("{v}");
        return Ok(Status::Success);
    }
    outln!(
        "{} games of {} ({} players, seeds {} to {}), {:.1} s:",
        tally.games,
        d.id,
        players,
        args.seed,
        args.seed.wrapping_add(args.games - 1),
        seconds
    );
    for (s, bot) in seats.iter().enumerate() {
        let wins = tally.wins[s];
        let share = 100.0 * wins as f64 / tally.games.max(1) as f64;
        let mut line = format!("  p{s} {bot}: {wins} wins ({share:.1}%)");
        if let Bot::Search { .. } = bot {
            let decisions = tally.decisions[s].max(1);
            line.push_str(&format!(
                ", {:.2} ms a move on average (longest {:.1} ms, at most {} playouts)",
                1e3 * tally.seconds[s] / decisions as f64,
                tally.max_decision_ms[s],
                tally.max_playouts[s]
            ));
        }
        outln!("{line}");
    }
    if tally.draws > 0 || tally.unfinished > 0 {
        outln!(
            "  {} draws, {} games cut at {} actions",
            tally.draws,
            tally.unfinished,
            args.max_actions
        );
    }
    Ok(Status::Success)
}

//! `coffer demo`: a scripted or random game of every loaded ruleset, drawn on the terminal.

use crate::args::{Global, OutputFormat};
use crate::output::{Status, print_json};
use crate::play::{play_steps, read_script};
use crate::plugins::no_rulesets_hint;
use anyhow::{Context as _, bail};
use coffer_core::{GameRng, Owner, Setup};
use coffer_host::host::HostedGame;
use coffer_host::registry::Registry;
use coffer_host::render::{self};
use coffer_host::simulate::PlayoutError;
use serde_json::json;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The first script (by name) in `DIR/<id>/examples/*.jsonl`.
pub(crate) fn demo_script(scripts: &Path, id: &str) -> anyhow::Result<Option<PathBuf>> {
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
pub(crate) fn random_playout(
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
        let names = coffer_host::host::names_for(
            ruleset.description(),
            &game.resources(seat),
            &game.table(seat),
        );
        if format == OutputFormat::Text {
            let action = logged.action.to_string();
            outln!(
                "{}",
                render::action_heading(&names, logged.player, &action, &events)
            );
        }
        steps.push(json!({
            "player": logged.player,
            "action": logged.action,
            "events": render::events_json(&names, &events, seat),
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

pub(crate) fn demo(
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
                let setup = coffer_host::simulate::script_setup(&path, named, d, seed)?;
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

//! Reading a saved game and playing scripts into it: `play`, `show`, `log`, `replay` and `legal`.

use crate::args::{OutputFormat, ScriptedGame};
use crate::games::{load, start_scripted, step_json, summary_line};
use crate::output::{Status, print_json};
use anyhow::{Context as _, bail};
use coffer_core::Owner;
use coffer_host::host::HostedGame;
use coffer_host::registry::Registry;
use coffer_host::render::{self, error_chain as chain};
use coffer_host::save::SaveFile;
use serde::Deserialize;
use serde_json::json;
use std::io::Write as _;
use std::path::Path;

/// A line of a `coffer play` script.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScriptLine {
    pub(crate) player: u16,
    pub(crate) action: serde_json::Value,
}

/// Reads a script: `(line number, player, action)` for every non-blank line.
pub(crate) fn read_script(path: &Path) -> anyhow::Result<Vec<(usize, u16, serde_json::Value)>> {
    let text = coffer_host::save::read_capped_text(path)
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
pub(crate) fn play_steps(
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
                            render::action(&names, *player, &action.to_string(), &events, seat)
                        );
                    } else {
                        outln!(
                            "{}",
                            render::action_heading(&names, *player, &action.to_string(), &events)
                        );
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

pub(crate) fn play(
    registry: &Registry,
    game: &ScriptedGame,
    script: &Path,
    output: Option<(&Path, bool)>,
    keep_going: bool,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    // Refused before any work: an existing save is replaced only with --force.
    if let Some((output, force)) = output {
        coffer_host::save::check_new(output, force)?;
    }
    let steps = read_script(script)?;
    let mut hosted = start_scripted(registry, game, script)?;
    let (json_steps, refused) = play_steps(&mut hosted, script, &steps, keep_going, format, true)?;
    hosted.check_plugin()?;
    if let Some((output, force)) = output {
        coffer_host::save::create(&hosted, output, force)?;
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

pub(crate) fn seat_of(game: &HostedGame, player: Option<u16>) -> anyhow::Result<Option<Owner>> {
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

pub(crate) fn show(
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

pub(crate) fn log(
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
        let action = logged.action.to_string();
        game.apply_json(logged.player, &action)
            .with_context(|| format!("action {} of the save no longer applies", n + 1))?;
        let events = game.events_for(seat);
        let names = game.names(seat);
        game.check_plugin()?;
        if format == OutputFormat::Json {
            entries.push(json!({
                "number": n + 1,
                "player": logged.player,
                "action": render::action_heading(&names, logged.player, &action, &events),
                "events": render::events_json(&names, &events, seat),
            }));
        } else {
            out!(
                "{}. {}",
                n + 1,
                render::action(&names, logged.player, &action, &events, seat)
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

pub(crate) fn replay(
    registry: &Registry,
    path: &Path,
    format: OutputFormat,
) -> anyhow::Result<Status> {
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

pub(crate) fn legal(
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

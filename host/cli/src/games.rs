//! Starting, loading and acting on a saved game: `new` and `act`, and what they share with the other
//! commands (configuration, a game's summary, one action's result).

use crate::args::{NewGame, OutputFormat, ScriptedGame};
use crate::output::{Status, is_broken_pipe, print_json};
use anyhow::{Context as _, bail};
use coffer_core::{Owner, Setup};
use coffer_host::host::HostedGame;
use coffer_host::registry::Registry;
use coffer_host::render::{self, error_chain as chain};
use serde_json::json;
use std::io::Write as _;
use std::path::Path;

/// The configuration in a file: a JSON object of options (or `null`), at most
/// [`MAX_CONFIG_BYTES`](coffer_host::save::MAX_CONFIG_BYTES) of text.
pub(crate) fn read_config(path: Option<&Path>) -> anyhow::Result<serde_json::Value> {
    let Some(path) = path else {
        return Ok(serde_json::Value::Null);
    };
    let text = coffer_host::save::read_capped_text(path)
        .with_context(|| format!("cannot read config file {}", path.display()))?;
    let bad = || format!("config file {} is not a configuration", path.display());
    coffer_host::save::check_config_text(text.trim()).with_context(bad)?;
    let config = serde_json::from_str(&text)
        .with_context(|| format!("config file {} is not valid JSON", path.display()))?;
    coffer_host::save::check_config(&config).with_context(bad)?;
    Ok(config)
}

pub(crate) fn start(registry: &Registry, game: &NewGame) -> anyhow::Result<HostedGame> {
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
pub(crate) fn start_scripted(
    registry: &Registry,
    game: &ScriptedGame,
    script: &Path,
) -> anyhow::Result<HostedGame> {
    let entry = registry.get(&game.ruleset)?;
    let sidecar = script.with_extension("setup.json");
    let from_file = if sidecar.is_file() {
        Some(coffer_host::simulate::script_setup(
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

pub(crate) fn load(registry: &Registry, path: &Path) -> anyhow::Result<HostedGame> {
    coffer_host::save::load(path, registry)
        .with_context(|| format!("cannot load game {}", path.display()))
}

pub(crate) fn summary_line(game: &HostedGame) -> String {
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

pub(crate) fn new(
    registry: &Registry,
    game: &NewGame,
    output: &Path,
    force: bool,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    coffer_host::save::check_new(output, force)?;
    let hosted = start(registry, game)?;
    hosted.check_plugin()?;
    coffer_host::save::create(&hosted, output, force)?;
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

pub(crate) fn act(
    registry: &Registry,
    path: &Path,
    player: u16,
    action: &str,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    // Locked read, apply and write: two `act`s on one save never lose an action. A refused action writes
    // nothing.
    // What a seat may take back is in the game, not in its snapshot: an undo replays the log.
    let update = if coffer_core::HostAction::of(action) == Some(coffer_core::HostAction::Undo) {
        coffer_host::save::update_replaying
    } else {
        coffer_host::save::update
    };
    let applied = update(path, registry, |game: &mut coffer_host::HostedGame| {
        game.apply_json(player, action).map(|_| ())
    })
    .map_err(|err| {
        let context = match &err {
            coffer_host::save::SaveError::TooLargeToWrite { .. }
            | coffer_host::save::SaveError::Config(_) => {
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
                    coffer_host::host::HostError::Action { refusal, .. } => {
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
/// The JSON of the action `game` applied last (its log's last entry).
fn last_action(game: &HostedGame) -> String {
    game.log()
        .last()
        .map(|logged| logged.action.to_string())
        .unwrap_or_default()
}

pub(crate) fn show_action(
    game: &mut HostedGame,
    player: u16,
    format: OutputFormat,
) -> anyhow::Result<()> {
    let seat = Some(Owner(player));
    let events = game.events_for(seat);
    let names = game.names(seat);
    let outcome = game.outcome();
    let action = last_action(game);
    game.check_plugin()?;
    if format == OutputFormat::Json {
        print_json(&json!({
            "action": render::action_heading(&names, player, &action, &events),
            "events": render::events_json(&names, &events, seat),
            "outcome": outcome,
            "state_hash": game.state_hash().to_string(),
        }))?;
    } else {
        out!("{}", render::action(&names, player, &action, &events, seat));
        outln!("outcome: {}", render::outcome(&outcome));
    }
    Ok(())
}

/// One step of a played script, for `--format json`: its events as the acting seat reads them, or why
/// it was refused.
pub(crate) fn step_json(
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
            let action = last_action(game);
            json!({
                "line": line,
                "player": player,
                "action": render::action_heading(&names, player, &action, &events),
                "events": render::events_json(&names, &events, seat),
            })
        }
        Err(error) => json!({"line": line, "player": player, "error": error}),
    }
}

//! Scripts: checking one against a ruleset, shrinking a failing game to one, writing and reading them,
//! and the setup a script's sidecar file names.

use crate::save::config::{ConfigError, check_config};
use crate::save::error::SaveError;
use crate::save::read::read_capped_text;
use crate::simulate::attempt::listed_json;
use crate::simulate::deep_check::{Replica, deep_check};
use crate::simulate::report::{
    ScriptLine, ScriptViolation, Step, ViolationKind, plugin_panic, setup_failed,
};
use coffer_core::abi::panic_message;
use coffer_core::{DynRuleset, Outcome, Owner, Setup};
use serde::Deserialize;
use serde_json::Value;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

/// Re-runs a `coffer play` script with every check after every line: refused lines must leave the hash
/// unchanged (and are otherwise skipped, so that a shrunk script stays meaningful), accepted lines must be
/// listed legal actions, invariants must hold, and clone, snapshots and replay must agree.
///
/// Returns the first violation, or `None` if the script shows none.
pub fn check_script(
    ruleset: &dyn DynRuleset,
    setup: &Setup,
    script: &[ScriptLine],
) -> Option<ScriptViolation> {
    let mut last = None;
    let result = catch_unwind(AssertUnwindSafe(|| {
        check_lines(ruleset, setup, script, &mut last)
    }));
    let kind = match result {
        Ok(Ok(())) => return None,
        Ok(Err(kind)) => kind,
        Err(panic) => ViolationKind::Panicked(panic_message(&*panic)),
    };
    Some(ScriptViolation { line: last, kind })
}

pub(crate) fn check_lines(
    ruleset: &dyn DynRuleset,
    setup: &Setup,
    script: &[ScriptLine],
    last: &mut Option<usize>,
) -> Result<(), ViolationKind> {
    let mut game = ruleset
        .new_game(setup)
        .map_err(|e| setup_failed(setup, e))?;
    let mut replica = Replica::new(ruleset, setup)?;
    let mut accepted: Vec<Step> = Vec::new();
    game.check_invariants()
        .map_err(|v| ViolationKind::Invariant(v.to_string()))?;
    deep_check(ruleset, &mut *game, &mut replica, &accepted)?;
    for (i, line) in script.iter().enumerate() {
        *last = Some(i);
        let player = Owner(line.player);
        let text = line.action_text();
        let listed = listed_json(&mut *game, player);
        if player.0 >= game.players() && !listed.is_empty() {
            return Err(ViolationKind::GhostHasActions {
                player,
                count: listed.len(),
            });
        }
        let before = game.state_hash();
        match game.apply_json(player, &text) {
            Ok(()) => {
                if !listed.contains(&line.action) {
                    return Err(ViolationKind::UnlistedAccepted {
                        player,
                        action: text,
                    });
                }
                accepted.push(Step {
                    player: line.player,
                    text,
                });
                game.check_invariants()
                    .map_err(|v| ViolationKind::Invariant(v.to_string()))?;
                deep_check(ruleset, &mut *game, &mut replica, &accepted)?;
            }
            Err(e) => {
                if let Some(v) = plugin_panic(&e) {
                    return Err(v);
                }
                let after = game.state_hash();
                if after != before {
                    return Err(ViolationKind::RefusalChangedState {
                        action: text,
                        error: e.to_string(),
                        before,
                        after,
                    });
                }
                if listed.contains(&line.action) {
                    return Err(ViolationKind::ListedRefused {
                        player,
                        action: text,
                        error: e.to_string(),
                    });
                }
            }
        }
    }
    let outcome = game.outcome();
    if outcome != Outcome::Ongoing {
        for p in 0..game.players() {
            let count = game.legal_actions(Owner(p));
            if count > 0 {
                return Err(ViolationKind::FinishedWithLegalActions {
                    outcome,
                    player: Owner(p),
                    count,
                });
            }
        }
    }
    Ok(())
}

/// Turns a game's log into script lines (text that is not JSON becomes a JSON string).
pub(crate) fn to_script(log: &[Step]) -> Vec<ScriptLine> {
    log.iter()
        .map(|step| ScriptLine {
            player: step.player,
            action: serde_json::from_str(&step.text).unwrap_or(Value::String(step.text.clone())),
        })
        .collect()
}

/// Shrinks `script` by delta debugging (ddmin): removes chunks of lines while [`check_script`] still finds a
/// violation of the same kind, spending at most `budget` runs. Returns the smallest script found.
pub fn shrink(
    ruleset: &dyn DynRuleset,
    setup: &Setup,
    script: Vec<ScriptLine>,
    kind: &ViolationKind,
    budget: usize,
) -> Vec<ScriptLine> {
    let same = |candidate: &[ScriptLine]| {
        check_script(ruleset, setup, candidate).is_some_and(|v| v.kind.name() == kind.name())
    };
    let mut current = script;
    let mut runs = 0usize;
    let mut chunks = 2usize;
    while current.len() >= 2 && runs < budget {
        let size = current.len().div_ceil(chunks);
        let mut reduced = false;
        let mut start = 0;
        while start < current.len() && runs < budget {
            let end = (start + size).min(current.len());
            let candidate: Vec<ScriptLine> = current[..start]
                .iter()
                .chain(&current[end..])
                .cloned()
                .collect();
            runs += 1;
            if same(&candidate) {
                current = candidate;
                chunks = chunks.saturating_sub(1).max(2);
                reduced = true;
                break;
            }
            start = end;
        }
        if !reduced {
            if chunks >= current.len() {
                break;
            }
            chunks = (chunks * 2).min(current.len());
        }
    }
    if current.len() == 1 && runs < budget && same(&[]) {
        current.clear();
    }
    current
}

/// Why the setup file beside a script could not be used ([`script_setup`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptSetupError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Unreadable {
        /// The setup file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<SaveError>,
    },
    /// The file is not `{"players": N, "seed": S, "config": {...}}`.
    #[error("{} is not a valid setup file", path.display())]
    Invalid {
        /// The setup file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The file's `config` is not a configuration (an object of options, at most 1 MiB).
    #[error("{} holds no valid configuration", path.display())]
    Config {
        /// The setup file.
        path: PathBuf,
        /// Why.
        #[source]
        source: ConfigError,
    },
}

/// How a script's game is set up: `<script>.setup.json` beside it when present
/// (`{"players": N, "seed": S, "config": {...}}`, each optional), otherwise `named` players (one more than
/// the highest player the script names, at least the ruleset's minimum) and `seed`.
///
/// # Errors
/// [`ScriptSetupError`]: a setup file that cannot be read or holds anything else.
pub fn script_setup(
    script: &Path,
    named: u16,
    d: &coffer_core::Description,
    seed: u64,
) -> Result<Setup, ScriptSetupError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct SetupFile {
        players: Option<u16>,
        seed: Option<u64>,
        #[serde(default)]
        config: serde_json::Value,
    }
    let mut setup = Setup::new(named.max(d.min_players), seed);
    let sidecar = script.with_extension("setup.json");
    if sidecar.is_file() {
        let text = read_capped_text(&sidecar).map_err(|source| ScriptSetupError::Unreadable {
            path: sidecar.clone(),
            source: Box::new(source),
        })?;
        let file: SetupFile =
            serde_json::from_str(&text).map_err(|source| ScriptSetupError::Invalid {
                path: sidecar.clone(),
                source,
            })?;
        check_config(&file.config).map_err(|source| ScriptSetupError::Config {
            path: sidecar.clone(),
            source,
        })?;
        setup.players = file.players.unwrap_or(setup.players);
        setup.seed = file.seed.unwrap_or(setup.seed);
        setup.config = file.config;
    }
    Ok(setup)
}

/// Writes script lines as JSON Lines.
///
/// # Errors
/// The I/O error, with the path.
pub fn write_script(path: &Path, script: &[ScriptLine]) -> std::io::Result<()> {
    let mut text = String::new();
    for line in script {
        text.push_str(&serde_json::to_string(line).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    std::fs::write(path, text)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Reads a script written as JSON Lines; blank lines are skipped.
///
/// # Errors
/// A message naming the line that could not be read.
pub fn parse_script(text: &str) -> Result<Vec<ScriptLine>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}: {l}", i + 1)))
        .collect()
}

//! The attempts a checked game makes besides legal actions: extreme, malformed and mutated actions that
//! must be refused and leave the game unchanged.

use crate::simulate::report::{Step, ViolationKind, plugin_panic};
use coffer_core::{DynGame, GameRng, Owner};
use serde_json::Value;

pub(crate) enum Attempted {
    Refused,
    Accepted,
}

/// Extreme values that replace a number of a legal action.
pub(crate) const EXTREMES: [&str; 12] = [
    "-1",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "65536",
    "256",
    "1e300",
    "0.5",
    "-0",
    "9007199254740993",
    "0",
];

/// Malformed texts.
pub(crate) const GARBAGE: [&str; 9] = [
    "",
    "{",
    "[1,2",
    "null",
    "\"\"",
    "{}",
    "{\"type\":}",
    "not json",
    "[]",
];

/// Tries one illegal or malformed action for or near `player` (who has legal action `index`).
pub(crate) fn attempt(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    player: Owner,
    index: usize,
    log: &mut Vec<Step>,
) -> Result<Attempted, ViolationKind> {
    let players = game.players();
    let legal_json = game
        .legal_action_json(index)
        .unwrap_or_else(|| "null".to_string());
    let count = game.legal_actions(player);
    let (actor, text): (Owner, String) = match rng.below(6) {
        0 => {
            // Malformed: a truncated legal action, or garbage.
            let text = if rng.below(2) == 0 && legal_json.len() > 1 {
                let mut cut = rng.below(legal_json.len() as u64 - 1) as usize + 1;
                while !legal_json.is_char_boundary(cut) {
                    cut -= 1;
                }
                legal_json[..cut].to_string()
            } else {
                GARBAGE[rng.below(GARBAGE.len() as u64) as usize].to_string()
            };
            (player, text)
        }
        1 => (player, unknown_type(&legal_json)),
        2 if players > 1 => {
            // A legal action of `player`, by someone else.
            let other = (player.0 + 1 + rng.below(u64::from(players) - 1) as u16) % players;
            (Owner(other), legal_json)
        }
        3 => {
            // A player who is not in the game.
            let ghost = match rng.below(3) {
                0 => players,
                1 => players.saturating_add(1 + rng.below(5) as u16),
                _ => u16::MAX,
            };
            let listed = game.legal_actions(Owner(ghost));
            if listed > 0 {
                return Err(ViolationKind::GhostHasActions {
                    player: Owner(ghost),
                    count: listed,
                });
            }
            (Owner(ghost), legal_json)
        }
        4 => match mutate_number(&legal_json, rng) {
            Some(text) => (player, text),
            None => (player, unknown_type(&legal_json)),
        },
        _ => {
            // A legal-action index past the end of the list.
            let bad = match rng.below(3) {
                0 => count,
                1 => count + 1 + rng.below(10) as usize,
                _ => usize::MAX,
            };
            let before = game.state_hash();
            return match game.apply_legal(player, bad) {
                Ok(()) => Err(ViolationKind::UnlistedAccepted {
                    player,
                    action: format!("legal-action index {bad} of {count}"),
                }),
                Err(e) => {
                    if let Some(v) = plugin_panic(&e) {
                        return Err(v);
                    }
                    let after = game.state_hash();
                    if after != before {
                        return Err(ViolationKind::RefusalChangedState {
                            action: format!("legal-action index {bad} of {count}"),
                            error: e.to_string(),
                            before,
                            after,
                        });
                    }
                    Ok(Attempted::Refused)
                }
            };
        }
    };
    let listed = listed_json(game, actor);
    let before = game.state_hash();
    let result = game.apply_json(actor, &text);
    match result {
        Ok(()) => {
            log.push(Step {
                player: actor.0,
                text: text.clone(),
            });
            let accepted: Option<Value> = serde_json::from_str(&text).ok();
            if accepted.is_some_and(|a| listed.contains(&a)) {
                Ok(Attempted::Accepted)
            } else {
                Err(ViolationKind::UnlistedAccepted {
                    player: actor,
                    action: text,
                })
            }
        }
        Err(e) => {
            if let Some(v) = plugin_panic(&e) {
                log.push(Step {
                    player: actor.0,
                    text,
                });
                return Err(v);
            }
            let after = game.state_hash();
            if after != before {
                log.push(Step {
                    player: actor.0,
                    text: text.clone(),
                });
                return Err(ViolationKind::RefusalChangedState {
                    action: text,
                    error: e.to_string(),
                    before,
                    after,
                });
            }
            let as_value: Option<Value> = serde_json::from_str(&text).ok();
            if as_value.is_some_and(|a| listed.contains(&a)) {
                log.push(Step {
                    player: actor.0,
                    text: text.clone(),
                });
                return Err(ViolationKind::ListedRefused {
                    player: actor,
                    action: text,
                    error: e.to_string(),
                });
            }
            Ok(Attempted::Refused)
        }
    }
}

/// Every legal action of `player`, as JSON values.
pub(crate) fn listed_json(game: &mut dyn DynGame, player: Owner) -> Vec<Value> {
    let n = game.legal_actions(player);
    (0..n)
        .filter_map(|i| game.legal_action_json(i))
        .filter_map(|j| serde_json::from_str(&j).ok())
        .collect()
}

/// The action with its type replaced by one no ruleset has.
pub(crate) fn unknown_type(json: &str) -> String {
    const UNKNOWN: &str = "no_such_action_in_any_ruleset";
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(mut map)) if map.contains_key("type") => {
            map.insert("type".into(), Value::String(UNKNOWN.into()));
            Value::Object(map).to_string()
        }
        Ok(Value::Object(mut map)) if map.len() == 1 => {
            // Externally tagged enum: {"variant": {...}}.
            let inner = map
                .values_mut()
                .next()
                .map(std::mem::take)
                .unwrap_or(Value::Null);
            let mut out = serde_json::Map::new();
            out.insert(UNKNOWN.into(), inner);
            Value::Object(out).to_string()
        }
        _ => format!("{{\"type\":\"{UNKNOWN}\"}}"),
    }
}

/// The action with one of its numbers replaced by an extreme value; `None` if it has no number.
pub(crate) fn mutate_number(json: &str, rng: &mut GameRng) -> Option<String> {
    let mut value: Value = serde_json::from_str(json).ok()?;
    let mut numbers = 0usize;
    count_numbers(&value, &mut numbers);
    if numbers == 0 {
        return None;
    }
    let target = rng.below(numbers as u64) as usize;
    let extreme = EXTREMES[rng.below(EXTREMES.len() as u64) as usize];
    let replacement: Value = serde_json::from_str(extreme).ok()?;
    let mut seen = 0usize;
    replace_number(&mut value, target, &mut seen, &replacement);
    Some(value.to_string())
}

pub(crate) fn count_numbers(value: &Value, n: &mut usize) {
    match value {
        Value::Number(_) => *n += 1,
        Value::Array(items) => items.iter().for_each(|v| count_numbers(v, n)),
        Value::Object(map) => map.values().for_each(|v| count_numbers(v, n)),
        _ => {}
    }
}

pub(crate) fn replace_number(value: &mut Value, target: usize, seen: &mut usize, with: &Value) {
    match value {
        Value::Number(_) => {
            if *seen == target {
                *value = with.clone();
            }
            *seen += 1;
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| replace_number(v, target, seen, with)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| replace_number(v, target, seen, with)),
        _ => {}
    }
}

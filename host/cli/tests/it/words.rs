//! Reviewed snapshots of what `coffer` prints for each ruleset, in the game's words: `show` as a spectator
//! and from a seat, `log` from a seat, `act`, and a refusal of each kind. The game is each ruleset's example
//! script played halfway, saved, then read back by the real command with the plugins loaded at runtime.
//!
//! A change to any of these texts fails here until the new snapshot is reviewed (`cargo insta review`, or
//! `INSTA_UPDATE=always cargo test -p coffer-cli` and a read of the diff).

use crate::support::{PLUGINS, coffer, ok};
use coffer_host::{HostedGame, Registry, render, simulate};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The example script of `id`: its steps as (player, action JSON), and the setup it names.
fn script(id: &str) -> (PathBuf, Vec<(u16, String)>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../plugins")
        .join(id)
        .join("examples");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    found.sort();
    let path = found.remove(0);
    let steps = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["player"].as_u64().unwrap() as u16,
                v["action"].to_string(),
            )
        })
        .collect();
    (path, steps)
}

/// The statically linked rulesets, to build the save the command then reads.
fn registry() -> Registry {
    use coffer_charges as _;
    use coffer_command_tokens as _;
    use coffer_story_acts as _;
    Registry::with_static().unwrap()
}

/// Plays the first half of `id`'s script and saves it in `dir`; returns the save, the game, and the
/// next step of the script.
fn halfway(dir: &Path, id: &str) -> (PathBuf, HostedGame, (u16, String)) {
    let registry = registry();
    let entry = registry.get(id).unwrap();
    let (path, steps) = script(id);
    let named = steps.iter().map(|(p, _)| p + 1).max().unwrap();
    let setup = simulate::script_setup(&path, named, entry.ruleset.description(), 1).unwrap();
    let mut game = HostedGame::start(entry.ruleset.clone(), setup).unwrap();
    let half = steps.len() / 2;
    for (p, action) in &steps[..half] {
        game.apply_json(*p, action).unwrap();
    }
    let save = dir.join(format!("{id}.json"));
    coffer_host::save::save(&game, &save).unwrap();
    (save, game, steps[half].clone())
}

/// The first refusal of each kind, as `coffer act` writes it after `error: `: tried with malformed JSON, a
/// player not in the game, and every documented action example for every player.
fn refusals(game: &HostedGame) -> BTreeMap<String, String> {
    let d = game.ruleset().description();
    let players = game.setup().players;
    let mut tries: Vec<(u16, String)> = vec![
        (0, r#"{"type":"no_such_action"}"#.to_owned()),
        (players + 3, r#"{"type":"no_such_action"}"#.to_owned()),
    ];
    for p in 0..players {
        for doc in &d.actions {
            if !doc.value.is_null() {
                tries.push((p, doc.value.to_string()));
            }
        }
    }
    let mut found = BTreeMap::new();
    for (p, action) in tries {
        let mut copy = HostedGame::start(game.ruleset().clone(), game.setup().clone()).unwrap();
        for logged in game.log() {
            copy.apply_json(logged.player, &logged.action.to_string())
                .unwrap();
        }
        if let Err(err) = copy.apply_json(p, &action) {
            let kind = match &err {
                coffer_host::HostError::Action { refusal, .. } => {
                    // The variant's name only, to keep one of each.
                    let debug = format!("{refusal:?}");
                    debug
                        .split(|c: char| !c.is_alphanumeric())
                        .next()
                        .unwrap_or_default()
                        .to_owned()
                }
                _ => "other".to_owned(),
            };
            found
                .entry(kind)
                .or_insert_with(|| format!("error: {}", render::error_chain(&err)));
        }
    }
    found
}

#[test]
fn what_coffer_prints_reads_in_the_game_s_words() {
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in PLUGINS {
        let (save, game, (next_player, next_action)) = halfway(dir.path(), id);
        let g = save.to_str().unwrap();
        let show = ok(coffer(&["show", g])).stdout;
        insta::assert_snapshot!(format!("{id}-show-spectator"), show);
        let seat = ok(coffer(&["show", g, "--player", "0"])).stdout;
        insta::assert_snapshot!(format!("{id}-show-player-0"), seat);
        let log = ok(coffer(&["log", g, "--player", "1"])).stdout;
        insta::assert_snapshot!(format!("{id}-log-player-1"), log);
        let refused = refusals(&game);
        let text: String = refused
            .iter()
            .map(|(kind, message)| format!("{kind}:\n  {message}\n"))
            .collect();
        insta::assert_snapshot!(format!("{id}-refusals"), text);
        let act = ok(coffer(&[
            "act",
            g,
            "--player",
            &next_player.to_string(),
            &next_action,
        ]))
        .stdout;
        insta::assert_snapshot!(format!("{id}-act"), act);
    }
}

#[test]
fn json_outputs_hold_no_debug_rendering() {
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in PLUGINS {
        let (save, _, (next_player, next_action)) = halfway(dir.path(), id);
        let g = save.to_str().unwrap();
        let mut outputs = vec![
            ok(coffer(&["--format", "json", "show", g])).stdout,
            ok(coffer(&["--format", "json", "show", g, "--player", "1"])).stdout,
            ok(coffer(&["--format", "json", "log", g, "--player", "0"])).stdout,
        ];
        let refused = coffer(&[
            "--format",
            "json",
            "act",
            g,
            "--player",
            "0",
            r#"{"type":"x"}"#,
        ]);
        assert_eq!(refused.code, 1);
        outputs.push(refused.stdout);
        outputs.push(refused.stderr);
        outputs.push(
            ok(coffer(&[
                "--format",
                "json",
                "act",
                g,
                "--player",
                &next_player.to_string(),
                &next_action,
            ]))
            .stdout,
        );
        for out in outputs {
            // JSON names its values, so only Debug renderings can show here (plain names read "null").
            if let Some(bad) = coffer_core::unreadable(&out) {
                panic!("{id}: `{bad}` in:\n{out}");
            }
        }
    }
}

//! Every text a person reads speaks the game's words: each ruleset's example script and many random
//! playouts, rendered for every seat and for a spectator (tables, resources, each action's events) with
//! refusals of every kind tried along the way, and no text may show a kernel internal.
//!
//! The games are loaded at runtime from the built libraries, as `coffer` loads them.

use coffer_core::{DynRuleset, Owner, Setup};
use coffer_host::{HostedGame, render, simulate};
use coffer_tests::{BUILTIN, Chooser, builtin_runtime_ruleset, repo_root};
use std::sync::Arc;

#[track_caller]
fn assert_readable(text: &str, context: &str) {
    if let Some(bad) = coffer_core::unreadable(text) {
        panic!("{context}: `{bad}` is not in the game's words:\n{text}");
    }
}

/// Renders everything every seat and a spectator read after `player`'s action, and checks it. The actor
/// reads at least one line about its own action.
fn check_after_action(game: &mut HostedGame, player: u16, context: &str) {
    let players = game.setup().players;
    let seats = std::iter::once(None).chain((0..players).map(|p| Some(Owner(p))));
    for seat in seats {
        let events = game.events_for(seat);
        let names = game.names(seat);
        let action = game.log().last().map(|l| l.action.to_string());
        let text = render::action(&names, player, &action.unwrap_or_default(), &events, seat);
        assert_readable(&text, context);
        if seat == Some(Owner(player)) {
            assert!(
                text.lines().count() > 1,
                "{context}: the action says nothing to its actor:\n{text}"
            );
        }
        let table = render::table(&names, &game.table(seat));
        assert_readable(&table, context);
        let resources = render::resources(&names, &game.resources(seat));
        assert_readable(&resources, context);
    }
}

/// Tries refused actions of several kinds and checks their messages: a malformed action, another player's
/// turn, each documented action example for each player, and a player not in the game.
fn check_refusals(game: &HostedGame, examples: &[String], context: &str) -> usize {
    let players = game.setup().players;
    let before = game.state_hash();
    let mut refused = 0;
    let mut attempts: Vec<(u16, String)> = vec![
        (0, r#"{"type":"no_such_action"}"#.to_owned()),
        (0, "not json at all".to_owned()),
        (players, examples.first().cloned().unwrap_or_default()),
    ];
    for p in 0..players {
        attempts.extend(examples.iter().map(|e| (p, e.clone())));
    }
    for (p, action) in attempts {
        let mut probe = game.clone_game();
        match probe.apply_json(p, &action) {
            Ok(_) => {}
            Err(err) => {
                refused += 1;
                let text = render::error_chain(&err);
                assert_readable(&text, &format!("{context}: refusal of {action}"));
                assert!(
                    text.matches(action.trim()).count() <= 1,
                    "{context}: the action is echoed more than once: {text}"
                );
            }
        }
    }
    assert_eq!(game.state_hash(), before);
    refused
}

trait CloneGame {
    fn clone_game(&self) -> HostedGame;
}

impl CloneGame for HostedGame {
    /// A game that replays this one's log from its setup.
    fn clone_game(&self) -> HostedGame {
        let mut copy = HostedGame::start(Arc::clone(self.ruleset()), self.setup().clone())
            .expect("the same setup starts again");
        for logged in self.log() {
            copy.apply_json(logged.player, &logged.action.to_string())
                .expect("the log replays");
        }
        copy
    }
}

fn examples(ruleset: &dyn DynRuleset) -> Vec<String> {
    ruleset
        .description()
        .actions
        .iter()
        .filter(|d| !d.value.is_null())
        .map(|d| d.value.to_string())
        .collect()
}

#[test]
fn example_scripts_read_in_the_game_s_words_for_every_seat() {
    for (id, _) in BUILTIN {
        let ruleset = builtin_runtime_ruleset(id);
        let examples = examples(&*ruleset);
        let dir = repo_root().join("plugins").join(id).join("examples");
        let mut scripts: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        scripts.sort();
        assert!(!scripts.is_empty(), "{id} has no example script");
        for script in scripts {
            let text = std::fs::read_to_string(&script).unwrap();
            let steps: Vec<serde_json::Value> = text
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
            let named = steps
                .iter()
                .map(|s| s["player"].as_u64().unwrap() as u16 + 1)
                .max()
                .unwrap_or(0);
            let setup = simulate::script_setup(&script, named, ruleset.description(), 1).unwrap();
            let mut game = HostedGame::start(Arc::clone(&ruleset), setup).unwrap();
            let mut refused = 0;
            for (n, step) in steps.iter().enumerate() {
                let context = format!("{}:{}", script.display(), n + 1);
                // Refusals are tried on a copy every few steps (each try replays the game so far).
                if n % 8 == 0 {
                    refused += check_refusals(&game, &examples, &context);
                }
                let player = step["player"].as_u64().unwrap() as u16;
                game.apply_json(player, &step["action"].to_string())
                    .unwrap_or_else(|e| panic!("{context}: {}", render::error_chain(&e)));
                check_after_action(&mut game, player, &context);
            }
            assert!(refused > 0, "{id}: no refusal was tried");
        }
    }
}

#[test]
fn random_playouts_read_in_the_game_s_words_for_every_seat() {
    for (id, _) in BUILTIN {
        let ruleset = builtin_runtime_ruleset(id);
        let d = ruleset.description();
        let mut chooser = Chooser::new(7);
        for game_no in 0..4u64 {
            let players = d.min_players + (game_no as u16) % (d.max_players - d.min_players + 1);
            let mut game =
                HostedGame::start(Arc::clone(&ruleset), Setup::new(players, game_no)).unwrap();
            for step in 0..150 {
                if game.outcome() != coffer_core::Outcome::Ongoing {
                    break;
                }
                let movers: Vec<u16> = (0..players).filter(|p| game.legal_count(*p) > 0).collect();
                if movers.is_empty() {
                    break;
                }
                let player = movers[chooser.below(movers.len())];
                let count = game.legal_count(player);
                game.apply_legal(player, chooser.below(count)).unwrap();
                check_after_action(
                    &mut game,
                    player,
                    &format!("{id} game {game_no} ({players} players) step {step}"),
                );
            }
        }
    }
}

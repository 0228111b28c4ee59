//! The Host: many games of different rulesets at once, each locked on its own.

use crate::fixture::registry;
use coffer_core::{GameRng, Setup};
use coffer_host::{GameId, Host, HostError, HostedGame};
use std::sync::Arc;

/// Plays up to `n` random legal actions (by index) on game `id`, one lock per action, so that other
/// threads' games interleave with it.
fn random_actions(host: &Host, id: GameId, n: usize, seed: u64) {
    let mut rng = GameRng::new(seed);
    for _ in 0..n {
        let done = host
            .with_game(id, |g| {
                let players = g.setup().players;
                let Some(p) = (0..players).find(|p| g.legal_count(*p) > 0) else {
                    return true;
                };
                let count = g.legal_count(p) as u64;
                g.apply_legal(p, rng.below(count) as usize)
                    .expect("a listed legal action applies");
                false
            })
            .unwrap();
        if done {
            break;
        }
    }
}

#[test]
fn games_of_several_rulesets_run_on_several_threads_at_once() {
    let host = Arc::new(Host::new(registry()));
    let rulesets = [
        "tally",
        "other",
        "tally",
        "other",
        "tally@0.1.0",
        "other@0.2.0",
    ];
    let ids: Vec<GameId> = rulesets
        .iter()
        .enumerate()
        .map(|(i, r)| {
            host.start(
                r,
                Setup::new(2 + (i as u16 % 3), i as u64).config(serde_json::json!({"target": 10})),
            )
            .unwrap()
        })
        .collect();
    // Each thread drives two games alternately, so every game is touched by several threads over time.
    std::thread::scope(|s| {
        for t in 0..3 {
            let host = Arc::clone(&host);
            let ids = ids.clone();
            s.spawn(move || {
                for round in 0..20 {
                    let id = ids[(t + round) % ids.len()];
                    random_actions(&host, id, 5, (t * 100 + round) as u64);
                }
            });
        }
    });
    // Every game is consistent: replaying its log from scratch gives the same state hash.
    let mut played = 0;
    for id in ids {
        host.with_game(id, |g| {
            played += g.log().len();
            let mut fresh = HostedGame::start(g.ruleset().clone(), g.setup().clone()).unwrap();
            for entry in g.log() {
                fresh
                    .apply_json(entry.player, &entry.action.to_string())
                    .unwrap();
                assert_eq!(fresh.state_hash(), entry.hash);
            }
            assert_eq!(fresh.state_hash(), g.state_hash());
        })
        .unwrap();
    }
    assert!(played > 50, "only {played} actions were played");
}

#[test]
fn host_and_its_games_can_be_shared_between_threads() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Host>();
    send::<HostedGame>();
}

#[test]
fn a_refused_action_leaves_the_game_and_its_log_unchanged() {
    let host = Host::new(registry());
    let id = host.start("tally", Setup::new(2, 3)).unwrap();
    host.apply_json(id, 0, r#"{"type":"earn","n":2}"#).unwrap();
    let (hash, len) = host
        .with_game(id, |g| (g.state_hash(), g.log().len()))
        .unwrap();
    for (player, action) in [
        (0, r#"{"type":"earn","n":9}"#),
        (1, r#"{"type":"pass"}"#),
        (0, r#"{"type":"fly"}"#),
        (0, "{not json"),
        (7, r#"{"type":"pass"}"#),
    ] {
        let err = host.apply_json(id, player, action).unwrap_err();
        assert!(matches!(err, HostError::Action { .. }), "{err}");
        let after = host
            .with_game(id, |g| (g.state_hash(), g.log().len()))
            .unwrap();
        assert_eq!(after, (hash, len), "{action} changed the game");
    }
}

#[test]
fn unknown_games_and_rulesets_are_clear_errors() {
    let host = Host::new(registry());
    assert_eq!(
        host.game(GameId(42)).unwrap_err().to_string(),
        "no game #42 in this host"
    );
    let err = host.start("chess", Setup::new(2, 0)).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown ruleset 'chess'; known: other@0.2.0, tally@0.1.0"
    );
    let err = host.start("tally", Setup::new(9, 0)).unwrap_err();
    assert!(matches!(err, HostError::Setup { .. }));
    let id = host.start("tally", Setup::new(2, 0)).unwrap();
    assert_eq!(host.ids(), [id]);
    host.remove(id).unwrap();
    assert!(host.ids().is_empty());
}

// The bundled plugins, linked statically into this test binary (their cdylibs serve the command tests).
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

#[test]
fn the_bundled_rulesets_run_side_by_side_on_threads() {
    let registry = coffer_host::Registry::with_static().unwrap();
    assert_eq!(
        registry.keys(),
        ["charges@0.1.0", "command-tokens@0.1.0", "story-acts@0.1.0"]
    );
    assert!(
        registry
            .iter()
            .all(|e| e.origin == coffer_host::Origin::Static)
    );
    let host = Host::new(registry);
    let mut ids = Vec::new();
    for seed in 0..2 {
        for (ruleset, players) in [("charges", 2), ("command-tokens", 3), ("story-acts", 2)] {
            ids.push(host.start(ruleset, Setup::new(players, seed)).unwrap());
        }
    }
    std::thread::scope(|s| {
        for (t, chunk) in ids.chunks(2).enumerate() {
            let host = &host;
            s.spawn(move || {
                for round in 0..30 {
                    for id in chunk {
                        random_actions(host, *id, 4, (t * 1000 + round) as u64);
                    }
                }
            });
        }
    });
    for id in ids {
        host.with_game(id, |g| {
            assert!(!g.log().is_empty(), "{} made no move", g.key());
            let mut fresh = HostedGame::start(g.ruleset().clone(), g.setup().clone()).unwrap();
            for entry in g.log() {
                fresh
                    .apply_json(entry.player, &entry.action.to_string())
                    .unwrap();
                assert_eq!(fresh.state_hash(), entry.hash, "{}", g.key());
            }
            g.game().check_invariants().unwrap();
        })
        .unwrap();
    }
}

#[test]
fn the_host_saves_and_loads_games() {
    let host = Host::new(registry());
    let id = host.start("other", Setup::new(3, 8)).unwrap();
    host.apply_json(id, 0, r#"{"type":"earn","n":1}"#).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.json");
    host.save(id, &path).unwrap();
    let copy = host.load(&path).unwrap();
    assert_ne!(copy, id);
    let hash = |g: GameId| host.with_game(g, |g| g.state_hash()).unwrap();
    assert_eq!(hash(copy), hash(id));
    std::fs::write(&path, "{").unwrap();
    assert!(matches!(host.load(&path), Err(HostError::Save(_))));
    assert_eq!(host.ids().len(), 2);
}

#[test]
fn a_game_whose_thread_panicked_is_poisoned_and_the_others_keep_running() {
    let host = Host::new(registry());
    let bad = host.start("tally", Setup::new(2, 1)).unwrap();
    let good = host.start("other", Setup::new(2, 1)).unwrap();
    let panicked = std::thread::scope(|s| {
        s.spawn(|| host.with_game(bad, |_| panic!("a bug while holding the game")))
            .join()
            .is_err()
    });
    assert!(panicked);
    let err = host.apply_json(bad, 0, r#"{"type":"pass"}"#).unwrap_err();
    assert!(matches!(err, HostError::Poisoned(id) if id == bad), "{err}");
    assert_eq!(
        err.to_string(),
        format!("game {bad} is poisoned: a thread panicked while using it")
    );
    host.apply_json(good, 0, r#"{"type":"pass"}"#).unwrap();
}

//! Static against runtime-loaded: for every ruleset, the same seed and the same actions give the same state
//! hash after every action, the same events, refusals and outcome, whether the ruleset is linked into this
//! binary or loaded from its plugin library.

use coffer_core::{DynGame, DynRuleset, Format, Owner, Setup};
use coffer_tests::{
    BUILTIN, Chooser, builtin_library, fixture_library, repo_root, runtime_ruleset, static_ruleset,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Games of random playouts per ruleset, and the most actions of each.
const GAMES: u64 = 6;
const MAX_ACTIONS: usize = 300;

fn assert_same(label: &str, step: usize, a: &mut dyn DynGame, b: &mut dyn DynGame) {
    assert_eq!(
        a.state_hash(),
        b.state_hash(),
        "{label}: state hashes differ after action {step}"
    );
    assert_eq!(
        a.events(),
        b.events(),
        "{label}: events differ after action {step}"
    );
    assert_eq!(
        a.outcome(),
        b.outcome(),
        "{label}: outcomes differ after action {step}"
    );
}

/// Random playouts choosing the same legal-action index on both sides; returns the actions applied.
pub(crate) fn playouts(id: &str, statik: &dyn DynRuleset, runtime: &dyn DynRuleset) -> usize {
    assert_eq!(
        statik.description(),
        runtime.description(),
        "{id}: descriptions differ"
    );
    let d = statik.description();
    let mut applied = 0;
    for seed in 0..GAMES {
        let players = (d.min_players + (seed % 3) as u16).clamp(d.min_players, d.max_players);
        let setup = Setup::new(players, seed * 7919 + 1);
        let label = format!("{id} seed {} players {players}", setup.seed);
        // A player count the default configuration does not support is refused alike on both sides.
        let (mut s, mut r) = match (statik.new_game(&setup), runtime.new_game(&setup)) {
            (Ok(s), Ok(r)) => (s, r),
            (Err(a), Err(b)) if seed > 0 => {
                assert_eq!(a, b, "{label}: setup refusals differ");
                continue;
            }
            (a, b) => panic!(
                "{label}: new game: static {:?}, runtime {:?}",
                a.err(),
                b.err()
            ),
        };
        assert_same(&label, 0, &mut *s, &mut *r);
        let mut chooser = Chooser::new(setup.seed);
        for step in 1..=MAX_ACTIONS {
            let mut movers = Vec::new();
            for p in (0..players).map(Owner) {
                let (n, m) = (s.legal_actions(p), r.legal_actions(p));
                assert_eq!(
                    n, m,
                    "{label}: legal-action counts of {p} differ before action {step}"
                );
                if n > 0 {
                    movers.push((p, n));
                }
            }
            let Some(&(p, n)) = movers.get(chooser.below(movers.len().max(1))) else {
                break;
            };
            let index = chooser.below(n);
            assert_eq!(
                s.legal_action_json(index),
                r.legal_action_json(index),
                "{label}: action {step} differs"
            );
            let (a, b) = (s.apply_legal(p, index), r.apply_legal(p, index));
            assert_eq!(a, b, "{label}: results of action {step} differ");
            assert_same(&label, step, &mut *s, &mut *r);
            applied += 1;
            if step % 50 == 0 {
                assert_eq!(
                    s.snapshot(Format::Json).unwrap(),
                    r.snapshot(Format::Json).unwrap(),
                    "{label}"
                );
                for seat in [None, Some(p)] {
                    assert_eq!(
                        s.resources(seat),
                        r.resources(seat),
                        "{label}: resources differ after action {step}"
                    );
                    assert_eq!(
                        s.table(seat),
                        r.table(seat),
                        "{label}: tables differ after action {step}"
                    );
                    assert_eq!(
                        s.events_for(seat),
                        r.events_for(seat),
                        "{label}: events differ after action {step}"
                    );
                }
                r.check_invariants()
                    .unwrap_or_else(|v| panic!("{label}: {v}"));
            }
        }
    }
    applied
}

/// One `{"player": P, "action": {...}}` line of a script.
fn script_lines(path: &Path) -> Vec<(u16, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: serde_json::Value = serde_json::from_str(l)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            let player = v["player"]
                .as_u64()
                .unwrap_or_else(|| panic!("{}:{}: no player", path.display(), i + 1));
            (player as u16, v["action"].to_string())
        })
        .collect()
}

/// Replays a script on both sides with its own setup, comparing after each line. An example script is a
/// real game: every line must apply on both sides.
fn replay_script(id: &str, path: &Path, statik: &dyn DynRuleset, runtime: &dyn DynRuleset) {
    let lines = script_lines(path);
    // Set up as `coffer demo` does: `<script>.setup.json` beside it, else the players it names, seed 0.
    let named = lines.iter().map(|(p, _)| p + 1).max().unwrap_or(0);
    let setup = coffer_host::simulate::script_setup(path, named, statik.description(), 0)
        .unwrap_or_else(|e| panic!("{id}: {e:#}"));
    let mut s = statik
        .new_game(&setup)
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    let mut r = runtime
        .new_game(&setup)
        .unwrap_or_else(|e| panic!("{id}: {e}"));
    let label = format!("{id} script {}", path.display());
    for (step, (player, action)) in lines.iter().enumerate() {
        let (a, b) = (
            s.apply_json(Owner(*player), action),
            r.apply_json(Owner(*player), action),
        );
        assert_eq!(a, b, "{label}: line {} gives different results", step + 1);
        assert!(a.is_ok(), "{label}: line {} refused: {a:?}", step + 1);
        assert_same(&label, step + 1, &mut *s, &mut *r);
    }
    assert_eq!(s.outcome(), r.outcome(), "{label}: outcomes differ");
}

fn scripts(id: &str) -> Vec<PathBuf> {
    let dir = repo_root().join("plugins").join(id).join("examples");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}

#[test]
fn fixture_ruleset_static_and_runtime_loaded_give_identical_hashes() {
    let statik =
        coffer_core::Adapter::shared(coffer_fixture_common::Coins::new("fixture-coins", false));
    let runtime = runtime_ruleset(&fixture_library("good"), "fixture-coins");
    assert!(playouts("fixture-coins", &*statik, &*runtime) > 100);
}

/// Every built-in ruleset, statically linked and loaded from the library cargo built beside this test
/// binary. A built-in ruleset that is not registered (yet) fails this test after the others were checked.
#[test]
fn builtin_rulesets_static_and_runtime_loaded_give_identical_hashes() {
    let mut missing = Vec::new();
    for (id, crate_name) in BUILTIN {
        let Some(statik) = static_ruleset(id) else {
            missing.push(format!(
                "{id} is not registered statically (does {crate_name} invoke plugin!?)"
            ));
            continue;
        };
        let runtime: Arc<dyn DynRuleset> = runtime_ruleset(&builtin_library(crate_name), id);
        let applied = playouts(id, &*statik, &*runtime);
        assert!(applied > 0, "{id}: random playouts applied no action");
        let examples = scripts(id);
        for script in &examples {
            replay_script(id, script, &*statik, &*runtime);
        }
        eprintln!(
            "{id}: {applied} random actions and {} example scripts agree",
            examples.len()
        );
    }
    assert!(missing.is_empty(), "{}", missing.join("; "));
}

//! The runtime plugin boundary: bad libraries are refused with their own error and skipped, a panicking
//! plugin is poisoned without harming anything else, and a newcomer's ruleset built outside the workspace
//! from `template/` loads and plays. That plugin logs reach the host is tested in `tests/logging`.

use coffer_core::abi;
use coffer_core::{
    ActionError, DynGame, DynRuleset, Format, GameRng, Observe, Owner, PlayoutError, Progress,
    Setup, SetupError, choose, random_playout,
};
use coffer_host::loader::{self, LoadError, LockFile, PathProblem, ProbeCommand, Verdict};
use coffer_host::{HostError, HostedGame, Origin, Registry, RegistryError};
use coffer_tests::{
    BUILTIN, Chooser, builtin_runtime_ruleset, fixture_library, fixture_target_dir, is_child,
    library_file_name, plugin_dir_with, repo_root, run_cargo, run_child_test, static_ruleset,
};
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Loads one directory into a fresh registry.
fn load(dir: &Path) -> (Registry, loader::LoadReport) {
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir], None);
    (registry, report)
}

fn only_error(report: &loader::LoadReport) -> &LoadError {
    assert_eq!(
        report.errors.len(),
        1,
        "expected exactly one error: {:?}",
        report.errors
    );
    &report.errors[0]
}

#[test]
fn good_library_loads_and_plays_like_any_ruleset() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let (registry, report) = load(dir.path());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let entry = registry.get("fixture-coins").expect("registered");
    assert!(matches!(&entry.origin, Origin::Library(p) if p.starts_with(dir.path())));
    let mut game = entry.ruleset.new_game(&Setup::new(2, 7)).expect("new game");
    assert_eq!(game.players(), 2);
    assert!(
        game.state().is_none(),
        "a runtime game's state lives in the plugin"
    );
    assert_eq!(
        game.legal_actions(Owner(0)),
        4,
        "take 1-3 and roll with an empty purse"
    );
    assert_eq!(
        game.legal_action_json(0).as_deref(),
        Some(r#"{"type":"take","n":1}"#)
    );
    game.apply_legal(Owner(0), 2).expect("take 3");
    assert_eq!(game.events().len(), 1, "one gain event, fetched lazily");
    let err = game
        .apply_json(Owner(1), r#"{"type":"spend","n":1}"#)
        .unwrap_err();
    assert!(
        matches!(err, ActionError::Refused(_)),
        "typed refusal crosses the boundary: {err:?}"
    );
    let err = game.apply_json(Owner(1), r#"{"type":"fly"}"#).unwrap_err();
    assert!(
        matches!(err, ActionError::Malformed(ref m) if m.contains("fly")),
        "{err:?}"
    );
    let err = entry
        .ruleset
        .new_game(&Setup::new(2, 1).config(serde_json::json!({"colour": 1})))
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(err, SetupError::Config(ref m) if m.contains("colour")),
        "{err:?}"
    );
    game.check_invariants().expect("invariants hold");
    assert!(!game.resources(None).is_empty());
    assert_eq!(game.table(None).outcome, coffer_core::Outcome::Ongoing);
}

#[test]
fn not_a_library_is_skipped_with_its_own_error() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let fake = dir.path().join(library_file_name("coffer_fake"));
    std::fs::write(&fake, "this is a text file, not a shared library\n").unwrap();
    std::fs::write(
        dir.path().join("README.txt"),
        "ignored: not named like a library",
    )
    .unwrap();
    let (registry, report) = load(dir.path());
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::NotALibrary { path, .. } if *path == fake),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("is not a loadable library"),
        "{err}"
    );
    assert!(
        registry.get("fixture-coins").is_ok(),
        "the good library beside it still loads"
    );
}

#[test]
fn library_without_declaration_symbol_is_skipped() {
    let dir = plugin_dir_with(&[&fixture_library("nodecl")]);
    let (registry, report) = load(dir.path());
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::NoDeclaration { symbol, .. } if symbol == "coffer_plugin_coffer_fixture_nodecl"),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("exports no symbol 'coffer_plugin_coffer_fixture_nodecl'"),
        "{err}"
    );
    assert!(registry.is_empty());
}

#[test]
fn wrong_abi_version_is_skipped_naming_both_versions() {
    let dir = plugin_dir_with(&[&fixture_library("badabi")]);
    let (registry, report) = load(dir.path());
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::AbiVersion { plugin, host, .. }
            if *plugin == abi::ABI_VERSION + 1 && *host == abi::ABI_VERSION),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(
        text.contains(&format!("plugin ABI version {}", abi::ABI_VERSION + 1)),
        "{text}"
    );
    assert!(
        text.contains(&format!("host speaks ABI version {}", abi::ABI_VERSION)),
        "{text}"
    );
    assert!(
        registry.is_empty(),
        "nothing of a mismatched library is registered"
    );
}

#[test]
fn wrong_core_version_is_skipped_naming_both_versions() {
    let dir = plugin_dir_with(&[&fixture_library("badcore")]);
    let (registry, report) = load(dir.path());
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::CoreVersion { plugin, .. } if plugin == "0.0.1-fixture"),
        "{err:?}"
    );
    let text = err.to_string();
    assert!(text.contains("coffer-core 0.0.1-fixture"), "{text}");
    assert!(
        text.contains(&format!("coffer-core {}", abi::CORE_VERSION)),
        "{text}"
    );
    assert!(registry.is_empty());
}

#[cfg(unix)]
#[test]
fn world_writable_library_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let file = dir.path().join(library_file_name("coffer_fixture_good"));
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (registry, report) = load(dir.path());
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::WorldWritable { path, mode } if *path == file && mode & 0o002 != 0),
        "{err:?}"
    );
    assert!(err.to_string().contains("world-writable"), "{err}");
    assert!(registry.is_empty());
}

#[cfg(unix)]
#[test]
fn world_writable_plugin_directory_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    let (registry, report) = load(dir.path());
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::WorldWritable { path, .. } if path == dir.path()),
        "{err:?}"
    );
    assert!(
        registry.is_empty(),
        "nothing is loaded from a world-writable directory"
    );
}

#[test]
fn lock_file_hash_mismatch_refuses_naming_both_hashes() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let name = library_file_name("coffer_fixture_good");
    let actual = loader::sha256_file(&dir.path().join(&name)).unwrap();
    let wrong = "0".repeat(64);
    let lock_path = dir.path().join("coffer-plugins.lock");

    std::fs::write(&lock_path, format!("# pins\n{wrong}  {name}\n")).unwrap();
    let lock = LockFile::read(&lock_path).unwrap();
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir.path()], Some(&lock));
    let err = only_error(&report);
    assert!(
        matches!(err, LoadError::HashMismatch { expected, actual: a, .. } if *expected == wrong && *a == actual)
    );
    let text = err.to_string();
    assert!(
        text.contains(&wrong) && text.contains(&actual),
        "both hashes in: {text}"
    );
    assert!(registry.is_empty());

    std::fs::write(&lock_path, "").unwrap();
    let report =
        Registry::new().load_dirs(&[dir.path()], Some(&LockFile::read(&lock_path).unwrap()));
    assert!(matches!(only_error(&report), LoadError::Unpinned { actual: a, .. } if *a == actual));

    std::fs::write(&lock_path, format!("{actual}  {name}\n")).unwrap();
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir.path()], Some(&LockFile::read(&lock_path).unwrap()));
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        registry.get("fixture-coins").is_ok(),
        "the pinned library loads"
    );
}

#[test]
fn malformed_lock_file_line_is_reported_with_its_number() {
    let err = LockFile::parse(
        Path::new("coffer-plugins.lock"),
        "# ok\n\nnot-a-hash  libx.so\n",
    )
    .unwrap_err();
    assert!(
        matches!(err, LoadError::LockFile { line: 3, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("'not-a-hash' is not a sha256"),
        "{err}"
    );
}

#[test]
fn duplicate_id_version_is_a_clear_error_naming_both_libraries() {
    let first = plugin_dir_with(&[&fixture_library("good")]);
    let second = plugin_dir_with(&[&fixture_library("good")]);
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[first.path(), second.path()], None);
    assert_eq!(report.loaded.len(), 1);
    let err = only_error(&report);
    let LoadError::Registry(RegistryError::Duplicate {
        key,
        first: a,
        second: b,
    }) = err
    else {
        panic!("expected a duplicate: {err:?}")
    };
    assert_eq!(key, "fixture-coins@0.1.0");
    assert!(matches!(a, Origin::Library(p) if p.starts_with(first.path())));
    assert!(matches!(b, Origin::Library(p) if p.starts_with(second.path())));
    let text = err.to_string();
    assert!(text.contains(&first.path().display().to_string()), "{text}");
    assert!(
        text.contains(&second.path().display().to_string()),
        "{text}"
    );
}

#[test]
fn missing_plugin_directory_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let (_, report) = load(&missing);
    assert!(matches!(only_error(&report), LoadError::Io { path, .. } if *path == missing));
}

#[test]
fn declaration_symbol_is_derived_from_the_file_name() {
    let lib = library_file_name("coffer_charges");
    assert_eq!(
        loader::declaration_symbol(Path::new(&lib)).as_deref(),
        Some("coffer_plugin_coffer_charges")
    );
    assert_eq!(loader::declaration_symbol(Path::new("notes.txt")), None);
}

/// Plays the coin game by JSON: alternating takes and spends, `rounds` times for each of two players.
/// The panicky fixture loaded from a fresh copy of its library (another path), so that no earlier
/// panic's poisoning applies; the directory lives as long as the returned guard.
fn fresh_panicky() -> (tempfile::TempDir, Arc<dyn DynRuleset>) {
    let dir = plugin_dir_with(&[&fixture_library("panicky")]);
    let (registry, report) = load(dir.path());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let panicky = Arc::clone(&registry.get("fixture-panicky").unwrap().ruleset);
    (dir, panicky)
}

fn churn(game: &mut dyn DynGame, rounds: usize) {
    for _ in 0..rounds {
        for action in [r#"{"type":"take","n":1}"#, r#"{"type":"spend","n":1}"#] {
            for p in 0..2 {
                game.apply_json(Owner(p), action)
                    .expect("take 1 then spend 1 always apply");
            }
        }
    }
}

fn apply_boom(game: &mut dyn DynGame) -> ActionError {
    let count = game.legal_actions(Owner(0));
    let boom = (0..count)
        .find(|i| {
            game.legal_action_json(*i)
                .is_some_and(|j| j.contains("boom"))
        })
        .expect("boom is listed after three moves");
    game.apply_legal(Owner(0), boom).unwrap_err()
}

#[test]
fn panicking_plugin_is_poisoned_the_game_unchanged_and_others_keep_running() {
    let dir = plugin_dir_with(&[&fixture_library("panicky"), &fixture_library("good")]);
    let (registry, report) = load(dir.path());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let panicky = Arc::clone(&registry.get("fixture-panicky").unwrap().ruleset);
    let good = Arc::clone(&registry.get("fixture-coins").unwrap().ruleset);
    let statik =
        coffer_core::Adapter::shared(coffer_fixture_common::Coins::new("fixture-coins", false));

    let mut victim = panicky.new_game(&Setup::new(2, 3)).unwrap();
    let mut bystander = panicky.new_game(&Setup::new(2, 4)).unwrap();
    let mut other = good.new_game(&Setup::new(2, 5)).unwrap();
    let mut local = statik.new_game(&Setup::new(2, 5)).unwrap();
    // More actions than a checkpoint interval, so the plugin rebuilds the game from a checkpoint and a log.
    churn(&mut *victim, abi::CHECKPOINT_EVERY / 4 + 10);
    let before = victim.state_hash();
    let json_before = victim.snapshot(Format::Json).unwrap();

    let err = apply_boom(&mut *victim);
    assert!(
        matches!(err, ActionError::Panicked(ref m) if m.contains("fixture boom")),
        "{err:?}"
    );
    assert_eq!(
        victim.state_hash(),
        before,
        "the game it was applying to is unchanged"
    );
    assert_eq!(
        loader::is_poisoned(&registry.get("fixture-panicky").unwrap().origin),
        Some(true)
    );

    let err = victim
        .apply_json(Owner(1), r#"{"type":"take","n":1}"#)
        .unwrap_err();
    assert_eq!(err, ActionError::Poisoned("fixture-panicky".to_owned()));
    assert_eq!(
        err.to_string(),
        "ruleset 'fixture-panicky' is poisoned (it panicked earlier) and is no longer called"
    );
    assert!(matches!(
        victim.snapshot(Format::Json),
        Err(SetupError::Poisoned(_))
    ));
    assert!(matches!(
        bystander.apply_legal(Owner(0), 0),
        Err(ActionError::Poisoned(_))
    ));
    assert!(matches!(
        panicky.new_game(&Setup::new(2, 1)).map(|_| ()),
        Err(SetupError::Poisoned(_))
    ));
    assert!(matches!(
        panicky.restore(Format::Json, &json_before).map(|_| ()),
        Err(SetupError::Poisoned(_))
    ));
    assert_eq!(
        victim.legal_actions(Owner(0)),
        0,
        "a poisoned plugin is no longer called"
    );

    // Another library and a static ruleset keep running, and still agree with each other.
    assert_eq!(
        loader::is_poisoned(&registry.get("fixture-coins").unwrap().origin),
        Some(false)
    );
    churn(&mut *other, 5);
    churn(&mut *local, 5);
    other.apply_json(Owner(0), r#"{"type":"roll"}"#).unwrap();
    local.apply_json(Owner(0), r#"{"type":"roll"}"#).unwrap();
    assert_eq!(other.state_hash(), local.state_hash());

    // The snapshot taken before the panic restores elsewhere to the same state (it was a real state).
    let restored = statik.restore(Format::Json, &json_before).unwrap();
    assert_eq!(restored.state_hash(), before);
}

#[test]
fn panic_early_in_a_game_rebuilds_it_from_its_setup() {
    // A fresh copy of the library (another path), so the poisoning of the test above does not apply.
    let (_dir, panicky) = fresh_panicky();
    let mut game = panicky.new_game(&Setup::new(2, 9)).unwrap();
    churn(&mut *game, 1);
    game.apply_json(Owner(0), r#"{"type":"roll"}"#).unwrap();
    game.apply_json(Owner(1), r#"{"type":"roll"}"#).unwrap();
    let before = game.state_hash();
    assert!(matches!(apply_boom(&mut *game), ActionError::Panicked(_)));
    assert_eq!(
        game.state_hash(),
        before,
        "rebuilt from the setup and the six actions since"
    );
}

#[test]
fn snapshots_cross_between_static_and_runtime_games() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let (registry, _) = load(dir.path());
    let runtime = Arc::clone(&registry.get("fixture-coins").unwrap().ruleset);
    let statik =
        coffer_core::Adapter::shared(coffer_fixture_common::Coins::new("fixture-coins", false));
    let mut game = runtime.new_game(&Setup::new(3, 11)).unwrap();
    let mut chooser = Chooser::new(11);
    for _ in 0..20 {
        let p = (0..3).map(Owner).find(|p| game.legal_actions(*p) > 0);
        let Some(p) = p else { break };
        let n = game.legal_actions(p);
        game.apply_legal(p, chooser.below(n)).unwrap();
    }
    for format in [Format::Json, Format::Binary] {
        let bytes = game.snapshot(format).unwrap();
        assert_eq!(
            statik.restore(format, &bytes).unwrap().state_hash(),
            game.state_hash()
        );
        assert_eq!(
            runtime.restore(format, &bytes).unwrap().state_hash(),
            game.state_hash()
        );
    }
    let copy = game.clone_game();
    assert_eq!(copy.state_hash(), game.state_hash());
    let err = runtime
        .restore(Format::Json, b"{\"not\":\"a state\"}")
        .map(|_| ())
        .unwrap_err();
    assert!(matches!(err, SetupError::Snapshot(_)), "{err:?}");
}

#[test]
fn newcomer_builds_the_template_outside_the_workspace_and_plays_it() {
    let work = tempfile::tempdir().unwrap();
    let crate_dir = work.path().join("my-ruleset");
    copy_dir(&repo_root().join("template"), &crate_dir);
    // Point the path dependency at this repository's core, as the guide says.
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let core = repo_root().join("core");
    let replaced = text.replace(
        "path = \"../core\"",
        &format!("path = {:?}", core.display().to_string()),
    );
    assert_ne!(text, replaced, "template/Cargo.toml depends on ../core");
    std::fs::write(&manifest, replaced).unwrap();
    // Same dependency versions as the workspace, so nothing is fetched and artifacts are shared.
    std::fs::copy(repo_root().join("Cargo.lock"), crate_dir.join("Cargo.lock")).unwrap();

    let mut build =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    build
        .arg("build")
        .arg("--quiet")
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", fixture_target_dir());
    run_cargo(build, "build the template copied outside the workspace");
    // Its own tests, one per rule, pass where a newcomer runs them (the template is outside the
    // workspace: `cargo test --workspace` does not reach them otherwise).
    let mut test =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    test.arg("test")
        .arg("--quiet")
        .current_dir(&crate_dir)
        .env("CARGO_TARGET_DIR", fixture_target_dir());
    run_cargo(
        test,
        "run the tests of the template copied outside the workspace",
    );
    let built = fixture_target_dir()
        .join("debug")
        .join(library_file_name("my_ruleset"));
    assert!(built.is_file(), "cargo build made {}", built.display());

    let plugins = plugin_dir_with(&[&built]);
    let mut registry = Registry::with_static().unwrap();
    let report = registry.load_dirs(&[plugins.path()], None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let (key, _) = &report.loaded[0];
    let ruleset = Arc::clone(&registry.get(key).unwrap().ruleset);
    let d = ruleset.description();
    let mut game = ruleset.new_game(&Setup::new(d.min_players, 1)).unwrap();
    let mut chooser = Chooser::new(1);
    let mut applied = 0;
    while applied < 200 {
        let players: Vec<Owner> = (0..game.players())
            .map(Owner)
            .filter(|p| game.legal_actions(*p) > 0)
            .collect();
        if players.is_empty() {
            break;
        }
        let p = players[chooser.below(players.len())];
        let n = game.legal_actions(p);
        game.apply_legal(p, chooser.below(n))
            .expect("a listed action applies");
        game.check_invariants().unwrap();
        applied += 1;
    }
    assert!(applied > 0, "the template game has legal actions");
    assert_ne!(
        game.outcome(),
        coffer_core::Outcome::Ongoing,
        "the template game ends within 200 actions"
    );
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" || name == "Cargo.lock" {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(&name));
        } else {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

/// What `acting` must equal: `to_act`, each player with `legal_actions`.
fn acting_by_hand(game: &mut dyn DynGame) -> Vec<(u16, usize)> {
    let players = game.to_act().to_vec();
    players
        .into_iter()
        .map(|p| (p.0, game.legal_actions(p)))
        .collect()
}

fn pairs(list: &[abi::Acting]) -> Vec<(u16, usize)> {
    list.iter().map(|a| (a.player, a.legal)).collect()
}

#[test]
fn acting_and_apply_legal_then_acting_agree_with_to_act_and_legal_actions_static_and_runtime() {
    for (id, _) in BUILTIN {
        let statik = static_ruleset(id).expect("built in");
        let runtime = builtin_runtime_ruleset(id);
        let players = statik.description().min_players.max(3);
        for seed in 1..=3u64 {
            let setup = Setup::new(players, seed);
            let (Ok(mut s), Ok(mut r)) = (statik.new_game(&setup), runtime.new_game(&setup)) else {
                continue;
            };
            let mut chooser = Chooser::new(seed);
            let (mut listed_s, mut listed_r) = (pairs(s.acting()), pairs(r.acting()));
            for step in 0..150 {
                assert_eq!(
                    listed_s,
                    acting_by_hand(&mut *s),
                    "{id} seed {seed} step {step}"
                );
                assert_eq!(listed_r, listed_s, "{id} seed {seed} step {step}: runtime");
                let movers: Vec<(u16, usize)> =
                    listed_s.iter().copied().filter(|m| m.1 > 0).collect();
                let Some(&(p, n)) = movers.get(chooser.below(movers.len().max(1))) else {
                    break;
                };
                let index = chooser.below(n);
                listed_s = pairs(s.apply_legal_then_acting(Owner(p), index).unwrap());
                listed_r = pairs(r.apply_legal_then_acting(Owner(p), index).unwrap());
                assert_eq!(
                    s.state_hash(),
                    r.state_hash(),
                    "{id} seed {seed} step {step}"
                );
                assert_eq!(
                    s.events(),
                    r.events(),
                    "{id} seed {seed} step {step}: events"
                );
            }
        }
    }
}

#[test]
fn acting_caches_every_listed_players_actions_and_leaves_legal_action_json_alone() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let (registry, _) = load(dir.path());
    let runtime = Arc::clone(&registry.get("fixture-coins").unwrap().ruleset);
    let statik =
        coffer_core::Adapter::shared(coffer_fixture_common::Coins::new("fixture-coins", false));
    for ruleset in [&statik, &runtime] {
        let mut game = ruleset.new_game(&Setup::new(2, 5)).unwrap();
        // Player 1's list is selected; `acting` lists both players and does not change the selection.
        assert_eq!(game.legal_actions(Owner(1)), 0);
        assert_eq!(pairs(game.acting()), vec![(0, 4), (1, 0)]);
        assert_eq!(
            game.legal_action_json(0),
            None,
            "still player 1's empty list"
        );
        assert_eq!(game.legal_actions(Owner(0)), 4);
        assert_eq!(
            game.legal_action_json(3).as_deref(),
            Some(r#"{"type":"roll"}"#)
        );
        // An index past a listed player's actions is refused with the count, the game unchanged.
        let before = game.state_hash();
        let err = game.apply_legal_then_acting(Owner(0), 4).unwrap_err();
        assert!(
            matches!(
                err,
                ActionError::NoSuchLegalAction {
                    index: 4,
                    count: 4,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(game.state_hash(), before);
        let err = game.apply_legal(Owner(0), usize::MAX).unwrap_err();
        assert!(
            matches!(err, ActionError::NoSuchLegalAction { count: 4, .. }),
            "{err:?}"
        );
        let err = game.apply_legal_then_acting(Owner(2), 0).unwrap_err();
        assert!(
            matches!(err, ActionError::NoSuchPlayer { player: 2, .. }),
            "{err:?}"
        );
        // Take 3: player 1 moves next, with take 1-3, spend 0, roll.
        assert_eq!(
            pairs(game.apply_legal_then_acting(Owner(0), 2).unwrap()),
            vec![(0, 0), (1, 4)]
        );
        assert_eq!(game.events().len(), 1, "the take's gain event");
        assert_eq!(
            game.legal_action_json(0),
            None,
            "a change forgets the selection"
        );
    }
}

#[test]
fn panic_in_apply_legal_then_acting_leaves_the_game_as_before_the_call() {
    // A fresh copy of the library (another path), so earlier poisonings do not apply.
    let (_dir, panicky) = fresh_panicky();
    let mut game = panicky.new_game(&Setup::new(2, 21)).unwrap();
    // Legal actions by index (both calls), a JSON action, then more by index: a mixed log since setup.
    game.apply_legal(Owner(0), 0).unwrap();
    game.apply_legal_then_acting(Owner(1), 1).unwrap();
    game.apply_json(Owner(0), r#"{"type":"roll"}"#).unwrap();
    game.apply_legal_then_acting(Owner(1), 0).unwrap();
    let before = game.state_hash();
    let count = game.legal_actions(Owner(0));
    let boom = (0..count)
        .find(|i| {
            game.legal_action_json(*i)
                .is_some_and(|j| j.contains("boom"))
        })
        .expect("boom is listed after four moves");
    let err = game.apply_legal_then_acting(Owner(0), boom).unwrap_err();
    assert!(
        matches!(err, ActionError::Panicked(ref m) if m.contains("fixture boom")),
        "{err:?}"
    );
    assert_eq!(
        game.state_hash(),
        before,
        "rebuilt from the setup and the four actions since"
    );
}

#[test]
fn panic_in_a_restored_game_rebuilds_it_from_its_first_clone_and_the_mixed_log() {
    let (_dir, panicky) = fresh_panicky();
    let mut source = panicky.new_game(&Setup::new(2, 8)).unwrap();
    churn(&mut *source, 2);
    let bytes = source.snapshot(Format::Binary).unwrap();
    // A restored game has no setup to rebuild from: its checkpoint is a clone taken at its first action.
    let mut game = panicky.restore(Format::Binary, &bytes).unwrap();
    assert_eq!(game.state_hash(), source.state_hash());
    game.apply_legal_then_acting(Owner(0), 2).unwrap();
    game.apply_json(Owner(1), r#"{"type":"take","n":2}"#)
        .unwrap();
    game.apply_legal(Owner(0), 0).unwrap();
    game.apply_legal_then_acting(Owner(1), 3).unwrap();
    let before = game.state_hash();
    assert!(matches!(apply_boom(&mut *game), ActionError::Panicked(_)));
    assert_eq!(
        game.state_hash(),
        before,
        "rebuilt from the clone and the four actions since"
    );
}

// ---- Issue 12: the loader under attack and faults. ----

#[cfg(target_os = "linux")]
#[test]
fn lock_file_pins_the_bytes_loaded_even_when_the_file_is_swapped_after_hashing() {
    use std::sync::atomic::{AtomicBool, Ordering};
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let name = library_file_name("coffer_fixture_good");
    let target = dir.path().join(&name);
    let pinned = loader::sha256_file(&target).unwrap();
    let lock_path = dir.path().join("coffer-plugins.lock");
    std::fs::write(&lock_path, format!("{pinned}  {name}\n")).unwrap();
    let lock = LockFile::read(&lock_path).unwrap();
    // `evil` exports good's declaration symbol but registers `fixture-evil`; staged on the same file
    // system, so the swap is one rename.
    let staging = tempfile::tempdir_in(dir.path()).unwrap();
    let evil = staging.path().join(&name);
    std::fs::copy(fixture_library("evil"), &evil).unwrap();
    let swapped = Arc::new(AtomicBool::new(false));
    let (hook_target, hook_swapped) = (target.clone(), Arc::clone(&swapped));
    loader::set_after_hash_hook(Some(Box::new(move |path: &Path| {
        if path == hook_target && !hook_swapped.swap(true, Ordering::SeqCst) {
            std::fs::rename(&evil, &hook_target).expect("swap the library after its hash");
        }
    })));
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir.path()], Some(&lock));
    loader::set_after_hash_hook(None);
    assert!(swapped.load(Ordering::SeqCst), "the hook swapped the file");
    assert_ne!(
        loader::sha256_file(&target).unwrap(),
        pinned,
        "the path now names the unpinned library"
    );
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        registry.get("fixture-coins").is_ok(),
        "the pinned bytes were loaded: {:?}",
        registry.keys()
    );
    assert!(
        registry.get("fixture-evil").is_err(),
        "the library swapped in after the hash must not run"
    );
}

/// A fresh copy of the `faulty` fixture (a library of its own, so no other test's poisoning applies) and
/// a game of it whose `fault` entry point fails after the first move.
fn faulty_game(fault: &str) -> (tempfile::TempDir, HostedGame) {
    let dir = plugin_dir_with(&[&fixture_library("faulty")]);
    let (registry, report) = load(dir.path());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let ruleset = Arc::clone(&registry.get("fixture-faulty").unwrap().ruleset);
    let setup = Setup::new(2, 1).config(serde_json::json!({ "fault": fault }));
    let game = HostedGame::start(ruleset, setup).expect("the faulty game starts");
    (dir, game)
}

const TAKE_ONE: &str = r#"{"type":"take","n":1}"#;

/// The plugin failure of `result`, checked to name the library and the call.
fn plugin_failure<T: std::fmt::Debug>(result: Result<T, HostError>, call: &str) -> String {
    let err = result.expect_err("a plugin failure is an error, not an answer");
    let HostError::Plugin { message, .. } = &err else {
        panic!("expected a plugin failure: {err:?}")
    };
    assert_eq!(message, &err.to_string());
    assert!(
        message.contains(&library_file_name("coffer_fixture_faulty")),
        "names the library: {message}"
    );
    assert!(
        message.contains(&format!("`{call}`")),
        "names the call: {message}"
    );
    message.clone()
}

#[test]
fn plugin_panic_listing_legal_actions_is_an_error_not_no_legal_action() {
    let (_dir, mut game) = faulty_game("legal");
    // By index, which lists nothing after it (a JSON action lists who may act next in the same call:
    // the fault would fire there, see the next test).
    game.apply_legal(0, 0).unwrap();
    let logged: serde_json::Value = serde_json::from_str(game.log()[0].action.get()).unwrap();
    assert_eq!(logged, serde_json::json!({"type": "take", "n": 1}));
    let message = plugin_failure(game.try_legal_actions(1), "legal_actions");
    assert!(message.contains("fixture fault in legal"), "{message}");
    // And the hot path refuses to apply anything on such an answer.
    plugin_failure(game.apply_legal(1, 0).map(|_| ()), "legal_actions");
    assert_eq!(game.log().len(), 1, "nothing more was logged");
}

#[test]
fn plugin_panic_listing_who_may_act_after_a_json_action_refuses_it_and_leaves_the_game_as_it_was() {
    let (_dir, mut game) = faulty_game("legal");
    let before = game.try_state_hash().unwrap();
    let err = game.apply_json(0, TAKE_ONE).unwrap_err();
    let HostError::Action {
        refusal: ActionError::Panicked(message),
        ..
    } = &err
    else {
        panic!("expected the plugin's panic: {err}")
    };
    assert!(message.contains("fixture fault in legal"), "{message}");
    assert!(message.contains("`apply_json_reporting`"), "{message}");
    assert!(game.log().is_empty(), "a refused action is not logged");
    // The library is poisoned, but its games may still be hashed (read-only).
    assert_eq!(
        game.state_hash(),
        before,
        "the plugin rebuilt the game as it was before the call"
    );
}

#[test]
fn plugin_panic_in_outcome_is_an_error_not_an_ongoing_game() {
    let (_dir, mut game) = faulty_game("outcome");
    // By index: the fixture's legal actions ask the outcome, so listing who may act after a JSON action
    // would fire the fault inside that action's call.
    game.apply_legal(0, 0).unwrap();
    let message = plugin_failure(game.try_outcome(), "outcome");
    assert!(message.contains("fixture fault in outcome"), "{message}");
    plugin_failure(game.check_plugin(), "outcome");
}

#[test]
fn plugin_panic_while_hashing_is_an_error_naming_the_plugin_not_a_hash_of_zero() {
    let (_dir, mut game) = faulty_game("hash");
    let before = game.try_state_hash().unwrap();
    // The hash of a JSON action is answered in the same call: the panic refuses the action, and the
    // plugin rebuilds the game as it was.
    let err = game.apply_json(0, TAKE_ONE).unwrap_err();
    let HostError::Action {
        refusal: ActionError::Panicked(message),
        ..
    } = &err
    else {
        panic!("expected the plugin's panic: {err}")
    };
    assert!(message.contains("fixture fault in hash"), "{message}");
    assert!(message.contains("`apply_json_reporting`"), "{message}");
    assert!(
        game.log().is_empty(),
        "an action whose hash is unknown is not logged"
    );
    assert_eq!(
        game.state_hash(),
        before,
        "rebuilt as it was (hashing is read-only)"
    );
    // By index, the hash is a call of its own: its failure is the game's, naming the call.
    let (_fresh, mut game) = faulty_game("hash");
    plugin_failure(game.apply_legal(0, 0).map(|_| ()), "state_hash");
    assert!(game.log().is_empty());
    plugin_failure(game.try_state_hash(), "state_hash");
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The offending component and problem of an unsafe-path refusal.
fn unsafe_path(err: &LoadError) -> (&Path, &PathProblem) {
    match err {
        LoadError::UnsafePath {
            component, problem, ..
        } => (component, problem),
        other => panic!("expected an unsafe path: {other:?}"),
    }
}

#[cfg(unix)]
#[test]
fn symlink_into_a_world_writable_directory_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let open = base.path().join("open");
    std::fs::create_dir(&open).unwrap();
    let name = library_file_name("coffer_fixture_good");
    std::fs::copy(fixture_library("good"), open.join(&name)).unwrap();
    chmod(&open, 0o777);
    let plugins = base.path().join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    std::os::unix::fs::symlink(open.join(&name), plugins.join(&name)).unwrap();
    let (registry, report) = load(&plugins);
    let err = only_error(&report);
    let (component, problem) = unsafe_path(err);
    assert_eq!(component, std::fs::canonicalize(&open).unwrap());
    assert!(
        matches!(problem, PathProblem::WorldWritable { mode: 0o777 }),
        "{err}"
    );
    assert!(err.to_string().contains("writable by everyone"), "{err}");
    assert!(registry.is_empty());
}

#[cfg(unix)]
#[test]
fn plugin_directory_under_a_world_writable_parent_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let open = base.path().join("open");
    let plugins = open.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::copy(
        fixture_library("good"),
        plugins.join(library_file_name("coffer_fixture_good")),
    )
    .unwrap();
    chmod(&open, 0o777);
    let (registry, report) = load(&plugins);
    let err = only_error(&report);
    let (component, _) = unsafe_path(err);
    assert_eq!(component, std::fs::canonicalize(&open).unwrap());
    assert!(registry.is_empty());

    // With the sticky bit (as /tmp), nobody else can replace what is inside: it loads.
    chmod(&open, 0o1777);
    let (registry, report) = load(&plugins);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(registry.get("fixture-coins").is_ok());
}

#[cfg(unix)]
#[test]
fn world_writable_lock_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("coffer-plugins.lock");
    std::fs::write(&lock, "").unwrap();
    chmod(&lock, 0o666);
    let err = LockFile::read(&lock).unwrap_err();
    assert!(
        matches!(&err, LoadError::WorldWritable { path, mode: 0o666 } if *path == lock),
        "{err:?}"
    );
}

#[cfg(unix)]
#[test]
fn lock_file_in_a_world_writable_directory_is_refused() {
    let base = tempfile::tempdir().unwrap();
    let open = base.path().join("open");
    std::fs::create_dir(&open).unwrap();
    let lock = open.join("coffer-plugins.lock");
    std::fs::write(&lock, "").unwrap();
    chmod(&open, 0o777);
    let err = LockFile::read(&lock).unwrap_err();
    let (component, problem) = unsafe_path(&err);
    assert_eq!(component, std::fs::canonicalize(&open).unwrap());
    assert!(
        matches!(problem, PathProblem::WorldWritable { .. }),
        "{err}"
    );
}

/// The child half of the tests of faults that end the process: loads a fresh copy of `faulty` with the
/// fault `COFFER_TEST_FAULT` and plays until it fires. Does nothing outside a child process.
#[test]
fn child_plays_a_faulty_plugin_until_its_fault_fires() {
    if !is_child() {
        return;
    }
    let fault = std::env::var("COFFER_TEST_FAULT").expect("the fault to play");
    let (_dir, mut game) = faulty_game(&fault);
    game.apply_json(0, TAKE_ONE).unwrap();
    let _ = game.apply_json(1, TAKE_ONE);
    panic!("the fault '{fault}' did not end the process");
}

/// Runs [`child_plays_a_faulty_plugin_until_its_fault_fires`] with `fault` and returns its exit status
/// and stderr.
fn run_fault(fault: &str) -> (Option<i32>, String) {
    let output = run_child_test(
        "loader::child_plays_a_faulty_plugin_until_its_fault_fires",
        &[
            ("COFFER_TEST_FAULT", OsStr::new(fault)),
            (loader::DEADLINE_ENV, OsStr::new("1")),
        ],
    );
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn assert_names_library_and_apply(stderr: &str) {
    assert!(
        stderr.contains(&library_file_name("coffer_fixture_faulty")),
        "names the library: {stderr}"
    );
    assert!(
        stderr.contains("`apply_json_reporting`"),
        "names the call: {stderr}"
    );
}

#[test]
fn plugin_call_past_its_deadline_ends_the_process_naming_library_and_call() {
    let (code, stderr) = run_fault("spin");
    assert_eq!(code, Some(loader::EXIT_DEADLINE), "{stderr}");
    assert_names_library_and_apply(&stderr);
    assert!(stderr.contains("within 1 s"), "{stderr}");
    assert!(stderr.contains(loader::DEADLINE_ENV), "{stderr}");
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[test]
fn plugin_calling_exit_during_a_call_is_no_success() {
    let (code, stderr) = run_fault("exit");
    assert_eq!(code, Some(loader::EXIT_EXITED), "{stderr}");
    assert_names_library_and_apply(&stderr);
    assert!(stderr.contains("called exit"), "{stderr}");
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[test]
fn plugin_abort_or_segfault_during_a_call_is_named_with_its_own_status() {
    for (fault, signal) in [("abort", "SIGABRT"), ("segv", "SIGSEGV")] {
        let (code, stderr) = run_fault(fault);
        assert_eq!(code, Some(loader::EXIT_CRASHED), "{fault}: {stderr}");
        assert_names_library_and_apply(&stderr);
        assert!(stderr.contains(signal), "{fault}: {stderr}");
    }
}

#[test]
fn bad_deadline_in_the_environment_is_refused_with_the_allowed_range() {
    // The parsing alone: the variable is not set in this process, and setting it would race other tests.
    let err = LoadError::BadDeadline {
        value: "forever".to_owned(),
    };
    let text = err.to_string();
    assert!(text.contains("'forever'"), "{text}");
    assert!(text.contains("from 0.01 to 86400"), "{text}");
}

fn bad_declaration(fixture: &str) -> (String, String) {
    let dir = plugin_dir_with(&[&fixture_library(fixture)]);
    let (registry, report) = load(dir.path());
    assert!(registry.is_empty());
    match only_error(&report) {
        LoadError::BadDeclaration { field, reason, .. } => (field.clone(), reason.clone()),
        other => panic!("{fixture}: expected a bad declaration: {other:?}"),
    }
}

#[test]
fn null_vtable_is_reported_as_a_null_vtable() {
    let (field, reason) = bad_declaration("nullvt");
    assert_eq!(field, "vtable");
    assert_eq!(reason, "is a null pointer");
}

#[test]
fn misaligned_declaration_is_reported_as_misaligned_not_as_missing() {
    let (field, reason) = bad_declaration("misaligned");
    assert_eq!(field, "declaration");
    assert!(reason.contains("is misaligned"), "{reason}");
    assert!(reason.contains("past a multiple of 8"), "{reason}");
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[test]
fn vtable_of_garbage_pointers_is_refused_before_any_call() {
    let (field, reason) = bad_declaration("garbagevt");
    assert_eq!(field, "vtable entry init");
    assert!(
        reason.contains("0xdead000")
            && reason.contains("outside the library's executable segments"),
        "{reason}"
    );
}

/// The child half of [`check_dir_probes_each_library_in_a_child_and_names_the_one_that_crashes`].
#[test]
fn probe_child() {
    if let Some(code) = loader::probe_child_main() {
        std::process::exit(code);
    }
}

#[test]
fn check_dir_probes_each_library_in_a_child_and_names_the_one_that_crashes() {
    let dir = plugin_dir_with(&[
        &fixture_library("good"),
        &fixture_library("crashinit"),
        &fixture_library("nullvt"),
    ]);
    let probe = ProbeCommand::new(
        std::env::current_exe().unwrap(),
        [
            "loader::probe_child",
            "--exact",
            "--nocapture",
            "--test-threads=1",
            "-q",
        ],
    );
    let reports = loader::check_dir(dir.path(), None, &probe);
    let verdict = |crate_name: &str| {
        let path = dir.path().join(library_file_name(crate_name));
        reports
            .iter()
            .find(|r| r.path == path)
            .unwrap_or_else(|| panic!("{crate_name} probed: {reports:?}"))
    };
    let good = verdict("coffer_fixture_good");
    assert_eq!(
        good.verdict,
        Verdict::Loads {
            rulesets: vec!["fixture-coins@0.1.0".to_owned()]
        }
    );
    let crash = verdict("coffer_fixture_crashinit");
    assert!(
        matches!(&crash.verdict, Verdict::Crashed { how } if how.contains("SIGSEGV")),
        "{crash}"
    );
    assert!(
        crash
            .to_string()
            .contains("libcoffer_fixture_crashinit.so: crashed"),
        "{crash}"
    );
    let null = verdict("coffer_fixture_nullvt");
    assert!(
        matches!(&null.verdict, Verdict::Refused { reason } if reason.contains("vtable is a null pointer")),
        "{null}"
    );
}

#[test]
fn the_same_directory_named_twice_loads_once() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir.path(), dir.path()], None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.loaded.len(), 1);
}

#[cfg(unix)]
#[test]
fn the_same_file_through_a_link_loads_once() {
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let other = tempfile::tempdir().unwrap();
    let linked: PathBuf = other.path().join("plugins");
    std::os::unix::fs::symlink(dir.path(), &linked).unwrap();
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir.path(), &linked], None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(report.loaded.len(), 1);
    // Loaded again by file, under another name for the same file: nothing twice, no error.
    let report = registry.load_file(&linked.join(library_file_name("coffer_fixture_good")), None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(report.loaded.is_empty());
}

/// Recurses until the stack overflows (the bound is never reached).
fn recurse(depth: u64) -> u64 {
    let frame = std::hint::black_box([depth; 64]);
    if depth == u64::MAX {
        return frame[0];
    }
    recurse(depth + 1).wrapping_add(frame[1])
}

/// The child half of [`a_crash_in_the_host_itself_is_reported_as_before_the_handlers`]: loads a plugin
/// (installing the crash handlers), then overflows its own stack outside any plugin call. Does nothing
/// outside a child process.
#[test]
fn child_overflows_its_own_stack_after_loading_a_plugin() {
    if !is_child() {
        return;
    }
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let (registry, _) = load(dir.path());
    assert!(registry.get("fixture-coins").is_ok());
    std::hint::black_box(recurse(0));
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[test]
fn a_crash_in_the_host_itself_is_reported_as_before_the_handlers() {
    use std::os::unix::process::ExitStatusExt;
    let output = run_child_test(
        "loader::child_overflows_its_own_stack_after_loading_a_plugin",
        &[],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Rust's own stack-overflow report, reached through the loader's handlers, then its abort.
    assert!(stderr.contains("has overflowed its stack"), "{stderr}");
    assert_eq!(output.status.signal(), Some(6), "SIGABRT: {stderr}");
    assert!(
        !stderr.contains("plugin library"),
        "no plugin is blamed: {stderr}"
    );
}

// ---- Issue 17: a whole random playout is one call, run by the game on itself. ----

/// The state hash and the generator after `chunks` playouts of at most `each` actions, and the actions
/// applied.
fn chunked_playout(
    game: &mut dyn DynGame,
    seed: u64,
    each: u64,
    chunks: usize,
) -> (u64, [u64; 2], u64) {
    let mut rng = GameRng::new(seed);
    let mut applied = 0;
    for _ in 0..chunks {
        applied += game
            .playout(&mut rng, each, &mut Progress::default())
            .expect("listed actions apply");
    }
    (game.state_hash().0, rng.into(), applied)
}

#[test]
fn a_playout_run_by_the_game_makes_the_choices_of_the_observed_loop_static_and_runtime() {
    for (id, _) in BUILTIN {
        let statik = static_ruleset(id).expect("built in");
        let runtime = builtin_runtime_ruleset(id);
        let players = statik.description().min_players.max(3);
        for seed in 1..=3u64 {
            let setup = Setup::new(players, seed);
            let mut observed = statik.new_game(&setup).unwrap();
            // The reference: the loop over `dyn DynGame`, one call per step, each step observed.
            let mut rng = GameRng::new(seed);
            let mut steps = 0u64;
            let applied = random_playout(&mut *observed, &mut rng, 400, &mut Count(&mut steps))
                .expect("listed actions apply");
            assert_eq!(applied, steps);
            let reference = (observed.state_hash().0, <[u64; 2]>::from(rng), applied);
            for ruleset in [&statik, &runtime] {
                let mut game = ruleset.new_game(&setup).unwrap();
                assert_eq!(
                    chunked_playout(&mut *game, seed, 400, 1),
                    reference,
                    "{id} seed {seed}: one playout"
                );
                // In pieces: the same choices as one playout of the same length.
                let mut game = ruleset.new_game(&setup).unwrap();
                let (_, rng, applied) = chunked_playout(&mut *game, seed, 7, 400 / 7);
                let mut rest = GameRng::try_from(rng).unwrap();
                let last = game
                    .playout(&mut rest, 400 - applied, &mut Progress::default())
                    .unwrap();
                assert!(applied <= 400);
                assert_eq!(
                    (game.state_hash().0, <[u64; 2]>::from(rest), applied + last),
                    reference,
                    "{id} seed {seed}: in pieces of 7"
                );
                // The game answers for its new state: who may act, the last action's events.
                assert_eq!(
                    pairs(game.acting()),
                    pairs(observed.acting()),
                    "{id} seed {seed}"
                );
                assert_eq!(game.events(), observed.events(), "{id} seed {seed}");
            }
        }
    }
}

/// Counts the observed steps.
struct Count<'c>(&'c mut u64);

impl Observe<dyn DynGame + '_> for Count<'_> {
    type Error = std::convert::Infallible;
    type Seen = ();
    fn before(&mut self, _: &mut (dyn DynGame + '_), _: Owner, _: usize) {}
    fn after(
        &mut self,
        _: &mut (dyn DynGame + '_),
        _: Owner,
        _: usize,
        (): (),
    ) -> Result<(), Self::Error> {
        *self.0 += 1;
        Ok(())
    }
}

/// A seed after `seed` whose playout's next step is an action `wanted` accepts (chosen as `choose` would,
/// without applying it).
fn seed_choosing(game: &mut dyn DynGame, mut seed: u64, wanted: impl Fn(&str) -> bool) -> u64 {
    loop {
        seed += 1;
        let mut order = game.acting().to_vec();
        let (player, index) = choose(&mut GameRng::new(seed), &mut order).expect("someone acts");
        game.legal_actions(player);
        if game.legal_action_json(index).is_some_and(|a| wanted(&a)) {
            return seed;
        }
    }
}

#[test]
fn playouts_in_the_recovery_log_are_replayed_after_a_later_panic() {
    // Playouts between JSON actions, more entries than a checkpoint's log holds: each playout is one
    // entry, replayed after the panic from the generator state it started from.
    let (_dir, panicky) = fresh_panicky();
    let mut game = panicky.new_game(&Setup::new(2, 4)).unwrap();
    let mut seed = 0;
    let rounds = abi::CHECKPOINT_EVERY / 4 + 10;
    let take_one = |a: &str| a == r#"{"type":"take","n":1}"#;
    for _ in 0..rounds {
        // Each player takes 1 in a playout of one action, then spends 1 as JSON.
        for _ in 0..2 {
            seed = seed_choosing(&mut *game, seed, take_one);
            let mut rng = GameRng::new(seed);
            assert_eq!(
                game.playout(&mut rng, 1, &mut Progress::default()).unwrap(),
                1
            );
        }
        for p in 0..2 {
            game.apply_json(Owner(p), r#"{"type":"spend","n":1}"#)
                .unwrap();
        }
    }
    assert!(rounds * 4 > abi::CHECKPOINT_EVERY);
    let before = game.state_hash();
    assert!(matches!(apply_boom(&mut *game), ActionError::Panicked(_)));
    assert_eq!(
        game.state_hash(),
        before,
        "rebuilt from the last checkpoint, the JSON actions and the playouts since"
    );
}

#[test]
fn a_panic_inside_a_runtime_playout_leaves_the_actions_before_it_applied() {
    for seed in 1..=3u64 {
        // Two fresh copies of the library each time: each is poisoned by its own panic only.
        let ((_one, panicky), (_two, witness)) = (fresh_panicky(), fresh_panicky());
        let setup = Setup::new(2, seed);
        let mut game = panicky.new_game(&setup).unwrap();
        // An action first, so the recovery log holds more than the playout.
        game.apply_json(Owner(0), r#"{"type":"take","n":2}"#)
            .unwrap();
        let mut rng = GameRng::new(seed);
        let mut progress = Progress::default();
        let Err(PlayoutError::Refused {
            applied,
            player,
            index,
            error,
        }) = game.playout(&mut rng, u64::MAX, &mut progress)
        else {
            panic!("seed {seed}: a random playout of the panicky game reaches boom");
        };
        assert!(
            matches!(error, ActionError::Panicked(ref m) if m.contains("fixture boom")),
            "{error:?}"
        );
        assert_eq!(progress.applied, applied);
        assert_eq!(progress.chosen, Some((player, index)));
        // The same playout on a game of the other copy, stopped before that step, is the game now.
        let mut same = witness.new_game(&setup).unwrap();
        same.apply_json(Owner(0), r#"{"type":"take","n":2}"#)
            .unwrap();
        let played = same
            .playout(&mut GameRng::new(seed), applied, &mut Progress::default())
            .unwrap();
        assert_eq!(played, applied);
        assert_eq!(game.state_hash(), same.state_hash(), "seed {seed}");
        same.legal_actions(player);
        assert!(
            same.legal_action_json(index)
                .is_some_and(|a| a.contains("boom")),
            "seed {seed}: the step that failed is boom"
        );
        // The panicking copy is poisoned; the other copy goes on.
        assert!(matches!(
            game.playout(&mut rng, 1, &mut Progress::default()),
            Err(PlayoutError::Refused {
                applied: 0,
                error: ActionError::Poisoned(_),
                ..
            })
        ));
        let seed = seed_choosing(&mut *same, seed, |a| !a.contains("boom"));
        assert!(
            same.playout(&mut GameRng::new(seed), 1, &mut Progress::default())
                .is_ok()
        );
    }
}

//! WebAssembly rulesets: the same ruleset built as a `.wasm` module gives the same games as its static
//! and native forms (parity), and a module's faults stop only the game whose call faulted
//! (containment: deadline, traps, memory cap, imports). The modules are built by the xtask library
//! (`coffer_tests::wasm_modules`); without the wasm32 target the tests print how to install it and skip,
//! unless `COFFER_WASM_REQUIRED` is set (CI), where they fail.

use coffer_core::{ActionError, DynGame, DynRuleset, Format, Owner, Setup};
use coffer_host::wasm::{TICK, WasmOptions, load_module_with};
use coffer_host::{Form, Registry};
use coffer_tests::{BUILTIN, Chooser, builtin_library, static_ruleset, wasm_fixture, wasm_modules};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::parity::playouts;

/// The package (file) name of a ruleset crate: `coffer_charges` -> `coffer-charges`.
fn package(crate_name: &str) -> String {
    crate_name.replace('_', "-")
}

pub(crate) fn module_of(dir: &Path, crate_name: &str) -> PathBuf {
    dir.join(format!("{}.wasm", package(crate_name)))
}

pub(crate) fn ruleset_in(path: &Path, id: &str, options: WasmOptions) -> Arc<dyn DynRuleset> {
    load_module_with(path, None, options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .into_iter()
        .find(|r| r.description().id == id)
        .unwrap_or_else(|| panic!("{} holds no ruleset '{id}'", path.display()))
}

#[test]
fn builtin_rulesets_static_native_and_wasm_give_identical_games() {
    let Some(dir) = wasm_modules() else { return };
    for (id, crate_name) in BUILTIN {
        let statik = static_ruleset(id).expect("linked");
        let wasm = ruleset_in(&module_of(&dir, crate_name), id, WasmOptions::default());
        let native = coffer_tests::runtime_ruleset(&builtin_library(crate_name), id);
        assert!(playouts(id, &*statik, &*wasm) > 0, "{id}: static/wasm");
        assert!(playouts(id, &*native, &*wasm) > 0, "{id}: native/wasm");
    }
}

/// Plays `actions` random legal actions (the same choices for the same seed).
fn play(game: &mut dyn DynGame, seed: u64, actions: usize) -> usize {
    let mut chooser = Chooser::new(seed);
    for step in 0..actions {
        let acting: Vec<_> = game
            .acting()
            .iter()
            .filter(|a| a.legal > 0)
            .copied()
            .collect();
        let Some(a) = acting.get(chooser.below(acting.len().max(1))) else {
            return step;
        };
        let index = chooser.below(a.legal);
        game.apply_legal(a.owner(), index)
            .unwrap_or_else(|e| panic!("step {step}: {e}"));
    }
    actions
}

#[test]
fn snapshots_taken_in_one_form_restore_in_the_others() {
    let Some(dir) = wasm_modules() else { return };
    for (id, crate_name) in BUILTIN {
        let statik = static_ruleset(id).expect("linked");
        let wasm = ruleset_in(&module_of(&dir, crate_name), id, WasmOptions::default());
        let native = coffer_tests::runtime_ruleset(&builtin_library(crate_name), id);
        let players = statik.description().min_players.max(2);
        let setup = Setup::new(players, 99);
        let forms: [(&str, &dyn DynRuleset); 3] =
            [("static", &*statik), ("native", &*native), ("wasm", &*wasm)];
        for (from_name, from) in forms {
            let mut game = from.new_game(&setup).unwrap();
            play(&mut *game, 5, 40);
            for format in [Format::Json, Format::Binary] {
                let bytes = game.snapshot(format).unwrap();
                for (to_name, to) in forms {
                    let restored = to
                        .restore(format, &bytes)
                        .unwrap_or_else(|e| panic!("{id}: {from_name} -> {to_name}: {e}"));
                    assert_eq!(
                        restored.state_hash(),
                        game.state_hash(),
                        "{id}: a {format:?} snapshot of the {from_name} form restores differently in the {to_name} form"
                    );
                }
            }
        }
    }
}

/// The fault fixture's module: the coin game whose configuration's `fault` makes `apply` misbehave.
fn faulty(options: WasmOptions) -> Option<Arc<dyn DynRuleset>> {
    let path = wasm_fixture("faulty")?;
    Some(ruleset_in(&path, "fixture-faulty", options))
}

fn setup_with_fault(fault: &str, seed: u64) -> Setup {
    let mut setup = Setup::new(2, seed);
    setup.config = serde_json::json!({ "fault": fault });
    setup
}

/// Enough healthy games that every instance of the pool holds several (an instance per core first).
fn bystanders(ruleset: &dyn DynRuleset) -> Vec<Box<dyn DynGame>> {
    // Two in each instance and more: the faulty game then shares an instance with some.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let instances = coffer_host::wasm::INSTANCES_PER_CORE * cores;
    (0..2 * instances as u64 + 2)
        .map(|seed| {
            let mut game = ruleset.new_game(&Setup::new(2, seed + 100)).unwrap();
            play(&mut *game, seed, 3);
            game
        })
        .collect()
}

/// Every bystander has the state it had before, and goes on exactly as a static twin does.
fn assert_recovered(label: &str, games: &mut [Box<dyn DynGame>], before: &[u64]) {
    for (i, game) in games.iter_mut().enumerate() {
        assert_eq!(
            game.state_hash().0,
            before[i],
            "{label}: bystander {i} changed"
        );
        assert!(game.failure().is_none(), "{label}: {:?}", game.failure());
        let played = play(&mut **game, 77 + i as u64, 2);
        assert!(played > 0 || game.outcome() != coffer_core::Outcome::Ongoing);
        game.check_invariants()
            .unwrap_or_else(|v| panic!("{label}: bystander {i}: {v}"));
    }
}

/// The fault's game: the first action makes a move, the second faults.
fn fault_game(ruleset: &dyn DynRuleset, fault: &str) -> Box<dyn DynGame> {
    let mut game = ruleset.new_game(&setup_with_fault(fault, 1)).unwrap();
    game.apply_json(Owner(0), r#"{"type":"take","n":1}"#)
        .unwrap();
    game
}

fn stopped_message(result: Result<(), ActionError>, label: &str) -> String {
    match result {
        Err(ActionError::Stopped(message)) => message,
        other => panic!("{label}: expected the game to be stopped, got {other:?}"),
    }
}

#[test]
fn a_call_past_its_deadline_is_stopped_within_two_ticks_and_only_its_game_stops() {
    let deadline = Duration::from_millis(300);
    let options = WasmOptions {
        deadline,
        ..WasmOptions::default()
    };
    let Some(ruleset) = faulty(options) else {
        return;
    };
    let mut others = bystanders(&*ruleset);
    let before: Vec<u64> = others.iter().map(|g| g.state_hash().0).collect();
    let mut spinning = fault_game(&*ruleset, "spin");
    let started = Instant::now();
    let result = spinning.apply_json(Owner(1), r#"{"type":"take","n":1}"#);
    let took = started.elapsed();
    let message = stopped_message(result, "spin");
    assert!(
        message.contains("fixture-faulty")
            && message.contains("apply_json")
            && message.contains("deadline"),
        "{message}"
    );
    // The epoch guarantees two ticks; the rest is this thread being scheduled on a busy machine.
    let slack = Duration::from_millis(40);
    assert!(
        took >= deadline && took <= deadline + 2 * TICK + slack,
        "stopped {took:?} after the call began (deadline {deadline:?}, tick {TICK:?})"
    );
    eprintln!(
        "deadline {deadline:?}: stopped after {took:?} ({:.1} ticks late)",
        (took.as_secs_f64() - deadline.as_secs_f64()) / TICK.as_secs_f64()
    );
    // Stopped for good, with the same words.
    let again = spinning.apply_json(Owner(1), r#"{"type":"take","n":1}"#);
    assert_eq!(stopped_message(again, "again"), message);
    assert_eq!(spinning.failure(), Some(message));
    assert_recovered("spin", &mut others, &before);
}

#[test]
fn a_trap_stops_only_its_game_and_the_games_sharing_its_instance_are_recovered_exactly() {
    let options = WasmOptions {
        memory_cap: 64 << 20,
        ..WasmOptions::default()
    };
    let Some(ruleset) = faulty(options) else {
        return;
    };
    let statik =
        coffer_core::Adapter::shared(coffer_fixture_common::Coins::new("fixture-faulty", false));
    for (fault, cause) in [
        ("legal", "panicked: fixture fault in legal"),
        ("abort", "aborted"),
        ("exit", "aborted"),
        ("segv", "outside its memory"),
        ("oom", "out of memory"),
        ("stack", "stack overflowed"),
    ] {
        let mut others = bystanders(&*ruleset);
        let before: Vec<u64> = others.iter().map(|g| g.state_hash().0).collect();
        let mut game = fault_game(&*ruleset, fault);
        let message = if fault == "legal" {
            // A call with no error to return: the game records why it answered nothing.
            assert_eq!(game.legal_actions(Owner(1)), 0);
            game.failure().expect("the failure is recorded")
        } else {
            stopped_message(game.apply_json(Owner(1), r#"{"type":"take","n":1}"#), fault)
        };
        assert!(
            message.contains("fixture-faulty") && message.contains(cause),
            "{fault}: {message}"
        );
        assert_recovered(fault, &mut others, &before);
        // The recovered games are the games a static twin plays.
        for (i, game) in others.iter().enumerate() {
            let bytes = game.snapshot(Format::Binary).unwrap();
            let twin = statik.restore(Format::Binary, &bytes).unwrap();
            assert_eq!(
                twin.state_hash(),
                game.state_hash(),
                "{fault}: bystander {i}"
            );
        }
    }
}

/// Writes a module from WebAssembly text into a fresh plugin directory.
fn module_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, wat::parse_str(text).expect("valid text")).unwrap();
    path
}

#[test]
fn a_module_importing_outside_the_contract_is_refused_with_the_import_named() {
    let dir = tempfile::tempdir().unwrap();
    let path = module_file(
        dir.path(),
        "hostile.wasm",
        r#"(module
             (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
             (memory (export "memory") 1))"#,
    );
    let err = load_module_with(&path, None, WasmOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("wasi_snapshot_preview1.fd_write") && err.contains("hostile.wasm"),
        "{err}"
    );
    let path = module_file(
        dir.path(),
        "empty.wasm",
        r#"(module (memory (export "memory") 1))"#,
    );
    let err = load_module_with(&path, None, WasmOptions::default())
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("exports no 'coffer_wasm_abi_version'"),
        "{err}"
    );
    std::fs::write(dir.path().join("garbage.wasm"), b"\0asm not really").unwrap();
    let err = load_module_with(
        &dir.path().join("garbage.wasm"),
        None,
        WasmOptions::default(),
    )
    .map(|_| ())
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("is not a loadable WebAssembly module"),
        "{err}"
    );
}

#[test]
fn a_ruleset_present_as_both_forms_is_refused_unless_one_is_preferred() {
    let Some(dir) = wasm_modules() else { return };
    let plugins = coffer_tests::plugin_dir_with(&[
        &builtin_library("coffer_charges"),
        &module_of(&dir, "coffer_charges"),
    ]);
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[plugins.path()], None);
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    let err = report.errors[0].to_string();
    assert!(
        err.contains("--prefer wasm") && err.contains("charges"),
        "{err}"
    );
    for form in [Form::Wasm, Form::Native] {
        let mut registry = Registry::new();
        registry.prefer(Some(form));
        let report = registry.load_dirs(&[plugins.path()], None);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        let entry = registry.get("charges").unwrap();
        assert_eq!(Form::of(&entry.origin), Some(form));
    }
}

/// What docs/WRITING_A_RULESET.md tells an author: the template, copied outside the workspace, built with
/// `cargo build --release --target wasm32-unknown-unknown`, loads from that directory first try.
#[test]
fn newcomer_builds_the_template_as_webassembly_outside_the_workspace_and_plays_it() {
    // Skips (saying how to install the target) exactly when the workspace's modules do.
    if wasm_modules().is_none() {
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let crate_dir = work.path().join("my-ruleset");
    crate::loader::copy_dir(&coffer_tests::repo_root().join("template"), &crate_dir);
    let manifest = crate_dir.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let core = coffer_tests::repo_root().join("core");
    let replaced = text.replace(
        "path = \"../core\"",
        &format!("path = {:?}", core.display().to_string()),
    );
    std::fs::write(&manifest, replaced).unwrap();
    std::fs::copy(
        coffer_tests::repo_root().join("Cargo.lock"),
        crate_dir.join("Cargo.lock"),
    )
    .unwrap();
    let target = coffer_tests::target_dir().join("template-wasm");
    let output =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args([
                "build",
                "--quiet",
                "--release",
                "--target",
                "wasm32-unknown-unknown",
            ])
            .current_dir(&crate_dir)
            .env("CARGO_TARGET_DIR", &target)
            .output()
            .expect("cargo runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let built = target.join("wasm32-unknown-unknown/release");
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[&built], None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let (key, path) = &report.loaded[0];
    assert_eq!(path.file_name().unwrap(), "my_ruleset.wasm");
    let entry = registry.get(key).unwrap();
    assert_eq!(Form::of(&entry.origin), Some(Form::Wasm));
    let d = entry.ruleset.description();
    let mut game = entry
        .ruleset
        .new_game(&Setup::new(d.min_players, 1))
        .unwrap();
    assert!(play(&mut *game, 1, 200) > 0);
    assert_ne!(game.outcome(), coffer_core::Outcome::Ongoing);
}

/// Runs `coffer --plugin-dir DIR ARGS` in this process.
fn coffer(dir: &Path, args: &[&str]) -> coffer_cli::Status {
    let mut argv = vec!["coffer", "--plugin-dir", dir.to_str().unwrap()];
    argv.extend_from_slice(args);
    coffer_cli::run_args(&argv).unwrap_or_else(|e| panic!("coffer {args:?}: {e:#}"))
}

/// Every command of `coffer` on the three rulesets, from a directory holding only their modules.
#[test]
fn every_command_hosts_the_wasm_rulesets_from_a_directory_of_modules_alone() {
    use coffer_cli::Status::Success;
    let Some(modules) = wasm_modules() else {
        return;
    };
    let files: Vec<PathBuf> = BUILTIN
        .iter()
        .map(|(_, crate_name)| module_of(&modules, crate_name))
        .collect();
    let plugins =
        coffer_tests::plugin_dir_with(&files.iter().map(PathBuf::as_path).collect::<Vec<_>>());
    let dir = plugins.path();
    let work = tempfile::tempdir().unwrap();
    assert_eq!(coffer(dir, &["rulesets"]), Success);
    let scripts = coffer_tests::repo_root().join("plugins");
    assert_eq!(
        coffer(dir, &["demo", "--scripts", scripts.to_str().unwrap()]),
        Success
    );
    for (id, _) in BUILTIN {
        assert_eq!(coffer(dir, &["describe", id]), Success, "{id}");
        let statik = static_ruleset(id).unwrap();
        let players = statik.description().min_players.max(2);
        let save = work.path().join(format!("{id}.json"));
        let save = save.to_str().unwrap();
        let n = players.to_string();
        assert_eq!(
            coffer(
                dir,
                &["new", id, "--players", &n, "--seed", "3", "-o", save]
            ),
            Success,
            "{id}"
        );
        // The first legal action of whoever may act, found on the static twin of the saved game.
        let mut twin = statik.new_game(&Setup::new(players, 3)).unwrap();
        let acting = twin.acting().iter().find(|a| a.legal > 0).copied().unwrap();
        twin.legal_actions(acting.owner());
        let action = twin.legal_action_json(0).unwrap();
        let seat = acting.player.to_string();
        assert_eq!(
            coffer(dir, &["act", save, "--player", &seat, &action]),
            Success,
            "{id}"
        );
        for command in [
            vec!["show", save],
            vec!["show", save, "--player", "0"],
            vec!["log", save],
            vec!["replay", save],
            vec!["legal", save, "--player", &seat],
        ] {
            assert_eq!(coffer(dir, &command), Success, "{id}: {command:?}");
        }
        let repro = work.path().to_str().unwrap();
        assert_eq!(
            coffer(
                dir,
                &[
                    "simulate",
                    id,
                    "--games",
                    "3",
                    "--seed",
                    "2",
                    "--max-actions",
                    "200",
                    "--repro-dir",
                    repro
                ]
            ),
            Success,
            "{id}"
        );
    }
}

/// A lock file pins `.wasm` files as it pins libraries.
#[test]
fn a_lock_file_pins_webassembly_modules_by_their_sha256() {
    let Some(modules) = wasm_modules() else {
        return;
    };
    let module = module_of(&modules, "coffer_charges");
    let plugins = coffer_tests::plugin_dir_with(&[&module]);
    let sha = coffer_host::loader::sha256_file(&module).unwrap();
    let lock_path = plugins.path().join("coffer-plugins.lock");
    for (pin, loads) in [(sha.clone(), true), ("0".repeat(64), false)] {
        let text = format!("{pin}  coffer-charges.wasm\n");
        let lock = coffer_host::loader::LockFile::parse(&lock_path, &text).unwrap();
        let mut registry = Registry::new();
        let report = registry.load_dirs(&[plugins.path()], Some(&lock));
        if loads {
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            assert!(registry.get("charges").is_ok());
        } else {
            let err = report.errors[0].to_string();
            assert!(
                err.contains("sha256 mismatch") && err.contains(&sha),
                "{err}"
            );
            assert!(registry.get("charges").is_err());
        }
    }
}

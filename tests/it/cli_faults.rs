//! The `coffer` command with a plugin that fails: a failure is reported as the plugin's, never as a lost
//! action or a damaged save.

use coffer_cli::{Status, run_args};
use coffer_host::save::{self, SaveError, SaveFile};
use coffer_tests::{fixture_library, plugin_dir_with};
use std::path::{Path, PathBuf};

/// A fresh copy of the faulty fixture in a directory of its own: a library that panicked stays poisoned
/// in this process, and a copy at another path is loaded anew.
fn fresh_plugins() -> tempfile::TempDir {
    plugin_dir_with(&[&fixture_library("faulty")])
}

/// A new 2-player game of the faulty fixture whose `fault` is `fault`, in a directory of its own.
fn faulty_save(fault: &str) -> (tempfile::TempDir, PathBuf) {
    let plugins = fresh_plugins();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, format!(r#"{{"fault": "{fault}"}}"#)).unwrap();
    let game = dir.path().join("game.json");
    let status = coffer(
        plugins.path(),
        &[
            "new",
            "fixture-faulty",
            "--players",
            "2",
            "--config",
            config.to_str().unwrap(),
            "-o",
            game.to_str().unwrap(),
        ],
    )
    .expect("a new game of the faulty fixture");
    assert_eq!(status, Status::Success);
    (dir, game)
}

/// Runs `coffer --plugin-dir PLUGINS ARGS` in this process.
fn coffer(plugins: &Path, args: &[&str]) -> anyhow::Result<Status> {
    let mut argv = vec!["coffer", "--plugin-dir", plugins.to_str().unwrap()];
    argv.extend_from_slice(args);
    run_args(&argv)
}

fn registry(plugins: &Path) -> coffer_host::Registry {
    let mut registry = coffer_host::Registry::new();
    let report = registry.load_dirs(&[plugins.to_owned()], None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    registry
}

#[test]
fn act_whose_result_cannot_be_shown_exits_3_and_keeps_the_saved_action() {
    // The fixture panics naming a resource once a move was made: after the action is applied and saved,
    // while `act` shows its result.
    let (_dir, game) = faulty_save("label");
    let g = game.to_str().unwrap();
    let status = coffer(
        fresh_plugins().path(),
        &["act", g, "--player", "0", r#"{"type":"take","n":1}"#],
    )
    .expect("a saved action is no failure of the command");
    assert_eq!(status, Status::SavedNotShown);
    assert_eq!(status.code(), 3, "the documented exit status");
    let saved = SaveFile::read(&game).unwrap();
    assert_eq!(saved.log.len(), 1, "the action was saved");
    assert_eq!(saved.log[0].action.get(), r#"{"type":"take","n":1}"#);
    // The save reads back: the fault is in showing it, not in the file.
    save::load_verified(&game, &registry(fresh_plugins().path())).expect("the save replays");
}

#[test]
fn a_plugin_panic_while_hashing_a_save_is_the_plugins_failure_not_a_damaged_save() {
    let (_dir, game) = faulty_save("hash");
    // A state whose hashing panics (the fixture's switch, set in the snapshot).
    let text = std::fs::read_to_string(&game).unwrap();
    let switched = text.replacen("\"hash_fault\":false", "\"hash_fault\":true", 1);
    assert_ne!(switched, text, "the snapshot holds the switch: {text}");
    std::fs::write(&game, &switched).unwrap();
    let plugins = fresh_plugins();
    let err = save::load(&game, &registry(plugins.path()))
        .expect_err("a plugin that panics gives no game");
    let SaveError::Plugin { ruleset, message } = &err else {
        panic!("expected the plugin's failure, not the save's: {err}")
    };
    assert_eq!(ruleset, "fixture-faulty@0.1.0");
    assert!(message.contains("fixture fault in hash"), "{message}");
    let said = err.to_string();
    assert!(
        said.contains("the ruleset 'fixture-faulty@0.1.0' failed")
            && said.contains("not of the save file")
            && !said.contains("save file field"),
        "{said}"
    );
    // `replay` says the same, and so does every command.
    let plugins = fresh_plugins();
    let replayed = SaveFile::read(&game)
        .unwrap()
        .replay(&registry(plugins.path()));
    assert!(
        matches!(replayed, Err(SaveError::Plugin { .. })),
        "{replayed:?}"
    );
    for command in ["show", "log", "legal"] {
        let mut args = vec![command, game.to_str().unwrap()];
        if command == "legal" {
            args.extend(["--player", "0"]);
        }
        let err = coffer(fresh_plugins().path(), &args).expect_err("the plugin failed");
        let said = coffer_host::render::error_chain(err.as_ref());
        assert!(
            said.contains("fixture-faulty@0.1.0") && !said.contains("save file field"),
            "{command}: {said}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(&game).unwrap(),
        switched,
        "left alone"
    );
}

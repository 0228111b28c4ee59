//! `coffer` and its plugins: where they load from, what is refused and skipped, lock files, probes, the
//! deadline option, and `rulesets` / `describe`.

use crate::support::{PLUGINS, bare, coffer, library_file, ok, plugin_dir};
use serde_json::{Value, json};
use std::process::Command;

#[test]
fn rulesets_lists_every_runtime_loaded_plugin() {
    let run = ok(coffer(&["rulesets"]));
    for (id, _) in PLUGINS {
        assert!(
            run.stdout.contains(&format!("{id}@0.1.0")),
            "{}",
            run.stdout
        );
    }
    assert!(run.stdout.contains("(library "), "{}", run.stdout);
    let list = ok(coffer(&["--format", "json", "rulesets"])).json();
    let ids: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["charges", "command-tokens", "story-acts"]);
}

#[test]
fn the_command_links_no_ruleset_and_says_how_to_get_them() {
    let run = bare(&["rulesets"]);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.contains("no ruleset is loaded"),
        "{}",
        run.stdout
    );
    let run = bare(&["demo"]);
    run.fails_with(1, "cargo build --release --workspace");
    assert!(run.stderr.contains("--plugin-dir"), "{}", run.stderr);
}

#[test]
fn plugins_also_load_from_coffer_plugin_path() {
    let out = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .args(["--format", "json", "rulesets"])
        .env(
            "COFFER_PLUGIN_PATH",
            format!("/nonexistent-coffer-dir:{}", plugin_dir().display()),
        )
        .output()
        .unwrap();
    assert!(out.status.success());
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("warning") && stderr.contains("/nonexistent-coffer-dir"),
        "{stderr}"
    );
}

#[test]
fn a_bad_plugin_file_is_a_warning_and_is_skipped() {
    let dir = tempfile::tempdir().unwrap();
    for (_, name) in PLUGINS {
        let file = format!(
            "{}{name}{}",
            std::env::consts::DLL_PREFIX,
            std::env::consts::DLL_SUFFIX
        );
        std::fs::copy(plugin_dir().join(&file), dir.path().join(&file)).unwrap();
    }
    let bogus = format!(
        "{}coffer_bogus{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    );
    std::fs::write(dir.path().join(&bogus), "this is not a library").unwrap();
    let run = ok(bare(&[
        "--plugin-dir",
        dir.path().to_str().unwrap(),
        "rulesets",
    ]));
    assert!(
        run.stderr.contains("warning") && run.stderr.contains(&bogus),
        "{}",
        run.stderr
    );
    for (id, _) in PLUGINS {
        assert!(run.stdout.contains(id), "{}", run.stdout);
    }
}

#[test]
fn a_lock_file_lets_only_pinned_libraries_load() {
    let charges = library_file("coffer_charges");
    let story = library_file("coffer_story_acts");
    let good = coffer_host::loader::sha256_file(&plugin_dir().join(&charges)).unwrap();
    let wrong = "0".repeat(64);
    let dir = tempfile::tempdir().unwrap();
    let lock = dir.path().join("coffer-plugins.lock");
    std::fs::write(&lock, format!("{good}  {charges}\n{wrong}  {story}\n")).unwrap();
    let run = ok(coffer(&[
        "--lock",
        lock.to_str().unwrap(),
        "--format",
        "json",
        "rulesets",
    ]));
    let ids: Vec<String> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["charges"]);
    assert!(
        run.stderr.contains(&wrong) && run.stderr.contains(&story),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains(&library_file("coffer_command_tokens")),
        "{}",
        run.stderr
    );
    // A malformed lock file fails the command rather than loading anything unpinned.
    std::fs::write(&lock, "not a lock file\n").unwrap();
    let run = coffer(&["--lock", lock.to_str().unwrap(), "rulesets"]);
    assert_eq!(run.code, 1, "{}", run.stdout);
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains("lock"),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn plugins_check_probes_each_library_and_names_the_refused_one() {
    let run = coffer(&["plugins", "check", plugin_dir().to_str().unwrap()]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    for (id, _) in PLUGINS {
        assert!(
            run.stdout.contains(&format!("{id}@0.1.0")),
            "{}",
            run.stdout
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let bogus = dir.path().join(library_file("bogus"));
    std::fs::write(&bogus, b"not a library").unwrap();
    let run = coffer(&["plugins", "check", dir.path().to_str().unwrap()]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stdout.contains("bogus"), "{}", run.stdout);
    // The same directory as the only plugin directory: nothing loads, and `rulesets` says so with status 1.
    let run = bare(&["--plugin-dir", dir.path().to_str().unwrap(), "rulesets"]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("bogus"), "{}", run.stderr);
}

#[test]
fn the_plugin_deadline_option_is_bounded() {
    let run = coffer(&["--plugin-deadline", "0", "rulesets"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("from 0.01 to 86400"), "{}", run.stderr);
    ok(coffer(&["--plugin-deadline", "5", "rulesets"]));
}

#[test]
fn describe_shows_actions_and_options_as_text_and_json() {
    for (id, _) in PLUGINS {
        let text = ok(coffer(&["describe", id])).stdout;
        assert!(text.starts_with(&format!("{id}@0.1.0 — ")), "{text}");
        assert!(
            text.contains("actions:") && text.contains("e.g. {"),
            "{text}"
        );
        let d = ok(coffer(&["describe", id, "--json"])).json();
        assert_eq!(d["id"], json!(id));
        assert!(!d["actions"].as_array().unwrap().is_empty());
        assert_eq!(ok(coffer(&["--format", "json", "describe", id])).json(), d);
    }
    let run = coffer(&["--format", "json", "describe", "chess"]);
    assert_eq!(run.code, 1);
    assert!(
        run.json()["error"]
            .as_str()
            .unwrap()
            .starts_with("unknown ruleset 'chess'")
    );
    let run = coffer(&["describe", "chess"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr.trim(),
        "error: unknown ruleset 'chess'; known: charges@0.1.0, command-tokens@0.1.0, story-acts@0.1.0"
    );
}

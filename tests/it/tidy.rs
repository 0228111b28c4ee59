//! Tidy checks: the README's two set-up commands are the ones CI runs, and every source file says what
//! lives in it.

use crate::shape::rust_files;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shell commands in the README's "Set up" section, in order.
fn setup_commands() -> Vec<String> {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md is readable");
    let section = readme
        .split("## Set up")
        .nth(1)
        .expect("README.md has a '## Set up' section")
        .split("\n## ")
        .next()
        .unwrap_or_default();
    let mut commands = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
        } else if in_block && !line.trim().is_empty() {
            commands.push(line.trim().to_string());
        }
    }
    commands
}

#[test]
fn readme_has_exactly_two_setup_commands_and_ci_runs_both() {
    let commands = setup_commands();
    assert_eq!(commands.len(), 2, "README set-up commands: {commands:?}");
    assert_eq!(commands[1], "cargo test --workspace");
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect(".ci/run is readable");
    let ci_lines: Vec<&str> = ci.lines().map(str::trim).collect();
    for command in &commands {
        assert!(
            ci_lines.contains(&command.as_str()),
            ".ci/run does not run `{command}` as written in README.md"
        );
    }
}

#[test]
fn every_source_file_starts_with_a_module_doc_line() {
    let mut files = Vec::new();
    for dir in [
        "bench", "core", "host", "plugins", "server", "tests", "template", "xtask",
    ] {
        files.extend(rust_files(&root().join(dir)));
    }
    assert!(files.len() > 20, "found only {} Rust files", files.len());
    let missing: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap_or_default();
            !text.trim_start().starts_with("//!")
        })
        .map(|f| f.strip_prefix(root()).unwrap_or(f).display().to_string())
        .collect();
    assert!(
        missing.is_empty(),
        "files without a `//!` first line: {missing:?}"
    );
}

/// Words of the bundled rulesets' games (their kinds, cards, phases and actions). The kernel knows no game:
/// none of them may appear in core's sources (`core/src` and its crates' `src`), in code, docs or messages
/// (ARCHITECTURE.md).
const GAME_WORDS: [&str; 24] = [
    "treasury",
    "votes",
    "x-wing",
    "xwing",
    "force",
    "shield",
    "discard",
    "fleet",
    "tactic",
    "strategy card",
    "jedi",
    "sith",
    "maneuver",
    "dial",
    "story point",
    "galactic",
    "ship",
    "faction",
    "twilight",
    "deploy",
    "upgrade",
    "torpedo",
    "reinforcement",
    "command token",
];

#[test]
fn core_src_holds_no_game_word() {
    let mut files = Vec::new();
    for dir in [
        "core/src",
        "core/kernel/src",
        "core/sdk/src",
        "core/abi/src",
    ] {
        files.extend(rust_files(&root().join(dir)));
    }
    assert!(!files.is_empty());
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap().to_lowercase();
        for (n, line) in text.lines().enumerate() {
            for word in GAME_WORDS {
                // Whole words only: "enforce" is no "force", "relationship" no "ship".
                let hit = line.match_indices(word).any(|(at, _)| {
                    let before = line[..at].chars().next_back();
                    let after = line[at + word.len()..].chars().next();
                    // `Weak::upgrade` is Rust's, not a game's.
                    !line[..at].ends_with("::")
                        && !before.is_some_and(char::is_alphanumeric)
                        && !after.is_some_and(|c| c.is_alphanumeric() && c != 's')
                });
                if hit {
                    found.push(format!("{}:{}: {word}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "game words in core's sources:\n{}",
        found.join("\n")
    );
}

/// The value of `key = value` in the `[table]` of a manifest's text.
fn manifest_value(text: &str, table: &str, key: &str) -> Option<String> {
    let section = text.split(&format!("[{table}]\n")).nth(1)?;
    let section = section.split("\n[").next()?;
    section.lines().find_map(|line| {
        let (k, v) = line.split_once('=')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

#[test]
fn core_manifests_write_out_the_workspace_keys_and_lints_they_cannot_inherit() {
    let workspace = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    for manifest in [
        "core/Cargo.toml",
        "core/kernel/Cargo.toml",
        "core/sdk/Cargo.toml",
        "core/abi/Cargo.toml",
    ] {
        core_manifest_agrees(&workspace, manifest);
    }
}

fn core_manifest_agrees(workspace: &str, manifest: &str) {
    let core = std::fs::read_to_string(root().join(manifest)).unwrap();
    for key in ["version", "edition", "license"] {
        assert_eq!(
            manifest_value(&core, "package", key),
            manifest_value(workspace, "workspace.package", key),
            "{manifest}'s {key} differs from the workspace's"
        );
    }
    // What a ruleset builds on keeps the rulesets' minimum Rust, older than the hosts' (wasmtime's).
    let rulesets = std::fs::read_to_string(root().join("plugins/charges/Cargo.toml")).unwrap();
    let minimum = manifest_value(&rulesets, "package", "rust-version");
    assert!(
        minimum.is_some(),
        "plugins/charges/Cargo.toml states its rust-version"
    );
    assert_eq!(
        manifest_value(&core, "package", "rust-version"),
        minimum,
        "{manifest}'s rust-version differs from the rulesets'"
    );
    let version = |v: Option<String>| -> Vec<u32> {
        v.unwrap_or_default()
            .trim_matches('"')
            .split('.')
            .map(|n| n.parse().unwrap_or(0))
            .collect()
    };
    assert!(
        version(minimum)
            <= version(manifest_value(
                workspace,
                "workspace.package",
                "rust-version"
            )),
        "the rulesets' minimum Rust is newer than the hosts'"
    );
    for (table, key) in [
        ("lints.rust", "missing_docs"),
        ("lints.rust", "unsafe_code"),
        ("lints.clippy", "undocumented_unsafe_blocks"),
    ] {
        assert_eq!(
            manifest_value(&core, table, key),
            manifest_value(workspace, &format!("workspace.{table}"), key),
            "{manifest}'s [{table}] {key} differs from the workspace's"
        );
    }
}

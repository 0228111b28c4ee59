//! The `coffer` command's bounds: what a configuration may be, how large a save it writes and reads, how
//! much of a person's input it repeats, and why it may not write a save.

use crate::support::{Run, coffer, ok, plugin_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `coffer --plugin-dir <the plugins> ARGS` with extra environment variables.
fn coffer_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .arg("--plugin-dir")
        .arg(plugin_dir())
        .args(args)
        .env_remove("COFFER_PLUGIN_PATH")
        .env_remove("RUST_LOG")
        .envs(env.iter().copied())
        .output()
        .expect("coffer runs");
    Run {
        code: out.status.code().expect("an exit code"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// A new charges game in `dir`, started with the configuration file `config` when given.
fn new_charges(dir: &Path, config: Option<&Path>) -> PathBuf {
    let path = dir.join("game.json");
    let mut args = vec![
        "new",
        "charges",
        "--players",
        "2",
        "-o",
        path.to_str().unwrap(),
    ];
    if let Some(config) = config {
        args.extend(["--config", config.to_str().unwrap()]);
    }
    ok(coffer(&args));
    path
}

const PLAN: &str = r#"{"type":"plan","ship":0,"maneuver":"blue"}"#;

#[test]
fn a_config_that_is_not_an_object_is_refused_in_plain_words() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    for (text, found) in [
        ("[1,2,3]", "found a list"),
        ("7", "found a number"),
        ("\"fast\"", "found a string"),
    ] {
        std::fs::write(&config, text).unwrap();
        let out = dir.path().join("game.json");
        let run = coffer(&[
            "new",
            "charges",
            "--players",
            "2",
            "--config",
            config.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.code, 1, "{text}: {}", run.stderr);
        assert!(
            run.stderr.contains("must be a JSON object of options") && run.stderr.contains(found),
            "{text}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("sequence"), "{}", run.stderr);
        assert!(!out.exists(), "nothing is written");
    }
}

#[test]
fn the_config_is_saved_on_one_line_so_a_save_never_outgrows_what_was_given() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        "{\n  \"max_rounds\": 5,\n  \"force_recovery\": \"one\"\n}\n",
    )
    .unwrap();
    let game = new_charges(dir.path(), Some(&config));
    let text = std::fs::read_to_string(&game).unwrap();
    assert!(
        text.contains("\n  \"config\": {\"max_rounds\":5,\"force_recovery\":\"one\"},\n"),
        "{text}"
    );
    ok(coffer(&[
        "act",
        game.to_str().unwrap(),
        "--player",
        "0",
        PLAN,
    ]));
    ok(coffer(&["replay", game.to_str().unwrap()]));
}

/// `game`'s text with its configuration replaced by `config`.
fn with_config(game: &Path, config: &str) -> String {
    let text = std::fs::read_to_string(game).unwrap();
    assert!(text.contains("\"config\": null"), "{text}");
    text.replacen("\"config\": null", &format!("\"config\": {config}"), 1)
}

#[test]
fn a_save_whose_config_is_over_1_mib_or_not_an_object_is_refused_before_it_is_built() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_charges(dir.path(), None);
    let g = game.to_str().unwrap();
    // A save with an action: reading it never starts a game from its configuration.
    ok(coffer(&["act", g, "--player", "0", PLAN]));
    // An indented list of zeros took 70 times its bytes in memory, and 3.5 times its bytes when saved.
    let large = format!(
        "{{\"max_rounds\": 5, \"padding\": [{}0]}}",
        "0,".repeat(600_000)
    );
    let list = format!("[{}0]", "0,".repeat(1_000));
    for (config, says) in [
        (
            large.as_str(),
            "more than the limit of 1048576 bytes (1 MiB)",
        ),
        (list.as_str(), "must be a JSON object of options"),
    ] {
        std::fs::write(&game, with_config(&game, config)).unwrap();
        let damaged = std::fs::read(&game).unwrap();
        for command in ["show", "log", "replay"] {
            let run = coffer(&[command, g]);
            assert_eq!(run.code, 1, "{command}: {}", run.stderr);
            assert!(
                run.stderr.contains("save file field 'config'") && run.stderr.contains(says),
                "{command}: {}",
                run.stderr
            );
            assert!(run.stderr.len() < 600, "{}", run.stderr);
        }
        let run = coffer(&["act", g, "--player", "1", PLAN]);
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert_eq!(std::fs::read(&game).unwrap(), damaged, "left as it was");
        // Back to a good save for the next case.
        let text = String::from_utf8(damaged).unwrap();
        std::fs::write(&game, text.replacen(config, "null", 1)).unwrap();
        ok(coffer(&["show", g]));
    }
}

#[test]
fn act_refuses_to_write_a_save_larger_than_coffer_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_charges(dir.path(), None);
    let g = game.to_str().unwrap();
    let before = std::fs::read(&game).unwrap();
    // The limit lets the save be read, but not grow by an action.
    let limit = (before.len() + 8).to_string();
    let env = [("COFFER_MAX_FILE_BYTES", limit.as_str())];
    ok(coffer_env(&["show", g], &env));
    let run = coffer_env(&["act", g, "--player", "0", PLAN], &env);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.starts_with(&format!(
            "error: the action was not saved to game {g}: the game would take "
        )) && run.stderr.contains(&format!(
            "more than the limit of {limit} bytes that coffer reads back (set COFFER_MAX_FILE_BYTES to raise it); nothing was written"
        )),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&game).unwrap(), before, "left as it was");
    // Nor does `new` write a save it could not read back.
    let other = dir.path().join("other.json");
    let run = coffer_env(
        &[
            "new",
            "charges",
            "--players",
            "2",
            "-o",
            other.to_str().unwrap(),
        ],
        &[("COFFER_MAX_FILE_BYTES", "100")],
    );
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("nothing was written"), "{}", run.stderr);
    assert!(!other.exists());
}

#[test]
fn a_long_script_line_is_echoed_as_a_short_prefix_and_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("long.jsonl");
    let line = format!(r#"{{"player": 0, "act": "{}"}}"#, "x".repeat(900_000));
    std::fs::write(&script, format!("{line}\n")).unwrap();
    let run = coffer(&[
        "play",
        "charges",
        "--players",
        "2",
        "--script",
        script.to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.len() < 1_000, "{} bytes", run.stderr.len());
    assert!(
        run.stderr.contains(&format!("… ({} bytes)", line.len())),
        "{}",
        run.stderr
    );
}

#[test]
fn a_save_owned_by_another_user_is_refused_naming_the_owner_not_the_mode() {
    let run = if effective_uid() == 0 {
        // As root, write is always allowed: run the command as the unprivileged user `nobody` instead,
        // on a save root owns that only its owner may write.
        let dir = tempfile::tempdir().unwrap();
        let game = new_charges(dir.path(), None);
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&game, std::fs::Permissions::from_mode(0o644)).unwrap();
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_coffer"))
            .arg("--plugin-dir")
            .arg(plugin_dir())
            .args(["act", game.to_str().unwrap(), "--player", "0", PLAN])
            .output()
            .expect("setpriv runs (util-linux)");
        let run = Run {
            code: out.status.code().expect("an exit code"),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        };
        assert!(run.stderr.contains("(user 65534)"), "{}", run.stderr);
        run
    } else {
        // Any other user: a file root owns with mode 0644.
        coffer(&["act", "/etc/passwd", "--player", "0", PLAN])
    };
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stderr.contains("belongs to user 0, not to you")
            && run
                .stderr
                .contains("its mode 0644 does not let you write it")
            && !run.stderr.contains("is read-only")
            && !run.stderr.contains("chmod"),
        "{}",
        run.stderr
    );
}

/// This process's effective user id (from `/proc`, without a libc binding).
fn effective_uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("Uid:"))
        .expect("a Uid line");
    line.split_whitespace().nth(2).unwrap().parse().unwrap()
}

#[test]
fn the_help_documents_exit_status_3_for_an_action_saved_but_not_shown() {
    let run = ok(coffer(&["--help"]));
    assert!(
        run.stdout
            .contains("3 when `act` saved the action but showing its result failed"),
        "{}",
        run.stdout
    );
}

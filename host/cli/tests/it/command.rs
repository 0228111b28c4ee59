//! The command itself: usage errors and help, error chains, logging flags, closed pipes, bounded options.

use crate::support::{bare, coffer, first_line_then_close, new_game, ok, plugin_dir};
use std::process::Command;

#[test]
fn usage_errors_exit_with_2_and_help_is_complete() {
    for args in [
        &["frobnicate"][..],
        &["new", "charges"],
        &["--format", "yaml", "rulesets"],
        &[],
    ] {
        let run = coffer(args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
    }
    let help = ok(bare(&["--help"])).stdout;
    for word in [
        "rulesets",
        "describe",
        "new",
        "act",
        "play",
        "show",
        "replay",
        "legal",
        "demo",
        "--plugin-dir",
        "--lock",
        "--format",
        "COFFER_PLUGIN_PATH",
        "Exit status",
    ] {
        assert!(help.contains(word), "--help does not mention {word}");
    }
    for sub in [
        "rulesets", "describe", "new", "act", "play", "show", "replay", "legal", "demo",
    ] {
        let help = ok(bare(&[sub, "--help"])).stdout;
        assert!(
            help.lines().count() > 8,
            "{sub} --help is too short: {help}"
        );
    }
}

#[test]
fn an_error_chain_is_printed_once() {
    #[derive(Debug, thiserror::Error)]
    #[error("cannot read x: {source}")]
    struct Repeats {
        source: std::io::Error,
    }
    #[derive(Debug, thiserror::Error)]
    #[error("cannot load game")]
    struct Outer(#[source] Repeats);
    let err = Outer(Repeats {
        source: std::io::Error::other("disk on fire"),
    });
    assert_eq!(
        coffer_host::render::error_chain(&err),
        "cannot load game: cannot read x: disk on fire"
    );
}

#[test]
fn verbose_flags_and_rust_log_send_logs_to_stderr() {
    let quiet = ok(coffer(&["rulesets"]));
    assert!(quiet.stderr.is_empty(), "{}", quiet.stderr);
    let run = ok(coffer(&["-v", "rulesets"]));
    assert!(
        run.stderr.contains("INFO") && run.stderr.contains("loaded"),
        "{}",
        run.stderr
    );
    assert!(
        !run.stderr.contains('\u{1b}'),
        "no colour codes when stderr is not a terminal"
    );
    assert_eq!(run.stdout, quiet.stdout, "logs never go to stdout");
    // Events emitted inside the runtime-loaded plugins reach the command's subscriber at debug level.
    let run = ok(coffer(&["-vv", "demo", "--actions", "5"]));
    assert!(
        run.stderr.contains("DEBUG") && run.stderr.contains("coffer_charges"),
        "{}",
        run.stderr
    );
    let out = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .args(["--plugin-dir", plugin_dir().to_str().unwrap(), "rulesets"])
        .env("RUST_LOG", "info")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stderr).contains("loaded"));
}

#[test]
fn a_closed_pipe_ends_describe_and_legal_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_game(dir.path(), "story-acts");
    for args in [
        vec!["describe", "command-tokens"],
        vec!["legal", game.to_str().unwrap(), "--player", "0"],
        vec!["log", game.to_str().unwrap()],
    ] {
        let (line, status, stderr) = first_line_then_close(&args);
        assert!(!line.is_empty(), "{args:?}");
        assert_eq!(status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

#[test]
fn numeric_options_are_bounded_with_a_message() {
    for (args, bound) in [
        (
            vec!["simulate", "charges", "--threads", "100000"],
            "1..=256",
        ),
        (
            vec!["simulate", "charges", "--threads", "18446744073709551615"],
            "",
        ),
        (vec!["simulate", "charges", "--games", "0"], "1..=100000000"),
        (vec!["demo", "--actions", "0"], "1..=1000000"),
    ] {
        let run = coffer(&args);
        assert_eq!(run.code, 2, "{args:?}: {}", run.stderr);
        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
        assert!(run.stderr.contains(bound), "{args:?}: {}", run.stderr);
    }
}

//! The `coffer` command end to end, with the real plugins loaded at runtime from their cdylibs.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The bundled rulesets and the library file each one is built into.
pub(crate) const PLUGINS: [(&str, &str); 3] = [
    ("charges", "coffer_charges"),
    ("command-tokens", "coffer_command_tokens"),
    ("story-acts", "coffer_story_acts"),
];

/// A directory holding exactly the three plugin libraries, copied from `target/<profile>/deps` where cargo
/// builds the dev-dependencies' cdylibs (that directory also holds proc-macro libraries, which are not
/// plugins). Fails loudly when a library is missing: these tests never skip.
pub(crate) fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let deps = exe.parent().expect("target/<profile>/deps");
        let dir = deps
            .parent()
            .expect("target/<profile>")
            .join("coffer-it-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        for (_, name) in PLUGINS {
            let file = library_file(name);
            let from = deps.join(&file);
            assert!(
                from.is_file(),
                "plugin library {} is missing: coffer-cli's dev-dependencies should have built it",
                from.display()
            );
            // Copy then rename, so that test processes running at once (cargo nextest) never load a
            // half-written library.
            let tmp = dir.join(format!("{file}.{}.tmp", std::process::id()));
            std::fs::copy(&from, &tmp).unwrap();
            std::fs::rename(&tmp, dir.join(&file)).unwrap();
        }
        dir
    })
}

/// The file name of a library for a crate name on this platform (`libcoffer_charges.so`).
fn library_file(name: &str) -> String {
    format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// What a run printed and returned.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Run {
    /// Asserts that the run ended with `code` and that its stderr holds `text` (showing stderr otherwise).
    pub(crate) fn fails_with(&self, code: i32, text: &str) {
        assert_eq!(self.code, code, "stderr: {}", self.stderr);
        assert!(self.stderr.contains(text), "{}", self.stderr);
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

/// Runs `coffer` with no plugin directory.
fn bare(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .args(args)
        .env_remove("COFFER_PLUGIN_PATH")
        .env_remove("RUST_LOG")
        .output()
        .expect("coffer runs");
    Run {
        code: out.status.code().expect("an exit code"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Runs `coffer --plugin-dir <the plugins> ARGS`.
pub(crate) fn coffer(args: &[&str]) -> Run {
    let dir = plugin_dir().to_str().unwrap().to_owned();
    let mut all = vec!["--plugin-dir", &dir];
    all.extend_from_slice(args);
    bare(&all)
}

pub(crate) fn ok(run: Run) -> Run {
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    run
}

pub(crate) fn players(id: &str) -> &'static str {
    if id == "command-tokens" { "3" } else { "2" }
}

/// Starts a game of `id` in `dir`.
fn new_game(dir: &Path, id: &str) -> PathBuf {
    let path = dir.join(format!("{id}.json"));
    ok(coffer(&[
        "new",
        id,
        "--players",
        players(id),
        "--seed",
        "5",
        "-o",
        path.to_str().unwrap(),
    ]));
    path
}

/// The first player with a legal action, and that action.
fn first_legal(game: &Path, players: u16) -> (u16, Value) {
    for p in 0..players {
        let run = ok(coffer(&[
            "--format",
            "json",
            "legal",
            game.to_str().unwrap(),
            "--player",
            &p.to_string(),
        ]));
        if let Some(action) = run.json().as_array().unwrap().first() {
            return (p, action.clone());
        }
    }
    panic!("no player has a legal action in {}", game.display());
}

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

/// Applies the first legal action of `game` (of `n` players) three times, each with
/// `coffer FRONT act GAME --player P ACTION`, and returns the runs (each checked to succeed).
fn act_three_times(game: &Path, n: u16, front: &[&str]) -> Vec<Run> {
    (0..3)
        .map(|_| {
            let (p, action) = first_legal(game, n);
            let (p, action) = (p.to_string(), action.to_string());
            let mut args = front.to_vec();
            args.extend(["act", game.to_str().unwrap(), "--player", &p, &action]);
            ok(coffer(&args))
        })
        .collect()
}

#[test]
fn new_act_show_replay_and_legal_work_for_every_ruleset() {
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in PLUGINS {
        let game = new_game(dir.path(), id);
        let g = game.to_str().unwrap();
        let n: u16 = players(id).parse().unwrap();
        for run in act_three_times(&game, n, &["--format", "json"]) {
            assert!(run.json()["events"].is_array());
        }
        let save: Value = serde_json::from_str(&std::fs::read_to_string(&game).unwrap()).unwrap();
        assert_eq!(save["log"].as_array().unwrap().len(), 3);
        let show = ok(coffer(&["show", g])).stdout;
        assert!(
            show.starts_with(&format!("{id}@0.1.0: {n} players, seed 5, 3 actions")),
            "{show}"
        );
        assert!(
            show.contains("seen by a spectator") && show.contains("outcome: "),
            "{show}"
        );
        let shown = ok(coffer(&["--format", "json", "show", g])).json();
        assert!(!shown["resources"].as_array().unwrap().is_empty());
        let replay = ok(coffer(&["replay", g])).stdout;
        assert!(
            replay.starts_with("ok: 3 actions replayed to state hash "),
            "{replay}"
        );
        assert_eq!(
            replay.trim().rsplit(' ').next().unwrap(),
            save["state_hash"].as_str().unwrap()
        );
    }
}

#[test]
fn new_refuses_to_overwrite_and_bad_setups() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_game(dir.path(), "charges");
    let g = game.to_str().unwrap();
    let before = std::fs::read(&game).unwrap();
    let run = coffer(&["new", "charges", "--players", "2", "-o", g]);
    run.fails_with(1, "already exists; pass --force");
    assert_eq!(std::fs::read(&game).unwrap(), before);
    let run = coffer(&["new", "charges", "--players", "9", "--force", "-o", g]);
    run.fails_with(1, "9 players: this ruleset takes 2 to 4");
    assert_eq!(std::fs::read(&game).unwrap(), before);
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"no_such_option": 1}"#).unwrap();
    let run = coffer(&[
        "new",
        "charges",
        "--players",
        "2",
        "--config",
        config.to_str().unwrap(),
        "--force",
        "-o",
        g,
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains("invalid configuration") && run.stderr.contains("no_such_option"),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read(&game).unwrap(), before);
}

/// The example action of `other` whose type `id` does not have.
fn foreign_action(id: &str, other: &str) -> Value {
    let types = |r: &str| -> Vec<Value> {
        let d = ok(coffer(&["describe", r, "--json"])).json();
        d["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["value"].clone())
            .collect()
    };
    let own: Vec<Value> = types(id).iter().map(|a| a["type"].clone()).collect();
    types(other)
        .into_iter()
        .find(|a| !own.contains(&a["type"]))
        .expect("an action type only the other has")
}

/// A legal action with one number replaced by something out of range.
fn out_of_range(action: &Value, number: Value) -> Option<Value> {
    let map = action.as_object()?;
    let (key, _) = map.iter().find(|(_, v)| v.is_u64())?;
    let mut bad = action.clone();
    bad[key.as_str()] = number;
    Some(bad)
}

#[test]
fn bad_actions_are_refused_with_a_clear_error_and_leave_the_save_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in PLUGINS {
        let game = new_game(dir.path(), id);
        let g = game.to_str().unwrap();
        let n: u16 = players(id).parse().unwrap();
        let (p, legal) = first_legal(&game, n);
        // Make one move so the log is not empty.
        ok(coffer(&[
            "act",
            g,
            "--player",
            &p.to_string(),
            &legal.to_string(),
        ]));
        let (p, legal) = first_legal(&game, n);
        let before = std::fs::read(&game).unwrap();
        let other = if id == "charges" {
            "story-acts"
        } else {
            "charges"
        };
        let mut cases: Vec<(String, u16, String, &str)> = vec![
            (
                "malformed JSON".into(),
                p,
                r#"{"type": "#.into(),
                "malformed action",
            ),
            (
                "unknown action".into(),
                p,
                r#"{"type":"teleport"}"#.into(),
                "unknown variant `teleport`",
            ),
            (
                "wrong player".into(),
                n + 3,
                legal.to_string(),
                "is not in this",
            ),
            (
                "another ruleset's action".into(),
                p,
                foreign_action(id, other).to_string(),
                "unknown variant",
            ),
        ];
        // A player who may not act now (every ruleset here has a player waiting at the start).
        if let Some(waiting) = (0..n).find(|q| {
            let run = ok(coffer(&[
                "--format",
                "json",
                "legal",
                g,
                "--player",
                &q.to_string(),
            ]));
            run.json().as_array().unwrap().is_empty()
        }) {
            cases.push((
                "a player who may not act".into(),
                waiting,
                legal.to_string(),
                "cannot play",
            ));
        }
        if let Some(bad) = out_of_range(&legal, json!(1_000_000u64)) {
            cases.push((
                "number past the content".into(),
                p,
                bad.to_string(),
                "cannot play",
            ));
        }
        if let Some(bad) = out_of_range(&legal, json!(u64::MAX)) {
            cases.push(("u64::MAX".into(), p, bad.to_string(), "cannot play"));
        }
        if let Some(bad) = out_of_range(&legal, json!(-1)) {
            cases.push((
                "negative number".into(),
                p,
                bad.to_string(),
                "malformed action",
            ));
        }
        if let Some(bad) = out_of_range(&legal, json!(1e300)) {
            cases.push(("huge float".into(), p, bad.to_string(), "malformed action"));
        }
        assert!(cases.len() >= 7, "{id}: only {} cases", cases.len());
        for (what, player, action, expected) in &cases {
            let run = coffer(&["act", g, "--player", &player.to_string(), action]);
            assert_eq!(
                run.code, 1,
                "{id}, {what}: {action} was not refused\n{}",
                run.stdout
            );
            assert!(
                run.stderr.starts_with("error: "),
                "{id}, {what}: {}",
                run.stderr
            );
            assert!(
                run.stderr.contains(expected),
                "{id}, {what}: expected '{expected}' in {}",
                run.stderr
            );
            assert_eq!(
                run.stderr.lines().count(),
                1,
                "{id}, {what}: one error line: {}",
                run.stderr
            );
            assert_eq!(
                std::fs::read(&game).unwrap(),
                before,
                "{id}, {what}: the save file changed"
            );
        }
        // With --format json, the typed refusal is on stdout for programs.
        let run = coffer(&[
            "--format",
            "json",
            "act",
            g,
            "--player",
            &p.to_string(),
            r#"{"type":"teleport"}"#,
        ]);
        assert_eq!(run.code, 1);
        let out = run.json();
        assert!(out["error"].as_str().unwrap().contains("teleport"), "{out}");
        assert!(out["refusal"]["Malformed"].is_string(), "{out}");
        let run = coffer(&[
            "--format",
            "json",
            "act",
            g,
            "--player",
            &(n + 3).to_string(),
            &legal.to_string(),
        ]);
        assert_eq!(
            run.json()["refusal"],
            json!({"NoSuchPlayer": {"player": n + 3, "players": n}})
        );
        assert_eq!(
            std::fs::read(&game).unwrap(),
            before,
            "{id}: the save file changed"
        );
        // A player number that does not fit is a usage error; the file is untouched too.
        let run = coffer(&["act", g, "--player", "70000", &legal.to_string()]);
        assert_eq!(run.code, 2, "{}", run.stderr);
        assert_eq!(std::fs::read(&game).unwrap(), before);
    }
}

#[test]
fn a_damaged_save_is_refused_precisely_and_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_game(dir.path(), "story-acts");
    let g = game.to_str().unwrap();
    let (p, action) = first_legal(&game, 2);
    ok(coffer(&[
        "act",
        g,
        "--player",
        &p.to_string(),
        &action.to_string(),
    ]));
    let text = std::fs::read_to_string(&game).unwrap();
    let save: Value = serde_json::from_str(&text).unwrap();
    let hash = save["log"][0]["hash"].as_str().unwrap();
    let damaged = text.replacen(hash, "00000000000000ff", 1);
    std::fs::write(&game, &damaged).unwrap();
    let run = coffer(&["replay", g]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(
            "replay diverges at log[0].hash: expected state hash 00000000000000ff (saved)"
        ),
        "{}",
        run.stderr
    );
    let run = coffer(&["act", g, "--player", &p.to_string(), &action.to_string()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with(&format!("error: cannot load game {g}: replay diverges")),
        "{}",
        run.stderr
    );
    assert_eq!(std::fs::read_to_string(&game).unwrap(), damaged);
    std::fs::write(&game, &text[..text.len() / 3]).unwrap();
    let run = coffer(&["show", g]);
    run.fails_with(1, "save file is truncated");
}

/// Writes a script of the first legal action of each turn, `n` actions long, by playing them.
fn script_of(dir: &Path, id: &str, n: usize) -> (PathBuf, String) {
    let game = dir.join(format!("script-{id}.json"));
    ok(coffer(&[
        "new",
        id,
        "--players",
        players(id),
        "--seed",
        "5",
        "--force",
        "-o",
        game.to_str().unwrap(),
    ]));
    let mut lines = String::new();
    for _ in 0..n {
        let (p, action) = first_legal(&game, players(id).parse().unwrap());
        ok(coffer(&[
            "act",
            game.to_str().unwrap(),
            "--player",
            &p.to_string(),
            &action.to_string(),
        ]));
        lines.push_str(&format!("{}\n\n", json!({"player": p, "action": action})));
    }
    let save: Value = serde_json::from_str(&std::fs::read_to_string(&game).unwrap()).unwrap();
    let script = dir.join(format!("{id}.jsonl"));
    std::fs::write(&script, lines).unwrap();
    (script, save["state_hash"].as_str().unwrap().to_owned())
}

#[test]
fn play_runs_a_script_prints_events_and_stops_at_the_first_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let (script, hash) = script_of(dir.path(), "charges", 4);
    let s = script.to_str().unwrap();
    let out = dir.path().join("played.json");
    let o = out.to_str().unwrap();
    let run = ok(coffer(&[
        "play",
        "charges",
        "--players",
        "2",
        "--seed",
        "5",
        "--script",
        s,
        "-o",
        o,
    ]));
    assert!(run.stdout.contains(&format!("{s}:1 p")), "{}", run.stdout);
    assert!(
        run.stdout.contains(&format!("state hash: {hash}")),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("outcome: "), "{}", run.stdout);
    ok(coffer(&["replay", o]));
    let json = ok(coffer(&[
        "--format",
        "json",
        "play",
        "charges",
        "--players",
        "2",
        "--seed",
        "5",
        "--script",
        s,
    ]))
    .json();
    assert_eq!(json["state_hash"], json!(hash));
    assert_eq!(json["steps"].as_array().unwrap().len(), 4);

    // A refused line in the middle: stop there with status 1, unless --keep-going.
    let mut lines: Vec<String> = std::fs::read_to_string(&script)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    lines.insert(2, r#"{"player": 0, "action": {"type": "teleport"}}"#.into());
    std::fs::write(&script, lines.join("\n")).unwrap();
    let play = |extra: &[&str]| {
        let mut args = vec![
            "--format",
            "json",
            "play",
            "charges",
            "--players",
            "2",
            "--seed",
            "5",
            "--script",
            s,
        ];
        args.extend_from_slice(extra);
        coffer(&args)
    };
    let run = play(&[]);
    run.fails_with(1, &format!("{s}:3: p0 cannot play"));
    let steps = run.json()["steps"].as_array().unwrap().len();
    assert_eq!(steps, 2, "stopped at the refused line");
    let run = play(&["--keep-going"]);
    assert_eq!(run.code, 1, "a refusal still fails the run");
    assert_eq!(run.json()["steps"].as_array().unwrap().len(), 5);
    assert_eq!(
        run.json()["state_hash"],
        json!(hash),
        "the refused line changed nothing"
    );

    std::fs::write(&script, "{\"player\": 0}\n").unwrap();
    let run = coffer(&["play", "charges", "--players", "2", "--script", s]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.contains(&format!(
            "{s}:1: expected {{\"player\": N, \"action\": {{...}}}}"
        )),
        "{}",
        run.stderr
    );
}

#[test]
fn demo_plays_every_ruleset_and_replays_its_scripts_deterministically() {
    let run = ok(coffer(&["demo", "--actions", "15"]));
    for (id, _) in PLUGINS {
        assert!(
            run.stdout.contains(&format!("=== {id}@0.1.0")),
            "{}",
            run.stdout
        );
    }
    assert_eq!(run.stdout.matches("--- the table after").count(), 3);
    assert_eq!(run.stdout.matches("\noutcome: ").count(), 3);

    // The random playouts, written as example scripts, replay to the same states through --scripts.
    // A setup file beside each script gives its seed (the demo's own default seed is 1).
    let random = ok(coffer(&[
        "--format",
        "json",
        "demo",
        "--actions",
        "15",
        "--seed",
        "9",
    ]))
    .json();
    let scripts = tempfile::tempdir().unwrap();
    for report in random.as_array().unwrap() {
        let id = report["ruleset"]
            .as_str()
            .unwrap()
            .split('@')
            .next()
            .unwrap();
        let examples = scripts.path().join(id).join("examples");
        std::fs::create_dir_all(&examples).unwrap();
        let lines: String = report["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                format!(
                    "{}\n",
                    json!({"player": s["player"], "action": s["action"]})
                )
            })
            .collect();
        std::fs::write(examples.join("a.jsonl"), lines).unwrap();
        std::fs::write(examples.join("a.setup.json"), r#"{"seed": 9}"#).unwrap();
        std::fs::write(examples.join("z.jsonl"), "not a script").unwrap();
    }
    let scripted = ok(coffer(&[
        "--format",
        "json",
        "demo",
        "--scripts",
        scripts.path().to_str().unwrap(),
    ]))
    .json();
    for (a, b) in random
        .as_array()
        .unwrap()
        .iter()
        .zip(scripted.as_array().unwrap())
    {
        assert!(
            b["source"].as_str().unwrap().ends_with("a.jsonl"),
            "{}",
            b["source"]
        );
        assert_eq!(a["state_hash"], b["state_hash"], "{}", a["ruleset"]);
    }
}

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
fn play_takes_players_seed_and_configuration_from_the_scripts_setup_file() {
    let examples =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins/command-tokens/examples");
    let script = examples.join("space_combat.jsonl");
    let s = script.to_str().unwrap();
    // space_combat.setup.json: three players (the Mahact Gene-Sorcerers first) on a five-system line.
    let run = ok(coffer(&["play", "command-tokens", "--script", s]));
    assert!(
        run.stdout
            .contains("space combat in system c: p0 attacks, p1 defends"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("p1's ships retreat to system d"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("p0 places a command token of p1's in their fleet pool"),
        "{}",
        run.stdout
    );
    // The command line wins over the file: four players do not fit its galaxy's ships.
    let run = coffer(&["play", "command-tokens", "--players", "4", "--script", s]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .contains("factions: 3 given, but 4 players need 4"),
        "{}",
        run.stderr
    );
    // Without a setup file, --players is required and says so.
    let dir = tempfile::tempdir().unwrap();
    let bare_script = dir.path().join("s.jsonl");
    std::fs::copy(&script, &bare_script).unwrap();
    let run = coffer(&[
        "play",
        "command-tokens",
        "--script",
        bare_script.to_str().unwrap(),
    ]);
    run.fails_with(1, "--players is required");
    assert!(run.stderr.contains("s.setup.json"), "{}", run.stderr);
}

#[test]
fn demo_plays_the_repository_example_scripts() {
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../plugins");
    let run = ok(coffer(&["demo", "--scripts", plugins.to_str().unwrap()]));
    for (id, _) in PLUGINS {
        assert!(
            run.stdout.contains(&format!("=== {id}@0.1.0")),
            "{}",
            run.stdout
        );
    }
    assert_eq!(
        run.stdout.matches("\noutcome: ").count(),
        3,
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("examples/"),
        "no example script was played: {}",
        run.stdout
    );
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

/// Runs `coffer --plugin-dir <the plugins> ARGS`, reads one line of its output and closes the pipe, as
/// `coffer ARGS | head -1` does; returns the line and the exit status.
fn first_line_then_close(args: &[&str]) -> (String, std::process::ExitStatus, String) {
    use std::io::{BufRead as _, Read as _};
    let dir = plugin_dir().to_str().unwrap().to_owned();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .arg("--plugin-dir")
        .arg(&dir)
        .args(args)
        .env_remove("COFFER_PLUGIN_PATH")
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("coffer runs");
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    drop(reader);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (line, child.wait().unwrap(), stderr)
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
fn show_draws_the_table_from_one_seat_or_as_a_spectator() {
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in PLUGINS {
        let game = new_game(dir.path(), id);
        let g = game.to_str().unwrap();
        let spectator = ok(coffer(&["show", g])).stdout;
        assert!(spectator.contains("seen by a spectator"), "{spectator}");
        assert!(spectator.contains("To act: "), "{spectator}");
        let seat = ok(coffer(&["show", g, "--player", "1"])).stdout;
        assert!(seat.contains("seen by p1"), "{seat}");
        let json = ok(coffer(&["--format", "json", "show", g, "--player", "0"])).json();
        assert_eq!(json["seat"], json!(0));
        assert!(json["table"]["acting"].is_array(), "{json}");
        let run = coffer(&["show", g, "--player", "7"]);
        assert_eq!(run.code, 1);
        assert!(
            run.stderr.contains("player 7 is not in this game"),
            "{}",
            run.stderr
        );
    }
}

#[test]
fn log_tells_the_history_in_words_for_one_seat() {
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in PLUGINS {
        let game = new_game(dir.path(), id);
        let g = game.to_str().unwrap();
        let n: u16 = players(id).parse().unwrap();
        act_three_times(&game, n, &[]);
        let log = ok(coffer(&["log", g, "--player", "0"])).stdout;
        assert!(log.contains("history as p0 reads it"), "{log}");
        for k in 1..=3 {
            assert!(log.contains(&format!("\n{k}. p")), "{log}");
        }
        assert!(!log.contains("{\""), "no action JSON in the history: {log}");
        let json = ok(coffer(&["--format", "json", "log", g])).json();
        assert_eq!(json["actions"].as_array().unwrap().len(), 3, "{json}");
        assert_eq!(json["seat"], Value::Null);
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

#[test]
fn refusals_echo_the_action_once_and_cut() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_game(dir.path(), "charges");
    let g = game.to_str().unwrap();
    let long = format!(
        r#"{{"type":"plan","ship":0,"maneuver":"{}"}}"#,
        "z".repeat(300)
    );
    let run = coffer(&["act", g, "--player", "0", &long]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr.matches("plan").count(), 1, "{}", run.stderr);
    assert!(run.stderr.len() < 600, "{}", run.stderr);
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
fn two_coffer_acts_racing_on_one_save_lose_no_action() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_game(dir.path(), "command-tokens");
    let g = game.to_str().unwrap().to_owned();
    let log_len = || {
        let save: Value = serde_json::from_str(&std::fs::read_to_string(&game).unwrap()).unwrap();
        save["log"].as_array().unwrap().len()
    };
    let before = log_len();
    let applied: usize = std::thread::scope(|scope| {
        let racers: Vec<_> = (0..2)
            .map(|_| {
                let g = g.clone();
                scope.spawn(move || {
                    let mut applied = 0;
                    for _ in 0..40 {
                        // Read the legal actions, then act: the other racer may have moved in between,
                        // so some acts are refused; none may be lost.
                        let Some((p, action)) = (0..3u16).find_map(|p| {
                            let run = coffer(&[
                                "--format",
                                "json",
                                "legal",
                                &g,
                                "--player",
                                &p.to_string(),
                            ]);
                            let first = run.json().as_array()?.first()?.clone();
                            Some((p, first))
                        }) else {
                            break; // The game is over.
                        };
                        let run =
                            coffer(&["act", &g, "--player", &p.to_string(), &action.to_string()]);
                        assert!(run.code == 0 || run.code == 1, "{}", run.stderr);
                        assert!(!run.stderr.contains("panicked"), "{}", run.stderr);
                        applied += usize::from(run.code == 0);
                    }
                    applied
                })
            })
            .collect();
        racers.into_iter().map(|r| r.join().unwrap()).sum()
    });
    assert!(applied >= 20, "only {applied} acts applied");
    assert_eq!(
        log_len() - before,
        applied,
        "every acknowledged act is in the save"
    );
    ok(coffer(&["replay", &g]));
}

#[test]
fn the_plugin_deadline_option_is_bounded() {
    let run = coffer(&["--plugin-deadline", "0", "rulesets"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(run.stderr.contains("from 0.01 to 86400"), "{}", run.stderr);
    ok(coffer(&["--plugin-deadline", "5", "rulesets"]));
}

#[test]
fn simulate_plays_one_player_count_unless_asked_and_explains_its_counts() {
    let dir = tempfile::tempdir().unwrap();
    let repro = dir.path().to_str().unwrap();
    let run = ok(coffer(&[
        "simulate",
        "charges",
        "--games",
        "3",
        "--repro-dir",
        repro,
    ]));
    assert!(
        run.stdout.contains("players:     2 in every game"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("refused as they should be"),
        "{}",
        run.stdout
    );
    let run = ok(coffer(&[
        "simulate",
        "charges",
        "--games",
        "3",
        "--random-players",
        "--repro-dir",
        repro,
    ]));
    assert!(
        run.stdout.contains("drawn from each game's seed"),
        "{}",
        run.stdout
    );
    let run = coffer(&["simulate", "charges", "--players", "2", "--random-players"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    // A reader that stops after one line ends it quietly.
    let (line, status, stderr) =
        first_line_then_close(&["simulate", "charges", "--games", "5", "--repro-dir", repro]);
    assert!(line.starts_with("ruleset:"), "{line}");
    assert_eq!(status.code(), Some(0), "{stderr}");
}

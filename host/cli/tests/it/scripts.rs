//! Scripts through `coffer`: `play`, `demo` and `simulate`.

use crate::support::{PLUGINS, coffer, first_line_then_close, ok, script_of};
use serde_json::json;
use std::path::Path;

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
    let json = ok(play(&[])).json();
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

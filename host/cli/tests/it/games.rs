//! A saved game through `coffer`: `new`, `act`, `show`, `log`, `replay`, `legal`; refused actions and
//! damaged saves leave it alone; two writers lose no action.

use crate::support::{PLUGINS, act_three_times, coffer, first_legal, new_game, ok, players};
use serde_json::{Value, json};

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
fn l_undo_coffer_act_takes_back_a_seats_last_action_and_the_save_replays() {
    let dir = tempfile::tempdir().unwrap();
    let game = new_game(dir.path(), "command-tokens");
    let g = game.to_str().unwrap();
    let before = ok(coffer(&["show", g])).stdout;
    let (p, action) = first_legal(&game, 3);
    ok(coffer(&[
        "act",
        g,
        "--player",
        &p.to_string(),
        &action.to_string(),
    ]));
    // Another seat may not take it back: refused in words, the save left alone.
    let other = ((p + 1) % 3).to_string();
    let saved = std::fs::read(&game).unwrap();
    let run = coffer(&["act", g, "--player", &other, "\"~undo\""]);
    run.fails_with(
        1,
        &format!("cannot take back an action: the last action was p{p}'s"),
    );
    assert_eq!(std::fs::read(&game).unwrap(), saved);
    // The seat's own undo: the table is as before the action (the save's log keeps both).
    let undone = ok(coffer(&["act", g, "--player", &p.to_string(), "\"~undo\""])).stdout;
    assert!(
        undone.starts_with(&format!("p{p} took back their last action")),
        "{undone}"
    );
    let after = ok(coffer(&["show", g])).stdout;
    let table = |show: &str| show.lines().skip(1).collect::<Vec<_>>().join("\n");
    assert_eq!(table(&after), table(&before));
    let log = ok(coffer(&["log", g])).stdout;
    assert!(
        log.contains(&format!("2. p{p} took back their last action")),
        "{log}"
    );
    ok(coffer(&["replay", g]));
    // Nothing more to take back.
    coffer(&["act", g, "--player", &p.to_string(), "\"~undo\""])
        .fails_with(1, "nothing can be taken back now");
}

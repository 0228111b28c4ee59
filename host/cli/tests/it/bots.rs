//! `coffer bots`: bots against each other, in this process.

use crate::support::{coffer, ok};

fn bots(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["bots"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    ok(coffer(&all)).json()
}

#[test]
fn the_search_bot_beats_random_and_stays_within_its_budget() {
    // Command-tokens, three players: the search bot against two random seats.
    let v = bots(&[
        "command-tokens",
        "--seats",
        "search,random,random",
        "--games",
        "12",
        "--playouts",
        "16",
    ]);
    assert_eq!(v["games"], 12, "{v:#}");
    let wins: Vec<u64> = serde_json::from_value(v["wins"].clone()).unwrap();
    assert_eq!(wins.len(), 3);
    // Three random seats would each win about a third (4 of 12).
    assert!(wins[0] >= 9, "the search bot won {wins:?} of 12: {v:#}");
    assert!(v["max_playouts"][0].as_u64().unwrap() <= 16, "{v:#}");
    assert_eq!(v["max_playouts"][1], 0, "a random seat runs no playout");
    assert_eq!(
        v["seats"],
        serde_json::json!(["search", "random", "random"])
    );
}

#[test]
fn a_seed_replays_the_same_games() {
    let args = [
        "charges",
        "--seats",
        "search,random",
        "--games",
        "8",
        "--seed",
        "41",
        "--playouts",
        "8",
    ];
    let (a, b) = (bots(&args), bots(&args));
    for field in ["wins", "draws", "unfinished", "actions", "decisions"] {
        assert_eq!(a[field], b[field], "{field}: {a:#} {b:#}");
    }
    assert!(a["actions"].as_u64().unwrap() > 0);
}

#[test]
fn seats_players_and_bots_are_checked_with_a_message() {
    for (extra, code, text) in [
        (
            &["--seats", "search,minimax"][..],
            1,
            "unknown bot 'minimax': the bots are random and search",
        ),
        (
            &["--seats", "random,random", "--players", "3"],
            1,
            "--players 3 but --seats names 2 bots",
        ),
        (&["--seats", "random"], 1, "charges plays with 2 to"),
        (
            &["--seats", "random,random", "--playouts", "0"],
            2,
            "1..=1000000",
        ),
    ] {
        let mut args = vec!["bots", "charges"];
        args.extend_from_slice(extra);
        coffer(&args).fails_with(code, text);
    }
}

#[test]
fn a_watched_game_of_bots_is_told_in_words_saved_and_replays_to_the_same_end() {
    let dir = tempfile::tempdir().unwrap();
    let save = dir.path().join("watched.json");
    let save_arg = save.to_str().unwrap();
    let args = [
        "bots",
        "story-acts",
        "--seats",
        "search,random",
        "--seed",
        "5",
        "--playouts",
        "8",
        "--watch",
        "--output",
        save_arg,
    ];
    let run = ok(coffer(&args));
    let text = run.stdout.clone();
    assert!(
        text.starts_with("story-acts@") && text.contains("p0 search, p1 random"),
        "{text}"
    );
    assert!(text.contains("outcome: "), "{text}");
    assert!(
        !text.contains("Owner(") && !text.contains("Key {"),
        "{text}"
    );
    // The same game as JSON, and saved: it replays, and its log has the watched actions.
    let mut json_args = args[..9].to_vec();
    json_args.extend_from_slice(&["--format", "json"]);
    let v = ok(coffer(&json_args)).json();
    let actions = v["actions"].as_array().unwrap();
    assert!(!actions.is_empty());
    assert_eq!(v["seats"], serde_json::json!(["search", "random"]));
    ok(coffer(&["replay", save_arg]));
    let log = ok(coffer(&["log", save_arg, "--format", "json"])).json();
    assert_eq!(
        log["actions"]
            .as_array()
            .map(Vec::len)
            .or(log.as_array().map(Vec::len)),
        Some(actions.len()),
        "{log:#}"
    );
    // Watching takes one game: --games with it is refused.
    coffer(&[
        "bots",
        "charges",
        "--seats",
        "random,random",
        "--watch",
        "--games",
        "3",
    ])
    .fails_with(2, "--games");
}

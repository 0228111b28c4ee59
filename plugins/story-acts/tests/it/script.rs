//! The scripted three-Act game `examples/three_acts.jsonl` (2 players, seed 1, default configuration), played
//! the way `coffer play` plays it: one JSON action per line through the host-facing `DynGame`.

use coffer_core::{Adapter, DynGame, Outcome, Owner, Setup};
use coffer_story_acts::StoryActs;

const SCRIPT: &str = include_str!("../../examples/three_acts.jsonl");
/// The sidecar the host's demo reads for the script's players and seed.
const SETUP: &str = include_str!("../../examples/three_acts.setup.json");

fn setup() -> Setup {
    let v: serde_json::Value = serde_json::from_str(SETUP).expect("setup file is JSON");
    let players = v["players"].as_u64().expect("players") as u16;
    Setup::new(players, v["seed"].as_u64().expect("seed"))
}

fn play() -> Box<dyn DynGame> {
    let ruleset = Adapter::shared(StoryActs::new());
    let mut game = ruleset.new_game(&setup()).expect("setup");
    for (n, line) in SCRIPT
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line).expect("script line is JSON");
        let player = v["player"].as_u64().expect("player") as u16;
        let action = v["action"].to_string();
        if let Err(e) = game.apply_json(Owner(player), &action) {
            panic!("line {}: {action} by p{player} refused: {e}", n + 1);
        }
        game.check_invariants().expect("invariants");
    }
    game
}

#[test]
fn three_act_script_final_scores_and_winner() {
    let game = play();
    assert_eq!(
        game.outcome(),
        Outcome::Finished {
            winners: vec![Owner(0)],
            scores: vec![2, 1]
        },
        "p0 wins Acts 2 and 3"
    );
    let view = game.view(None);
    let results: Vec<(Vec<i64>, u64)> = view["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            let scores = r["scores"]
                .as_array()
                .expect("scores")
                .iter()
                .map(|x| x.as_i64().expect("sp"))
                .collect();
            (scores, r["winner"].as_u64().expect("winner"))
        })
        .collect();
    assert_eq!(
        results,
        vec![(vec![9, 10], 1), (vec![5, 3], 0), (vec![7, 4], 0)]
    );
    assert_eq!(view["act"], 3, "three Acts were played");
}

#[test]
fn three_act_script_replays_to_the_same_state_hash() {
    assert_eq!(play().state_hash(), play().state_hash());
}

#[test]
fn three_act_script_actions_are_all_listed_when_played() {
    let ruleset = Adapter::shared(StoryActs::new());
    let mut game = ruleset.new_game(&setup()).expect("setup");
    for line in SCRIPT.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let player = Owner(v["player"].as_u64().expect("player") as u16);
        let want = serde_json::to_string(
            &serde_json::from_value::<coffer_story_acts::Action>(v["action"].clone())
                .expect("action"),
        )
        .expect("json");
        let n = game.legal_actions(player);
        let index = (0..n).find(|&i| game.legal_action_json(i).as_deref() == Some(want.as_str()));
        let index = index.unwrap_or_else(|| panic!("{want} is not listed for {player}"));
        game.apply_legal(player, index)
            .expect("listed action applies");
    }
    assert!(matches!(game.outcome(), Outcome::Finished { .. }));
}

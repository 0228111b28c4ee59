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
    let table = game.table(None);
    let acts = table
        .sections
        .iter()
        .find(|s| s.title == "Acts")
        .expect("an Acts section");
    let rows: Vec<(&str, &str)> = acts.rows.iter().map(|r| (&*r.label, &*r.value)).collect();
    assert_eq!(
        rows,
        [
            ("Act 1", "won by p1; SP p0 9, p1 10"),
            ("Act 2", "won by p0; SP p0 5, p1 3"),
            ("Act 3", "won by p0; SP p0 7, p1 4"),
            ("winner", "p0"),
        ]
    );
    assert_eq!(table.round, 3, "three Acts were played");
    assert_eq!(table.round_name, "Act");
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

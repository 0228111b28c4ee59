//! The scripted six-player game `examples/six_players.jsonl`, played as `coffer play` plays it.

use coffer_command_tokens::CommandTokens;
use coffer_core::{Adapter, Outcome, Owner, Setup};

#[test]
fn six_player_script_plays_to_the_expected_end() {
    let ruleset = Adapter::shared(CommandTokens::new());
    let mut game = ruleset.new_game(&Setup::new(6, 0)).unwrap();
    let script = include_str!("../../examples/six_players.jsonl");
    let mut lines = 0;
    for (n, line) in script.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let player = Owner(v["player"].as_u64().unwrap() as u16);
        game.apply_json(player, &v["action"].to_string()).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        game.check_invariants().unwrap();
        lines += 1;
    }
    assert!(lines > 50);
    let view = game.view(None);
    let _ = view;
    assert!(matches!(game.outcome(), Outcome::Finished { .. }));
}

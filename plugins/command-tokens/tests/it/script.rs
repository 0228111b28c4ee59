//! The scripted six-player game `examples/six_players.jsonl` (three rounds: Leadership buying, Diplomacy,
//! Construction, Warfare, production over the fleet limit, status phases with a fleet pool lowered under
//! the ships at home), played as `coffer play` plays it: `Adapter::shared(...).new_game(...)` and
//! `apply_json` per line.

use coffer_command_tokens::CommandTokens;
use coffer_core::{Adapter, DynGame, Outcome, Owner, ResourceView, Setup};

/// Per-player token counts of the zone labelled `label`.
fn counts(game: &dyn DynGame, label: &str) -> Vec<u32> {
    game.resources(None)
        .into_iter()
        .find_map(|r| match r {
            ResourceView::Tokens {
                label: l, counts, ..
            } if l == label => Some(counts),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no zone '{label}'"))
}

#[test]
fn six_player_script_plays_to_the_expected_end() {
    let ruleset = Adapter::shared(CommandTokens::new());
    let mut game = ruleset.new_game(&Setup::new(6, 0)).unwrap();
    let script = include_str!("../../examples/six_players.jsonl");
    let mut lines = 0;
    let mut demands = 0;
    for (n, line) in script.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        let player = Owner(v["player"].as_u64().unwrap() as u16);
        assert_eq!(game.outcome(), Outcome::Ongoing, "line {}", n + 1);
        game.apply_json(player, &v["action"].to_string())
            .unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        game.check_invariants()
            .unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        demands += game
            .events()
            .iter()
            .filter(|e| matches!(e.change, coffer_core::Change::Demand { raised: true, .. }))
            .count();
        lines += 1;
    }
    assert_eq!(lines, 376);
    assert!(
        demands >= 10,
        "the script exercises the fleet limit ({demands} demands)"
    );
    // Final command sheets and reinforcements, and nothing left on the board after the last status phase.
    assert_eq!(counts(&*game, "tactic pool"), [6, 0, 7, 0, 0, 0]);
    assert_eq!(counts(&*game, "fleet pool"), [7, 8, 3, 7, 6, 6]);
    assert_eq!(counts(&*game, "strategy pool"), [3, 2, 3, 1, 3, 2]);
    assert_eq!(counts(&*game, "reinforcements"), [0, 6, 3, 8, 7, 8]);
    for r in game.resources(None) {
        if let ResourceView::Tokens { label, counts, .. } = r
            && label.starts_with("system ")
        {
            assert!(counts.iter().all(|&c| c == 0), "{label}: {counts:?}");
        }
    }
    assert_eq!(
        game.outcome(),
        Outcome::Finished {
            winners: vec![Owner(0)],
            scores: vec![16, 10, 13, 8, 9, 8]
        }
    );
}

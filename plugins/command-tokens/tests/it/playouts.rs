//! Property tests over random playouts through the host's interface (`DynGame`): invariants (16 tokens
//! per player, ship pieces, the fleet limit) hold after every action, every listed action applies, and
//! random unlisted actions are refused with the state hash unchanged.

use crate::support::{Rng, random_action};
use coffer_command_tokens::CommandTokens;
use coffer_core::{Adapter, DynGame, Outcome, Owner, Setup};
use proptest::prelude::*;

/// The one player who has legal actions (exactly one at any time while the game runs).
fn acting(game: &mut dyn DynGame) -> Option<(Owner, usize)> {
    let mut found = None;
    for p in 0..game.players() {
        let n = game.legal_actions(Owner(p));
        if n > 0 {
            assert!(found.is_none(), "two players have legal actions at once");
            found = Some((Owner(p), n));
        }
    }
    found
}

fn playout(players: u16, seed: u64, rounds: u16, laws: bool, check_every_listed: bool) {
    let ruleset = Adapter::shared(CommandTokens::new());
    let mut config = serde_json::json!({ "rounds": rounds, "production": 3 });
    if laws {
        config["laws"] = serde_json::json!(["fleet-regulations"]);
    }
    let mut game = ruleset
        .new_game(&Setup::new(players, seed).config(config))
        .unwrap();
    let mut rng = Rng(seed ^ 0xC0FFEE);
    let mut steps = 0;
    game.check_invariants().unwrap();
    while let Some((p, n)) = acting(&mut *game) {
        game.legal_actions(p);
        steps += 1;
        assert!(steps < 20_000, "the playout does not end");
        let listed: Vec<String> = (0..n).map(|i| game.legal_action_json(i).unwrap()).collect();
        if check_every_listed {
            for (i, json) in listed.iter().enumerate() {
                let mut copy = game.clone_game();
                copy.apply_legal(p, i)
                    .unwrap_or_else(|e| panic!("listed {json} refused: {e}"));
                copy.check_invariants()
                    .unwrap_or_else(|v| panic!("after {json}: {v}"));
            }
        }
        // Random actions that are not listed, by the acting player and by another one, are refused.
        for _ in 0..4 {
            let a = random_action(&mut rng);
            let json = serde_json::to_string(&a).unwrap();
            let who = if rng.below(2) == 0 {
                p
            } else {
                Owner(rng.below(usize::from(players)) as u16)
            };
            if who == p && listed.contains(&json) {
                continue;
            }
            let before = game.state_hash();
            let result = game.apply_json(who, &json);
            assert!(result.is_err(), "{who} applied unlisted {json}");
            assert_eq!(
                game.state_hash(),
                before,
                "refused {json} changed the state"
            );
        }
        let i = rng.below(n);
        game.apply_legal(p, i).unwrap();
        game.check_invariants()
            .unwrap_or_else(|v| panic!("after {}: {v}", listed[i]));
    }
    assert!(matches!(game.outcome(), Outcome::Finished { .. }));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn playouts_keep_invariants_and_refuse_unlisted_actions(players in 3u16..=8, seed in any::<u64>(), laws in any::<bool>()) {
        playout(players, seed, 2, laws, false);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 6, ..ProptestConfig::default() })]

    #[test]
    fn every_listed_action_applies(players in 3u16..=8, seed in any::<u64>()) {
        playout(players, seed, 1, seed % 2 == 0, true);
    }
}

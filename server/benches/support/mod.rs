//! What the store benchmarks share: the games they append to.

use coffer_server::{GameId, NewGame, RulesetKey, Setup};

/// Game `game` of a benchmark: two free seats of a `bench@1` ruleset (the stores never run it).
pub fn bench_game(game: u64) -> NewGame {
    NewGame {
        id: GameId(game),
        ruleset: RulesetKey::new("bench@1").expect("valid"),
        setup: Setup {
            players: 2,
            seed: game,
            config: serde_json::json!({}),
            bots: Default::default(),
            clock: None,
        },
        created_unix_ms: 0,
        seats: vec![None, None],
    }
}

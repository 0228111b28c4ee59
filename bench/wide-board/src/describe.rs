//! What a `wide-board` game says about itself: its [`Description`], with every action's JSON example and
//! every option with its default.

use crate::state::{Config, MAX_PLAYERS};
use crate::words::vocabulary;
use coffer_core::{Description, Doc};

/// The ruleset's description.
pub fn description() -> Description {
    let mut d = Description::new(
        "wide-board",
        env!("CARGO_PKG_VERSION"),
        "command tokens on a wide board: tactical actions into systems, a strategic action, pass; score systems held at each round's end",
    );
    d.min_players = 2;
    d.max_players = MAX_PLAYERS;
    d.phases = vec!["action".into()];
    d.resources = vec![
        Doc::new(
            "reinforcements",
            "Each player's command tokens off the sheet and off the board (16 in all per player).",
        ),
        Doc::new("tactic pool", "Tokens spent for tactical actions."),
        Doc::new("fleet pool", "Tokens kept on the sheet; never spent."),
        Doc::new("strategy pool", "Tokens spent for the strategic action."),
        Doc::new(
            "system",
            "One zone per system: at most one token per player.",
        ),
        Doc::new("score", "Systems held at each round's end, summed."),
        Doc::new(
            "strategic action",
            "Used once per round; readied at the round's end.",
        ),
    ];
    d.actions = vec![
        Doc::with(
            "tactical",
            "Move a tactic-pool token into a system (index, 0 to systems - 1) that holds none of your tokens.",
            serde_json::json!({"type": "tactical", "system": 3}),
        ),
        Doc::with(
            "strategic",
            "Once per round: spend a strategy-pool token; gain 2 tokens from reinforcements into the tactic pool.",
            serde_json::json!({"type": "strategic"}),
        ),
        Doc::with(
            "pass",
            "Out for the rest of the round; the round ends when everyone has passed.",
            serde_json::json!({"type": "pass"}),
        ),
    ];
    let c = Config::default();
    d.options = vec![
        Doc::with(
            "systems",
            "Systems on the board, 1 to 200.",
            serde_json::json!(c.systems),
        ),
        Doc::with(
            "rounds",
            "Rounds played, 1 to 100.",
            serde_json::json!(c.rounds),
        ),
    ];
    d.vocabulary = vocabulary();
    d
}

//! What the ruleset says about itself: hosts list its actions and options from this, with examples.

use crate::words;
use coffer_core::{Description, Doc};

/// The description: players, phases, resources, every action with a JSON example, every option with
/// its default, and the vocabulary.
pub fn description() -> Description {
    let mut d = Description::new("my-ruleset", "0.1.0", "coin race: first to the goal wins");
    d.min_players = 2;
    d.max_players = 4;
    d.phases = vec!["turn".to_owned()];
    d.resources = vec![
        Doc::new("purse", "a player's coins; the goal wins"),
        Doc::new(
            "bank",
            "the coins nobody holds; taking stops when it is empty",
        ),
        Doc::new(
            "mines",
            "each yields one coin at the start of its owner's turn",
        ),
    ];
    d.actions = vec![
        Doc::with(
            "take",
            "take one or two coins from the bank (what is left, if it holds fewer)",
            serde_json::json!({"type": "take", "coins": 2}),
        ),
        Doc::with(
            "build",
            "pay three coins back to the bank for a mine",
            serde_json::json!({"type": "build"}),
        ),
    ];
    d.options = vec![
        Doc::with("goal", "coins that win (2 to 100)", serde_json::json!(10)),
        Doc::with(
            "bank",
            "coins in the bank (the goal to 1000)",
            serde_json::json!(30),
        ),
    ];
    // What this ruleset calls things (`words.rs`): hosts name resources, causes and events with it.
    d.vocabulary = words::vocabulary();
    d
}

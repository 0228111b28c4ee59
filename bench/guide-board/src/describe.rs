//! What outposts says about itself: hosts list its actions and options from this, with examples.

use crate::state::{MAX_PLAYERS, MAX_ROUNDS, MAX_SITES};
use crate::words;
use coffer_core::{Description, Doc};

/// The description: players, phases, resources, every action with a JSON example, every option with
/// its default, and the vocabulary.
pub fn description() -> Description {
    let mut d = Description::new(
        "guide-board",
        env!("CARGO_PKG_VERSION"),
        "outposts: place tokens on a ring of sites, shift them, harvest a point per site held; highest score after the last round wins",
    );
    d.min_players = 2;
    d.max_players = MAX_PLAYERS;
    d.phases = vec!["actions".to_owned()];
    d.resources = vec![
        Doc::new(
            "reinforcements",
            "each player's tokens off the board (12 in all per player, all here at the start)",
        ),
        Doc::new(
            "site",
            "a site of the ring board: empty, or held by the one player whose tokens are on it",
        ),
        Doc::new(
            "energy",
            "3 at the start of each round, 1 per place or shift, emptied at the round's end",
        ),
        Doc::new("harvest", "once a round; ready again when the round ends"),
        Doc::new("score", "a point per site held at each harvest, at most 20"),
    ];
    d.actions = vec![
        Doc::with(
            "place",
            "pay 1 energy: a token from reinforcements onto a site that is empty or already yours",
            serde_json::json!({"type": "place", "site": 4}),
        ),
        Doc::with(
            "shift",
            "pay 1 energy: one of your tokens from a site you hold to a neighbouring site that is empty or yours",
            serde_json::json!({"type": "shift", "from": 4, "to": 5}),
        ),
        Doc::with(
            "harvest",
            "once a round: score a point per site you hold (the score stops at 20)",
            serde_json::json!({"type": "harvest"}),
        ),
        Doc::with(
            "pass",
            "out for the rest of the round; the round ends when everyone has passed",
            serde_json::json!({"type": "pass"}),
        ),
    ];
    d.options = vec![
        Doc::with(
            "sites",
            format!("sites on the ring board (1 to {MAX_SITES})"),
            serde_json::json!(30),
        ),
        Doc::with(
            "rounds",
            format!("rounds the game lasts (1 to {MAX_ROUNDS})"),
            serde_json::json!(8),
        ),
    ];
    // What this ruleset calls things (`words.rs`): hosts name resources, causes and events with it.
    d.vocabulary = words::vocabulary();
    d
}

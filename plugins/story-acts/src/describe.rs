//! What a `story-acts` game says about itself: its [`Description`], with every action's JSON example,
//! every option with its documentation and default, and the resources.

use crate::config::Config;
use crate::words::vocabulary;
use coffer_core::{Description, Doc};
use serde_json::json;

/// The ruleset id.
pub const ID: &str = "story-acts";

/// Every configuration option: name and documentation (the defaults come from [`Config::default`]).
pub const OPTIONS: &[(&str, &str)] = &[
    (
        "treasury_cap",
        "S1: the Treasury cap; Currency gained above it is lost, from every source. 1 to 1000.",
    ),
    (
        "starting_currency",
        "Currency each player starts with: 0 to the treasury_cap.",
    ),
    (
        "starting_hand",
        "Cards each player draws before the first turn: 0 to 100.",
    ),
    (
        "draw_per_turn",
        "S10: cards drawn in each Draw Phase: 0 to 100.",
    ),
    (
        "hand_limit",
        "S10: hand size checked at the End Phase; the player chooses the discards (K6). 0 to 100.",
    ),
    (
        "votes_per_factor_step",
        "S5 (assumption): committed Votes per Galactic Factor step: 1 to 1000.",
    ),
    (
        "political_tie",
        "S4 (assumption): \"nobody\" or \"active_player\" controls on a tie of standing Vote.",
    ),
    (
        "award_sp",
        "S11 (assumption): SP of each self-inflicted award (empty Treasury; own Character Falls or is destroyed). 0 to 1000.",
    ),
    (
        "award_to",
        "S11 (assumption): \"each_opponent\", \"next_player\" or \"nobody\" receives the award.",
    ),
    (
        "act3_winner_wins",
        "S12 (assumption): with 3+ players and nobody on two wins after Act 3, the Act 3 winner wins; false: players with most Act wins share the win.",
    ),
    (
        "catch_up_currency",
        "S16 (assumption): Currency each player who did not win the Act gains (capped by S1). 0 to 1000.",
    ),
    (
        "factors",
        "S17 (assumption): the Galactic Factors, each {name, min, max, start}: at most 32 factors, distinct non-empty names, -1000 <= min <= start <= max <= 1000.",
    ),
    ("restore_cost", "S14: Currency a Restore costs: 0 to 1000."),
    (
        "fall_flips_homeworld",
        "Assumption: a Prime Character's Fall flips its owner's Homeworld off its Prime face.",
    ),
    (
        "shuffle_decks",
        "Whether decks are shuffled at setup with the game's seeded RNG.",
    ),
    (
        "homeworlds",
        "Homeworld card ids, player i gets entry i modulo the list's length: 1 to 64 ids.",
    ),
    (
        "deck",
        "Card ids of each player's deck, at most 1000; null: one copy of every non-Homeworld card.",
    ),
    (
        "cards",
        "Inline card definitions replacing the embedded starter set, at most 65535 (numbers on a card 0 to 1000); null: the starter set.",
    ),
];

/// Every action: name, documentation and a JSON example.
pub fn action_docs() -> Vec<Doc> {
    vec![
        Doc::with(
            "deploy",
            "S3: deploy a card from hand paying its Currency cost (a Maneuver: also its Vote cost, its CP cost split as `cp` = [[card, cp], ...] in ascending card order, and a `target` when its effect needs one). Slow, except Fast Maneuvers.",
            json!({"type": "deploy", "card": 3}),
        ),
        Doc::with(
            "commit_votes",
            "S5: activate a card to put its printed Votes in the Resource Pool; it leaves standing Vote until it readies. Fast: any player, any main phase.",
            json!({"type": "commit_votes", "card": 0}),
        ),
        Doc::with(
            "add_ev",
            "S6: activate a permanent printing \"Add N EV\" to put N EV in the Resource Pool.",
            json!({"type": "add_ev", "card": 12}),
        ),
        Doc::with(
            "push_factor",
            "S5: move a Galactic Factor `steps` steps up or down, paying committed Votes.",
            json!({"type": "push_factor", "factor": 0, "up": true, "steps": 2}),
        ),
        Doc::with(
            "use_ability",
            "S8: a Character's \"-X CP:\" ability, paid from its own CP; once per turn, own main phase.",
            json!({"type": "use_ability", "card": 5}),
        ),
        Doc::with(
            "move",
            "S15: move a ready unit to an adjacent Band (activates it).",
            json!({"type": "move", "card": 5, "to": "space"}),
        ),
        Doc::with(
            "capture",
            "S14: a ready unit in a Surface Band captures an undefended Surface Location there; it becomes Contested.",
            json!({"type": "capture", "location": 40, "unit": 5}),
        ),
        Doc::with(
            "restore",
            "S14: pay the Restore cost; the Contested Surface Location you control is uncontested again.",
            json!({"type": "restore", "location": 40}),
        ),
        Doc::with(
            "advance_storyline",
            "Advance your Storyline one step, paying its EV per step from the Resource Pool.",
            json!({"type": "advance_storyline", "card": 9}),
        ),
        Doc::with(
            "complete_storyline",
            "S12: complete your Storyline with every step done: the Act ends at once and is scored.",
            json!({"type": "complete_storyline", "card": 9}),
        ),
        Doc::with(
            "discard",
            "S10/K6: while over the hand limit at the End Phase, discard a card of your choice (the only legal action then).",
            json!({"type": "discard", "card": 14}),
        ),
        Doc::with(
            "end_turn",
            "End the main phase: End Phase (hand limit), then the next player's Ready, Income and Draw Phases.",
            json!({"type": "end_turn"}),
        ),
    ]
}

/// The ruleset's description: players, phases, resources, actions, options and vocabulary.
pub fn description() -> Description {
    let mut d = Description::new(
        ID,
        env!("CARGO_PKG_VERSION"),
        "The Story/Act card game: Currency, Votes, EV, Character Points and Story Points over two or three Acts",
    );
    d.min_players = 2;
    d.max_players = 4;
    d.phases = ["ready", "income", "draw", "main", "end"]
        .map(String::from)
        .to_vec();
    d.resources = vec![
        Doc::new(
            "treasury",
            "S1: Currency, 0..=treasury_cap (20); excess gains are lost, voluntary spends refused when short, required costs drain to 0.",
        ),
        Doc::new(
            "votes",
            "S5/S7: committed Votes in the Resource Pool; empty at the end of every phase.",
        ),
        Doc::new(
            "ev",
            "S6/S7: EV in the Resource Pool; empty at the end of every phase.",
        ),
        Doc::new(
            "sp",
            "S11/S12: Story Points, public, counted at the end of each Act then reset.",
        ),
        Doc::new(
            "cp",
            "S8: Character Points per card with a printed CP; floor 0, no maximum.",
        ),
        Doc::new("act_wins", "S12: Acts won; two win the game."),
        Doc::new(
            "factor",
            "S17: Galactic Factors, each bounded by its configured min and max.",
        ),
        Doc::new(
            "card",
            "K5/S9: each permanent is ready or activated; activated cards ready in the Ready Phase.",
        ),
        Doc::new(
            "ability",
            "S8: a \"-X CP:\" ability's once-per-turn use (one charge, recovered at each turn's end).",
        ),
    ];
    d.actions = action_docs();
    d.vocabulary = vocabulary();
    let defaults = serde_json::to_value(Config::default()).unwrap_or_default();
    d.options = OPTIONS
        .iter()
        .map(|(name, doc)| {
            Doc::with(
                *name,
                *doc,
                defaults.get(*name).cloned().unwrap_or_default(),
            )
        })
        .collect();
    d
}

//! What a `story-acts` game says about itself: its [`Description`], with every action's JSON example,
//! every option with its documentation and default, and the resources.

use crate::config::Config;
use crate::words::vocabulary;
use coffer_core::{Description, Doc};

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

/// Every action: name, documentation and its JSON example as text.
const ACTIONS: &[(&str, &str, &str)] = &[
    (
        "deploy",
        "S3: deploy a card from hand paying its Currency cost (a Maneuver: also its Vote cost, its CP cost split as `cp` = [[card, cp], ...] in ascending card order, and a `target` when its effect needs one). Slow, except Fast Maneuvers.",
        "{\"type\": \"deploy\", \"card\": 3}",
    ),
    (
        "commit_votes",
        "S5: activate a card to put its printed Votes in the Resource Pool; it leaves standing Vote until it readies. Fast: any player, any main phase.",
        "{\"type\": \"commit_votes\", \"card\": 0}",
    ),
    (
        "add_ev",
        "S6: activate a permanent printing \"Add N EV\" to put N EV in the Resource Pool.",
        "{\"type\": \"add_ev\", \"card\": 12}",
    ),
    (
        "push_factor",
        "S5: move a Galactic Factor `steps` steps up or down, paying committed Votes.",
        "{\"type\": \"push_factor\", \"factor\": 0, \"up\": true, \"steps\": 2}",
    ),
    (
        "use_ability",
        "S8: a Character's \"-X CP:\" ability, paid from its own CP; once per turn, own main phase.",
        "{\"type\": \"use_ability\", \"card\": 5}",
    ),
    (
        "move",
        "S15: move a ready unit to an adjacent Band (activates it).",
        "{\"type\": \"move\", \"card\": 5, \"to\": \"space\"}",
    ),
    (
        "capture",
        "S14: a ready unit in a Surface Band captures an undefended Surface Location there; it becomes Contested.",
        "{\"type\": \"capture\", \"location\": 40, \"unit\": 5}",
    ),
    (
        "restore",
        "S14: pay the Restore cost; the Contested Surface Location you control is uncontested again.",
        "{\"type\": \"restore\", \"location\": 40}",
    ),
    (
        "advance_storyline",
        "Advance your Storyline one step, paying its EV per step from the Resource Pool.",
        "{\"type\": \"advance_storyline\", \"card\": 9}",
    ),
    (
        "complete_storyline",
        "S12: complete your Storyline with every step done: the Act ends at once and is scored.",
        "{\"type\": \"complete_storyline\", \"card\": 9}",
    ),
    (
        "discard",
        "S10/K6: while over the hand limit at the End Phase, discard a card of your choice (the only legal action then).",
        "{\"type\": \"discard\", \"card\": 14}",
    ),
    (
        "end_turn",
        "End the main phase: End Phase (hand limit), then the next player's Ready, Income and Draw Phases.",
        "{\"type\": \"end_turn\"}",
    ),
];

/// Every action: name, documentation and a JSON example.
pub fn action_docs() -> Vec<Doc> {
    ACTIONS.iter().map(action_doc).collect()
}

/// One row of [`ACTIONS`] as a [`Doc`], its example parsed from its text.
fn action_doc(&(name, doc, example): &(&'static str, &'static str, &str)) -> Doc {
    Doc::with(name, doc, serde_json::from_str(example).unwrap_or_default())
}

/// Every resource: name and documentation.
const RESOURCES: &[(&str, &str)] = &[
    (
        "treasury",
        "S1: Currency, 0..=treasury_cap (20); excess gains are lost, voluntary spends refused when short, required costs drain to 0.",
    ),
    (
        "votes",
        "S5/S7: committed Votes in the Resource Pool; empty at the end of every phase.",
    ),
    (
        "ev",
        "S6/S7: EV in the Resource Pool; empty at the end of every phase.",
    ),
    (
        "sp",
        "S11/S12: Story Points, public, counted at the end of each Act then reset.",
    ),
    (
        "cp",
        "S8: Character Points per card with a printed CP; floor 0, no maximum.",
    ),
    ("act_wins", "S12: Acts won; two win the game."),
    (
        "factor",
        "S17: Galactic Factors, each bounded by its configured min and max.",
    ),
    (
        "card",
        "K5/S9: each permanent is ready or activated; activated cards ready in the Ready Phase.",
    ),
    (
        "ability",
        "S8: a \"-X CP:\" ability's once-per-turn use (one charge, recovered at each turn's end).",
    ),
];

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
    d.vocabulary = vocabulary();
    d.actions = action_docs();
    d.resources = RESOURCES
        .iter()
        .map(|(name, doc)| Doc::new(*name, *doc))
        .collect();
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

//! What a `charges` game says about itself: its [`Description`], with every action's JSON example, every
//! option with its default, and the resources, as `describe` and the README list them.

use crate::state::Config;
use crate::words;
use coffer_core::{Description, Doc};
use serde_json::json;

/// Every resource: name and documentation.
const RESOURCES: &[(&str, &str)] = &[
    (
        "charges",
        "Standard charges (gold) of one card, ship card or upgrade, spent from that card.",
    ),
    (
        "force",
        "The ship's one Force track (purple), capacity from the ship card and its upgrades.",
    ),
    (
        "shields",
        "The ship's one shield track (blue); recurring only on huge ships.",
    ),
    (
        "energy",
        "A huge ship's energy track (pink), recurring per the ship card.",
    ),
    (
        "focus, evade, disarm",
        "Circular tokens, removed in the End Phase.",
    ),
    (
        "stress",
        "Stress tokens, kept at the End Phase; a blue maneuver removes one.",
    ),
    (
        "damage",
        "Facedown and faceup damage cards; a ship with as many as its hull is destroyed.",
    ),
];

/// The ruleset's description: name, players, phases, resources, actions, options and vocabulary.
pub fn description() -> Description {
    let mut d = Description::new(
        "charges",
        env!("CARGO_PKG_VERSION"),
        "X-Wing second edition charges, Force, shields and energy",
    );
    d.min_players = 2;
    d.max_players = 4;
    d.phases = ["planning", "system", "activation", "engagement", "end"]
        .map(String::from)
        .to_vec();
    d.resources = RESOURCES
        .iter()
        .map(|(name, doc)| Doc::new(*name, *doc))
        .collect();
    d.actions = action_docs();
    d.options = option_docs();
    d.vocabulary = words::vocabulary();
    d
}

/// Every action: name, documentation and its JSON example as text.
const ACTIONS: &[(&str, &str, &str)] = &[
    (
        "plan",
        "Planning Phase: set a ship's dial to a maneuver colour (blue, white, red, purple); purple needs an active Force.",
        "{\"type\":\"plan\",\"ship\":0,\"maneuver\":\"white\"}",
    ),
    (
        "use_ability",
        "Use a card's ability at its timing (system, reveal, action, after_action, end), spending that card's own charges; refused when the effect cannot resolve.",
        "{\"type\":\"use_ability\",\"ship\":0,\"card\":2}",
    ),
    (
        "execute",
        "Activation Phase: reveal and execute the planned maneuver (blue removes a stress, red gains one or costs a huge ship one energy, purple spends one Force).",
        "{\"type\":\"execute\",\"ship\":0}",
    ),
    (
        "perform",
        "Activation Phase: perform the focus or evade action of the action bar (purple costs one Force, red gains a stress).",
        "{\"type\":\"perform\",\"ship\":0,\"action\":\"focus\"}",
    ),
    (
        "reload",
        "Activation Phase: the Reload action: a torpedo, missile or device upgrade below its limit recovers one charge and the ship gains a disarm token.",
        "{\"type\":\"reload\",\"ship\":0,\"card\":1}",
    ),
    (
        "pass",
        "Ends the ship's turn in the System, Activation (after executing) or Engagement Phase.",
        "{\"type\":\"pass\",\"ship\":0}",
    ),
    (
        "attack",
        "Engagement Phase: attack an enemy ship with the primary weapon (weapon 0) or an ordnance upgrade (spends one of its charges).",
        "{\"type\":\"attack\",\"ship\":0,\"target\":1,\"weapon\":0}",
    ),
    (
        "attack_dice",
        "The attacker's dice results (input).",
        "{\"type\":\"attack_dice\",\"hits\":1,\"crits\":0,\"focus\":1}",
    ),
    (
        "defence_dice",
        "The defender's dice results (input).",
        "{\"type\":\"defence_dice\",\"evades\":0,\"focus\":1}",
    ),
    (
        "spend_force",
        "At a dice step: spend one Force to change one focus result to a hit (attacking) or an evade (defending).",
        "{\"type\":\"spend_force\"}",
    ),
    (
        "spend_focus",
        "At a dice step: spend a focus token to change every focus result.",
        "{\"type\":\"spend_focus\"}",
    ),
    (
        "spend_evade",
        "At the defence dice step: spend an evade token to add an evade result.",
        "{\"type\":\"spend_evade\"}",
    ),
    (
        "done",
        "Ends the current dice step (the defender's ends the attack and deals its damage), or the player's End Phase.",
        "{\"type\":\"done\"}",
    ),
    (
        "suffer_damage",
        "Effect input on a ship's turn: a ship suffers 0-2 hits and 0-2 crits, at least one in all; shields absorb first, hits before crits.",
        "{\"type\":\"suffer_damage\",\"ship\":1,\"hits\":1,\"crits\":1}",
    ),
    (
        "deal_damage_card",
        "Effect input: deal a ship a damage card, ignoring shields.",
        "{\"type\":\"deal_damage_card\",\"ship\":1,\"faceup\":false}",
    ),
    (
        "gain_stress",
        "Effect input: a ship gains a stress token (a huge ship must then spend one energy to remove it, if able).",
        "{\"type\":\"gain_stress\",\"ship\":0}",
    ),
    (
        "lose",
        "Effect input: a ship loses one charge of its Force, shields, energy or a card.",
        "{\"type\":\"lose\",\"ship\":0,\"charges\":{\"card\":1}}",
    ),
    (
        "recover",
        "Effect input: a ship recovers one charge of its Force, shields, energy or a card; refused when they are all active or cannot be recovered.",
        "{\"type\":\"recover\",\"ship\":0,\"charges\":\"force\"}",
    ),
    (
        "place_in_reserve",
        "Effect input (C19): a ship in the play area is placed in reserve: no dial (a planned one is set aside), no actions, no attacks, its abilities inactive, and it cannot be attacked; in the End Phase it still loses its circular tokens and recovers recurring charges.",
        "{\"type\":\"place_in_reserve\",\"ship\":1}",
    ),
    (
        "deploy",
        "Effect input (C19): a ship in reserve is placed in the play area; it has no dial until the next Planning Phase, so no Activation turn this round.",
        "{\"type\":\"deploy\",\"ship\":1}",
    ),
    (
        "device_not_placed",
        "System Phase (C16), right after a ship drops a device and before anything else: the table reports that the device could not be placed, and play is reversed: the device is not placed, its charge is recovered (even one that cannot otherwise be), and the ship may still place a device this System Phase.",
        "{\"type\":\"device_not_placed\",\"ship\":0,\"card\":1}",
    ),
];

/// Every action with its JSON example, as `describe` and the README list them.
pub fn action_docs() -> Vec<Doc> {
    ACTIONS
        .iter()
        .map(|(name, doc, example)| {
            Doc::with(
                *name,
                *doc,
                serde_json::from_str(example).unwrap_or_default(),
            )
        })
        .collect()
}

/// Every configuration option with its default.
pub fn option_docs() -> Vec<Doc> {
    let d = Config::default();
    vec![
        Doc::with(
            "squads",
            "One squad per player: a list of 1-4 ships, each a pilot id and 0-7 upgrade ids.",
            serde_json::to_value(&d.squads).unwrap_or_default(),
        ),
        Doc::with(
            "force_recovery",
            "\"highest\": Force recovers the highest recurring count among the cards granting Force (current rules); \"one\": recovers one (older reading).",
            json!("highest"),
        ),
        Doc::with(
            "max_rounds",
            "The game ends after this many rounds (1-1000); the players with the most surviving ships win.",
            json!(d.max_rounds),
        ),
        Doc::with(
            "content",
            "Inline card content (pilots and upgrades) replacing the built-in set; null for the built-in set. Bounds: initiative 0-8, hull 1-40, attack 0-6 (ordnance 1-6), agility 0-4, charges, Force, shields and energy 0-20 each.",
            serde_json::Value::Null,
        ),
    ]
}

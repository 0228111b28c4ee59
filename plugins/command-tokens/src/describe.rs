//! The ruleset's [`Description`]: its actions with a JSON example each, its options with their defaults, its
//! resources and phases, from tables.

use crate::config::{Config, MAX_PLAYERS, MIN_PLAYERS};
use crate::words::vocabulary;
use coffer_core::{Description, Doc};

/// Each action's JSON `type`, what it does and an example.
const ACTIONS: [(&str, &str, &str); 43] = [
    (
        "pick",
        "Strategy phase: take a strategy card nobody holds (index into the card list).",
        r#"{"type":"pick","card":0}"#,
    ),
    (
        "tactical",
        "T4: spend a tactic token and place it in a system (index into the galaxy) that holds none of your tokens; others' tokens do not block. Movement follows (T14), then a space combat if another player's ships are there (T15), then production.",
        r#"{"type":"tactical","system":3}"#,
    ),
    (
        "produce",
        "Production of the tactical action: one ship of a class (index into the ship list) from your ship reinforcements into the activated system, at most `production` per action.",
        r#"{"type":"produce","class":2}"#,
    ),
    (
        "done",
        "Ends production and the tactical action (each produced ship was already checked against the fleet limit, T7).",
        r#"{"type":"done"}"#,
    ),
    (
        "strategic",
        "Resolve the primary of a strategy card you hold and have not used; then each other player may resolve its secondary.",
        r#"{"type":"strategic","card":0}"#,
    ),
    (
        "pass",
        "Pass for the rest of the action phase, once every card you hold is used.",
        r#"{"type":"pass"}"#,
    ),
    (
        "gain",
        "T2: put one gained command token in the pool of your choice (tactic, fleet, strategy).",
        r#"{"type":"gain","pool":"fleet"}"#,
    ),
    (
        "buy",
        "T9 (Leadership): spend influence for one token per 3; the excess is wasted; no more tokens than reinforcements hold.",
        r#"{"type":"buy","influence":7}"#,
    ),
    (
        "secondary",
        "T5: resolve the secondary of the card just played, spending its cost in strategy tokens (to reinforcements); Leadership's costs none.",
        r#"{"type":"secondary"}"#,
    ),
    ("decline", "Decline the secondary.", r#"{"type":"decline"}"#),
    (
        "diplomacy",
        "Diplomacy primary: choose a system other than Mecatol Rex; each other player places a token there from reinforcements (T3, T6).",
        r#"{"type":"diplomacy","system":2}"#,
    ),
    (
        "fallback",
        "T3: your reinforcements are empty and a token must be placed from them: choose the pool it comes from.",
        r#"{"type":"fallback","pool":"strategy"}"#,
    ),
    (
        "remove_token",
        "Warfare primary: remove one of your command tokens from the board to reinforcements.",
        r#"{"type":"remove_token","system":3}"#,
    ),
    (
        "place",
        "Construction secondary: place a token from reinforcements in a system (T6: where you have one, it goes back to reinforcements and the structure is still placed); `fallback` names the pool when reinforcements are empty (T3).",
        r#"{"type":"place","system":4}"#,
    ),
    (
        "redistribute",
        "Status phase and Warfare: the new tactic/fleet/strategy counts, summing to the tokens on your command sheet.",
        r#"{"type":"redistribute","tactic":4,"fleet":4,"strategy":2}"#,
    ),
    (
        "remove_ship",
        "T7/K6: remove one non-fighter ship over the fleet limit to reinforcements; the only legal action while a limit is exceeded.",
        r#"{"type":"remove_ship","system":1,"class":3}"#,
    ),
    (
        "free_secondaries",
        "Trade's primary (T11): the other players (any number, none included) who then resolve Trade's secondary without spending a command token, and must.",
        r#"{"type":"free_secondaries","players":[1,3]}"#,
    ),
    (
        "move",
        "T14: one of your ships of a class with a move value moves from a system without your command token into the activated system, along adjacent systems no more than its move value, never through a system holding another player's ships; it transports up to its capacity of fighters from that system (`fighters`, default 0). The fleet pool limits the ships there at once (T7).",
        r#"{"type":"move","from":4,"class":3,"fighters":2}"#,
    ),
    (
        "end_movement",
        "T14: ends movement: a space combat follows if another player has ships in the activated system (T15), else production. With no combat due, `produce` and `done` also end movement.",
        r#"{"type":"end_movement"}"#,
    ),
    (
        "announce_retreat",
        "T15: in a space combat round, announce a retreat (the defender first; the attacker not after the defender announced one); only with a system to retreat to.",
        r#"{"type":"announce_retreat"}"#,
    ),
    (
        "no_retreat",
        "T15: in a space combat round, announce no retreat.",
        r#"{"type":"no_retreat"}"#,
    ),
    (
        "roll",
        "T15: the hits your combat roll produced, rolled at the table, at most one per ship of yours in the combat; the attacker rolls first.",
        r#"{"type":"roll","hits":1}"#,
    ),
    (
        "destroy",
        "T15: destroy one of your ships in the combat for a hit against you (it returns to reinforcements); the attacker assigns first.",
        r#"{"type":"destroy","class":1}"#,
    ),
    (
        "retreat",
        "T16: after the hits, the player who announced a retreat moves every ship with a move value (and the fighters they transport; the rest are removed) to an adjacent system holding their ships and no other player's, and places a command token there from reinforcements unless one is there; `fallback` names the pool when reinforcements are empty (T3).",
        r#"{"type":"retreat","system":3}"#,
    ),
    (
        "eliminate",
        "T18 (LRR 33): after the invasion step of your tactical action (during production, or with no space combat due, in movement), record that the table found a player still in the game (another, or you) meeting LRR 33.1: no ground forces on the board, no unit with Production, no planet. Their command tokens and units return to the game box (tokens of theirs in another player's fleet pool stay), their strategy cards return to the common play area and the speaker token passes left. Not the last player; only with option `elimination`. Eliminating yourself ends your turn.",
        r#"{"type":"eliminate","player":2}"#,
    ),
    (
        "star_forge",
        "T19, the Embers of Muaat's Star Forge, a component action that takes your turn: spend 1 token from your strategy pool to place 2 fighters or 1 destroyer (`class`) from your reinforcements (as many as are left) in a system holding one of your war suns. Placed ships are held to the fleet limit (T7).",
        r#"{"type":"star_forge","system":4,"class":1}"#,
    ),
    (
        "component_action",
        "T21: a component action that spends strategy tokens and takes your turn, by index into the game's list (the table's Abilities section): the Federation of Sol's Orbital Drop, Production Biomes (exhausts until the round's end); what it does besides (infantry, trade goods) is not modelled.",
        r#"{"type":"component_action","ability":0}"#,
    ),
    (
        "play_card",
        "T22: play an action card of your hand (option `action_cards`), by its slot in the game's list of dealt cards (the table's Action cards section), in its window: as your turn's action (Insubordination with `player`, Unexpected Action with `system`, Signal Jamming with `system` and `player`), at the start of the strategy phase (Summit), at the start of a combat round (Skilled Retreat with `system`, and `fallback` when reinforcements are empty), or after an agenda is revealed (a rider, with its prediction: `vote` or `elect`).",
        r#"{"type":"play_card","card":2,"player":1}"#,
    ),
    (
        "no_card",
        "T22: play no (more) action card in this window.",
        r#"{"type":"no_card"}"#,
    ),
    (
        "use_ability",
        "T23: use an ability that reacts to another player, by index into the game's list (the table's Abilities section): Nullification Field (the Xxcha Kingdom's technology) after a system holding your ships is activated, which ends that player's turn; Foresight (the Naalu Collective), with the adjacent `system`, after ships move into a system holding yours.",
        r#"{"type":"use_ability","ability":1,"system":4}"#,
    ),
    (
        "no_reaction",
        "T23: do not use the ability the game waits on (Nullification Field, Foresight, or Predictive Intelligence at the end of your turn; with Predictive Intelligence, `redistribute` uses it).",
        r#"{"type":"no_reaction"}"#,
    ),
    (
        "elect_card",
        "T24: the strategy card an Elect Strategy Card agenda elects (Galactic Crisis Pact): each player, from the speaker, may then resolve its secondary ability without spending a command token.",
        r#"{"type":"elect_card","card":3}"#,
    ),
    (
        "additional_action",
        "T24, Minister of War: at the end of your turn (not after passing), discard it to return your command token in `system` to reinforcements, then take one more action.",
        r#"{"type":"additional_action","system":3}"#,
    ),
    (
        "swap_cards",
        "T27, the Emirates of Hacan's Quantum Datahub Node: at the end of the strategy phase, spend 1 strategy token (and, at the table, give 3 trade goods) to give one of your strategy cards (`give`) to the holder of `take` and take `take`.",
        r#"{"type":"swap_cards","give":1,"take":4}"#,
    ),
    (
        "prerequisites",
        "T29, Research Grant Reallocation: the speaker enters how many prerequisites (0 to 4) the technology the elected player gains has; that player returns that many fleet-pool tokens (as many as there are). Gaining the technology is not modelled.",
        r#"{"type":"prerequisites","count":2}"#,
    ),
    (
        "recombine",
        "T27, the Mahact Gene-Sorcerers' Genetic Recombination: before votes are cast, exhaust it to name a player, who then votes as you choose (`no_reaction`, at the table) or returns a token from their fleet pool (`return_token` with `fleet`).",
        r#"{"type":"recombine","player":2}"#,
    ),
    (
        "reveal_agenda",
        "T20, agenda phase: the speaker enters the agenda revealed from the deck, by index into data/agendas.json (each once per game), or, with no `agenda`, one that does nothing to command tokens.",
        r#"{"type":"reveal_agenda","agenda":0}"#,
    ),
    (
        "quash",
        "T20, the Xxcha Kingdom's Quash: when an agenda is revealed, spend 1 token from your strategy pool to discard it; the speaker reveals another.",
        r#"{"type":"quash"}"#,
    ),
    (
        "no_quash",
        "T20: let the revealed agenda stand.",
        r#"{"type":"no_quash"}"#,
    ),
    (
        "outcome",
        "T20: the speaker enters the outcome the table voted for a For/Against agenda: `for` or `against`; for an Against that concerns those who voted it (Wormhole Research, T24), `voted_against` lists them.",
        r#"{"type":"outcome","vote":"against"}"#,
    ),
    (
        "elect",
        "T20: the speaker enters the player an Elect Player agenda elects (a player still in the game).",
        r#"{"type":"elect","player":2}"#,
    ),
    (
        "return_token",
        "T20: return a command token from a pool of your command sheet to reinforcements, as an agenda requires (Clandestine Operations' For: 2 tokens of your choice).",
        r#"{"type":"return_token","pool":"tactic"}"#,
    ),
    (
        "release",
        "T17, Edict: after a token of another player's entered your fleet pool over a law's maximum, return one token from it to its owner's reinforcements: one of yours (`player` is you) or another player's.",
        r#"{"type":"release","player":2}"#,
    ),
];

/// Each option of [`Config`] and what it does; the example is its default.
const OPTIONS: [(&str, &str); 16] = [
    (
        "rounds",
        "Rounds played, 1 to 1000; the game then ends and each player scores the tokens on their command sheet.",
    ),
    (
        "factions",
        "Faction id per player: one per player, each known and taken once; empty: the first factions of data/factions.json in order (letnev, sol, hacan, jolnar, xxcha, mentak, arborec, saar).",
    ),
    (
        "laws",
        "Laws in play from the start, e.g. [\"fleet-regulations\"]; a law may not cap the fleet pool below 3.",
    ),
    (
        "technologies",
        "Technologies each player owns from the start, one list per player, e.g. [[\"hyper-metabolism\"], [], []]; each known and owned once; empty: none.",
    ),
    (
        "galaxy",
        "Systems: [{\"id\":\"18\",\"no_diplomacy\":true,\"adjacent\":[\"19\"],\"ships\":[{\"player\":0,\"class\":\"carrier\",\"count\":2}]}]; `adjacent` names the systems next to it (mutual, so one side is enough; not itself). Empty: Mecatol Rex (18), one home system per player with the faction's starting fleet, then one empty system per player (19, 20, ...), in a ring around Mecatol Rex where each empty system touches Mecatol Rex and the home systems before and after it. At most 200 systems, ids unique and not empty; no more ships of a class than the player's pieces; one player's ships per system.",
    ),
    (
        "influence",
        "Influence each player has each round for Leadership, 0 to 1000000; unspent influence is lost at the round's end.",
    ),
    (
        "influence_per_player",
        "Influence per player (one value per player, each 0 to 1000000), overriding `influence` when not empty.",
    ),
    (
        "production",
        "Most ships one tactical action produces, 0 to 20.",
    ),
    (
        "cards_per_player",
        "Strategy cards each player picks; 0: 2 with 3-4 players, 1 with 5-8; otherwise at most the number of strategy cards divided by the players.",
    ),
    (
        "content",
        "Inline content replacing embedded lists: {\"ships\":[...],\"strategy_cards\":[...],\"factions\":[...],\"laws\":[...],\"technologies\":[...],\"agendas\":[...]}.",
    ),
    (
        "elimination",
        "Whether the table may declare a player eliminated with `eliminate` (T18, LRR 33). Off by default: LRR 33.1's three conditions concern ground forces, units with Production and planets, which this ruleset does not model, so only a table that tracks them can decide; with it on, random playouts also eliminate players far more often than play does.",
    ),
    (
        "agenda_phase_from",
        "The round from which every round ends with an agenda phase (T20, LRR 8), 0 to 1000; 0: never. The agenda phase begins once the custodians token leaves Mecatol Rex, which the table decides; in it the speaker reveals two agendas in turn, the Xxcha may Quash each, and the speaker enters the outcome the table voted.",
    ),
    (
        "action_cards",
        "The action cards each player holds, by id from data/action_cards.json, one list per player (e.g. [[\"summit\"], [\"skilled-retreat\"], []]); each is played once; no more of a card than the deck's copies; at most 32 dealt and 4 riders. Drawing is not modelled: hands are dealt by configuration and known to all. Empty: none.",
    ),
    (
        "wormholes",
        "The systems holding an alpha or beta wormhole, by system id (T29): Wormhole Reconstruction's Against places tokens there, and its For makes them adjacent to each other. Empty: none (the default galaxy has none).",
    ),
    (
        "relic_fragments",
        "The relic fragments each player holds at the start, one count per player, 0 to 16 (T28; e.g. [2, 0, 0]): the Naaz-Rokha Alliance's Fabrication purges one for a command token. Exploration is not modelled: fragments come only from here. Empty: none.",
    ),
    (
        "homes",
        "Each player's home system by system id, one per player (Shared Research's Against places a token there); empty: the system `home-<faction>` if the galaxy has one, as the default galaxy does.",
    ),
];

/// Each resource and what it holds.
const RESOURCES: [(&str, &str); 9] = [
    (
        "reinforcements",
        "Each player's command tokens off the sheet and off the board (16 tokens in all per player, T1).",
    ),
    (
        "tactic pool",
        "Tokens spent for tactical actions (faction side up).",
    ),
    (
        "fleet pool",
        "Tokens that cap non-fighter ships per system (ship side up); never spent for actions.",
    ),
    (
        "strategy pool",
        "Tokens spent for secondaries (faction side up).",
    ),
    (
        "system",
        "One zone per system: at most one command token per player (T6).",
    ),
    (
        "ships",
        "Ship pieces per player: in reinforcements per class, and per system and class.",
    ),
    (
        "influence",
        "Per player per round, spent on Leadership; resets at the round's end.",
    ),
    (
        "structures",
        "Structures placed by Construction, per player.",
    ),
    (
        "strategy card",
        "Exhausted once its strategic action is done; readied at the round's end.",
    ),
];

/// The description `coffer describe` shows.
pub(crate) fn description() -> Description {
    let mut d = Description::new(
        "command-tokens",
        env!("CARGO_PKG_VERSION"),
        "Twilight Imperium 4 command tokens: tactic, fleet and strategy pools, reinforcements, the fleet limit",
    );
    d.min_players = MIN_PLAYERS as u16;
    d.max_players = MAX_PLAYERS as u16;
    d.phases = vec![
        "strategy".into(),
        "action".into(),
        "status".into(),
        "agenda".into(),
    ];
    d.resources = RESOURCES
        .iter()
        .map(|&(name, doc)| Doc::new(name, doc))
        .collect();
    d.actions = ACTIONS
        .iter()
        .map(|&(name, doc, example)| {
            let example = serde_json::from_str(example).expect("an action's example is JSON");
            Doc::with(name, doc, example)
        })
        .collect();
    d.vocabulary = vocabulary();
    d.options = option_docs();
    d
}

/// The options' docs, each with its default as the example.
fn option_docs() -> Vec<Doc> {
    let defaults = serde_json::to_value(Config::default()).expect("the configuration is JSON");
    OPTIONS
        .iter()
        .map(|&(name, doc)| {
            let default = defaults
                .get(name)
                .cloned()
                .expect("every option has a default");
            Doc::with(name, doc, default)
        })
        .collect()
}

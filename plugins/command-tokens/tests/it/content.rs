//! Content and configuration: the embedded data is valid, bad data is refused with the entry and field
//! named, and the Description and README document every action and option.

use crate::support::*;
use coffer_command_tokens::{Action, CommandTokens, Config, Content, ContentError};
use coffer_core::{Adapter, Owner, Ruleset, Setup, SetupError};

#[test]
fn embedded_content_is_valid() {
    let c = Content::embedded().unwrap();
    assert_eq!(c.strategy_cards.len(), 8);
    assert!(c.faction("sol").is_some_and(|f| f.status_phase_tokens == 1));
    assert!(
        c.faction("letnev")
            .is_some_and(|f| f.fleet_limit_bonus == 2)
    );
    assert_eq!(
        c.law("fleet-regulations").and_then(|l| l.fleet_pool_max),
        Some(4)
    );
}

#[test]
fn content_errors_name_the_entry_and_the_field() {
    let e = Content::with_file(
        "factions.json",
        r#"[{"id":"x","name":"X","starting_fleet":{"warsun":1}}]"#,
    )
    .unwrap_err();
    assert_eq!(
        e,
        ContentError::Invalid {
            file: "factions.json",
            entry: "x".into(),
            field: "starting_fleet",
            message:
                "unknown ship class 'warsun'; known: fighter, destroyer, cruiser, carrier, dreadnought, war_sun"
                    .into()
        }
    );
    let e = Content::with_file("ships.json", r#"[{"id":"a","name":"A","fleet":true,"reinforcements":1},{"id":"a","name":"B","fleet":true,"reinforcements":1}]"#).unwrap_err();
    assert_says(&e, "entry 'a', field 'id': appears twice");
    let e = Content::with_file("strategy_cards.json", r#"[{"id":"l","name":"L","initiative":1,"primary":[{"effect":"gain","tokens":0}],"secondary":[],"secondary_cost":0}]"#).unwrap_err();
    assert_says(
        &e,
        "entry 'l', field 'primary': a gain of 0 tokens is out of range: 1 to 16",
    );
    let e = Content::with_file(
        "laws.json",
        r#"[{"id":"x","name":"X","fleet_pool_max":4,"colour":"red"}]"#,
    )
    .unwrap_err();
    assert_says(&e, "unknown field `colour`");
    let e = Content::with_file("strategy_cards.json", r#"[{"id":"l","name":"L","initiative":1,"primary":[{"effect":"teleport"}],"secondary":[],"secondary_cost":0}]"#).unwrap_err();
    assert_says(&e, "unknown variant `teleport`");
}

/// Sets one option of a configuration.
type SetOption = fn(&mut Config);

#[test]
fn absurd_numbers_in_the_configuration_are_refused_with_their_bounds() {
    let r = CommandTokens::new();
    let bad = |c: Config| r.new_game(3, 1, &c).unwrap_err().to_string();
    let error = |text: &str| format!("invalid configuration: {text}");
    // Out-of-range options, one at a time.
    let out_of_range: [(SetOption, &str); 5] = [
        (|c| c.rounds = 0, "rounds: 0 is out of range: 1 to 1000"),
        (
            |c| c.rounds = 1001,
            "rounds: 1001 is out of range: 1 to 1000",
        ),
        (
            |c| c.production = 21,
            "production: 21 is out of range: 0 to 20",
        ),
        (
            |c| c.influence = 1_000_001,
            "influence: 1000001 is out of range: 0 to 1000000",
        ),
        (
            |c| c.influence_per_player = vec![1, 2, 3_000_000],
            "influence_per_player[2]: 3000000 is out of range: 0 to 1000000",
        ),
    ];
    for (set, text) in out_of_range {
        let mut c = Config::default();
        set(&mut c);
        assert_eq!(bad(c), error(text));
    }
    assert_eq!(
        bad(Config {
            influence_per_player: vec![1, 2],
            ..Default::default()
        }),
        error(
            "influence_per_player: 2 values given, but 3 players need 3 (or none, to use `influence`)"
        )
    );
    let galaxy = (0..201)
        .map(|i| coffer_command_tokens::SystemConfig {
            id: i.to_string(),
            ships: Vec::new(),
            no_diplomacy: false,
            adjacent: Vec::new(),
        })
        .collect();
    assert_eq!(
        bad(Config {
            galaxy,
            ..Default::default()
        }),
        error("galaxy: 201 systems, but a galaxy holds 1 to 200")
    );
    let galaxy = carriers_in_a(3, 1);
    assert_eq!(
        bad(Config {
            galaxy,
            ..Default::default()
        }),
        error("galaxy[0].ships[0].player: player 3 is not in this game: players are 0 to 2")
    );
    let e = Content::with_file(
        "ships.json",
        r#"[{"id":"a","name":"A","fleet":true,"reinforcements":1001}]"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ships.json: entry 'a', field 'reinforcements': 1001 is out of range: 0 to 1000"
    );
    let e = Content::with_file(
        "ships.json",
        r#"[{"id":"a","name":"A","fleet":true,"reinforcements":1,"move":11}]"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ships.json: entry 'a', field 'move': 11 is out of range: 1 to 10 (a class that cannot move has no `move`)"
    );
    let e = Content::with_file(
        "ships.json",
        r#"[{"id":"a","name":"A","fleet":false,"reinforcements":1},{"id":"b","name":"B","fleet":false,"reinforcements":1}]"#,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "ships.json: entry 'b', field 'move': missing, but only one class may lack a move value (it is transported within capacity, LRR 95); classes without one: a, b"
    );
    let e = Content::with_file("laws.json", r#"[{"id":"x","name":"","fleet_pool_max":4}]"#)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "laws.json: entry 'x', field 'name': must not be empty"
    );
}

#[test]
fn configuration_errors_are_clear() {
    let r = CommandTokens::new();
    let bad = |c: Config| r.new_game(3, 1, &c).unwrap_err().to_string();
    assert!(
        bad(Config {
            factions: vec!["sol".into(), "sol".into(), "hacan".into()],
            ..Default::default()
        })
        .contains("factions[1]: 'sol' is taken twice")
    );
    assert!(
        bad(Config {
            factions: vec!["zz".into(), "sol".into(), "hacan".into()],
            ..Default::default()
        })
        .contains("factions[0]: unknown faction 'zz'; known: letnev, sol, hacan")
    );
    assert!(
        bad(Config {
            laws: vec!["nope".into()],
            ..Default::default()
        })
        .contains("laws[0]: unknown law 'nope'; known: fleet-regulations")
    );
    assert_eq!(
        bad(Config {
            cards_per_player: 3,
            ..Default::default()
        }),
        "invalid configuration: cards_per_player: 3 cards for each of 3 players needs 9, but there are 8 strategy cards: 0 (the default) or 1 to 2 with 3 players"
    );
    let galaxy = carriers_in_a(0, 5);
    assert!(
        bad(Config {
            galaxy,
            ..Default::default()
        })
        .contains("galaxy[0].ships[0].count: player 0 would have 5 carrier pieces in the galaxy, but only 4 exist")
    );
    let system =
        |id: &str, adjacent: &[&str], players: &[u16]| coffer_command_tokens::SystemConfig {
            id: id.into(),
            ships: players
                .iter()
                .map(|&player| coffer_command_tokens::ShipsConfig {
                    player,
                    class: "cruiser".into(),
                    count: 1,
                })
                .collect(),
            no_diplomacy: false,
            adjacent: adjacent.iter().map(|a| a.to_string()).collect(),
        };
    let galaxy = |systems| Config {
        galaxy: systems,
        ..Default::default()
    };
    assert_eq!(
        bad(galaxy(vec![system("a", &["b"], &[])])),
        "invalid configuration: galaxy[0].adjacent[0]: no system 'b' in the galaxy"
    );
    assert_eq!(
        bad(galaxy(vec![system("a", &["a"], &[])])),
        "invalid configuration: galaxy[0].adjacent[0]: a system is not adjacent to itself (LRR 6.2a)"
    );
    assert_eq!(
        bad(galaxy(vec![system("a", &[], &[0, 1])])),
        "invalid configuration: galaxy[0].ships: players 0 and 1 both have ships in 'a'; a system holds one player's ships outside a space combat"
    );
    // Adjacency is mutual: named on one side, it holds both ways.
    let s = game(
        3,
        galaxy(vec![system("a", &["b"], &[]), system("b", &[], &[])]),
    );
    assert_eq!(s.rules.adjacent, [vec![1], vec![0]]);
    let adapter = Adapter::shared(CommandTokens::new());
    assert!(matches!(
        adapter.new_game(&Setup::new(2, 1)),
        Err(SetupError::Players {
            got: 2,
            min: 3,
            max: 8
        })
    ));
    assert!(matches!(
        adapter.new_game(&Setup::new(9, 1)),
        Err(SetupError::Players { got: 9, .. })
    ));
    let e = adapter
        .new_game(&Setup::new(3, 1).config(serde_json::json!({"round": 2})))
        .err()
        .unwrap();
    assert_says(&e, "unknown field `round`");
    let e = adapter
        .new_game(
            &Setup::new(3, 1)
                .config(serde_json::json!({"content": {"laws": [{"id": "", "name": "x"}]}})),
        )
        .err()
        .unwrap();
    assert_says(&e, "laws.json: entry '#0', field 'id': must not be empty");
}

#[test]
fn inline_content_replaces_the_embedded_list() {
    let adapter = Adapter::shared(CommandTokens::new());
    let config = serde_json::json!({"laws": ["tight"], "content": {"laws": [{"id": "tight", "name": "Tight", "fleet_pool_max": 3}]}});
    let game = adapter.new_game(&Setup::new(3, 1).config(config)).unwrap();
    game.check_invariants().unwrap();
    assert_eq!(rules_of(&*game).fleet_pool_max, Some(3));
}

/// The rules of a game, read back from its JSON snapshot (which carries only their key).
fn rules_of(game: &dyn coffer_core::DynGame) -> coffer_command_tokens::Rules {
    let bytes = game.snapshot(coffer_core::Format::Json).unwrap();
    let state: coffer_command_tokens::State = serde_json::from_slice(&bytes).unwrap();
    (*state.rules).clone()
}

#[test]
fn a_snapshot_rebuilds_its_rules_from_the_configuration_once_no_game_shares_them() {
    use coffer_core::Format;
    let adapter = Adapter::shared(CommandTokens::new());
    let config = serde_json::json!({"laws": ["tight"], "rounds": 2, "content": {"laws": [{"id": "tight", "name": "Tight", "fleet_pool_max": 3}]}});
    let game = adapter.new_game(&Setup::new(4, 9).config(config)).unwrap();
    let (hash, table, resources) = (game.state_hash(), game.table(None), game.resources(None));
    let snapshots = [Format::Json, Format::Binary].map(|f| (f, game.snapshot(f).unwrap()));
    // The last game of this configuration is gone, and its rules with it: restoring builds them again.
    drop(game);
    for (format, bytes) in snapshots {
        let restored = adapter.restore(format, &bytes).unwrap();
        assert_eq!(restored.state_hash(), hash, "{format:?}");
        assert_eq!(restored.table(None), table, "{format:?}");
        assert_eq!(restored.resources(None), resources, "{format:?}");
        assert_eq!(rules_of(&*restored).fleet_pool_max, Some(3));
    }
}

#[test]
fn description_documents_every_action_and_option_and_matches_the_readme() {
    let d = CommandTokens::new().describe();
    assert_eq!(
        (d.id.as_str(), d.min_players, d.max_players),
        ("command-tokens", 3, 8)
    );
    assert_eq!(d.phases, ["strategy", "action", "status", "agenda"]);
    let readme = include_str!("../../README.md");
    // Every `{"type": ...}` JSON object written in the README.
    let readme_examples: Vec<serde_json::Value> = readme
        .match_indices("{\"type\"")
        .filter_map(|(i, _)| {
            readme[i..]
                .find('}')
                .and_then(|j| serde_json::from_str(&readme[i..=i + j]).ok())
        })
        .collect();
    for a in &d.actions {
        let action: Action =
            serde_json::from_value(a.value.clone()).unwrap_or_else(|e| panic!("{}: {e}", a.name));
        assert_eq!(
            serde_json::to_value(action).unwrap()["type"],
            a.name.as_str()
        );
        assert!(
            readme_examples.contains(&a.value),
            "README lacks the example of `{}`: {}",
            a.name,
            a.value
        );
    }
    let defaults = serde_json::to_value(Config::default()).unwrap();
    for o in &d.options {
        assert_eq!(defaults[&o.name], o.value, "default of {}", o.name);
        assert!(
            readme.contains(&format!("`{}`", o.name)),
            "README lacks option `{}`",
            o.name
        );
    }
    assert_eq!(
        defaults.as_object().unwrap().len(),
        d.options.len(),
        "every option is described"
    );
    // Each action variant appears among the documented ones.
    let names: Vec<&str> = d.actions.iter().map(|a| a.name.as_str()).collect();
    for example in [
        Action::Pick { card: 0 },
        Action::Done,
        Action::Pass,
        Action::Secondary,
        Action::Decline,
        Action::RemoveShip {
            system: 0,
            class: 0,
        },
        Action::Redistribute {
            tactic: 0,
            fleet: 0,
            strategy: 0,
        },
        Action::Eliminate { player: 0 },
    ] {
        let name = serde_json::to_value(example).unwrap()["type"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(names.contains(&name.as_str()), "{name}");
    }
    assert_eq!(names.len(), 43);
}

#[test]
fn default_galaxy_has_mecatol_a_home_per_player_and_empty_systems() {
    let s = default_game(6);
    assert_eq!(s.rules.system_count(), 13);
    assert!(s.rules.systems[0].no_diplomacy);
    assert_eq!(s.rules.systems[1].id, "home-letnev");
    assert_eq!(s.ships(Owner(0), 1, class(&s, "dreadnought").into()), 1);
    assert_eq!(s.ships(Owner(1), 2, class(&s, "carrier").into()), 2);
    assert_eq!(s.rules.cards_per_player, 1);
    assert_eq!(default_game(4).rules.cards_per_player, 2);
    // A ring around Mecatol Rex (0): the first empty system (7) touches it and homes 1 and 2; home 1
    // touches the first and the last empty system.
    assert_eq!(s.rules.adjacent[7], [0, 1, 2]);
    assert_eq!(s.rules.adjacent[1], [7, 12]);
    assert_eq!(s.rules.adjacent[0], [7, 8, 9, 10, 11, 12]);
}

/// A six-player game of `seed` after `n` actions, each the first legal action of the first player who has
/// one.
fn first_actions(
    adapter: &std::sync::Arc<dyn coffer_core::DynRuleset>,
    seed: u64,
    n: usize,
) -> Box<dyn coffer_core::DynGame> {
    let mut game = adapter.new_game(&Setup::new(6, seed)).unwrap();
    for _ in 0..n {
        let p = (0..6)
            .map(coffer_core::Owner)
            .find(|&p| game.legal_actions(p) > 0)
            .unwrap();
        game.legal_actions(p);
        game.apply_legal(p, 0).unwrap();
    }
    game
}

#[test]
fn snapshots_round_trip_and_damaged_ones_are_refused() {
    use coffer_core::Format;
    let adapter = Adapter::shared(CommandTokens::new());
    let game = first_actions(&adapter, 3, 40);
    for format in [Format::Json, Format::Binary] {
        let bytes = game.snapshot(format).unwrap();
        let restored = adapter.restore(format, &bytes).unwrap();
        assert_eq!(restored.state_hash(), game.state_hash(), "{format:?}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&game.snapshot(Format::Json).unwrap()).unwrap();
    for (path, value) in [
        ("/flow/resolver", serde_json::json!(9)),
        ("/flow/order/0", serde_json::json!(1)),
        ("/flow/card", serde_json::json!(8)),
        // The rules are carried as the player count and configuration they are built from: a count
        // other than the ledger's, or a configuration that builds nothing, is refused.
        ("/rules/0", serde_json::json!(4)),
        ("/rules/0", serde_json::json!(99)),
        (
            "/rules/1/factions",
            serde_json::json!(["sol", "sol", "sol"]),
        ),
        // The handles too are carried as the setup they come from: another one is refused.
        ("/h/0", serde_json::json!(5)),
        ("/h/1/rounds", serde_json::json!(4)),
        ("/flow/step", serde_json::json!("pick")),
    ] {
        let mut damaged = json.clone();
        *damaged.pointer_mut(path).unwrap() = value;
        let e = adapter
            .restore(Format::Json, damaged.to_string().as_bytes())
            .err()
            .unwrap();
        assert!(e.to_string().contains("invalid snapshot"), "{path}: {e}");
    }
}

#[test]
fn a_snapshot_is_laid_on_the_layout_of_the_setup_it_names_and_refused_if_it_does_not_fit() {
    use coffer_core::Format;
    let adapter = Adapter::shared(CommandTokens::new());
    let game = first_actions(&adapter, 5, 30);
    let json: serde_json::Value =
        serde_json::from_slice(&game.snapshot(Format::Json).unwrap()).unwrap();
    // The ledger is written without its zones, supply totals and reserves: the setup gives them back.
    let ledger = json["ledger"]["setup"].as_object().unwrap();
    for field in ["zones", "supply", "reserve"] {
        assert!(!ledger.contains_key(field), "{field}");
    }
    let state: coffer_command_tokens::State = serde_json::from_value(json.clone()).unwrap();
    assert!(state.ledger.has_layout(&state.h.layout));
    // Rules and handles of a setup laid out otherwise (Mahact's Edict adds a zone) do not fit the token
    // counts of this one: refused, whether the setup is named consistently or only by the handles.
    let mahact = serde_json::json!(["letnev", "sol", "hacan", "jolnar", "xxcha", "mahact"]);
    for paths in [
        &["/rules/1/factions", "/h/1/factions"][..],
        &["/h/1/factions"][..],
    ] {
        let mut damaged = json.clone();
        for path in paths {
            *damaged.pointer_mut(path).unwrap() = mahact.clone();
        }
        let e = adapter
            .restore(Format::Json, damaged.to_string().as_bytes())
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("invalid snapshot"), "{paths:?}: {e}");
        assert!(e.contains("zones of 6 owners"), "{paths:?}: {e}");
    }
    // A ledger written whole (its own layout) is read and checked whole, and must fit the handles too.
    let mut whole = json.clone();
    whole["ledger"] = serde_json::json!({ "own": serde_json::to_value(&state.ledger).unwrap() });
    let restored = adapter
        .restore(Format::Json, whole.to_string().as_bytes())
        .unwrap();
    // Its layout is the setup's: shared again, it is written and hashed as if it had never left.
    assert_eq!(restored.state_hash(), game.state_hash());
    let mut short = whole.clone();
    let zones = short["ledger"]["own"]["zones"].as_array_mut().unwrap();
    zones.truncate(zones.len() - 1);
    let e = adapter
        .restore(Format::Json, short.to_string().as_bytes())
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("invalid snapshot"), "{e}");
}

#[test]
fn games_of_one_setup_share_their_rules_and_handles_whatever_the_seed() {
    use coffer_core::{Ruleset, Shared};
    let r = CommandTokens::new();
    let a = r.new_game(4, 1, &Config::default()).unwrap();
    let b = r.new_game(4, 99, &Config::default()).unwrap();
    assert!(Shared::same(&a.rules, &b.rules));
    assert!(Shared::same(&a.h, &b.h));
    // Handles rebuilt from the key alone (as a restore in a fresh process does) are the same handles.
    let rebuilt =
        <coffer_command_tokens::Handles as coffer_core::SharedContent>::build(a.h.key()).unwrap();
    assert_eq!(rebuilt, *a.h);
    let other = r.new_game(5, 1, &Config::default()).unwrap();
    assert!(!Shared::same(&a.h, &other.h));
    // Their ledgers share the setup's layout too.
    assert!(a.ledger.has_layout(&a.h.layout) && b.ledger.has_layout(&a.h.layout));
}

/// A galaxy of one system, a, holding `count` of `player`'s carriers.
fn carriers_in_a(player: u16, count: u32) -> Vec<coffer_command_tokens::SystemConfig> {
    vec![coffer_command_tokens::SystemConfig {
        id: "a".into(),
        ships: vec![coffer_command_tokens::ShipsConfig {
            player,
            class: "carrier".into(),
            count,
        }],
        no_diplomacy: false,
        adjacent: Vec::new(),
    }]
}

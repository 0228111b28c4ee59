//! Card content: the starter set's coverage, validation errors naming the card and the field, inline content
//! and configuration errors.

use coffer_core::{Adapter, Owner, Ruleset, Setup, SetupError};
use coffer_story_acts::{
    CardDb, CardDef, CardType, Config, Deed, Effect, StoryActs, content::LocationKind,
    content::RewardTo,
};

fn names() -> Vec<String> {
    Config::default()
        .factors
        .into_iter()
        .map(|f| f.name)
        .collect()
}

fn starter() -> CardDb {
    CardDb::starter(&names()).expect("the embedded starter set is valid")
}

#[test]
fn starter_set_has_thirty_cards_and_two_homeworlds_with_prime_faces_and_preferences() {
    let db = starter();
    let (homeworlds, others): (Vec<&CardDef>, Vec<&CardDef>) = db
        .cards()
        .iter()
        .partition(|c| c.card_type == CardType::Homeworld);
    assert!(others.len() >= 30, "{} cards", others.len());
    assert_eq!(homeworlds.len(), 2);
    for h in homeworlds {
        assert!(!h.preferred.is_empty(), "{} prefers no factor value", h.id);
        assert!(h.income > 0, "{}", h.id);
    }
}

#[test]
fn starter_set_covers_every_card_type_and_ability_kind() {
    let db = starter();
    let c = db.cards();
    let any = |f: &dyn Fn(&CardDef) -> bool| c.iter().any(f);
    for t in [
        CardType::Location,
        CardType::Character,
        CardType::GroundUnit,
        CardType::Spacecraft,
        CardType::Device,
        CardType::Maneuver,
        CardType::Storyline,
    ] {
        assert!(any(&|d| d.card_type == t), "no {t:?}");
    }
    assert!(any(
        &|d| d.location == Some(LocationKind::Planetary) && d.income > 0
    ));
    assert!(any(
        &|d| d.location == Some(LocationKind::Surface) && d.income > 0
    ));
    assert!(any(&|d| d.card_type == CardType::Spacecraft && d.capital));
    assert!(any(&|d| d.card_type == CardType::Spacecraft && !d.capital));
    assert!(
        any(&|d| d.card_type == CardType::Character && d.votes > 0),
        "Characters with Votes"
    );
    assert!(
        any(&|d| d.card_type == CardType::GroundUnit && d.votes > 0),
        "Ground Units with Votes"
    );
    assert!(
        any(&|d| d.card_type == CardType::Device && d.ev > 0),
        "Add N EV"
    );
    assert!(any(&|d| d.prime), "Prime Characters");
    for deed in [Deed::CommitVotes, Deed::AddEv, Deed::Move, Deed::Capture] {
        assert!(
            any(&|d| d.penalty.is_some_and(|t| t.on == deed)),
            "no Penalty on {deed:?}"
        );
    }
    assert!(any(&|d| d.aligned.is_some()), "aligned abilities");
    assert!(any(&|d| d.ability.is_some()), "\"-X CP:\" abilities");
    let effects: Vec<Effect> = c
        .iter()
        .filter_map(|d| d.effect.or(d.ability.map(|a| a.effect)))
        .collect();
    for e in [
        Effect::GainCurrency(1),
        Effect::OpponentsPay(1),
        Effect::AddVotes(1),
        Effect::AddEv(1),
        Effect::DrawCards(1),
        Effect::DrainCp(1),
        Effect::GainCp(1),
    ] {
        assert!(
            effects
                .iter()
                .any(|x| std::mem::discriminant(x) == std::mem::discriminant(&e)),
            "no {e:?}"
        );
    }
    assert!(any(&|d| d.fast), "Fast Maneuvers");
    assert!(any(&|d| d.vote_cost > 0), "Vote costs");
    assert!(any(&|d| d.cp_cost > 0), "CP costs");
    assert!(any(&|d| d.requires_control), "political control");
    assert!(any(
        &|d| d.reward_to == RewardTo::Completer && d.card_type == CardType::Storyline
    ));
    assert!(any(&|d| d.reward_to == RewardTo::EachOpponent));
}

fn error_of(json: &str) -> String {
    CardDb::from_json(json, &names())
        .expect_err("invalid")
        .to_string()
}

#[test]
fn invalid_cards_are_refused_naming_the_card_and_the_field() {
    let cases = [
        (
            r#"[{"id":"a","name":"A","type":"location","cost":1}]"#,
            "a",
            "location",
        ),
        (
            r#"[{"id":"b","name":"B","type":"character","cost":1}]"#,
            "b",
            "cp",
        ),
        (
            r#"[{"id":"c","name":"C","type":"maneuver","cost":1}]"#,
            "c",
            "effect",
        ),
        (
            r#"[{"id":"d","name":"D","type":"maneuver","cp_cost":5,"effect":{"add_ev":1}}]"#,
            "d",
            "cp_cost",
        ),
        (
            r#"[{"id":"e","name":"E","type":"character","cp":2,"prime":true}]"#,
            "e",
            "fallen_cp",
        ),
        (
            r#"[{"id":"f","name":"F","type":"homeworld","preferred":[{"factor":"chaos","value":1}]}]"#,
            "f",
            "preferred",
        ),
        (
            r#"[{"id":"g","name":"G","type":"device","income":2}]"#,
            "g",
            "income",
        ),
        (
            r#"[{"id":"h","name":"H","type":"storyline","reward":1}]"#,
            "h",
            "steps",
        ),
        (
            r#"[{"id":"i","name":"I","type":"device","penalty":{"on":"move","cp":1}}]"#,
            "i",
            "penalty",
        ),
        (
            r#"[{"id":"j","name":"J","type":"character","cp":1,"ability":{"cp":1,"effect":{"drain_cp":1}}}]"#,
            "j",
            "ability",
        ),
        (
            r#"[{"id":"k","name":"K","type":"spacecraft","capital":true,"location":"surface"}]"#,
            "k",
            "location",
        ),
        (r#"[{"id":"l","name":"","type":"device"}]"#, "l", "name"),
        (
            r#"[{"id":"m","name":"M","type":"device"},{"id":"m","name":"M2","type":"device"}]"#,
            "m",
            "id",
        ),
        (
            r#"[{"id":"n","name":"N","type":"character","cp":0}]"#,
            "n",
            "cp",
        ),
    ];
    for (json, card, field) in cases {
        let msg = error_of(json);
        assert!(
            msg.contains(&format!("cards: entry '{card}'"))
                && msg.contains(&format!("field '{field}'")),
            "{json}: {msg}"
        );
    }
    let msg = error_of(r#"[{"id":"x","name":"X","type":"device","costt":1}]"#);
    assert!(
        msg.contains("unknown field") && msg.contains("costt"),
        "{msg}"
    );
    let msg = error_of(r#"[{"id":"x","name":"X","type":"dragon"}]"#);
    assert!(msg.contains("dragon"), "{msg}");
}

#[test]
fn inline_cards_replace_the_starter_set() {
    let cards: Vec<CardDef> = serde_json::from_str(
        r#"[
        {"id":"home","name":"Home","type":"homeworld","income":5,"votes":1,"preferred":[{"factor":"war","value":1}]},
        {"id":"fort","name":"Fort","type":"location","location":"surface","cost":2,"income":1}
    ]"#,
    )
    .expect("cards");
    let cfg = Config {
        cards: Some(cards),
        homeworlds: vec!["home".into()],
        ..Config::default()
    };
    let s = StoryActs::new().new_game(2, 3, &cfg).expect("game");
    assert_eq!(s.rules.db.cards().len(), 2);
    assert_eq!(
        s.decks[0].len() + s.hands[0].len(),
        1,
        "one copy of every non-Homeworld card"
    );
    assert_eq!(s.treasury(Owner(0)), 4 + 5, "Home's income");

    let bad = serde_json::json!({"cards": [{"id":"home","name":"Home","type":"homeworld","cost":3}], "homeworlds": ["home"]});
    let err = Adapter::shared(StoryActs::new())
        .new_game(&Setup::new(2, 1).config(bad))
        .err()
        .expect("refused");
    assert!(
        matches!(&err, SetupError::Content(m) if m.contains("cards: entry 'home'") && m.contains("field 'cost'")),
        "{err}"
    );
}

#[test]
fn bad_configurations_are_refused_with_the_offending_value() {
    let ruleset = Adapter::shared(StoryActs::new());
    let cases = [
        (
            serde_json::json!({"deck": ["militia", "unicorn"]}),
            "unicorn",
        ),
        (serde_json::json!({"homeworlds": ["militia"]}), "militia"),
        (serde_json::json!({"homeworlds": []}), "homeworlds"),
        (
            serde_json::json!({"votes_per_factor_step": 0}),
            "votes_per_factor_step",
        ),
        (serde_json::json!({"starting_currency": 30}), "30"),
        (serde_json::json!({"treasury_cap": -1}), "-1"),
        (serde_json::json!({"treasury_kap": 20}), "treasury_kap"),
        (
            serde_json::json!({"factors": [{"name": "order", "min": 2, "max": 1, "start": 0}]}),
            "order",
        ),
    ];
    for (cfg, needle) in cases {
        let err = ruleset
            .new_game(&Setup::new(2, 1).config(cfg.clone()))
            .err()
            .expect("refused");
        assert!(err.to_string().contains(needle), "{cfg}: {err}");
    }
    let err = ruleset
        .new_game(&Setup::new(5, 1))
        .err()
        .expect("5 players");
    assert!(
        matches!(
            err,
            SetupError::Players {
                got: 5,
                min: 2,
                max: 4
            }
        ),
        "{err}"
    );
}

#[test]
fn a_snapshot_carries_the_configuration_and_rebuilds_its_cards_once_no_game_shares_them() {
    use coffer_core::Format;
    let adapter = Adapter::shared(StoryActs::new());
    let config = serde_json::json!({"treasury_cap": 17, "starting_hand": 4});
    let game = adapter
        .new_game(&Setup::new(2, 5).config(config.clone()))
        .unwrap();
    let seat = Some(coffer_core::Owner(0));
    let (hash, table, resources) = (game.state_hash(), game.table(seat), game.resources(seat));
    assert!(
        table
            .sections
            .iter()
            .any(|s| s.title == "Hand" && s.rows.len() == 5),
        "the table names the cards in hand: {table:?}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&game.snapshot(Format::Json).unwrap()).unwrap();
    assert_eq!(
        json["rules"]["treasury_cap"], 17,
        "the rules are written as their configuration"
    );
    assert!(
        json["rules"].get("db").is_none(),
        "the card list is not written"
    );
    let snapshots = [Format::Json, Format::Binary].map(|f| (f, game.snapshot(f).unwrap()));
    // The last game of this configuration is gone, and its cards with it: restoring builds them again.
    drop(game);
    for (format, bytes) in snapshots {
        let restored = adapter.restore(format, &bytes).unwrap();
        assert_eq!(restored.state_hash(), hash, "{format:?}");
        assert_eq!(restored.table(seat), table, "{format:?}");
        assert_eq!(restored.resources(seat), resources, "{format:?}");
    }
    let mut damaged = json.clone();
    damaged["rules"]["votes_per_factor_step"] = 0.into();
    let e = adapter
        .restore(Format::Json, damaged.to_string().as_bytes())
        .err()
        .unwrap();
    assert!(e.to_string().contains("votes_per_factor_step"), "{e}");
}

#[test]
fn absurd_numbers_in_the_configuration_are_refused_with_their_bounds() {
    let ruleset = Adapter::shared(StoryActs::new());
    let cases = [
        (
            serde_json::json!({"treasury_cap": 0}),
            "option 'treasury_cap' is 0: it must be 1 to 1000",
        ),
        (
            serde_json::json!({"treasury_cap": 4_000_000_000u32}),
            "option 'treasury_cap' is 4000000000: it must be 1 to 1000",
        ),
        (
            serde_json::json!({"starting_currency": 30}),
            "option 'starting_currency' is 30: it must be 0 to 20 (the treasury_cap)",
        ),
        (
            serde_json::json!({"starting_hand": 101}),
            "option 'starting_hand' is 101: it must be 0 to 100",
        ),
        (
            serde_json::json!({"draw_per_turn": 500}),
            "option 'draw_per_turn' is 500: it must be 0 to 100",
        ),
        (
            serde_json::json!({"hand_limit": 1000}),
            "option 'hand_limit' is 1000: it must be 0 to 100",
        ),
        (
            serde_json::json!({"votes_per_factor_step": 0}),
            "option 'votes_per_factor_step' is 0: it must be 1 to 1000",
        ),
        (
            serde_json::json!({"award_sp": 1001}),
            "option 'award_sp' is 1001: it must be 0 to 1000",
        ),
        (
            serde_json::json!({"catch_up_currency": 5000}),
            "option 'catch_up_currency' is 5000: it must be 0 to 1000",
        ),
        (
            serde_json::json!({"restore_cost": 99999}),
            "option 'restore_cost' is 99999: it must be 0 to 1000",
        ),
        (
            serde_json::json!({"factors": [{"name": "order", "min": -9_000_000_000_000i64, "max": 3, "start": 0}]}),
            "option 'factors': factor 'order': field 'min' is -9000000000000: it must be -1000 to 1000",
        ),
        (
            serde_json::json!({"factors": [{"name": "order", "min": -3, "max": 3, "start": 7}]}),
            "option 'factors': factor 'order': field 'start' is 7: it must be -3 to 3 (its min to its max)",
        ),
        (
            serde_json::json!({"deck": vec!["militia"; 1001]}),
            "option 'deck' lists 1001 cards: at most 1000",
        ),
        (
            serde_json::json!({"homeworlds": ["militia"]}),
            "option 'homeworlds': 'militia' is a Ground Unit, not a Homeworld (the card list has coruscant, korriban)",
        ),
    ];
    for (cfg, want) in cases {
        let err = ruleset
            .new_game(&Setup::new(2, 1).config(cfg.clone()))
            .err()
            .expect("refused");
        assert_eq!(
            err.to_string(),
            format!("invalid configuration: {want}"),
            "{cfg}"
        );
    }
    let many: Vec<serde_json::Value> = (0..33)
        .map(|i| serde_json::json!({"name": format!("f{i}"), "min": 0, "max": 1, "start": 0}))
        .collect();
    let err = ruleset
        .new_game(&Setup::new(2, 1).config(serde_json::json!({"factors": many, "homeworlds": ["coruscant"], "cards": [{"id": "coruscant", "name": "Coruscant", "type": "homeworld"}]})))
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("lists 33 factors: at most 32"),
        "{err}"
    );
}

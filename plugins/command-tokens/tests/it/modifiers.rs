//! Data-driven modifiers, one test each: Diplomacy, Warfare and Construction token effects, Sol's extra
//! status-phase token, Letnev's +2 fleet limit, the Fleet Regulations law, Hyper Metabolism (T12) and the
//! Nekro Virus's Propagation (T13).

use crate::support::*;
use coffer_command_tokens::{Action, Config, Phase, Pool, Step};
use coffer_core::Owner;

/// Picks that give p0 Warfare and Trade (5), p1 Politics and Diplomacy (2), p2 Construction and Technology (4).
#[rustfmt::skip]
const WARFARE_WITH_P0: [u8; 6] = [WARFARE, POLITICS, CONSTRUCTION, TRADE, DIPLOMACY, TECHNOLOGY];

#[test]
fn modifier_diplomacy_places_a_token_of_every_other_player_but_not_in_mecatol_rex() {
    let mut s = game(
        4,
        Config {
            cards_per_player: 1,
            ..Default::default()
        },
    );
    pick(&mut s, &[DIPLOMACY, POLITICS, CONSTRUCTION, TRADE]);
    assert_eq!(actor(&s), 0);
    ok(&mut s, 0, Action::Strategic { card: DIPLOMACY });
    let mecatol = system(&s, "18");
    assert!(!legal(&s, 0).contains(&Action::Diplomacy { system: mecatol }));
    let e = refused(&mut s, 0, Action::Diplomacy { system: mecatol });
    assert_says(&e, "Diplomacy cannot choose system 18");
    let home = system(&s, "home-letnev");
    ok(&mut s, 0, Action::Diplomacy { system: home });
    for p in 1..4 {
        assert!(s.has_token(owner(p), home.into()), "p{p}");
        assert_eq!(sheet(&s, p), [3, 3, 2, 7]);
    }
    assert!(!s.has_token(Owner(0), home.into()));
    // The other players are now locked out of activating that system (T4).
    decline_secondaries_until(&mut s, None);
    assert!(!legal(&s, 1).contains(&Action::Tactical { system: home }));
}

#[test]
fn t10_warfare_removes_a_board_token_then_gains_that_token_and_redistributes() {
    let mut s = default_game(3);
    pick(&mut s, &WARFARE_WITH_P0);
    // Order: p1 (Diplomacy 2), p2 (Construction 4), p0 (Trade 5).
    skip(&mut s, 1);
    skip(&mut s, 2);
    ok(&mut s, 0, Action::Tactical { system: 4 });
    ok(&mut s, 0, Action::Done);
    skip(&mut s, 1);
    skip(&mut s, 2);
    ok(&mut s, 0, Action::Strategic { card: WARFARE });
    assert_eq!(s.flow.step, Step::Remove);
    assert_eq!(legal(&s, 0), vec![Action::RemoveToken { system: 4 }]);
    refused(&mut s, 0, Action::RemoveToken { system: 5 });
    ok(&mut s, 0, Action::RemoveToken { system: 4 });
    assert_eq!(s.board_tokens(Owner(0)), 0);
    assert_eq!(sheet(&s, 0), [2, 3, 2, 9]);
    assert_eq!(s.flow.step, Step::Gain);
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    assert_eq!(s.flow.step, Step::Redistribute);
    ok(
        &mut s,
        0,
        Action::Redistribute {
            tactic: 1,
            fleet: 6,
            strategy: 1,
        },
    );
    assert_eq!(sheet(&s, 0), [1, 6, 1, 8]);
    // The system is free again for p0.
    assert_eq!(s.flow.step, Step::Secondary);
    assert!(!s.has_token(Owner(0), 4));
}

#[test]
fn t10_warfare_with_no_token_on_the_board_gains_nothing_and_still_redistributes() {
    let mut s = default_game(3);
    pick(&mut s, &WARFARE_WITH_P0);
    skip(&mut s, 1);
    skip(&mut s, 2);
    assert_eq!(s.board_tokens(Owner(0)), 0);
    let before = sheet(&s, 0);
    ok(&mut s, 0, Action::Strategic { card: WARFARE });
    // Nothing to remove, so nothing is gained (LRR 99.1 gains the token removed; 1.17 "then"), and
    // step 2, the redistribution, still comes.
    assert_eq!(s.flow.step, Step::Redistribute);
    assert_eq!(sheet(&s, 0), before, "no token came out of reinforcements");
    assert!(
        legal(&s, 0)
            .iter()
            .all(|a| !matches!(a, Action::Gain { .. }))
    );
}

#[test]
fn modifier_construction_primary_places_structures_secondary_places_a_token_and_a_structure() {
    let mut s = default_game(3);
    pick(
        &mut s,
        &[CONSTRUCTION, POLITICS, TRADE, WARFARE, TECHNOLOGY, IMPERIAL],
    );
    skip(&mut s, 1);
    ok(&mut s, 0, Action::Strategic { card: CONSTRUCTION });
    assert_eq!(s.structures(Owner(0)), 2);
    assert_eq!(
        sheet(&s, 0),
        [3, 3, 2, 8],
        "the primary costs and places no token"
    );
    ok(&mut s, 1, Action::Secondary);
    ok(
        &mut s,
        1,
        Action::Place {
            system: 5,
            fallback: None,
        },
    );
    assert_eq!(s.structures(Owner(1)), 1);
    assert!(s.has_token(Owner(1), 5));
    assert_eq!(sheet(&s, 1), [2, 3, 1, 8]);
    s.check_invariants().unwrap();
}

/// Plays to p's status-phase step, everyone else redistributing as they are.
fn to_status_of(s: &mut coffer_command_tokens::State, who: u8) {
    finish_action_phase(s);
    while actor(s) != who {
        let p = actor(s);
        status_turn(s, p, Pool::Tactic);
    }
}

#[test]
fn modifier_sol_gains_an_extra_token_in_the_status_phase() {
    // Default factions: p0 Letnev, p1 Sol, p2 Hacan.
    let mut s = default_game(3);
    assert_eq!(s.rules.factions[1], "sol");
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    to_status_of(&mut s, 1);
    for _ in 0..3 {
        assert_eq!(s.flow.step, Step::Gain);
        ok(
            &mut s,
            1,
            Action::Gain {
                pool: Pool::Strategy,
            },
        );
    }
    assert_eq!(s.flow.step, Step::Redistribute);
    assert_eq!(sheet(&s, 1), [3, 3, 5, 5]);
    // Others gain two.
    let mut t = default_game(3);
    pick(&mut t, &LEADERSHIP_TO_WARFARE);
    to_status_of(&mut t, 2);
    ok(
        &mut t,
        2,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    ok(
        &mut t,
        2,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(t.flow.step, Step::Redistribute);
}

#[test]
fn modifier_letnev_may_have_two_more_non_fighter_ships_than_fleet_tokens() {
    let mut s = game(
        3,
        Config {
            production: 6,
            ..Default::default()
        },
    );
    assert_eq!(s.rules.factions[0], "letnev");
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    assert_eq!(s.fleet_limit(Owner(0)), 5);
    let cruiser = class(&s, "cruiser");
    ok(&mut s, 0, Action::Tactical { system: 4 });
    for _ in 0..5 {
        ok(&mut s, 0, Action::Produce { class: cruiser });
    }
    ok(&mut s, 0, Action::Done);
    assert!(
        s.ledger.pending().is_empty(),
        "5 ships with 3 fleet tokens is within Letnev's limit"
    );
    // Hacan (no bonus) must remove the fourth ship at once.
    let mut h = game(
        3,
        Config {
            production: 6,
            factions: vec!["hacan".into(), "sol".into(), "letnev".into()],
            ..Default::default()
        },
    );
    pick(&mut h, &LEADERSHIP_TO_WARFARE);
    assert_eq!(h.fleet_limit(Owner(0)), 3);
    ok(&mut h, 0, Action::Tactical { system: 4 });
    for _ in 0..4 {
        ok(&mut h, 0, Action::Produce { class: cruiser });
    }
    assert_eq!(h.ledger.pending()[0].excess, 1);
}

#[test]
fn modifier_fleet_regulations_caps_the_fleet_pool_at_four() {
    let mut s = game(
        3,
        Config {
            laws: vec!["fleet-regulations".into()],
            ..Default::default()
        },
    );
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    ok(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert_eq!(s.pool(Owner(0), Pool::Fleet), 4);
    assert_eq!(
        legal(&s, 0),
        vec![
            Action::Gain { pool: Pool::Tactic },
            Action::Gain {
                pool: Pool::Strategy
            }
        ]
    );
    let e = refused(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert_says(&e, "law's maximum");
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    ok(&mut s, 0, Action::Buy { influence: 0 });
    decline_secondaries_until(&mut s, None);
    to_status_of(&mut s, 0);
    while s.flow.step == Step::Gain {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    let total = s.sheet(Owner(0)) as u8;
    assert!(
        legal(&s, 0)
            .iter()
            .all(|a| matches!(a, Action::Redistribute { fleet, .. } if *fleet <= 4))
    );
    refused(
        &mut s,
        0,
        Action::Redistribute {
            tactic: total - 5,
            fleet: 5,
            strategy: 0,
        },
    );
    ok(
        &mut s,
        0,
        Action::Redistribute {
            tactic: total - 4,
            fleet: 4,
            strategy: 0,
        },
    );
    assert_eq!(s.flow.phase, Phase::Status);
    // Without the law, a fifth fleet token is fine.
    let mut t = default_game(3);
    pick(&mut t, &LEADERSHIP_TO_WARFARE);
    ok(&mut t, 0, Action::Strategic { card: LEADERSHIP });
    ok(&mut t, 0, Action::Gain { pool: Pool::Fleet });
    ok(&mut t, 0, Action::Gain { pool: Pool::Fleet });
    assert_eq!(t.pool(Owner(0), Pool::Fleet), 5);
}

#[test]
fn t12_hyper_metabolism_gains_three_tokens_in_the_status_phase_instead_of_two() {
    // p2 (Hacan) owns Hyper Metabolism; p1 is Sol (Versatile): each gains one more than two.
    let config = Config {
        technologies: vec![
            vec![],
            vec!["hyper-metabolism".into()],
            vec!["hyper-metabolism".into()],
        ],
        ..Config::default()
    };
    let mut s = game(3, config);
    assert_eq!(
        s.rules.status_tokens,
        vec![2, 4, 3],
        "Sol with it gains 4, Hacan 3"
    );
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    to_status_of(&mut s, 2);
    assert_eq!((s.flow.step, s.flow.left), (Step::Gain, 3));
}

#[test]
fn t12_a_technology_is_known_and_owned_once_per_player() {
    let setup = |technologies: Vec<Vec<String>>| {
        let config = Config {
            technologies,
            ..Config::default()
        };
        match coffer_core::Ruleset::new_game(
            &coffer_command_tokens::CommandTokens::new(),
            3,
            1,
            &config,
        ) {
            Ok(_) => panic!("the technologies were accepted"),
            Err(e) => e.to_string(),
        }
    };
    assert!(
        setup(vec![vec!["zz".into()], vec![], vec![]])
            .contains("technologies[0][0]: unknown technology 'zz'; known: hyper-metabolism")
    );
    assert!(
        setup(vec![
            vec!["hyper-metabolism".into(), "hyper-metabolism".into()],
            vec![],
            vec![]
        ])
        .contains("technologies[0][1]: 'hyper-metabolism' is owned twice")
    );
    assert!(setup(vec![vec![]]).contains("technologies: 1 lists given, but 3 players need 3"));
}

/// A three-player game with the Nekro Virus as p1, content replaced by `content` if given; picks: p0
/// Leadership, p1 Technology, p2 Diplomacy, then p2 Politics, p1 Construction, p0 Trade.
fn nekro_game(
    content: Option<coffer_command_tokens::ContentOverride>,
) -> coffer_command_tokens::State {
    let config = Config {
        factions: vec!["letnev".into(), "nekro".into(), "hacan".into()],
        content,
        ..Config::default()
    };
    let mut s = game(3, config);
    pick(
        &mut s,
        &[
            LEADERSHIP,
            TECHNOLOGY,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
        ],
    );
    s
}

#[test]
fn t13_the_nekro_virus_gains_three_tokens_instead_of_researching_with_technology() {
    let mut s = nekro_game(None);
    assert_eq!(s.rules.research_tokens, vec![0, 3, 0]);
    // Order by initiative: p0 (Leadership 1), p2 (Diplomacy 2), p1 (Construction 4): p0 and p2 skip.
    skip(&mut s, 0);
    skip(&mut s, 2);
    assert_eq!(actor(&s), 1);
    let before = sheet(&s, 1);
    ok(&mut s, 1, Action::Strategic { card: TECHNOLOGY });
    assert_eq!(
        (s.flow.step, s.flow.left),
        (Step::Gain, 3),
        "the primary: 3 tokens"
    );
    for _ in 0..3 {
        ok(&mut s, 1, Action::Gain { pool: Pool::Tactic });
    }
    let [t, f, st, r] = before;
    assert_eq!(sheet(&s, 1), [t + 3, f, st, r - 3]);
    // Another player's secondary researches as usual: nothing modelled, a strategy token spent.
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 2));
    ok(&mut s, 2, Action::Secondary);
    assert_ne!(s.flow.step, Step::Gain);
}

#[test]
fn t13_the_nekro_virus_gains_three_tokens_with_a_research_secondary() {
    let mut cards = coffer_command_tokens::Content::embedded()
        .unwrap()
        .strategy_cards;
    // Diplomacy held by p2 gets Technology's secondary, so p1 (Nekro) resolves a research secondary.
    cards[usize::from(DIPLOMACY)].primary = vec![];
    cards[usize::from(DIPLOMACY)].secondary = vec![coffer_command_tokens::EffectSpec::Research];
    let mut s = nekro_game(Some(coffer_command_tokens::ContentOverride {
        strategy_cards: Some(cards),
        ..Default::default()
    }));
    skip(&mut s, 0);
    ok(&mut s, 2, Action::Strategic { card: DIPLOMACY });
    // The secondary round goes clockwise from p2: p0, then p1.
    ok(&mut s, 0, Action::Decline);
    let before = sheet(&s, 1);
    ok(&mut s, 1, Action::Secondary);
    assert_eq!((s.flow.step, s.flow.left), (Step::Gain, 3));
    for _ in 0..3 {
        ok(&mut s, 1, Action::Gain { pool: Pool::Fleet });
    }
    let [t, f, st, r] = before;
    assert_eq!(
        sheet(&s, 1),
        [t, f + 3, st - 1, r + 1 - 3],
        "one strategy token spent for the secondary, three gained"
    );
}

#[test]
fn t11_the_chosen_players_are_written_once_each_in_ascending_order() {
    let parse = |json: &str| serde_json::from_str::<Action>(json).map_err(|e| e.to_string());
    assert_eq!(
        parse(r#"{"type":"free_secondaries","players":[0,3]}"#),
        Ok(Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0b1001)
        })
    );
    // One written form per set, so that an action has one JSON text (the listed one).
    let e = parse(r#"{"type":"free_secondaries","players":[3,0]}"#).unwrap_err();
    assert!(
        e.contains("player 0 comes after a higher one: list the players in ascending order"),
        "{e}"
    );
    let e = parse(r#"{"type":"free_secondaries","players":[3,3]}"#).unwrap_err();
    assert!(e.contains("player 3 is listed twice"), "{e}");
}

//! Data-driven modifiers, one test each: Diplomacy, Warfare and Construction token effects, Sol's extra
//! status-phase token, Letnev's +2 fleet limit, the Fleet Regulations law.

use crate::common::*;
use coffer_command_tokens::{Action, Config, Phase, Pool, Step};

const DIPLOMACY: u8 = 1;
const POLITICS: u8 = 2;
const CONSTRUCTION: u8 = 3;
const TRADE: u8 = 4;
const WARFARE: u8 = 5;
const TECHNOLOGY: u8 = 6;
const IMPERIAL: u8 = 7;
const LEADERSHIP: u8 = 0;

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
    assert!(
        e.to_string().contains("Diplomacy cannot choose system 18"),
        "{e}"
    );
    let home = system(&s, "home-letnev");
    ok(&mut s, 0, Action::Diplomacy { system: home });
    for p in 1..4 {
        assert!(s.has_token(p, home.into()), "p{p}");
        assert_eq!(sheet(&s, p), [3, 3, 2, 7]);
    }
    assert!(!s.has_token(0, home.into()));
    // The other players are now locked out of activating that system (T4).
    decline_secondaries_until(&mut s, None);
    assert!(!legal(&s, 1).contains(&Action::Tactical { system: home }));
}

#[test]
fn t10_warfare_removes_a_board_token_then_gains_that_token_and_redistributes() {
    let mut s = default_game(3);
    pick(
        &mut s,
        &[
            WARFARE,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            DIPLOMACY,
            TECHNOLOGY,
        ],
    );
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
    assert_eq!(s.board_tokens(0), 0);
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
    assert!(!s.has_token(0, 4));
}

#[test]
fn t10_warfare_with_no_token_on_the_board_gains_nothing_and_still_redistributes() {
    let mut s = default_game(3);
    pick(
        &mut s,
        &[
            WARFARE,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            DIPLOMACY,
            TECHNOLOGY,
        ],
    );
    skip(&mut s, 1);
    skip(&mut s, 2);
    assert_eq!(s.board_tokens(0), 0);
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
    assert_eq!(s.structures(0), 2);
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
    assert_eq!(s.structures(1), 1);
    assert!(s.has_token(1, 5));
    assert_eq!(sheet(&s, 1), [2, 3, 1, 8]);
    s.check_invariants().unwrap();
}

/// Plays to p's status-phase step, everyone else redistributing as they are.
fn to_status_of(s: &mut coffer_command_tokens::State, who: u8) {
    finish_action_phase(s);
    while actor(s) != who {
        let p = actor(s);
        while s.flow.step == Step::Gain {
            ok(s, p, Action::Gain { pool: Pool::Tactic });
        }
        let [t, f, st, _] = sheet(s, p);
        ok(
            s,
            p,
            Action::Redistribute {
                tactic: t as u8,
                fleet: f as u8,
                strategy: st as u8,
            },
        );
    }
}

#[test]
fn modifier_sol_gains_an_extra_token_in_the_status_phase() {
    // Default factions: p0 Letnev, p1 Sol, p2 Hacan.
    let mut s = default_game(3);
    assert_eq!(s.rules.factions[1], "sol");
    pick(
        &mut s,
        &[
            LEADERSHIP,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            WARFARE,
        ],
    );
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
    pick(
        &mut t,
        &[
            LEADERSHIP,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            WARFARE,
        ],
    );
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
    pick(
        &mut s,
        &[
            LEADERSHIP,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            WARFARE,
        ],
    );
    assert_eq!(s.fleet_limit(0), 5);
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
    pick(
        &mut h,
        &[
            LEADERSHIP,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            WARFARE,
        ],
    );
    assert_eq!(h.fleet_limit(0), 3);
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
    pick(
        &mut s,
        &[
            LEADERSHIP,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            WARFARE,
        ],
    );
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    ok(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert_eq!(s.pool(0, Pool::Fleet), 4);
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
    assert!(e.to_string().contains("law's maximum"), "{e}");
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    ok(&mut s, 0, Action::Buy { influence: 0 });
    decline_secondaries_until(&mut s, None);
    to_status_of(&mut s, 0);
    while s.flow.step == Step::Gain {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    let total = s.sheet(0) as u8;
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
    pick(
        &mut t,
        &[
            LEADERSHIP,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            TRADE,
            WARFARE,
        ],
    );
    ok(&mut t, 0, Action::Strategic { card: LEADERSHIP });
    ok(&mut t, 0, Action::Gain { pool: Pool::Fleet });
    ok(&mut t, 0, Action::Gain { pool: Pool::Fleet });
    assert_eq!(t.pool(0, Pool::Fleet), 5);
}

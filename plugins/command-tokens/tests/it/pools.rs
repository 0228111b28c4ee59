//! T1-T3: the sixteen command tokens, gaining them into pools, and reinforcements running out.

use crate::support::*;
use coffer_command_tokens::{Action, Pool, State, Step, face};
use coffer_core::{ActionError, Cause, Owner};

// ----- T1 -----

#[test]
fn t1_each_player_starts_with_3_tactic_3_fleet_2_strategy_8_reinforcements() {
    for n in 3..=8u16 {
        let s = default_game(n);
        for p in 0..n as u8 {
            assert_eq!(sheet(&s, p), [3, 3, 2, 8], "{n} players, p{p}");
            assert_eq!(s.board_tokens(owner(p)), 0);
        }
        s.check_invariants().unwrap();
    }
}

#[test]
fn t1_tactic_and_strategy_tokens_show_the_faction_fleet_tokens_the_ship() {
    let s = default_game(3);
    let face_of = |pool: Pool| s.ledger.zone(s.h.pools[pool.index()]).unwrap().face;
    assert_eq!(face_of(Pool::Tactic), face::FACTION);
    assert_eq!(face_of(Pool::Strategy), face::FACTION);
    assert_eq!(face_of(Pool::Fleet), face::SHIP);
}

#[test]
fn t1_sixteen_tokens_per_player_is_a_checked_invariant() {
    let mut s = default_game(3);
    s.check_invariants().unwrap();
    for p in 0..3 {
        assert_eq!(s.ledger.supply_of(0, Owner(p)), 16);
    }
    // Command tokens are their own kernel supply: one cannot turn into a ship piece.
    let before = coffer_core::state_hash(&s);
    let refused = s
        .ledger
        .move_tokens(Owner(1), s.h.reinforcements, s.h.ships[0], 1, Cause::Setup);
    assert!(refused.is_err(), "{refused:?}");
    assert_eq!(coffer_core::state_hash(&s), before);
    // A state whose supply of command tokens is not 16 is refused by the ruleset's invariant. A snapshot
    // leaves the supply totals to the setup's layout; one that carries its ledger whole (its own layout)
    // may say otherwise.
    let mut json = serde_json::to_value(&s).unwrap();
    assert!(json["ledger"]["setup"].is_object(), "{}", json["ledger"]);
    let mut ledger = serde_json::to_value(&s.ledger).unwrap();
    let o = 3;
    let cell = s.h.reinforcements.index() * o + 1;
    // The token matrix is written as [cells, [[cell, count], ...]] (only cells holding tokens).
    let held = ledger["tokens"][1].as_array_mut().unwrap();
    let entry = held.iter_mut().find(|h| h[0] == cell).unwrap();
    entry[1] = (entry[1].as_u64().unwrap() - 1).into();
    let slot = 1; // supply 0, owner 1
    ledger["supply"][slot] = 15.into();
    json["ledger"] = serde_json::json!({ "own": ledger });
    let damaged: State = serde_json::from_value(json).unwrap();
    let v = damaged.check_invariants().unwrap_err();
    assert!(v.0.contains("p1 has 15 command tokens"), "{v}");
}

// ----- T2 -----

#[test]
fn t2_a_gained_token_goes_to_the_pool_the_player_chooses() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    assert_eq!(s.flow.step, Step::Gain);
    assert_eq!(
        legal(&s, 0),
        vec![
            Action::Gain { pool: Pool::Tactic },
            Action::Gain { pool: Pool::Fleet },
            Action::Gain {
                pool: Pool::Strategy
            }
        ]
    );
    ok(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    ok(
        &mut s,
        0,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    ok(
        &mut s,
        0,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(sheet(&s, 0), [3, 4, 4, 5]);
    assert_eq!(s.flow.step, Step::Buy);
}

#[test]
fn t2_no_gain_without_something_to_gain() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    let e = refused(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    assert!(matches!(e, ActionError::Illegal(_)), "{e}");
}

// ----- T3 -----

#[test]
fn t3_gain_with_empty_reinforcements_is_refused() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 0, Pool::Tactic, 8);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    // Nothing is gained: the three tokens are forfeited (reported) and Leadership goes on to buying.
    assert_eq!(s.flow.step, Step::Buy);
    assert_eq!(s.flow.forfeited[0], 3);
    assert_eq!(sheet(&s, 0), [11, 3, 2, 0]);
    let e = refused(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert!(matches!(e, ActionError::Illegal(_)), "{e}");
    // Buying cannot gain either: no buy of a token is listed or accepted.
    assert!(
        legal(&s, 0)
            .iter()
            .all(|a| matches!(a, Action::Buy { influence } if *influence < 3))
    );
    refused(&mut s, 0, Action::Buy { influence: 3 });
    s.check_invariants().unwrap();
}

#[test]
fn t3_gaining_stops_when_reinforcements_run_out() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 0, Pool::Tactic, 7);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    assert_eq!(s.flow.step, Step::Gain);
    ok(
        &mut s,
        0,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(
        s.flow.step,
        Step::Buy,
        "the last two tokens cannot be gained"
    );
    assert_eq!(s.flow.forfeited[0], 2);
    assert_eq!(sheet(&s, 0), [10, 3, 3, 0]);
}

/// Diplomacy by p0 (first in initiative) in system 19; p1's reinforcements are empty.
pub fn diplomacy_with_empty_reinforcements_for_p1() -> coffer_command_tokens::State {
    let mut s = default_game(3);
    shift_reserve(&mut s, 1, Pool::Strategy, 8);
    pick(&mut s, &DIPLOMACY_TO_TECHNOLOGY);
    assert_eq!(actor(&s), 0);
    ok(&mut s, 0, Action::Strategic { card: DIPLOMACY });
    assert_eq!(s.flow.step, Step::Target);
    s
}

#[test]
fn t3_placing_from_empty_reinforcements_takes_a_token_from_a_pool_the_player_chooses() {
    let mut s = diplomacy_with_empty_reinforcements_for_p1();
    ok(&mut s, 0, Action::Diplomacy { system: EMPTY });
    assert_eq!(s.flow.step, Step::Fallback);
    assert_eq!(actor(&s), 1);
    assert_eq!(
        legal(&s, 1),
        vec![
            Action::Fallback { pool: Pool::Tactic },
            Action::Fallback { pool: Pool::Fleet },
            Action::Fallback {
                pool: Pool::Strategy
            }
        ]
    );
    ok(
        &mut s,
        1,
        Action::Fallback {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(sheet(&s, 1), [3, 3, 9, 0]);
    assert!(s.has_token(Owner(1), EMPTY.into()));
    // p2 had reinforcements: placed from there without a choice.
    assert!(s.has_token(Owner(2), EMPTY.into()));
    assert_eq!(sheet(&s, 2), [3, 3, 2, 7]);
    assert_eq!(s.flow.step, Step::Secondary);
    s.check_invariants().unwrap();
}

#[test]
fn t3_the_fallback_pool_must_hold_a_token() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 1, Pool::Strategy, 8);
    shift_reserve(&mut s, 1, Pool::Fleet, -3);
    shift_reserve(&mut s, 1, Pool::Strategy, 3);
    pick(&mut s, &DIPLOMACY_TO_TECHNOLOGY);
    ok(&mut s, 0, Action::Strategic { card: DIPLOMACY });
    ok(&mut s, 0, Action::Diplomacy { system: EMPTY });
    assert_eq!(sheet(&s, 1), [3, 0, 13, 0]);
    assert!(!legal(&s, 1).contains(&Action::Fallback { pool: Pool::Fleet }));
    refused(&mut s, 1, Action::Fallback { pool: Pool::Fleet });
}

#[test]
fn t3_no_pool_token_is_taken_when_the_system_already_holds_the_players_token() {
    let mut s = diplomacy_with_empty_reinforcements_for_p1();
    s.ledger
        .move_tokens(
            Owner(1),
            s.h.pools[0],
            s.h.systems[usize::from(EMPTY)],
            1,
            Cause::Setup,
        )
        .unwrap();
    s.ledger.take_events();
    assert_eq!(sheet(&s, 1), [2, 3, 10, 0]);
    ok(&mut s, 0, Action::Diplomacy { system: EMPTY });
    // No fallback choice for p1: the token would go straight back to reinforcements (T6).
    assert_eq!(s.flow.step, Step::Secondary);
    assert_eq!(sheet(&s, 1), [2, 3, 10, 0]);
    assert_eq!(s.board_tokens(Owner(1)), 1);
}

#[test]
fn t3_a_placement_with_no_token_anywhere_places_nothing() {
    // 17 systems, so that all 16 of p1's tokens fit on the board.
    let galaxy = (0..17)
        .map(|i| coffer_command_tokens::SystemConfig {
            id: format!("s{i}"),
            ships: vec![],
            no_diplomacy: false,
            adjacent: Vec::new(),
        })
        .collect();
    let mut s = game(
        3,
        coffer_command_tokens::Config {
            galaxy,
            ..Default::default()
        },
    );
    let o = Owner(1);
    for z in 0..16usize {
        let from = if s.reinforcements(Owner(1)) > 0 {
            s.h.reinforcements
        } else {
            *s.h.pools
                .iter()
                .find(|&&pz| s.ledger.tokens(pz, o) > 0)
                .unwrap()
        };
        s.ledger
            .move_tokens(o, from, s.h.systems[z], 1, Cause::Setup)
            .unwrap();
    }
    s.ledger.take_events();
    assert_eq!(s.sheet(Owner(1)) + s.reinforcements(Owner(1)), 0);
    pick(&mut s, &DIPLOMACY_TO_TECHNOLOGY);
    ok(&mut s, 0, Action::Strategic { card: DIPLOMACY });
    ok(&mut s, 0, Action::Diplomacy { system: 16 });
    assert_eq!(s.flow.step, Step::Secondary);
    assert!(!s.has_token(Owner(1), 16));
    assert!(s.has_token(Owner(2), 16));
    s.check_invariants().unwrap();
}

#[test]
fn t3_construction_placement_from_empty_reinforcements_takes_a_chosen_pool() {
    // Construction's secondary made free (inline content), so that reinforcements can be empty when the
    // token is placed.
    let mut cards = coffer_command_tokens::Content::embedded()
        .unwrap()
        .strategy_cards;
    cards[3].secondary_cost = 0;
    let content = coffer_command_tokens::ContentOverride {
        strategy_cards: Some(cards),
        ..Default::default()
    };
    let mut s = game(
        3,
        coffer_command_tokens::Config {
            content: Some(content),
            ..Default::default()
        },
    );
    shift_reserve(&mut s, 1, Pool::Fleet, 8);
    pick(&mut s, &[3, 2, 4, 5, 6, 7]);
    // p1 (Politics, 3) first: a tactical action in system 4.
    ok(&mut s, 1, Action::Tactical { system: 4 });
    ok(&mut s, 1, Action::Done);
    ok(&mut s, 0, Action::Strategic { card: 3 });
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(s.flow.step, Step::Place);
    let l = legal(&s, 1);
    // System 4 holds p1's token: no fallback there (T3); elsewhere a pool must be named.
    assert!(l.contains(&Action::Place {
        system: 4,
        fallback: None
    }));
    assert!(l.contains(&Action::Place {
        system: 5,
        fallback: Some(Pool::Strategy)
    }));
    assert!(!l.contains(&Action::Place {
        system: 5,
        fallback: None
    }));
    refused(
        &mut s,
        1,
        Action::Place {
            system: 5,
            fallback: None,
        },
    );
    ok(
        &mut s,
        1,
        Action::Place {
            system: 5,
            fallback: Some(Pool::Fleet),
        },
    );
    assert_eq!(sheet(&s, 1), [2, 10, 2, 0]);
    assert!(s.has_token(Owner(1), 5));
    assert_eq!(s.structures(Owner(1)), 1);
    s.check_invariants().unwrap();
}

//! One test (or more) per clause T1-T9, named after it, with the clause's edge cases.

use crate::support::*;
use coffer_command_tokens::{Action, Config, Phase, Pool, State, Step, face};
use coffer_core::{ActionError, Cause, Owner, Refusal};

// Default 3-player galaxy: 18 (Mecatol Rex), home-letnev, home-sol, home-hacan, 19, 20, 21.
const HOME_HACAN: u16 = 3;
const EMPTY: u16 = 4;

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
fn diplomacy_with_empty_reinforcements_for_p1() -> coffer_command_tokens::State {
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

// ----- T4 -----

#[test]
fn t4_tactical_action_spends_a_tactic_token_and_places_it_in_the_system() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Tactical { system: EMPTY });
    assert_eq!(sheet(&s, 0), [2, 3, 2, 8]);
    assert!(s.has_token(Owner(0), EMPTY.into()));
    assert_eq!(s.flow.step, Step::Move);
    ok(&mut s, 0, Action::Done);
    assert_eq!(actor(&s), 1);
}

#[test]
fn t4_a_system_holding_the_players_token_cannot_be_activated() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Tactical { system: EMPTY });
    ok(&mut s, 0, Action::Done);
    for p in [1, 2] {
        ok(&mut s, p, Action::Tactical { system: 0 });
        ok(&mut s, p, Action::Done);
    }
    assert!(!legal(&s, 0).contains(&Action::Tactical { system: EMPTY }));
    let e = refused(&mut s, 0, Action::Tactical { system: EMPTY });
    assert_says(&e, "already holds a command token of p0");
}

#[test]
fn t4_other_players_tokens_do_not_block_activation() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Tactical { system: EMPTY });
    ok(&mut s, 0, Action::Done);
    assert!(legal(&s, 1).contains(&Action::Tactical { system: EMPTY }));
    ok(&mut s, 1, Action::Tactical { system: EMPTY });
    assert!(s.has_token(Owner(0), EMPTY.into()) && s.has_token(Owner(1), EMPTY.into()));
}

#[test]
fn t4_without_a_tactic_token_there_is_no_tactical_action() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 0, Pool::Tactic, -3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    assert!(
        legal(&s, 0)
            .iter()
            .all(|a| !matches!(a, Action::Tactical { .. }))
    );
    // Fleet and strategy tokens do not pay for it.
    let e = refused(&mut s, 0, Action::Tactical { system: EMPTY });
    assert_says(&e, "no token in the tactic pool");
    assert_eq!(sheet(&s, 0), [0, 3, 2, 11]);
}

#[test]
fn t4_only_the_player_whose_turn_it_is_may_activate() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    let e = refused(&mut s, 1, Action::Tactical { system: EMPTY });
    assert!(matches!(e, ActionError::NotYourTurn { .. }), "{e}");
    let e = refused(&mut s, 0, Action::Tactical { system: 99 });
    assert_says(
        &e,
        "system #99 does not exist: the galaxy has systems #0 to #6",
    );
}

// ----- T5 -----

#[test]
fn t5_each_other_player_may_resolve_the_secondary_with_a_strategy_token() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_LAST);
    // p2 holds Leadership (initiative 1) and acts first; p0 holds Politics (3).
    assert_eq!(actor(&s), 2);
    skip(&mut s, 2);
    ok(&mut s, 0, Action::Strategic { card: POLITICS });
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(
        sheet(&s, 1),
        [3, 3, 1, 9],
        "the strategy token goes to reinforcements"
    );
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 2));
    ok(&mut s, 2, Action::Decline);
    assert_eq!(
        sheet(&s, 2),
        [2, 3, 2, 8],
        "one tactic token on the board, no strategy token spent"
    );
    // Back to the action phase: the active player never resolves their own secondary.
    assert_eq!(s.flow.step, Step::Turn);
    assert_eq!(sheet(&s, 0), [3, 3, 2, 8]);
}

#[test]
fn t5_a_secondary_without_a_strategy_token_is_refused_but_may_be_declined() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 1, Pool::Strategy, -2);
    pick(&mut s, &LEADERSHIP_LAST);
    skip(&mut s, 2);
    ok(&mut s, 0, Action::Strategic { card: POLITICS });
    assert_eq!(legal(&s, 1), vec![Action::Decline]);
    let e = refused(&mut s, 1, Action::Secondary);
    assert_says(&e, "0 strategy tokens");
    // Tactic and fleet tokens do not pay for it.
    assert_eq!(sheet(&s, 1), [3, 3, 0, 10]);
    ok(&mut s, 1, Action::Decline);
}

#[test]
fn t5_leadership_secondary_costs_no_strategy_token() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 1, Pool::Strategy, -2);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    ok(&mut s, 0, Action::Buy { influence: 0 });
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    assert!(
        legal(&s, 1).contains(&Action::Secondary),
        "no strategy token needed"
    );
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(s.flow.step, Step::Buy);
    assert_eq!(sheet(&s, 1), [3, 3, 0, 10]);
}

#[test]
fn t5_a_player_who_passed_still_resolves_secondaries() {
    let mut s = game(
        3,
        coffer_command_tokens::Config {
            cards_per_player: 1,
            ..Default::default()
        },
    );
    pick(&mut s, &[TRADE, POLITICS, TECHNOLOGY]);
    // Order: p1 (Politics 3), p0 (Trade 5), p2 (Technology 7).
    ok(&mut s, 1, Action::Strategic { card: POLITICS });
    decline_secondaries_until(&mut s, None);
    skip(&mut s, 0);
    skip(&mut s, 2);
    ok(&mut s, 1, Action::Pass);
    ok(&mut s, 0, Action::Strategic { card: TRADE });
    ok(
        &mut s,
        0,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0),
        },
    );
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(sheet(&s, 1), [3, 3, 1, 9]);
    // After the secondaries, the passed player gets no turn.
    ok(&mut s, 2, Action::Decline);
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 2));
}

// ----- T6 -----

#[test]
fn t6_second_token_in_system_returns_to_reinforcements() {
    let mut s = default_game(3);
    pick(
        &mut s,
        &[CONSTRUCTION, POLITICS, TRADE, WARFARE, TECHNOLOGY, 7],
    );
    // p1 (Politics, 3) acts first: a tactical action puts p1's token in system 19.
    assert_eq!(actor(&s), 1);
    ok(&mut s, 1, Action::Tactical { system: EMPTY });
    ok(&mut s, 1, Action::Done);
    assert_eq!(actor(&s), 0);
    ok(&mut s, 0, Action::Strategic { card: CONSTRUCTION });
    assert_eq!(s.structures(Owner(0)), 2);
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(s.flow.step, Step::Place);
    assert_eq!(sheet(&s, 1), [2, 3, 1, 9]);
    ok(
        &mut s,
        1,
        Action::Place {
            system: EMPTY,
            fallback: None,
        },
    );
    // The token went to reinforcements instead; the effect (a structure) still resolved.
    assert_eq!(sheet(&s, 1), [2, 3, 1, 9]);
    assert_eq!(s.board_tokens(Owner(1)), 1);
    assert_eq!(s.structures(Owner(1)), 1);
    s.check_invariants().unwrap();
}

#[test]
fn t6_a_token_for_a_free_system_is_placed() {
    let mut s = default_game(3);
    pick(
        &mut s,
        &[CONSTRUCTION, POLITICS, TRADE, WARFARE, TECHNOLOGY, 7],
    );
    skip(&mut s, 1);
    ok(&mut s, 0, Action::Strategic { card: CONSTRUCTION });
    ok(&mut s, 1, Action::Secondary);
    ok(
        &mut s,
        1,
        Action::Place {
            system: EMPTY,
            fallback: None,
        },
    );
    assert_eq!(sheet(&s, 1), [2, 3, 1, 8]);
    assert!(s.has_token(Owner(1), EMPTY.into()));
    // With reinforcements available, naming a fallback pool is refused.
    ok(&mut s, 2, Action::Secondary);
    let e = refused(
        &mut s,
        2,
        Action::Place {
            system: EMPTY,
            fallback: Some(Pool::Tactic),
        },
    );
    assert_says(&e, "no fallback");
}

#[test]
fn t6_diplomacy_token_for_a_system_already_holding_one_returns_to_reinforcements() {
    let mut s = default_game(3);
    pick(&mut s, &DIPLOMACY_TO_TECHNOLOGY);
    s.ledger
        .move_tokens(
            Owner(2),
            s.h.pools[0],
            s.h.systems[usize::from(EMPTY)],
            1,
            Cause::Setup,
        )
        .unwrap();
    ok(&mut s, 0, Action::Strategic { card: DIPLOMACY });
    ok(&mut s, 0, Action::Diplomacy { system: EMPTY });
    assert_eq!(
        sheet(&s, 2),
        [2, 3, 2, 8],
        "p2's token stays in reinforcements"
    );
    assert_eq!(s.board_tokens(Owner(2)), 1);
    assert_eq!(sheet(&s, 1), [3, 3, 2, 7]);
}

// ----- T7 -----

/// Three players; p2 (Hacan: 2 carriers, 1 cruiser, 2 fighters at home) acts first.
fn hacan_first() -> coffer_command_tokens::State {
    let mut s = default_game(3);
    pick(&mut s, &HACAN_FIRST);
    assert_eq!(actor(&s), 2);
    s
}

#[test]
fn t7_ships_over_the_fleet_pool_wait_for_the_players_choice() {
    let mut s = hacan_first();
    let (destroyer, cruiser, carrier) = (DESTROYER, CRUISER, CARRIER);
    ok(&mut s, 2, Action::Tactical { system: HOME_HACAN });
    ok(&mut s, 2, Action::Produce { class: destroyer });
    assert_eq!(s.fleet_ships(Owner(2), HOME_HACAN.into()), 4);
    assert_eq!(s.ledger.pending().len(), 1);
    assert_eq!(s.ledger.pending()[0].excess, 1);
    // The only legal actions: p2 chooses which ship goes; everyone else waits, production too.
    assert_eq!(
        legal(&s, 2),
        vec![
            Action::RemoveShip {
                system: HOME_HACAN,
                class: destroyer
            },
            Action::RemoveShip {
                system: HOME_HACAN,
                class: cruiser
            },
            Action::RemoveShip {
                system: HOME_HACAN,
                class: carrier
            }
        ]
    );
    assert!(legal(&s, 0).is_empty());
    let e = refused(&mut s, 0, Action::Tactical { system: EMPTY });
    assert!(
        matches!(e, ActionError::Refused(Refusal::AwaitingChoice { .. })),
        "{e}"
    );
    let e = refused(&mut s, 2, Action::Produce { class: destroyer });
    assert!(
        matches!(e, ActionError::Refused(Refusal::AwaitingChoice { .. })),
        "{e}"
    );
    let e = refused(
        &mut s,
        2,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: FIGHTER,
        },
    );
    assert_says(&e, "does not count");
    let e = refused(
        &mut s,
        2,
        Action::RemoveShip {
            system: EMPTY,
            class: carrier,
        },
    );
    assert_says(&e, "not over the fleet limit in system 19");
    ok(
        &mut s,
        2,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: carrier,
        },
    );
    assert!(s.ledger.pending().is_empty());
    // Production goes on; the next excess is again the player's choice.
    ok(&mut s, 2, Action::Produce { class: destroyer });
    assert_eq!(s.ledger.pending()[0].excess, 1);
    ok(
        &mut s,
        2,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: carrier,
        },
    );
    ok(&mut s, 2, Action::Done);
    assert!(s.ledger.pending().is_empty());
    assert_eq!(s.ships(Owner(2), HOME_HACAN.into(), carrier.into()), 0);
    assert_eq!(s.ships(Owner(2), HOME_HACAN.into(), destroyer.into()), 2);
    assert_eq!(
        s.ship_reserve(Owner(2), carrier.into()),
        4,
        "removed ships return to reinforcements"
    );
    // Fleet tokens are not spent.
    assert_eq!(sheet(&s, 2), [2, 3, 2, 8]);
    s.check_invariants().unwrap();
}

#[test]
fn t7_a_fleet_token_taken_as_fallback_rechecks_the_limit() {
    // p1 (Sol) has 2 carriers and a destroyer at home: exactly its 3 fleet tokens.
    let mut s = diplomacy_with_empty_reinforcements_for_p1();
    let sol_home = 2usize;
    assert_eq!(s.fleet_ships(Owner(1), sol_home), 3);
    ok(&mut s, 0, Action::Diplomacy { system: EMPTY });
    ok(&mut s, 1, Action::Fallback { pool: Pool::Fleet });
    assert_eq!(s.pool(Owner(1), Pool::Fleet), 2);
    assert_eq!(s.ledger.pending().len(), 1);
    assert_eq!(s.ledger.pending()[0].excess, 1);
    // Diplomacy went on for p2, but p1's choice comes first now.
    assert!(s.has_token(Owner(2), EMPTY.into()));
    assert_eq!(actor(&s), 1);
    assert!(
        legal(&s, 1)
            .iter()
            .all(|a| matches!(a, Action::RemoveShip { system: 2, .. }))
    );
    ok(
        &mut s,
        1,
        Action::RemoveShip {
            system: 2,
            class: DESTROYER,
        },
    );
    assert!(s.ledger.pending().is_empty());
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    s.check_invariants().unwrap();
}

#[test]
fn t7_fighters_do_not_count_toward_the_fleet_limit() {
    let mut s = hacan_first();
    let fighter = FIGHTER;
    ok(&mut s, 2, Action::Tactical { system: HOME_HACAN });
    ok(&mut s, 2, Action::Produce { class: fighter });
    ok(&mut s, 2, Action::Produce { class: fighter });
    ok(&mut s, 2, Action::Done);
    assert_eq!(s.ships(Owner(2), HOME_HACAN.into(), fighter.into()), 4);
    assert!(s.ledger.pending().is_empty());
}

#[test]
fn t7_at_the_limit_nothing_is_demanded() {
    let mut s = hacan_first();
    ok(&mut s, 2, Action::Tactical { system: EMPTY });
    ok(&mut s, 2, Action::Produce { class: CRUISER });
    ok(&mut s, 2, Action::Produce { class: CRUISER });
    ok(&mut s, 2, Action::Done);
    assert!(s.ledger.pending().is_empty());
    // Home holds exactly 3 = fleet pool.
    assert_eq!(s.fleet_ships(Owner(2), HOME_HACAN.into()), 3);
    let e = refused(
        &mut s,
        0,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: 1,
        },
    );
    assert_says(&e, "no fleet-limit choice is pending");
}

#[test]
fn t7_an_excess_without_its_pending_demand_is_a_checked_invariant() {
    let mut s = hacan_first();
    ok(&mut s, 2, Action::Tactical { system: EMPTY });
    ok(&mut s, 2, Action::Produce { class: CRUISER });
    ok(&mut s, 2, Action::Produce { class: CRUISER });
    ok(&mut s, 2, Action::Done);
    s.check_invariants().unwrap();
    // A fourth ship moved in behind the ruleset's back: over the limit of 3 with nothing pending.
    let home = usize::from(HOME_HACAN);
    let cruisers = usize::from(CRUISER);
    let zone = s.h.ships[home * s.rules.class_count() + cruisers];
    s.ledger
        .move_tokens(Owner(2), s.h.ship_reserve[cruisers], zone, 1, Cause::Setup)
        .unwrap();
    assert_eq!(s.fleet_ships(Owner(2), home), 4);
    let v = s.check_invariants().unwrap_err();
    assert!(
        v.0.contains("4 ships in system") && v.0.contains("fleet limit of 3, but 0 pending"),
        "{v}"
    );
}

#[test]
fn t7_the_limit_is_rechecked_after_redistribution() {
    let mut s = hacan_first();
    finish_action_phase(&mut s);
    assert_eq!(s.flow.phase, Phase::Status);
    // p0 and p1 gain and redistribute as they were.
    for p in [0u8, 1] {
        status_turn(&mut s, p, Pool::Tactic);
    }
    assert_eq!(actor(&s), 2);
    status_turn_to_fleet(&mut s, 2, 1);
    // Hacan's home: 3 non-fighter ships, fleet pool 1.
    assert_eq!(s.ledger.pending().len(), 1);
    assert_eq!(s.ledger.pending()[0].excess, 2);
    assert!(legal(&s, 2).iter().all(|a| matches!(
        a,
        Action::RemoveShip {
            system: HOME_HACAN,
            ..
        }
    )));
    assert!(
        legal(&s, 0).is_empty(),
        "the next round waits for the choice"
    );
    ok(
        &mut s,
        2,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: CRUISER,
        },
    );
    ok(
        &mut s,
        2,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: CARRIER,
        },
    );
    assert!(s.ledger.pending().is_empty());
    assert_eq!((s.flow.phase, actor(&s)), (Phase::Strategy, 0));
    s.check_invariants().unwrap();
}

// ----- T8 -----

/// Five players holding cards without token effects but Construction's structures (p4); p0 acts first.
fn quiet_five() -> coffer_command_tokens::State {
    let mut s = default_game(5);
    pick(&mut s, &[POLITICS, TRADE, TECHNOLOGY, 7, CONSTRUCTION]);
    assert_eq!(actor(&s), 0);
    s
}

#[test]
fn t8_status_phase_returns_board_tokens_gains_two_and_redistributes() {
    let mut s = quiet_five();
    ok(&mut s, 0, Action::Tactical { system: EMPTY });
    ok(&mut s, 0, Action::Done);
    let p = actor(&s);
    ok(&mut s, p, Action::Tactical { system: EMPTY });
    ok(&mut s, p, Action::Done);
    finish_action_phase(&mut s);
    assert_eq!(s.flow.phase, Phase::Status);
    // Every token on the board is back in reinforcements.
    for p in (0..5).map(Owner) {
        assert_eq!(s.board_tokens(p), 0);
    }
    assert_eq!(sheet(&s, 0), [2, 3, 2, 9]);
    // p0 (the speaker) gains 2, choosing pools, then redistributes all 9 sheet tokens.
    assert_eq!((s.flow.step, actor(&s)), (Step::Gain, 0));
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    ok(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert_eq!(sheet(&s, 0), [3, 4, 2, 7]);
    assert_eq!(s.flow.step, Step::Redistribute);
    assert_eq!(
        legal(&s, 0).len(),
        55,
        "every split of 9 tokens over three pools"
    );
    ok(
        &mut s,
        0,
        Action::Redistribute {
            tactic: 2,
            fleet: 2,
            strategy: 5,
        },
    );
    assert_eq!(sheet(&s, 0), [2, 2, 5, 7]);
    assert_eq!(actor(&s), 1);
    assert_eq!(sheet(&s, p), [2, 3, 2, 9]);
}

#[test]
fn t8_redistribution_must_place_every_sheet_token() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    finish_action_phase(&mut s);
    let p = actor(&s);
    while s.flow.step == Step::Gain {
        ok(&mut s, p, Action::Gain { pool: Pool::Tactic });
    }
    let total = s.sheet(owner(p)) as u8;
    refused(
        &mut s,
        p,
        Action::Redistribute {
            tactic: total,
            fleet: 1,
            strategy: 0,
        },
    );
    refused(
        &mut s,
        p,
        Action::Redistribute {
            tactic: total - 2,
            fleet: 1,
            strategy: 0,
        },
    );
    refused(
        &mut s,
        p,
        Action::Redistribute {
            tactic: 255,
            fleet: 255,
            strategy: 255,
        },
    );
    ok(
        &mut s,
        p,
        Action::Redistribute {
            tactic: total - 1,
            fleet: 1,
            strategy: 0,
        },
    );
}

#[test]
fn t8_status_gain_is_limited_by_reinforcements() {
    let mut s = default_game(5);
    shift_reserve(&mut s, 0, Pool::Strategy, 7);
    pick(&mut s, &[POLITICS, TRADE, TECHNOLOGY, 7, CONSTRUCTION]);
    finish_action_phase(&mut s);
    assert_eq!((s.flow.step, actor(&s)), (Step::Gain, 0));
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    assert_eq!(
        s.flow.step,
        Step::Redistribute,
        "only one token could be gained"
    );
    assert_eq!(s.flow.forfeited[0], 1);
    assert_eq!(sheet(&s, 0), [4, 3, 9, 0]);
}

#[test]
fn t8_with_empty_reinforcements_the_status_phase_goes_straight_to_redistribution() {
    let mut s = default_game(5);
    shift_reserve(&mut s, 0, Pool::Strategy, 8);
    pick(&mut s, &[POLITICS, TRADE, TECHNOLOGY, 7, CONSTRUCTION]);
    finish_action_phase(&mut s);
    assert_eq!((s.flow.step, actor(&s)), (Step::Redistribute, 0));
    assert_eq!(s.flow.forfeited[0], 2);
}

#[test]
fn t8_the_round_ends_after_the_status_phase_and_cards_ready() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    finish_action_phase(&mut s);
    assert!(s.ledger.is_exhausted(s.h.cards[usize::from(POLITICS)]));
    for _ in 0..3 {
        let p = actor(&s);
        status_turn(&mut s, p, Pool::Strategy);
    }
    assert_eq!(s.flow.phase, Phase::Strategy);
    assert_eq!(s.ledger.clock().act, 1);
    assert!(!s.ledger.is_exhausted(s.h.cards[usize::from(POLITICS)]));
    assert!(legal(&s, 0).contains(&Action::Pick { card: POLITICS }));
}

// ----- T9 -----

#[test]
fn t9_leadership_primary_gains_three_then_buys_one_token_per_three_influence() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    assert_eq!(s.flow.step, Step::Buy);
    assert_eq!(
        legal(&s, 0),
        (0..=6)
            .map(|influence| Action::Buy { influence })
            .collect::<Vec<_>>()
    );
    ok(&mut s, 0, Action::Buy { influence: 6 });
    assert_eq!(s.influence(Owner(0)), 0);
    assert_eq!(s.flow.step, Step::Gain);
    ok(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    ok(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert_eq!(sheet(&s, 0), [6, 5, 2, 3]);
    assert_eq!(s.flow.step, Step::Secondary);
}

#[test]
fn t9_excess_influence_is_wasted() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    ok(&mut s, 0, Action::Buy { influence: 5 });
    assert_eq!(s.influence(Owner(0)), 1, "5 influence spent");
    ok(
        &mut s,
        0,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(sheet(&s, 0), [6, 3, 3, 4], "for one token");
    assert_eq!(s.flow.step, Step::Secondary);
    refused(&mut s, 0, Action::Buy { influence: 1 });
}

#[test]
fn t9_any_player_may_buy_in_the_secondary() {
    let mut s = game(
        3,
        coffer_command_tokens::Config {
            influence_per_player: vec![6, 9, 2],
            ..Default::default()
        },
    );
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    ok(&mut s, 0, Action::Buy { influence: 0 });
    ok(&mut s, 1, Action::Secondary);
    refused(&mut s, 1, Action::Buy { influence: 10 });
    ok(&mut s, 1, Action::Buy { influence: 9 });
    for _ in 0..3 {
        ok(&mut s, 1, Action::Gain { pool: Pool::Fleet });
    }
    assert_eq!(sheet(&s, 1), [3, 6, 2, 5]);
    // p2 has 2 influence: buying buys nothing, but may still be done (the influence is wasted).
    ok(&mut s, 2, Action::Secondary);
    assert_eq!(
        legal(&s, 2),
        vec![
            Action::Buy { influence: 0 },
            Action::Buy { influence: 1 },
            Action::Buy { influence: 2 }
        ]
    );
    ok(&mut s, 2, Action::Buy { influence: 2 });
    assert_eq!(sheet(&s, 2), [3, 3, 2, 8]);
    assert_eq!(s.influence(Owner(2)), 0);
    assert_eq!(s.flow.step, Step::Turn);
}

#[test]
fn t9_buying_is_limited_by_reinforcements() {
    let mut s = default_game(3);
    shift_reserve(&mut s, 1, Pool::Tactic, 7);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    ok(&mut s, 0, Action::Buy { influence: 0 });
    ok(&mut s, 1, Action::Secondary);
    // One token left in reinforcements: at most 5 influence (one token, two wasted).
    assert_eq!(legal(&s, 1).len(), 6);
    let e = refused(&mut s, 1, Action::Buy { influence: 6 });
    assert_says(&e, "1 in reinforcements");
    ok(&mut s, 1, Action::Buy { influence: 3 });
    ok(
        &mut s,
        1,
        Action::Gain {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(sheet(&s, 1), [10, 3, 3, 0]);
}

#[test]
fn t9_unspent_influence_is_lost_at_the_end_of_the_round() {
    let mut s = default_game(3);
    pick(&mut s, &LEADERSHIP_TO_WARFARE);
    ok(&mut s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    }
    ok(&mut s, 0, Action::Buy { influence: 4 });
    ok(&mut s, 0, Action::Gain { pool: Pool::Tactic });
    assert_eq!(s.influence(Owner(0)), 2);
    finish_action_phase(&mut s);
    for _ in 0..3 {
        let p = actor(&s);
        status_turn(&mut s, p, Pool::Strategy);
    }
    assert_eq!(
        s.influence(Owner(0)),
        6,
        "each round starts with the configured influence"
    );
}

#[test]
fn t7_a_limit_exceeded_in_the_last_status_phase_is_resolved_before_the_game_finishes() {
    use coffer_command_tokens::CommandTokens;
    use coffer_core::{Outcome, Ruleset};
    let mut s = game(
        3,
        coffer_command_tokens::Config {
            rounds: 1,
            ..Default::default()
        },
    );
    pick(&mut s, &HACAN_FIRST);
    finish_action_phase(&mut s);
    while actor(&s) != 2 {
        let p = actor(&s);
        status_turn(&mut s, p, Pool::Tactic);
    }
    status_turn_to_fleet(&mut s, 2, 2);
    assert_eq!(s.flow.phase, Phase::Over);
    let r = CommandTokens::new();
    assert_eq!(r.outcome(&s), Outcome::Ongoing, "a choice is still pending");
    assert_eq!(legal(&s, 2).len(), 2, "cruiser or carrier");
    refused(&mut s, 2, Action::Pass);
    ok(
        &mut s,
        2,
        Action::RemoveShip {
            system: HOME_HACAN,
            class: CARRIER,
        },
    );
    assert!(matches!(r.outcome(&s), Outcome::Finished { .. }));
    assert!(s.actor().is_none());
}

// ----- T11 -----

/// A four-player game in the action phase with p0 holding Trade; the other cards spread so that p0 acts
/// first (Leadership to p0 too).
fn trade_game() -> State {
    // No Hacan: Masters of Trade makes its Trade secondary free anyway (T21).
    let factions = strings(&["letnev", "sol", "jolnar", "xxcha"]);
    let mut s = game(
        4,
        Config {
            factions,
            ..Config::default()
        },
    );
    pick(
        &mut s,
        &[
            TRADE,
            DIPLOMACY,
            POLITICS,
            CONSTRUCTION,
            LEADERSHIP,
            WARFARE,
            TECHNOLOGY,
            7,
        ],
    );
    assert_eq!(actor(&s), 0);
    s
}

#[test]
fn t11_trade_primary_lets_the_chosen_players_resolve_the_secondary_without_a_strategy_token() {
    let mut s = trade_game();
    ok(&mut s, 0, Action::Strategic { card: TRADE });
    assert_eq!(s.flow.step, Step::FreeSecondaries);
    // Every set of the other three players, and never p0 itself.
    let choices = legal(&s, 0);
    assert_eq!(choices.len(), 8);
    assert!(choices.iter().all(|a| matches!(a,
        Action::FreeSecondaries { players } if !players.contains(Owner(0)))));
    let chosen = coffer_command_tokens::Players(0b1010); // p1 and p3
    ok(&mut s, 0, Action::FreeSecondaries { players: chosen });
    let before: Vec<[u32; 4]> = (0..4).map(|p| sheet(&s, p)).collect();
    for q in 1..4 {
        assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, q));
        ok(&mut s, q, Action::Secondary);
    }
    assert_eq!(sheet(&s, 1), before[1], "p1 was chosen: no token spent");
    assert_eq!(sheet(&s, 3), before[3], "p3 was chosen: no token spent");
    let [t, f, st, r] = before[2];
    assert_eq!(
        sheet(&s, 2),
        [t, f, st - 1, r + 1],
        "p2 was not chosen: one strategy token to reinforcements (T5)"
    );
}

#[test]
fn t11_a_chosen_player_resolves_it_even_with_an_empty_strategy_pool_and_may_not_decline() {
    let mut s = trade_game();
    shift_reserve(&mut s, 1, Pool::Strategy, -2);
    ok(&mut s, 0, Action::Strategic { card: TRADE });
    ok(
        &mut s,
        0,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0b0010),
        },
    );
    // LRR 92.4a: the chosen player must resolve it, token or not.
    assert_eq!(legal(&s, 1), vec![Action::Secondary]);
    let e = refused(&mut s, 1, Action::Decline);
    assert_says(&e, "must resolve it");
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(
        legal(&s, 2),
        vec![Action::Secondary, Action::Decline],
        "p2 was not chosen"
    );
}

#[test]
fn t11_trade_cannot_choose_the_active_player_or_a_player_not_in_the_game() {
    let mut s = trade_game();
    ok(&mut s, 0, Action::Strategic { card: TRADE });
    let e = refused(
        &mut s,
        0,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0b0001),
        },
    );
    assert_says(&e, "choose other players");
    let e = refused(
        &mut s,
        0,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0b1_0000),
        },
    );
    assert_says(&e, "not in this 4-player game");
    // Choosing nobody is a choice: everyone pays as usual.
    ok(
        &mut s,
        0,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0),
        },
    );
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    assert_eq!(s.flow.free, 0);
}

#[test]
fn t11_the_choice_reads_as_a_list_of_players_in_json() {
    let a: Action = serde_json::from_str(r#"{"type":"free_secondaries","players":[1,3]}"#).unwrap();
    assert_eq!(
        a,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0b1010)
        }
    );
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        r#"{"type":"free_secondaries","players":[1,3]}"#
    );
    for bad in [
        r#"{"type":"free_secondaries","players":[1,1]}"#,
        r#"{"type":"free_secondaries","players":[8]}"#,
        r#"{"type":"free_secondaries","players":[3,1]}"#,
    ] {
        assert!(serde_json::from_str::<Action>(bad).is_err(), "{bad}");
    }
}

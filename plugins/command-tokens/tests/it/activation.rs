//! T4-T6: activating a system, secondary abilities paid from the strategy pool, and one token per player
//! per system.

use crate::support::*;
use coffer_command_tokens::{Action, Pool, Step};
use coffer_core::{ActionError, Cause, Owner};

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

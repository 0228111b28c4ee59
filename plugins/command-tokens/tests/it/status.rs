//! T8, T9 and T11: the status phase (gains and redistribution), Leadership, and Trade's free secondaries.

use crate::support::*;
use coffer_command_tokens::{Action, Config, Phase, Pool, State, Step};
use coffer_core::Owner;

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

/// The cards are picked, then p0 plays Leadership and gains its three tokens into the tactic pool.
fn leadership_primary_gains_three(s: &mut State) {
    pick(s, &LEADERSHIP_TO_WARFARE);
    ok(s, 0, Action::Strategic { card: LEADERSHIP });
    for _ in 0..3 {
        ok(s, 0, Action::Gain { pool: Pool::Tactic });
    }
}

#[test]
fn t9_leadership_primary_gains_three_then_buys_one_token_per_three_influence() {
    let mut s = default_game(3);
    leadership_primary_gains_three(&mut s);
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
    leadership_primary_gains_three(&mut s);
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
    leadership_primary_gains_three(&mut s);
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
    leadership_primary_gains_three(&mut s);
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
    leadership_primary_gains_three(&mut s);
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

//! Rounds: strategy, action and status phases in order for 3 to 8 players, and the outcome.

use crate::support::*;
use coffer_command_tokens::{CommandTokens, Config, Phase};
use coffer_core::{Outcome, Owner, Ruleset};

#[test]
fn rounds_run_strategy_action_status_for_3_to_8_players() {
    for players in 3..=8u16 {
        let mut s = game(
            players,
            Config {
                rounds: 2,
                ..Default::default()
            },
        );
        let mut phases = vec![Phase::Strategy];
        random_playout(&mut s, u64::from(players), |s, _| {
            if phases.last() != Some(&s.flow.phase) {
                phases.push(s.flow.phase);
            }
        });
        use Phase::*;
        assert_eq!(
            phases,
            [Strategy, Action, Status, Strategy, Action, Status, Over],
            "{players} players"
        );
        // No round begins after the last: the game ends in round 2.
        assert_eq!(s.round(), 2);
        s.check_invariants().unwrap();
    }
}

#[test]
fn each_player_picks_two_cards_with_three_or_four_players_and_one_with_more() {
    for (players, picks) in [(3u16, 6usize), (4, 8), (5, 5), (8, 8)] {
        let mut s = default_game(players);
        let mut n = 0;
        while s.flow.phase == Phase::Strategy {
            let p = actor(&s);
            let a = legal(&s, p)[0];
            ok(&mut s, p, a);
            n += 1;
        }
        assert_eq!(n, picks, "{players} players");
        for p in 0..players as u8 {
            let held = s.flow.holder.iter().filter(|&&h| h == p).count();
            assert_eq!(held * usize::from(players), picks, "p{p}");
        }
    }
}

#[test]
fn action_phase_order_follows_the_lowest_initiative() {
    let mut s = default_game(5);
    pick(&mut s, &[7, 3, 0, 5, 1]);
    assert_eq!(&s.flow.order[..5], &[2, 4, 1, 3, 0]);
    assert_eq!(actor(&s), 2);
}

#[test]
fn the_game_ends_after_the_configured_rounds_scoring_command_sheet_tokens() {
    let r = CommandTokens::new();
    let mut s = game(
        4,
        Config {
            rounds: 1,
            ..Default::default()
        },
    );
    assert_eq!(r.outcome(&s), Outcome::Ongoing);
    random_playout(&mut s, 99, |_, _| {});
    let Outcome::Finished { winners, scores } = r.outcome(&s) else {
        panic!("the game should be over")
    };
    let expected: Vec<i64> = (0..4).map(|p| i64::from(s.sheet(Owner(p)))).collect();
    assert_eq!(scores, expected);
    let best = *scores.iter().max().unwrap();
    let expected_winners: Vec<Owner> = (0..4u16)
        .filter(|&p| scores[usize::from(p)] == best)
        .map(Owner)
        .collect();
    assert_eq!(winners, expected_winners);
    let e = refused(&mut s, 0, coffer_command_tokens::Action::Pass);
    assert_eq!(e, coffer_core::ActionError::GameOver);
}

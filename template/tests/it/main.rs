//! The ruleset's tests, one per rule and named after it, through `coffer_core::testing` (`applies` and
//! `refused` apply as hosts do; `refused` also checks that a refusal changes nothing and was not listed as
//! legal). Copy this shape: each new rule gets a test here.

use coffer_core::testing::{applies, refused};
use coffer_core::{ActionError, Adapter, Outcome, Owner, Ruleset, Setup};
use my_ruleset::{Action, CoinRace, Config, State};

/// A new game of `players` with this configuration.
fn game(players: u16, config: Config) -> State {
    CoinRace.new_game(players, 1, &config).unwrap()
}

/// A purse's coins.
fn coins(s: &State, p: u16) -> u32 {
    s.coins(Owner(p))
}

#[test]
fn a_take_moves_one_or_two_coins_from_the_bank_to_the_purse() {
    let mut s = game(2, Config::default());
    applies(&CoinRace, &mut s, Owner(0), &Action::Take { coins: 2 });
    assert_eq!(coins(&s, 0), 2);
    applies(&CoinRace, &mut s, Owner(1), &Action::Take { coins: 1 });
    assert_eq!(coins(&s, 1), 1);
}

#[test]
fn a_take_of_other_than_one_or_two_is_refused() {
    let mut s = game(2, Config::default());
    let refusal = refused(&CoinRace, &mut s, Owner(0), &Action::Take { coins: 3 });
    assert_eq!(
        refusal.to_string(),
        ActionError::Illegal("take 3: take 1 or 2".into()).to_string()
    );
}

#[test]
fn only_the_player_whose_turn_it_is_acts() {
    let mut s = game(2, Config::default());
    let refusal = refused(&CoinRace, &mut s, Owner(1), &Action::Take { coins: 1 });
    assert!(
        matches!(refusal, ActionError::NotYourTurn { .. }),
        "{refusal}"
    );
}

#[test]
fn building_a_mine_with_too_few_coins_is_refused_and_changes_nothing() {
    let mut s = game(2, Config::default());
    refused(&CoinRace, &mut s, Owner(0), &Action::Build);
    // The same through the adapter, as a host applies JSON.
    let game = Adapter::shared(CoinRace);
    let mut g = game.new_game(&Setup::new(2, 1)).unwrap();
    let before = g.state_hash();
    assert!(g.apply_json(Owner(0), r#"{"type":"build"}"#).is_err());
    assert_eq!(g.state_hash(), before);
}

#[test]
fn a_mine_costs_three_coins_and_yields_one_at_the_start_of_its_owners_turn() {
    let mut s = game(2, Config::default());
    for _ in 0..2 {
        applies(&CoinRace, &mut s, Owner(0), &Action::Take { coins: 2 });
        applies(&CoinRace, &mut s, Owner(1), &Action::Take { coins: 1 });
    }
    applies(&CoinRace, &mut s, Owner(0), &Action::Build);
    assert_eq!(coins(&s, 0), 1);
    applies(&CoinRace, &mut s, Owner(1), &Action::Take { coins: 1 });
    // p0's turn starts with the mine's coin.
    assert_eq!(coins(&s, 0), 2);
}

#[test]
fn the_bank_pays_what_it_holds_and_a_dry_bank_ends_the_game() {
    let game = Adapter::shared(CoinRace);
    let setup = Setup::new(2, 1).config(serde_json::json!({"goal": 3, "bank": 3}));
    let mut g = game.new_game(&setup).unwrap();
    g.apply_json(Owner(0), r#"{"type":"take","coins":2}"#)
        .unwrap();
    // One coin is left: p1 asks for two and gets one; the bank is dry and p0 is the richest.
    g.apply_json(Owner(1), r#"{"type":"take","coins":2}"#)
        .unwrap();
    match g.outcome() {
        Outcome::Finished { winners, scores } => {
            assert_eq!(winners, [Owner(0)]);
            assert_eq!(scores, [2, 1]);
        }
        Outcome::Ongoing => panic!("a dry bank ends the game"),
    }
}

#[test]
fn the_first_purse_to_reach_the_goal_wins() {
    let mut s = game(2, Config { goal: 4, bank: 30 });
    for _ in 0..2 {
        applies(&CoinRace, &mut s, Owner(0), &Action::Take { coins: 2 });
        if CoinRace.outcome(&s) == Outcome::Ongoing {
            applies(&CoinRace, &mut s, Owner(1), &Action::Take { coins: 1 });
        }
    }
    match CoinRace.outcome(&s) {
        Outcome::Finished { winners, .. } => assert_eq!(winners, [Owner(0)]),
        Outcome::Ongoing => panic!("p0 has reached the goal"),
    }
    refused(&CoinRace, &mut s, Owner(1), &Action::Take { coins: 1 });
}

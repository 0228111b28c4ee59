//! T18: elimination (LRR 33), as far as it touches command tokens, units, strategy cards, the speaker and
//! the order of play. LRR 33.1's conditions are decided at the table; `eliminate` records its finding.

use crate::support::*;
use coffer_command_tokens::{
    Action, CommandTokens, Config, NOBODY, Phase, Step, kind, note, ship_supply,
};
use coffer_core::{Change, Owner, Ruleset, testing};

/// A game of `players` with elimination on, at p0's first turn (3-4 players pick two cards each,
/// more pick one; cards in index order, so p0 holds Leadership and acts first).
fn game_with_elimination(players: u16) -> coffer_command_tokens::State {
    let config = Config {
        elimination: true,
        ..Default::default()
    };
    let mut s = game(players, config);
    let picks = usize::from(players) * usize::from(s.rules.cards_per_player);
    let cards: Vec<u8> = (0..picks as u8).collect();
    pick(&mut s, &cards);
    assert_eq!(actor(&s), 0);
    s
}

/// p0 activates an empty system and, movement over, eliminates `whom`.
fn p0_eliminates(s: &mut coffer_command_tokens::State, whom: u16) {
    let system = system(s, "19");
    ok(s, 0, Action::Tactical { system });
    ok(s, 0, Action::Eliminate { player: whom });
}

/// Every command token and ship piece of `p` that is not in the game box.
fn in_play(s: &coffer_command_tokens::State, p: u8) -> u32 {
    let zones = s.ledger.zones();
    s.ledger
        .zones_holding(owner(p))
        .filter(|z| zones[z.index()].key.kind != kind::BOX)
        .map(|z| s.ledger.tokens(z, owner(p)))
        .sum()
}

#[test]
fn t18_the_eliminated_players_command_tokens_and_units_return_to_the_game_box() {
    let mut s = game_with_elimination(3);
    let home = (0..s.rules.system_count())
        .find(|&z| s.all_ships(owner(1), z) > 0)
        .expect("p1 starts with ships");
    assert!(in_play(&s, 1) > 0);
    let pieces: Vec<u32> = (0..s.rules.class_count())
        .map(|c| s.ledger.supply_of(ship_supply(c), owner(1)))
        .collect();
    let system = system(&s, "19");
    ok(&mut s, 0, Action::Tactical { system });
    let events = testing::applies(
        &CommandTokens::new(),
        &mut s,
        owner(0),
        &Action::Eliminate { player: 1 },
    );
    assert!(events.iter().any(|e| e.change
        == Change::Note {
            code: note::ELIMINATED,
            args: [0; 3]
        }
        && e.key.owner == owner(1)));
    // LRR 33.2: tokens in reinforcements, on the sheet, on the board, and every unit, leave play; the
    // kernel still conserves them, in the game box.
    assert_eq!(in_play(&s, 1), 0);
    assert_eq!(sheet(&s, 1), [0; 4]);
    assert_eq!(s.all_ships(owner(1), home), 0);
    assert_eq!(s.ledger.tokens(s.h.boxed[0], owner(1)), 16);
    for (c, &total) in pieces.iter().enumerate() {
        assert_eq!(s.ledger.tokens(s.h.boxed[c + 1], owner(1)), total);
    }
    assert_eq!(s.structures(owner(1)), 0);
    // The tactical action goes on.
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    assert!(s.is_eliminated(owner(1)));
    s.check_invariants().unwrap();
}

#[test]
fn t18_the_eliminated_players_strategy_cards_return_to_the_common_play_area() {
    let mut s = game_with_elimination(3);
    // p1 picked Diplomacy (1) and Trade (4).
    assert_eq!((s.flow.holder[1], s.flow.holder[4]), (1, 1));
    p0_eliminates(&mut s, 1);
    assert_eq!((s.flow.holder[1], s.flow.holder[4]), (NOBODY, NOBODY));
    // Nobody may take their strategic actions.
    ok(&mut s, 0, Action::Done);
    for p in [2, 0] {
        let l = legal(&s, p);
        assert!(!l.contains(&Action::Strategic { card: 1 }));
        assert!(!l.contains(&Action::Strategic { card: 4 }));
        skip(&mut s, p);
    }
}

#[test]
fn t18_an_eliminated_player_takes_no_turn_no_status_phase_and_no_pick() {
    let mut s = game_with_elimination(3);
    p0_eliminates(&mut s, 1);
    ok(&mut s, 0, Action::Done);
    // p2 (Politics, 3) acts next, then p0: p1 never.
    assert_eq!(actor(&s), 2);
    let actors = deciders(&play_while(
        &mut s,
        |s| s.flow.phase != Phase::Strategy,
        simple_action,
    ));
    assert!(!actors.contains(&1), "p1 decided in {actors:?}");
    // Round 2: two players pick two cards each, p1 none.
    let pickers = deciders(&play_while(
        &mut s,
        |s| s.flow.step == Step::Pick,
        first_legal,
    ));
    assert_eq!(pickers, [0, 2, 0, 2]);
    s.check_invariants().unwrap();
}

#[test]
fn t18_an_eliminated_player_is_offered_no_secondary_and_places_no_diplomacy_token() {
    let mut s = game_with_elimination(4);
    // Four players pick two cards each: p1 holds Diplomacy (1) and Warfare (5).
    p0_eliminates(&mut s, 2);
    ok(&mut s, 0, Action::Done);
    // p1's Diplomacy: the other players still in the game place a token; p2 is skipped.
    assert_eq!(actor(&s), 1);
    ok(&mut s, 1, Action::Strategic { card: 1 });
    let target = system(&s, "19");
    ok(&mut s, 1, Action::Diplomacy { system: target });
    for p in [0, 3] {
        assert!(s.has_token(owner(p), usize::from(target)));
    }
    assert!(!s.has_token(owner(2), usize::from(target)));
    // The secondary goes to p3, then p0, never p2.
    let offered = play_while(
        &mut s,
        |s| s.flow.step == Step::Secondary,
        |_, _| Action::Decline,
    );
    assert_eq!(deciders(&offered), [3, 0]);
    s.check_invariants().unwrap();
}

#[test]
fn t18_trade_cannot_choose_an_eliminated_player() {
    let mut s = game_with_elimination(3);
    p0_eliminates(&mut s, 2);
    ok(&mut s, 0, Action::Done);
    // p1 holds Trade (4).
    ok(&mut s, 1, Action::Strategic { card: 4 });
    assert_eq!(s.flow.step, Step::FreeSecondaries);
    let players = coffer_command_tokens::Players(1 << 2);
    let e = refused(&mut s, 1, Action::FreeSecondaries { players });
    assert_says(&e, "p2 is eliminated");
    assert!(
        legal(&s, 1).iter().all(
            |a| !matches!(a, Action::FreeSecondaries { players } if players.contains(Owner(2)))
        )
    );
}

#[test]
fn t18_an_eliminated_speaker_passes_the_speaker_token_to_the_left() {
    let mut s = game_with_elimination(3);
    assert_eq!(s.flow.speaker, 0);
    // p0 is eliminated during their own tactical action: their turn ends there.
    p0_eliminates(&mut s, 0);
    assert_eq!(s.flow.speaker, 1);
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    finish_action_phase(&mut s);
    // The status phase and the next strategy phase start from p1.
    let status = play_while(&mut s, |s| s.flow.phase == Phase::Status, first_legal);
    assert!(!deciders(&status).contains(&0));
    assert_eq!(actor(&s), 1);
    s.check_invariants().unwrap();
}

#[test]
fn t18_a_game_started_with_five_players_keeps_one_strategy_card_each() {
    let mut s = game_with_elimination(5);
    assert_eq!(s.rules.cards_per_player, 1);
    p0_eliminates(&mut s, 3);
    p0_eliminates_after_turns(&mut s, 4);
    finish_round(&mut s);
    assert_eq!(
        (s.flow.step, s.live_players()),
        (Step::Pick, 3),
        "{:?}",
        s.flow
    );
    // LRR 33.9: three players pick one card each, not two.
    let played = play_while(&mut s, |s| s.flow.step == Step::Pick, first_legal);
    let picks = played
        .iter()
        .filter(|(_, a)| matches!(a, Action::Pick { .. }))
        .count();
    assert_eq!(picks, 3);
}

/// Plays `choose`'s action for whoever decides while `going` holds; returns each decision's player and
/// action, in order.
fn play_while(
    s: &mut coffer_command_tokens::State,
    going: impl Fn(&coffer_command_tokens::State) -> bool,
    choose: impl Fn(&coffer_command_tokens::State, u8) -> Action,
) -> Vec<(u8, Action)> {
    let mut played = Vec::new();
    while going(s) {
        let p = actor(s);
        let a = choose(s, p);
        ok(s, p, a);
        played.push((p, a));
    }
    played
}

/// The players of [`play_while`]'s decisions.
fn deciders(played: &[(u8, Action)]) -> Vec<u8> {
    played.iter().map(|&(p, _)| p).collect()
}

/// `p`'s first legal action.
fn first_legal(s: &coffer_command_tokens::State, p: u8) -> Action {
    legal(s, p)[0]
}

/// Plays on until p0's next turn, then has p0 eliminate `whom`.
fn p0_eliminates_after_turns(s: &mut coffer_command_tokens::State, whom: u16) {
    ok(s, 0, Action::Done);
    while actor(s) != 0 {
        let p = actor(s);
        skip(s, p);
    }
    let system = free_system(s, 0);
    ok(s, 0, Action::Tactical { system });
    ok(s, 0, Action::Eliminate { player: whom });
}

/// Ends the action and status phases simply, and any fleet-limit choice they leave.
fn finish_round(s: &mut coffer_command_tokens::State) {
    finish_action_phase(s);
    play_while(
        s,
        |s| s.flow.phase == Phase::Status || !s.ledger.pending().is_empty(),
        first_legal,
    );
}

#[test]
fn t18_elimination_is_refused_for_the_last_player_twice_off_and_outside_production() {
    let mut s = game_with_elimination(3);
    // Not before the invasion step of a tactical action.
    let e = refused(&mut s, 0, Action::Eliminate { player: 1 });
    assert_says(&e, "not possible");
    p0_eliminates(&mut s, 1);
    let e = refused(&mut s, 0, Action::Eliminate { player: 1 });
    assert_says(&e, "p1 is already eliminated");
    let e = refused(&mut s, 0, Action::Eliminate { player: 7 });
    assert_says(&e, "not in this 3-player game");
    ok(&mut s, 0, Action::Eliminate { player: 2 });
    // p0 is the last player in the game.
    let e = refused(&mut s, 0, Action::Eliminate { player: 0 });
    assert_says(&e, "p0 is the last player");
    assert!(
        !legal(&s, 0)
            .iter()
            .any(|a| matches!(a, Action::Eliminate { .. }))
    );
    // Off by default.
    let mut s = default_game(3);
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    let system = system(&s, "19");
    ok(&mut s, 0, Action::Tactical { system });
    let e = refused(&mut s, 0, Action::Eliminate { player: 1 });
    assert_says(&e, "elimination is off");
}

#[test]
fn t18_an_eliminated_player_ranks_below_every_other_player() {
    let config = Config {
        elimination: true,
        rounds: 1,
        ..Default::default()
    };
    let mut s = game(3, config);
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    p0_eliminates(&mut s, 2);
    finish_round(&mut s);
    assert_eq!(s.flow.phase, Phase::Over, "{:?}", s.flow);
    let coffer_core::Outcome::Finished { winners, scores } = CommandTokens::new().outcome(&s)
    else {
        panic!("the game is over");
    };
    assert!(!winners.contains(&Owner(2)), "{winners:?}");
    assert_eq!(scores[2], -1);
}

#[test]
fn t18_random_playouts_with_elimination_keep_every_invariant() {
    let mut eliminations = 0;
    for seed in 0..40 {
        let config = Config {
            elimination: true,
            factions: strings(&["mahact", "letnev", "sol", "hacan", "nekro"]),
            ..Default::default()
        };
        let mut s = game(5, config);
        random_playout(&mut s, seed, |s, a| {
            s.check_invariants().unwrap();
            if matches!(a, Action::Eliminate { .. }) {
                eliminations += 1;
            }
        });
        assert!(s.live_players() >= 1);
    }
    assert!(eliminations > 40, "{eliminations} eliminations");
}

//! T23: abilities that react to other players: Nullification Field, Foresight and Predictive
//! Intelligence.

use crate::support::*;
use coffer_command_tokens::{Action, Pool, State, Step};

fn use_ability(ability: u8, system: Option<u16>) -> Action {
    Action::UseAbility {
        ability,
        system,
        pool: None,
    }
}

/// The line galaxy with these factions, technologies and ships, at p0's first turn.
fn reacting(
    factions: [&str; 3],
    technologies: [&[&str]; 3],
    ships: &[(u16, u16, u8, u32)],
) -> State {
    let mut config = battlefield_config(factions, &[], ships);
    config.technologies = technologies
        .iter()
        .map(|t| t.iter().map(|x| x.to_string()).collect())
        .collect();
    start(config)
}

#[test]
fn t23_nullification_field_ends_the_turn_of_a_player_who_activates_a_system_with_the_xxcha_ships() {
    let mut s = reacting(
        ["sol", "xxcha", "jolnar"],
        [&[], &["nullification-field"], &[]],
        &[(C, 1, CRUISER, 1), (B, 0, CRUISER, 1)],
    );
    // Sol's Orbital Drop is ability #0, the Xxcha's Nullification Field #1.
    ok(&mut s, 0, Action::Tactical { system: C });
    assert_eq!((s.flow.step, actor(&s)), (Step::Nullify, 1));
    assert_eq!(legal(&s, 1), [use_ability(1, None), Action::NoReaction]);
    let before = sheet(&s, 1);
    ok(&mut s, 1, use_ability(1, None));
    assert_eq!(
        sheet(&s, 1),
        [before[0], before[1], before[2] - 1, before[3] + 1]
    );
    // p0's turn is over: no movement, and the tactic token stays in c.
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    assert!(s.has_token(owner(0), usize::from(C)));
    assert_eq!(s.ships(owner(0), usize::from(B), usize::from(CRUISER)), 1);
    // Exhausted until the round's end.
    assert!(s.ledger.is_exhausted(s.h.abilities[1]));
}

#[test]
fn t23_declining_nullification_field_goes_on_to_movement() {
    let mut s = reacting(
        ["sol", "xxcha", "jolnar"],
        [&[], &["nullification-field"], &[]],
        &[(C, 1, CRUISER, 1)],
    );
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 1, Action::NoReaction);
    assert_eq!((s.flow.step, actor(&s)), (Step::Move, 0));
    // Without ships there, or without a strategy token, nothing is asked.
    let mut t = reacting(
        ["sol", "xxcha", "jolnar"],
        [&[], &["nullification-field"], &[]],
        &[(C, 1, CRUISER, 1)],
    );
    let strategy = sheet(&t, 1)[2] as i32;
    shift_reserve(&mut t, 1, Pool::Strategy, -strategy);
    ok(&mut t, 0, Action::Tactical { system: C });
    assert_eq!(t.flow.step, Step::Move);
}

#[test]
fn t23_foresight_places_a_strategy_token_next_door_and_moves_the_naalu_ships_there() {
    let mut s = reacting(
        ["sol", "naalu", "jolnar"],
        [&[], &[], &[]],
        &[(B, 0, CRUISER, 2), (C, 1, CRUISER, 2)],
    );
    // Foresight is ability #1 (after Sol's Orbital Drop).
    advance(&mut s, 0, C, &[(B, CRUISER, 0)]);
    assert_eq!((s.flow.step, actor(&s)), (Step::Foresight, 1));
    // d and e are adjacent to c and hold no other player's ships; b still holds one of p0's.
    let l = legal(&s, 1);
    assert!(l.contains(&use_ability(1, Some(D))));
    assert!(l.contains(&use_ability(1, Some(E))));
    assert!(!l.contains(&use_ability(1, Some(B))));
    let before = sheet(&s, 1);
    ok(&mut s, 1, use_ability(1, Some(D)));
    assert!(s.has_token(owner(1), usize::from(D)));
    assert_eq!(
        sheet(&s, 1),
        [before[0], before[1], before[2] - 1, before[3]]
    );
    assert_eq!(s.ships(owner(1), usize::from(D), usize::from(CRUISER)), 2);
    // No space combat: p0 produces in c.
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
}

#[test]
fn t23_declining_foresight_leads_to_the_space_combat() {
    let mut s = reacting(
        ["sol", "naalu", "jolnar"],
        [&[], &[], &[]],
        &[(B, 0, CRUISER, 1), (C, 1, CRUISER, 1)],
    );
    advance(&mut s, 0, C, &[(B, CRUISER, 0)]);
    ok(&mut s, 1, Action::NoReaction);
    assert!(s.flow.step.in_space_combat());
}

#[test]
fn t23_predictive_intelligence_redistributes_at_the_end_of_the_owners_turn() {
    let mut s = reacting(
        ["sol", "hacan", "jolnar"],
        [&["predictive-intelligence"], &[], &[]],
        &[],
    );
    ok(&mut s, 0, Action::Tactical { system: A });
    ok(&mut s, 0, Action::Done);
    // The end of p0's turn: redistribute with it, or not.
    assert_eq!((s.flow.step, actor(&s)), (Step::EndOfTurn, 0));
    let [t, f, st, _] = sheet(&s, 0);
    let total = (t + f + st) as u8;
    let to = Action::Redistribute {
        tactic: 0,
        fleet: total - 1,
        strategy: 1,
    };
    assert!(legal(&s, 0).contains(&to));
    assert!(legal(&s, 0).contains(&Action::NoReaction));
    ok(&mut s, 0, to);
    assert_eq!(&sheet(&s, 0)[..3], [0, u32::from(total) - 1, 1]);
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    // Exhausted: not offered again this round.
    assert!(s.ledger.is_exhausted(s.h.abilities[1]));
    until_turn_of(&mut s, 0);
    ok(&mut s, 0, Action::Strategic { card: 0 });
    while actor(&s) == 0 || s.flow.step != Step::Turn {
        assert_ne!(s.flow.step, Step::EndOfTurn);
        let q = actor(&s);
        let a = simple_action(&s, q);
        ok(&mut s, q, a);
    }
}

#[test]
fn t23_random_playouts_with_reactions_keep_every_invariant() {
    let config = playout_config(
        &["xxcha", "naalu", "sol", "muaat"],
        &[
            &["nullification-field", "predictive-intelligence"],
            &["neuroglaive"],
            &["predictive-intelligence"],
            &[],
        ],
        4,
    );
    let mut used = 0;
    playouts_keep_invariants(4, &config, 30, |_, a| {
        used += usize::from(matches!(a, Action::UseAbility { .. }));
    });
    assert!(used > 0, "random play uses the reactions");
}

//! T14-T16: movement into the activated system, space combat and retreat, as far as they touch command
//! tokens and the fleet pool.

use crate::support::*;
use coffer_command_tokens::{Action, Config, Pool, State, Step};
use coffer_core::{Cause, Owner};

/// Three players (Sol, Hacan, Jol-Nar: no fleet-limit bonus) on the line galaxy with `ships` as
/// (system, player, class, count), at p0's first turn of the action phase.
fn battlefield(ships: &[(u16, u16, u8, u32)]) -> State {
    battlefield_with(["sol", "hacan", "jolnar"], &[], ships)
}

/// [`battlefield`] with the given factions and laws.
fn battlefield_with(factions: [&str; 3], laws: &[&str], ships: &[(u16, u16, u8, u32)]) -> State {
    start(battlefield_config(factions, laws, ships))
}

fn ships(s: &State, p: u8, system: u16, class: u8) -> u32 {
    s.ships(owner(p), usize::from(system), usize::from(class))
}

fn mv(from: u16, class: u8, fighters: u8) -> Action {
    Action::Move {
        from,
        class,
        fighters,
    }
}

fn retreat(system: u16, fallback: Option<Pool>) -> Action {
    Action::Retreat { system, fallback }
}

/// Puts one of `p`'s command tokens from reinforcements in `system` (test set-up).
fn token(s: &mut State, p: u8, system: u16) {
    s.ledger
        .move_tokens(
            owner(p),
            s.h.reinforcements,
            s.h.systems[usize::from(system)],
            1,
            Cause::Setup,
        )
        .unwrap();
    s.ledger.take_events();
}

// ----- T14 -----

#[test]
fn t14_ships_move_into_the_activated_system_within_their_move_value() {
    // A destroyer (move 2) two systems away, a carrier (move 1) two away, a dreadnought (move 1) next door.
    let mut s = battlefield(&[
        (A, 0, DESTROYER, 1),
        (A, 0, CARRIER, 1),
        (B, 0, DREADNOUGHT, 1),
    ]);
    ok(&mut s, 0, Action::Tactical { system: C });
    assert_eq!(s.flow.step, Step::Move);
    let l = legal(&s, 0);
    assert!(l.contains(&mv(A, DESTROYER, 0)));
    assert!(l.contains(&mv(B, DREADNOUGHT, 0)));
    assert!(!l.iter().any(|a| *a == mv(A, CARRIER, 0)));
    let e = refused(&mut s, 0, mv(A, CARRIER, 0));
    assert_eq!(
        e.to_string(),
        "illegal action: a Carrier moves 1 system, but system a is 2 systems away from system c"
    );
    ok(&mut s, 0, mv(A, DESTROYER, 0));
    ok(&mut s, 0, mv(B, DREADNOUGHT, 0));
    assert_eq!(ships(&s, 0, C, DESTROYER), 1);
    assert_eq!(ships(&s, 0, C, DREADNOUGHT), 1);
    assert_eq!(ships(&s, 0, A, DESTROYER), 0);
    // No other player's ships there: no combat, production follows.
    ok(&mut s, 0, Action::EndMovement);
    assert_eq!(s.flow.step, Step::Produce);
    ok(&mut s, 0, Action::Done);
    assert_eq!(actor(&s), 1);
}

#[test]
fn t14_ships_in_a_system_holding_the_players_command_token_cannot_move() {
    let mut s = battlefield(&[(B, 0, DESTROYER, 1), (A, 0, DESTROYER, 1)]);
    token(&mut s, 0, B);
    ok(&mut s, 0, Action::Tactical { system: C });
    let l = legal(&s, 0);
    assert!(!l.contains(&mv(B, DESTROYER, 0)));
    let e = refused(&mut s, 0, mv(B, DESTROYER, 0));
    assert_eq!(
        e.to_string(),
        "illegal action: p0's ships in system b cannot move: the system holds one of p0's command tokens"
    );
    // LRR 58.4d: a ship moves through a system holding its own faction's token.
    ok(&mut s, 0, mv(A, DESTROYER, 0));
    assert_eq!(ships(&s, 0, C, DESTROYER), 1);
}

#[test]
fn t14_ships_cannot_move_through_another_players_ships() {
    let mut s = battlefield(&[(A, 0, DESTROYER, 1), (B, 1, CRUISER, 1), (F, 0, CRUISER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    let e = refused(&mut s, 0, mv(A, DESTROYER, 0));
    assert_eq!(
        e.to_string(),
        "illegal action: no path of adjacent systems leads from system a to system c without passing through another player's ships"
    );
    assert!(
        !legal(&s, 0)
            .iter()
            .any(|a| matches!(a, Action::Move { .. }))
    );
    // Into a system holding them is fine: that is where the move ends.
    ok(&mut s, 0, Action::EndMovement);
    ok(&mut s, 0, Action::Done);
    ok(&mut s, 1, Action::Tactical { system: D });
    ok(&mut s, 1, mv(B, CRUISER, 0));
    assert_eq!(ships(&s, 1, D, CRUISER), 1);
    ok(&mut s, 1, Action::EndMovement);
    ok(&mut s, 1, Action::Done);
    ok(&mut s, 2, Action::Tactical { system: A });
    ok(&mut s, 2, Action::Done);
    // A cruiser (move 2) from f reaches b through a, which holds only p0's own ships.
    ok(&mut s, 0, Action::Tactical { system: B });
    ok(&mut s, 0, mv(F, CRUISER, 0));
    assert_eq!(ships(&s, 0, B, CRUISER), 1);
}

#[test]
fn t14_a_ship_with_capacity_transports_fighters_from_the_system_it_starts_in() {
    let mut s = battlefield(&[(B, 0, CARRIER, 1), (B, 0, FIGHTER, 6), (B, 0, DESTROYER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    let l = legal(&s, 0);
    for k in 0..=4 {
        assert!(l.contains(&mv(B, CARRIER, k)), "carrier with {k} fighters");
    }
    assert!(!l.contains(&mv(B, CARRIER, 5)));
    assert!(
        !l.contains(&mv(B, DESTROYER, 1)),
        "a destroyer has no capacity"
    );
    let e = refused(&mut s, 0, mv(B, CARRIER, 5));
    assert_eq!(
        e.to_string(),
        "illegal action: a Carrier transports at most 4, not 5"
    );
    let e = refused(&mut s, 0, mv(B, FIGHTER, 0));
    assert_eq!(
        e.to_string(),
        "illegal action: a Fighter has no move value: it moves only transported by a ship with capacity"
    );
    ok(&mut s, 0, mv(B, CARRIER, 4));
    assert_eq!(ships(&s, 0, C, FIGHTER), 4);
    assert_eq!(ships(&s, 0, B, FIGHTER), 2);
}

#[test]
fn t14_moves_are_listed_by_ascending_system_then_class_then_fighters() {
    let mut s = battlefield(&[
        (B, 0, FIGHTER, 2),
        (B, 0, DESTROYER, 1),
        (B, 0, CARRIER, 1),
        (A, 0, DREADNOUGHT, 1),
        (A, 0, DESTROYER, 1),
        (D, 0, CRUISER, 1),
    ]);
    ok(&mut s, 0, Action::Tactical { system: C });
    let moves: Vec<(u16, u8, u8)> = legal(&s, 0)
        .into_iter()
        .filter_map(|a| match a {
            Action::Move {
                from,
                class,
                fighters,
            } => Some((from, class, fighters)),
            _ => None,
        })
        .collect();
    // The dreadnought (move 1) in a, two systems away, cannot reach c; fighters move only carried.
    assert_eq!(
        moves,
        [
            (A, DESTROYER, 0),
            (B, DESTROYER, 0),
            (B, CARRIER, 0),
            (B, CARRIER, 1),
            (B, CARRIER, 2),
            (D, CRUISER, 0),
        ]
    );
}

#[test]
fn t14_ships_arriving_over_the_fleet_limit_are_removed_at_once() {
    // Fleet pool 3; two destroyers already in c, two more arrive.
    let mut s = battlefield(&[(C, 0, DESTROYER, 2), (B, 0, DESTROYER, 2)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    assert!(s.ledger.pending().is_empty());
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    // LRR 37.3: "If at any time": the excess is removed before anything else.
    assert_eq!(s.ledger.pending().len(), 1);
    assert_eq!(
        legal(&s, 0),
        [Action::RemoveShip {
            system: C,
            class: DESTROYER
        }]
    );
    refused(&mut s, 0, Action::EndMovement);
    ok(
        &mut s,
        0,
        Action::RemoveShip {
            system: C,
            class: DESTROYER,
        },
    );
    assert_eq!(ships(&s, 0, C, DESTROYER), 3);
    assert_eq!(s.flow.step, Step::Move);
}

// ----- T15 -----

/// p0 moves two destroyers from b into c, where p1 has a cruiser and nothing to retreat to: a space
/// combat with no retreat possible on either side.
fn combat() -> State {
    let mut s = battlefield(&[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    s
}

#[test]
fn t15_ships_meeting_another_players_ships_fight_a_space_combat() {
    let mut s = combat();
    // Production waits for the combat.
    assert!(!legal(&s, 0).contains(&Action::Done));
    let e = refused(&mut s, 0, Action::Done);
    assert_eq!(
        e.to_string(),
        "illegal action: p1 has ships in system c: movement ends (`end_movement`) and a space combat is resolved before production"
    );
    ok(&mut s, 0, Action::EndMovement);
    // Nobody has a system to retreat to: straight to the rolls, the attacker first (LRR 78.5f).
    assert_eq!((s.flow.step, actor(&s)), (Step::Roll, 0));
    assert_eq!(legal(&s, 0).len(), 3, "0, 1 or 2 hits from two dice");
    ok(&mut s, 0, Action::Roll { hits: 1 });
    assert_eq!((s.flow.step, actor(&s)), (Step::Roll, 1));
    ok(&mut s, 1, Action::Roll { hits: 1 });
    // Each destroys their own ship per hit against them, the attacker first.
    assert_eq!((s.flow.step, actor(&s)), (Step::Assign, 0));
    assert_eq!(legal(&s, 0), [Action::Destroy { class: DESTROYER }]);
    ok(&mut s, 0, Action::Destroy { class: DESTROYER });
    assert_eq!((s.flow.step, actor(&s)), (Step::Assign, 1));
    ok(&mut s, 1, Action::Destroy { class: CRUISER });
    assert_eq!(s.ship_reserve(Owner(1), usize::from(CRUISER)), 8);
    // One side has no ship left: the combat is over, and the active player goes on to production.
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    ok(&mut s, 0, Action::Produce { class: CRUISER });
    ok(&mut s, 0, Action::Done);
    s.check_invariants().unwrap();
}

#[test]
fn t15_combat_rounds_repeat_until_one_side_has_no_ships() {
    let mut s = combat();
    ok(&mut s, 0, Action::EndMovement);
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 0 });
    // LRR 78.8: both still have ships: another round.
    assert_eq!((s.flow.step, actor(&s)), (Step::Roll, 0));
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 1 });
    ok(&mut s, 0, Action::Destroy { class: DESTROYER });
    assert_eq!(s.flow.step, Step::Roll);
    let e = refused(&mut s, 0, Action::Roll { hits: 2 });
    assert_eq!(
        e.to_string(),
        "illegal action: p0 rolls 1 die for their ships in the combat: at most 1 hit"
    );
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 1 });
    ok(&mut s, 0, Action::Destroy { class: DESTROYER });
    // The attacker lost: p1's cruiser stays, and no ship of p0's is produced beside it (LRR 67.6).
    assert_eq!(s.flow.step, Step::Produce);
    assert_eq!(legal(&s, 0), [Action::Done]);
    let e = refused(&mut s, 0, Action::Produce { class: CRUISER });
    assert_eq!(
        e.to_string(),
        "illegal action: p1 has ships in system c: no ships are produced in a system holding another player's ships"
    );
    ok(&mut s, 0, Action::Done);
}

#[test]
fn t15_a_combat_where_no_ship_survives_is_a_draw() {
    let mut s = battlefield(&[(B, 0, DESTROYER, 1), (C, 1, CRUISER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    ok(&mut s, 0, Action::EndMovement);
    ok(&mut s, 0, Action::Roll { hits: 1 });
    // Hits beyond the ships there are lost.
    ok(&mut s, 1, Action::Roll { hits: 1 });
    ok(&mut s, 0, Action::Destroy { class: DESTROYER });
    ok(&mut s, 1, Action::Destroy { class: CRUISER });
    assert_eq!(s.flow.step, Step::Produce);
    assert_eq!(s.ship_owners(usize::from(C)), 0);
}

#[test]
fn t15_the_defender_announces_first_and_then_the_attacker_may_not() {
    // Both have a system to retreat to: p1 to d (its ships), p0 to b (its ships).
    let mut s = battlefield(&[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1), (D, 1, CRUISER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    ok(&mut s, 0, Action::EndMovement);
    assert_eq!((s.flow.step, actor(&s)), (Step::Announce, 1));
    ok(&mut s, 1, Action::NoRetreat);
    // The attacker may announce after a defender who did not.
    assert_eq!((s.flow.step, actor(&s)), (Step::Announce, 0));
    ok(&mut s, 0, Action::NoRetreat);
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 0 });
    // Next round: the defender announces; the attacker may not (LRR 78.4b).
    assert_eq!((s.flow.step, actor(&s)), (Step::Announce, 1));
    ok(&mut s, 1, Action::AnnounceRetreat);
    assert_eq!((s.flow.step, actor(&s)), (Step::Roll, 0));
}

/// p0 activates c and moves a destroyer in from b, where p1's ships are; p1 announces a retreat.
fn p1_announces_a_retreat(s: &mut State) {
    ok(s, 0, Action::Tactical { system: C });
    ok(s, 0, mv(B, DESTROYER, 0));
    ok(s, 0, Action::EndMovement);
    ok(s, 1, Action::AnnounceRetreat);
}

/// [`p1_announces_a_retreat`], then both combat rolls miss: p1 is to retreat.
fn p1_announces_a_retreat_and_nobody_hits(s: &mut State) {
    p1_announces_a_retreat(s);
    ok(s, 0, Action::Roll { hits: 0 });
    ok(s, 1, Action::Roll { hits: 0 });
}

/// p0's `destroyers` in b; p1's ship of `class` with 3 fighters in c, and a cruiser in d.
fn carrier_field(destroyers: u32, class: u8) -> State {
    battlefield(&[
        (B, 0, DESTROYER, destroyers),
        (C, 1, class, 1),
        (C, 1, FIGHTER, 3),
        (D, 1, CRUISER, 1),
    ])
}

// ----- T16 -----

#[test]
fn t16_a_retreat_places_a_command_token_in_the_system_retreated_to() {
    let mut s = carrier_field(2, CARRIER);
    p1_announces_a_retreat(&mut s);
    ok(&mut s, 0, Action::Roll { hits: 1 });
    ok(&mut s, 1, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Destroy { class: FIGHTER });
    // LRR 78.7c: only d holds p1's units and no other player's ships (b holds p0's, e nothing).
    assert_eq!((s.flow.step, actor(&s)), (Step::Retreat, 1));
    assert_eq!(legal(&s, 1), [retreat(D, None)]);
    let e = refused(&mut s, 1, retreat(E, None));
    assert_eq!(
        e.to_string(),
        "illegal action: system e holds none of p1's ships: a retreat goes to a system holding the player's units"
    );
    let before = sheet(&s, 1);
    ok(&mut s, 1, retreat(D, None));
    // The carrier takes both fighters left (capacity 4); a token comes from reinforcements.
    assert_eq!(ships(&s, 1, D, CARRIER), 1);
    assert_eq!(ships(&s, 1, D, FIGHTER), 2);
    assert!(s.has_token(Owner(1), usize::from(D)));
    let after = sheet(&s, 1);
    assert_eq!(after[3], before[3] - 1, "one token out of reinforcements");
    assert_eq!(after[..3], before[..3]);
    // The combat is over: p0 won and produces.
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    s.check_invariants().unwrap();
}

#[test]
fn t16_no_token_is_added_where_the_player_already_has_one() {
    let mut s = battlefield(&[(B, 0, DESTROYER, 1), (C, 1, CRUISER, 1), (D, 1, CRUISER, 1)]);
    token(&mut s, 1, D);
    let before = sheet(&s, 1);
    p1_announces_a_retreat_and_nobody_hits(&mut s);
    ok(&mut s, 1, retreat(D, None));
    assert_eq!(sheet(&s, 1), before);
    assert_eq!(s.board_tokens(Owner(1)), 1);
}

#[test]
fn t16_with_empty_reinforcements_the_token_comes_from_the_command_sheet() {
    let mut s = battlefield(&[(B, 0, DESTROYER, 1), (C, 1, CRUISER, 1), (D, 1, CRUISER, 1)]);
    shift_reserve(&mut s, 1, Pool::Strategy, 8);
    assert_eq!(sheet(&s, 1), [3, 3, 10, 0]);
    p1_announces_a_retreat_and_nobody_hits(&mut s);
    let l = legal(&s, 1);
    assert_eq!(l.len(), 3, "one retreat per pool: {l:?}");
    let e = refused(&mut s, 1, retreat(D, None));
    assert_eq!(
        e.to_string(),
        "illegal action: p1's reinforcements are empty: name the pool the token comes from"
    );
    ok(&mut s, 1, retreat(D, Some(Pool::Strategy)));
    assert_eq!(sheet(&s, 1), [3, 3, 9, 0]);
    assert!(s.has_token(Owner(1), usize::from(D)));
}

#[test]
fn t16_a_retreat_token_from_the_fleet_pool_lowers_the_limit_at_once() {
    // p1 retreats a cruiser into d, which holds 2 of its destroyers, taking the token from its fleet pool:
    // 3 ships against a limit that drops from 3 to 2.
    let mut s = battlefield(&[
        (B, 0, DESTROYER, 1),
        (C, 1, CRUISER, 1),
        (D, 1, DESTROYER, 2),
    ]);
    shift_reserve(&mut s, 1, Pool::Strategy, 8);
    p1_announces_a_retreat_and_nobody_hits(&mut s);
    ok(&mut s, 1, retreat(D, Some(Pool::Fleet)));
    assert_eq!(s.fleet_limit(Owner(1)), 2);
    assert_eq!(s.fleet_ships(Owner(1), usize::from(D)), 3);
    assert_eq!(actor(&s), 1, "p1 removes the excess first");
    assert_eq!(s.ledger.pending()[0].excess, 1);
}

#[test]
fn t16_no_retreat_occurs_when_the_opponent_has_no_ships_left() {
    let mut s = battlefield(&[(B, 0, DESTROYER, 1), (C, 1, CRUISER, 1), (D, 1, CRUISER, 1)]);
    p1_announces_a_retreat(&mut s);
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 1 });
    ok(&mut s, 0, Action::Destroy { class: DESTROYER });
    // LRR 78.7a: the combat ends at once; p1 stays and places no token.
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    assert_eq!(ships(&s, 1, C, CRUISER), 1);
    assert!(!s.has_token(Owner(1), usize::from(D)));
}

#[test]
fn t16_a_retreat_needs_an_adjacent_system_with_the_players_ships_and_no_others() {
    // No system next to c holds p1's ships, so p1 (the defender) may not announce and is skipped; b holds
    // p0's ships, so p0 may.
    let mut s = battlefield(&[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    ok(&mut s, 0, Action::EndMovement);
    assert_eq!((s.flow.step, actor(&s)), (Step::Announce, 0));
    ok(&mut s, 0, Action::AnnounceRetreat);
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 0 });
    assert_eq!(legal(&s, 0), [retreat(B, None)]);
    // The attacker retreats too: back to b, with a token there; p1 wins.
    ok(&mut s, 0, retreat(B, None));
    assert_eq!(ships(&s, 0, B, DESTROYER), 2);
    assert!(s.has_token(Owner(0), usize::from(B)));
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    assert_eq!(legal(&s, 0), [Action::Done]);
}

#[test]
fn t16_fighters_beyond_the_retreating_ships_capacity_are_removed() {
    let mut s = carrier_field(1, DREADNOUGHT);
    p1_announces_a_retreat_and_nobody_hits(&mut s);
    ok(&mut s, 1, retreat(D, None));
    // A dreadnought carries 1 fighter: 2 are removed to reinforcements.
    assert_eq!(ships(&s, 1, D, FIGHTER), 1);
    assert_eq!(ships(&s, 1, C, FIGHTER), 0);
    assert_eq!(s.ship_reserve(Owner(1), usize::from(FIGHTER)), 9);
}

#[test]
fn t15_random_playouts_fight_and_retreat() {
    let (mut combats, mut retreats) = (0, 0);
    for seed in 0..40 {
        let mut s = default_game(4);
        random_playout(&mut s, seed, |s, a| {
            s.check_invariants().unwrap();
            match a {
                Action::EndMovement if s.flow.step != Step::Produce => combats += 1,
                Action::Retreat { .. } => retreats += 1,
                _ => {}
            }
        });
    }
    assert!(
        combats > 0 && retreats > 0,
        "{combats} combats, {retreats} retreats"
    );
}

#[test]
fn t15_two_players_ships_in_one_system_outside_a_combat_are_a_checked_invariant() {
    let mut s = battlefield(&[(B, 0, DESTROYER, 1), (A, 1, FIGHTER, 1)]);
    s.check_invariants().unwrap();
    let n = s.rules.class_count();
    let (from, to) = (
        s.h.ships[usize::from(A) * n + usize::from(FIGHTER)],
        s.h.ships[usize::from(B) * n + usize::from(FIGHTER)],
    );
    s.ledger
        .move_tokens(Owner(1), from, to, 1, Cause::Setup)
        .unwrap();
    assert_eq!(
        s.check_invariants().unwrap_err().to_string(),
        "invariant broken: p0 and p1 have ships in system b outside a space combat"
    );
}

// ----- T17 -----

const MAHACT: [&str; 3] = ["mahact", "hacan", "jolnar"];

/// p0 (the Mahact Gene-Sorcerers) moves two destroyers from b into c, where p1 has a cruiser, and wins:
/// p0 hits once, p1 misses.
fn mahact_wins(s: &mut State) {
    ok(s, 0, Action::Tactical { system: C });
    ok(s, 0, mv(B, DESTROYER, 0));
    ok(s, 0, mv(B, DESTROYER, 0));
    ok(s, 0, Action::EndMovement);
    ok(s, 0, Action::Roll { hits: 1 });
    ok(s, 1, Action::Roll { hits: 0 });
    ok(s, 1, Action::Destroy { class: CRUISER });
}

#[test]
fn t17_the_winner_with_edict_places_a_token_of_the_losers_in_its_fleet_pool() {
    let mut s = battlefield_with(MAHACT, &[], &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    let (mine, theirs) = (sheet(&s, 0), sheet(&s, 1));
    mahact_wins(&mut s);
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    assert!(s.holds_token_of(Owner(0), Owner(1)));
    assert_eq!(s.captured(Owner(0)), 1);
    // It raises the fleet limit, is not on either command sheet, and left p1's reinforcements.
    assert_eq!(s.fleet_limit(Owner(0)), 4);
    assert_eq!(sheet(&s, 0), [mine[0] - 1, mine[1], mine[2], mine[3]]);
    assert_eq!(
        sheet(&s, 1),
        [theirs[0], theirs[1], theirs[2], theirs[3] - 1]
    );
    s.check_invariants().unwrap();
}

#[test]
fn t17_no_second_token_of_the_same_player_is_placed() {
    let mut s = battlefield_with(MAHACT, &[], &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    let zone = s.h.captured[0].unwrap();
    s.ledger
        .move_tokens(Owner(1), s.h.reinforcements, zone, 1, Cause::Setup)
        .unwrap();
    s.ledger.take_events();
    let theirs = sheet(&s, 1);
    mahact_wins(&mut s);
    assert_eq!(s.captured(Owner(0)), 1);
    assert_eq!(sheet(&s, 1), theirs);
}

#[test]
fn t17_only_the_winner_with_edict_places_a_token() {
    // p1 (Hacan) wins against the Mahact player: nothing is placed anywhere.
    let mut s = battlefield_with(MAHACT, &[], &[(B, 0, DESTROYER, 1), (C, 1, CRUISER, 1)]);
    let (mine, theirs) = (sheet(&s, 0), sheet(&s, 1));
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(&mut s, 0, mv(B, DESTROYER, 0));
    ok(&mut s, 0, Action::EndMovement);
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 1 });
    ok(&mut s, 0, Action::Destroy { class: DESTROYER });
    assert_eq!(s.captured(Owner(0)), 0);
    assert_eq!(sheet(&s, 0), [mine[0] - 1, mine[1], mine[2], mine[3]]);
    assert_eq!(sheet(&s, 1), theirs);
}

#[test]
fn t17_an_opponent_who_retreats_loses_and_gives_a_token() {
    // p1 attacks the Mahact player in c, then retreats to b: the Mahact player wins as the defender.
    let mut s = battlefield_with(MAHACT, &[], &[(C, 0, CRUISER, 1), (B, 1, DESTROYER, 1)]);
    ok(&mut s, 0, Action::Tactical { system: A });
    ok(&mut s, 0, Action::Done);
    ok(&mut s, 1, Action::Tactical { system: C });
    ok(&mut s, 1, mv(B, DESTROYER, 0));
    ok(&mut s, 1, Action::EndMovement);
    // p0 has no system to retreat to; p1 has b, but left it: nothing of p1's is there now.
    assert_eq!(s.flow.step, Step::Roll);
    ok(&mut s, 1, Action::Roll { hits: 0 });
    ok(&mut s, 0, Action::Roll { hits: 1 });
    ok(&mut s, 1, Action::Destroy { class: DESTROYER });
    assert!(s.holds_token_of(Owner(0), Owner(1)));
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 1));
}

#[test]
fn t17_with_empty_reinforcements_the_loser_chooses_the_pool_of_the_token() {
    let mut s = battlefield_with(MAHACT, &[], &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    shift_reserve(&mut s, 1, Pool::Strategy, 8);
    mahact_wins(&mut s);
    // LRR 20.3b: "that player must take a token from a pool on their command sheet".
    assert_eq!((s.flow.step, actor(&s)), (Step::Capture, 1));
    assert_eq!(legal(&s, 1).len(), 3);
    ok(
        &mut s,
        1,
        Action::Fallback {
            pool: Pool::Strategy,
        },
    );
    assert_eq!(sheet(&s, 1), [3, 3, 9, 0]);
    assert!(s.holds_token_of(Owner(0), Owner(1)));
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
}

#[test]
fn t17_captured_tokens_are_not_redistributed_and_stay_through_the_status_phase() {
    let mut s = battlefield_with(MAHACT, &[], &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    mahact_wins(&mut s);
    ok(&mut s, 0, Action::Done);
    finish_action_phase(&mut s);
    // Status phase: p0 gains, then redistributes its own sheet only.
    while s.flow.step == Step::Gain {
        let p = actor(&s);
        ok(&mut s, p, Action::Gain { pool: Pool::Tactic });
    }
    assert_eq!((s.flow.step, actor(&s)), (Step::Redistribute, 0));
    // The sheet's own tokens are redistributed, all of them into the tactic pool even: the captured token
    // is not among them, and stays in the fleet pool.
    let total = s.sheet(Owner(0)) as u8;
    let e = refused(
        &mut s,
        0,
        Action::Redistribute {
            tactic: total,
            fleet: 1,
            strategy: 0,
        },
    );
    assert_says(&e, "make");
    ok(
        &mut s,
        0,
        Action::Redistribute {
            tactic: total,
            fleet: 0,
            strategy: 0,
        },
    );
    assert_eq!(s.pool(Owner(0), Pool::Fleet), 0);
    assert_eq!(
        s.captured(Owner(0)),
        1,
        "board tokens return; this one is not on the board"
    );
    // A fleet limit of 1: the captured token still counts (T7).
    assert_eq!(s.fleet_limit(Owner(0)), 1);
    s.check_invariants().unwrap();
}

#[test]
fn t17_under_fleet_regulations_a_captured_token_counts_toward_the_maximum() {
    let mut s = battlefield_with(
        MAHACT,
        &["fleet-regulations"],
        &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)],
    );
    mahact_wins(&mut s);
    assert_eq!(
        s.fleet_tokens(Owner(0)),
        4,
        "3 of its own and 1 captured: the maximum"
    );
    ok(&mut s, 0, Action::Done);
    finish_action_phase(&mut s);
    // The status phase: p0 may not gain into its fleet pool, nor redistribute 4 of its own there.
    assert_eq!((s.flow.step, actor(&s)), (Step::Gain, 0));
    assert!(!legal(&s, 0).contains(&Action::Gain { pool: Pool::Fleet }));
    let e = refused(&mut s, 0, Action::Gain { pool: Pool::Fleet });
    assert_says(
        &e,
        "p0's fleet pool holds 4 (1 token of other players'), the law's maximum",
    );
    while s.flow.step == Step::Gain {
        let p = actor(&s);
        ok(&mut s, p, Action::Gain { pool: Pool::Tactic });
    }
    let total = s.sheet(Owner(0)) as u8;
    let e = refused(
        &mut s,
        0,
        Action::Redistribute {
            tactic: total - 4,
            fleet: 4,
            strategy: 0,
        },
    );
    assert_says(
        &e,
        "a fleet pool of 4 with 1 token of other players' there is over the law's maximum of 4",
    );
    ok(
        &mut s,
        0,
        Action::Redistribute {
            tactic: total - 3,
            fleet: 3,
            strategy: 0,
        },
    );
}

#[test]
fn t17_over_fleet_regulations_the_winner_returns_a_token_of_its_choice() {
    let mut s = battlefield_with(
        MAHACT,
        &["fleet-regulations"],
        &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)],
    );
    shift_reserve(&mut s, 0, Pool::Fleet, 1);
    assert_eq!(s.pool(Owner(0), Pool::Fleet), 4);
    mahact_wins(&mut s);
    assert_eq!((s.flow.step, actor(&s)), (Step::Release, 0));
    assert_eq!(
        legal(&s, 0),
        [Action::Release { player: 0 }, Action::Release { player: 1 }]
    );
    s.check_invariants().unwrap();
    let theirs = sheet(&s, 1)[3];
    ok(&mut s, 0, Action::Release { player: 1 });
    assert_eq!(s.captured(Owner(0)), 0);
    assert_eq!(sheet(&s, 1)[3], theirs + 1);
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    s.check_invariants().unwrap();
}

/// T17 on the battlefield with elimination on (T18): Mahact (p0) has won against p1 and holds a token of
/// p1's; p0's tactical action is at production.
fn mahact_won_with_elimination() -> State {
    let mut config = battlefield_config(MAHACT, &[], &[(B, 0, DESTROYER, 2), (C, 1, CRUISER, 1)]);
    config.elimination = true;
    let mut s = start(config);
    mahact_wins(&mut s);
    assert!(s.holds_token_of(Owner(0), Owner(1)));
    assert_eq!(s.flow.step, Step::Produce);
    s
}

#[test]
fn t18_an_eliminated_players_token_in_mahacts_fleet_pool_stays_in_play() {
    let mut s = mahact_won_with_elimination();
    let limit = s.fleet_limit(Owner(0));
    ok(&mut s, 0, Action::Eliminate { player: 1 });
    // LRR 33.10f: the token stays on Mahact's faction sheet, raising its fleet limit; the rest of p1's 16
    // are in the game box.
    assert!(s.holds_token_of(Owner(0), Owner(1)));
    assert_eq!(s.fleet_limit(Owner(0)), limit);
    assert_eq!(s.ledger.tokens(s.h.boxed[0], Owner(1)), 15);
    s.check_invariants().unwrap();
}

#[test]
fn t18_an_eliminated_mahacts_captured_tokens_return_to_their_owners() {
    let mut s = mahact_won_with_elimination();
    let theirs = sheet(&s, 1);
    // Mahact is eliminated during its own tactical action.
    ok(&mut s, 0, Action::Eliminate { player: 0 });
    // LRR 33.10e: p1's token returns to p1's reinforcements.
    assert_eq!(s.captured(Owner(0)), 0);
    assert_eq!(
        sheet(&s, 1),
        [theirs[0], theirs[1], theirs[2], theirs[3] + 1]
    );
    assert_eq!(s.ledger.tokens(s.h.boxed[0], Owner(0)), 16);
    assert_ne!(actor(&s), 0);
    s.check_invariants().unwrap();
}

#[test]
fn t17_random_playouts_with_edict_and_fleet_regulations_keep_every_invariant() {
    let (mut captures, mut releases) = (0, 0);
    for seed in 0..60 {
        let config = Config {
            factions: strings(&["mahact", "letnev", "sol", "hacan"]),
            laws: vec!["fleet-regulations".into()],
            rounds: 4,
            ..Default::default()
        };
        let mut s = game(4, config);
        random_playout(&mut s, seed, |s, a| {
            s.check_invariants().unwrap();
            if matches!(a, Action::Release { .. }) {
                releases += 1;
            }
            if s.captured(Owner(0)) > 0 {
                captures += 1;
            }
        });
    }
    assert!(
        captures > 0 && releases > 0,
        "{captures} states with a captured token, {releases} releases"
    );
}

#[test]
fn t15_a_damaged_combat_in_a_snapshot_is_refused() {
    use coffer_command_tokens::CommandTokens;
    use coffer_core::{Adapter, Format};
    let mut s = combat();
    ok(&mut s, 0, Action::EndMovement);
    ok(&mut s, 0, Action::Roll { hits: 1 });
    ok(&mut s, 1, Action::Roll { hits: 1 });
    assert_eq!(s.flow.step, Step::Assign);
    let adapter = Adapter::shared(CommandTokens::new());
    let json = serde_json::to_value(&s).unwrap();
    assert!(
        adapter
            .restore(Format::Json, json.to_string().as_bytes())
            .is_ok()
    );
    for (path, value, why) in [
        ("/flow/hits", serde_json::json!([0, 0]), "hits to assign"),
        (
            "/flow/defender",
            serde_json::json!(0),
            "space combat players",
        ),
        (
            "/flow/resolver",
            serde_json::json!(2),
            "space combat players",
        ),
    ] {
        let mut damaged = json.clone();
        *damaged.pointer_mut(path).unwrap() = value;
        let e = adapter
            .restore(Format::Json, damaged.to_string().as_bytes())
            .err()
            .unwrap();
        assert!(e.to_string().contains(why), "{path}: {e}");
    }
}

#[test]
fn t18_a_token_kept_by_mahact_goes_to_the_game_box_when_mahact_is_eliminated_after_its_owner() {
    let mut s = mahact_won_with_elimination();
    ok(&mut s, 0, Action::Eliminate { player: 1 });
    ok(&mut s, 0, Action::Eliminate { player: 0 });
    // p1's token kept in play by LRR 33.10f has no reinforcements to return to (33.10e): it joins the
    // rest of p1's components.
    assert_eq!(s.ledger.tokens(s.h.boxed[0], Owner(1)), 16);
    assert_eq!(sheet(&s, 1), [0; 4]);
    s.check_invariants().unwrap();
}

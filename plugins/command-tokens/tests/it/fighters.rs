//! T25: Fighter II and Hybrid Crystal Fighter II: fighters beyond their ships' capacity count against the
//! fleet pool, and fighters move on their own.

use crate::support::*;
use coffer_command_tokens::{Action, CommandTokens, Config, State};
use coffer_core::Ruleset;

/// Sol (p0) with these technologies, Hacan and Naalu, the line galaxy and `ships`, at p0's first turn.
fn with_fighters(
    factions: [&str; 3],
    technologies: &[&str],
    ships: &[(u16, u16, u8, u32)],
) -> State {
    let mut config = battlefield_config(factions, &[], ships);
    config.technologies = vec![
        technologies.iter().map(|t| t.to_string()).collect(),
        vec![],
        vec![],
    ];
    start(config)
}

#[test]
fn t25_without_fighter_ii_fighters_beyond_capacity_do_not_count() {
    let s = with_fighters(
        ["sol", "hacan", "naalu"],
        &[],
        &[(A, 0, CARRIER, 1), (A, 0, FIGHTER, 8)],
    );
    assert_eq!(s.fleet_ships(owner(0), usize::from(A)), 1);
    assert!(s.ledger.pending().is_empty());
}

#[test]
fn t25_with_fighter_ii_each_fighter_beyond_capacity_counts_as_a_ship() {
    // A carrier (capacity 4) and 6 fighters: 2 beyond capacity; with the carrier, 3 against 3 fleet tokens.
    let mut s = with_fighters(
        ["sol", "hacan", "naalu"],
        &["fighter-ii"],
        &[(A, 0, CARRIER, 1), (A, 0, FIGHTER, 6)],
    );
    assert_eq!(s.fleet_ships(owner(0), usize::from(A)), 3);
    assert!(s.ledger.pending().is_empty());
    // A fourth: the excess is a choice before anything else, a fighter or the carrier.
    ok(&mut s, 0, Action::Tactical { system: A });
    ok(&mut s, 0, Action::Produce { class: FIGHTER });
    assert_eq!(s.fleet_ships(owner(0), usize::from(A)), 4);
    assert_eq!(
        legal(&s, 0),
        [
            Action::RemoveShip {
                system: A,
                class: CARRIER
            },
            Action::RemoveShip {
                system: A,
                class: FIGHTER
            }
        ]
    );
    ok(
        &mut s,
        0,
        Action::RemoveShip {
            system: A,
            class: FIGHTER,
        },
    );
    assert!(s.ledger.pending().is_empty());
}

#[test]
fn t25_hybrid_crystal_fighters_beyond_capacity_count_as_half_a_ship_each() {
    let mut config = battlefield_config(
        ["naalu", "hacan", "sol"],
        &[],
        &[(A, 0, CARRIER, 1), (A, 0, FIGHTER, 7)],
    );
    config.technologies = vec![vec!["hybrid-crystal-fighter-ii".into()], vec![], vec![]];
    let s = start(config);
    // 3 beyond capacity count as 1.5, that is 2 ships against the fleet pool, with the carrier 3.
    assert_eq!(s.fleet_ships(owner(0), usize::from(A)), 3);
    assert!(s.ledger.pending().is_empty());
    let e = CommandTokens::new()
        .new_game(
            3,
            1,
            &Config {
                factions: strings(&["sol", "hacan", "naalu"]),
                technologies: vec![vec!["hybrid-crystal-fighter-ii".into()], vec![], vec![]],
                ..Config::default()
            },
        )
        .unwrap_err();
    assert_says(&e, "faction technology of 'naalu'");
}

#[test]
fn t25_fighter_ii_fighters_move_without_being_transported() {
    let mut s = with_fighters(
        ["sol", "hacan", "naalu"],
        &["fighter-ii"],
        &[(A, 0, FIGHTER, 2), (A, 0, CRUISER, 1)],
    );
    ok(&mut s, 0, Action::Tactical { system: C });
    let fighter = Action::Move {
        from: A,
        class: FIGHTER,
        fighters: 0,
    };
    assert!(legal(&s, 0).contains(&fighter), "move 2: a to c");
    ok(&mut s, 0, fighter);
    assert_eq!(s.ships(owner(0), usize::from(C), usize::from(FIGHTER)), 1);
    // Without the technology, a fighter has no move value.
    let mut t = with_fighters(["sol", "hacan", "naalu"], &[], &[(A, 0, FIGHTER, 2)]);
    ok(&mut t, 0, Action::Tactical { system: C });
    assert!(!legal(&t, 0).contains(&fighter));
}

#[test]
fn t25_random_playouts_with_fighter_ii_keep_every_invariant() {
    let config = playout_config(
        &["sol", "naalu", "hacan", "letnev"],
        &[
            &["fighter-ii"],
            &["hybrid-crystal-fighter-ii"],
            &[],
            &["fighter-ii"],
        ],
        4,
    );
    let mut fighters_removed = 0;
    playouts_keep_invariants(4, &config, 30, |_, a| {
        fighters_removed += usize::from(matches!(a, Action::RemoveShip { class: 0, .. }));
    });
    assert!(fighters_removed > 0, "random play removes excess fighters");
}

#[test]
fn t25_fighters_left_beyond_capacity_by_a_combat_that_ends_in_a_skilled_retreat_are_counted() {
    let mut config = battlefield_config(
        ["sol", "hacan", "naalu"],
        &[],
        &[
            (B, 0, CARRIER, 1),
            (B, 0, FIGHTER, 4),
            (B, 0, CRUISER, 1),
            (C, 1, 1, 2),
        ],
    );
    config.technologies = vec![vec!["fighter-ii".into()], vec![], vec![]];
    config.action_cards = vec![vec![], vec!["skilled-retreat".into()], vec![]];
    let mut s = start(config);
    advance(&mut s, 0, C, &[(B, CARRIER, 4), (B, CRUISER, 0)]);
    // Round 1: p1 keeps the card; p1's hit destroys p0's carrier.
    while s.flow.step != coffer_command_tokens::Step::Roll {
        let q = actor(&s);
        let a = if legal(&s, q).contains(&Action::NoCard) {
            Action::NoCard
        } else {
            Action::NoRetreat
        };
        ok(&mut s, q, a);
    }
    ok(&mut s, 0, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Roll { hits: 1 });
    ok(&mut s, 0, Action::Destroy { class: CARRIER });
    // Round 2: p1 retreats with the card; the combat ends in a draw.
    assert_eq!(
        (s.flow.step, actor(&s)),
        (coffer_command_tokens::Step::CombatWindow, 1)
    );
    ok(
        &mut s,
        1,
        Action::PlayCard {
            card: 0,
            player: None,
            system: Some(D),
            fallback: None,
            vote: None,
            elect: None,
        },
    );
    // Four fighters beyond no capacity and a cruiser: 5 against 3 fleet tokens.
    assert_eq!(s.fleet_ships(owner(0), usize::from(C)), 5);
    assert_eq!(actor(&s), 0);
    assert!(matches!(legal(&s, 0)[0], Action::RemoveShip { .. }));
    s.check_invariants().expect("the excess is pending");
}

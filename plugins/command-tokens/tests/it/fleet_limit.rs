//! T7: the fleet pool limits the non-fighter ships in each system, and an excess waits for its owner's
//! choice.

use crate::pools::diplomacy_with_empty_reinforcements_for_p1;
use crate::support::*;
use coffer_command_tokens::{Action, Phase, Pool, Step};
use coffer_core::{ActionError, Cause, Owner, Refusal};

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

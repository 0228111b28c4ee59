//! K4 finite token supplies.

use crate::{assert_refused, key};
use coffer_core::{Cause, Change, Ledger, Owner, Placement, Refusal, TokenOp, Zone, ZoneId};

/// Two owners; each has reinforcements with `stock` tokens; a shared pool and a one-per-owner system.
struct Board {
    l: Ledger,
    reserve: [ZoneId; 2],
    pool: [ZoneId; 2],
    system: ZoneId,
}

fn board(stock: u32) -> Board {
    let mut l = Ledger::new(2, 0);
    let reserve = [
        l.add_zone(Zone::new(key(0, 1, 0))).unwrap(),
        l.add_zone(Zone::new(key(1, 1, 0))).unwrap(),
    ];
    let pool = [
        l.add_zone(Zone::new(key(0, 2, 0)).face(1)).unwrap(),
        l.add_zone(Zone::new(key(1, 2, 0)).face(1)).unwrap(),
    ];
    let system = l
        .add_zone(Zone::new(key(u16::MAX, 3, 7)).one_per_owner())
        .unwrap();
    for o in 0..2 {
        l.stock(Owner(o), reserve[usize::from(o)], stock, Cause::Setup)
            .unwrap();
    }
    l.take_events();
    Board {
        l,
        reserve,
        pool,
        system,
    }
}

fn total(l: &Ledger, owner: Owner) -> u32 {
    (0..l.zones().len())
        .map(|z| l.tokens(zone_id(z), owner))
        .sum()
}

/// The zone handle with index `z` (handles are serialized as their index).
fn zone_id(z: usize) -> ZoneId {
    serde_json::from_str(&z.to_string()).unwrap()
}

#[test]
fn k4_1_move_more_than_the_source_holds_is_refused() {
    let mut b = board(3);
    let p0 = Owner(0);
    b.l.move_tokens(p0, b.reserve[0], b.pool[0], 2, Cause::Setup)
        .unwrap();
    let r = assert_refused(&mut b.l, |l| {
        l.move_tokens(p0, b.pool[0], b.pool[1], 3, Cause::Setup)
    });
    assert_eq!(
        r,
        Refusal::NotEnoughTokens {
            owner: p0,
            zone: key(0, 2, 0),
            need: 3,
            have: 2
        }
    );
    // Another owner's tokens are not ours to move.
    assert_refused(&mut b.l, |l| {
        l.move_tokens(Owner(1), b.pool[0], b.pool[1], 1, Cause::Setup)
    });
    assert_refused(&mut b.l, |l| {
        l.move_tokens(p0, b.reserve[0], b.pool[0], u32::MAX, Cause::Setup)
    });
    b.l.move_tokens(p0, b.pool[0], b.pool[1], 2, Cause::Setup)
        .unwrap();
    assert_eq!(
        (b.l.tokens(b.pool[0], p0), b.l.tokens(b.pool[1], p0)),
        (0, 2),
        "a pool of any owner"
    );
}

#[test]
fn k4_owner_totals_never_change() {
    let mut b = board(5);
    let p0 = Owner(0);
    b.l.move_tokens(p0, b.reserve[0], b.pool[0], 3, Cause::Setup)
        .unwrap();
    b.l.move_tokens(p0, b.pool[0], b.system, 2, Cause::Setup)
        .unwrap();
    b.l.gain_tokens(p0, b.pool[1], 9, Cause::Setup).unwrap();
    b.l.place_from_reserve(p0, b.system, Some(b.pool[1]), Cause::Setup)
        .unwrap();
    assert_eq!(total(&b.l, p0), 5);
    assert_eq!(b.l.supply(p0), 5);
    b.l.check_invariants().unwrap();
}

#[test]
fn k4_2_gain_comes_from_reinforcements_only_and_a_lack_is_reported() {
    let mut b = board(2);
    let p0 = Owner(0);
    let g = b.l.gain_tokens(p0, b.pool[0], 3, Cause::Setup).unwrap();
    assert_eq!((g.gained, g.lost), (2, 1));
    assert_eq!(b.l.tokens(b.pool[0], p0), 2);
    assert!(matches!(
        b.l.events()[0].change,
        Change::Tokens {
            op: TokenOp::Gain,
            n: 2,
            ..
        }
    ));
    let before = crate::hash(&b.l);
    let g = b.l.gain_tokens(p0, b.pool[0], 1, Cause::Setup).unwrap();
    assert_eq!(
        (g.gained, g.lost),
        (0, 1),
        "nothing gained, reported, not an error"
    );
    assert_eq!(crate::hash(&b.l), before);
}

#[test]
fn k4_3_one_per_owner_zone_sends_a_second_token_to_reinforcements() {
    let mut b = board(4);
    let p0 = Owner(0);
    b.l.move_tokens(p0, b.reserve[0], b.pool[0], 3, Cause::Setup)
        .unwrap();
    let bounced =
        b.l.move_tokens(p0, b.pool[0], b.system, 2, Cause::Setup)
            .unwrap();
    assert_eq!(bounced, 1);
    assert_eq!(
        (
            b.l.tokens(b.system, p0),
            b.l.tokens(b.pool[0], p0),
            b.l.tokens(b.reserve[0], p0)
        ),
        (1, 1, 2)
    );
    assert!(b.l.events().iter().any(|e| matches!(
        e.change,
        Change::Tokens {
            op: TokenOp::Bounce,
            n: 1,
            ..
        }
    )));
    assert_eq!(
        b.l.move_tokens(p0, b.pool[0], b.system, 1, Cause::Setup)
            .unwrap(),
        1
    );
    assert_eq!(
        (b.l.tokens(b.system, p0), b.l.tokens(b.reserve[0], p0)),
        (1, 3)
    );
    assert_eq!(
        b.l.place_from_reserve(p0, b.system, None, Cause::Setup)
            .unwrap(),
        Placement::Bounced
    );
    assert_eq!(b.l.tokens(b.system, p0), 1);
    let g = b.l.gain_tokens(p0, b.system, 2, Cause::Setup).unwrap();
    assert_eq!((g.gained, g.lost), (0, 2));
    // Another owner may still place one there.
    assert_eq!(
        b.l.place_from_reserve(Owner(1), b.system, None, Cause::Setup)
            .unwrap(),
        Placement::FromReserve
    );
    assert_eq!(b.l.tokens(b.system, Owner(1)), 1);
    b.l.check_invariants().unwrap();
}

#[test]
fn k4_3_gain_into_a_one_per_owner_zone_takes_one() {
    let mut b = board(4);
    let g =
        b.l.gain_tokens(Owner(0), b.system, 3, Cause::Setup)
            .unwrap();
    assert_eq!((g.gained, g.lost), (1, 2));
    assert_eq!(b.l.tokens(b.system, Owner(0)), 1);
}

#[test]
fn k4_4_fallback_source_when_reinforcements_are_empty() {
    let mut b = board(1);
    let p0 = Owner(0);
    b.l.move_tokens(p0, b.reserve[0], b.pool[0], 1, Cause::Setup)
        .unwrap();
    let r = assert_refused(&mut b.l, |l| {
        l.place_from_reserve(p0, b.system, None, Cause::Setup)
    });
    assert!(
        matches!(
            r,
            Refusal::NotEnoughTokens {
                need: 1,
                have: 0,
                ..
            }
        ),
        "{r}"
    );
    assert_refused(&mut b.l, |l| {
        l.place_from_reserve(p0, b.system, Some(b.pool[1]), Cause::Setup)
    });
    let placed =
        b.l.place_from_reserve(p0, b.system, Some(b.pool[0]), Cause::Setup)
            .unwrap();
    assert_eq!(placed, Placement::FromFallback);
    assert_eq!(
        (b.l.tokens(b.system, p0), b.l.tokens(b.pool[0], p0)),
        (1, 0)
    );
    assert!(matches!(
        b.l.events().last().unwrap().change,
        Change::Tokens {
            op: TokenOp::Fallback,
            ..
        }
    ));
}

#[test]
fn k4_5_a_zone_gives_its_tokens_a_face() {
    let b = board(1);
    assert_eq!(b.l.zone(b.pool[0]).unwrap().face, 1);
    assert_eq!(b.l.zone(b.reserve[0]).unwrap().face, 0);
    assert!(b.l.zone(b.system).unwrap().one_per_owner);
}

#[test]
fn k4_supplies_are_stocked_for_owners_only_and_never_overflow() {
    let mut b = board(2);
    // Tokens that start on the board are stocked there; the reserve stays the one named by `stock`, in
    // whatever order the calls come, and undoing them (rollback or a replay) restores the state.
    let before = crate::hash(&b.l);
    let mark = b.l.begin();
    b.l.stock_on(Owner(0), b.pool[0], 1, Cause::Setup).unwrap();
    assert_eq!(b.l.reserve(Owner(0)), Some(b.reserve[0]));
    assert_eq!(b.l.supply(Owner(0)), 3);
    b.l.rollback(mark);
    assert_eq!(b.l.reserve(Owner(0)), Some(b.reserve[0]));
    assert_eq!(crate::hash(&b.l), before);
    // A second reserve for one supply is refused, naming both zones.
    let r = assert_refused(&mut b.l, |l| l.stock(Owner(0), b.pool[0], 1, Cause::Setup));
    assert!(r.to_string().contains("already keeps its reserve"), "{r}");
    assert_refused(&mut b.l, |l| {
        l.stock(Owner(2), b.reserve[0], 1, Cause::Setup)
    });
    assert_refused(&mut b.l, |l| {
        l.stock(Owner(7), b.reserve[0], 1, Cause::Setup)
    });
    assert_refused(&mut b.l, |l| {
        l.stock(Owner(0), b.reserve[0], u32::MAX, Cause::Setup)
    });
    b.l.stock(Owner(0), b.reserve[0], 3, Cause::Setup).unwrap();
    assert_eq!(b.l.supply(Owner(0)), 5);
    let mut l = Ledger::new(1, 0);
    let z = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
    let r = assert_refused(&mut l, |l| l.stock(Owner(0), z, 0, Cause::Setup));
    assert!(r.to_string().contains("0 tokens"), "{r}");
    // An owner without a supply cannot move or gain tokens.
    assert_refused(&mut l, |l| l.gain_tokens(Owner(0), z, 1, Cause::Setup));
    assert_refused(&mut l, |l| l.move_tokens(Owner(0), z, z, 0, Cause::Setup));
}

#[test]
fn k4_each_supply_has_its_own_reinforcements_and_conserved_total() {
    // Owner 0 has command tokens (supply 0) and ship pieces (supply 1), each with its own reinforcements.
    let mut l = Ledger::new(1, 0);
    let tokens = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
    let pool = l.add_zone(Zone::new(key(0, 2, 0))).unwrap();
    let ship_reserve = l.add_zone(Zone::new(key(0, 4, 0)).supply(1)).unwrap();
    let system_ships = l
        .add_zone(Zone::new(key(u16::MAX, 5, 0)).supply(1))
        .unwrap();
    l.stock_on(Owner(0), system_ships, 2, Cause::Setup).unwrap();
    l.stock(Owner(0), ship_reserve, 6, Cause::Setup).unwrap();
    l.stock(Owner(0), tokens, 16, Cause::Setup).unwrap();
    assert_eq!(l.supplies(), 2);
    assert_eq!(
        (l.supply_of(0, Owner(0)), l.supply_of(1, Owner(0))),
        (16, 8)
    );
    // Stocking ships after tokens (or before) does not change which zone is which supply's reserve.
    assert_eq!(l.reserve_of(0, Owner(0)), Some(tokens));
    assert_eq!(l.reserve_of(1, Owner(0)), Some(ship_reserve));
    // K4.2: a gain into a zone comes from that zone's own supply.
    l.gain_tokens(Owner(0), pool, 3, Cause::Setup).unwrap();
    assert_eq!(
        (l.tokens(tokens, Owner(0)), l.tokens(ship_reserve, Owner(0))),
        (13, 6)
    );
    l.move_tokens(Owner(0), system_ships, ship_reserve, 2, Cause::Setup)
        .unwrap();
    assert_eq!(l.tokens(ship_reserve, Owner(0)), 8);
    // Tokens never cross supplies: a command token cannot become a ship piece.
    let before = coffer_core::state_hash(&l);
    let refused = l.move_tokens(Owner(0), pool, ship_reserve, 1, Cause::Setup);
    assert!(
        matches!(refused, Err(Refusal::Invalid(ref m)) if m.contains("supply")),
        "{refused:?}"
    );
    assert_eq!(coffer_core::state_hash(&l), before);
    l.check_invariants().unwrap();
    // Each supply is conserved on its own: a ship piece created from nothing breaks the invariant even
    // though the owner's grand total would still match if a command token vanished at the same time.
    let mut json = serde_json::to_value(&l).unwrap();
    let o = 1; // one owner: token cell of zone z is z * 1 + 0
    crate::edit_token_cells(&mut json, |cells| {
        cells[ship_reserve.index() * o] = 9;
        cells[tokens.index() * o] = 12;
    });
    let e = serde_json::from_value::<Ledger>(json)
        .unwrap_err()
        .to_string();
    assert!(e.contains("supply"), "{e}");
}

#[test]
fn k4_3_a_one_per_owner_zone_never_holds_two_of_an_owners_tokens() {
    let mut b = board(4);
    let before = coffer_core::state_hash(&b.l);
    let refused = b.l.stock(Owner(0), b.system, 2, Cause::Setup);
    assert!(
        matches!(refused, Err(Refusal::Invalid(ref m)) if m.contains("one-per-owner")),
        "{refused:?}"
    );
    assert_eq!(coffer_core::state_hash(&b.l), before);
    // A damaged state with two of p0's tokens in the system is caught by the kernel's invariants.
    b.l.move_tokens(Owner(0), b.reserve[0], b.system, 1, Cause::Setup)
        .unwrap();
    b.l.check_invariants().unwrap();
    let mut json = serde_json::to_value(&b.l).unwrap();
    let cell = b.system.index() * 2; // owner 0 of two
    let reserve_cell = b.reserve[0].index() * 2;
    crate::edit_token_cells(&mut json, |cells| {
        cells[cell] = 2;
        cells[reserve_cell] = 2;
    });
    let e = serde_json::from_value::<Ledger>(json)
        .unwrap_err()
        .to_string();
    assert!(e.contains("one-per-owner"), "{e}");
}

#[test]
fn k4_a_zone_row_lists_every_owners_tokens() {
    let mut b = board(4);
    b.l.move_tokens(Owner(1), b.reserve[1], b.system, 1, Cause::Setup)
        .unwrap();
    assert_eq!(b.l.zone_tokens(b.system), &[0, 1]);
    assert_eq!(b.l.zone_tokens(b.reserve[0]), &[4, 0]);
    assert_eq!(b.l.zone_tokens(b.reserve[1]), &[0, 3]);
}

#[test]
fn k4_consecutive_zones_rows_read_as_one_block() {
    let mut b = board(4);
    b.l.move_tokens(Owner(1), b.reserve[1], b.system, 1, Cause::Setup)
        .unwrap();
    b.l.move_tokens(Owner(0), b.reserve[0], b.pool[0], 3, Cause::Setup)
        .unwrap();
    // Zones 2 to 4: both pools, then the system, each zone's row after the other's.
    assert_eq!(
        b.l.zones_tokens(b.pool[0], 3),
        [
            b.l.zone_tokens(b.pool[0]),
            b.l.zone_tokens(b.pool[1]),
            b.l.zone_tokens(b.system)
        ]
        .concat()
    );
    assert_eq!(b.l.zones_tokens(b.pool[0], 3), &[3, 0, 0, 0, 0, 1]);
    assert_eq!(b.l.zones_tokens(b.reserve[0], 0), &[] as &[u32]);
    // A block that runs past the last zone is empty, as a missing zone's row is.
    assert_eq!(b.l.zones_tokens(b.pool[0], 4), &[] as &[u32]);
    assert_eq!(b.l.zones_tokens(b.system, usize::MAX), &[] as &[u32]);
    assert_eq!(b.l.zones_tokens(b.pool[0], usize::MAX / 2), &[] as &[u32]);
}

#[test]
fn a_ledger_set_up_on_recycled_tables_equals_one_set_up_on_new_tables() {
    let mut played = board(5);
    played
        .l
        .move_tokens(Owner(0), played.reserve[0], played.system, 2, Cause::Setup)
        .unwrap();
    // Another holder of the layout's tables, which recycling must not empty under it.
    let shared = played.l.layout();
    played.l.recycle();
    assert_eq!(played.l.owners(), 0, "what is left is an empty ledger");
    // The first takes the recycled tables, the second new ones.
    let reused = board(5);
    let new = board(5);
    assert_eq!(reused.l, new.l);
    assert_eq!(reused.l.tokens(reused.system, Owner(0)), 0);
    assert_eq!(reused.l.tokens(reused.reserve[0], Owner(0)), 5);
    // The board index built on the recycled one answers as a new one.
    for owner in [Owner(0), Owner(1), Owner::GAME] {
        let held = |l: &Ledger| l.zones_holding(owner).collect::<Vec<_>>();
        assert_eq!(held(&reused.l), held(&new.l));
        let open = |l: &Ledger| {
            l.zones_open_to(owner, coffer_core::Kind(3))
                .collect::<Vec<_>>()
        };
        assert_eq!(open(&reused.l), open(&new.l));
    }
    assert!(
        shared == new.l.layout(),
        "the shared layout kept its tables"
    );
}

#[test]
fn k4_zones_added_together_equal_zones_added_one_by_one() {
    // Zones of several owners, kinds and supplies; on a new ledger (no board index yet) and after a first
    // zone; then a stock and moves, and the board index asked the same questions.
    let zones = |offset: u32| -> Vec<Zone> {
        (0..40)
            .map(|i| {
                let zone = Zone::new(key((i % 3) as u16, 10 + (i % 4) as u16, offset + i))
                    .supply((i % 5 / 3) as u16);
                if i % 7 == 0 {
                    zone.one_per_owner()
                } else {
                    zone
                }
            })
            .collect()
    };
    for first in [None, Some(Zone::new(key(1, 9, 0)))] {
        let (mut one, mut all) = (Ledger::new(3, 4), Ledger::new(3, 4));
        let (mut one_ids, mut all_ids) = (Vec::new(), Vec::new());
        if let Some(zone) = first {
            one_ids.push(one.add_zone(zone).unwrap());
            all_ids.push(all.add_zone(zone).unwrap());
        }
        for zone in zones(0) {
            one_ids.push(one.add_zone(zone).unwrap());
        }
        all.add_zones(zones(0), &mut all_ids).unwrap();
        all.add_zones([], &mut all_ids).unwrap();
        assert_eq!(one_ids, all_ids);
        assert_eq!(one, all);
        // A reserve and another zone of its supply, not one per owner.
        let of_supply_0: Vec<ZoneId> = all_ids
            .iter()
            .copied()
            .filter(|&z| all.zone(z).is_ok_and(|z| z.supply == 0 && !z.one_per_owner))
            .collect();
        for l in [&mut one, &mut all] {
            l.stock(Owner(2), of_supply_0[0], 6, Cause::Setup).unwrap();
            l.move_tokens(Owner(2), of_supply_0[0], of_supply_0[1], 2, Cause::Setup)
                .unwrap();
        }
        assert_eq!(crate::hash(&one), crate::hash(&all));
        for owner in [Owner(0), Owner(2), Owner::GAME] {
            let held = |l: &Ledger| l.zones_holding(owner).collect::<Vec<_>>();
            assert_eq!(held(&one), held(&all));
            for kind in 9..14 {
                let open = |l: &Ledger| {
                    l.zones_open_to(owner, coffer_core::Kind(kind))
                        .collect::<Vec<_>>()
                };
                assert_eq!(open(&one), open(&all), "kind {kind}");
            }
        }
    }
}

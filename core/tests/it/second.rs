//! The kernel's second generation: the game's own supplies (K4.6), payouts (K4.7), wide boards (K4.8),
//! bounded demands (K6.2), generic costs (K7.2) and read-only checks (K8.2).

use crate::{assert_refused, hash, key, new_amount};
use coffer_core::{
    AmountSpec, Bound, Cause, Change, Generic, Kind, Ledger, Measure, Owner, Part, Refusal,
    TokenOp, Zone, ZoneId,
};

const GAME: u16 = u16::MAX;

/// A bank of 19 of one resource (kind 1) and a hand (kind 2) per player.
fn bank(players: u16) -> (Ledger, ZoneId, Vec<ZoneId>) {
    let mut l = Ledger::new(players, 0);
    let bank = l.add_zone(Zone::new(key(GAME, 1, 0))).unwrap();
    let hands = (0..players)
        .map(|p| l.add_zone(Zone::new(key(p, 2, 0))).unwrap())
        .collect();
    l.stock(Owner::GAME, bank, 19, Cause::Setup).unwrap();
    l.take_events();
    (l, bank, hands)
}

#[test]
fn k4_6_a_bank_owned_by_the_game_is_drawn_from_paid_back_to_and_conserved() {
    let (mut l, bank, hands) = bank(3);
    assert_eq!(l.supply(Owner::GAME), 19);
    assert_eq!(l.reserve(Owner::GAME), Some(bank));
    // Players draw the game's tokens into their hands, and pay them back.
    l.gain_tokens(Owner::GAME, hands[0], 4, Cause::Setup)
        .unwrap();
    l.move_tokens(Owner::GAME, hands[0], hands[1], 1, Cause::Setup)
        .unwrap();
    l.move_tokens(Owner::GAME, hands[1], bank, 1, Cause::Setup)
        .unwrap();
    assert_eq!(l.tokens(hands[0], Owner::GAME), 3);
    assert_eq!(l.tokens(bank, Owner::GAME), 16);
    l.check_invariants().unwrap();
    // A draw past what the bank holds is reported, not refused (K4.2).
    let drawn = l
        .gain_tokens(Owner::GAME, hands[2], 20, Cause::Setup)
        .unwrap();
    assert_eq!((drawn.gained, drawn.lost), (16, 4));
    // Conserved: what the game owns never changes, and the snapshot keeps it (written with the game's
    // column, read back to the same hash).
    let total: u32 = l
        .zones()
        .iter()
        .enumerate()
        .map(|(z, _)| l.tokens(serde_json::from_str(&z.to_string()).unwrap(), Owner::GAME))
        .sum();
    assert_eq!(total, 19);
    let json: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
    assert_eq!(hash(&json), hash(&l));
    let bin: Ledger = postcard::from_bytes(&postcard::to_allocvec(&l).unwrap()).unwrap();
    assert_eq!(bin, l);
    // A second bank for the same supply is refused; so is an owner that is neither a player nor the game.
    let r = assert_refused(&mut l, |l| l.stock(Owner::GAME, hands[0], 1, Cause::Setup));
    assert!(r.to_string().contains("already keeps its reserve"), "{r}");
    assert_refused(&mut l, |l| l.stock(Owner(3), bank, 1, Cause::Setup));
}

#[test]
fn k4_6_a_ledger_without_game_tokens_is_written_as_before_banks() {
    // No game column: the JSON token matrix has one cell per player and zone.
    let mut l = Ledger::new(2, 0);
    let z = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
    l.stock(Owner(0), z, 3, Cause::Setup).unwrap();
    let json = serde_json::to_value(&l).unwrap();
    assert_eq!(json["tokens"][0], 2);
    assert_eq!(json["supply"].as_array().unwrap().len(), 2);
    // With a bank, each row gains the game's column.
    let (l, _, _) = bank(2);
    let json = serde_json::to_value(&l).unwrap();
    assert_eq!(json["tokens"][0], 3 * 3);
    let back: Ledger = serde_json::from_value(json).unwrap();
    assert_eq!(back, l);
}

#[test]
fn k4_6_the_reserve_does_not_depend_on_the_order_of_setup_calls() {
    let build = |board_first: bool| {
        let mut l = Ledger::new(1, 0);
        let reserve = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
        let system = l.add_zone(Zone::new(key(GAME, 3, 0))).unwrap();
        if board_first {
            l.stock_on(Owner(0), system, 2, Cause::Setup).unwrap();
            l.stock(Owner(0), reserve, 5, Cause::Setup).unwrap();
        } else {
            l.stock(Owner(0), reserve, 5, Cause::Setup).unwrap();
            l.stock_on(Owner(0), system, 2, Cause::Setup).unwrap();
        }
        (l, reserve)
    };
    let (a, reserve) = build(true);
    let (b, _) = build(false);
    assert_eq!(a.reserve(Owner(0)), Some(reserve));
    assert_eq!(b.reserve(Owner(0)), Some(reserve));
    assert_eq!(hash(&a), hash(&b));
    // Every token on the board: the reserve is named with none in it.
    let mut l = Ledger::new(1, 0);
    let reserve = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
    let system = l.add_zone(Zone::new(key(GAME, 3, 0))).unwrap();
    assert_refused(&mut l, |l| l.stock(Owner(0), reserve, 0, Cause::Setup));
    l.stock_on(Owner(0), system, 2, Cause::Setup).unwrap();
    l.stock(Owner(0), reserve, 0, Cause::Setup).unwrap();
    assert_eq!(l.reserve(Owner(0)), Some(reserve));
    l.move_tokens(Owner(0), system, reserve, 2, Cause::Setup)
        .unwrap();
    l.check_invariants().unwrap();
}

#[test]
fn k4_7_a_payout_pays_everyone_owed_in_full_or_nobody() {
    let (mut l, bank, hands) = bank(3);
    l.gain_tokens(Owner::GAME, hands[2], 17, Cause::Setup)
        .unwrap();
    l.take_events();
    // The bank holds 2; three players are owed 1 each: nobody receives.
    let owed = [(hands[0], 1), (hands[1], 1), (hands[2], 1)];
    let before = hash(&l);
    let paid = l.payout(Owner::GAME, bank, &owed, Cause::Setup).unwrap();
    assert!(!paid.paid);
    assert_eq!((paid.owed, paid.held), (3, 2));
    assert_eq!(hash(&l), before, "a withheld payout moves nothing");
    let events = l.take_events();
    assert!(matches!(
        events[..],
        [coffer_core::Event {
            change: Change::Withheld {
                owed: 3,
                held: 2,
                ..
            },
            ..
        }]
    ));
    // Two owed 1 each: both receive.
    let paid = l
        .payout(Owner::GAME, bank, &owed[..2], Cause::Setup)
        .unwrap();
    assert!(paid.paid);
    assert_eq!(l.tokens(hands[0], Owner::GAME), 1);
    assert_eq!(l.tokens(hands[1], Owner::GAME), 1);
    assert_eq!(l.tokens(bank, Owner::GAME), 0);
    // Zones of another supply and one-per-owner recipients are refused, changing nothing.
    let other = l.add_zone(Zone::new(key(0, 4, 0)).supply(1)).unwrap();
    assert_refused(&mut l, |l| {
        l.payout(Owner::GAME, hands[0], &[(other, 1)], Cause::Setup)
    });
    let place = l
        .add_zone(Zone::new(key(GAME, 5, 0)).one_per_owner())
        .unwrap();
    assert_refused(&mut l, |l| {
        l.payout(Owner::GAME, hands[0], &[(place, 1)], Cause::Setup)
    });
}

/// Six players, each with 16 tokens in reinforcements, on a board of 30 systems (class 3).
fn wide() -> (Ledger, Vec<ZoneId>, Vec<ZoneId>) {
    let mut l = Ledger::new(6, 0);
    let reserves: Vec<ZoneId> = (0..6)
        .map(|p| l.add_zone(Zone::new(key(p, 1, 0))).unwrap())
        .collect();
    let systems: Vec<ZoneId> = (0..30)
        .map(|s| {
            l.add_zone(Zone::new(key(GAME, 3, s)).one_per_owner())
                .unwrap()
        })
        .collect();
    for p in 0..6 {
        l.stock(Owner(p), reserves[usize::from(p)], 16, Cause::Setup)
            .unwrap();
    }
    (l, reserves, systems)
}

#[test]
fn k4_8_an_owners_zones_and_the_zones_without_its_token_need_no_scan() {
    let (mut l, reserves, systems) = wide();
    let p = Owner(2);
    for &s in &[systems[0], systems[7], systems[29]] {
        l.place_from_reserve(p, s, None, Cause::Setup).unwrap();
    }
    let class = Kind(3);
    assert_eq!(
        l.zones_holding_in(p, class).collect::<Vec<_>>(),
        [systems[0], systems[7], systems[29]]
    );
    assert_eq!(l.zones_without(p, class).len(), 27);
    assert!(l.zones_without(p, class).all(|z| l.tokens(z, p) == 0));
    assert_eq!(l.tokens_in(p, class), 3);
    assert_eq!(
        l.zones_holding(p).collect::<Vec<_>>(),
        [reserves[2], systems[0], systems[7], systems[29]]
    );
    assert_eq!(l.zones_in(class).len(), 30);
    assert_eq!(l.zones_without(Owner(3), class).len(), 30);
    // A class nobody created has no zones.
    assert_eq!(l.zones_in(Kind(99)).len(), 0);
    // Open to a player: empty, or only theirs.
    l.place_from_reserve(Owner(3), systems[1], None, Cause::Setup)
        .unwrap();
    l.place_from_reserve(Owner(3), systems[7], None, Cause::Setup)
        .unwrap();
    let open: Vec<ZoneId> = l.zones_open_to(p, class).collect();
    assert_eq!(open.len(), 28, "every system but 1 (p3's) and 7 (shared)");
    assert!(open.contains(&systems[0]) && !open.contains(&systems[7]));
    assert!(l.is_open_to(systems[29], p) && !l.is_open_to(systems[1], p));
    assert!(l.is_open_to(systems[1], Owner(3)) && !l.is_open_to(systems[7], Owner(3)));
    let missing: ZoneId = serde_json::from_str("999").unwrap();
    assert!(!l.is_open_to(missing, p));
    assert_eq!(l.zones_open_to(p, Kind(99)).len(), 0);
}

#[test]
fn k4_8_returning_every_board_token_is_one_operation() {
    let (mut l, reserves, systems) = wide();
    for p in 0..6u16 {
        for s in 0..5 {
            let at = systems[usize::from(p) * 5 + s];
            l.place_from_reserve(Owner(p), at, None, Cause::Setup)
                .unwrap();
        }
    }
    l.take_events();
    let returned = l.return_all_tokens(Kind(3), Cause::Setup).unwrap();
    assert_eq!(returned, 30);
    for p in 0..6u16 {
        assert_eq!(l.tokens(reserves[usize::from(p)], Owner(p)), 16);
        assert_eq!(l.zones_holding_in(Owner(p), Kind(3)).len(), 0);
    }
    let events = l.take_events();
    assert_eq!(events.len(), 30);
    assert!(events.iter().all(|e| matches!(
        e.change,
        Change::Tokens {
            op: TokenOp::Return,
            n: 1,
            ..
        }
    )));
    // Undone with the rest of a transaction: the board index follows.
    let mark = l.begin();
    l.place_from_reserve(Owner(0), systems[3], None, Cause::Setup)
        .unwrap();
    l.return_tokens(Owner(0), Kind(3), Cause::Setup).unwrap();
    l.place_from_reserve(Owner(0), systems[4], None, Cause::Setup)
        .unwrap();
    l.rollback(mark);
    assert_eq!(l.zones_holding_in(Owner(0), Kind(3)).len(), 0);
}

#[test]
fn k6_2_a_bounded_demand_follows_its_measure_until_met() {
    let (mut l, bank, hands) = bank(2);
    l.gain_tokens(Owner::GAME, hands[0], 9, Cause::Setup)
        .unwrap();
    let key = key(0, 9, 0);
    let hand = Measure::Tokens {
        owner: Owner::GAME,
        zone: hands[0],
    };
    // Down to 7: two must go.
    assert_eq!(l.demand(key, hand, Bound::AtMost(7), Cause::Setup), Ok(2));
    assert!(l.ensure_nothing_pending().is_err());
    l.move_tokens(Owner::GAME, hands[0], bank, 1, Cause::Setup)
        .unwrap();
    assert_eq!(l.pending()[0].excess, 1);
    l.move_tokens(Owner::GAME, hands[0], bank, 1, Cause::Setup)
        .unwrap();
    assert!(l.pending().is_empty());
    l.ensure_nothing_pending().unwrap();
    // Half of 7, rounded down: 3 must go, whatever the hand holds later.
    assert_eq!(l.demand(key, hand, Bound::LoseHalf, Cause::Setup), Ok(3));
    assert_eq!(l.pending()[0].target, 4);
    // An amount's demand follows spends.
    let gold = new_amount(&mut l, AmountSpec::new(key.kind_key(8)));
    l.gain(gold, 10, Cause::Setup).unwrap();
    let other = coffer_core::Key::new(Owner(1), Kind(9), 0);
    assert_eq!(
        l.demand(other, Measure::Amount(gold), Bound::AtMost(4), Cause::Setup),
        Ok(6)
    );
    l.spend(gold, 6, Cause::Setup).unwrap();
    assert_eq!(l.pending().len(), 1, "only the hand's demand is left");
    // A measure naming nothing is refused, changing nothing; the ruleset's own measure is check_limit.
    assert_refused(&mut l, |l| {
        l.demand(other, Measure::Ruleset, Bound::AtMost(1), Cause::Setup)
    });
}

trait KindKey {
    fn kind_key(self, kind: u16) -> coffer_core::Key;
}

impl KindKey for coffer_core::Key {
    fn kind_key(self, kind: u16) -> coffer_core::Key {
        coffer_core::Key::new(self.owner, Kind(kind), self.subject)
    }
}

#[test]
fn k7_2_every_way_to_pay_a_generic_cost_is_listed_once_and_pays() {
    // {2}{G}{G} with 3 green, 1 white, 2 black: two green, then two of any.
    let mut l = Ledger::new(1, 0);
    let pools: Vec<_> = (1..=3)
        .map(|k| new_amount(&mut l, AmountSpec::new(key(0, k, 0))))
        .collect();
    for (&p, n) in pools.iter().zip([3, 1, 2]) {
        l.gain(p, n, Cause::Setup).unwrap();
    }
    let specific = [Part::Spend(pools[0], 2)];
    let mut ways = Vec::new();
    let n = l
        .payments(
            &specific,
            Generic {
                n: 2,
                pools: &pools,
            },
            &mut ways,
        )
        .unwrap();
    // Green has 1 left after the specific part: (1,1,0) (1,0,1) (0,1,1) (0,0,2).
    assert_eq!(n, 4);
    assert_eq!(ways, [1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 2]);
    for way in ways.chunks(3) {
        let split = Ledger::split_of(&pools, way);
        let mut paid = l.clone();
        paid.pay_cost(
            &[
                specific[0],
                Part::Split {
                    allocation: &split,
                    need: 2,
                },
            ],
            Cause::Setup,
        )
        .unwrap();
        assert_eq!(
            paid.value(pools[0]) + paid.value(pools[1]) + paid.value(pools[2]),
            2
        );
    }
    // Nothing can pay four of any: no way; the specific part unpaid: no way.
    assert_eq!(
        l.payments(
            &specific,
            Generic {
                n: 5,
                pools: &pools
            },
            &mut ways
        ),
        Ok(0)
    );
    let too_much = [Part::Spend(pools[0], 4)];
    assert_eq!(
        l.payments(
            &too_much,
            Generic {
                n: 0,
                pools: &pools
            },
            &mut ways
        ),
        Ok(0)
    );
    // A pool listed twice would list ways twice: refused.
    let twice = [pools[0], pools[0]];
    assert!(matches!(
        l.payments(
            &[],
            Generic {
                n: 1,
                pools: &twice
            },
            &mut ways
        ),
        Err(Refusal::Invalid(_))
    ));
}

#[test]
fn k8_2_check_cost_gives_the_refusal_pay_cost_would_and_changes_nothing() {
    let mut l = Ledger::new(1, 0);
    let gold = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)));
    l.gain(gold, 3, Cause::Setup).unwrap();
    let perm = l.add_permanent(key(0, 2, 0), None).unwrap();
    l.take_events();
    // Two spends of one amount add up; a permanent cannot be exhausted twice in one cost.
    let cases: [&[Part]; 3] = [
        &[Part::Spend(gold, 2), Part::Spend(gold, 2)],
        &[Part::Exhaust(perm), Part::Exhaust(perm)],
        &[Part::Spend(gold, 1), Part::Exhaust(perm)],
    ];
    for parts in cases {
        let before = hash(&l);
        let checked = l.check_cost(parts);
        assert_eq!(hash(&l), before);
        assert!(l.events().is_empty());
        let mut paid = l.clone();
        assert_eq!(checked, paid.pay_cost(parts, Cause::Setup), "{parts:?}");
    }
    assert_eq!(
        l.check_cost(&[Part::Spend(gold, 2), Part::Spend(gold, 2)]),
        Err(Refusal::Insufficient {
            key: key(0, 1, 0),
            need: 2,
            have: 1
        })
    );
    assert_eq!(l.can_spend(gold, 4), l.clone().spend(gold, 4, Cause::Setup));
    assert_eq!(l.can_exhaust(perm), Ok(()));
}

#[test]
fn k6_2_a_demand_over_one_player_s_hand_of_several_kinds_counts_that_hand_alone() {
    // Two kinds of card, each its own supply, a bank of each and a hand of each per player.
    let mut l = Ledger::new(2, 0);
    let ore_bank = l.add_zone(Zone::new(key(GAME, 1, 0)).supply(1)).unwrap();
    let brick_bank = l.add_zone(Zone::new(key(GAME, 1, 1)).supply(2)).unwrap();
    let mut hands = Vec::new();
    for p in 0..2 {
        let ore = l.add_zone(Zone::new(key(p, 2, 0)).supply(1)).unwrap();
        let brick = l.add_zone(Zone::new(key(p, 2, 1)).supply(2)).unwrap();
        hands.push((ore, brick));
    }
    l.stock(Owner::GAME, ore_bank, 19, Cause::Setup).unwrap();
    l.stock(Owner::GAME, brick_bank, 19, Cause::Setup).unwrap();
    let (ore, brick) = hands[0];
    l.gain_tokens(Owner::GAME, ore, 5, Cause::Setup).unwrap();
    l.gain_tokens(Owner::GAME, brick, 4, Cause::Setup).unwrap();
    // The other player's hand is not counted.
    l.gain_tokens(Owner::GAME, hands[1].0, 6, Cause::Setup)
        .unwrap();
    let hand = Measure::Zones {
        owner: Owner::GAME,
        first: ore,
        count: 2,
    };
    assert_eq!(l.measure(hand), Ok(9));
    let who = key(0, 2, 0);
    // Discard half, rounded down: 4 of the 9, of either kind.
    assert_eq!(l.demand(who, hand, Bound::LoseHalf, Cause::Setup), Ok(4));
    l.move_tokens(Owner::GAME, brick, brick_bank, 3, Cause::Setup)
        .unwrap();
    assert_eq!(l.pending()[0].excess, 1, "three bricks count");
    // The other player's discards do not count towards it.
    l.move_tokens(Owner::GAME, hands[1].0, ore_bank, 2, Cause::Setup)
        .unwrap();
    assert_eq!(l.pending()[0].excess, 1, "another hand does not count");
    l.move_tokens(Owner::GAME, ore, ore_bank, 1, Cause::Setup)
        .unwrap();
    assert!(l.pending().is_empty(), "an ore ends it");
    // A measure over no zones, or past the last zone, is refused.
    for bad in [
        Measure::Zones {
            owner: Owner::GAME,
            first: ore,
            count: 0,
        },
        Measure::Zones {
            owner: Owner::GAME,
            first: hands[1].1,
            count: 2,
        },
    ] {
        assert!(matches!(
            l.measure(bad),
            Err(Refusal::Invalid(_) | Refusal::NoSuchResource { .. })
        ));
        assert_refused(&mut l, |l| {
            l.demand(who, bad, Bound::AtMost(1), Cause::Setup)
        });
    }
}

#[test]
fn k8_2_can_move_tokens_names_each_refusal_move_tokens_gives() {
    let mut l = Ledger::new(2, 0);
    let reserve = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
    let board = l.add_zone(Zone::new(key(0, 1, 1))).unwrap();
    let other_supply = l.add_zone(Zone::new(key(0, 1, 2)).supply(1)).unwrap();
    l.stock(Owner(0), reserve, 3, Cause::Setup).unwrap();
    l.take_events();
    let missing: ZoneId = serde_json::from_str("99").unwrap();
    // Each way to be refused, named alike by the check and the move; the move changes nothing.
    for (owner, from, to, n, what) in [
        (Owner(0), missing, board, 1, "no such zone to take from"),
        (Owner(0), reserve, missing, 1, "no such zone to put in"),
        (Owner(0), reserve, other_supply, 1, "another supply"),
        (Owner(1), reserve, board, 1, "no reserve of that supply"),
        (Owner(0), reserve, board, 4, "too few tokens"),
    ] {
        let checked = l.can_move_tokens(owner, from, to, n).unwrap_err();
        let moved = assert_refused(&mut l, |l| l.move_tokens(owner, from, to, n, Cause::Setup));
        assert_eq!(checked, moved, "{what}");
    }
    assert!(matches!(
        l.can_move_tokens(Owner(0), reserve, board, 4),
        Err(Refusal::NotEnoughTokens {
            need: 4,
            have: 3,
            ..
        })
    ));
    assert!(matches!(
        l.can_move_tokens(Owner(0), missing, board, 1),
        Err(Refusal::NoSuchResource { index: 99, .. })
    ));
    assert!(matches!(
        l.can_move_tokens(Owner(0), reserve, other_supply, 1),
        Err(Refusal::Invalid(_))
    ));
    // And the moves that can be made: every one placed, none bounced.
    assert_eq!(l.can_move_tokens(Owner(0), reserve, board, 3), Ok((3, 0)));
    assert_eq!(l.can_move_tokens(Owner(0), reserve, board, 0), Ok((0, 0)));
}

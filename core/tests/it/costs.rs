//! K5 exhaustion, K6 limits awaiting a choice, K7 split payments, K8 atomic costs and transactions.

use crate::{assert_refused, hash, key, new_amount};
use coffer_core::{
    AmountSpec, Cause, Change, Demand, Ledger, Owner, Part, Refusal, Scope, TrackSpec, Zone, ZoneId,
};

#[test]
fn k5_activating_an_exhausted_permanent_is_refused() {
    let mut l = Ledger::new(1, 0);
    let p = l.add_permanent(key(0, 1, 4), None).unwrap();
    assert!(!l.is_exhausted(p));
    l.activate(p, Cause::Setup).unwrap();
    assert!(l.is_exhausted(p));
    let r = assert_refused(&mut l, |l| l.activate(p, Cause::Setup));
    assert_eq!(r, Refusal::Exhausted { key: key(0, 1, 4) });
    l.ready(p, Cause::Setup).unwrap();
    l.activate(p, Cause::Setup).unwrap();
}

#[test]
fn k5_readying_happens_at_the_scope_the_ruleset_names() {
    let mut l = Ledger::new(2, 0);
    let at_turn = l.add_permanent(key(0, 1, 0), Some(Scope::Turn)).unwrap();
    let manual = l.add_permanent(key(0, 1, 1), None).unwrap();
    let theirs = l.add_permanent(key(1, 1, 0), None).unwrap();
    for p in [at_turn, manual, theirs] {
        l.activate(p, Cause::Setup).unwrap();
    }
    l.end_scope(Scope::Phase);
    assert!(
        l.is_exhausted(at_turn),
        "a phase ending is not the turn ending"
    );
    l.end_scope(Scope::Turn);
    assert!(!l.is_exhausted(at_turn));
    assert!(l.is_exhausted(manual));
    l.ready_owner(Owner(0), Cause::Setup);
    assert!(!l.is_exhausted(manual));
    assert!(
        l.is_exhausted(theirs),
        "readying one owner leaves the others"
    );
}

#[test]
fn k6_a_limit_exceeded_at_a_boundary_waits_for_the_owners_choice() {
    let mut l = Ledger::new(2, 0);
    let hand = key(1, 5, 0);
    assert_eq!(l.check_limit(hand, 7, 7, Cause::Upkeep(Scope::Phase)), 0);
    assert!(l.pending().is_empty());
    l.ensure_nothing_pending().unwrap();
    assert_eq!(l.check_limit(hand, 9, 7, Cause::Upkeep(Scope::Phase)), 2);
    assert_eq!(l.pending(), &[Demand::new(hand, 2)]);
    let r = l.ensure_nothing_pending().unwrap_err();
    assert_eq!(
        r,
        Refusal::AwaitingChoice {
            owner: Owner(1),
            key: hand,
            excess: 2
        }
    );
    // One discarded: still one to go, updated in place.
    assert_eq!(l.check_limit(hand, 8, 7, Cause::Setup), 1);
    assert_eq!(l.pending(), &[Demand::new(hand, 1)]);
    assert_eq!(l.check_limit(hand, 7, 7, Cause::Setup), 0);
    assert!(l.pending().is_empty());
    l.ensure_nothing_pending().unwrap();
    let raised = l
        .events()
        .iter()
        .filter(|e| matches!(e.change, Change::Demand { raised: true, .. }))
        .count();
    let satisfied = l
        .events()
        .iter()
        .filter(|e| matches!(e.change, Change::Demand { raised: false, .. }))
        .count();
    assert_eq!((raised, satisfied), (2, 2));
}

#[test]
fn k6_huge_counts_saturate() {
    let mut l = Ledger::new(1, 0);
    assert_eq!(
        l.check_limit(key(0, 1, 0), u64::MAX, 0, Cause::Setup),
        u32::MAX
    );
    assert_eq!(l.check_limit(key(0, 1, 0), 0, u64::MAX, Cause::Setup), 0);
    assert!(l.pending().is_empty());
}

#[test]
fn k7_split_payment_applies_the_payers_allocation_as_one_step() {
    let mut l = Ledger::new(2, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(3));
    let b = new_amount(&mut l, AmountSpec::new(key(0, 1, 1)).start(4));
    l.spend_split(&[(a, 2), (b, 3)], 5, Cause::Setup).unwrap();
    assert_eq!((l.value(a), l.value(b)), (1, 1));
}

#[test]
fn k7_allocation_must_sum_to_the_cost() {
    let mut l = Ledger::new(2, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(3));
    let b = new_amount(&mut l, AmountSpec::new(key(0, 1, 1)).start(4));
    let r = assert_refused(&mut l, |l| {
        l.spend_split(&[(a, 2), (b, 2)], 5, Cause::Setup)
    });
    assert_eq!(r, Refusal::BadAllocation { sum: 4, need: 5 });
    assert!(
        r.to_string().contains("adds up to 4") && r.to_string().contains("is 5"),
        "{r}"
    );
    let r = assert_refused(&mut l, |l| {
        l.spend_split(&[(a, u64::MAX), (b, 2)], 5, Cause::Setup)
    });
    assert_eq!(
        r,
        Refusal::BadAllocation {
            sum: u64::MAX,
            need: 5
        }
    );
}

#[test]
fn k7_each_holder_must_afford_its_part() {
    let mut l = Ledger::new(2, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(3));
    let b = new_amount(&mut l, AmountSpec::new(key(0, 1, 1)).start(4));
    let r = assert_refused(&mut l, |l| {
        l.spend_split(&[(b, 1), (a, 4)], 5, Cause::Setup)
    });
    assert!(
        matches!(
            r,
            Refusal::Insufficient {
                need: 4,
                have: 3,
                ..
            }
        ),
        "{r}"
    );
    // Parts on the same holder add up.
    let r = assert_refused(&mut l, |l| {
        l.spend_split(&[(a, 2), (b, 1), (a, 2)], 5, Cause::Setup)
    });
    assert!(
        matches!(
            r,
            Refusal::Insufficient {
                need: 4,
                have: 3,
                ..
            }
        ),
        "{r}"
    );
    assert_eq!((l.value(a), l.value(b)), (3, 4));
}

#[test]
fn k8_refused_cost_changes_nothing() {
    let mut l = Ledger::new(2, 9);
    let money = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(5));
    let track = l.add_track(TrackSpec::new(key(0, 2, 0), 2)).unwrap();
    let reserve = l.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    let pool = l.add_zone(Zone::new(key(0, 4, 0))).unwrap();
    let perm = l.add_permanent(key(0, 5, 0), None).unwrap();
    l.stock(Owner(0), reserve, 1, Cause::Setup).unwrap();
    l.take_events();
    let parts = [
        Part::Spend(money, 3),
        Part::Charges(track, 1),
        Part::Exhaust(perm),
        seat0_tokens(reserve, pool, 2),
    ];
    let r = assert_refused(&mut l, |l| l.pay_cost(&parts, Cause::Setup));
    assert!(
        matches!(
            r,
            Refusal::NotEnoughTokens {
                need: 2,
                have: 1,
                ..
            }
        ),
        "{r}"
    );
    assert_eq!(
        (l.value(money), l.active(track), l.is_exhausted(perm)),
        (5, 2, false)
    );
    // The same cost with an affordable token part is paid whole.
    let parts = [parts[0], parts[1], parts[2], seat0_tokens(reserve, pool, 1)];
    l.pay_cost(&parts, Cause::Setup).unwrap();
    assert_eq!(
        (l.value(money), l.active(track), l.is_exhausted(perm)),
        (2, 1, true)
    );
    assert_eq!(l.tokens(pool, Owner(0)), 1);
}

#[test]
fn k8_3_a_refund_right_after_a_payment_returns_the_prior_state_hash() {
    let mut l = Ledger::new(2, 9);
    let money = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(5).cap(9));
    let other = new_amount(&mut l, AmountSpec::new(key(0, 1, 1)).start(4));
    let track = l.add_track(TrackSpec::new(key(0, 2, 0), 2)).unwrap();
    let shields = l.add_track(TrackSpec::new(key(0, 2, 1), 3)).unwrap();
    l.spend_charges(shields, 1, Cause::Setup).unwrap();
    let reserve = l.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    let pool = l.add_zone(Zone::new(key(0, 4, 0))).unwrap();
    let perm = l.add_permanent(key(0, 5, 0), None).unwrap();
    l.stock(Owner(0), reserve, 2, Cause::Setup).unwrap();
    l.take_events();
    let before = hash(&l);
    let allocation = [(money, 1), (other, 2)];
    let parts = [
        Part::Spend(money, 3),
        Part::Split {
            allocation: &allocation,
            need: 3,
        },
        Part::Charges(track, 1),
        Part::Recover(shields, 1),
        Part::Exhaust(perm),
        seat0_tokens(reserve, pool, 2),
    ];
    l.pay_cost(&parts, Cause::Setup).unwrap();
    let paid = l.take_events().len();
    assert_ne!(hash(&l), before);
    l.refund_cost(&parts, Cause::Setup).unwrap();
    assert_eq!(hash(&l), before, "the refund undid the payment exactly");
    assert_eq!(
        l.take_events().len(),
        paid,
        "one event gives back each the payment recorded"
    );
    // Nothing left to give back: refused whole, nothing changes.
    let r = assert_refused(&mut l, |l| l.refund_cost(&parts, Cause::Setup));
    assert!(matches!(r, Refusal::NotEnoughTokens { .. }), "{r}");
}

#[test]
fn k8_3_a_refund_gives_back_charges_that_cannot_be_recovered() {
    let mut l = Ledger::new(1, 0);
    let nets = l
        .add_track(TrackSpec::new(key(0, 2, 0), 1).unrecoverable())
        .unwrap();
    l.pay_cost(&[Part::Charges(nets, 1)], Cause::Setup).unwrap();
    let r = assert_refused(&mut l, |l| l.recover_exactly(nets, 1, Cause::Setup));
    assert!(matches!(r, Refusal::Unrecoverable { .. }), "{r}");
    l.refund_cost(&[Part::Charges(nets, 1)], Cause::Setup)
        .unwrap();
    assert_eq!(l.active(nets), 1, "a refund is not a recovery (K3.6)");
    let r = assert_refused(&mut l, |l| {
        l.refund_cost(&[Part::Charges(nets, 1)], Cause::Setup)
    });
    assert!(matches!(r, Refusal::NothingToRecover { .. }), "{r}");
}

#[test]
fn k8_3_a_refund_past_an_amounts_cap_is_refused_whole() {
    let mut l = Ledger::new(1, 0);
    let money = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(5).cap(5));
    let perm = l.add_permanent(key(0, 5, 0), None).unwrap();
    l.activate(perm, Cause::Setup).unwrap();
    // The permanent is given back first (newest part first), then the amount has no room: both stay.
    let r = assert_refused(&mut l, |l| {
        l.refund_cost(&[Part::Spend(money, 2), Part::Exhaust(perm)], Cause::Setup)
    });
    assert!(r.to_string().contains("cap"), "{r}");
    assert!(l.is_exhausted(perm));
    l.ready(perm, Cause::Setup).unwrap();
    let r = assert_refused(&mut l, |l| {
        l.refund_cost(&[Part::Exhaust(perm)], Cause::Setup)
    });
    assert!(r.to_string().contains("ready"), "{r}");
}

#[test]
fn k8_rollback_returns_the_exact_prior_state_hash() {
    let mut l = Ledger::new(2, 42);
    let money = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(5).cap(9));
    let track = l.add_track(TrackSpec::new(key(0, 2, 0), 3)).unwrap();
    let reserve = l.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    l.stock(Owner(0), reserve, 3, Cause::Setup).unwrap();
    l.take_events();
    let before = hash(&l);
    let snapshot = l.clone();
    let mark = l.begin();
    l.gain(money, 10, Cause::Setup).unwrap();
    l.set_cap(money, Some(6), Cause::Setup).unwrap();
    l.add_capacity(track, 9, 2, 1, Cause::Setup).unwrap();
    l.spend_charges(track, 4, Cause::Setup).unwrap();
    l.remove_capacity(track, 9, Cause::Setup).unwrap();
    l.random_below(6, Cause::Setup);
    let mut deck = [1, 2, 3, 4];
    l.shuffle(&mut deck, Cause::Setup);
    l.check_limit(key(0, 6, 0), 9, 7, Cause::Setup);
    // Resources created inside the transaction go away again, with what happened to them.
    let z = l.add_zone(Zone::new(key(0, 7, 0))).unwrap();
    l.move_tokens(Owner(0), reserve, z, 2, Cause::Setup)
        .unwrap();
    let p = l.add_permanent(key(0, 8, 0), Some(Scope::Turn)).unwrap();
    l.activate(p, Cause::Setup).unwrap();
    let t2 = l.add_track(TrackSpec::new(key(0, 9, 0), 1)).unwrap();
    l.spend_charges(t2, 1, Cause::Setup).unwrap();
    new_amount(&mut l, AmountSpec::new(key(1, 1, 0)));
    l.end_scope(Scope::Act);
    assert_ne!(hash(&l), before);
    l.rollback(mark);
    assert_eq!(hash(&l), before);
    assert_eq!(l, snapshot);
    assert!(l.events().is_empty());
    // The RNG is back in step too: the same draw as the untouched clone.
    let mut other = snapshot.clone();
    assert_eq!(
        l.random_below(1 << 40, Cause::Setup),
        other.random_below(1 << 40, Cause::Setup)
    );
}

#[test]
fn k8_rollback_of_stock_restores_the_reserve() {
    let mut l = Ledger::new(1, 0);
    let z = l.add_zone(Zone::new(key(0, 1, 0))).unwrap();
    let before = hash(&l);
    let mark = l.begin();
    l.stock(Owner(0), z, 4, Cause::Setup).unwrap();
    assert_eq!(l.reserve(Owner(0)), Some(z));
    l.rollback(mark);
    assert_eq!(l.reserve(Owner(0)), None);
    assert_eq!(hash(&l), before);
}

#[test]
fn k8_nested_transactions_roll_back_only_their_part() {
    let mut l = Ledger::new(1, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)));
    let outer = l.begin();
    l.gain(a, 1, Cause::Setup).unwrap();
    let after_one = hash(&l);
    let inner = l.begin();
    l.gain(a, 1, Cause::Setup).unwrap();
    l.rollback(inner);
    assert_eq!(hash(&l), after_one);
    assert_eq!(l.value(a), 1);
    l.commit(outer);
    assert_eq!(l.events().len(), 1);
    let r: Result<(), Refusal> = l.atomically(|l| {
        l.gain(a, 5, Cause::Setup)?;
        l.spend(a, 100, Cause::Setup)
    });
    assert!(r.is_err());
    assert_eq!(l.value(a), 1);
}

/// The part moving `n` of owner 0's tokens from zone `from` to zone `to`.
fn seat0_tokens<'a>(from: ZoneId, to: ZoneId, n: u32) -> Part<'a> {
    Part::Tokens {
        owner: Owner(0),
        from,
        to,
        n,
    }
}

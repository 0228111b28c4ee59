//! K1 bounded amounts and K2 lifetimes.

use crate::{assert_refused, hash, key, new_amount};
use coffer_core::{AmountSpec, Cause, Change, Ledger, Refusal, Scope};

fn ledger_with(spec: AmountSpec) -> (Ledger, coffer_core::AmountId) {
    let mut ledger = Ledger::new(2, 1);
    let id = new_amount(&mut ledger, spec);
    (ledger, id)
}

#[test]
fn k1_1_gain_above_cap_is_lost_and_reported() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).start(4).cap(10));
    let g = l.gain(a, 15, Cause::Setup).unwrap();
    assert_eq!((g.gained, g.lost), (6, 9));
    assert_eq!(l.value(a), 10);
    assert_eq!(l.events().len(), 1);
    assert_eq!(
        l.events()[0].change,
        Change::Gain {
            amount: a,
            before: 4,
            after: 10,
            lost: 9
        }
    );
}

#[test]
fn k1_1_gain_at_cap_loses_all_and_still_reports_it() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).start(10).cap(10));
    let g = l.gain(a, 3, Cause::Effect(7)).unwrap();
    assert_eq!((g.gained, g.lost), (0, 3));
    assert_eq!(l.value(a), 10);
    assert!(matches!(
        l.events()[0].change,
        Change::Gain {
            lost: 3,
            before: 10,
            after: 10,
            ..
        }
    ));
}

#[test]
fn k1_1_uncapped_gain_keeps_everything() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)));
    let g = l.gain(a, 1_000_000, Cause::Setup).unwrap();
    assert_eq!((g.gained, g.lost), (1_000_000, 0));
    assert_eq!(l.value(a), 1_000_000);
}

#[test]
fn k1_2_spend_more_than_available_is_refused() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).start(5));
    let r = assert_refused(&mut l, |l| l.spend(a, 6, Cause::Setup));
    assert_eq!(
        r,
        Refusal::Insufficient {
            key: key(0, 1, 0),
            need: 6,
            have: 5
        }
    );
    assert!(
        r.to_string().contains('6') && r.to_string().contains('5'),
        "{r}"
    );
    l.spend(a, 5, Cause::Setup).unwrap();
    assert_eq!(l.value(a), 0);
}

#[test]
fn k1_2_spend_counts_only_what_lies_above_the_floor() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).floor(2).start(5));
    let r = assert_refused(&mut l, |l| l.spend(a, 4, Cause::Setup));
    assert!(matches!(
        r,
        Refusal::Insufficient {
            need: 4,
            have: 3,
            ..
        }
    ));
    l.spend(a, 3, Cause::Setup).unwrap();
    assert_eq!(l.value(a), 2);
}

#[test]
fn k1_3_payment_drains_to_floor_and_reports_shortfall() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).start(3));
    let p = l.pay(a, 5, Cause::Setup).unwrap();
    assert_eq!((p.paid, p.shortfall), (3, 2));
    assert_eq!(l.value(a), 0);
    assert_eq!(
        l.events()[0].change,
        Change::Pay {
            amount: a,
            before: 3,
            after: 0,
            shortfall: 2
        }
    );
    // Paying again at the floor pays nothing and reports the whole shortfall.
    let p = l.pay(a, 4, Cause::Setup).unwrap();
    assert_eq!((p.paid, p.shortfall), (0, 4));
    assert_eq!(l.value(a), 0);
}

#[test]
fn k1_3_payment_within_means_has_no_shortfall() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).floor(-3).start(3));
    let p = l.pay(a, 5, Cause::Setup).unwrap();
    assert_eq!((p.paid, p.shortfall), (5, 0));
    assert_eq!(l.value(a), -2);
}

#[test]
fn k1_4_lowering_cap_clamps_at_once() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).start(8).cap(10));
    l.set_cap(a, Some(5), Cause::Effect(1)).unwrap();
    assert_eq!(l.value(a), 5);
    assert_eq!(l.amount(a).unwrap().cap(), Some(5));
    assert_eq!(
        l.events()[0].change,
        Change::Cap {
            amount: a,
            before: Some(10),
            after: Some(5),
            value_before: 8,
            value_after: 5
        }
    );
    assert_eq!(l.events()[0].cause, Cause::Effect(1));
    // Raising or removing the cap does not raise the value; later gains respect the new cap.
    l.set_cap(a, None, Cause::Setup).unwrap();
    assert_eq!(l.value(a), 5);
    l.set_cap(a, Some(6), Cause::Setup).unwrap();
    assert_eq!(l.gain(a, 4, Cause::Setup).unwrap().lost, 3);
    assert_eq!(l.value(a), 6);
    l.check_invariants().unwrap();
}

#[test]
fn k1_4_cap_below_floor_is_refused() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).floor(2).start(4).cap(10));
    let r = assert_refused(&mut l, |l| l.set_cap(a, Some(1), Cause::Setup));
    assert!(
        matches!(r, Refusal::Invalid(ref m) if m.contains("cap 1 below floor 2")),
        "{r}"
    );
}

#[test]
fn k1_5_reaching_floor_is_an_event() {
    let (mut l, a) = ledger_with(AmountSpec::new(key(0, 1, 0)).start(5));
    l.spend(a, 2, Cause::Setup).unwrap();
    assert!(
        !l.events()
            .iter()
            .any(|e| matches!(e.change, Change::Floor { .. }))
    );
    l.spend(a, 3, Cause::Setup).unwrap();
    assert_eq!(
        l.events().last().unwrap().change,
        Change::Floor { amount: a, at: 0 }
    );
    l.take_events();
    // Already at the floor: a payment does not "reach" it again.
    l.pay(a, 1, Cause::Setup).unwrap();
    assert!(
        !l.events()
            .iter()
            .any(|e| matches!(e.change, Change::Floor { .. }))
    );
    // A mandatory payment and a lowered cap reach it too.
    l.gain(a, 2, Cause::Setup).unwrap();
    l.pay(a, 9, Cause::Setup).unwrap();
    assert_eq!(
        l.events().last().unwrap().change,
        Change::Floor { amount: a, at: 0 }
    );
    l.gain(a, 2, Cause::Setup).unwrap();
    l.take_events();
    l.set_cap(a, Some(0), Cause::Setup).unwrap();
    assert_eq!(
        l.events().last().unwrap().change,
        Change::Floor { amount: a, at: 0 }
    );
}

#[test]
fn k1_6_u64_max_never_wraps() {
    // The widest amount there is: floor i64::MIN, cap i64::MAX, so the room is u64::MAX.
    let (mut l, a) = ledger_with(
        AmountSpec::new(key(0, 1, 0))
            .floor(i64::MIN)
            .start(i64::MIN)
            .cap(i64::MAX),
    );
    let g = l.gain(a, u64::MAX, Cause::Setup).unwrap();
    assert_eq!((g.gained, g.lost), (u64::MAX, 0));
    assert_eq!(l.value(a), i64::MAX);
    assert_eq!(l.gain(a, u64::MAX, Cause::Setup).unwrap().lost, u64::MAX);
    l.spend(a, u64::MAX, Cause::Setup).unwrap();
    assert_eq!(l.value(a), i64::MIN);
    l.gain(a, u64::MAX, Cause::Setup).unwrap();
    let p = l.pay(a, u64::MAX, Cause::Setup).unwrap();
    assert_eq!((p.paid, p.shortfall), (u64::MAX, 0));
    assert_eq!(l.value(a), i64::MIN);
    let p = l.pay(a, u64::MAX, Cause::Setup).unwrap();
    assert_eq!((p.paid, p.shortfall), (0, u64::MAX));
    l.check_invariants().unwrap();

    // Uncapped: a gain past i64::MAX is refused, not wrapped; one that fits (from below 0) is kept.
    let (mut l, b) = ledger_with(AmountSpec::new(key(0, 2, 0)).floor(i64::MIN).start(-5));
    let r = assert_refused(&mut l, |l| l.gain(b, u64::MAX, Cause::Setup));
    assert!(matches!(r, Refusal::Overflow { n: u64::MAX, .. }), "{r}");
    assert!(r.to_string().contains(&u64::MAX.to_string()), "{r}");
    l.gain(b, i64::MAX as u64 + 5, Cause::Setup).unwrap();
    assert_eq!(l.value(b), i64::MAX);
    assert_refused(&mut l, |l| l.gain(b, 1, Cause::Setup));
    // Spending u64::MAX of an ordinary amount is refused, never wrapped.
    let (mut l, c) = ledger_with(AmountSpec::new(key(0, 3, 0)).start(7));
    assert_refused(&mut l, |l| l.spend(c, u64::MAX, Cause::Setup));
    assert_eq!(
        l.pay(c, u64::MAX, Cause::Setup).unwrap().shortfall,
        u64::MAX - 7
    );
}

#[test]
fn k1_6_bad_amount_specs_are_refused_with_the_input() {
    let mut l = Ledger::new(1, 0);
    let r = l
        .add_amount(AmountSpec::new(key(0, 1, 0)).floor(3).cap(2))
        .unwrap_err();
    assert!(r.to_string().contains("cap 2 below floor 3"), "{r}");
    let r = l
        .add_amount(AmountSpec::new(key(0, 1, 0)).start(11).cap(10))
        .unwrap_err();
    assert!(r.to_string().contains("start 11"), "{r}");
    let r = l
        .add_amount(AmountSpec::new(key(0, 1, 0)).start(-1))
        .unwrap_err();
    assert!(r.to_string().contains("start -1"), "{r}");
    assert!(l.amounts().is_empty());
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).cap(4));
    let r = assert_refused(&mut l, |l| l.set(a, 5, Cause::Setup));
    assert!(r.to_string().contains('5'), "{r}");
}

#[test]
fn k1_handles_from_elsewhere_are_refused() {
    let (mut l, _) = ledger_with(AmountSpec::new(key(0, 1, 0)));
    let mut other = Ledger::new(1, 0);
    for i in 0..3 {
        other.add_amount(AmountSpec::new(key(0, 1, i))).unwrap();
    }
    let foreign = other.add_amount(AmountSpec::new(key(0, 1, 9))).unwrap();
    let r = assert_refused(&mut l, |l| l.gain(foreign, 1, Cause::Setup));
    assert!(matches!(r, Refusal::NoSuchResource { index: 3, .. }), "{r}");
    assert_refused(&mut l, |l| l.spend(foreign, 0, Cause::Setup));
    assert_refused(&mut l, |l| l.pay(foreign, 1, Cause::Setup));
    assert_refused(&mut l, |l| l.set_cap(foreign, None, Cause::Setup));
    assert_eq!(l.value(foreign), 0);
}

#[test]
fn k2_pool_empties_at_phase_end() {
    let mut l = Ledger::new(2, 0);
    let votes = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).lasts(Scope::Phase));
    let ev = new_amount(&mut l, AmountSpec::new(key(0, 2, 0)).lasts(Scope::Phase));
    let treasury = new_amount(&mut l, AmountSpec::new(key(0, 3, 0)));
    l.gain(votes, 3, Cause::Setup).unwrap();
    l.gain(ev, 2, Cause::Setup).unwrap();
    l.gain(treasury, 5, Cause::Setup).unwrap();
    l.take_events();
    l.end_scope(Scope::Phase);
    assert_eq!((l.value(votes), l.value(ev), l.value(treasury)), (0, 0, 5));
    let expired: Vec<_> = l
        .events()
        .iter()
        .filter_map(|e| match e.change {
            Change::Expire {
                amount,
                before,
                after,
            } => Some((amount, before, after, e.cause)),
            _ => None,
        })
        .collect();
    // What was lost is reported: the value before expiry.
    assert_eq!(
        expired,
        vec![
            (votes, 3, 0, Cause::Upkeep(Scope::Phase)),
            (ev, 2, 0, Cause::Upkeep(Scope::Phase))
        ]
    );
}

#[test]
fn k2_resetting_amount_returns_to_start() {
    let mut l = Ledger::new(1, 0);
    let a = new_amount(&mut l, resetting(4, 9, Scope::Turn));
    l.gain(a, 5, Cause::Setup).unwrap();
    l.end_scope(Scope::Turn);
    assert_eq!(l.value(a), 4);
    l.spend(a, 4, Cause::Setup).unwrap();
    l.end_scope(Scope::Turn);
    assert_eq!(l.value(a), 4);
}

#[test]
fn k2_ending_an_outer_scope_ends_inner_lifetimes_only() {
    let mut l = Ledger::new(1, 0);
    let step = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).lasts(Scope::Step));
    let phase = new_amount(&mut l, AmountSpec::new(key(0, 2, 0)).lasts(Scope::Phase));
    let act = new_amount(&mut l, AmountSpec::new(key(0, 3, 0)).lasts(Scope::Act));
    for a in [step, phase, act] {
        l.gain(a, 1, Cause::Setup).unwrap();
    }
    l.end_scope(Scope::Step);
    assert_eq!((l.value(step), l.value(phase), l.value(act)), (0, 1, 1));
    l.gain(step, 1, Cause::Setup).unwrap();
    l.end_scope(Scope::Turn);
    assert_eq!((l.value(step), l.value(phase), l.value(act)), (0, 0, 1));
    l.end_scope(Scope::Act);
    assert_eq!(l.value(act), 0);
}

#[test]
fn k2_reset_after_a_lowered_cap_stays_within_the_cap() {
    let mut l = Ledger::new(1, 0);
    let a = new_amount(&mut l, resetting(5, 8, Scope::Phase));
    l.set_cap(a, Some(3), Cause::Setup).unwrap();
    l.spend(a, 3, Cause::Setup).unwrap();
    l.end_scope(Scope::Phase);
    assert_eq!(l.value(a), 3);
    l.check_invariants().unwrap();
}

#[test]
fn k2_state_hash_changes_when_a_pool_empties() {
    let mut l = Ledger::new(1, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).lasts(Scope::Phase));
    l.gain(a, 2, Cause::Setup).unwrap();
    let before = hash(&l);
    l.end_scope(Scope::Phase);
    assert_ne!(hash(&l), before);
}

/// An amount of key (0, 1, 0) starting at `start`, capped at `cap`, that returns to its start when
/// `scope` ends.
fn resetting(start: i64, cap: i64, scope: Scope) -> AmountSpec {
    AmountSpec::new(key(0, 1, 0))
        .start(start)
        .cap(cap)
        .lasts(scope)
        .resets()
}

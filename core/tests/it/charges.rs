//! K3 two-faced charge tracks.

use crate::{assert_refused, key};
use coffer_core::{
    Cause, Change, ChargeOp, Ledger, Part, Recurrence, Refusal, Scope, TrackId, TrackSpec,
};

fn track(spec: TrackSpec) -> (Ledger, TrackId) {
    let mut l = Ledger::new(2, 3);
    let t = l.add_track(spec).unwrap();
    (l, t)
}

#[test]
fn k3_1_track_starts_with_every_charge_active() {
    let (l, t) = track(TrackSpec::new(key(0, 1, 0), 3));
    let tr = l.track(t).unwrap();
    assert_eq!((tr.limit(), tr.active(), tr.inactive()), (3, 3, 0));
}

#[test]
fn k3_2_spend_is_all_or_nothing() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), 3));
    l.spend_charges(t, 1, Cause::Setup).unwrap();
    let r = assert_refused(&mut l, |l| l.spend_charges(t, 3, Cause::Setup));
    assert_eq!(
        r,
        Refusal::InsufficientCharges {
            key: key(0, 1, 0),
            need: 3,
            active: 2
        }
    );
    assert_eq!(l.active(t), 2);
    l.spend_charges(t, 2, Cause::Setup).unwrap();
    assert_eq!(l.active(t), 0);
    assert!(matches!(
        l.events()[1].change,
        Change::Charges {
            op: ChargeOp::Spend,
            before: 2,
            after: 0,
            ..
        }
    ));
}

#[test]
fn k3_3_lose_flips_at_most_the_active_charges_and_reports_how_many() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), 3));
    assert_eq!(l.lose_charges(t, 2, Cause::Setup).unwrap(), 2);
    assert_eq!(l.lose_charges(t, 5, Cause::Setup).unwrap(), 1);
    assert_eq!(l.active(t), 0);
    assert_eq!(l.lose_charges(t, u32::MAX, Cause::Setup).unwrap(), 0);
    assert_eq!(l.events().len(), 2, "losing nothing changes nothing");
}

#[test]
fn k3_4_recover_flips_at_most_the_inactive_charges() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), 4));
    l.spend_charges(t, 3, Cause::Setup).unwrap();
    assert_eq!(l.recover_charges(t, 2, Cause::Setup).unwrap(), 2);
    assert_eq!(l.recover_charges(t, u32::MAX, Cause::Setup).unwrap(), 1);
    assert_eq!(l.active(t), 4);
}

#[test]
fn k3_4_recover_with_none_inactive_is_a_reported_noop_and_a_cost_needing_it_fails() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), 2));
    let events = l.events().len();
    assert_eq!(l.recover_charges(t, 1, Cause::Setup).unwrap(), 0);
    assert_eq!(l.events().len(), events);
    let r = assert_refused(&mut l, |l| l.recover_exactly(t, 1, Cause::Setup));
    assert_eq!(
        r,
        Refusal::NothingToRecover {
            key: key(0, 1, 0),
            limit: 2
        }
    );
    let r = assert_refused(&mut l, |l| l.pay_cost(&[Part::Recover(t, 1)], Cause::Setup));
    assert!(matches!(r, Refusal::NothingToRecover { .. }));
}

#[test]
fn k3_5_positive_recurrence_recovers_at_its_scope_end() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), 3).recurring(1, Scope::Phase));
    l.spend_charges(t, 3, Cause::Setup).unwrap();
    l.end_scope(Scope::Step);
    assert_eq!(l.active(t), 0, "a step ending is not the phase ending");
    l.end_scope(Scope::Phase);
    assert_eq!(l.active(t), 1);
    l.end_scope(Scope::Act);
    assert_eq!(l.active(t), 2, "an act ending ends the phase too");
    assert!(l.events().iter().any(|e| matches!(
        e.change,
        Change::Charges {
            op: ChargeOp::Recur,
            before: 1,
            after: 2,
            ..
        }
    ) && e.cause == Cause::Upkeep(Scope::Act)));
}

#[test]
fn k3_5_negative_recurrence_loses_at_its_scope_end() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), 3).recurring(-2, Scope::Turn));
    l.end_scope(Scope::Turn);
    assert_eq!(l.active(t), 1);
    l.end_scope(Scope::Turn);
    assert_eq!(l.active(t), 0);
    l.end_scope(Scope::Turn);
    assert_eq!(l.active(t), 0);
}

#[test]
fn k3_6_unrecoverable_track_refuses_recovery_and_does_not_recur() {
    let (mut l, t) = track(
        TrackSpec::new(key(0, 1, 0), 2)
            .recurring(1, Scope::Phase)
            .unrecoverable(),
    );
    l.spend_charges(t, 2, Cause::Setup).unwrap();
    let r = assert_refused(&mut l, |l| l.recover_charges(t, 1, Cause::Setup));
    assert_eq!(r, Refusal::Unrecoverable { key: key(0, 1, 0) });
    assert_refused(&mut l, |l| l.recover_exactly(t, 1, Cause::Setup));
    l.end_scope(Scope::Phase);
    assert_eq!(l.active(t), 0);
    assert!(l.track(t).unwrap().unrecoverable());
}

#[test]
fn k3_6_unrecoverable_track_still_loses_to_negative_recurrence() {
    let (mut l, t) = track(
        TrackSpec::new(key(0, 1, 0), 2)
            .recurring(-1, Scope::Phase)
            .unrecoverable(),
    );
    l.end_scope(Scope::Phase);
    assert_eq!(l.active(t), 1);
}

#[test]
fn k3_7_sources_feed_one_shared_track() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 10), 2).recurring(1, Scope::Phase));
    l.spend_charges(t, 1, Cause::Setup).unwrap();
    l.add_capacity(t, 11, 3, 1, Cause::Setup).unwrap();
    let tr = l.track(t).unwrap();
    assert_eq!(
        (tr.limit(), tr.active()),
        (5, 4),
        "added capacity arrives active"
    );
    assert_eq!(l.recurrence(t), 2, "recurrence sums over sources");
    assert_eq!(l.contributions(t).count(), 2);
    l.spend_charges(t, 4, Cause::Setup).unwrap();
    l.end_scope(Scope::Phase);
    assert_eq!(l.active(t), 2);
    // The upgrade goes: its capacity and recurrence leave with it, active charges above the limit go.
    l.recover_charges(t, 3, Cause::Setup).unwrap();
    assert_eq!(l.remove_capacity(t, 11, Cause::Setup).unwrap(), 3);
    let tr = l.track(t).unwrap();
    assert_eq!((tr.limit(), tr.active()), (2, 2));
    assert_eq!(l.recurrence(t), 1);
    l.check_invariants().unwrap();
}

#[test]
fn k3_7_recurrence_policies_max_and_fixed() {
    let (mut l, t) = track(
        TrackSpec::new(key(0, 1, 0), 1)
            .recurring(1, Scope::Phase)
            .policy(Recurrence::Max),
    );
    l.add_capacity(t, 5, 1, 1, Cause::Setup).unwrap();
    assert_eq!(l.recurrence(t), 1);
    l.add_capacity(t, 6, 0, 3, Cause::Setup).unwrap();
    assert_eq!(l.recurrence(t), 3);
    let u = l
        .add_track(
            TrackSpec::new(key(0, 2, 0), 4)
                .recurring(1, Scope::Phase)
                .policy(Recurrence::Fixed(-1)),
        )
        .unwrap();
    l.add_capacity(u, 7, 1, 5, Cause::Setup).unwrap();
    assert_eq!(l.recurrence(u), -1);
}

#[test]
fn k3_7_capacity_overflow_is_refused() {
    let (mut l, t) = track(TrackSpec::new(key(0, 1, 0), u32::MAX));
    let r = assert_refused(&mut l, |l| l.add_capacity(t, 1, 1, 0, Cause::Setup));
    assert!(matches!(r, Refusal::Overflow { n: 1, .. }), "{r}");
    // Summed recurrence saturates instead of overflowing.
    l.add_capacity(t, 2, 0, i32::MAX, Cause::Setup).unwrap();
    l.add_capacity(t, 3, 0, i32::MAX, Cause::Setup).unwrap();
    assert_eq!(l.recurrence(t), i32::MAX);
}

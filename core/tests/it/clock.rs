//! K10 the clock's upkeep and K11 state-based checks.

use crate::{key, new_amount};
use coffer_core::{AmountSpec, Cause, Change, Clock, Event, Ledger, Refusal, Scope, TrackSpec};

#[test]
fn k10_upkeep_order() {
    let mut l = Ledger::new(1, 0);
    // Created in an order opposite to the documented upkeep order, so creation order cannot explain it.
    let p = l.add_permanent(key(0, 3, 0), Some(Scope::Phase)).unwrap();
    let t = l
        .add_track(TrackSpec::new(key(0, 2, 0), 2).recurring(1, Scope::Phase))
        .unwrap();
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).lasts(Scope::Phase));
    let b = new_amount(&mut l, AmountSpec::new(key(0, 1, 1)).lasts(Scope::Step));
    l.activate(p, Cause::Setup).unwrap();
    l.spend_charges(t, 2, Cause::Setup).unwrap();
    l.gain(a, 4, Cause::Setup).unwrap();
    l.gain(b, 1, Cause::Setup).unwrap();
    l.take_events();
    l.end_scope(Scope::Phase);
    let order: Vec<&str> = l
        .events()
        .iter()
        .map(|e| {
            assert_eq!(e.cause, Cause::Upkeep(Scope::Phase));
            match e.change {
                Change::Expire { .. } => "expire",
                Change::Charges { .. } => "recur",
                Change::Exhaust { .. } => "ready",
                Change::Scope { .. } => "clock",
                _ => "other",
            }
        })
        .collect();
    // 1. emptying (in creation order), 2. recurrence, 3. readying, 4. the clock.
    assert_eq!(order, ["expire", "expire", "recur", "ready", "clock"]);
    assert!(matches!(l.events()[0].change, Change::Expire { amount, .. } if amount == a));
    assert_eq!(l.clock(), clock_at(0, 0, 1, 0));
}

#[test]
fn k10_clock_counts_scopes_and_restarts_the_inner_ones() {
    let mut l = Ledger::new(1, 0);
    l.end_scope(Scope::Step);
    l.end_scope(Scope::Step);
    l.end_scope(Scope::Phase);
    assert_eq!(l.clock(), clock_at(0, 0, 1, 0));
    l.end_scope(Scope::Turn);
    l.end_scope(Scope::Turn);
    assert_eq!(l.clock(), clock_at(0, 2, 0, 0));
    l.end_scope(Scope::Act);
    assert_eq!(l.clock(), clock_at(1, 0, 0, 0));
    l.end_scope(Scope::Game);
    assert_eq!(l.clock(), clock_at(1, 0, 0, 0));
    let saturated = Clock {
        act: u32::MAX,
        turn: u32::MAX,
        phase: u32::MAX,
        step: u32::MAX,
    };
    assert_eq!(saturated.after(Scope::Step).step, u32::MAX);
    assert_eq!(saturated.after(Scope::Act).act, u32::MAX);
}

/// A toy rule set of state-based checks: when `first` reaches its floor, the owner pays 1 of `second`;
/// when `second` reaches its floor, a charge of `track` is lost.
#[test]
fn k11_settle_until_nothing_changes() {
    let mut l = Ledger::new(1, 0);
    let first = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).start(1));
    let second = new_amount(&mut l, AmountSpec::new(key(0, 2, 0)).start(1));
    let track = l.add_track(TrackSpec::new(key(0, 3, 0), 2)).unwrap();
    l.take_events();
    l.spend(first, 1, Cause::Setup).unwrap();
    let mut seen = Vec::new();
    let end = l
        .settle(0, 100, |l, e: Event| -> Result<(), Refusal> {
            seen.push(e.change);
            match e.change {
                Change::Floor { amount, .. } if amount == first => {
                    l.pay(second, 1, Cause::StateCheck)?;
                }
                Change::Floor { amount, .. } if amount == second => {
                    l.lose_charges(track, 1, Cause::StateCheck)?;
                }
                _ => {}
            }
            Ok(())
        })
        .unwrap();
    assert_eq!(end, l.events().len());
    // Spend, Floor(first), Pay, Floor(second), Charges: every consequence was visited, in order.
    assert_eq!(seen.len(), 5);
    assert!(matches!(
        seen[4],
        Change::Charges {
            before: 2,
            after: 1,
            ..
        }
    ));
    assert_eq!((l.value(second), l.active(track)), (0, 1));
}

#[test]
fn k11_a_rule_that_never_settles_is_stopped() {
    let mut l = Ledger::new(1, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)));
    l.gain(a, 1, Cause::Setup).unwrap();
    let r = l.settle(0, 50, |l, _e| -> Result<(), Refusal> {
        l.gain(a, 1, Cause::StateCheck)?;
        Ok(())
    });
    assert!(
        matches!(r, Err(Refusal::Invalid(ref m)) if m.contains("did not settle after 50")),
        "{r:?}"
    );
}

/// The clock reading `act`, `turn`, `phase`, `step`.
fn clock_at(act: u32, turn: u32, phase: u32, step: u32) -> Clock {
    Clock {
        act,
        turn,
        phase,
        step,
    }
}

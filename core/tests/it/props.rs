//! Property tests: random operation sequences on a ledger with several owners and every kind of resource
//! keep every kernel invariant (K1-K4), refusals change nothing (K8), rolled-back transactions restore the
//! exact state hash (K8), and the event log replays to the same state hash (K9).

use crate::{hash, key};
use coffer_core::{
    AmountId, AmountSpec, Cause, Event, Ledger, Owner, Part, PermanentId, Recurrence, Refusal,
    Scope, TrackId, TrackSpec, Zone, ZoneId,
};
use proptest::prelude::*;
use serde::de::DeserializeOwned;

const OWNERS: u16 = 3;
const AMOUNTS: usize = 4 * OWNERS as usize;
const TRACKS: usize = 4;
const ZONES: usize = 2 * OWNERS as usize + 3;
const PERMANENTS: usize = 4;

/// A handle with index `i` (handles serialize as their index); `i` may name nothing.
fn handle<T: DeserializeOwned>(i: usize) -> T {
    serde_json::from_str(&i.to_string()).unwrap()
}

/// Per owner: a capped phase pool, an uncapped persistent amount, a resetting turn amount, and an amount
/// with a negative floor. Tracks with sources, recurrence of both signs, one unrecoverable. Zones:
/// reinforcements and a pool per owner, two one-per-owner places and a free place. Permanents.
fn setup(seed: u64, stock: &[u32]) -> Ledger {
    let mut l = Ledger::new(OWNERS, seed);
    for o in 0..OWNERS {
        l.add_amount(AmountSpec::new(key(o, 1, 0)).cap(10).lasts(Scope::Phase))
            .unwrap();
        l.add_amount(AmountSpec::new(key(o, 2, 0))).unwrap();
        l.add_amount(
            AmountSpec::new(key(o, 3, 0))
                .start(3)
                .cap(5)
                .lasts(Scope::Turn)
                .resets(),
        )
        .unwrap();
        l.add_amount(
            AmountSpec::new(key(o, 4, 0))
                .floor(-5)
                .cap(20)
                .lasts(Scope::Act),
        )
        .unwrap();
    }
    let t0 = l
        .add_track(TrackSpec::new(key(0, 10, 0), 2).recurring(1, Scope::Phase))
        .unwrap();
    l.add_capacity(t0, 100, 1, 1, Cause::Setup).unwrap();
    let t1 = l
        .add_track(TrackSpec::new(key(1, 10, 1), 3).recurring(-1, Scope::Turn))
        .unwrap();
    l.add_capacity(t1, 101, 2, 2, Cause::Setup).unwrap();
    l.add_track(
        TrackSpec::new(key(2, 10, 2), 2)
            .recurring(2, Scope::Act)
            .unrecoverable(),
    )
    .unwrap();
    l.add_track(
        TrackSpec::new(key(0, 11, 3), 4)
            .recurring(1, Scope::Step)
            .policy(Recurrence::Max),
    )
    .unwrap();
    for o in 0..OWNERS {
        l.add_zone(Zone::new(key(o, 20, 0))).unwrap();
        l.add_zone(Zone::new(key(o, 21, 0)).face(1)).unwrap();
    }
    l.add_zone(Zone::new(key(u16::MAX, 22, 0)).one_per_owner())
        .unwrap();
    l.add_zone(Zone::new(key(u16::MAX, 22, 1)).one_per_owner())
        .unwrap();
    l.add_zone(Zone::new(key(u16::MAX, 23, 0))).unwrap();
    for (o, &n) in stock.iter().enumerate() {
        l.stock(Owner(o as u16), handle(2 * o), n, Cause::Setup)
            .unwrap();
    }
    for p in 0..PERMANENTS {
        let ready_at = [
            None,
            Some(Scope::Phase),
            Some(Scope::Turn),
            Some(Scope::Act),
        ][p];
        l.add_permanent(
            key((p % usize::from(OWNERS)) as u16, 30, p as u32),
            ready_at,
        )
        .unwrap();
    }
    l.take_events();
    l
}

#[derive(Clone, Debug)]
enum Op {
    Gain(usize, u64),
    Spend(usize, u64),
    Pay(usize, u64),
    Set(usize, i64),
    SetCap(usize, Option<i64>),
    Split(Vec<(usize, u64)>, u64),
    SpendCharges(usize, u32),
    Lose(usize, u32),
    Recover(usize, u32),
    RecoverExactly(usize, u32),
    AddCapacity(usize, u32, u32, i32),
    RemoveCapacity(usize, u32),
    Move(u16, usize, usize, u32),
    GainTokens(u16, usize, u32),
    Place(u16, usize, Option<usize>),
    Activate(usize),
    Ready(usize),
    ReadyOwner(u16),
    Limit(u16, u64, u64),
    Cost(Vec<PartSpec>),
    EndScope(Scope),
    Random(u64),
    Shuffle(u8),
}

#[derive(Clone, Debug)]
enum PartSpec {
    Spend(usize, u64),
    Charges(usize, u32),
    Recover(usize, u32),
    Tokens(u16, usize, usize, u32),
    Exhaust(usize),
}

fn n64() -> impl Strategy<Value = u64> {
    prop_oneof![6 => 0..12u64, 1 => Just(u64::MAX), 1 => any::<u64>()]
}

fn n32() -> impl Strategy<Value = u32> {
    prop_oneof![6 => 0..6u32, 1 => Just(u32::MAX), 1 => any::<u32>()]
}

fn i64s() -> impl Strategy<Value = i64> {
    prop_oneof![6 => -6..25i64, 1 => Just(i64::MIN), 1 => Just(i64::MAX), 1 => any::<i64>()]
}

fn owner() -> impl Strategy<Value = u16> {
    prop_oneof![8 => 0..OWNERS, 1 => Just(OWNERS), 1 => Just(u16::MAX)]
}

// One past each table: a handle this ledger does not have.
fn amount() -> impl Strategy<Value = usize> {
    0..=AMOUNTS
}
fn track() -> impl Strategy<Value = usize> {
    0..=TRACKS
}
fn zone() -> impl Strategy<Value = usize> {
    0..=ZONES
}
fn permanent() -> impl Strategy<Value = usize> {
    0..=PERMANENTS
}
fn scope() -> impl Strategy<Value = Scope> {
    prop_oneof![
        Just(Scope::Game),
        Just(Scope::Act),
        Just(Scope::Turn),
        Just(Scope::Phase),
        Just(Scope::Step)
    ]
}

fn part() -> impl Strategy<Value = PartSpec> {
    prop_oneof![
        (amount(), n64()).prop_map(|(a, n)| PartSpec::Spend(a, n)),
        (track(), n32()).prop_map(|(t, k)| PartSpec::Charges(t, k)),
        (track(), n32()).prop_map(|(t, k)| PartSpec::Recover(t, k)),
        (owner(), zone(), zone(), n32()).prop_map(|(o, f, t, n)| PartSpec::Tokens(o, f, t, n)),
        permanent().prop_map(PartSpec::Exhaust),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (amount(), n64()).prop_map(|(a, n)| Op::Gain(a, n)),
        3 => (amount(), n64()).prop_map(|(a, n)| Op::Spend(a, n)),
        2 => (amount(), n64()).prop_map(|(a, n)| Op::Pay(a, n)),
        1 => (amount(), i64s()).prop_map(|(a, v)| Op::Set(a, v)),
        1 => (amount(), proptest::option::of(i64s())).prop_map(|(a, c)| Op::SetCap(a, c)),
        1 => (proptest::collection::vec((amount(), n64()), 0..4), n64()).prop_map(|(v, n)| Op::Split(v, n)),
        1 => proptest::collection::vec((amount(), 0..6u64), 1..4).prop_map(|v| {
            let need = v.iter().map(|p| p.1).sum();
            Op::Split(v, need)
        }),
        2 => (track(), n32()).prop_map(|(t, k)| Op::SpendCharges(t, k)),
        1 => (track(), n32()).prop_map(|(t, k)| Op::Lose(t, k)),
        1 => (track(), n32()).prop_map(|(t, k)| Op::Recover(t, k)),
        1 => (track(), n32()).prop_map(|(t, k)| Op::RecoverExactly(t, k)),
        1 => (track(), 100..104u32, n32(), any::<i32>()).prop_map(|(t, s, c, r)| Op::AddCapacity(t, s, c, r)),
        1 => (track(), 99..104u32).prop_map(|(t, s)| Op::RemoveCapacity(t, s)),
        3 => (owner(), zone(), zone(), n32()).prop_map(|(o, f, t, n)| Op::Move(o, f, t, n)),
        2 => (owner(), zone(), n32()).prop_map(|(o, t, n)| Op::GainTokens(o, t, n)),
        2 => (owner(), zone(), proptest::option::of(zone())).prop_map(|(o, t, f)| Op::Place(o, t, f)),
        2 => permanent().prop_map(Op::Activate),
        1 => permanent().prop_map(Op::Ready),
        1 => owner().prop_map(Op::ReadyOwner),
        1 => (owner(), n64(), n64()).prop_map(|(o, m, x)| Op::Limit(o, m, x)),
        2 => proptest::collection::vec(part(), 1..4).prop_map(Op::Cost),
        2 => scope().prop_map(Op::EndScope),
        1 => n64().prop_map(Op::Random),
        1 => any::<u8>().prop_map(Op::Shuffle),
    ]
}

fn to_part(p: &PartSpec) -> Part {
    match *p {
        PartSpec::Spend(a, n) => Part::Spend(handle(a), n),
        PartSpec::Charges(t, k) => Part::Charges(handle(t), k),
        PartSpec::Recover(t, k) => Part::Recover(handle(t), k),
        PartSpec::Tokens(o, f, t, n) => Part::Tokens {
            owner: Owner(o),
            from: handle(f),
            to: handle(t),
            n,
        },
        PartSpec::Exhaust(p) => Part::Exhaust(handle(p)),
    }
}

/// Applies one operation, checking what it reports against what it did; `Err` is the kernel's refusal.
fn apply(l: &mut Ledger, op: &Op) -> Result<(), Refusal> {
    let cause = Cause::Action {
        player: Owner(0),
        code: 1,
    };
    match *op {
        Op::Gain(a, n) => {
            let id: AmountId = handle(a);
            let before = l.value(id);
            let g = l.gain(id, n, cause)?;
            assert_eq!(g.gained.checked_add(g.lost), Some(n));
            assert_eq!(l.value(id).abs_diff(before), g.gained);
        }
        Op::Spend(a, n) => {
            let id: AmountId = handle(a);
            let before = l.value(id);
            l.spend(id, n, cause)?;
            assert_eq!(before.abs_diff(l.value(id)), n);
        }
        Op::Pay(a, n) => {
            let id: AmountId = handle(a);
            let before = l.value(id);
            let p = l.pay(id, n, cause)?;
            assert_eq!(p.paid.checked_add(p.shortfall), Some(n));
            assert_eq!(before.abs_diff(l.value(id)), p.paid);
            if p.shortfall > 0 {
                assert_eq!(l.value(id), l.amount(id).unwrap().floor());
            }
        }
        Op::Set(a, v) => l.set(handle(a), v, cause)?,
        Op::SetCap(a, c) => l.set_cap(handle(a), c, cause)?,
        Op::Split(ref parts, need) => {
            let alloc: Vec<(AmountId, u64)> = parts.iter().map(|&(a, n)| (handle(a), n)).collect();
            l.spend_split(&alloc, need, cause)?;
        }
        Op::SpendCharges(t, k) => l.spend_charges(handle(t), k, cause)?,
        Op::Lose(t, k) => {
            let id: TrackId = handle(t);
            let before = l.active(id);
            let lost = l.lose_charges(id, k, cause)?;
            assert_eq!(before - l.active(id), lost);
        }
        Op::Recover(t, k) => {
            let id: TrackId = handle(t);
            let before = l.active(id);
            let got = l.recover_charges(id, k, cause)?;
            assert_eq!(l.active(id) - before, got);
        }
        Op::RecoverExactly(t, k) => l.recover_exactly(handle(t), k, cause)?,
        Op::AddCapacity(t, s, c, r) => l.add_capacity(handle(t), s, c, r, cause)?,
        Op::RemoveCapacity(t, s) => {
            l.remove_capacity(handle(t), s, cause)?;
        }
        Op::Move(o, f, t, n) => {
            l.move_tokens(Owner(o), handle(f), handle(t), n, cause)?;
        }
        Op::GainTokens(o, t, n) => {
            let g = l.gain_tokens(Owner(o), handle(t), n, cause)?;
            assert_eq!(g.gained + g.lost, u64::from(n));
        }
        Op::Place(o, t, f) => {
            l.place_from_reserve(Owner(o), handle(t), f.map(handle::<ZoneId>), cause)?;
        }
        Op::Activate(p) => l.activate(handle(p), cause)?,
        Op::Ready(p) => l.ready(handle::<PermanentId>(p), cause)?,
        Op::ReadyOwner(o) => l.ready_owner(Owner(o), cause),
        Op::Limit(o, measured, max) => {
            let excess = l.check_limit(key(o, 40, 0), measured, max, cause);
            assert_eq!(
                u64::from(excess),
                measured.saturating_sub(max).min(u64::from(u32::MAX))
            );
        }
        Op::Cost(ref parts) => {
            let parts: Vec<Part> = parts.iter().map(to_part).collect();
            l.pay_cost(&parts, cause)?;
        }
        Op::EndScope(s) => l.end_scope(s),
        Op::Random(n) => {
            let v = l.random_below(n, cause);
            assert!(v < n || n == 0);
        }
        Op::Shuffle(len) => {
            let mut items: Vec<u8> = (0..len).collect();
            l.shuffle(&mut items, cause);
            items.sort_unstable();
            assert!(items.iter().copied().eq(0..len));
        }
    }
    Ok(())
}

/// Every invariant the kernel promises, checked from the outside as well as by `check_invariants`.
fn check(l: &Ledger, supply: &[u32]) {
    l.check_invariants().unwrap();
    for a in l.amounts() {
        assert!(
            a.floor() <= a.value() && a.cap().is_none_or(|c| a.value() <= c),
            "{a:?}"
        );
    }
    for t in l.tracks() {
        assert!(t.active() <= t.limit(), "{t:?}");
    }
    for (o, &n) in supply.iter().enumerate() {
        let owner = Owner(o as u16);
        let held: u64 = (0..ZONES)
            .map(|z| u64::from(l.tokens(handle(z), owner)))
            .sum();
        assert_eq!(held, u64::from(n), "{owner}'s tokens");
        assert_eq!(l.supply(owner), n);
    }
}

/// Applies `op`; a refusal must leave the hash and the log exactly as they were.
fn step(l: &mut Ledger, op: &Op, supply: &[u32]) -> bool {
    let before = hash(l);
    let events = l.events().len();
    let ok = apply(l, op).is_ok();
    if !ok {
        assert_eq!(hash(l), before, "refused {op:?} changed the state");
        assert_eq!(l.events().len(), events, "refused {op:?} emitted an event");
    }
    check(l, supply);
    ok
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: 128,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn k1_k4_k8_k9_random_sequences_keep_every_invariant_and_replay(
        seed in any::<u64>(),
        stock in proptest::collection::vec(1..8u32, OWNERS as usize),
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let initial = setup(seed, &stock);
        check(&initial, &stock);
        let mut l = initial.clone();
        let mut log: Vec<Event> = Vec::new();
        for op in &ops {
            step(&mut l, op, &stock);
            l.drain_events_into(&mut log);
        }
        // K9: the log replays, from the initial state, to the same state.
        let mut replay = initial.clone();
        for e in &log {
            replay.redo(e).unwrap();
        }
        prop_assert_eq!(hash(&replay), hash(&l));
        prop_assert_eq!(&replay, &l);
        // Snapshots (JSON and binary) keep the hash; so does the log.
        let json: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
        prop_assert_eq!(hash(&json), hash(&l));
        let bin: Ledger = postcard::from_bytes(&postcard::to_allocvec(&l).unwrap()).unwrap();
        prop_assert_eq!(hash(&bin), hash(&l));
        let back: Vec<Event> = serde_json::from_str(&serde_json::to_string(&log).unwrap()).unwrap();
        prop_assert_eq!(back, log);
    }

    #[test]
    fn k8_a_rolled_back_transaction_returns_the_exact_prior_hash(
        seed in any::<u64>(),
        stock in proptest::collection::vec(1..8u32, OWNERS as usize),
        prefix in proptest::collection::vec(op(), 0..20),
        inner in proptest::collection::vec(op(), 1..30),
        nested in proptest::collection::vec(op(), 0..10),
        commit_nested in any::<bool>(),
    ) {
        let mut l = setup(seed, &stock);
        for op in &prefix {
            step(&mut l, op, &stock);
        }
        let before = hash(&l);
        let snapshot = l.clone();
        let events = l.events().len();
        let mark = l.begin();
        for op in &inner {
            step(&mut l, op, &stock);
        }
        let inner_mark = l.begin();
        let inner_hash = hash(&l);
        for op in &nested {
            step(&mut l, op, &stock);
        }
        if commit_nested {
            l.commit(inner_mark);
        } else {
            l.rollback(inner_mark);
            prop_assert_eq!(hash(&l), inner_hash);
        }
        l.rollback(mark);
        prop_assert_eq!(hash(&l), before);
        prop_assert_eq!(&l, &snapshot);
        prop_assert_eq!(l.events().len(), events);
        check(&l, &stock);
    }
}

//! Property tests: random operation sequences on a ledger with several owners and every kind of resource
//! keep every kernel invariant (K1-K4), refusals change nothing (K8), rolled-back transactions restore the
//! exact state hash (K8), and the event log replays to the same state hash (K9). The read-only checks give
//! exactly the refusal of their operation (K8.2), the board index agrees with a scan of every zone (K4.8),
//! the game's bank is conserved like a player's supply (K4.6), payouts are all or nothing (K4.7), bounded
//! demands follow their measure (K6.2), and the ways to pay a generic cost are sound and complete (K7.2).

use crate::{hash, key, new_amount};
use coffer_core::{
    AmountId, AmountSpec, Bound, Cause, Event, Generic, Kind, Ledger, Measure, Owner, Part,
    PermanentId, Recurrence, Refusal, Scope, TrackId, TrackSpec, Unlaid, Zone, ZoneId,
};
use proptest::prelude::*;
use serde::de::DeserializeOwned;

const OWNERS: u16 = 3;
const AMOUNTS: usize = 4 * OWNERS as usize;
const TRACKS: usize = 4;
const ZONES: usize = 2 * OWNERS as usize + 3;
const PERMANENTS: usize = 4;
/// The game's tokens (a bank), stocked in the free place, the last zone.
const BANK: u32 = 10;
/// The zone classes of `setup`: reinforcements, pools, one-per-owner places, the free place.
const CLASSES: [u16; 4] = [20, 21, 22, 23];

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
        new_amount(&mut l, AmountSpec::new(key(o, 2, 0)));
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
    l.stock(Owner::GAME, handle(ZONES - 1), BANK, Cause::Setup)
        .unwrap();
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
    Payout(u16, usize, Vec<(usize, u32)>),
    Return(u16, u16),
    ReturnAll(u16),
    Demand(u16, u8, usize, Option<u32>),
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
    Split(Vec<(usize, u64)>, u64),
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
        (
            proptest::collection::vec((amount(), 0..6u64), 0..3),
            0..12u64
        )
            .prop_map(|(v, n)| PartSpec::Split(v, n)),
    ]
}

fn class() -> impl Strategy<Value = u16> {
    prop_oneof![4 => proptest::sample::select(&CLASSES[..]), 1 => Just(99u16)]
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
        2 => (owner(), zone(), proptest::collection::vec((zone(), 0..5u32), 0..4))
            .prop_map(|(o, f, to)| Op::Payout(o, f, to)),
        1 => (owner(), class()).prop_map(|(o, c)| Op::Return(o, c)),
        1 => class().prop_map(Op::ReturnAll),
        2 => (owner(), 0..3u8, 0..=ZONES.max(AMOUNTS), proptest::option::of(0..6u32))
            .prop_map(|(o, m, i, b)| Op::Demand(o, m, i, b)),
        2 => scope().prop_map(Op::EndScope),
        1 => n64().prop_map(Op::Random),
        1 => any::<u8>().prop_map(Op::Shuffle),
    ]
}

fn to_part<'a>(p: &PartSpec, splits: &'a [Vec<(AmountId, u64)>], at: &mut usize) -> Part<'a> {
    match *p {
        PartSpec::Split(_, need) => {
            let allocation = &splits[*at];
            *at += 1;
            Part::Split { allocation, need }
        }
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
            let predicted = l.can_spend(id, n);
            let done = l.spend(id, n, cause);
            assert_eq!(predicted, done, "can_spend");
            done?;
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
            let predicted = l.can_spend_split(&alloc, need);
            let done = l.spend_split(&alloc, need, cause);
            assert_eq!(predicted, done, "can_spend_split");
            done?;
        }
        Op::SpendCharges(t, k) => {
            let predicted = l.can_spend_charges(handle(t), k);
            let done = l.spend_charges(handle(t), k, cause);
            assert_eq!(predicted, done, "can_spend_charges");
            done?;
        }
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
        Op::RecoverExactly(t, k) => {
            let predicted = l.can_recover(handle(t), k);
            let done = l.recover_exactly(handle(t), k, cause);
            assert_eq!(predicted, done, "can_recover");
            done?;
        }
        Op::AddCapacity(t, s, c, r) => l.add_capacity(handle(t), s, c, r, cause)?,
        Op::RemoveCapacity(t, s) => {
            l.remove_capacity(handle(t), s, cause)?;
        }
        Op::Move(o, f, t, n) => {
            let predicted = l.can_move_tokens(Owner(o), handle(f), handle(t), n);
            let done = l.move_tokens(Owner(o), handle(f), handle(t), n, cause);
            assert_eq!(
                predicted.map(|(_, bounced)| bounced),
                done,
                "can_move_tokens"
            );
            done?;
        }
        Op::GainTokens(o, t, n) => {
            let g = l.gain_tokens(Owner(o), handle(t), n, cause)?;
            assert_eq!(g.gained + g.lost, u64::from(n));
        }
        Op::Place(o, t, f) => {
            let fallback = f.map(handle::<ZoneId>);
            let predicted = l.can_place(Owner(o), handle(t), fallback);
            let done = l.place_from_reserve(Owner(o), handle(t), fallback, cause);
            assert_eq!(predicted, done, "can_place");
            done?;
        }
        Op::Activate(p) => {
            let predicted = l.can_exhaust(handle(p));
            let done = l.activate(handle(p), cause);
            assert_eq!(predicted, done, "can_exhaust");
            done?;
        }
        Op::Ready(p) => l.ready(handle::<PermanentId>(p), cause)?,
        Op::ReadyOwner(o) => l.ready_owner(Owner(o), cause),
        Op::Limit(o, measured, max) => {
            let excess = l.check_limit(key(o, 40, 0), measured, max, cause);
            assert_eq!(
                u64::from(excess),
                measured.saturating_sub(max).min(u64::from(u32::MAX))
            );
        }
        Op::Cost(ref specs) => {
            let splits: Vec<Vec<(AmountId, u64)>> = specs
                .iter()
                .filter_map(|p| match p {
                    PartSpec::Split(v, _) => Some(v.iter().map(|&(a, n)| (handle(a), n)).collect()),
                    _ => None,
                })
                .collect();
            let mut at = 0;
            let parts: Vec<Part> = specs.iter().map(|p| to_part(p, &splits, &mut at)).collect();
            let predicted = l.check_cost(&parts);
            let done = l.pay_cost(&parts, cause);
            assert_eq!(predicted, done, "check_cost");
            done?;
        }
        Op::Payout(o, f, ref to) => {
            let owner = Owner(o);
            let to: Vec<(ZoneId, u32)> = to.iter().map(|&(z, n)| (handle(z), n)).collect();
            let before: Vec<u32> = to.iter().map(|&(z, _)| l.tokens(z, owner)).collect();
            let paid = l.payout(owner, handle(f), &to, cause)?;
            // K4.7: everyone owed receives in full, or nobody receives anything.
            for (i, &(z, n)) in to.iter().enumerate() {
                let owed_here: u32 = to
                    .iter()
                    .filter(|&&(other, _)| other == z)
                    .map(|p| p.1)
                    .sum();
                let now = l.tokens(z, owner);
                if z == handle::<ZoneId>(f) || !paid.paid {
                    assert!(!paid.paid || now <= before[i], "{paid:?}");
                    if !paid.paid {
                        assert_eq!(now, before[i], "a withheld payout moved tokens");
                    }
                } else {
                    assert_eq!(now, before[i] + owed_here, "{n} owed into {z}");
                }
            }
            assert_eq!(paid.paid, paid.owed <= paid.held);
        }
        Op::Return(o, c) => {
            let owner = Owner(o);
            let class = Kind(c);
            let on_board: u32 = l
                .zones_in(class)
                .filter(|&z| l.reserve_of(l.zone(z).map_or(0, |z| z.supply), owner) != Some(z))
                .map(|z| l.tokens(z, owner))
                .sum();
            let returned = l.return_tokens(owner, class, cause)?;
            assert_eq!(returned, on_board);
            let left: u32 = l
                .zones_in(class)
                .filter(|&z| l.reserve_of(l.zone(z).map_or(0, |z| z.supply), owner) != Some(z))
                .map(|z| l.tokens(z, owner))
                .sum();
            assert_eq!(left, 0);
        }
        Op::ReturnAll(c) => {
            l.return_all_tokens(Kind(c), cause)?;
        }
        Op::Demand(o, m, i, bound) => {
            let owner = Owner(o);
            let measure = match m {
                0 => Measure::Amount(handle(i)),
                1 => Measure::Tokens {
                    owner,
                    zone: handle(i),
                },
                _ => Measure::Class {
                    owner,
                    class: Kind(CLASSES[i % CLASSES.len()]),
                },
            };
            let bound = bound.map_or(Bound::LoseHalf, Bound::AtMost);
            let measured = l.measure(measure);
            let excess = l.demand(key(o, 41, m.into()), measure, bound, cause)?;
            let measured = measured.unwrap();
            assert_eq!(excess, measured.saturating_sub(bound.target(measured)));
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
    let owners = supply
        .iter()
        .enumerate()
        .map(|(o, &n)| (Owner(o as u16), n))
        .chain([(Owner::GAME, BANK)]);
    let holders: Vec<Owner> = owners.clone().map(|(o, _)| o).collect();
    for (owner, n) in owners {
        let held: u64 = (0..ZONES)
            .map(|z| u64::from(l.tokens(handle(z), owner)))
            .sum();
        assert_eq!(held, u64::from(n), "{owner}'s tokens");
        assert_eq!(l.supply(owner), n);
        // K4.8: the board index agrees with a scan of every zone.
        let scan: Vec<ZoneId> = (0..ZONES)
            .map(handle::<ZoneId>)
            .filter(|&z| l.tokens(z, owner) > 0)
            .collect();
        assert_eq!(l.zones_holding(owner).collect::<Vec<_>>(), scan);
        assert_eq!(l.zones_holding(owner).len(), scan.len());
        for c in CLASSES {
            let class = Kind(c);
            let of_class = |z: &ZoneId| l.zone(*z).unwrap().key.kind == class;
            let holding: Vec<ZoneId> = scan.iter().copied().filter(of_class).collect();
            assert_eq!(
                l.zones_holding_in(owner, class).collect::<Vec<_>>(),
                holding
            );
            let without: Vec<ZoneId> = (0..ZONES)
                .map(handle::<ZoneId>)
                .filter(|z| of_class(z) && l.tokens(*z, owner) == 0)
                .collect();
            assert_eq!(l.zones_without(owner, class).collect::<Vec<_>>(), without);
            // Open to the owner: no other holder's tokens (the game's included).
            let open: Vec<ZoneId> = (0..ZONES)
                .map(handle::<ZoneId>)
                .filter(|z| {
                    of_class(z) && holders.iter().all(|&h| h == owner || l.tokens(*z, h) == 0)
                })
                .collect();
            assert_eq!(l.zones_open_to(owner, class).collect::<Vec<_>>(), open);
            for z in (0..ZONES).map(handle::<ZoneId>).filter(of_class) {
                assert_eq!(
                    l.is_open_to(z, owner),
                    open.contains(&z),
                    "{z:?} for {owner}"
                );
            }
            let count: u32 = holding.iter().map(|&z| l.tokens(z, owner)).sum();
            assert_eq!(l.tokens_in(owner, class), count);
        }
    }
    // K6.2: every bounded demand's excess is what its measure is above its target.
    for d in l.pending() {
        if d.measure != Measure::Ruleset {
            let measured = l.measure(d.measure).unwrap();
            assert_eq!(d.excess, measured - d.target, "{d:?}");
            assert!(d.excess > 0);
        }
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
        // Written on the setup's layout (which `l` shares with `initial`, unless an operation changed
        // it), both forms read back to the same ledger.
        let layout = initial.layout();
        let laid = l.laid_out(&layout);
        let json: Unlaid = serde_json::from_str(&serde_json::to_string(&laid).unwrap()).unwrap();
        prop_assert_eq!(&json.lay(&layout).unwrap(), &l);
        let bin: Unlaid = postcard::from_bytes(&postcard::to_allocvec(&laid).unwrap()).unwrap();
        prop_assert_eq!(&bin.lay(&layout).unwrap(), &l);
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

    #[test]
    fn k7_2_the_ways_to_pay_a_generic_cost_are_sound_and_complete(
        values in proptest::collection::vec(0..5u64, 4),
        specific in proptest::collection::vec((0..4usize, 0..3u64), 0..3),
        pools in proptest::sample::subsequence(vec![0usize, 1, 2, 3], 0..=4),
        n in 0..7u64,
    ) {
        let mut l = Ledger::new(1, 0);
        let ids: Vec<AmountId> = (0..4)
            .map(|k| new_amount(&mut l, AmountSpec::new(key(0, k, 0))))
            .collect();
        for (&id, &v) in ids.iter().zip(&values) {
            l.gain(id, v, Cause::Setup).unwrap();
        }
        let parts: Vec<Part> = specific.iter().map(|&(a, k)| Part::Spend(ids[a], k)).collect();
        let pools: Vec<AmountId> = pools.iter().map(|&p| ids[p]).collect();
        let mut ways = Vec::new();
        let count = l.payments(&parts, Generic { n, pools: &pools }, &mut ways).unwrap();
        let k = pools.len();
        prop_assert_eq!(ways.len(), count * k);
        // Sound: every way listed pays, and no way is listed twice.
        let listed: Vec<&[u64]> = if k == 0 { Vec::new() } else { ways.chunks(k).collect() };
        for (i, way) in listed.iter().enumerate() {
            prop_assert!(!listed[..i].contains(way), "{way:?} listed twice");
            let split = Ledger::split_of(&pools, way);
            let mut all = parts.clone();
            all.push(Part::Split { allocation: &split, need: n });
            prop_assert_eq!(l.check_cost(&all), Ok(()));
            let mut paid = l.clone();
            prop_assert!(paid.pay_cost(&all, Cause::Setup).is_ok());
        }
        // Complete: every allocation of n over the pools (each part 0..=n) that pays is listed.
        let mut expected = 0usize;
        let mut way = vec![0u64; k];
        loop {
            if way.iter().sum::<u64>() == n {
                let split = Ledger::split_of(&pools, &way);
                let mut all = parts.clone();
                all.push(Part::Split { allocation: &split, need: n });
                if l.check_cost(&all).is_ok() {
                    expected += 1;
                    prop_assert!(k == 0 || listed.contains(&&way[..]), "{way:?} pays but is not listed");
                }
            }
            // The next allocation, as an odometer over 0..=n per pool.
            let mut i = 0;
            while i < k && way[i] == n {
                way[i] = 0;
                i += 1;
            }
            if i == k {
                break;
            }
            way[i] += 1;
        }
        prop_assert_eq!(count, expected);
    }
}

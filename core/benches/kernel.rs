//! Kernel primitives against a hand-written baseline doing the same work (same checks, same event
//! recorded in a `Vec`), in the same process: criterion measures each side, then an interleaved
//! `Instant` pass prints "op: kernel X ns, baseline Y ns, ratio Z" for every primitive.
//!
//! Run: `cargo bench -p coffer-core --bench kernel -- --warm-up-time 1 --measurement-time 2`.

use coffer_core::{
    AmountId, AmountSpec, Cause, Change, ChargeOp, Clock, Event, Key, Kind, Ledger, Owner,
    PermanentId, Refusal, Scope, TokenOp, TokenRoute, TrackId, TrackSpec, Zone, ZoneId,
};
use criterion::{Criterion, Throughput};
use std::hint::black_box;
use std::time::Instant;

const CAUSE: Cause = Cause::Action {
    player: Owner(0),
    code: 1,
};
/// Events are moved out of the log every this many operations, on both sides, as a host would.
const BATCH: u32 = 128;

fn key(kind: u16) -> Key {
    Key::new(Owner(0), Kind(kind), 0)
}

// ----- the kernel side -----

struct K {
    ledger: Ledger,
    capped: AmountId,
    spendable: AmountId,
    payable: AmountId,
    split: [AmountId; 2],
    track: TrackId,
    zones: [ZoneId; 2],
    /// The move from the first zone to the second, checked once.
    route: TokenRoute,
    permanent: PermanentId,
    sink: Vec<Event>,
}

impl K {
    fn new() -> K {
        let mut ledger = Ledger::new(2, 1);
        let capped = ledger
            .add_amount(AmountSpec::new(key(1)).cap(i64::MAX))
            .unwrap();
        let big = i64::MAX / 2;
        let spendable = ledger
            .add_amount(AmountSpec::new(key(2)).start(big))
            .unwrap();
        let payable = ledger
            .add_amount(AmountSpec::new(key(3)).start(big))
            .unwrap();
        let split = [
            ledger
                .add_amount(AmountSpec::new(key(4)).start(big))
                .unwrap(),
            ledger
                .add_amount(AmountSpec::new(key(5)).start(big))
                .unwrap(),
        ];
        let track = ledger.add_track(TrackSpec::new(key(6), 2)).unwrap();
        let zones = [
            ledger.add_zone(Zone::new(key(7))).unwrap(),
            ledger.add_zone(Zone::new(key(8))).unwrap(),
        ];
        ledger.stock(Owner(0), zones[0], 8, Cause::Setup).unwrap();
        let route = ledger.route(Owner(0), zones[0], zones[1]).unwrap();
        let permanent = ledger.add_permanent(key(9), None).unwrap();
        ledger.take_events();
        K {
            ledger,
            capped,
            spendable,
            payable,
            split,
            track,
            zones,
            route,
            permanent,
            sink: Vec::new(),
        }
    }

    #[inline]
    fn flush(&mut self, i: u32) {
        if i.is_multiple_of(BATCH) {
            self.ledger.drain_events_into(&mut self.sink);
            self.sink.clear();
        }
    }
}

/// A ledger holding one pool that empties at every phase end.
fn pool_ledger() -> (Ledger, AmountId) {
    let mut l = Ledger::new(2, 1);
    let a = l
        .add_amount(AmountSpec::new(key(1)).lasts(Scope::Phase))
        .unwrap();
    (l, a)
}

// ----- the baseline: the same data and checks, written out by hand for exactly these operations -----

#[derive(Clone, Copy)]
struct BAmount {
    /// Its own handle (handles have no public constructor; the kernel builds them from the index).
    id: AmountId,
    key: Key,
    value: i64,
    floor: i64,
    cap: Option<i64>,
    lifetime: Scope,
    on_expiry: i64,
}

impl BAmount {
    /// The baseline's copy of the kernel's amount `a`, whose handle is `id`.
    fn of(id: AmountId, a: &coffer_core::Amount) -> BAmount {
        BAmount {
            id,
            key: a.key(),
            value: a.value(),
            floor: a.floor(),
            cap: a.cap(),
            lifetime: a.lifetime(),
            on_expiry: a.floor(),
        }
    }
}

#[derive(Clone, Copy)]
struct BTrack {
    key: Key,
    limit: u32,
    active: u32,
}

#[derive(Clone, Copy)]
struct BPermanent {
    key: Key,
    exhausted: bool,
}

struct B {
    amounts: Vec<BAmount>,
    tracks: Vec<BTrack>,
    zones: Vec<Zone>,
    owners: usize,
    tokens: Vec<u32>,
    reserve: Vec<Option<ZoneId>>,
    permanents: Vec<BPermanent>,
    clock: Clock,
    log: Vec<Event>,
    sink: Vec<Event>,
    // Handles are indices; the baseline gets them from the kernel's ledger built the same way.
    ids: K,
}

/// The handle with index `i` (handles serialize as their index).
fn handle<T: serde::de::DeserializeOwned>(i: usize) -> T {
    serde_json::from_str(&i.to_string()).unwrap()
}

fn missing(index: usize) -> Refusal {
    Refusal::NoSuchResource {
        what: std::borrow::Cow::Borrowed("amount"),
        index: index as u32,
    }
}

impl B {
    fn new() -> B {
        let ids = K::new();
        let l = &ids.ledger;
        let amounts = l
            .amounts()
            .iter()
            .enumerate()
            .map(|(i, a)| BAmount::of(handle(i), a))
            .collect();
        let tracks = l
            .tracks()
            .iter()
            .map(|t| BTrack {
                key: t.key(),
                limit: t.limit(),
                active: t.active(),
            })
            .collect();
        let zones = l.zones().to_vec();
        let owners = usize::from(l.owners());
        let mut tokens = vec![0; zones.len() * owners];
        tokens[ids.zones[0].index() * owners] = 8;
        let reserve = vec![Some(ids.zones[0]), None];
        let permanents = l
            .permanents()
            .iter()
            .map(|p| BPermanent {
                key: p.key(),
                exhausted: p.exhausted(),
            })
            .collect();
        B {
            amounts,
            tracks,
            zones,
            owners,
            tokens,
            reserve,
            permanents,
            clock: Clock::default(),
            log: Vec::new(),
            sink: Vec::new(),
            ids,
        }
    }

    fn pool() -> (B, AmountId) {
        let mut b = B::new();
        let (l, a) = pool_ledger();
        b.amounts = vec![BAmount::of(a, &l.amounts()[0])];
        b.tracks.clear();
        b.permanents.clear();
        (b, a)
    }

    /// Records the event `change` of `key`, caused by `cause`.
    #[inline]
    fn record(&mut self, key: Key, change: Change, cause: Cause) {
        self.log.push(Event { key, change, cause });
    }

    #[inline]
    fn flush(&mut self, i: u32) {
        if i.is_multiple_of(BATCH) {
            self.sink.append(&mut self.log);
            self.sink.clear();
        }
    }

    #[inline]
    fn gain(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<(u64, u64), Refusal> {
        let a = self.amounts.get(id.index()).ok_or(missing(id.index()))?;
        if n == 0 {
            return Ok((0, 0));
        }
        let before = a.value;
        let (after, lost) = match a.cap {
            Some(cap) => {
                let gained = n.min(cap.abs_diff(before));
                (before.wrapping_add_unsigned(gained), n - gained)
            }
            None => {
                let after = before.checked_add_unsigned(n).ok_or(Refusal::Overflow {
                    op: std::borrow::Cow::Borrowed("gain"),
                    n,
                    key: a.key,
                })?;
                (after, 0)
            }
        };
        let key = a.key;
        self.amounts[id.index()].value = after;
        self.record(
            key,
            Change::Gain {
                amount: id,
                before,
                after,
                lost,
            },
            cause,
        );
        Ok((n - lost, lost))
    }

    #[inline]
    fn spend(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<(), Refusal> {
        let a = self.amounts.get(id.index()).ok_or(missing(id.index()))?;
        let have = a.value.abs_diff(a.floor);
        if n > have {
            return Err(Refusal::Insufficient {
                key: a.key,
                need: n,
                have,
            });
        }
        if n == 0 {
            return Ok(());
        }
        self.debit(id, n, cause);
        Ok(())
    }

    /// Takes `n` (already known to be affordable, and not 0) from amount `id`, recording the spend and,
    /// when the amount reaches its floor, the floor.
    #[inline]
    fn debit(&mut self, id: AmountId, n: u64, cause: Cause) {
        let a = &mut self.amounts[id.index()];
        let (key, before, floor) = (a.key, a.value, a.floor);
        let after = before.wrapping_sub_unsigned(n);
        a.value = after;
        self.record(
            key,
            Change::Spend {
                amount: id,
                before,
                after,
            },
            cause,
        );
        if after == floor {
            self.record(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
    }

    #[inline]
    fn pay(&mut self, id: AmountId, n: u64, cause: Cause) -> Result<(u64, u64), Refusal> {
        let a = self.amounts.get(id.index()).ok_or(missing(id.index()))?;
        if n == 0 {
            return Ok((0, 0));
        }
        let paid = n.min(a.value.abs_diff(a.floor));
        let (key, before, floor) = (a.key, a.value, a.floor);
        let after = before.wrapping_sub_unsigned(paid);
        let shortfall = n - paid;
        self.amounts[id.index()].value = after;
        self.record(
            key,
            Change::Pay {
                amount: id,
                before,
                after,
                shortfall,
            },
            cause,
        );
        if after == floor && before != floor {
            self.record(
                key,
                Change::Floor {
                    amount: id,
                    at: floor,
                },
                cause,
            );
        }
        Ok((paid, shortfall))
    }

    #[inline]
    fn spend_split(
        &mut self,
        allocation: &[(AmountId, u64)],
        need: u64,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let sum = allocation
            .iter()
            .try_fold(0u64, |s, &(_, n)| s.checked_add(n));
        if sum != Some(need) {
            return Err(Refusal::BadAllocation {
                sum: sum.unwrap_or(u64::MAX),
                need,
            });
        }
        for (i, &(id, _)) in allocation.iter().enumerate() {
            if allocation[..i].iter().any(|&(other, _)| other == id) {
                continue;
            }
            let total: u64 = allocation
                .iter()
                .filter(|&&(other, _)| other == id)
                .map(|&(_, n)| n)
                .sum();
            let a = self.amounts.get(id.index()).ok_or(missing(id.index()))?;
            let have = a.value.abs_diff(a.floor);
            if total > have {
                return Err(Refusal::Insufficient {
                    key: a.key,
                    need: total,
                    have,
                });
            }
        }
        for &(id, n) in allocation {
            if n == 0 {
                continue;
            }
            self.debit(id, n, cause);
        }
        Ok(())
    }

    #[inline]
    fn set_active(&mut self, id: TrackId, after: u32, op: ChargeOp, cause: Cause) {
        let t = &mut self.tracks[id.index()];
        let before = t.active;
        if before != after {
            t.active = after;
            let key = t.key;
            self.record(
                key,
                Change::Charges {
                    track: id,
                    op,
                    before,
                    after,
                },
                cause,
            );
        }
    }

    #[inline]
    fn spend_charges(&mut self, id: TrackId, k: u32, cause: Cause) -> Result<(), Refusal> {
        let t = self.tracks.get(id.index()).ok_or(missing(id.index()))?;
        if k > t.active {
            return Err(Refusal::InsufficientCharges {
                key: t.key,
                need: k,
                active: t.active,
            });
        }
        let after = t.active - k;
        self.set_active(id, after, ChargeOp::Spend, cause);
        Ok(())
    }

    #[inline]
    fn recover_charges(
        &mut self,
        id: TrackId,
        k: u32,
        unrecoverable: bool,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let t = self.tracks.get(id.index()).ok_or(missing(id.index()))?;
        if unrecoverable {
            return Err(Refusal::Unrecoverable { key: t.key });
        }
        let got = k.min(t.limit - t.active);
        let after = t.active + got;
        self.set_active(id, after, ChargeOp::Recover, cause);
        Ok(got)
    }

    #[inline]
    fn move_tokens(
        &mut self,
        owner: Owner,
        from: ZoneId,
        to: ZoneId,
        n: u32,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let src = *self.zones.get(from.index()).ok_or(missing(from.index()))?;
        let dst = *self.zones.get(to.index()).ok_or(missing(to.index()))?;
        // The kernel's checks: both zones hold the same supply, whose reinforcements are per (supply, owner).
        if src.supply != dst.supply {
            return Err(Refusal::Invalid(format!(
                "cannot move tokens between supplies {} and {}",
                src.supply, dst.supply
            )));
        }
        let o = self.owners;
        let reserve = self
            .reserve
            .get(usize::from(src.supply) * o + owner.index())
            .copied()
            .flatten()
            .ok_or_else(|| Refusal::Invalid(format!("{owner} has no token supply")))?;
        let have = self.tokens[from.index() * o + owner.index()];
        if n > have {
            return Err(Refusal::NotEnoughTokens {
                owner,
                zone: src.key,
                need: n,
                have,
            });
        }
        if n == 0 || from == to {
            return Ok(0);
        }
        let placed = if dst.one_per_owner {
            u32::from(self.tokens[to.index() * o + owner.index()] == 0).min(n)
        } else {
            n
        };
        let bounced = n - placed;
        for (target, count, op) in [
            (to, placed, TokenOp::Move),
            (reserve, bounced, TokenOp::Bounce),
        ] {
            if count > 0 {
                self.tokens[from.index() * o + owner.index()] -= count;
                self.tokens[target.index() * o + owner.index()] += count;
                let key = self.zones[target.index()].key;
                self.record(
                    key,
                    Change::Tokens {
                        owner,
                        op,
                        from,
                        to: target,
                        n: count,
                    },
                    cause,
                );
            }
        }
        Ok(bounced)
    }

    #[inline]
    fn activate(&mut self, id: PermanentId, cause: Cause) -> Result<(), Refusal> {
        let p = self.permanents.get(id.index()).ok_or(missing(id.index()))?;
        if p.exhausted {
            return Err(Refusal::Exhausted { key: p.key });
        }
        let key = p.key;
        self.set_exhausted(id, key, true, cause);
        Ok(())
    }

    /// Marks permanent `id` (whose key is `key`) exhausted or ready, and records it.
    #[inline]
    fn set_exhausted(&mut self, id: PermanentId, key: Key, exhausted: bool, cause: Cause) {
        self.permanents[id.index()].exhausted = exhausted;
        self.record(
            key,
            Change::Exhaust {
                permanent: id,
                exhausted,
            },
            cause,
        );
    }

    #[inline]
    fn ready(&mut self, id: PermanentId, cause: Cause) -> Result<(), Refusal> {
        let p = self.permanents.get(id.index()).ok_or(missing(id.index()))?;
        if p.exhausted {
            let key = p.key;
            self.set_exhausted(id, key, false, cause);
        }
        Ok(())
    }

    /// The upkeep of one pool: empty what expires (no tracks or permanents here), advance the clock.
    #[inline]
    fn end_scope(&mut self, scope: Scope) {
        let cause = Cause::Upkeep(scope);
        for i in 0..self.amounts.len() {
            let a = self.amounts[i];
            let target = a
                .cap
                .map_or(a.on_expiry, |c| a.on_expiry.min(c))
                .max(a.floor);
            if a.lifetime != Scope::Game && a.lifetime.ends_with(scope) && a.value != target {
                self.amounts[i].value = target;
                self.record(
                    a.key,
                    Change::Expire {
                        amount: a.id,
                        before: a.value,
                        after: target,
                    },
                    cause,
                );
            }
        }
        let before = self.clock;
        let after = before.after(scope);
        self.clock = after;
        self.record(
            Key::new(Owner::GAME, Kind(u16::MAX), 0),
            Change::Scope {
                scope,
                before,
                after,
            },
            cause,
        );
    }
}

// ----- the measured operations: the same sequence on each side -----

/// Names and per-iteration operation counts of the measured operations.
const OPS: [(&str, u32); 10] = [
    ("gain (capped)", 1),
    ("spend", 1),
    ("pay", 1),
    ("spend_charges + recover_charges", 2),
    ("move_tokens there and back", 2),
    ("activate + ready", 2),
    ("gain + end_scope(phase) of a pool", 2),
    ("spend_split over 2 holders", 1),
    // A read-only check against the plain count a ruleset would write instead (kernel3): the baseline
    // reads its own token count, the kernel answers everything `move_tokens` would refuse.
    ("can_move_tokens vs a plain count", 1),
    // The same check along a route made once (what a ruleset keeps for a move it asks about every step).
    ("can_move_along a route vs a plain count", 1),
];

/// The read-only checks' operations in [`OPS`].
const CHECKS: [usize; 2] = [8, 9];

/// Runs `iters` iterations of operation `op` on the kernel; returns something to keep it alive.
fn run_kernel(op: usize, k: &mut K, pool: &mut (Ledger, AmountId), iters: u32) -> u64 {
    let mut acc = 0u64;
    for i in 1..=iters {
        match op {
            0 => {
                acc += k
                    .ledger
                    .gain(black_box(k.capped), black_box(1), CAUSE)
                    .map_or(0, |g| g.lost)
            }
            1 => {
                acc += u64::from(
                    k.ledger
                        .spend(black_box(k.spendable), black_box(1), CAUSE)
                        .is_ok(),
                )
            }
            2 => {
                acc += k
                    .ledger
                    .pay(black_box(k.payable), black_box(1), CAUSE)
                    .map_or(0, |p| p.shortfall)
            }
            3 => {
                acc += u64::from(k.ledger.spend_charges(black_box(k.track), 1, CAUSE).is_ok());
                acc += u64::from(
                    k.ledger
                        .recover_charges(black_box(k.track), 1, CAUSE)
                        .unwrap_or(0),
                );
            }
            4 => {
                let [a, b] = k.zones;
                acc += u64::from(
                    k.ledger
                        .move_tokens(Owner(0), black_box(a), b, 1, CAUSE)
                        .unwrap_or(9),
                );
                acc += u64::from(
                    k.ledger
                        .move_tokens(Owner(0), black_box(b), a, 1, CAUSE)
                        .unwrap_or(9),
                );
            }
            5 => {
                acc += u64::from(k.ledger.activate(black_box(k.permanent), CAUSE).is_ok());
                acc += u64::from(k.ledger.ready(black_box(k.permanent), CAUSE).is_ok());
            }
            6 => {
                let (l, a) = pool;
                acc += l.gain(black_box(*a), 1, CAUSE).map_or(0, |g| g.gained);
                l.end_scope(black_box(Scope::Phase));
                if i % BATCH == 0 {
                    l.drain_events_into(&mut k.sink);
                    k.sink.clear();
                }
            }
            7 => {
                let alloc = [(k.split[0], 1), (k.split[1], 1)];
                acc += u64::from(
                    k.ledger
                        .spend_split(black_box(&alloc), black_box(2), CAUSE)
                        .is_ok(),
                );
            }
            8 => {
                let [a, b] = k.zones;
                acc += u64::from(
                    k.ledger
                        .can_move_tokens(Owner(0), black_box(a), b, black_box(1))
                        .is_ok(),
                );
            }
            _ => {
                acc += u64::from(
                    k.ledger
                        .can_move_along(black_box(&k.route), black_box(1))
                        .is_ok(),
                );
            }
        }
        k.flush(i);
    }
    acc
}

fn run_baseline(op: usize, b: &mut B, pool: &mut (B, AmountId), iters: u32) -> u64 {
    let mut acc = 0u64;
    let ids = (
        b.ids.capped,
        b.ids.spendable,
        b.ids.payable,
        b.ids.split,
        b.ids.track,
        b.ids.zones,
        b.ids.permanent,
    );
    let (capped, spendable, payable, split, track, zones, permanent) = ids;
    for i in 1..=iters {
        match op {
            0 => {
                acc += b
                    .gain(black_box(capped), black_box(1), CAUSE)
                    .map_or(0, |g| g.1)
            }
            1 => acc += u64::from(b.spend(black_box(spendable), black_box(1), CAUSE).is_ok()),
            2 => {
                acc += b
                    .pay(black_box(payable), black_box(1), CAUSE)
                    .map_or(0, |p| p.1)
            }
            3 => {
                acc += u64::from(b.spend_charges(black_box(track), 1, CAUSE).is_ok());
                acc += u64::from(
                    b.recover_charges(black_box(track), 1, false, CAUSE)
                        .unwrap_or(0),
                );
            }
            4 => {
                let [za, zb] = zones;
                acc += u64::from(
                    b.move_tokens(Owner(0), black_box(za), zb, 1, CAUSE)
                        .unwrap_or(9),
                );
                acc += u64::from(
                    b.move_tokens(Owner(0), black_box(zb), za, 1, CAUSE)
                        .unwrap_or(9),
                );
            }
            5 => {
                acc += u64::from(b.activate(black_box(permanent), CAUSE).is_ok());
                acc += u64::from(b.ready(black_box(permanent), CAUSE).is_ok());
            }
            6 => {
                let (pb, a) = pool;
                acc += pb.gain(black_box(*a), 1, CAUSE).map_or(0, |g| g.0);
                pb.end_scope(black_box(Scope::Phase));
                if i % BATCH == 0 {
                    b.sink.append(&mut pb.log);
                    b.sink.clear();
                }
            }
            7 => {
                let alloc = [(split[0], 1), (split[1], 1)];
                acc += u64::from(
                    b.spend_split(black_box(&alloc), black_box(2), CAUSE)
                        .is_ok(),
                );
            }
            _ => {
                // What a ruleset writes instead of the check: its own count of the owner's tokens there.
                let [za, _] = zones;
                acc += u64::from(b.tokens[black_box(za).index() * b.owners] >= black_box(1));
            }
        }
        b.flush(i);
    }
    acc
}

/// Both sides must have done the same thing: same values, same events.
fn check_equivalence() {
    for (op, (name, _)) in OPS.iter().enumerate() {
        let (mut k, mut kp) = (K::new(), pool_ledger());
        let (mut b, mut bp) = (B::new(), B::pool());
        run_kernel(op, &mut k, &mut kp, 3);
        run_baseline(op, &mut b, &mut bp, 3);
        let (ke, be) = if op == 6 {
            (kp.0.events().to_vec(), bp.0.log.clone())
        } else {
            (k.ledger.events().to_vec(), b.log.clone())
        };
        assert_eq!(ke, be, "{name}: the baseline does not do the kernel's work");
        if CHECKS.contains(&op) {
            let (mut k, mut kp) = (K::new(), pool_ledger());
            let (mut b, mut bp) = (B::new(), B::pool());
            assert_eq!(
                run_kernel(op, &mut k, &mut kp, 3),
                run_baseline(op, &mut b, &mut bp, 3),
                "{name}: the check and the count disagree"
            );
        }
    }
}

fn criterion_benches(c: &mut Criterion) {
    for (op, (name, per_iter)) in OPS.iter().enumerate() {
        let mut group = c.benchmark_group(*name);
        group.throughput(Throughput::Elements(u64::from(BATCH * per_iter)));
        group.bench_function("kernel", |bench| {
            let (mut k, mut pool) = (K::new(), pool_ledger());
            bench.iter(|| run_kernel(op, &mut k, &mut pool, BATCH));
        });
        group.bench_function("baseline", |bench| {
            let (mut b, mut pool) = (B::new(), B::pool());
            bench.iter(|| run_baseline(op, &mut b, &mut pool, BATCH));
        });
        group.finish();
    }
}

/// The `q` quantile (0 = minimum, 0.5 = median) of the samples.
fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q) as usize]
}

/// Interleaved kernel/baseline rounds in this process; prints the per-operation ratio table.
///
/// Rounds are short and many, and both the minimum and the median are reported: on a shared machine a
/// round that was preempted only ever gets slower, so the minimum is the best estimate of the work itself
/// and the median shows how much the load moved it.
fn ratios(rounds: usize, iters: u32) {
    println!(
        "\nKernel primitives vs hand-written baseline: {rounds} interleaved rounds of {iters} iterations \
         each; ns per operation, event included (min / median)"
    );
    let mut table = vec![
        "| operation | kernel ns/op (min / median) | baseline ns/op (min / median) | ratio of minima | ratio of medians |"
            .to_string(),
        "|---|---:|---:|---:|---:|".to_string(),
    ];
    for (op, (name, per_iter)) in OPS.iter().enumerate() {
        let (mut k, mut kp) = (K::new(), pool_ledger());
        let (mut b, mut bp) = (B::new(), B::pool());
        let (mut kt, mut bt) = (Vec::new(), Vec::new());
        let per = f64::from(iters) * f64::from(*per_iter);
        for round in 0..rounds {
            // Alternate which side runs first so that neither always follows the other.
            for side in [round % 2, 1 - round % 2] {
                let start = Instant::now();
                if side == 0 {
                    black_box(run_kernel(op, &mut k, &mut kp, iters));
                    kt.push(start.elapsed().as_nanos() as f64 / per);
                } else {
                    black_box(run_baseline(op, &mut b, &mut bp, iters));
                    bt.push(start.elapsed().as_nanos() as f64 / per);
                }
            }
        }
        let (kmin, kmed, bmin, bmed) = (
            quantile(&kt, 0.0),
            quantile(&kt, 0.5),
            quantile(&bt, 0.0),
            quantile(&bt, 0.5),
        );
        println!(
            "{name}: kernel {kmin:.2} ns, baseline {bmin:.2} ns, ratio {:.2} (medians: {kmed:.2} / {bmed:.2} ns, ratio {:.2})",
            kmin / bmin,
            kmed / bmed
        );
        table.push(format!(
            "| {name} | {kmin:.2} / {kmed:.2} | {bmin:.2} / {bmed:.2} | {:.2}x | {:.2}x |",
            kmin / bmin,
            kmed / bmed
        ));
    }
    println!("\n{}", table.join("\n"));
}

fn main() {
    check_equivalence();
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`, `--test`) only smoke-test.
    let args: Vec<String> = std::env::args().collect();
    let quick = !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test");
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
    if quick {
        ratios(2, 1_000);
    } else {
        ratios(301, 20_000);
    }
}

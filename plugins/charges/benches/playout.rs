//! Random-playout throughput of `charges`: legal-action enumeration plus apply, through the host-facing
//! `DynGame` (static adapter) against a baseline that drives the typed ruleset directly with the same
//! transaction per action, in the same process; prints actions per second and the ratio.
//!
//! Run: `cargo bench -p coffer-charges --bench playout -- --warm-up-time 1 --measurement-time 3`.

use coffer_charges::{Action, Charges, State};
use coffer_core::{Adapter, Owner, Ruleset, Setup};
use criterion::Criterion;
use std::hint::black_box;
use std::time::Instant;

/// Actions per measured batch.
const ACTIONS: u32 = 10_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn dyn_playout(rng: &mut Rng) -> u32 {
    let rs = Adapter::shared(Charges::new());
    let setup = Setup::new(2, rng.next());
    let mut game = rs.new_game(&setup).unwrap();
    let mut done = 0;
    while done < ACTIONS {
        let p = Owner((rng.next() % 2) as u16);
        let mut n = game.legal_actions(p);
        let p = if n == 0 { Owner(1 - p.0) } else { p };
        if n == 0 {
            n = game.legal_actions(p);
        }
        if n == 0 {
            game = rs.new_game(&setup).unwrap();
            continue;
        }
        game.apply_legal(p, (rng.next() % n as u64) as usize)
            .unwrap();
        done += 1;
    }
    done
}

fn typed_playout(rng: &mut Rng) -> u32 {
    let r = Charges::new();
    let fresh = |seed| {
        let mut s: State = r.new_game(2, seed, &Default::default()).unwrap();
        s.ledger.take_events();
        s
    };
    let seed = rng.next();
    let mut state = fresh(seed);
    let mut legal: Vec<Action> = Vec::new();
    let mut events = Vec::new();
    let mut done = 0;
    while done < ACTIONS {
        let mut p = Owner((rng.next() % 2) as u16);
        legal.clear();
        r.legal_actions(&state, p, &mut legal);
        if legal.is_empty() {
            p = Owner(1 - p.0);
            r.legal_actions(&state, p, &mut legal);
        }
        if legal.is_empty() {
            state = fresh(seed);
            continue;
        }
        let a = legal[(rng.next() % legal.len() as u64) as usize];
        let mark = state.ledger.begin();
        r.apply(&mut state, p, &a).unwrap();
        state.ledger.commit(mark);
        events.clear();
        state.ledger.drain_events_into(&mut events);
        done += 1;
    }
    done
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    c.bench_function("charges playout 10k actions (DynGame)", |b| {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        b.iter(|| black_box(dyn_playout(&mut rng)))
    });
    c.bench_function("charges playout 10k actions (typed baseline)", |b| {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        b.iter(|| black_box(typed_playout(&mut rng)))
    });
    // Interleaved pass for the printed ratio.
    let (mut dyn_ns, mut typed_ns) = (0u128, 0u128);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20 {
        let t = Instant::now();
        black_box(dyn_playout(&mut rng));
        dyn_ns += t.elapsed().as_nanos();
        let t = Instant::now();
        black_box(typed_playout(&mut rng));
        typed_ns += t.elapsed().as_nanos();
    }
    let actions = 20.0 * f64::from(ACTIONS);
    println!(
        "charges playout: DynGame {:.0} actions/s, typed baseline {:.0} actions/s, ratio {:.3}",
        actions / (dyn_ns as f64 / 1e9),
        actions / (typed_ns as f64 / 1e9),
        dyn_ns as f64 / typed_ns as f64
    );
    c.final_summary();
}

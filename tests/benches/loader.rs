//! Static against runtime-loaded: the per-action cost of random playouts (legal-action listing for every
//! player, a choice by index, apply) of each built-in ruleset, the same code linked into this binary and
//! loaded from its plugin library, in one run; prints the runtime/static ratio (target: at most 1.10).
//! Run: `cargo bench -p coffer-tests --bench loader`.

use coffer_core::abi::Acting;
use coffer_core::{DynRuleset, Owner, Setup};
use coffer_tests::{BUILTIN, Chooser, builtin_runtime_ruleset, static_ruleset};
use criterion::{Criterion, Throughput};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Most actions of one game before a fresh one is started.
const GAME_LIMIT: u64 = 1_000;

/// Time and actions measured per benchmark id, for the printed ratios.
static MEASURED: Mutex<BTreeMap<String, (Duration, u64)>> = Mutex::new(BTreeMap::new());

fn record(id: &str, time: Duration, actions: u64) {
    let mut m = MEASURED.lock().unwrap_or_else(|p| p.into_inner());
    let e = m.entry(id.to_owned()).or_default();
    e.0 += time;
    e.1 += actions;
}

/// A random mover among those with a legal action (`movers`: who may act and their counts), and one of
/// their actions.
fn choose(chooser: &mut Chooser, movers: &[(Owner, usize)]) -> Option<(Owner, usize)> {
    if movers.is_empty() {
        return None;
    }
    let (p, n) = movers[chooser.below(movers.len())];
    Some((p, chooser.below(n)))
}

/// Keeps the players with a legal action.
fn movers_from(acting: &[Acting], movers: &mut Vec<(Owner, usize)>) {
    movers.clear();
    movers.extend(
        acting
            .iter()
            .filter(|a| a.legal > 0)
            .map(|a| (a.owner(), a.legal)),
    );
}

/// `iters` actions over fresh games from successive seeds; only the actions are timed. One action of a
/// random playout: a random mover among those the game listed with their legal-action counts, a random
/// index, then one call that applies it and lists who may act next (`apply_legal_then_acting`; the
/// game's first list comes from `acting`).
fn time_actions(ruleset: &dyn DynRuleset, players: u16, iters: u64, seed: &mut u64) -> Duration {
    let mut elapsed = Duration::ZERO;
    let mut done = 0;
    let mut movers = Vec::new();
    while done < iters {
        *seed += 1;
        let mut game = ruleset
            .new_game(&Setup::new(players, *seed))
            .expect("new game");
        let mut chooser = Chooser::new(*seed);
        let budget = (iters - done).min(GAME_LIMIT);
        let start = Instant::now();
        movers_from(game.acting(), &mut movers);
        let mut n = 0;
        while n < budget
            && let Some((p, i)) = choose(&mut chooser, &movers)
        {
            let next = game
                .apply_legal_then_acting(p, i)
                .expect("a listed action applies");
            movers_from(next, &mut movers);
            n += 1;
        }
        elapsed += start.elapsed();
        black_box(game.state_hash());
        if n == 0 {
            panic!(
                "{}: a new game has no legal action",
                ruleset.description().id
            );
        }
        done += n;
    }
    elapsed
}

/// The smallest player count the default configuration accepts.
fn players_for(ruleset: &dyn DynRuleset) -> Option<u16> {
    let d = ruleset.description();
    (d.min_players..=d.max_players).find(|p| ruleset.new_game(&Setup::new(*p, 1)).is_ok())
}

fn bench(c: &mut Criterion) {
    for (id, _) in BUILTIN {
        let Some(statik) = static_ruleset(id) else {
            eprintln!("{id}: not registered, not measured");
            continue;
        };
        let runtime: Arc<dyn DynRuleset> = builtin_runtime_ruleset(id);
        let Some(players) = players_for(&*statik) else {
            eprintln!("{id}: no player count accepted by the default configuration, not measured");
            continue;
        };
        // The bare cost of one call across the boundary: a cached legal-action count.
        let mut group = c.benchmark_group(format!("loader-call/{id}"));
        for (mode, ruleset) in [("static", &statik), ("runtime", &runtime)] {
            let mut game = ruleset.new_game(&Setup::new(players, 1)).expect("new game");
            let p = (0..players)
                .map(Owner)
                .find(|p| game.legal_actions(*p) > 0)
                .unwrap_or(Owner(0));
            group.bench_function(mode, |b| {
                b.iter(|| black_box(game.legal_actions(black_box(p))))
            });
        }
        group.finish();
        let mut group = c.benchmark_group(format!("loader/{id}"));
        group.throughput(Throughput::Elements(1));
        for (mode, ruleset) in [("static", &statik), ("runtime", &runtime)] {
            let key = format!("{id}/{mode}");
            let mut seed = 0;
            group.bench_function(mode, |b| {
                b.iter_custom(|iters| {
                    let t = time_actions(&**ruleset, players, iters, &mut seed);
                    record(&key, t, iters);
                    t
                })
            });
        }
        group.finish();
    }
}

/// Rounds of the interleaved measurement, and actions per side per round.
const ROUNDS: usize = 15;

/// Rounds to run (`LOADER_BENCH_ROUNDS`, default [`ROUNDS`]; 0 skips the interleaved measurement).
fn rounds() -> usize {
    std::env::var("LOADER_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(ROUNDS)
}
const ROUND_ACTIONS: u64 = 20_000;

/// Static and runtime-loaded alternately, round after round, so load from other processes hits both
/// alike; returns the median of the per-round runtime/static ratios and the median ns per action of each.
fn interleaved(statik: &dyn DynRuleset, runtime: &dyn DynRuleset, players: u16) -> (f64, f64, f64) {
    let (mut ratios, mut s_ns, mut r_ns) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds() {
        let seed = 1_000_000 * (round as u64 + 1);
        let s = time_actions(statik, players, ROUND_ACTIONS, &mut seed.clone()).as_nanos() as f64;
        let r = time_actions(runtime, players, ROUND_ACTIONS, &mut seed.clone()).as_nanos() as f64;
        ratios.push(r / s);
        s_ns.push(s / ROUND_ACTIONS as f64);
        r_ns.push(r / ROUND_ACTIONS as f64);
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
    };
    (median(&mut ratios), median(&mut s_ns), median(&mut r_ns))
}

fn report() {
    if rounds() == 0 {
        return;
    }
    println!(
        "\ninterleaved static/runtime rounds ({ROUNDS} x {ROUND_ACTIONS} actions each side, same seeds):"
    );
    for (id, _) in BUILTIN {
        let Some(statik) = static_ruleset(id) else {
            continue;
        };
        let Some(players) = players_for(&*statik) else {
            continue;
        };
        let runtime = builtin_runtime_ruleset(id);
        let (ratio, s, r) = interleaved(&*statik, &*runtime, players);
        println!(
            "  {id:<15} {players} players  static {s:>9.1} ns  runtime {r:>9.1} ns  median ratio {ratio:.3} (target <= 1.10)"
        );
    }
    let m = MEASURED.lock().unwrap_or_else(|p| p.into_inner());
    let per = |k: &str| {
        m.get(k)
            .filter(|e| e.1 > 0)
            .map(|e| e.0.as_nanos() as f64 / e.1 as f64)
    };
    println!("\nstatic vs runtime-loaded, per action (random playout by legal-action index):");
    for (id, _) in BUILTIN {
        if let (Some(s), Some(r)) = (per(&format!("{id}/static")), per(&format!("{id}/runtime"))) {
            println!(
                "  {id:<15} static {s:>9.1} ns  runtime {r:>9.1} ns  ratio {:.3} (target <= 1.10)",
                r / s
            );
        }
    }
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    bench(&mut c);
    c.final_summary();
    report();
}

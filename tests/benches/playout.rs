//! Benchmarks of random playouts (actions per second per built-in ruleset, statically linked against
//! runtime-loaded, ratio printed) and of snapshot round-trips and clones of a six-player `command-tokens`
//! game. Run: `cargo bench -p coffer-tests --bench playout`.
//!
//! Times are the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`), not wall-clock time: the targets
//! are per core, and on a shared machine wall-clock time also counts the time other processes held the core.

use coffer_core::{DynGame, DynRuleset, Format, GameRng, Setup};
use coffer_host::Registry;
use coffer_host::simulate::playout;
use cpu_time::ThreadTime;
use criterion::{BenchmarkId, Criterion, Throughput};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

/// The built-in rulesets, each with the players its playouts use.
const RULESETS: [(&str, u16); 3] = [("story-acts", 2), ("charges", 2), ("command-tokens", 6)];

/// Most actions of one playout before a fresh game is started.
const PLAYOUT_LIMIT: u64 = 2_000;

/// Time and actions measured per benchmark id (warm-up included), for the printed ratios.
static MEASURED: Mutex<BTreeMap<String, (Duration, u64)>> = Mutex::new(BTreeMap::new());

fn record(id: &str, time: Duration, actions: u64) {
    let mut m = MEASURED.lock().unwrap_or_else(|p| p.into_inner());
    let e = m.entry(id.to_string()).or_default();
    e.0 += time;
    e.1 += actions;
}

fn ns_per_action(id: &str) -> Option<f64> {
    let m = MEASURED.lock().unwrap_or_else(|p| p.into_inner());
    m.get(id)
        .filter(|e| e.1 > 0)
        .map(|e| e.0.as_nanos() as f64 / e.1 as f64)
}

fn static_ruleset(id: &str) -> Arc<dyn DynRuleset> {
    let registry = Registry::with_static().expect("static rulesets");
    Arc::clone(&registry.get(id).expect("built-in ruleset linked").ruleset)
}

/// `iters` actions of random playouts, fresh games (not timed) from successive seeds.
fn time_actions(ruleset: &dyn DynRuleset, players: u16, iters: u64, seed: &mut u64) -> Duration {
    let mut done = 0;
    let mut elapsed = Duration::ZERO;
    let mut empty_games = 0;
    while done < iters {
        *seed += 1;
        let mut game = ruleset
            .new_game(&Setup::new(players, *seed))
            .expect("new game");
        let mut rng = GameRng::new(*seed);
        let start = ThreadTime::now();
        let n = playout(&mut *game, &mut rng, (iters - done).min(PLAYOUT_LIMIT))
            .expect("listed actions apply");
        elapsed += start.elapsed();
        black_box(game.state_hash());
        done += n;
        if n == 0 {
            empty_games += 1;
            assert!(empty_games < 100, "games without a legal action");
        }
    }
    elapsed
}

fn playouts(c: &mut Criterion) {
    let mut group = c.benchmark_group("playout");
    group.throughput(Throughput::Elements(1));
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));
    let mut ids = Vec::new();
    for (id, players) in RULESETS {
        let modes = [
            ("static", static_ruleset(id)),
            ("runtime", runtime_ruleset(id)),
        ];
        for (mode, ruleset) in modes {
            let name = format!("{id}/{mode}");
            let mut seed = 0u64;
            group.bench_function(BenchmarkId::new(id, mode), |b| {
                b.iter_custom(|iters| {
                    let t = time_actions(&*ruleset, players, iters, &mut seed);
                    record(&name, t, iters);
                    t
                })
            });
            ids.push(name);
        }
    }
    group.finish();
    println!("\nrandom playouts, one core (legal-action enumeration and random choice included):");
    for (id, _) in RULESETS {
        let st = ns_per_action(&format!("{id}/static"));
        let rt = ns_per_action(&format!("{id}/runtime"));
        if let Some(st) = st {
            println!(
                "  {id:<15} static  {st:>8.1} ns/action = {:>6.2} M actions/s",
                1e3 / st
            );
        }
        if let Some(rt) = rt {
            println!(
                "  {id:<15} runtime {rt:>8.1} ns/action = {:>6.2} M actions/s",
                1e3 / rt
            );
        }
        if let (Some(st), Some(rt)) = (st, rt) {
            println!(
                "  {id:<15} ratio runtime/static = {:.3}x (target <= 1.10x)",
                rt / st
            );
        }
    }
}

/// A six-player `command-tokens` game some way into play.
fn six_player_game(ruleset: &dyn DynRuleset) -> Box<dyn DynGame> {
    let mut game = ruleset
        .new_game(&Setup::new(6, 42))
        .expect("six-player game");
    let mut rng = GameRng::new(42);
    playout(&mut *game, &mut rng, 150).expect("listed actions apply");
    game
}

fn snapshots(c: &mut Criterion) {
    let mut group = c.benchmark_group("command-tokens-6p");
    group.measurement_time(Duration::from_secs(2));
    group.warm_up_time(Duration::from_millis(500));
    let modes = [
        ("static", static_ruleset("command-tokens")),
        ("runtime", runtime_ruleset("command-tokens")),
    ];
    for (mode, ruleset) in &modes {
        let game = six_player_game(&**ruleset);
        for (name, format) in [("json", Format::Json), ("binary", Format::Binary)] {
            let size = game.snapshot(format).expect("snapshot").len();
            let id = format!("snapshot-roundtrip-{name}/{mode}");
            group.bench_function(&id, |b| {
                b.iter_custom(|iters| {
                    let start = ThreadTime::now();
                    for _ in 0..iters {
                        let bytes = game.snapshot(format).expect("snapshot");
                        let restored = ruleset.restore(format, black_box(&bytes)).expect("restore");
                        black_box(restored);
                    }
                    let t = start.elapsed();
                    record(&id, t, iters);
                    t
                })
            });
            println!("  {name} snapshot of the six-player game: {size} bytes");
        }
        let id = format!("clone/{mode}");
        group.bench_function(&id, |b| {
            b.iter_custom(|iters| {
                let start = ThreadTime::now();
                for _ in 0..iters {
                    black_box(game.clone_game());
                }
                let t = start.elapsed();
                record(&id, t, iters);
                t
            })
        });
    }
    group.finish();
    println!("\nsix-player command-tokens game:");
    for (mode, _) in &modes {
        for (name, target) in [("json", 20_000.0), ("binary", 2_000.0)] {
            if let Some(ns) = ns_per_action(&format!("snapshot-roundtrip-{name}/{mode}")) {
                println!(
                    "  {mode:<7} {name:<6} snapshot round-trip {:>8.2} us = {:.2}x the {} us target",
                    ns / 1e3,
                    ns / target,
                    target / 1e3
                );
            }
        }
        if let Some(ns) = ns_per_action(&format!("clone/{mode}")) {
            println!("  {mode:<7} clone {:>8.2} us", ns / 1e3);
        }
    }
}

/// The ruleset `id` loaded at runtime from its plugin library, built by cargo beside this bench binary.
fn runtime_ruleset(id: &str) -> Arc<dyn DynRuleset> {
    coffer_tests::builtin_runtime_ruleset(id)
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    playouts(&mut c);
    snapshots(&mut c);
    c.final_summary();
}

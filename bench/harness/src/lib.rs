//! What the board benchmarks (`bench/wide-board`, `bench/guide-board`) share: the three sides they time
//! (the hand-written plain game, the ruleset linked statically, the same ruleset loaded from its cdylib),
//! how each side's ruleset is found, interleaved rounds and the ratios they print against the targets.
//! Each bench brings what is its own: how a batch of playouts of a side is played and timed.
//!
//! Times are what the bench's `run` measures (thread CPU time in both benches). On a shared machine a
//! preempted round only ever gets slower, so the minimum round is the best estimate of the work itself and
//! the median shows how much the load moved it; the ratios are also given as the median of the per-round
//! ratios, which compares sides measured moments apart.

use coffer_core::DynRuleset;
use coffer_host::{Origin, Registry};
use criterion::{Criterion, Throughput};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The sides a board bench compares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// The game written by hand in plain Rust.
    Plain,
    /// The ruleset linked into the bench, driven through the host's adapter.
    Static,
    /// The same ruleset loaded at runtime from its cdylib.
    Loaded,
}

/// Every side, in the order the tables print them.
pub const SIDES: [Side; 3] = [Side::Plain, Side::Static, Side::Loaded];

impl Side {
    /// Its name in the tables and criterion's groups.
    pub fn name(self) -> &'static str {
        match self {
            Side::Plain => "plain",
            Side::Static => "kernel-static",
            Side::Loaded => "kernel-loaded",
        }
    }
}

/// Ruleset `id`, linked into this bench binary, as a host finds it (`Registry::with_static`).
///
/// # Panics
/// If it is not linked.
pub fn static_ruleset(id: &str) -> Arc<dyn DynRuleset> {
    let registry = Registry::with_static().expect("static rulesets");
    let entry = registry.get(id).unwrap_or_else(|_| panic!("{id} linked"));
    assert!(matches!(entry.origin, Origin::Static));
    Arc::clone(&entry.ruleset)
}

/// Ruleset `id` loaded from the cdylib of crate `crate_name`, which cargo builds beside the bench binary
/// (`target/<profile>/deps`).
///
/// # Panics
/// If the library does not load or does not provide `id`.
pub fn loaded_ruleset(crate_name: &str, id: &str) -> Arc<dyn DynRuleset> {
    let exe = std::env::current_exe().expect("the bench binary's path");
    let lib: PathBuf = exe.parent().expect("target/<profile>/deps").join(format!(
        "{}{crate_name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    let mut registry = Registry::new();
    let report = registry.load_file(&lib, None);
    assert!(
        report.errors.is_empty(),
        "loading {}: {:?}",
        lib.display(),
        report.errors
    );
    let entry = registry.get(id).unwrap_or_else(|_| panic!("{id} loaded"));
    assert!(matches!(entry.origin, Origin::Library(_)));
    Arc::clone(&entry.ruleset)
}

/// The `q` quantile (0 = minimum, 0.5 = median) of the samples.
pub fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q) as usize]
}

/// Whether the bench was started by `cargo bench` (`--bench`); without it (`cargo test --benches`) a bench
/// only smoke-tests itself.
pub fn quick() -> bool {
    let args: Vec<String> = std::env::args().collect();
    !args.iter().any(|a| a == "--bench") || args.iter().any(|a| a == "--test")
}

/// Interleaved rounds' samples: per side, ns per playout of each round.
#[derive(Default)]
pub struct Rounds {
    /// Per side (in [`SIDES`] order), the ns per playout of each round.
    pub per_playout: [Vec<f64>; 3],
    /// Per round, the plain time over the static time (the static side's speed relative to plain).
    pub speed: Vec<f64>,
    /// Per round, the loaded time over the static time.
    pub load: Vec<f64>,
    /// Actions per playout (the same on every side: checked).
    pub actions_per_playout: f64,
}

impl Rounds {
    /// `rounds` interleaved rounds of `playouts` playouts a side from seed `first + round * playouts`, the
    /// side that goes first rotating. `run(side, seed, n)` plays `n` playouts from `seed` and answers
    /// their time and how many actions they applied; `after(seed, times)` is called after each round with
    /// its ns per playout by side.
    ///
    /// # Panics
    /// If the sides applied different numbers of actions: they did not play the same games.
    pub fn interleave(
        rounds: usize,
        playouts: u64,
        first: u64,
        mut run: impl FnMut(Side, u64, u64) -> (Duration, u64),
        mut after: impl FnMut(u64, &[f64; 3]),
    ) -> Rounds {
        let mut out = Rounds::default();
        for round in 0..rounds {
            let seed = first + (round as u64) * playouts;
            let mut t = [0.0; 3];
            let mut actions = [0; 3];
            for k in 0..3 {
                let i = (round + k) % 3;
                let (elapsed, a) = run(SIDES[i], seed, playouts);
                t[i] = elapsed.as_nanos() as f64 / playouts as f64;
                actions[i] = a;
            }
            assert!(
                actions[0] == actions[1] && actions[1] == actions[2],
                "the sides played different games: {actions:?} actions"
            );
            out.actions_per_playout = actions[0] as f64 / playouts as f64;
            for (samples, &ns) in out.per_playout.iter_mut().zip(&t) {
                samples.push(ns);
            }
            out.speed.push(t[0] / t[1]);
            out.load.push(t[2] / t[1]);
            after(seed, &t);
        }
        out
    }

    /// Prints ns per playout and per action for each side (minimum and median round), then the ratios
    /// against the targets: kernel-static at least `speed_target` times plain's speed, kernel-loaded at
    /// most 1.10x the static time.
    pub fn print(&self, speed_target: f64) {
        for (i, side) in SIDES.iter().enumerate() {
            let (min, med) = (
                quantile(&self.per_playout[i], 0.0),
                quantile(&self.per_playout[i], 0.5),
            );
            println!(
                "  {:<14} {:>9.0} ns/playout (median {:>9.0}) = {:>6.1} ns/action = {:>7.0} playouts/s",
                side.name(),
                min,
                med,
                min / self.actions_per_playout,
                1e9 / min
            );
        }
        let [p, s, l] = [0, 1, 2].map(|i| quantile(&self.per_playout[i], 0.0));
        let (speed, load) = (quantile(&self.speed, 0.5), quantile(&self.load, 0.5));
        println!(
            "  kernel-static speed / plain speed = {:.3}x (of minima; median of rounds {speed:.3}x); target >= {speed_target}x: {}",
            p / s,
            if speed >= speed_target {
                "met"
            } else {
                "missed"
            }
        );
        println!(
            "  kernel-loaded time / kernel-static time = {:.3}x (of minima; median of rounds {load:.3}x); target <= 1.10x: {}",
            l / s,
            if load <= 1.10 { "met" } else { "missed" }
        );
    }
}

/// Criterion's group `name`: one function per side, each timing `run(side, seed, iters)` on new seeds.
pub fn criterion_sides(
    c: &mut Criterion,
    name: &str,
    mut run: impl FnMut(Side, u64, u64) -> (Duration, u64),
) {
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Elements(1));
    for side in SIDES {
        let mut seed = 0;
        group.bench_function(side.name(), |b| {
            b.iter_custom(|iters| {
                let (t, _) = run(side, seed, iters);
                seed += iters;
                t
            })
        });
    }
    group.finish();
}

/// Prints the legal-action list alone: `kernel` and `plain` are ns per list of each round.
pub fn print_lists(positions: usize, kernel: &[f64], plain: &[f64]) {
    println!(
        "  legal-action list alone ({positions} positions, ruleset State without the adapter): kernel {:.1} ns \
         (median {:.1}), plain {:.1} ns (median {:.1}): kernel time / plain time = {:.2}x",
        quantile(kernel, 0.0),
        quantile(kernel, 0.5),
        quantile(plain, 0.0),
        quantile(plain, 0.5),
        quantile(kernel, 0.0) / quantile(plain, 0.0)
    );
}

//! Random playouts of outposts (the `guide-board` ruleset: 6 players, 30 sites, 8 rounds), each timed
//! WITH its setup, in one run: (a) the hand-written plain version, reset in place before each playout;
//! (b) the ruleset statically linked (found through `Registry::with_static`, as a host finds it), driven
//! through the host's `DynRuleset` / `DynGame` adapter, a new game from `new_game` per playout; (c) the
//! same ruleset loaded at runtime from its cdylib through `coffer_host::Registry`, a new game per
//! playout too. (b) and (c) run `coffer_host::simulate::playout`; (a) runs `plain::playout`, which draws
//! the same random numbers, so all three play the identical games on the same seeds (checked: the same
//! number of actions per batch).
//!
//! Prints ns per playout and per action for each side, then the ratios against the targets: kernel-static
//! at least 0.5x the plain version's speed, runtime-loaded at most 1.10x the static time; then the share
//! of a kernel playout spent in `new_game` (target at most 5% for the static side), and the legal-action
//! list alone.
//!
//! Run: `cargo bench -p coffer-guide-board --bench playout`. A criterion filter that matches nothing
//! (`-- ratios-only`) skips the criterion groups and prints only the interleaved ratios. Under
//! `cargo test --benches` (no `--bench` argument) only a smoke run of each. `GUIDE_BOARD_ROUNDS=N` sets
//! the number of interleaved rounds (301; 0 skips them, e.g. to profile one side with
//! `-- --profile-time 10 kernel-static`).
//!
//! Times are the CPU time of the benchmark thread (`CLOCK_THREAD_CPUTIME_ID`): the machine is shared, and
//! the targets are per core. Everything a playout needs is inside the timed region: the kernel sides'
//! `new_game(&Setup::new(6, seed))` and the drop of the game after it, the plain side's `reset`; the
//! random generator's creation on every side.

use coffer_bench_harness::{
    Rounds, Side, criterion_sides, loaded_ruleset, print_lists, quantile, quick, static_ruleset,
};
use coffer_core::{DynRuleset, GameRng, Owner, Ruleset, Setup};
use coffer_guide_board::{Action, Config, Outposts, State, plain};
use coffer_host::simulate;
use cpu_time::ThreadTime;
use criterion::Criterion;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

/// Players of the benchmarked game.
const PLAYERS: u16 = 6;
/// Playouts per timed batch.
const BATCH: u64 = 32;

/// What each side plays with.
struct Bench {
    statically: Arc<dyn DynRuleset>,
    loaded: Arc<dyn DynRuleset>,
    config: Config,
}

impl Bench {
    fn new() -> Bench {
        Bench {
            statically: static_ruleset("guide-board"),
            loaded: loaded_ruleset("coffer_guide_board", "guide-board"),
            config: Config::default(),
        }
    }

    /// `n` playouts from seeds `seed..seed + n`, setup included, in batches of at most [`BATCH`]: CPU
    /// time of the batches, and the actions they applied.
    fn run(&self, side: Side, seed: u64, n: u64) -> (Duration, u64) {
        let mut elapsed = Duration::ZERO;
        let mut actions = 0;
        let mut done = 0;
        // The plain side's one game, made once and reset in place before each playout.
        let mut hand = plain::Game::new(PLAYERS, &self.config);
        let mut moves = Vec::with_capacity(64);
        while done < n {
            let k = BATCH.min(n - done);
            let seeds = seed + done..seed + done + k;
            let (t, a) = match side {
                Side::Plain => plain_batch(&mut hand, &mut moves, seeds),
                Side::Static => kernel_batch(&*self.statically, seeds),
                Side::Loaded => kernel_batch(&*self.loaded, seeds),
            };
            elapsed += t;
            actions += a;
            done += k;
        }
        (elapsed, actions)
    }
}

/// The plain playouts of `seeds`, each after a reset of the one game, timed together.
fn plain_batch(
    game: &mut plain::Game,
    moves: &mut Vec<plain::Move>,
    seeds: std::ops::Range<u64>,
) -> (Duration, u64) {
    let start = ThreadTime::now();
    let mut actions = 0;
    for s in seeds {
        game.reset();
        actions += plain::playout(game, &mut GameRng::new(s), moves, u64::MAX);
        black_box(game.scores());
    }
    (start.elapsed(), actions)
}

/// The kernel playouts of `seeds`, each on a new game set up with `new_game` (and dropped after), timed
/// together.
fn kernel_batch(ruleset: &dyn DynRuleset, seeds: std::ops::Range<u64>) -> (Duration, u64) {
    let start = ThreadTime::now();
    let mut actions = 0;
    for s in seeds {
        let mut game = ruleset
            .new_game(&Setup::new(PLAYERS, s))
            .expect("a six-player game");
        actions += simulate::playout(&mut *game, &mut GameRng::new(s), u64::MAX)
            .expect("listed actions apply");
        black_box(&game);
    }
    (start.elapsed(), actions)
}

/// `new_game` alone (and the drop of its game) over `seeds`: CPU time.
fn new_game_batch(ruleset: &dyn DynRuleset, seeds: std::ops::Range<u64>) -> Duration {
    let start = ThreadTime::now();
    for s in seeds {
        let game = ruleset
            .new_game(&Setup::new(PLAYERS, s))
            .expect("a six-player game");
        black_box(&game);
    }
    start.elapsed()
}

/// `DynGame::reset` alone over `seeds`, on one game set up before the clock starts: CPU time.
fn reset_batch(ruleset: &dyn DynRuleset, seeds: std::ops::Range<u64>) -> Duration {
    let mut game = ruleset
        .new_game(&Setup::new(PLAYERS, 0))
        .expect("a six-player game");
    let start = ThreadTime::now();
    for s in seeds {
        game.reset(&Setup::new(PLAYERS, s))
            .expect("a six-player game");
        black_box(&game);
    }
    start.elapsed()
}

fn criterion_benches(c: &mut Criterion, bench: &Bench) {
    criterion_sides(c, "guide-board-6p-playout-with-setup", |side, seed, n| {
        bench.run(side, seed, n)
    });
    let mut group = c.benchmark_group("guide-board-6p-setup");
    let mut seed = 0;
    group.bench_function("kernel-static-reset", |b| {
        b.iter_custom(|iters| {
            let t = reset_batch(&*bench.statically, seed..seed + iters);
            seed += iters;
            t
        })
    });
    let mut seed = 0;
    group.bench_function("kernel-static-new-game", |b| {
        b.iter_custom(|iters| {
            let t = new_game_batch(&*bench.statically, seed..seed + iters);
            seed += iters;
            t
        })
    });
    group.finish();
}

/// Interleaved rounds: each round plays the same `playouts` seeds on every side, the side that goes first
/// rotating, then times `new_game` alone on both kernel sides; prints ns per playout and per action
/// (minimum and median round), the ratios, and the share of a playout spent in `new_game`.
///
/// On a shared machine a preempted round only ever gets slower, so the minimum is the best estimate of the
/// work itself and the median shows how much the load moved it; the ratios are also given as the median
/// of the per-round ratios, which compares sides measured moments apart.
fn ratios(bench: &Bench, rounds: usize, playouts: u64) {
    let mut setup: [Vec<f64>; 2] = Default::default();
    let mut setup_share: [Vec<f64>; 2] = Default::default();
    let mut reset: [Vec<f64>; 2] = Default::default();
    let mut reset_share: [Vec<f64>; 2] = Default::default();
    let after = |seed: u64, t: &[f64; 3]| {
        for (j, ruleset) in [&bench.statically, &bench.loaded].into_iter().enumerate() {
            let g = new_game_batch(&**ruleset, seed..seed + playouts).as_nanos() as f64
                / playouts as f64;
            setup[j].push(g);
            setup_share[j].push(g / t[j + 1]);
            let r =
                reset_batch(&**ruleset, seed..seed + playouts).as_nanos() as f64 / playouts as f64;
            reset[j].push(r);
            // The share of a playout set up with a reset instead: the playout without its new game,
            // plus the reset.
            reset_share[j].push(r / (t[j + 1] - g + r));
        }
    };
    let rounds = Rounds::interleave(
        rounds,
        playouts,
        1_000_000,
        |side, seed, n| bench.run(side, seed, n),
        after,
    );
    println!(
        "\nguide-board (outposts), {PLAYERS} players, 30 sites, 8 rounds, each playout with its setup: \
         {} interleaved rounds of {playouts} random playouts per side ({:.1} actions per playout); CPU \
         time",
        rounds.speed.len(),
        rounds.actions_per_playout
    );
    rounds.print(0.5);
    for (j, side) in [Side::Static, Side::Loaded].into_iter().enumerate() {
        let share = quantile(&setup_share[j], 0.5);
        let target = if side == Side::Static {
            if share <= 0.05 {
                "; target <= 5%: met"
            } else {
                "; target <= 5%: missed"
            }
        } else {
            ""
        };
        println!(
            "  {} new_game alone: {:.0} ns (median {:.0}) = {:.1}% of its playout (median of rounds){target}",
            side.name(),
            quantile(&setup[j], 0.0),
            quantile(&setup[j], 0.5),
            100.0 * share,
        );
        let share = quantile(&reset_share[j], 0.5);
        println!(
            "  {} reset alone (DynGame::reset): {:.0} ns (median {:.0}) = {:.1}% of a playout set up so \
             (median of rounds){}",
            side.name(),
            quantile(&reset[j], 0.0),
            quantile(&reset[j], 0.5),
            100.0 * share,
            if side != Side::Static {
                ""
            } else if share <= 0.05 {
                "; target <= 5%: met"
            } else {
                "; target <= 5%: missed"
            },
        );
    }
}

/// The same positions of both versions: every 5th position of a few seeded playouts (from the ruleset's
/// `State` directly, without the adapter), for timing the legal-action list alone.
fn positions(config: &Config) -> (Vec<State>, Vec<plain::Game>) {
    let (mut kernel, mut hand) = (Vec::new(), Vec::new());
    let (mut actions, mut moves) = (Vec::new(), Vec::new());
    for seed in 0..8 {
        let mut s = Outposts
            .new_game(PLAYERS, seed, config)
            .expect("a six-player game");
        let mut p = plain::Game::new(PLAYERS, config);
        let mut rng = GameRng::new(seed);
        let mut step = 0;
        while let Some(player) = p.active() {
            actions.clear();
            Outposts.legal_actions(&s, Owner(player), &mut actions);
            moves.clear();
            p.legal(&mut moves);
            assert_eq!(actions.len(), moves.len());
            if step % 5 == 0 {
                kernel.push(s.clone());
                hand.push(p.clone());
            }
            let i = rng.below(moves.len() as u64) as usize;
            Outposts
                .apply(&mut s, Owner(player), &actions[i])
                .expect("a listed action applies");
            p.apply(moves[i]);
            step += 1;
        }
    }
    (kernel, hand)
}

/// ns per legal-action list over `positions`: the ruleset's `legal_actions` against the plain version's
/// `legal`.
fn time_lists(kernel: &[State], hand: &[plain::Game]) -> (f64, f64) {
    let mut actions: Vec<Action> = Vec::with_capacity(64);
    let mut moves = Vec::with_capacity(64);
    let start = ThreadTime::now();
    for s in kernel {
        actions.clear();
        if let Some(player) = s.active() {
            Outposts.legal_actions(s, player, &mut actions);
        }
        black_box(&actions);
    }
    let k = start.elapsed().as_nanos() as f64 / kernel.len() as f64;
    let start = ThreadTime::now();
    for p in hand {
        moves.clear();
        p.legal(&mut moves);
        black_box(&moves);
    }
    let h = start.elapsed().as_nanos() as f64 / hand.len() as f64;
    (k, h)
}

/// Interleaved rounds of the legal-action list alone, on both versions; prints the minimum and median.
fn list_ratios(config: &Config, rounds: usize) {
    let (kernel, hand) = positions(config);
    let (mut k, mut h) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let (a, b) = time_lists(&kernel, &hand);
        k.push(a);
        h.push(b);
    }
    print_lists(kernel.len(), &k, &h);
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`, `--test`) only smoke-test.
    let quick = quick();
    let bench = Bench::new();
    let mut c = Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    criterion_benches(&mut c, &bench);
    c.final_summary();
    // `GUIDE_BOARD_ROUNDS=0` skips the interleaved rounds (to profile one criterion group alone).
    let rounds = std::env::var("GUIDE_BOARD_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 2 } else { 301 });
    if rounds > 0 {
        ratios(&bench, rounds, if quick { 2 } else { BATCH });
        list_ratios(&bench.config, rounds);
    }
}

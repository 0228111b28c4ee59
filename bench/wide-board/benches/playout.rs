//! Random playouts of the `wide-board` game (6 players, 30 systems, 8 rounds), in one run: (a) the
//! hand-written plain version, (b) the ruleset statically linked, driven through the host's
//! `DynRuleset` / `DynGame` adapter, (c) the same ruleset loaded at runtime from its cdylib through
//! `coffer_host::Registry`. (b) and (c) run `coffer_host::simulate::playout`, which asks the game to run
//! the kernel SDK's playout loop on itself (`DynGame::playout`: for (b) one dynamic call per playout, for
//! (c) one boundary crossing per playout, the loop inside the library); (a) runs `plain::playout`, which
//! draws the same random numbers, so all three play the identical games on the same seeds (checked: the
//! same number of actions per batch).
//!
//! Prints ns per playout and per action for each side, then the ratios against the targets: kernel-static
//! at least 0.5x the plain version's speed, runtime-loaded at most 1.10x the static time.
//!
//! Run: `cargo bench -p coffer-wide-board --bench playout`. A criterion filter that matches nothing
//! (`-- ratios-only`) skips the criterion groups and prints only the interleaved ratios. Under
//! `cargo test --benches` (no `--bench` argument) only a smoke run of both. `WIDE_BOARD_ROUNDS=N` sets the
//! number of interleaved rounds (301; 0 skips them, e.g. to profile one side with
//! `-- --profile-time 10 kernel-static`).
//!
//! Times are the CPU time of the benchmark thread (`CLOCK_THREAD_CPUTIME_ID`): the machine is shared, and
//! the targets are per core. Setting up a batch's games is not timed; playing them is, legal-action
//! enumeration and random choice included.

use coffer_bench_harness::{
    Rounds, Side, criterion_sides, loaded_ruleset, print_lists, quantile, quick, static_ruleset,
};
use coffer_core::{DynGame, DynRuleset, GameRng, Owner, Setup};
use coffer_host::simulate;
use coffer_wide_board::{Action, Config, State, plain};
use cpu_time::ThreadTime;
use criterion::Criterion;
use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

/// Players of the benchmarked game.
const PLAYERS: u16 = 6;
/// Playouts per timed batch (their games are set up before the clock starts).
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
            statically: static_ruleset("wide-board"),
            loaded: loaded_ruleset("coffer_wide_board", "wide-board"),
            config: Config::default(),
        }
    }

    /// `n` playouts from seeds `seed..seed + n`, in batches of at most [`BATCH`]: CPU time of the
    /// playouts, and the actions they applied.
    fn run(&self, side: Side, seed: u64, n: u64) -> (Duration, u64) {
        let mut elapsed = Duration::ZERO;
        let mut actions = 0;
        let mut done = 0;
        while done < n {
            let k = BATCH.min(n - done);
            let seeds = seed + done..seed + done + k;
            let (t, a) = match side {
                Side::Plain => self.plain_batch(seeds),
                Side::Static => kernel_batch(&*self.statically, seeds),
                Side::Loaded => kernel_batch(&*self.loaded, seeds),
            };
            elapsed += t;
            actions += a;
            done += k;
        }
        (elapsed, actions)
    }

    fn plain_batch(&self, seeds: std::ops::Range<u64>) -> (Duration, u64) {
        let fresh = plain::Game::new(PLAYERS, &self.config);
        let mut games: Vec<(plain::Game, GameRng)> =
            seeds.map(|s| (fresh.clone(), GameRng::new(s))).collect();
        let mut moves = Vec::with_capacity(64);
        let start = ThreadTime::now();
        let mut actions = 0;
        for (game, rng) in &mut games {
            actions += plain::playout(game, rng, &mut moves, u64::MAX);
        }
        let t = start.elapsed();
        black_box(&games);
        (t, actions)
    }
}

fn kernel_batch(ruleset: &dyn DynRuleset, seeds: std::ops::Range<u64>) -> (Duration, u64) {
    let mut games: Vec<(Box<dyn DynGame>, GameRng)> = seeds
        .map(|s| {
            let game = ruleset
                .new_game(&Setup::new(PLAYERS, s))
                .expect("a six-player game");
            (game, GameRng::new(s))
        })
        .collect();
    let start = ThreadTime::now();
    let mut actions = 0;
    for (game, rng) in &mut games {
        actions += simulate::playout(&mut **game, rng, u64::MAX).expect("listed actions apply");
    }
    let t = start.elapsed();
    black_box(&games);
    (t, actions)
}

fn criterion_benches(c: &mut Criterion, bench: &Bench) {
    criterion_sides(c, "wide-board-6p-playout", |side, seed, n| {
        bench.run(side, seed, n)
    });
}

/// Interleaved rounds: each round plays the same `playouts` seeds on every side, the side that goes first
/// rotating; prints ns per playout and per action and the ratios.
fn ratios(bench: &Bench, rounds: usize, playouts: u64) {
    let rounds = Rounds::interleave(
        rounds,
        playouts,
        1_000_000,
        |side, seed, n| bench.run(side, seed, n),
        |_, _| {},
    );
    println!(
        "\nwide-board, {PLAYERS} players, 30 systems, 8 rounds: {} interleaved rounds of {playouts} \
         random playouts per side ({:.1} actions per playout); CPU time",
        rounds.speed.len(),
        rounds.actions_per_playout
    );
    rounds.print(0.5);
}

/// The same positions of both versions: every 5th position of a few seeded playouts (from the ruleset's
/// `State` directly, without the adapter), for timing the legal-action list alone.
fn positions(config: &Config) -> (Vec<State>, Vec<plain::Game>) {
    let (mut kernel, mut hand) = (Vec::new(), Vec::new());
    let (mut actions, mut moves) = (Vec::new(), Vec::new());
    for seed in 0..8 {
        let mut s = State::new(PLAYERS, seed, config).expect("a six-player game");
        let mut p = plain::Game::new(PLAYERS, config);
        let mut rng = GameRng::new(seed);
        let mut step = 0;
        while let Some(player) = p.active() {
            actions.clear();
            s.legal_actions(Owner(player), &mut actions);
            moves.clear();
            p.legal(&mut moves);
            assert_eq!(actions.len(), moves.len());
            if step % 5 == 0 {
                kernel.push(s.clone());
                hand.push(p.clone());
            }
            let i = rng.below(moves.len() as u64) as usize;
            s.apply(Owner(player), &actions[i])
                .expect("a listed action applies");
            p.apply(moves[i]);
            step += 1;
        }
    }
    (kernel, hand)
}

/// ns per legal-action list over `positions`: the ruleset's `legal_actions` (30 per-zone `Ledger::tokens`
/// look-ups and the pushes) against the plain version's `legal`.
fn time_lists(kernel: &[State], hand: &[plain::Game]) -> (f64, f64) {
    let mut actions: Vec<Action> = Vec::with_capacity(64);
    let mut moves = Vec::with_capacity(64);
    let start = ThreadTime::now();
    for s in kernel {
        actions.clear();
        if let Some(player) = s.active() {
            s.legal_actions(player, &mut actions);
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

/// Interleaved rounds of a batch of new games (set up and dropped), of the same batch set up again on one
/// game with `DynGame::reset`, and of the batch's playouts, on the statically linked ruleset: what setting
/// up a game for every playout costs, as a share of a playout with its setup.
fn setup_share(bench: &Bench, rounds: usize, playouts: u64) {
    let ruleset = &*bench.statically;
    let mut reused = ruleset
        .new_game(&Setup::new(PLAYERS, 0))
        .expect("a six-player game");
    let (mut news, mut resets, mut plays) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let seeds = 2_000_000 + round as u64 * playouts..2_000_000 + (round as u64 + 1) * playouts;
        let start = ThreadTime::now();
        for s in seeds.clone() {
            black_box(
                ruleset
                    .new_game(&Setup::new(PLAYERS, s))
                    .expect("a six-player game"),
            );
        }
        news.push(start.elapsed().as_nanos() as f64 / playouts as f64);
        let start = ThreadTime::now();
        for s in seeds.clone() {
            reused
                .reset(&Setup::new(PLAYERS, s))
                .expect("a six-player game");
            black_box(&reused);
        }
        resets.push(start.elapsed().as_nanos() as f64 / playouts as f64);
        let (t, _) = kernel_batch(ruleset, seeds);
        plays.push(t.as_nanos() as f64 / playouts as f64);
    }
    let play = quantile(&plays, 0.0);
    for (how, times) in [("a new game", &news), ("a reset game", &resets)] {
        let setup = quantile(times, 0.0);
        let share = setup / (setup + play);
        println!(
            "  kernel-static, {how} per playout: {setup:.0} ns (median {:.0}) against {play:.0} ns of \
             play: {:.1}% of a playout with its setup; target <= 5%: {}",
            quantile(times, 0.5),
            share * 100.0,
            if share <= 0.05 { "met" } else { "missed" }
        );
    }
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
    // `WIDE_BOARD_ROUNDS=0` skips the interleaved rounds (to profile one criterion group alone).
    let rounds = std::env::var("WIDE_BOARD_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 2 } else { 301 });
    if rounds > 0 {
        ratios(&bench, rounds, if quick { 2 } else { BATCH });
        list_ratios(&bench.config, rounds);
        setup_share(&bench, rounds, if quick { 2 } else { BATCH });
    }
}

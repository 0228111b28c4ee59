//! The cost of a seat's table (`DynGame::table`), for each built-in ruleset at its largest player count up
//! to six,
//! statically linked and loaded at runtime, against a baseline measured in the same process: the game's
//! binary snapshot, which writes the whole state. Prints each table's time, the ratio to the baseline,
//! and the target (a six-player command-tokens table for one seat under 5 us).
//! Run: `cargo bench -p coffer-tests --bench table`.

use coffer_core::{DynGame, DynRuleset, Format, Owner, Setup};
use coffer_tests::{BUILTIN, Chooser, builtin_runtime_ruleset, static_ruleset};
use cpu_time::ThreadTime;
use criterion::Criterion;
use std::hint::black_box;
use std::time::Duration;

/// A game of `players` after `actions` random legal actions from `seed`: a table in mid-game.
fn mid_game(ruleset: &dyn DynRuleset, players: u16, actions: usize, seed: u64) -> Box<dyn DynGame> {
    let mut game = ruleset
        .new_game(&Setup::new(players, seed))
        .expect("new game");
    let mut chooser = Chooser::new(seed);
    for _ in 0..actions {
        let movers: Vec<(Owner, usize)> = game
            .acting()
            .iter()
            .filter(|a| a.legal > 0)
            .map(|a| (a.owner(), a.legal))
            .collect();
        if movers.is_empty() {
            break;
        }
        let (p, n) = movers[chooser.below(movers.len())];
        game.apply_legal(p, chooser.below(n))
            .expect("a listed action");
    }
    game
}

/// The most players, up to six (the target's game), the default configuration accepts.
fn players_for(ruleset: &dyn DynRuleset) -> u16 {
    let d = ruleset.description();
    (d.min_players..=d.max_players.min(6))
        .rev()
        .find(|p| ruleset.new_game(&Setup::new(*p, 1)).is_ok())
        .expect("some player count")
}

/// Median ns per call of `f` over `rounds` rounds of `calls` calls, in CPU time of this thread (the
/// machine is shared: time another process takes is not counted).
fn median_ns(rounds: usize, calls: u32, mut f: impl FnMut()) -> f64 {
    let mut v: Vec<f64> = (0..rounds)
        .map(|_| {
            let start = ThreadTime::now();
            for _ in 0..calls {
                f();
            }
            start.elapsed().as_nanos() as f64 / f64::from(calls)
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let mut lines = Vec::new();
    for (id, _) in BUILTIN {
        let statik = static_ruleset(id).expect("registered");
        let runtime = builtin_runtime_ruleset(id);
        let players = players_for(&*statik);
        let mut group = c.benchmark_group(format!("table/{id}"));
        for (mode, ruleset) in [("static", &statik), ("runtime", &runtime)] {
            let game = mid_game(&**ruleset, players, 40, 3);
            group.bench_function(format!("{mode}/seat"), |b| {
                b.iter(|| black_box(game.table(black_box(Some(Owner(0))))))
            });
            group.bench_function(format!("{mode}/spectator"), |b| {
                b.iter(|| black_box(game.table(black_box(None))))
            });
            group.bench_function(format!("{mode}/baseline-snapshot"), |b| {
                b.iter(|| black_box(game.snapshot(Format::Binary)))
            });
            // Interleaved medians for the printed ratios, so load on the machine hits both alike.
            let seat = median_ns(15, 2_000, || {
                black_box(game.table(Some(Owner(0))));
            });
            let base = median_ns(15, 2_000, || {
                black_box(game.snapshot(Format::Binary).ok());
            });
            lines.push(format!(
                "  {id:<15} {mode:<8} {players} players  table for one seat {:>7.2} us  binary snapshot {:>7.2} us  ratio {:.2}",
                seat / 1_000.0,
                base / 1_000.0,
                seat / base
            ));
        }
        group.finish();
    }
    c.final_summary();
    println!(
        "\nper-seat table against the binary snapshot of the same game (medians of 15 rounds, thread CPU time):"
    );
    for line in lines {
        println!("{line}");
    }
    println!("  target: six-player command-tokens table for one seat under 5 us");
}

//! The cost of `coffer act` on a save file: read the save (with the checks every command applies), apply
//! one action, write it back, under the save's lock ([`coffer_host::save::update`]), on a game of 10,000
//! actions against the same on a fresh game, in the same process. Prints each median, the ratio (target:
//! within 2x), and the same ratio for the former way (a full replay of the log on every read), once with
//! the saves on a tmpfs (`/dev/shm`, where syncing is free and the CPU cost shows) and once on the
//! temporary directory's disk. Also prints the bytes allocated while reading the long save, against its
//! size, for the reader and for the former reader (a JSON document built first, then the fields).
//! Run: `cargo bench -p coffer-tests --bench save`.

use coffer_core::{DynRuleset, Setup};
use coffer_host::save::{self, SaveFile};
use coffer_host::{HostError, HostedGame, Origin, Registry};
use criterion::{BatchSize, Criterion};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Actions in the long game.
const LONG: usize = 10_000;

/// The target: `act` on the long game within this factor of `act` on a fresh one.
const TARGET: f64 = 2.0;

/// The coin game of the loader tests: taking one coin then spending it, in turn, never ends.
fn ruleset() -> Arc<dyn DynRuleset> {
    coffer_core::Adapter::shared(coffer_fixture_common::Coins::new("fixture-coins", false))
}

/// The next action of the endless pattern: the player in turn spends their coin, or takes one when they
/// have none (players alternate, so no purse ever holds more than one coin).
fn act(game: &mut HostedGame) -> Result<(), HostError> {
    let player = (0..2u16)
        .find(|p| game.legal_count(*p) > 0)
        .expect("someone's turn");
    if game
        .apply_json(player, r#"{"type":"spend","n":1}"#)
        .is_err()
    {
        game.apply_json(player, r#"{"type":"take","n":1}"#)?;
    }
    Ok(())
}

/// A game of `actions` actions saved in `dir`; returns its path and bytes.
fn saved(dir: &Path, name: &str, actions: usize) -> (PathBuf, Vec<u8>) {
    let mut game = HostedGame::start(ruleset(), Setup::new(2, 7)).expect("a game starts");
    for _ in 0..actions {
        act(&mut game).expect("the pattern is legal");
    }
    let path = dir.join(name);
    save::save(&game, &path).expect("saved");
    let bytes = std::fs::read(&path).expect("read back");
    (path, bytes)
}

/// `coffer act` as it is now: the update under the lock.
fn act_now(path: &Path, registry: &Registry) {
    save::update(path, registry, act)
        .expect("the save reads")
        .expect("the action applies");
}

/// `coffer act` as it was: the whole log replayed on every read, then the write.
fn act_before(path: &Path, registry: &Registry) {
    let mut game = save::load_verified(path, registry).expect("the save reads");
    act(&mut game).expect("the action applies");
    save::save(&game, path).expect("written");
}

/// Median time of `f` over `rounds` calls, each after `reset` (not timed).
fn median(rounds: usize, mut reset: impl FnMut(), mut f: impl FnMut()) -> Duration {
    let mut v: Vec<Duration> = (0..rounds)
        .map(|_| {
            reset();
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Bytes allocated (in total, an upper bound of the peak) while `f` runs.
fn allocated<T>(f: impl FnOnce() -> T) -> (T, usize) {
    let region = Region::new(GLOBAL);
    let value = f();
    (value, region.change().bytes_allocated)
}

fn main() {
    let mut registry = Registry::new();
    registry
        .add(ruleset(), Origin::Static)
        .expect("one ruleset");
    let mut c = Criterion::default()
        .configure_from_args()
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    let shm = Path::new("/dev/shm");
    let mut places = Vec::new();
    if shm.is_dir() {
        places.push((
            "tmpfs",
            tempfile::tempdir_in(shm).expect("a directory on tmpfs"),
        ));
    }
    places.push(("disk", tempfile::tempdir().expect("a temporary directory")));
    let mut lines = Vec::new();
    for (place, dir) in &places {
        let (fresh, fresh_bytes) = saved(dir.path(), "fresh.json", 0);
        let (long, long_bytes) = saved(dir.path(), "long.json", LONG);
        let reset = |path: &Path, bytes: &[u8]| std::fs::write(path, bytes).expect("reset");
        let mut group = c.benchmark_group(format!("save/{place}"));
        for (name, path, bytes) in [
            ("act-fresh", &fresh, &fresh_bytes),
            ("act-10000", &long, &long_bytes),
        ] {
            group.bench_function(name, |b| {
                b.iter_batched(
                    || reset(path, bytes),
                    |()| act_now(black_box(path), &registry),
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
        // Interleaved medians for the printed ratios, so load on the machine hits both alike.
        let (mut now_fresh, mut now_long, mut before_fresh, mut before_long) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for _ in 0..5 {
            now_fresh.push(median(
                9,
                || reset(&fresh, &fresh_bytes),
                || act_now(&fresh, &registry),
            ));
            now_long.push(median(
                9,
                || reset(&long, &long_bytes),
                || act_now(&long, &registry),
            ));
            before_fresh.push(median(
                3,
                || reset(&fresh, &fresh_bytes),
                || act_before(&fresh, &registry),
            ));
            before_long.push(median(
                3,
                || reset(&long, &long_bytes),
                || act_before(&long, &registry),
            ));
        }
        let mid = |mut v: Vec<Duration>| {
            v.sort();
            v[v.len() / 2]
        };
        let (nf, nl, bf, bl) = (
            mid(now_fresh),
            mid(now_long),
            mid(before_fresh),
            mid(before_long),
        );
        lines.push(format!(
            "  {place:<6} act: fresh game {:>7.3} ms, {LONG}-action game {:>7.3} ms ({} KiB save): ratio {:.2} (target {TARGET}x: {})",
            ms(nf),
            ms(nl),
            long_bytes.len() / 1024,
            nl.as_secs_f64() / nf.as_secs_f64(),
            if nl.as_secs_f64() <= TARGET * nf.as_secs_f64() {
                "met"
            } else {
                "MISSED"
            }
        ));
        lines.push(format!(
            "  {place:<6} former act (full replay on every read): fresh {:>7.3} ms, {LONG}-action game {:>8.3} ms: ratio {:.1}",
            ms(bf),
            ms(bl),
            bl.as_secs_f64() / bf.as_secs_f64()
        ));
        if *place == "disk" || places.len() == 1 {
            let text = std::str::from_utf8(&long_bytes).expect("UTF-8");
            let (_, now) = allocated(|| {
                save::load(&long, &registry).expect("reads");
            });
            let (_, before) = allocated(|| {
                // The former reader: a whole JSON document first, then the fields, then a copy of the
                // snapshot's text for the ruleset.
                let value: serde_json::Value = serde_json::from_str(text).expect("JSON");
                let file: SaveFile = serde_json::from_str(text).expect("a save");
                let copy = serde_json::to_vec(&file.snapshot).expect("a copy");
                black_box((value, file, copy));
            });
            reset(&long, &long_bytes);
            let (_, update) = allocated(|| act_now(&long, &registry));
            lines.push(format!(
                "  memory: reading the {} KiB save allocates {:.1}x its size in total (the former reader: {:.1}x); \
                 an act on it {:.1}x",
                long_bytes.len() / 1024,
                now as f64 / long_bytes.len() as f64,
                before as f64 / long_bytes.len() as f64,
                update as f64 / long_bytes.len() as f64
            ));
        }
    }
    c.final_summary();
    println!(
        "\n`coffer act` (read with checks, apply one action, write, under the lock) on a {LONG}-action game \
         against a fresh game (medians of 5 interleaved rounds):"
    );
    for line in lines {
        println!("{line}");
    }
}

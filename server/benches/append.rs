//! Acknowledged appends per second on a SQLite file: group commit against one transaction per
//! append (the baseline), at 1, 10 and 100 writer threads, each thread appending to its own game.
//!
//! `cargo bench -p coffer-server --bench append`; criterion reports the rate as `elem/s`, and each
//! configuration prints how many appends shared a commit.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use coffer_server::{Action, Durability, GameId, SqliteConfig, SqliteStore, StateHash, Store};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::value::RawValue;

mod support;

use support::bench_game;

fn config(max_batch: usize, durability: Durability) -> SqliteConfig {
    let mut config = SqliteConfig::default();
    config.max_batch = max_batch;
    config.durability = durability;
    config
}

fn appends(c: &mut Criterion) {
    let mut group = c.benchmark_group("append");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    let modes = [
        ("group_commit_full", config(1024, Durability::PowerLoss)),
        ("one_tx_per_append_full", config(1, Durability::PowerLoss)),
        (
            "group_commit_normal",
            config(1024, Durability::ProcessCrash),
        ),
    ];
    for threads in [1_u64, 10, 100] {
        for (name, config) in &modes {
            // On the target directory's disk, not a tmpfs /tmp, so syncs cost what they cost.
            let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("a directory");
            let store = Arc::new(
                SqliteStore::open(&dir.path().join("bench.db"), config.clone()).expect("opens"),
            );
            for game in 0..threads {
                store.create_game(bench_game(game)).expect("created");
            }
            let last: Arc<Vec<AtomicU64>> =
                Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect());
            let before = store.stats();
            group.bench_with_input(BenchmarkId::new(*name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    let each = iters.div_ceil(threads);
                    let start = Instant::now();
                    std::thread::scope(|scope| {
                        for game in 0..threads {
                            let store = &store;
                            let last = &last;
                            scope.spawn(move || {
                                for _ in 0..each {
                                    let seq =
                                        last[game as usize].fetch_add(1, Ordering::Relaxed) + 1;
                                    let action = Action {
                                        seq,
                                        seat: (seq % 2) as u32,
                                        action: RawValue::from_string(format!(
                                            r#"{{"take":{{"kind":3,"amount":{seq}}}}}"#
                                        ))
                                        .expect("json"),
                                        hash: StateHash(seq.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
                                        key: None,
                                        at_unix_ms: 0,
                                    };
                                    store.append(GameId(game), action).expect("appended");
                                }
                            });
                        }
                    });
                    // Scaled to the `iters` criterion asked for.
                    start
                        .elapsed()
                        .mul_f64(iters as f64 / (each * threads) as f64)
                });
            });
            let after = store.stats();
            let requests = after.requests - before.requests;
            let transactions = (after.transactions - before.transactions).max(1);
            eprintln!(
                "append/{name}/{threads}: {requests} appends in {transactions} transactions, {:.1} per commit",
                requests as f64 / transactions as f64
            );
        }
    }
    group.finish();
}

// The macros' generated `benches` and `main` carry no docs of their own.
#[allow(missing_docs)]
mod entry {
    use super::*;
    criterion_group!(benches, appends);
}
criterion_main!(entry::benches);

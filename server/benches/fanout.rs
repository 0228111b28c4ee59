//! What a node of several pays on PostgreSQL for ownership and fan-out: plain appends (one node, the
//! baseline) against fenced appends that check the game's lease and `NOTIFY` the other nodes in the
//! same transaction, at 10 and 100 writer threads, each appending to its own game; then how long a
//! committed append takes to reach a node listening on the channel.
//!
//! `COFFER_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/postgres cargo bench -p coffer-server --bench fanout`
//! (a role that may create databases; each configuration gets a database of its own, dropped after).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use coffer_server::cluster::{Cluster, Notice};
use coffer_server::{Action, GameId, NodeConfig, PgStore, StateHash, Store};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::value::RawValue;

mod support;

use support::bench_game;

const ENV: &str = "COFFER_POSTGRES_URL";

/// A database of its own, dropped with it.
struct Database {
    admin: String,
    name: String,
    url: String,
}

impl Database {
    fn new(admin: &str) -> Database {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "coffer_bench_{}_{}",
            std::process::id(),
            COUNT.fetch_add(1, Ordering::Relaxed)
        );
        let mut client = postgres::Client::connect(admin, postgres::NoTls)
            .unwrap_or_else(|e| panic!("{ENV}={admin} is set but unreachable: {e}"));
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .expect("a database");
        let base = admin.rsplit_once('/').map_or(admin, |(base, _)| base);
        Database {
            admin: admin.to_owned(),
            url: format!("{base}/{name}"),
            name,
        }
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

fn node(id: &str) -> NodeConfig {
    NodeConfig {
        id: id.into(),
        addr: format!("http://{id}.invalid"),
        lease: Duration::from_secs(600),
    }
}

fn action(seq: u64) -> Action {
    Action {
        seq,
        seat: (seq % 2) as u32,
        action: RawValue::from_string(format!(r#"{{"take":{{"kind":3,"amount":{seq}}}}}"#))
            .expect("json"),
        hash: StateHash(seq.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        key: None,
        at_unix_ms: 0,
    }
}

fn create(store: &PgStore, games: u64) {
    for game in 0..games {
        store.create_game(bench_game(game)).expect("created");
    }
}

/// Appends one action and waits for its commit: fenced (lease check and NOTIFY) or plain.
fn append(store: &PgStore, game: u64, seq: u64, fenced: bool) {
    if fenced {
        let (tx, rx) = std::sync::mpsc::channel();
        store.append_fenced_then(
            GameId(game),
            action(seq),
            1,
            Box::new(move |r| {
                let _ = tx.send(r);
            }),
        );
        rx.recv().expect("an answer").expect("appended");
    } else {
        store.append(GameId(game), action(seq)).expect("appended");
    }
}

fn appends(c: &mut Criterion) {
    let Ok(admin) = std::env::var(ENV) else {
        println!(
            "fanout: skipped: set {ENV}=postgres://postgres@127.0.0.1:5432/postgres to run it"
        );
        return;
    };
    let mut group = c.benchmark_group("pg_append");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .throughput(Throughput::Elements(1));
    for threads in [10_u64, 100] {
        for (name, fenced) in [("plain_one_node", false), ("fenced_notify_node", true)] {
            let database = Database::new(&admin);
            let store = if fenced {
                PgStore::open_node(&database.url, Some(node("bench"))).expect("opens")
            } else {
                PgStore::open(&database.url).expect("opens")
            };
            create(&store, threads);
            let last: Arc<Vec<AtomicU64>> =
                Arc::new((0..threads).map(|_| AtomicU64::new(0)).collect());
            group.bench_with_input(BenchmarkId::new(name, threads), &threads, |b, &threads| {
                b.iter_custom(|iters| {
                    let each = iters.div_ceil(threads);
                    let start = Instant::now();
                    std::thread::scope(|scope| {
                        for game in 0..threads {
                            let (store, last) = (&store, &last);
                            scope.spawn(move || {
                                for _ in 0..each {
                                    let seq =
                                        last[game as usize].fetch_add(1, Ordering::Relaxed) + 1;
                                    append(store, game, seq, fenced);
                                }
                            });
                        }
                    });
                    start
                        .elapsed()
                        .mul_f64(iters as f64 / (each * threads) as f64)
                });
            });
            drop(store);
        }
    }
    group.finish();
    notice_latency(&admin);
}

/// From an append's submission to a listening connection hearing it, for appends by 10 threads.
fn notice_latency(admin: &str) {
    let database = Database::new(admin);
    let store = PgStore::open_node(&database.url, Some(node("bench"))).expect("opens");
    let threads = 10_u64;
    create(&store, threads);
    let sent: Arc<Mutex<Vec<(u64, u64, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
    let heard: Arc<Mutex<Vec<(u64, u64, Instant)>>> = Arc::new(Mutex::new(Vec::new()));
    let listener = Cluster::open(&database.url, node("listener")).expect("opens");
    listener
        .listen({
            let heard = Arc::clone(&heard);
            move |notice| {
                if let Notice::Action { game, seq, .. } = notice {
                    heard.lock().unwrap().push((game.0, seq, Instant::now()));
                }
            }
        })
        .expect("listens");
    std::thread::sleep(Duration::from_millis(300));
    let per_thread = 300;
    std::thread::scope(|scope| {
        for game in 0..threads {
            let (store, sent) = (&store, &sent);
            scope.spawn(move || {
                for seq in 1..=per_thread {
                    let at = Instant::now();
                    append(store, game, seq, true);
                    sent.lock().unwrap().push((game, seq, at));
                }
            });
        }
    });
    std::thread::sleep(Duration::from_millis(500));
    let heard = heard.lock().unwrap();
    let at: std::collections::HashMap<(u64, u64), Instant> =
        heard.iter().map(|(g, s, t)| ((*g, *s), *t)).collect();
    let mut latencies: Vec<Duration> = sent
        .lock()
        .unwrap()
        .iter()
        .filter_map(|(g, s, t)| at.get(&(*g, *s)).map(|h| h.saturating_duration_since(*t)))
        .collect();
    latencies.sort();
    let pick = |q: f64| latencies[((latencies.len() as f64 - 1.0) * q) as usize];
    println!(
        "fanout: {} of {} appends heard by the listener; submission to notice p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        latencies.len(),
        threads * per_thread,
        pick(0.5).as_secs_f64() * 1e3,
        pick(0.99).as_secs_f64() * 1e3,
        pick(1.0).as_secs_f64() * 1e3,
    );
}

// The macros' generated `benches` and `main` carry no docs of their own.
#[allow(missing_docs)]
mod entry {
    use super::*;
    criterion_group!(benches, appends);
}
criterion_main!(entry::benches);

//! Memory per idle hosted game: 100,000 freshly started games of each built-in ruleset in one [`Host`],
//! measured by a counting global allocator (bytes the host's process asked for and still holds) and by the
//! resident set size before and after. Run: `cargo bench -p coffer-tests --bench memory`.
//!
//! Games of a runtime-loaded ruleset live in the plugin library, whose own copy of `std` allocates through
//! the system allocator directly: only the resident set size sees them (the counting allocator sees only
//! the host's side of each game). Each ruleset and mode is measured in a fresh process.

use coffer_core::Setup;
use coffer_host::{Host, Registry};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;

use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Games per ruleset.
const GAMES: u64 = 100_000;

/// The target: at most 8 KiB per idle hosted game.
const TARGET: f64 = 8.0 * 1024.0;

/// The built-in rulesets, each with the players of its measured games.
const RULESETS: [(&str, u16); 3] = [("story-acts", 2), ("charges", 2), ("command-tokens", 6)];

/// Resident set size in bytes, from `/proc/self/statm` (0 where it cannot be read).
fn rss() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Starts [`GAMES`] games of `id` in one host; prints and returns the bytes per game (allocator, RSS).
fn measure(registry: Registry, id: &str, players: u16, mode: &str) -> (f64, f64) {
    let host = Host::new(registry);
    // One game first, so one-time allocations (content parsed on first use, lazy tables) are not counted.
    host.start(id, Setup::new(players, u64::MAX))
        .expect("a game starts");
    let rss_before = rss();
    let region = Region::new(GLOBAL);
    for seed in 0..GAMES {
        host.start(id, Setup::new(players, seed))
            .expect("a game starts");
    }
    let change = region.change();
    let rss_after = rss();
    let held = change.bytes_allocated as f64 - change.bytes_deallocated as f64;
    let per_game = held / GAMES as f64;
    let per_game_rss = rss_after.saturating_sub(rss_before) as f64 / GAMES as f64;
    println!(
        "{id:<15} {mode:<7} {players} players: {per_game:>8.0} B/game allocated ({:.2}x the 8 KiB target), \
         {per_game_rss:>8.0} B/game resident, {} games hosted",
        per_game / TARGET,
        host.ids().len()
    );
    drop(host);
    (per_game, per_game_rss)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo test --benches` runs bench binaries with `--test`: only measure under `cargo bench`.
    if args.iter().any(|a| a == "--test") {
        return;
    }
    // `--one ID MODE`: measure one ruleset in one mode, in this fresh process.
    if let Some(i) = args.iter().position(|a| a == "--one") {
        let (id, mode) = (&args[i + 1], &args[i + 2]);
        let players = RULESETS
            .iter()
            .find(|(r, _)| r == id)
            .expect("a built-in ruleset")
            .1;
        let registry = match mode.as_str() {
            "static" => Registry::with_static().expect("static rulesets"),
            _ => runtime_registry(),
        };
        measure(registry, id, players, mode);
        return;
    }
    // Each measurement runs in its own process, so that the resident set size is not lowered by memory an
    // earlier measurement freed.
    println!("memory per idle hosted game, {GAMES} games per ruleset in one host:");
    let exe = std::env::current_exe().expect("the bench binary's path");
    for (id, _) in RULESETS {
        for mode in ["static", "runtime"] {
            let out = std::process::Command::new(&exe)
                .args(["--one", id, mode])
                .output()
                .expect("the bench binary runs");
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            print!("{}", String::from_utf8_lossy(&out.stdout));
        }
    }
}

/// A registry of the built-in rulesets loaded at runtime from their plugin libraries, built by cargo beside
/// this bench binary.
fn runtime_registry() -> Registry {
    let mut registry = Registry::new();
    for (_, krate) in coffer_tests::BUILTIN {
        let report = registry.load_file(&coffer_tests::builtin_library(krate), None);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
    }
    registry
}

//! The table of a six-player game for one seat, mid-round (the example script played up to line 150: cards
//! held and used, command tokens on the board), through the host-facing `DynGame`. Target: under 5 us.
//!
//! Run: `cargo bench -p coffer-command-tokens --bench table`. A plain timing loop (no benchmark
//! framework): the best of several batches, in nanoseconds per table.

use coffer_command_tokens::CommandTokens;
use coffer_core::{Adapter, Owner, Setup};
use std::hint::black_box;
use std::time::Instant;

/// Tables per timed batch.
const BATCH: u32 = 20_000;

fn main() {
    let ruleset = Adapter::shared(CommandTokens::new());
    let mut game = ruleset.new_game(&Setup::new(6, 0)).unwrap();
    let script = include_str!("../examples/six_players.jsonl");
    for line in script.lines().filter(|l| !l.trim().is_empty()).take(150) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let player = Owner(v["player"].as_u64().unwrap() as u16);
        game.apply_json(player, &v["action"].to_string()).unwrap();
    }
    let mut best = f64::INFINITY;
    for _ in 0..20 {
        let start = Instant::now();
        for _ in 0..BATCH {
            black_box(game.table(black_box(Some(Owner(2)))));
        }
        best = best.min(start.elapsed().as_nanos() as f64 / f64::from(BATCH));
    }
    println!(
        "command-tokens table, 6 players, one seat: {best:.0} ns (best of 20 batches of {BATCH})"
    );
}

//! How long a table takes: a four-player game some way into its first Act, one seat's table and a
//! spectator's, through the host-facing `DynGame`. Prints nanoseconds per table (the target is under 5 us).
//!
//! Run: `cargo bench -p coffer-story-acts --bench table`.

use coffer_core::{Adapter, Owner, Setup};
use coffer_story_acts::StoryActs;
use std::hint::black_box;
use std::time::Instant;

fn main() {
    let ruleset = Adapter::shared(StoryActs::new());
    let mut game = ruleset.new_game(&Setup::new(4, 3)).expect("setup");
    // A deterministic walk that prefers anything over ending the turn, so cards reach the table.
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    for _ in 0..160 {
        let acting = game.acting().to_vec();
        let Some(mover) = acting.iter().find(|a| a.legal > 0) else {
            break;
        };
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        game.apply_legal(Owner(mover.player), (rng as usize) % mover.legal)
            .expect("a listed action applies");
    }
    let rows: usize = game
        .table(Some(Owner(0)))
        .sections
        .iter()
        .map(|s| s.rows.len())
        .sum();
    println!("a four-player table of {rows} rows");
    for (what, seat) in [
        ("p0's table", Some(Owner(0))),
        ("a spectator's table", None),
    ] {
        for _ in 0..1000 {
            black_box(game.table(black_box(seat)));
        }
        let n = 100_000u32;
        let start = Instant::now();
        for _ in 0..n {
            black_box(game.table(black_box(seat)));
        }
        let each = start.elapsed() / n;
        println!("{what}: {} ns", each.as_nanos());
    }
}

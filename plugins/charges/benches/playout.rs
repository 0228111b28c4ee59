//! Random-playout throughput of `charges`: legal-action enumeration plus apply, through the host-facing
//! `DynGame` (static adapter) against a baseline that drives the typed ruleset directly with the same
//! transaction per action, in the same process; prints actions per second and the ratio.
//!
//! Also times one seat's table of the largest game (four players with four ships each).
//!
//! Run: `cargo bench -p coffer-charges --bench playout -- --warm-up-time 1 --measurement-time 3`.

use coffer_charges::{Action, Charges, State};
use coffer_core::{Adapter, DynGame, Owner, Ruleset, Setup};
use criterion::Criterion;
use std::hint::black_box;
use std::time::Instant;

/// Actions per measured batch.
const ACTIONS: u32 = 10_000;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn dyn_playout(rng: &mut Rng) -> u32 {
    let rs = Adapter::shared(Charges::new());
    let setup = Setup::new(2, rng.next());
    let mut game = rs.new_game(&setup).unwrap();
    let mut done = 0;
    while done < ACTIONS {
        let p = Owner((rng.next() % 2) as u16);
        let mut n = game.legal_actions(p);
        let p = if n == 0 { Owner(1 - p.0) } else { p };
        if n == 0 {
            n = game.legal_actions(p);
        }
        if n == 0 {
            game = rs.new_game(&setup).unwrap();
            continue;
        }
        game.apply_legal(p, (rng.next() % n as u64) as usize)
            .unwrap();
        done += 1;
    }
    done
}

fn typed_playout(rng: &mut Rng) -> u32 {
    let r = Charges::new();
    let fresh = |seed| {
        let mut s: State = r.new_game(2, seed, &Default::default()).unwrap();
        s.ledger.take_events();
        s
    };
    let seed = rng.next();
    let mut state = fresh(seed);
    let mut legal: Vec<Action> = Vec::new();
    let mut events = Vec::new();
    let mut done = 0;
    while done < ACTIONS {
        let mut p = Owner((rng.next() % 2) as u16);
        legal.clear();
        r.legal_actions(&state, p, &mut legal);
        if legal.is_empty() {
            p = Owner(1 - p.0);
            r.legal_actions(&state, p, &mut legal);
        }
        if legal.is_empty() {
            state = fresh(seed);
            continue;
        }
        let a = legal[(rng.next() % legal.len() as u64) as usize];
        let mark = state.ledger.begin();
        r.apply(&mut state, p, &a).unwrap();
        state.ledger.commit(mark);
        events.clear();
        state.ledger.drain_events_into(&mut events);
        done += 1;
    }
    done
}

/// A four-player game, four ships a player, played some way into its first round.
fn big_game() -> Box<dyn DynGame> {
    let ship =
        |pilot: &str, upgrades: &[&str]| serde_json::json!({"pilot": pilot, "upgrades": upgrades});
    let squad = serde_json::json!([
        ship("luke-skywalker", &["proton-torpedoes", "r2-astromech"]),
        ship("wedge-antilles", &["concussion-missiles"]),
        ship("blue-squadron-escort", &[]),
        ship("academy-pilot", &[]),
    ]);
    let config = serde_json::json!({"squads": [squad, squad, squad, squad]});
    let rs = Adapter::shared(Charges::new());
    let mut game = rs.new_game(&Setup::new(4, 1).config(config)).unwrap();
    let mut rng = Rng(0x5eed);
    for _ in 0..40 {
        let acting: Vec<Owner> = game
            .acting()
            .iter()
            .filter(|a| a.legal > 0)
            .map(|a| a.owner())
            .collect();
        let Some(&p) = acting.get((rng.next() % acting.len().max(1) as u64) as usize) else {
            break;
        };
        let n = game.legal_actions(p);
        game.apply_legal(p, (rng.next() % n.min(4) as u64) as usize)
            .unwrap();
    }
    game
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let game = big_game();
    c.bench_function("charges table, 4 players x 4 ships, one seat", |b| {
        b.iter(|| black_box(game.table(Some(Owner(0)))))
    });
    c.bench_function("charges playout 10k actions (DynGame)", |b| {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        b.iter(|| black_box(dyn_playout(&mut rng)))
    });
    c.bench_function("charges playout 10k actions (typed baseline)", |b| {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        b.iter(|| black_box(typed_playout(&mut rng)))
    });
    // Interleaved pass for the printed ratio.
    let (mut dyn_ns, mut typed_ns) = (0u128, 0u128);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..20 {
        let t = Instant::now();
        black_box(dyn_playout(&mut rng));
        dyn_ns += t.elapsed().as_nanos();
        let t = Instant::now();
        black_box(typed_playout(&mut rng));
        typed_ns += t.elapsed().as_nanos();
    }
    let actions = 20.0 * f64::from(ACTIONS);
    println!(
        "charges playout: DynGame {:.0} actions/s, typed baseline {:.0} actions/s, ratio {:.3}",
        actions / (dyn_ns as f64 / 1e9),
        actions / (typed_ns as f64 / 1e9),
        dyn_ns as f64 / typed_ns as f64
    );
    c.final_summary();
}

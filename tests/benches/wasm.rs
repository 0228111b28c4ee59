//! WebAssembly rulesets against their static and native forms, per ruleset (story-acts, charges,
//! command-tokens, and the bench ruleset wide-board), in one run:
//!
//! 1. **playouts**: random playouts run by the game on itself (`DynGame::playout`, one crossing per
//!    playout), the same seeds in every form: ns per action, and the ratios wasm/static (target: wasm
//!    speed at least 0.5x static) and wasm/native;
//! 2. **calls**: the same playouts driven by the host one action at a time (`random_playout` over
//!    `dyn DynGame`: `apply_legal_then_acting`, one crossing per action; the same choices, so the same
//!    games), and one bare call (`legal_actions`, a cached count): the cost of one crossing;
//! 3. **memory**: memory per idle hosted game, N fresh games of one ruleset in one `Host`, each ruleset
//!    and form in a fresh process: host heap (a counting allocator) and resident set size (target: at most
//!    16 KiB per game in WebAssembly form);
//! 4. **load**: `load_module` of each module, the first time (compiling) and again (the compiled code
//!    found by its sha256), each module's first load in a fresh process; and the files' sizes.
//!
//! Run: `cargo bench -p coffer-tests --bench wasm` (all four), or name sections:
//! `cargo bench -p coffer-tests --bench wasm -- playout memory`. `WASM_BENCH_ROUNDS` (default 11),
//! `WASM_BENCH_ACTIONS` (actions per form per round, default 20,000) and `WASM_BENCH_GAMES` (default
//! 10,000) change the amounts.
//!
//! Besides: `-- engines`, an experiment (the same modules in engines of the bench's own: the host's
//! settings, no epoch checks, and with `WASM_BENCH_WIDE_DIR` modules built with wide arithmetic);
//! `--profile FORM ID playout|stepped` (one form alone, for callgrind; FORM `raw` is the module in the
//! experiment's engine) and `--precompile MODULE OUT` (the module compiled as the host compiles it, its
//! functions' offsets in the ELF file's symbols, to name the addresses of a profile).
//!
//! Timing: the benchmark thread's CPU time (`CLOCK_THREAD_CPUTIME_ID`; a WebAssembly call runs on the
//! calling thread), the forms alternating round after round with the first form rotating, so the load
//! of other processes hits all alike; ratios are of the minimum rounds (the work: preemption only slows
//! a round), medians show the load. Module loads are wall time and process CPU time (compiling uses
//! every core). The modules are built by the xtask library into `target/wasm-tests` on the first run
//! (`coffer_tests::wasm_modules`); without the wasm32 target the bench prints how to install it and
//! measures nothing, unless `COFFER_WASM_REQUIRED` is set, where it fails.
//!
//! WebAssembly games of one module share instances (`WasmOptions::games_per_instance`, spread over
//! `INSTANCES_PER_CORE` instances per core) and an instance is dropped with its last game, so the
//! playout sections keep one idle game per instance alive: games then start in warm instances, as on a server with games running,
//! instead of each paying a fresh instance's first page faults.

use coffer_core::{DynGame, DynRuleset, GameRng, Owner, Progress, Setup, random_playout};
use coffer_host::wasm::load_module;
use coffer_host::{Host, Registry};
use coffer_tests::{builtin_library, runtime_ruleset, static_ruleset, wasm_modules};
use cpu_time::{ProcessTime, ThreadTime};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;
use coffer_wide_board as _;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The measured rulesets: id, crate name (`lib<crate>.so`, `<crate with dashes>.wasm`), players.
const RULESETS: [(&str, &str, u16); 4] = [
    ("story-acts", "coffer_story_acts", 2),
    ("charges", "coffer_charges", 2),
    ("command-tokens", "coffer_command_tokens", 6),
    ("wide-board", "coffer_wide_board", 6),
];

/// The forms of a ruleset, in the order of the first round.
const FORMS: [&str; 3] = ["static", "native", "wasm"];

/// Most actions of one playout before a fresh game is started.
const PLAYOUT_LIMIT: u64 = 2_000;

/// Target: a WebAssembly playout at least this fraction of the static form's speed.
const SPEED_TARGET: f64 = 0.5;

/// Target: memory per idle hosted game in WebAssembly form.
const MEMORY_TARGET: f64 = 16.0 * 1024.0;

/// Calls per round of the bare-call measurement.
const BARE_CALLS: u64 = 100_000;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace(['_', ','], "").parse().ok())
        .unwrap_or(default)
}

/// The module file of a ruleset crate in `dir`: `coffer_charges` -> `coffer-charges.wasm`.
fn module_of(dir: &Path, crate_name: &str) -> PathBuf {
    dir.join(format!("{}.wasm", crate_name.replace('_', "-")))
}

fn wasm_ruleset(path: &Path, id: &str) -> Arc<dyn DynRuleset> {
    load_module(path, None)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .into_iter()
        .find(|r| r.description().id == id)
        .unwrap_or_else(|| panic!("{} holds no ruleset '{id}'", path.display()))
}

/// The three forms of one ruleset.
fn forms(dir: &Path, id: &str, crate_name: &str) -> [Arc<dyn DynRuleset>; 3] {
    [
        static_ruleset(id).unwrap_or_else(|| panic!("{id} is not linked")),
        runtime_ruleset(&builtin_library(crate_name), id),
        wasm_ruleset(&module_of(dir, crate_name), id),
    ]
}

/// What one round of one form measured: CPU time, actions, and a digest of the games' final states (the
/// same in every form, or the forms did not play the same games).
#[derive(Clone, Copy, Default)]
struct Run {
    time: Duration,
    actions: u64,
    digest: u64,
}

/// Random playouts from successive seeds until `actions` actions were applied; only the playouts are
/// timed. `stepped`: the host drives each action (one crossing per action); otherwise the game runs the
/// playout on itself (one crossing per playout). Both make the same choices from the same draws.
fn playouts(ruleset: &dyn DynRuleset, players: u16, actions: u64, seed: u64, stepped: bool) -> Run {
    let mut run = Run::default();
    let mut seed = seed;
    let mut empty = 0;
    while run.actions < actions {
        seed += 1;
        let mut game = ruleset
            .new_game(&Setup::new(players, seed))
            .expect("a new game");
        let mut rng = GameRng::new(seed);
        let budget = (actions - run.actions).min(PLAYOUT_LIMIT);
        let start = ThreadTime::now();
        let n = if stepped {
            random_playout(&mut *game, &mut rng, budget, &mut ()).expect("listed actions apply")
        } else {
            game.playout(&mut rng, budget, &mut Progress::default())
                .expect("listed actions apply")
        };
        run.time += start.elapsed();
        run.digest = run
            .digest
            .rotate_left(5)
            .wrapping_add(game.state_hash().0 ^ n);
        run.actions += n;
        if n == 0 {
            empty += 1;
            assert!(empty < 100, "games without a legal action");
        }
    }
    run
}

/// `BARE_CALLS` calls of `legal_actions` (a cached count) on a fresh game: the bare cost of a call.
fn bare_calls(game: &mut dyn DynGame, player: Owner) -> Duration {
    let start = ThreadTime::now();
    for _ in 0..BARE_CALLS {
        black_box(game.legal_actions(black_box(player)));
    }
    start.elapsed()
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// ns per action (or call) of each round, per form and measure.
#[derive(Default)]
struct Rounds {
    /// `DynGame::playout`, per form.
    playout: [Vec<f64>; 3],
    /// `random_playout` over `dyn DynGame`, per form.
    stepped: [Vec<f64>; 3],
    /// `legal_actions`, per form.
    bare: [Vec<f64>; 3],
}

/// One idle game of `ruleset` per instance its games spread over: kept alive, they keep the instances
/// warm, as on a server with games running.
fn anchors(ruleset: &dyn DynRuleset, players: u16) -> Vec<Box<dyn DynGame>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..(coffer_host::wasm::INSTANCES_PER_CORE * cores) as u64)
        .map(|s| {
            ruleset
                .new_game(&Setup::new(players, u64::MAX - s))
                .unwrap()
        })
        .collect()
}

/// Sections 1 and 2 for one ruleset: the forms alternate, round after round.
fn measure_calls(
    dir: &Path,
    (id, crate_name, players): (&str, &str, u16),
    rounds: u64,
    actions: u64,
) -> Rounds {
    let forms = forms(dir, id, crate_name);
    // One idle game per instance keeps the instances of the module alive (see the module docs).
    let _anchors = anchors(&*forms[2], players);
    let mut bare_games: Vec<(Box<dyn DynGame>, Owner)> = forms
        .iter()
        .map(|r| {
            let mut game = r.new_game(&Setup::new(players, 7)).expect("a new game");
            let p = (0..players)
                .map(Owner)
                .find(|p| game.legal_actions(*p) > 0)
                .unwrap_or(Owner(0));
            (game, p)
        })
        .collect();
    // Round 0 warms every form up and is not counted.
    let mut out = Rounds::default();
    for round in 0..=rounds {
        let seed = 1_000_000 * (round + 1);
        let mut digests = [[0u64; 2]; 3];
        for k in 0..3 {
            let f = (k + round as usize) % 3;
            let ruleset = &*forms[f];
            let p = playouts(ruleset, players, actions, seed, false);
            let s = playouts(ruleset, players, actions, seed, true);
            let (game, player) = &mut bare_games[f];
            let b = bare_calls(&mut **game, *player);
            digests[f] = [p.digest, s.digest];
            assert_eq!(p.actions, s.actions, "{id}: the same playouts either way");
            if round > 0 {
                out.playout[f].push(p.time.as_nanos() as f64 / p.actions as f64);
                out.stepped[f].push(s.time.as_nanos() as f64 / s.actions as f64);
                out.bare[f].push(b.as_nanos() as f64 / BARE_CALLS as f64);
            }
        }
        assert!(
            digests.iter().all(|d| *d == digests[0] && d[0] == d[1]),
            "{id}: the forms played different games from the same seeds"
        );
    }
    out
}

/// The calls the server makes for one acknowledged action, in its order, and a new game when one ends.
const SERVER_CALLS: [&str; 6] = ["legal", "apply", "view", "outcome", "snapshot", "new game"];

/// What the server asks of a ruleset per action (`server/src/games`): `GET legal` (count, then each
/// action's JSON), the action applied as JSON with the actor's events, the actor's table and resources
/// (the answer's wording), the outcome, a snapshot every 64 actions, and a new game for each game that
/// ended (the load generator replaces it). CPU ns per action of each, per form, minimum of the rounds.
fn measure_server(
    dir: &Path,
    (id, crate_name, players): (&str, &str, u16),
    rounds: u64,
    actions: u64,
) {
    let forms = forms(dir, id, crate_name);
    let _anchors = anchors(&*forms[2], players);
    let mut best = [[f64::MAX; SERVER_CALLS.len()]; 3];
    for round in 0..=rounds {
        for k in 0..3 {
            let f = (k + round as usize) % 3;
            let ruleset = &*forms[f];
            let mut spent = [Duration::ZERO; SERVER_CALLS.len()];
            let mut rng = GameRng::new(round);
            let mut seed = 0;
            let mut game = ruleset.new_game(&Setup::new(players, seed)).unwrap();
            let mut done = 0;
            let mut seq = 0u64;
            while done < actions {
                let t = ThreadTime::now();
                let movers: Vec<Owner> = game.to_act().to_vec();
                let actor = movers.into_iter().find(|&p| game.legal_actions(p) > 0);
                let Some(actor) = actor else {
                    seed += 1;
                    let t = ThreadTime::now();
                    game = ruleset.new_game(&Setup::new(players, seed)).unwrap();
                    spent[5] += t.elapsed();
                    continue;
                };
                let count = game.legal_actions(actor);
                let list: Vec<String> = (0..count)
                    .filter_map(|i| game.legal_action_json(i))
                    .collect();
                spent[0] += t.elapsed();
                let chosen = &list[rng.below(list.len() as u64) as usize];
                let t = ThreadTime::now();
                let report = game
                    .apply_json_reporting(actor, chosen, coffer_core::EventsFor::Seat(Some(actor)))
                    .expect("a legal action applies");
                spent[1] += t.elapsed();
                black_box(report);
                let t = ThreadTime::now();
                black_box((game.table(Some(actor)), game.resources(Some(actor))));
                spent[2] += t.elapsed();
                let t = ThreadTime::now();
                let finished = matches!(game.outcome(), coffer_core::Outcome::Finished { .. });
                spent[3] += t.elapsed();
                seq += 1;
                if seq.is_multiple_of(64) || finished {
                    let t = ThreadTime::now();
                    black_box(game.snapshot(coffer_core::Format::Binary).ok());
                    spent[4] += t.elapsed();
                }
                done += 1;
                if finished {
                    seed += 1;
                    let t = ThreadTime::now();
                    game = ruleset.new_game(&Setup::new(players, seed)).unwrap();
                    spent[5] += t.elapsed();
                }
            }
            if round > 0 {
                for (b, s) in best[f].iter_mut().zip(spent) {
                    *b = b.min(s.as_nanos() as f64 / actions as f64);
                }
            }
        }
    }
    println!("{id} ({players} players), CPU ns per action, minimum of {rounds} rounds:");
    println!(
        "  {:<10} {:>10} {:>10} {:>10} {:>12}",
        "call", "static", "native", "wasm", "wasm-native"
    );
    let total = |f: usize| best[f].iter().sum::<f64>();
    for (c, name) in SERVER_CALLS.iter().enumerate() {
        let [s, n, w] = [0, 1, 2].map(|f| best[f][c]);
        println!("  {name:<10} {s:>10.0} {n:>10.0} {w:>10.0} {:>12.0}", w - n);
    }
    let [s, n, w] = [0, 1, 2].map(total);
    println!(
        "  {:<10} {s:>10.0} {n:>10.0} {w:>10.0} {:>12.0}",
        "all",
        w - n
    );
}

fn report_calls(id: &str, players: u16, r: &Rounds) {
    let [ps, pn, pw] = [0, 1, 2].map(|f| min(&r.playout[f]));
    let [ss, sn, sw] = [0, 1, 2].map(|f| min(&r.stepped[f]));
    let [bs, bn, bw] = [0, 1, 2].map(|f| min(&r.bare[f]));
    let med = |v: &[Vec<f64>; 3]| [0, 1, 2].map(|f| median(&v[f]));
    let [mps, mpn, mpw] = med(&r.playout);
    let ratio_medians = |a: &[f64], b: &[f64]| {
        let per_round: Vec<f64> = a.iter().zip(b).map(|(a, b)| a / b).collect();
        median(&per_round)
    };
    println!("{id} ({players} players), ns per action, minimum / median round:");
    println!(
        "  1. playout (one crossing a playout): static {ps:.1} / {mps:.1}, native {pn:.1} / {mpn:.1}, \
         wasm {pw:.1} / {mpw:.1}"
    );
    println!(
        "     speed: static {:.2} M/s, native {:.2} M/s, wasm {:.2} M/s",
        1e3 / ps,
        1e3 / pn,
        1e3 / pw
    );
    let speed = ps / pw;
    println!(
        "     wasm/static speed {speed:.3}x (median of rounds {:.3}x; target >= {SPEED_TARGET}x: {}), \
         wasm/native speed {:.3}x, native/static time {:.3}x",
        1.0 / ratio_medians(&r.playout[2], &r.playout[0]),
        if speed >= SPEED_TARGET {
            "met".to_owned()
        } else {
            format!("missed by {:.2}x", SPEED_TARGET / speed)
        },
        pn / pw,
        pn / ps
    );
    println!(
        "  2. stepped (one crossing an action): static {ss:.1} / {:.1}, native {sn:.1} / {:.1}, wasm \
         {sw:.1} / {:.1}",
        median(&r.stepped[0]),
        median(&r.stepped[1]),
        median(&r.stepped[2])
    );
    println!(
        "     wasm - static = {:.1} ns an action; the crossing alone, (wasm stepped - playout) - \
         (static stepped - playout) = {:.1} ns (native: {:.1} ns)",
        sw - ss,
        (sw - pw) - (ss - ps),
        (sn - pn) - (ss - ps)
    );
    println!(
        "     bare call (`legal_actions`, cached): static {bs:.1}, native {bn:.1}, wasm {bw:.1} ns; \
         wasm - static {:.1} ns",
        bw - bs
    );
}

/// `--profile FORM ID playout|stepped`: playouts of one form of one ruleset, for an instruction count
/// (`valgrind --tool=callgrind --toggle-collect='wasm::profile_playouts*'`): one warm-up playout, then
/// `WASM_BENCH_ACTIONS` actions in [`profile_playouts`].
fn profile(dir: &Path, form: &str, id: &str, mode: &str) {
    let &(_, crate_name, players) = RULESETS
        .iter()
        .find(|r| r.0 == id)
        .expect("a measured ruleset");
    let ruleset = match form {
        "static" | "raw" => static_ruleset(id).expect("linked"),
        "native" => runtime_ruleset(&builtin_library(crate_name), id),
        _ => wasm_ruleset(&module_of(dir, crate_name), id),
    };
    let stepped = mode == "stepped";
    // One idle game per instance keeps the module's instances alive, as in the timed sections.
    let _anchors = anchors(&*ruleset, players);
    if form == "raw" {
        // The module in this bench's engine with the host's settings (see `engines`).
        let mut raw = Raw::new(&module_of(dir, crate_name), true, false);
        raw.playouts(players, PLAYOUT_LIMIT, 0);
        let actions = env_or("WASM_BENCH_ACTIONS", 20_000);
        let run = profile_raw(&mut raw, players, actions);
        println!("{id} raw playout: {} actions", run.actions);
        return;
    }
    playouts(&*ruleset, players, PLAYOUT_LIMIT, 0, stepped);
    let actions = env_or("WASM_BENCH_ACTIONS", 20_000);
    let run = profile_playouts(&*ruleset, players, actions, stepped);
    println!(
        "{id} {form} {mode}: {} actions, {:.1} ns per action (under a profiler)",
        run.actions,
        run.time.as_nanos() as f64 / run.actions as f64
    );
}

/// The profiled playouts of the `raw` form (a function of its own, as [`profile_playouts`]).
#[inline(never)]
fn profile_raw(raw: &mut Raw, players: u16, actions: u64) -> Run {
    raw.playouts(players, actions, 1_000_000)
}

/// The profiled playouts (a function of its own, so a profiler can collect in it alone).
#[inline(never)]
fn profile_playouts(ruleset: &dyn DynRuleset, players: u16, actions: u64, stepped: bool) -> Run {
    playouts(ruleset, players, actions, 1_000_000, stepped)
}

/// `--precompile MODULE OUT`: `MODULE` compiled with the host engine's settings (`host/src/wasm/engine.rs`)
/// into the ELF file `OUT`, whose symbols (`nm OUT`: `wasm[0]::function[N]`, with the module's names where
/// it has them) give each compiled function's offset in the code, to name the addresses a profile of
/// `--profile` shows for the code of the module.
fn precompile(module: &Path, out: &Path) {
    let mut config = wasmtime::Config::new();
    config
        .epoch_interruption(true)
        .max_wasm_stack(1 << 20)
        .cranelift_opt_level(wasmtime::OptLevel::Speed);
    let engine = wasmtime::Engine::new(&config).expect("the engine's configuration is valid");
    let bytes = std::fs::read(module).expect("the module reads");
    let elf = engine
        .precompile_module(&bytes)
        .expect("the module compiles");
    std::fs::write(out, elf).expect("the compiled module is written");
}

/// A module run by an engine of this bench's own settings, not the host's: only the calls of a playout
/// (`coffer_init`, `coffer_input`, `coffer_new_game`, `coffer_playout`, `coffer_free_game`), to see what
/// an engine setting or a build of the module changes (the `engines` experiment).
struct Raw {
    store: wasmtime::Store<()>,
    memory: wasmtime::Memory,
    reply_at: usize,
    input: wasmtime::TypedFunc<u32, u32>,
    new_game: wasmtime::TypedFunc<(u32, u32), u32>,
    playout: wasmtime::TypedFunc<(u32, u64, u64, u64), u32>,
    free_game: wasmtime::TypedFunc<u32, u32>,
    state_hash: wasmtime::TypedFunc<u32, u32>,
}

impl Raw {
    /// `module` compiled by an engine with the host's settings, `epoch` checks or not, and the
    /// wide-arithmetic proposal (`i64.mul_wide_u`) allowed or not.
    fn new(module: &Path, epoch: bool, wide: bool) -> Raw {
        let mut config = wasmtime::Config::new();
        config
            .epoch_interruption(epoch)
            .max_wasm_stack(1 << 20)
            .cranelift_opt_level(wasmtime::OptLevel::Speed)
            .wasm_wide_arithmetic(wide);
        let engine = wasmtime::Engine::new(&config).expect("a valid configuration");
        let compiled = wasmtime::Module::from_file(&engine, module).expect("the module compiles");
        let mut linker = wasmtime::Linker::new(&engine);
        linker
            .func_wrap("coffer", "panicked", |_: u32, _: u32| {})
            .expect("the import links");
        let mut store = wasmtime::Store::new(&engine, ());
        // No epoch ticker: the checks run, the deadline never comes.
        store.set_epoch_deadline(u64::MAX / 2);
        let instance = linker
            .instantiate(&mut store, &compiled)
            .expect("the module instantiates");
        let memory = instance.get_memory(&mut store, "memory").expect("memory");
        let f = |name: &str| format!("coffer_{name}");
        let init = instance
            .get_typed_func::<(), u32>(&mut store, &f("init"))
            .expect("init");
        let reply_at = init.call(&mut store, ()).expect("init runs") as usize;
        Raw {
            input: instance.get_typed_func(&mut store, &f("input")).unwrap(),
            new_game: instance.get_typed_func(&mut store, &f("new_game")).unwrap(),
            playout: instance.get_typed_func(&mut store, &f("playout")).unwrap(),
            free_game: instance
                .get_typed_func(&mut store, &f("free_game"))
                .unwrap(),
            state_hash: instance
                .get_typed_func(&mut store, &f("state_hash"))
                .unwrap(),
            store,
            memory,
            reply_at,
        }
    }

    /// The reply's `u32` at `offset` and `u64` at 24 (`value` is at 16, `wide` at 24).
    fn reply(&self, offset: usize) -> (u32, u64) {
        let data = &self.memory.data(&self.store)[self.reply_at..];
        let u32_at = u32::from_le_bytes(data[offset..offset + 4].try_into().unwrap());
        let wide = u64::from_le_bytes(data[24..32].try_into().unwrap());
        (u32_at, wide)
    }

    /// Starts a game and keeps it (idle), as the host's anchors are kept.
    fn anchor(&mut self, players: u16) {
        let setup = serde_json::to_vec(&Setup::new(players, u64::MAX)).unwrap();
        let len = setup.len() as u32;
        let at = self.input.call(&mut self.store, len).unwrap() as usize;
        self.memory.write(&mut self.store, at, &setup).unwrap();
        let status = self.new_game.call(&mut self.store, (0, len)).unwrap();
        assert_eq!(status, coffer_core::abi::OK, "a new game");
    }

    /// Playouts as [`playouts`] runs them (the same seeds, only the playout call timed).
    fn playouts(&mut self, players: u16, actions: u64, seed: u64) -> Run {
        let mut run = Run::default();
        let mut seed = seed;
        while run.actions < actions {
            seed += 1;
            let setup = serde_json::to_vec(&Setup::new(players, seed)).unwrap();
            let len = setup.len() as u32;
            let at = self.input.call(&mut self.store, len).unwrap() as usize;
            self.memory.write(&mut self.store, at, &setup).unwrap();
            let status = self.new_game.call(&mut self.store, (0, len)).unwrap();
            assert_eq!(status, coffer_core::abi::OK, "a new game");
            let handle = self.reply(16).0;
            let [high, low]: [u64; 2] = GameRng::new(seed).into();
            let budget = (actions - run.actions).min(PLAYOUT_LIMIT);
            let start = ThreadTime::now();
            let status = self
                .playout
                .call(&mut self.store, (handle, high, low, budget))
                .unwrap();
            run.time += start.elapsed();
            assert_eq!(status, coffer_core::abi::OK, "listed actions apply");
            let n = self.reply(16).1;
            run.actions += n;
            self.state_hash.call(&mut self.store, handle).unwrap();
            let hash = self.reply(16).1;
            run.digest = run.digest.rotate_left(5).wrapping_add(hash ^ n);
            self.free_game.call(&mut self.store, handle).unwrap();
        }
        run
    }
}

/// The `engines` experiment: each ruleset's playouts, static against the module loaded by the host and
/// run in this bench's engines with the host's settings, without epoch checks, and (with `WASM_BENCH_WIDE_DIR`: modules built with
/// `-C target-feature=+wide-arithmetic`) with 128-bit multiplies inline, alternating rounds.
fn engines(dir: &Path, rounds: u64, actions: u64) {
    let wide_dir = std::env::var_os("WASM_BENCH_WIDE_DIR").map(PathBuf::from);
    println!(
        "engines: static against the module in engines of this bench ({rounds} rounds of {actions} \
         actions, minimum / median ns per action):"
    );
    for (id, crate_name, players) in RULESETS {
        let statik = static_ruleset(id).expect("linked");
        let hosted = wasm_ruleset(&module_of(dir, crate_name), id);
        let _anchors = anchors(&*hosted, players);
        let mut variants = vec![
            (
                "epoch (host)",
                Raw::new(&module_of(dir, crate_name), true, false),
            ),
            (
                "no epoch",
                Raw::new(&module_of(dir, crate_name), false, false),
            ),
        ];
        if let Some(wide) = wide_dir.as_deref().map(|d| module_of(d, crate_name))
            && wide.is_file()
        {
            variants.push(("wide, epoch", Raw::new(&wide, true, true)));
            variants.push(("wide, no epoch", Raw::new(&wide, false, true)));
        }
        if std::env::var_os("WASM_BENCH_ANCHOR").is_some() {
            let mut raw = Raw::new(&module_of(dir, crate_name), true, false);
            raw.anchor(players);
            variants.push(("epoch, 1 idle", raw));
        }
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len() + 2];
        for round in 0..=rounds {
            let seed = 1_000_000 * (round + 1);
            let s = playouts(&*statik, players, actions, seed, false);
            let h = playouts(&*hosted, players, actions, seed, false);
            let mut runs = vec![s, h];
            for (_, raw) in &mut variants {
                runs.push(raw.playouts(players, actions, seed));
            }
            assert!(
                runs.iter()
                    .all(|r| r.actions == s.actions && r.digest == s.digest),
                "{id}: the same playouts"
            );
            if round > 0 {
                for (k, r) in runs.iter().enumerate() {
                    times[k].push(r.time.as_nanos() as f64 / r.actions as f64);
                }
            }
        }
        let st = min(&times[0]);
        println!("  {id:<15} static {st:.1} / {:.1}", median(&times[0]));
        let names = std::iter::once("host's engine").chain(variants.iter().map(|v| v.0));
        for (k, name) in names.enumerate() {
            let t = &times[k + 1];
            println!(
                "  {id:<15} {name:<15} {:.1} / {:.1}: speed {:.3}x static",
                min(t),
                median(t),
                st / min(t)
            );
        }
    }
}

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

/// Section 3, in this fresh process: `games` games of `id` in one host, in `form`.
fn memory_child(dir: &Path, id: &str, form: &str, games: u64) {
    let &(_, crate_name, players) = RULESETS
        .iter()
        .find(|r| r.0 == id)
        .expect("a measured ruleset");
    let registry = match form {
        "static" => Registry::with_static().expect("static rulesets"),
        _ => {
            let mut registry = Registry::new();
            let report = registry.load_file(&module_of(dir, crate_name), None);
            assert!(report.errors.is_empty(), "{:?}", report.errors);
            registry
        }
    };
    let host = Host::new(registry);
    // One game first, so one-time allocations (content parsed on first use, lazy tables) are not counted.
    host.start(id, Setup::new(players, u64::MAX))
        .expect("a game starts");
    let rss_before = rss();
    let region = Region::new(GLOBAL);
    for seed in 0..games {
        host.start(id, Setup::new(players, seed))
            .expect("a game starts");
    }
    let change = region.change();
    let rss_after = rss();
    let held = change.bytes_allocated as f64 - change.bytes_deallocated as f64;
    let heap = held / games as f64;
    let resident = rss_after.saturating_sub(rss_before) as f64 / games as f64;
    let verdict = if form == "wasm" {
        if resident <= MEMORY_TARGET {
            format!(
                " (resident {:.2}x the 16 KiB target: met)",
                resident / MEMORY_TARGET
            )
        } else {
            format!(
                " (resident {:.2}x the 16 KiB target: missed by {:.0} B)",
                resident / MEMORY_TARGET,
                resident - MEMORY_TARGET
            )
        }
    } else {
        String::new()
    };
    println!(
        "  {id:<15} {form:<6} {players} players: host heap {heap:>7.0} B/game, resident {resident:>7.0} \
         B/game{verdict}, {} games hosted",
        host.ids().len()
    );
}

/// Section 4, in this fresh process: each module loaded twice. The engine starts first (a module without
/// the contract's exports, refused after compiling), so the first figure is compiling alone.
fn load_child(dir: &Path) {
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let empty = scratch.path().join("empty.wasm");
    std::fs::write(&empty, wat::parse_str("(module)").expect("valid text")).expect("written");
    let started = Instant::now();
    assert!(load_module(&empty, None).is_err(), "an empty module loads");
    println!("engine {}", started.elapsed().as_nanos());
    for (id, crate_name, _) in RULESETS {
        let path = module_of(dir, crate_name);
        let mut figures = Vec::new();
        for _ in 0..2 {
            let (wall, cpu) = (Instant::now(), ProcessTime::now());
            let rulesets = load_module(&path, None).unwrap_or_else(|e| panic!("{id}: {e}"));
            figures.push((wall.elapsed().as_nanos(), cpu.elapsed().as_nanos()));
            black_box(rulesets);
        }
        println!(
            "module {id} {} {} {} {}",
            figures[0].0, figures[0].1, figures[1].0, figures[1].1
        );
    }
}

/// Runs this binary in a fresh process to measure `what` with the modules of `dir`, and returns its
/// output.
fn child(dir: &Path, what: &[&str]) -> String {
    let exe = std::env::current_exe().expect("the bench binary's path");
    let out = Command::new(exe)
        .arg("--child")
        .arg(dir)
        .args(what)
        .output()
        .expect("the bench binary runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ms(ns: f64) -> String {
    format!("{:.1} ms", ns / 1e6)
}

/// Section 4: `runs` fresh processes, each loading every module twice.
fn report_load(dir: &Path, runs: usize) {
    println!("\n4. module load, {runs} fresh processes, wall (process CPU), minimum / median:");
    let mut engine = Vec::new();
    // Per module: first wall, first CPU, second wall, second CPU.
    let mut modules: Vec<[Vec<f64>; 4]> = RULESETS.iter().map(|_| Default::default()).collect();
    for _ in 0..runs {
        for line in child(dir, &["load"]).lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["engine", ns] => engine.push(ns.parse::<f64>().unwrap()),
                ["module", id, rest @ ..] => {
                    let i = RULESETS.iter().position(|r| r.0 == *id).unwrap();
                    for (k, ns) in rest.iter().enumerate() {
                        modules[i][k].push(ns.parse().unwrap());
                    }
                }
                _ => println!("{line}"),
            }
        }
    }
    println!(
        "  engine start (an empty module): {} / {}",
        ms(min(&engine)),
        ms(median(&engine))
    );
    for ((id, crate_name, _), m) in RULESETS.iter().zip(&modules) {
        let size = std::fs::metadata(module_of(dir, crate_name)).map_or(0, |m| m.len());
        println!(
            "  {id:<15} {:>9} bytes: first load {} ({}) / {} ({}); second load {} ({}) / {} ({}); \
             first/second {:.0}x",
            size,
            ms(min(&m[0])),
            ms(min(&m[1])),
            ms(median(&m[0])),
            ms(median(&m[1])),
            ms(min(&m[2])),
            ms(min(&m[3])),
            ms(median(&m[2])),
            ms(median(&m[3])),
            min(&m[0]) / min(&m[2])
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `cargo test --benches` runs bench binaries with `--test`: only measure under `cargo bench`.
    if args.iter().any(|a| a == "--test") {
        return;
    }
    let games = env_or("WASM_BENCH_GAMES", 10_000);
    if let Some(i) = args.iter().position(|a| a == "--precompile") {
        precompile(Path::new(&args[i + 1]), Path::new(&args[i + 2]));
        return;
    }
    // A child started by `child`: the modules' directory, then what to measure.
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let dir = Path::new(&args[i + 1]);
        match args[i + 2].as_str() {
            "memory" => memory_child(dir, &args[i + 3], &args[i + 4], games),
            _ => load_child(dir),
        }
        return;
    }
    let Some(dir) = wasm_modules() else {
        return;
    };
    if let Some(i) = args.iter().position(|a| a == "--profile") {
        profile(&dir, &args[i + 1], &args[i + 2], &args[i + 3]);
        return;
    }
    let named: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let wanted = |s: &str| named.is_empty() || named.contains(&s);
    let rounds = env_or("WASM_BENCH_ROUNDS", 11);
    let actions = env_or("WASM_BENCH_ACTIONS", 20_000);
    if wanted("playout") || wanted("calls") {
        println!(
            "1-2. random playouts, forms {FORMS:?} alternating, {rounds} rounds of {actions} actions per \
             form and measure (after one warm-up round), the same seeds, CPU time of this thread:"
        );
        for ruleset in RULESETS {
            let r = measure_calls(&dir, ruleset, rounds, actions);
            report_calls(ruleset.0, ruleset.2, &r);
        }
    }
    if named.contains(&"server") {
        let rounds = rounds.min(5);
        let actions = actions.min(5_000);
        println!(
            "the ruleset calls of one acknowledged action on the server ({actions} actions a round):"
        );
        for ruleset in RULESETS.iter().take(3) {
            measure_server(&dir, *ruleset, rounds, actions);
        }
    }
    if wanted("memory") {
        println!(
            "\n3. memory per idle hosted game, {games} fresh games in one host, each ruleset and form in \
             a fresh process:"
        );
        for (id, _, _) in RULESETS {
            for form in ["static", "wasm"] {
                print!("{}", child(&dir, &["memory", id, form]));
            }
        }
    }
    if wanted("load") {
        report_load(&dir, 5);
    }
    // An experiment, run only when named.
    if named.contains(&"engines") {
        engines(&dir, rounds, actions);
    }
}

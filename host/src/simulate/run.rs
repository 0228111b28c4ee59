//! A checked run: games played on several threads, each action checked, every violation shrunk to a
//! script and reported.

use crate::simulate::attempt::{Attempted, attempt};
use crate::simulate::deep_check::{Replica, deep_check};
use crate::simulate::playout::pick_legal;
use crate::simulate::report::{
    Found, Report, ScriptViolation, SimOptions, Step, Tally, ViolationKind, plugin_panic,
    setup_failed,
};
use crate::simulate::script::{check_script, shrink, to_script, write_script};
use coffer_core::abi::panic_message;
use coffer_core::{DynGame, DynRuleset, GameRng, Outcome, Owner, Setup};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Runs `options.games` random playouts of `ruleset` on `options.threads` threads, checking everything the
/// module docs list, and reports. `game_done` is called once per game played, from the thread that played
/// it (the `coffer` command advances a progress bar with it; pass `&|| {}` for nothing).
pub fn run(
    ruleset: &Arc<dyn DynRuleset>,
    options: &SimOptions,
    game_done: &(dyn Fn() + Sync),
) -> Report {
    let threads = options.threads.max(1);
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    let start = Instant::now();
    let totals: Vec<Tally> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut tally = Tally::default();
                    let began = Instant::now();
                    while !stop.load(Ordering::Relaxed) {
                        let game = next.fetch_add(1, Ordering::Relaxed);
                        if game >= options.games {
                            break;
                        }
                        if let Some(v) = simulate_game(ruleset, options, game, &mut tally) {
                            let mut all = found.lock().unwrap_or_else(|p| p.into_inner());
                            // A poisoned ruleset fails every later game the same way: stop, and
                            // report only the panic that poisoned it (or the first refusal).
                            let poisoned = matches!(v.kind, ViolationKind::Poisoned(_));
                            if !poisoned || all.is_empty() {
                                all.push(v);
                            }
                            if poisoned || all.len() >= options.max_violations.max(1) {
                                stop.store(true, Ordering::Relaxed);
                            }
                        }
                        game_done();
                    }
                    tally.thread.busy = began.elapsed();
                    tally
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    let elapsed = start.elapsed();
    let mut report = Report {
        ruleset: ruleset.description().key(),
        players: options.players,
        threads,
        elapsed,
        ..Report::default()
    };
    for t in totals {
        report.games += t.thread.games;
        report.actions += t.thread.actions;
        report.attempts += t.attempts;
        report.refusals += t.refusals;
        report.finished += t.finished;
        report.stuck += t.stuck;
        report.at_limit += t.at_limit;
        report.deep_checks += t.deep_checks;
        report.per_thread.push(t.thread);
    }
    let mut violations = found.into_inner().unwrap_or_else(|p| p.into_inner());
    violations.sort_by_key(|v| v.game);
    report.violations = violations;
    report
}

/// The game's player count: fixed, or drawn from the seed within the ruleset's range.
pub(crate) fn players_for(ruleset: &dyn DynRuleset, options: &SimOptions, seed: u64) -> u16 {
    if let Some(p) = options.players {
        return p;
    }
    let d = ruleset.description();
    let (min, max) = (d.min_players, d.max_players.max(d.min_players));
    let span = u64::from(max - min) + 1;
    let mut rng = GameRng::new(seed ^ 0x5EED_0F9A_11E5);
    min + rng.below(span) as u16
}

pub(crate) fn simulate_game(
    ruleset: &Arc<dyn DynRuleset>,
    options: &SimOptions,
    game: u64,
    tally: &mut Tally,
) -> Option<Found> {
    let seed = options.seed.wrapping_add(game);
    let players = players_for(&**ruleset, options, seed);
    let setup = Setup::new(players, seed).config(options.config.clone());
    let mut log: Vec<Step> = Vec::new();
    let mut actions = 0u64;
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        play(ruleset, options, &setup, tally, &mut log, &mut actions)
    }));
    tally.thread.games += 1;
    tally.thread.actions += actions;
    let kind = match outcome {
        Ok(Ok(())) => return None,
        Ok(Err(kind)) => kind,
        Err(panic) => ViolationKind::Panicked(panic_message(&*panic)),
    };
    Some(report_violation(
        ruleset, options, game, &setup, &log, actions, kind,
    ))
}

/// Plays one game to its end, or to its first violation.
pub(crate) fn play(
    ruleset: &Arc<dyn DynRuleset>,
    options: &SimOptions,
    setup: &Setup,
    tally: &mut Tally,
    log: &mut Vec<Step>,
    actions: &mut u64,
) -> Result<(), ViolationKind> {
    let mut game = ruleset
        .new_game(setup)
        .map_err(|e| setup_failed(setup, e))?;
    let mut replica = Replica::new(&**ruleset, setup)?;
    let mut rng = GameRng::new(setup.seed ^ 0xC0FF_EE00_51A7_0001);
    let mut order = Vec::with_capacity(usize::from(setup.players));
    let share = options.illegal_share.clamp(0.0, 0.9);
    let threshold = (share * (u64::MAX as f64)) as u64;
    let every = options.check_every.max(1);
    game.check_invariants()
        .map_err(|v| ViolationKind::Invariant(v.to_string()))?;
    deep_check(&**ruleset, &mut *game, &mut replica, log)?;
    tally.deep_checks += 1;
    loop {
        if *actions >= options.max_actions {
            tally.at_limit += 1;
            break;
        }
        let outcome = game.outcome();
        plugin_failure(&*game)?;
        if outcome != Outcome::Ongoing {
            for p in 0..setup.players {
                let count = game.legal_actions(Owner(p));
                if count > 0 {
                    return Err(ViolationKind::FinishedWithLegalActions {
                        outcome,
                        player: Owner(p),
                        count,
                    });
                }
            }
            tally.finished += 1;
            break;
        }
        let Some((player, index)) = pick_legal(&mut *game, &mut rng, &mut order) else {
            // No legal action from a plugin that failed listing them is no stuck game.
            plugin_failure(&*game)?;
            tally.stuck += 1;
            break;
        };
        if threshold > 0 && rng.next_u64() < threshold {
            tally.attempts += 1;
            match attempt(&mut *game, &mut rng, player, index, log)? {
                Attempted::Refused => tally.refusals += 1,
                Attempted::Accepted => game
                    .check_invariants()
                    .map_err(|v| ViolationKind::Invariant(v.to_string()))?,
            }
            continue;
        }
        // The log keeps each action as its JSON: the replica replays that, a reproducing script is made of
        // it, and it needs no replay of its own (impossible once a runtime-loaded ruleset is poisoned).
        let Some(action) = game.legal_action_json(index) else {
            return Err(ViolationKind::ListedRefused {
                player,
                action: format!("legal action #{index}"),
                error: "it cannot be written as JSON".to_string(),
            });
        };
        log.push(Step {
            player: player.0,
            text: action,
        });
        if let Err(e) = game.apply_legal(player, index) {
            if let Some(v) = plugin_panic(&e) {
                return Err(v);
            }
            return Err(ViolationKind::ListedRefused {
                player,
                action: log.last().map(|s| s.text.clone()).unwrap_or_default(),
                error: e.to_string(),
            });
        }
        *actions += 1;
        game.check_invariants()
            .map_err(|v| ViolationKind::Invariant(v.to_string()))?;
        if (*actions).is_multiple_of(every) {
            deep_check(&**ruleset, &mut *game, &mut replica, log)?;
            tally.deep_checks += 1;
        }
    }
    deep_check(&**ruleset, &mut *game, &mut replica, log)?;
    tally.deep_checks += 1;
    Ok(())
}

/// A runtime-loaded game whose plugin failed in a call without an error of its own (listing legal
/// actions, the outcome, hashing) answered with a neutral value: that is a panic, not an answer.
pub(crate) fn plugin_failure(game: &dyn DynGame) -> Result<(), ViolationKind> {
    match game.failure() {
        Some(message) => Err(ViolationKind::Panicked(message)),
        None => Ok(()),
    }
}

pub(crate) fn report_violation(
    ruleset: &Arc<dyn DynRuleset>,
    options: &SimOptions,
    game: u64,
    setup: &Setup,
    log: &[Step],
    actions: u64,
    kind: ViolationKind,
) -> Found {
    let mut found = Found {
        ruleset: ruleset.description().id.clone(),
        game,
        seed: setup.seed,
        players: setup.players,
        after_actions: actions,
        kind,
        script: None,
        script_lines: 0,
        original_lines: log.len(),
        reproduced: false,
        script_error: None,
    };
    let script = to_script(log);
    // A runtime-loaded ruleset that panicked is poisoned for the rest of this process: its script can be
    // written but neither re-checked nor shrunk here.
    let poisoned = matches!(
        check_script(&**ruleset, setup, &[]),
        Some(ScriptViolation {
            kind: ViolationKind::Poisoned(_),
            ..
        })
    );
    let reproduces = !poisoned
        && check_script(&**ruleset, setup, &script)
            .is_some_and(|v| v.kind.name() == found.kind.name());
    if poisoned {
        found.script_error = Some(
            "the ruleset is poisoned after its panic, so the script was neither re-checked nor shrunk here: \
             re-check it in a fresh process"
                .to_string(),
        );
    }
    let script = if reproduces {
        shrink(
            &**ruleset,
            setup,
            script,
            &found.kind,
            options.shrink_budget,
        )
    } else {
        script
    };
    found.reproduced = reproduces;
    found.script_lines = script.len();
    let id = &ruleset.description().id;
    let path = options.repro_dir.join(format!(
        "coffer-repro-{id}-seed{}-p{}-{}.jsonl",
        setup.seed,
        setup.players,
        found.kind.name()
    ));
    match write_script(&path, &script) {
        Ok(()) => found.script = Some(path),
        Err(e) => found.script_error = Some(e.to_string()),
    }
    found
}

//! `coffer_host::simulate`: random playouts find no violation in correct rulesets (a small test ruleset and
//! the three built-in ones, statically linked and runtime-loaded), and do find, shrink and write a
//! reproducing script for each kind of deliberately broken ruleset.

use coffer_core::{
    ActionError, Adapter, AmountId, AmountSpec, Cause, Description, DynRuleset, Key, Kind, Ledger,
    Outcome, Owner, Ruleset, Setup, SetupError, Violation,
};
use coffer_host::Registry;
use coffer_host::simulate::{self, Report, ScriptLine, SimOptions, ViolationKind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

// Link the built-in plugin crates so that their rulesets are registered statically.
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

/// A deliberate defect of the test ruleset.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Bug {
    /// None: a correct ruleset.
    None,
    /// Every refused `take` first bumps a counter of the ruleset's own state.
    RefusalChangesState,
    /// `take` is accepted from any player, though only the player to move has it listed.
    AcceptsUnlisted,
    /// A ruleset invariant breaks once player 0 has taken exactly 2 coins three times.
    InvariantAfterThreeTwos,
    /// `to_act` names the player after the one to move.
    ToActSkipsTheMover,
}

/// A race to ten coins: on your turn, take 1 to 3 coins (into a purse capped at 10) or pass.
struct Race {
    bug: Bug,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
struct RaceState {
    ledger: Ledger,
    purse: Vec<AmountId>,
    turn: u16,
    twos: u32,
    refusals: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
enum RaceAction {
    Take { n: u8 },
    Pass,
}

impl Race {
    fn shared(bug: Bug) -> Arc<dyn DynRuleset> {
        Adapter::shared(Race { bug })
    }
}

impl Ruleset for Race {
    type State = RaceState;
    type Action = RaceAction;
    type Config = ();

    fn describe(&self) -> Description {
        let mut d = Description::new(
            format!("race-{:?}", self.bug).to_lowercase(),
            "0.1.0",
            "race to ten coins",
        );
        d.max_players = 4;
        d
    }

    fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<RaceState, SetupError> {
        let mut ledger = Ledger::new(players, seed);
        let purse = (0..players)
            .map(|p| ledger.add_amount(AmountSpec::new(Key::new(Owner(p), Kind(0), 0)).cap(10)))
            .collect::<Result<_, _>>()?;
        Ok(RaceState {
            ledger,
            purse,
            turn: 0,
            twos: 0,
            refusals: 0,
        })
    }

    fn legal_actions(&self, s: &RaceState, p: Owner, out: &mut Vec<RaceAction>) {
        if self.outcome(s) == Outcome::Ongoing && p.0 == s.turn {
            out.extend((1..=3).map(|n| RaceAction::Take { n }));
            out.push(RaceAction::Pass);
        }
    }

    fn to_act(&self, s: &RaceState, out: &mut Vec<Owner>) {
        if self.outcome(s) == Outcome::Ongoing {
            let skip = u16::from(self.bug == Bug::ToActSkipsTheMover);
            out.push(Owner((s.turn + skip) % s.ledger.owners()));
        }
    }

    fn apply(&self, s: &mut RaceState, p: Owner, a: &RaceAction) -> Result<(), ActionError> {
        let bugged_take =
            matches!(a, RaceAction::Take { .. }) && self.bug == Bug::RefusalChangesState;
        let refuse = |s: &mut RaceState, e: ActionError| {
            if bugged_take {
                s.refusals += 1;
            }
            Err(e)
        };
        if self.outcome(s) != Outcome::Ongoing {
            return refuse(s, ActionError::GameOver);
        }
        let anyone = self.bug == Bug::AcceptsUnlisted && matches!(a, RaceAction::Take { .. });
        if p.0 != s.turn && !anyone {
            return refuse(
                s,
                ActionError::NotYourTurn {
                    player: p,
                    reason: format!("p{} moves", s.turn),
                },
            );
        }
        if let RaceAction::Take { n } = *a {
            if !(1..=3).contains(&n) {
                return refuse(s, ActionError::Illegal(format!("take {n}: 1 to 3 coins")));
            }
            s.ledger.gain(
                s.purse[p.index()],
                u64::from(n),
                Cause::Action { player: p, code: 0 },
            )?;
            if p.0 == 0 && n == 2 {
                s.twos += 1;
            }
        }
        s.turn = (s.turn + 1) % s.ledger.owners();
        Ok(())
    }

    fn ledger<'s>(&self, s: &'s RaceState) -> &'s Ledger {
        &s.ledger
    }

    fn ledger_mut<'s>(&self, s: &'s mut RaceState) -> &'s mut Ledger {
        &mut s.ledger
    }

    fn outcome(&self, s: &RaceState) -> Outcome {
        let winners: Vec<Owner> = (0..s.ledger.owners())
            .map(Owner)
            .filter(|p| s.ledger.value(s.purse[p.index()]) == 10)
            .collect();
        if winners.is_empty() {
            Outcome::Ongoing
        } else {
            Outcome::Finished {
                winners,
                scores: vec![],
            }
        }
    }

    fn check_invariants(&self, s: &RaceState) -> Result<(), Violation> {
        s.ledger.check_invariants()?;
        if self.bug == Bug::InvariantAfterThreeTwos && s.twos >= 3 {
            return Err(Violation(format!("p0 took two coins {} times", s.twos)));
        }
        Ok(())
    }
}

fn run(ruleset: &Arc<dyn DynRuleset>, options: &SimOptions) -> Report {
    simulate::run(ruleset, options, &|| {})
}

fn options(dir: &tempfile::TempDir) -> SimOptions {
    SimOptions {
        repro_dir: dir.path().to_path_buf(),
        ..SimOptions::default()
    }
}

/// A run of a broken race that must find `name` violations; returns the first one's script.
fn first_script(bug: Bug, name: &str, players: Option<u16>) -> (Report, Vec<ScriptLine>, Setup) {
    let dir = tempfile::tempdir().unwrap();
    let ruleset = Race::shared(bug);
    let report = run(
        &ruleset,
        &SimOptions {
            games: 20,
            players,
            max_violations: 3,
            ..options(&dir)
        },
    );
    assert!(!report.is_clean(), "{bug:?} went unnoticed:\n{report}");
    let found = &report.violations[0];
    assert_eq!(found.kind.name(), name, "{report}");
    assert!(found.reproduced, "{report}");
    let path = found.script.as_ref().expect("a script was written");
    let script = simulate::parse_script(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(script.len(), found.script_lines);
    assert!(script.len() <= found.original_lines);
    let setup = Setup::new(found.players, found.seed);
    // The written script, re-run from its seed, shows the same kind of violation.
    let again = simulate::check_script(&*ruleset, &setup, &script)
        .expect("the script reproduces the violation");
    assert_eq!(again.kind.name(), name);
    (report, script, setup)
}

#[test]
fn correct_race_shows_no_violation_and_counts_everything() {
    let dir = tempfile::tempdir().unwrap();
    let report = run(
        &Race::shared(Bug::None),
        &SimOptions {
            games: 300,
            seed: 11,
            ..options(&dir)
        },
    );
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.games, 300);
    assert!(report.actions > 300 * 5, "{report}");
    assert!(
        report.attempts > report.actions / 20,
        "about 10% of steps are illegal attempts: {report}"
    );
    // Some attempts (a legal action mutated into another legal one) may apply; most are refused.
    assert!(report.refusals > report.attempts / 2, "{report}");
    assert_eq!(
        report.finished + report.stuck + report.at_limit,
        300,
        "{report}"
    );
    assert!(
        report.finished > 250,
        "races end when someone has ten coins: {report}"
    );
    assert!(
        report.deep_checks >= 2 * 300,
        "deep checks at the start and the end of each game: {report}"
    );
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "no script for a clean run"
    );
}

#[test]
fn threads_play_the_same_games_as_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let ruleset = Race::shared(Bug::None);
    let one = run(
        &ruleset,
        &SimOptions {
            games: 200,
            seed: 5,
            threads: 1,
            ..options(&dir)
        },
    );
    let two = run(
        &ruleset,
        &SimOptions {
            games: 200,
            seed: 5,
            threads: 2,
            ..options(&dir)
        },
    );
    assert_eq!(
        (one.games, one.actions, one.attempts, one.refusals),
        (two.games, two.actions, two.attempts, two.refusals)
    );
    assert_eq!(two.threads, 2);
    assert_eq!(two.per_thread.len(), 2);
    assert_eq!(two.per_thread.iter().map(|t| t.games).sum::<u64>(), 200);
    assert_eq!(
        two.per_thread.iter().map(|t| t.actions).sum::<u64>(),
        two.actions
    );
}

#[test]
fn max_actions_bounds_each_game() {
    let dir = tempfile::tempdir().unwrap();
    let report = run(
        &Race::shared(Bug::None),
        &SimOptions {
            games: 10,
            max_actions: 3,
            ..options(&dir)
        },
    );
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.at_limit, 10, "{report}");
    assert_eq!(report.actions, 30, "{report}");
}

#[test]
fn a_refusal_that_changes_state_is_found_and_its_script_shrunk() {
    let (_, script, _) = first_script(Bug::RefusalChangesState, "refusal-changed-state", Some(2));
    // A refused `take` suffices: an out-of-range count (one line), or a take out of turn (after p0's move,
    // or by p1 at once). Delta debugging leaves a 1-minimal script: at most those two lines.
    assert!((1..=2).contains(&script.len()), "{script:?}");
    assert_eq!(script.last().unwrap().action["type"], "take", "{script:?}");
}

#[test]
fn an_accepted_unlisted_action_is_found_and_its_script_shrunk() {
    let (_, script, setup) = first_script(Bug::AcceptsUnlisted, "unlisted-accepted", Some(3));
    assert_eq!(script.len(), 1, "{script:?}");
    assert_ne!(
        script[0].player, 0,
        "player 0 moves first, so only another player's take is unlisted"
    );
    assert!(setup.players == 3);
}

#[test]
fn a_broken_ruleset_invariant_is_found_and_shrunk_to_the_needed_moves() {
    let (report, script, _) = first_script(Bug::InvariantAfterThreeTwos, "invariant", Some(2));
    // p0 takes 2 three times; p1 must move in between (any move): five lines, and no fewer will do.
    assert_eq!(script.len(), 5, "{script:?}\n{report}");
    for (i, line) in script.iter().enumerate() {
        assert_eq!(line.player, (i % 2) as u16, "{script:?}");
    }
    for line in script.iter().step_by(2) {
        assert_eq!(line.action, serde_json::json!({"type": "take", "n": 2}));
    }
    assert!(report.violations[0].original_lines > 5, "{report}");
}

#[test]
fn a_clean_script_shows_no_violation_and_refused_lines_are_skipped() {
    let ruleset = Race::shared(Bug::None);
    let script = simulate::parse_script(
        "{\"player\":0,\"action\":{\"type\":\"take\",\"n\":3}}\n\n\
         {\"player\":0,\"action\":{\"type\":\"take\",\"n\":3}}\n\
         {\"player\":1,\"action\":{\"type\":\"take\",\"n\":9}}\n\
         {\"player\":1,\"action\":\"{not json\"}\n\
         {\"player\":7,\"action\":{\"type\":\"pass\"}}\n\
         {\"player\":1,\"action\":{\"type\":\"pass\"}}\n",
    )
    .unwrap();
    assert_eq!(script.len(), 6);
    assert_eq!(
        simulate::check_script(&*ruleset, &Setup::new(2, 1), &script),
        None
    );
    let broken = Race::shared(Bug::RefusalChangesState);
    let v = simulate::check_script(&*broken, &Setup::new(2, 1), &script).expect("a violation");
    assert_eq!(v.line, Some(1), "the second line is the first refused take");
    assert!(
        matches!(v.kind, ViolationKind::RefusalChangedState { .. }),
        "{v:?}"
    );
}

#[test]
fn a_script_line_that_cannot_be_read_is_reported_with_its_number() {
    let e = simulate::parse_script("{\"player\":0,\"action\":{}}\n{\"player\":-1}\n").unwrap_err();
    assert!(e.starts_with("line 2:"), "{e}");
}

// ----- the built-in rulesets -----

/// Actions each built-in ruleset must be checked for, per mode (issue 7: at least 100,000).
const BUILT_IN_ACTIONS: u64 = 100_000;

fn built_in(id: &str) -> Arc<dyn DynRuleset> {
    let registry = Registry::with_static().expect("no duplicate static rulesets");
    match registry.get(id) {
        Ok(entry) => Arc::clone(&entry.ruleset),
        Err(e) => panic!("built-in ruleset {id} is not linked: {e}"),
    }
}

/// Plays games of `ruleset` until at least [`BUILT_IN_ACTIONS`] actions were applied; no violation allowed.
fn simulate_at_least_100k(ruleset: &Arc<dyn DynRuleset>) -> Report {
    simulate_at_least_100k_with(ruleset, Value::Null)
}

/// [`simulate_at_least_100k`] with a configuration naming one squad (or faction) per player of a two-player
/// game.
fn simulate_at_least_100k_with(ruleset: &Arc<dyn DynRuleset>, config: Value) -> Report {
    simulate_at_least_100k_with_players(ruleset, config, 2)
}

/// [`simulate_at_least_100k`] with a configuration for `players` players (any count when it is `null`).
fn simulate_at_least_100k_with_players(
    ruleset: &Arc<dyn DynRuleset>,
    config: Value,
    players: u16,
) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let mut total = Report::default();
    let mut seed = 0u64;
    while total.actions < BUILT_IN_ACTIONS {
        let report = run(
            ruleset,
            &SimOptions {
                games: 50,
                seed,
                max_actions: 2_000,
                threads: 2,
                // A configuration names one squad or faction per player.
                players: (!config.is_null()).then_some(players),
                config: config.clone(),
                ..options(&dir)
            },
        );
        assert!(report.is_clean(), "{report}");
        assert!(
            report.actions > 0,
            "no action was applied in 50 games: {report}"
        );
        total.games += report.games;
        total.actions += report.actions;
        total.attempts += report.attempts;
        total.refusals += report.refusals;
        total.finished += report.finished;
        total.stuck += report.stuck;
        total.at_limit += report.at_limit;
        total.deep_checks += report.deep_checks;
        total.elapsed += report.elapsed;
        seed += 50;
    }
    println!(
        "{}: {} games, {} actions, {} illegal attempts ({} refused), {} deep checks; {} finished, {} stuck, \
         {} at the limit; {:.2}s",
        ruleset.description().key(),
        total.games,
        total.actions,
        total.attempts,
        total.refusals,
        total.deep_checks,
        total.finished,
        total.stuck,
        total.at_limit,
        total.elapsed.as_secs_f64()
    );
    assert!(total.refusals > 0, "illegal attempts were refused");
    total
}

/// The built-in ruleset `id` loaded at runtime from its plugin library built with this test binary.
fn runtime(id: &str) -> Arc<dyn DynRuleset> {
    coffer_tests::builtin_runtime_ruleset(id)
}

#[test]
fn story_acts_static_100k_random_actions_show_no_violation() {
    simulate_at_least_100k(&built_in("story-acts"));
}

#[test]
fn charges_static_100k_random_actions_show_no_violation() {
    simulate_at_least_100k(&built_in("charges"));
}

#[test]
fn command_tokens_static_100k_random_actions_show_no_violation() {
    simulate_at_least_100k(&built_in("command-tokens"));
}

/// charges with the content of the second rules round (C13-C20): abilities paid with the ship's Force, one
/// granting an action at its own colour, a crew adding Force, an upgrade with printed recurring energy and
/// an ability paid with energy; ships go to reserve and back as effects in every game.
fn charges_second_round_config() -> Value {
    let ace = serde_json::json!({"id": "ace", "name": "Force Ace", "ship": "TIE Advanced x1", "size": "small",
        "initiative": 6, "attack": 2, "agility": 3, "hull": 3, "shields": {"value": 2},
        "force": {"value": 2, "recurs": 1}, "actions": {"focus": "white", "evade": "red"},
        "ability": {"timing": "after_action", "cost": 1, "pays": "force", "effect": "another_action"}});
    let pilot = serde_json::json!({"id": "pilot", "name": "Wingmate", "ship": "T-65", "size": "small",
        "initiative": 3, "attack": 3, "agility": 2, "hull": 4, "shields": {"value": 2},
        "actions": {"focus": "purple", "evade": "white"}});
    let cr90 = serde_json::json!({"id": "cr90", "name": "CR90", "ship": "CR90", "size": "huge", "initiative": 8,
        "attack": 4, "agility": 0, "hull": 18, "shields": {"value": 3, "recurs": 1},
        "energy": {"value": 5, "recurs": 1}, "actions": {"focus": "red"}});
    let crew = serde_json::json!({"id": "crew", "name": "Force Crew", "slot": "crew", "force": {"value": 1, "recurs": 1},
        "ability": {"timing": "end", "cost": 1, "pays": "force"}});
    let cells = serde_json::json!({"id": "cells", "name": "Spare Cells", "slot": "cargo",
        "energy": {"value": 2, "recurs": 2},
        "ability": {"timing": "system", "cost": 2, "pays": "energy", "effect": "recover_shield"}});
    serde_json::json!({
        "squads": [
            [{"pilot": "ace", "upgrades": ["crew"]}, {"pilot": "pilot", "upgrades": ["crew"]}],
            [{"pilot": "cr90", "upgrades": ["cells"]}, {"pilot": "ace", "upgrades": []}],
        ],
        "content": {"pilots": [ace, pilot, cr90], "upgrades": [crew, cells]},
    })
}

/// command-tokens with the content of the second rules round (T11-T17): the Nekro Virus (Propagation),
/// Hyper Metabolism and the Mahact Gene-Sorcerers (Edict) under Fleet Regulations in a six-player game;
/// Trade's free secondaries are in the default cards, movement, combat and retreats in every tactical
/// action.
fn command_tokens_second_round_config() -> Value {
    serde_json::json!({
        "factions": ["nekro", "sol", "letnev", "mahact", "hacan", "jolnar"],
        "technologies": [["hyper-metabolism"], ["hyper-metabolism"], [], [], [], []],
        "laws": ["fleet-regulations"],
    })
}

#[test]
fn command_tokens_second_round_content_100k_random_actions_show_no_violation() {
    simulate_at_least_100k_with_players(
        &built_in("command-tokens"),
        command_tokens_second_round_config(),
        6,
    );
    simulate_at_least_100k_with_players(
        &runtime("command-tokens"),
        command_tokens_second_round_config(),
        6,
    );
}

/// command-tokens with the content of the third rules round (T19-T23): the Embers of Muaat's war suns
/// and Star Forge, a War Sun technology, the Xxcha Kingdom's Quash in an agenda phase every round and its
/// Nullification Field, the Emirates of Hacan's Masters of Trade and Production Biomes, the Naalu's
/// Neuroglaive and Foresight, Sol's Orbital Drop and Predictive Intelligence, Mahact's Edict, and hands of
/// action cards in a six-player game.
fn command_tokens_third_round_config() -> Value {
    serde_json::json!({
        "factions": ["muaat", "xxcha", "hacan", "naalu", "sol", "mahact"],
        "technologies": [
            [],
            ["war-sun", "nullification-field", "instinct-training"],
            ["production-biomes", "quantum-datahub-node"],
            ["neuroglaive"],
            ["predictive-intelligence", "fighter-ii"],
            ["fighter-ii", "genetic-recombination"]
        ],
        "agenda_phase_from": 1,
        "action_cards": [
            ["summit", "skilled-retreat"],
            ["insubordination", "leadership-rider"],
            ["signal-jamming", "skilled-retreat"],
            ["unexpected-action", "diplomacy-rider"],
            ["unexpected-action", "skilled-retreat"],
            ["skilled-retreat"]
        ],
    })
}

#[test]
fn command_tokens_third_round_content_100k_random_actions_show_no_violation() {
    simulate_at_least_100k_with_players(
        &built_in("command-tokens"),
        command_tokens_third_round_config(),
        6,
    );
    simulate_at_least_100k_with_players(
        &runtime("command-tokens"),
        command_tokens_third_round_config(),
        6,
    );
}

/// command-tokens with elimination on (T18), among the second round's factions: Mahact's captured tokens
/// returned or kept, speakers passing the token, secondaries and picks skipping the eliminated.
#[test]
fn command_tokens_with_elimination_100k_random_actions_show_no_violation() {
    let mut config = command_tokens_second_round_config();
    config["elimination"] = Value::Bool(true);
    simulate_at_least_100k_with_players(&built_in("command-tokens"), config.clone(), 6);
    simulate_at_least_100k_with_players(&runtime("command-tokens"), config, 6);
}

#[test]
fn charges_second_round_content_100k_random_actions_show_no_violation() {
    simulate_at_least_100k_with(&built_in("charges"), charges_second_round_config());
    simulate_at_least_100k_with(&runtime("charges"), charges_second_round_config());
}

#[test]
fn story_acts_runtime_100k_random_actions_show_no_violation() {
    simulate_at_least_100k(&runtime("story-acts"));
}

#[test]
fn charges_runtime_100k_random_actions_show_no_violation() {
    simulate_at_least_100k(&runtime("charges"));
}

#[test]
fn command_tokens_runtime_100k_random_actions_show_no_violation() {
    simulate_at_least_100k(&runtime("command-tokens"));
}

#[test]
fn static_and_runtime_rulesets_play_identical_simulations() {
    let dir = tempfile::tempdir().unwrap();
    for id in ["story-acts", "charges", "command-tokens"] {
        let opts = SimOptions {
            games: 8,
            seed: 1_000,
            max_actions: 300,
            ..options(&dir)
        };
        let s = run(&built_in(id), &opts);
        let r = run(&runtime(id), &opts);
        assert!(s.is_clean() && r.is_clean(), "{s}\n{r}");
        assert_eq!(
            (
                s.games, s.actions, s.attempts, s.refusals, s.finished, s.stuck, s.at_limit
            ),
            (
                r.games, r.actions, r.attempts, r.refusals, r.finished, r.stuck, r.at_limit
            ),
            "{id}: static\n{s}\nruntime\n{r}"
        );
    }
}

// ----- the command -----

/// Runs `coffer ARGS` in this process with the built-in plugin libraries in a private plugin directory.
fn coffer(args: &[&str]) -> coffer_cli::Status {
    let libs: Vec<std::path::PathBuf> = coffer_tests::BUILTIN
        .iter()
        .map(|(_, krate)| coffer_tests::builtin_library(krate))
        .collect();
    let dir = coffer_tests::plugin_dir_with(&libs.iter().map(|p| p.as_path()).collect::<Vec<_>>());
    let mut argv = vec!["coffer", "--plugin-dir", dir.path().to_str().unwrap()];
    argv.extend_from_slice(args);
    coffer_cli::run_args(&argv).expect("a valid command line that runs")
}

#[test]
fn coffer_simulate_runs_each_built_in_ruleset_loaded_at_runtime() {
    use coffer_cli::Status;
    let repro = tempfile::tempdir().unwrap();
    for (id, _) in coffer_tests::BUILTIN {
        let status = coffer(&[
            "simulate",
            id,
            "--games",
            "4",
            "--seed",
            "9",
            "--max-actions",
            "200",
            "--threads",
            "2",
            "--repro-dir",
            repro.path().to_str().unwrap(),
        ]);
        assert_eq!(status, Status::Success, "{id}");
    }
    assert!(
        std::fs::read_dir(repro.path()).unwrap().next().is_none(),
        "no violation, no script"
    );
}

#[test]
fn a_simulation_script_is_read_by_coffer_play_and_checked_by_coffer_simulate() {
    use coffer_cli::Status;
    let dir = tempfile::tempdir().unwrap();
    for (id, _) in coffer_tests::BUILTIN {
        // A script of random legal actions, written the way a reproducing script is.
        let ruleset = runtime(id);
        let players = ruleset.description().min_players;
        let mut game = ruleset.new_game(&Setup::new(players, 4)).unwrap();
        let mut rng = coffer_core::GameRng::new(4);
        let mut order = Vec::new();
        let mut script = Vec::new();
        for _ in 0..30 {
            let Some((p, i)) = simulate::pick_legal(&mut *game, &mut rng, &mut order) else {
                break;
            };
            let json = game.legal_action_json(i).unwrap();
            game.apply_legal(p, i).unwrap();
            script.push(ScriptLine {
                player: p.0,
                action: serde_json::from_str(&json).unwrap(),
            });
        }
        assert!(!script.is_empty(), "{id}");
        let path = dir.path().join(format!("{id}.jsonl"));
        simulate::write_script(&path, &script).unwrap();
        let (path, players) = (path.to_str().unwrap(), players.to_string());
        let play = [
            "play",
            id,
            "--players",
            &players,
            "--seed",
            "4",
            "--script",
            path,
            "--format",
            "json",
        ];
        assert_eq!(coffer(&play), Status::Success, "{id}");
        let check = [
            "simulate",
            id,
            "--players",
            &players,
            "--seed",
            "4",
            "--check-script",
            path,
        ];
        assert_eq!(coffer(&check), Status::Success, "{id}");
        // The same script from another seed is another game: its lines may be refused (then skipped), but
        // the checks still pass.
        let other = [
            "simulate",
            id,
            "--players",
            &players,
            "--seed",
            "5",
            "--check-script",
            path,
        ];
        assert_eq!(coffer(&other), Status::Success, "{id}");
    }
}

/// Both players may always act: player 0 has one action, player 1 has three.
struct Both;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct BothState {
    ledger: Ledger,
}

impl Ruleset for Both {
    type State = BothState;
    type Action = u8;
    type Config = ();

    fn describe(&self) -> Description {
        Description::new("both", "0.1.0", "two players who may always act")
    }

    fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<BothState, SetupError> {
        Ok(BothState {
            ledger: Ledger::new(players, seed),
        })
    }

    fn legal_actions(&self, _: &BothState, p: Owner, out: &mut Vec<u8>) {
        out.extend(0..if p.0 == 0 { 1 } else { 3 });
    }

    fn apply(&self, _: &mut BothState, _: Owner, _: &u8) -> Result<(), ActionError> {
        Ok(())
    }

    fn ledger<'s>(&self, s: &'s BothState) -> &'s Ledger {
        &s.ledger
    }

    fn ledger_mut<'s>(&self, s: &'s mut BothState) -> &'s mut Ledger {
        &mut s.ledger
    }

    fn outcome(&self, _: &BothState) -> Outcome {
        Outcome::Ongoing
    }
}

#[test]
fn the_choice_is_uniform_over_players_who_can_act_then_over_their_actions() {
    let ruleset = Adapter::shared(Both);
    let mut game = ruleset.new_game(&Setup::new(2, 0)).unwrap();
    let mut rng = coffer_core::GameRng::new(3);
    let mut order = Vec::new();
    let mut counts = [[0u32; 3]; 2];
    for _ in 0..60_000 {
        let (p, i) = simulate::pick_legal(&mut *game, &mut rng, &mut order).unwrap();
        counts[p.index()][i] += 1;
    }
    // Player 0 (one action) is chosen as often as player 1 (three actions): uniform over players, not over
    // (player, action) pairs; player 1's three actions are equally likely.
    let p0 = counts[0][0];
    let p1: u32 = counts[1].iter().sum();
    assert!((29_000..31_000).contains(&p0), "{counts:?}");
    assert!((29_000..31_000).contains(&p1), "{counts:?}");
    for n in counts[1] {
        assert!((9_500..10_500).contains(&n), "{counts:?}");
    }
}

#[test]
fn a_runtime_plugin_that_panics_is_reported_with_a_script_ending_in_the_panicking_action() {
    // A private copy: a panic poisons the library loaded from this path only, not the one other tests use.
    let original = coffer_tests::fixture_library("panicky");
    let plugins = coffer_tests::plugin_dir_with(&[original.as_path()]);
    let library = plugins.path().join(original.file_name().unwrap());
    let ruleset = coffer_tests::runtime_ruleset(&library, "fixture-panicky");
    let dir = tempfile::tempdir().unwrap();
    let report = run(
        &ruleset,
        &SimOptions {
            games: 50,
            players: Some(2),
            ..options(&dir)
        },
    );
    // The panic is reported once; the poisoned library then stops the run.
    assert_eq!(report.violations.len(), 1, "{report}");
    let found = &report.violations[0];
    assert!(matches!(found.kind, ViolationKind::Panicked(_)), "{report}");
    assert!(report.games < 50, "the run stopped early: {report}");
    let note = found.script_error.as_deref().unwrap_or_default();
    assert!(note.contains("poisoned"), "{report}");
    let path = found.script.as_ref().expect("a script was written");
    let script = simulate::parse_script(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(script.len(), found.original_lines);
    assert_eq!(
        script.last().unwrap().action,
        serde_json::json!({"type": "boom"}),
        "{script:?}"
    );
}

#[test]
fn a_to_act_that_leaves_out_the_player_to_move_is_found() {
    // The first mover is left out from the start: the violation needs no action at all.
    let (report, script, _) = first_script(Bug::ToActSkipsTheMover, "to-act-incomplete", Some(2));
    assert!(script.is_empty(), "{script:?}\n{report}");
    assert!(
        report.violations[0]
            .kind
            .to_string()
            .contains("p0 has 4 legal action(s)"),
        "{report}"
    );
}

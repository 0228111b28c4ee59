//! Random playouts with invariant checking under load (`coffer simulate`), and the shrinking of a found
//! violation into a minimal `coffer play` script.
//!
//! Everything here drives an `Arc<dyn DynRuleset>` only, so a statically linked ruleset and one loaded at
//! runtime are simulated by exactly the same code.
//!
//! # What one game does
//! Game `i` of a run starts from seed `seed + i` (wrapping) and, unless [`SimOptions::players`] fixes it, a
//! player count drawn from that seed within the ruleset's range. A separate generator seeded from the same
//! seed makes the playout's choices, so the game's own RNG is never disturbed. At each step:
//!
//! 1. **Choice of a legal action**: the players the ruleset says may act ([`DynGame::to_act`]), with their
//!    legal-action counts, come from one call ([`DynGame::acting`]); they are visited in a random order (a
//!    lazy Fisher-Yates shuffle) and the first one with at least one legal action acts; among its actions
//!    one is drawn uniformly. This is uniform over *the players who can act*, then uniform over *that
//!    player's actions* (not uniform over all (player, action) pairs).
//! 2. **Illegal attempts**: with probability [`SimOptions::illegal_share`], instead of a legal action the
//!    playout tries one of: malformed JSON, an unknown action type, a legal action's JSON applied by another
//!    player, an out-of-range player index, the legal action with a number changed to an extreme value
//!    (huge, negative, fractional, one past the end...), or a legal-action index past the end of the list.
//!    Every refusal must leave the state hash unchanged; an attempt that is accepted must be in the acting
//!    player's legal list (otherwise the enumeration is incomplete); a plugin panic is always a violation.
//! 3. After every applied action: [`DynGame::check_invariants`] (the kernel's caps, floors, charge bounds
//!    and per-owner token totals, plus the ruleset's own invariants).
//! 4. Every [`SimOptions::check_every`] actions and at the end of the game: every player with a legal action
//!    is listed by [`DynGame::to_act`] (else the playout would never ask them); a clone has the same state
//!    hash; a JSON and a binary snapshot, restored by [`DynRuleset::restore`], have the same hash; and a
//!    replica game, started fresh from the same setup and fed the log (each legal action as its JSON,
//!    through [`DynGame::apply_json`]), has the same hash.
//!
//! The game stops when its outcome is [`Outcome::Finished`] (a finished game must list no legal action),
//! when nobody has a legal action, or after [`SimOptions::max_actions`] applied actions.
//!
//! # Violations
//! A game stops at its first violation. Its log is turned into a `coffer play` script (JSON Lines of
//! `{"player":P,"action":{...}}`), shrunk by delta debugging while [`check_script`] still finds a violation
//! of the same kind, and written to [`SimOptions::repro_dir`]. [`check_script`] (`coffer simulate ID
//! --check-script FILE`) re-runs such a script with every check after every line; `coffer play ... --keep-going`
//! re-runs it too.
//!
//! ```
//! # use coffer_core::*;
//! # use serde::{Deserialize, Serialize};
//! # struct Coins;
//! # #[derive(Clone, Debug, Serialize, Deserialize)]
//! # struct State { ledger: Ledger, purse: Vec<AmountId> }
//! # #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! # enum Action { Take }
//! # impl Ruleset for Coins {
//! #     type State = State; type Action = Action; type Config = ();
//! #     fn describe(&self) -> Description { Description::new("coins", "0.1.0", "take coins") }
//! #     fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
//! #         let mut ledger = Ledger::new(players, seed);
//! #         let purse = (0..players)
//! #             .map(|p| ledger.add_amount(AmountSpec::new(Key::new(Owner(p), Kind(0), 0)).cap(3)))
//! #             .collect::<Result<_, _>>()?;
//! #         Ok(State { ledger, purse })
//! #     }
//! #     fn legal_actions(&self, s: &State, _: Owner, out: &mut Vec<Action>) {
//! #         if self.outcome(s) == Outcome::Ongoing { out.push(Action::Take) }
//! #     }
//! #     fn apply(&self, s: &mut State, p: Owner, _: &Action) -> Result<(), ActionError> {
//! #         if self.outcome(s) != Outcome::Ongoing { return Err(ActionError::GameOver) }
//! #         s.ledger.gain(s.purse[p.index()], 1, Cause::Action { player: p, code: 0 })?;
//! #         Ok(())
//! #     }
//! #     fn ledger<'s>(&self, s: &'s State) -> &'s Ledger { &s.ledger }
//! #     fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger { &mut s.ledger }
//! #     fn outcome(&self, s: &State) -> Outcome {
//! #         let winners: Vec<Owner> = (0..s.ledger.owners()).map(Owner)
//! #             .filter(|p| s.ledger.value(s.purse[p.index()]) == 3).collect();
//! #         if winners.is_empty() { Outcome::Ongoing } else { Outcome::Finished { winners, scores: vec![] } }
//! #     }
//! # }
//! use coffer_host::simulate::{self, SimOptions};
//!
//! let ruleset = Adapter::shared(Coins); // or a ruleset loaded at runtime
//! let options = SimOptions { games: 50, seed: 7, ..SimOptions::default() };
//! let report = simulate::run(&ruleset, &options, &|| {});
//! assert_eq!(report.games, 50);
//! assert!(report.violations.is_empty(), "{report}");
//! ```

pub use coffer_core::PlayoutError;
use coffer_core::abi::{Acting, panic_message};
use coffer_core::{
    ActionError, DynGame, DynRuleset, Format, GameRng, Observe, Outcome, Owner, Setup, StateHash,
    choose, random_playout,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a simulation run does.
#[derive(Clone, Debug, PartialEq)]
pub struct SimOptions {
    /// How many games to play.
    pub games: u64,
    /// Game `i` is seeded with `seed + i` (wrapping).
    pub seed: u64,
    /// Players per game; `None` draws a count from each game's seed within the ruleset's range.
    pub players: Option<u16>,
    /// Ruleset configuration for every game (`null` for the defaults).
    pub config: Value,
    /// Most applied actions per game.
    pub max_actions: u64,
    /// Worker threads (games run in parallel inside this process); at least 1.
    pub threads: usize,
    /// Share of steps that try an illegal or malformed action instead of a legal one, in `0.0..=0.9`.
    pub illegal_share: f64,
    /// Interval, in applied actions, of the expensive checks (clone, snapshots, replay); at least 1.
    pub check_every: u64,
    /// The run stops early once this many games have found a violation.
    pub max_violations: usize,
    /// Where reproducing scripts are written.
    pub repro_dir: PathBuf,
    /// Most [`check_script`] runs spent shrinking one violation.
    pub shrink_budget: usize,
}

impl Default for SimOptions {
    /// 100 games from seed 0, up to 1,000 actions each, one thread, 10% illegal attempts, expensive
    /// checks every 64 actions, stop after 10 violations, scripts in the system's temporary directory.
    fn default() -> SimOptions {
        SimOptions {
            games: 100,
            seed: 0,
            players: None,
            config: Value::Null,
            max_actions: 1_000,
            threads: 1,
            illegal_share: 0.1,
            check_every: 64,
            max_violations: 10,
            repro_dir: std::env::temp_dir(),
            shrink_budget: 400,
        }
    }
}

/// What went wrong. Each kind names the action (as JSON) or check that showed it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViolationKind {
    /// The game could not be started with a supported player count.
    #[error("setup with {players} players failed: {error}")]
    SetupFailed {
        /// Players asked.
        players: u16,
        /// The error.
        error: String,
    },
    /// A kernel or ruleset invariant is broken.
    #[error("{0}")]
    Invariant(String),
    /// A refused action changed the state.
    #[error(
        "refused action {action} changed the state hash {before} -> {after} (refusal: {error})"
    )]
    RefusalChangedState {
        /// The action (JSON, or a description for a bad legal-action index).
        action: String,
        /// The refusal.
        error: String,
        /// Hash before.
        before: StateHash,
        /// Hash after.
        after: StateHash,
    },
    /// An action that is not in the player's legal list was accepted: the enumeration is incomplete.
    #[error("{player} was not listed {action} but it applied")]
    UnlistedAccepted {
        /// Who acted.
        player: Owner,
        /// The action's JSON.
        action: String,
    },
    /// A listed legal action was refused: the enumeration lists something that does not apply.
    #[error("{player}'s listed action {action} was refused: {error}")]
    ListedRefused {
        /// Who acted.
        player: Owner,
        /// The action's JSON.
        action: String,
        /// The refusal.
        error: String,
    },
    /// A clone has another state hash.
    #[error("clone has hash {clone}, the game {original}")]
    CloneDiffers {
        /// The game's hash.
        original: StateHash,
        /// The clone's.
        clone: StateHash,
    },
    /// A snapshot could not be written or restored, or its restored game has another hash.
    #[error("{} snapshot round-trip: {problem}", format_name(*format))]
    Snapshot {
        /// Which format.
        format: Format,
        /// What happened.
        problem: String,
    },
    /// Replaying the log on a fresh game diverged.
    #[error("replaying the log on a fresh game: {0}")]
    Replay(String),
    /// The game is over, yet a player still has legal actions.
    #[error(
        "the game is finished ({}) but {player} still has {count} legal action(s)",
        crate::render::outcome(outcome)
    )]
    FinishedWithLegalActions {
        /// The outcome.
        outcome: Outcome,
        /// Who has actions.
        player: Owner,
        /// How many.
        count: usize,
    },
    /// The list of a player who is not in the game is not empty.
    #[error("{player} is not in the game but has {count} legal action(s)")]
    GhostHasActions {
        /// The player asked.
        player: Owner,
        /// How many actions were listed.
        count: usize,
    },
    /// A player with legal actions was not among the players who may act ([`DynGame::to_act`]).
    #[error(
        "{player} has {count} legal action(s) but is not listed by to_act ({})",
        seats(listed)
    )]
    ToActIncomplete {
        /// The player left out.
        player: Owner,
        /// How many legal actions they have.
        count: usize,
        /// Whom `to_act` listed.
        listed: Vec<Owner>,
    },
    /// The ruleset panicked.
    #[error("the ruleset panicked: {0}")]
    Panicked(String),
    /// A runtime-loaded ruleset that panicked earlier is poisoned: it is no longer called in this process.
    #[error("{0}")]
    Poisoned(String),
}

impl ViolationKind {
    /// A short stable name of the kind, used in script file names.
    pub fn name(&self) -> &'static str {
        match self {
            ViolationKind::SetupFailed { .. } => "setup-failed",
            ViolationKind::Invariant(_) => "invariant",
            ViolationKind::RefusalChangedState { .. } => "refusal-changed-state",
            ViolationKind::UnlistedAccepted { .. } => "unlisted-accepted",
            ViolationKind::ListedRefused { .. } => "listed-refused",
            ViolationKind::CloneDiffers { .. } => "clone-differs",
            ViolationKind::Snapshot { .. } => "snapshot",
            ViolationKind::Replay(_) => "replay",
            ViolationKind::FinishedWithLegalActions { .. } => "finished-with-legal-actions",
            ViolationKind::GhostHasActions { .. } => "ghost-has-actions",
            ViolationKind::ToActIncomplete { .. } => "to-act-incomplete",
            ViolationKind::Panicked(_) => "panicked",
            ViolationKind::Poisoned(_) => "poisoned",
        }
    }
}

/// One line of a `coffer play` script: `{"player":0,"action":{...}}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptLine {
    /// Who acts (may be out of range in a reproducing script).
    pub player: u16,
    /// The action's JSON. Malformed text found by a simulation is kept as a JSON string, which is just as
    /// malformed as an action.
    pub action: Value,
}

impl ScriptLine {
    /// The text applied for this line: the action value written as JSON.
    pub fn action_text(&self) -> String {
        self.action.to_string()
    }
}

/// Where in a script a violation shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScriptViolation {
    /// Index of the line (0-based) after which the violation showed; `None` before the first line.
    pub line: Option<usize>,
    /// What.
    pub kind: ViolationKind,
}

/// A violation found by [`run`], with what reproduces it.
#[derive(Clone, Debug, PartialEq)]
pub struct Found {
    /// The ruleset's id.
    pub ruleset: String,
    /// Index of the game in the run.
    pub game: u64,
    /// Its seed.
    pub seed: u64,
    /// Its players.
    pub players: u16,
    /// Actions applied before the violation showed.
    pub after_actions: u64,
    /// What.
    pub kind: ViolationKind,
    /// The reproducing script, when one could be written.
    pub script: Option<PathBuf>,
    /// Lines in that script (after shrinking).
    pub script_lines: usize,
    /// Lines before shrinking.
    pub original_lines: usize,
    /// Whether the written script reproduces the violation under [`check_script`].
    pub reproduced: bool,
    /// Why no script was written, if none was; or, beside a written script, why it was not re-checked.
    pub script_error: Option<String>,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "game {} (seed {}, {} players) after {} actions: {}",
            self.game, self.seed, self.players, self.after_actions, self.kind
        )?;
        match (&self.script, &self.script_error) {
            (Some(path), _) => {
                let (id, p, s, path) = (&self.ruleset, self.players, self.seed, path.display());
                let reproduces = if self.reproduced {
                    ""
                } else {
                    ", does NOT reproduce"
                };
                write!(
                    f,
                    "\n    script ({} of {} lines{reproduces}): {path}\
                     \n    check it: coffer simulate {id} --players {p} --seed {s} --check-script {path}\
                     \n    play it:  coffer play {id} --players {p} --seed {s} --script {path} --keep-going",
                    self.script_lines, self.original_lines,
                )?;
                match &self.script_error {
                    Some(note) => write!(f, "\n    note: {note}"),
                    None => Ok(()),
                }
            }
            (None, Some(e)) => write!(f, "\n    no script: {e}"),
            (None, None) => Ok(()),
        }
    }
}

/// What one worker thread did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadReport {
    /// Games it played.
    pub games: u64,
    /// Actions it applied.
    pub actions: u64,
    /// Time it spent playing.
    pub busy: Duration,
}

/// The result of [`run`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Players of every game, or `None` when each game drew its own.
    pub players: Option<u16>,
    /// The ruleset's `id@version`.
    pub ruleset: String,
    /// Games played.
    pub games: u64,
    /// Legal actions applied (accepted illegal attempts are not counted here).
    pub actions: u64,
    /// Illegal or malformed actions tried.
    pub attempts: u64,
    /// Of those, refused (each checked to leave the state hash unchanged).
    pub refusals: u64,
    /// Games that ended finished, stuck (nobody could act) or at the action limit.
    pub finished: u64,
    /// Games in which nobody could act before the end.
    pub stuck: u64,
    /// Games stopped by the action limit.
    pub at_limit: u64,
    /// Rounds of expensive checks (clone, snapshots, replay).
    pub deep_checks: u64,
    /// Worker threads.
    pub threads: usize,
    /// Each thread's share.
    pub per_thread: Vec<ThreadReport>,
    /// Wall-clock time.
    pub elapsed: Duration,
    /// Every violation found.
    pub violations: Vec<Found>,
}

impl Report {
    /// Applied actions per second of wall-clock time, all threads together, checks included.
    pub fn actions_per_second(&self) -> f64 {
        per_second(self.actions, self.elapsed)
    }

    /// Whether no violation was found.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }
}

fn per_second(n: u64, time: Duration) -> f64 {
    let secs = time.as_secs_f64();
    if secs > 0.0 { n as f64 / secs } else { 0.0 }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "ruleset:     {}", self.ruleset)?;
        match self.players {
            Some(p) => writeln!(f, "players:     {p} in every game")?,
            None => writeln!(f, "players:     drawn from each game's seed")?,
        }
        writeln!(
            f,
            "games:       {} ({} finished, {} stuck, {} at the action limit)",
            self.games, self.finished, self.stuck, self.at_limit
        )?;
        writeln!(f, "actions:     {}", self.actions)?;
        writeln!(
            f,
            "illegal:     {} tried, {} refused as they should be, each leaving the state hash unchanged",
            self.attempts, self.refusals
        )?;
        if self.attempts > self.refusals {
            writeln!(
                f,
                "             {} accepted: they were legal after all (another player's legal action that \
                 this player may take too), and checked like any action",
                self.attempts - self.refusals
            )?;
        }
        writeln!(f, "deep checks: {}", self.deep_checks)?;
        writeln!(
            f,
            "throughput:  {:.0} actions/s with {} thread(s) in {:.2}s (every check included)",
            self.actions_per_second(),
            self.threads,
            self.elapsed.as_secs_f64()
        )?;
        for (i, t) in self.per_thread.iter().enumerate() {
            writeln!(
                f,
                "  thread {i}: {} games, {} actions, {:.0} actions/s busy",
                t.games,
                t.actions,
                per_second(t.actions, t.busy)
            )?;
        }
        if self.violations.is_empty() {
            write!(f, "violations:  none")
        } else {
            write!(f, "violations:  {}", self.violations.len())?;
            for v in &self.violations {
                write!(f, "\n  {v}")?;
            }
            Ok(())
        }
    }
}

// ----- the hot path: choosing and applying a random legal action -----

/// Picks who acts and which of their legal actions, as the module docs describe: players in a random
/// order, the first with a legal action acts, an action drawn uniformly from its list. Afterwards the
/// game's listed actions are that player's ([`DynGame::legal_action_json`] reads them), so
/// [`DynGame::apply_legal`] does not enumerate again.
///
/// `order` is scratch space kept between calls for one game: start with an empty `Vec`; it then holds a
/// permutation of the players who may act. Returns `None` when nobody has a legal action.
#[inline]
pub fn pick_legal(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    order: &mut Vec<Acting>,
) -> Option<(Owner, usize)> {
    order.clear();
    order.extend_from_slice(game.acting());
    let (player, index) = choose(rng, order)?;
    // Selects the chosen player's list (cached: no enumeration) for `legal_action_json`.
    game.legal_actions(player);
    Some((player, index))
}

/// One random playout without checks: applies random legal actions (chosen as by [`pick_legal`], with
/// the same random draws) until nobody can act or `max_actions` were applied, and returns how many were.
/// This is what the benchmarks time. The game runs it on itself ([`DynGame::playout`]): a statically
/// linked game without a dynamic call per action, a runtime-loaded one inside its library, one boundary
/// crossing for the whole playout.
///
/// # Errors
/// The refusal of a listed action (a broken enumeration), with how many actions were applied before it.
pub fn playout(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    max_actions: u64,
) -> Result<u64, (u64, ActionError)> {
    let mut progress = coffer_core::Progress::default();
    game.playout(rng, max_actions, &mut progress)
        .map_err(|e| match e {
            PlayoutError::Refused { applied, error, .. } => (applied, error),
            PlayoutError::Observer(never) => match never {},
        })
}

/// One applied action of [`playout_with`], as its observer sees it.
pub struct Played<'g> {
    /// Who acted.
    pub player: Owner,
    /// The action's JSON ([`DynGame::legal_action_json`], read before it applied); `None` if the game
    /// could not write it.
    pub action: Option<String>,
    /// The game right after the action: ask it for the action's events, the views, the hash.
    pub game: &'g mut dyn DynGame,
}

/// [`playout`] that shows each applied action to `observe` (a `coffer demo` prints it): the same choices
/// from the same random draws, one loop for both. Reporting costs two more calls into the game per action
/// (listing the player's actions to read the chosen one's JSON) besides what `observe` asks.
///
/// # Errors
/// [`PlayoutError::Refused`] for a listed action that was refused, [`PlayoutError::Observer`] for an error
/// of `observe`; the actions before either stay applied.
pub fn playout_with<E>(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    max_actions: u64,
    observe: impl FnMut(Played<'_>) -> Result<(), E>,
) -> Result<u64, PlayoutError<E>> {
    random_playout(game, rng, max_actions, &mut Watch(observe))
}

/// What [`playout_with`]'s observer is shown: each chosen action's JSON, read before it applies, then the
/// game after it.
struct Watch<F>(F);

impl<E, F: FnMut(Played<'_>) -> Result<(), E>> Observe<dyn DynGame + '_> for Watch<F> {
    type Error = E;
    type Seen = Option<String>;

    fn before(
        &mut self,
        game: &mut (dyn DynGame + '_),
        player: Owner,
        index: usize,
    ) -> Option<String> {
        // Selects the player's list (cached by `acting`: no enumeration) for its JSON.
        game.legal_actions(player);
        game.legal_action_json(index)
    }

    fn after(
        &mut self,
        game: &mut (dyn DynGame + '_),
        player: Owner,
        _: usize,
        action: Option<String>,
    ) -> Result<(), E> {
        (self.0)(Played {
            player,
            action,
            game,
        })
    }
}

// ----- a run -----

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

/// One thread's counts.
#[derive(Default)]
struct Tally {
    thread: ThreadReport,
    attempts: u64,
    refusals: u64,
    finished: u64,
    stuck: u64,
    at_limit: u64,
    deep_checks: u64,
}

/// One entry of a game's log: what was applied (or, last, the attempt that showed a violation), as the
/// player and the action's JSON text.
#[derive(Clone, Debug)]
struct Step {
    /// Who acted.
    player: u16,
    /// The action's JSON (or malformed text).
    text: String,
}

/// The game's player count: fixed, or drawn from the seed within the ruleset's range.
fn players_for(ruleset: &dyn DynRuleset, options: &SimOptions, seed: u64) -> u16 {
    if let Some(p) = options.players {
        return p;
    }
    let d = ruleset.description();
    let (min, max) = (d.min_players, d.max_players.max(d.min_players));
    let span = u64::from(max - min) + 1;
    let mut rng = GameRng::new(seed ^ 0x5EED_0F9A_11E5);
    min + rng.below(span) as u16
}

fn simulate_game(
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

fn plugin_panic(e: &ActionError) -> Option<ViolationKind> {
    match e {
        ActionError::Panicked(m) => Some(ViolationKind::Panicked(m.clone())),
        ActionError::Poisoned(_) => Some(ViolationKind::Poisoned(e.to_string())),
        _ => None,
    }
}

/// A setup error as a violation: a poisoned ruleset, or a refused setup.
fn setup_failed(setup: &Setup, e: coffer_core::SetupError) -> ViolationKind {
    match e {
        coffer_core::SetupError::Poisoned(_) => ViolationKind::Poisoned(e.to_string()),
        e => ViolationKind::SetupFailed {
            players: setup.players,
            error: e.to_string(),
        },
    }
}

/// Plays one game to its end, or to its first violation.
fn play(
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
        if *actions % every == 0 {
            deep_check(&**ruleset, &mut *game, &mut replica, log)?;
            tally.deep_checks += 1;
        }
    }
    deep_check(&**ruleset, &mut *game, &mut replica, log)?;
    tally.deep_checks += 1;
    Ok(())
}

/// A snapshot format in words.
fn format_name(format: Format) -> &'static str {
    match format {
        Format::Json => "JSON",
        Format::Binary => "binary",
    }
}

/// Seats in words: "p0, p2", or "nobody".
fn seats(list: &[Owner]) -> String {
    if list.is_empty() {
        return "nobody".to_owned();
    }
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// A runtime-loaded game whose plugin failed in a call without an error of its own (listing legal
/// actions, the outcome, hashing) answered with a neutral value: that is a panic, not an answer.
fn plugin_failure(game: &dyn DynGame) -> Result<(), ViolationKind> {
    match game.failure() {
        Some(message) => Err(ViolationKind::Panicked(message)),
        None => Ok(()),
    }
}

enum Attempted {
    Refused,
    Accepted,
}

/// Extreme values that replace a number of a legal action.
const EXTREMES: [&str; 12] = [
    "-1",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "4294967296",
    "65536",
    "256",
    "1e300",
    "0.5",
    "-0",
    "9007199254740993",
    "0",
];

/// Malformed texts.
const GARBAGE: [&str; 9] = [
    "",
    "{",
    "[1,2",
    "null",
    "\"\"",
    "{}",
    "{\"type\":}",
    "not json",
    "[]",
];

/// Tries one illegal or malformed action for or near `player` (who has legal action `index`).
fn attempt(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    player: Owner,
    index: usize,
    log: &mut Vec<Step>,
) -> Result<Attempted, ViolationKind> {
    let players = game.players();
    let legal_json = game
        .legal_action_json(index)
        .unwrap_or_else(|| "null".to_string());
    let count = game.legal_actions(player);
    let (actor, text): (Owner, String) = match rng.below(6) {
        0 => {
            // Malformed: a truncated legal action, or garbage.
            let text = if rng.below(2) == 0 && legal_json.len() > 1 {
                let mut cut = rng.below(legal_json.len() as u64 - 1) as usize + 1;
                while !legal_json.is_char_boundary(cut) {
                    cut -= 1;
                }
                legal_json[..cut].to_string()
            } else {
                GARBAGE[rng.below(GARBAGE.len() as u64) as usize].to_string()
            };
            (player, text)
        }
        1 => (player, unknown_type(&legal_json)),
        2 if players > 1 => {
            // A legal action of `player`, by someone else.
            let other = (player.0 + 1 + rng.below(u64::from(players) - 1) as u16) % players;
            (Owner(other), legal_json)
        }
        3 => {
            // A player who is not in the game.
            let ghost = match rng.below(3) {
                0 => players,
                1 => players.saturating_add(1 + rng.below(5) as u16),
                _ => u16::MAX,
            };
            let listed = game.legal_actions(Owner(ghost));
            if listed > 0 {
                return Err(ViolationKind::GhostHasActions {
                    player: Owner(ghost),
                    count: listed,
                });
            }
            (Owner(ghost), legal_json)
        }
        4 => match mutate_number(&legal_json, rng) {
            Some(text) => (player, text),
            None => (player, unknown_type(&legal_json)),
        },
        _ => {
            // A legal-action index past the end of the list.
            let bad = match rng.below(3) {
                0 => count,
                1 => count + 1 + rng.below(10) as usize,
                _ => usize::MAX,
            };
            let before = game.state_hash();
            return match game.apply_legal(player, bad) {
                Ok(()) => Err(ViolationKind::UnlistedAccepted {
                    player,
                    action: format!("legal-action index {bad} of {count}"),
                }),
                Err(e) => {
                    if let Some(v) = plugin_panic(&e) {
                        return Err(v);
                    }
                    let after = game.state_hash();
                    if after != before {
                        return Err(ViolationKind::RefusalChangedState {
                            action: format!("legal-action index {bad} of {count}"),
                            error: e.to_string(),
                            before,
                            after,
                        });
                    }
                    Ok(Attempted::Refused)
                }
            };
        }
    };
    let listed = listed_json(game, actor);
    let before = game.state_hash();
    let result = game.apply_json(actor, &text);
    match result {
        Ok(()) => {
            log.push(Step {
                player: actor.0,
                text: text.clone(),
            });
            let accepted: Option<Value> = serde_json::from_str(&text).ok();
            if accepted.is_some_and(|a| listed.contains(&a)) {
                Ok(Attempted::Accepted)
            } else {
                Err(ViolationKind::UnlistedAccepted {
                    player: actor,
                    action: text,
                })
            }
        }
        Err(e) => {
            if let Some(v) = plugin_panic(&e) {
                log.push(Step {
                    player: actor.0,
                    text,
                });
                return Err(v);
            }
            let after = game.state_hash();
            if after != before {
                log.push(Step {
                    player: actor.0,
                    text: text.clone(),
                });
                return Err(ViolationKind::RefusalChangedState {
                    action: text,
                    error: e.to_string(),
                    before,
                    after,
                });
            }
            let as_value: Option<Value> = serde_json::from_str(&text).ok();
            if as_value.is_some_and(|a| listed.contains(&a)) {
                log.push(Step {
                    player: actor.0,
                    text: text.clone(),
                });
                return Err(ViolationKind::ListedRefused {
                    player: actor,
                    action: text,
                    error: e.to_string(),
                });
            }
            Ok(Attempted::Refused)
        }
    }
}

/// Every legal action of `player`, as JSON values.
fn listed_json(game: &mut dyn DynGame, player: Owner) -> Vec<Value> {
    let n = game.legal_actions(player);
    (0..n)
        .filter_map(|i| game.legal_action_json(i))
        .filter_map(|j| serde_json::from_str(&j).ok())
        .collect()
}

/// The action with its type replaced by one no ruleset has.
fn unknown_type(json: &str) -> String {
    const UNKNOWN: &str = "no_such_action_in_any_ruleset";
    match serde_json::from_str::<Value>(json) {
        Ok(Value::Object(mut map)) if map.contains_key("type") => {
            map.insert("type".into(), Value::String(UNKNOWN.into()));
            Value::Object(map).to_string()
        }
        Ok(Value::Object(mut map)) if map.len() == 1 => {
            // Externally tagged enum: {"variant": {...}}.
            let inner = map
                .values_mut()
                .next()
                .map(std::mem::take)
                .unwrap_or(Value::Null);
            let mut out = serde_json::Map::new();
            out.insert(UNKNOWN.into(), inner);
            Value::Object(out).to_string()
        }
        _ => format!("{{\"type\":\"{UNKNOWN}\"}}"),
    }
}

/// The action with one of its numbers replaced by an extreme value; `None` if it has no number.
fn mutate_number(json: &str, rng: &mut GameRng) -> Option<String> {
    let mut value: Value = serde_json::from_str(json).ok()?;
    let mut numbers = 0usize;
    count_numbers(&value, &mut numbers);
    if numbers == 0 {
        return None;
    }
    let target = rng.below(numbers as u64) as usize;
    let extreme = EXTREMES[rng.below(EXTREMES.len() as u64) as usize];
    let replacement: Value = serde_json::from_str(extreme).ok()?;
    let mut seen = 0usize;
    replace_number(&mut value, target, &mut seen, &replacement);
    Some(value.to_string())
}

fn count_numbers(value: &Value, n: &mut usize) {
    match value {
        Value::Number(_) => *n += 1,
        Value::Array(items) => items.iter().for_each(|v| count_numbers(v, n)),
        Value::Object(map) => map.values().for_each(|v| count_numbers(v, n)),
        _ => {}
    }
}

fn replace_number(value: &mut Value, target: usize, seen: &mut usize, with: &Value) {
    match value {
        Value::Number(_) => {
            if *seen == target {
                *value = with.clone();
            }
            *seen += 1;
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| replace_number(v, target, seen, with)),
        Value::Object(map) => map
            .values_mut()
            .for_each(|v| replace_number(v, target, seen, with)),
        _ => {}
    }
}

// ----- the expensive checks -----

/// A game started fresh from the same setup, fed the log as JSON: its hash must match the game's.
struct Replica {
    game: Box<dyn DynGame>,
    fed: usize,
}

impl Replica {
    fn new(ruleset: &dyn DynRuleset, setup: &Setup) -> Result<Replica, ViolationKind> {
        let game = ruleset
            .new_game(setup)
            .map_err(|e| setup_failed(setup, e))?;
        Ok(Replica { game, fed: 0 })
    }

    /// Applies the log's entries it has not seen yet.
    fn catch_up(&mut self, log: &[Step]) -> Result<(), ViolationKind> {
        for step in &log[self.fed..] {
            let (player, text) = (Owner(step.player), &step.text);
            self.game
                .apply_json(player, text)
                .map_err(|e| ViolationKind::Replay(format!("{player} {text} was refused: {e}")))?;
        }
        self.fed = log.len();
        Ok(())
    }
}

/// Clone, JSON and binary snapshots, and replay of the log all give the game's hash.
fn deep_check(
    ruleset: &dyn DynRuleset,
    game: &mut dyn DynGame,
    replica: &mut Replica,
    log: &[Step],
) -> Result<(), ViolationKind> {
    let listed = game.to_act().to_vec();
    for player in (0..game.players()).map(Owner) {
        let count = game.legal_actions(player);
        if count > 0 && !listed.contains(&player) {
            return Err(ViolationKind::ToActIncomplete {
                player,
                count,
                listed,
            });
        }
    }
    let original = game.state_hash();
    let clone = game.clone_game().state_hash();
    if clone != original {
        return Err(ViolationKind::CloneDiffers { original, clone });
    }
    for format in [Format::Json, Format::Binary] {
        let problem = |p: String| ViolationKind::Snapshot { format, problem: p };
        let bytes = game
            .snapshot(format)
            .map_err(|e| problem(format!("writing: {e}")))?;
        let restored = ruleset
            .restore(format, &bytes)
            .map_err(|e| problem(format!("restoring: {e}")))?;
        let hash = restored.state_hash();
        if hash != original {
            return Err(problem(format!(
                "restored hash {hash}, the game {original}"
            )));
        }
    }
    replica.catch_up(log)?;
    let replayed = replica.game.state_hash();
    if replayed != original {
        return Err(ViolationKind::Replay(format!(
            "after {} log entries the replica has hash {replayed}, the game {original}",
            log.len()
        )));
    }
    Ok(())
}

// ----- scripts: checking, shrinking, writing -----

/// Re-runs a `coffer play` script with every check after every line: refused lines must leave the hash
/// unchanged (and are otherwise skipped, so that a shrunk script stays meaningful), accepted lines must be
/// listed legal actions, invariants must hold, and clone, snapshots and replay must agree.
///
/// Returns the first violation, or `None` if the script shows none.
pub fn check_script(
    ruleset: &dyn DynRuleset,
    setup: &Setup,
    script: &[ScriptLine],
) -> Option<ScriptViolation> {
    let mut last = None;
    let result = catch_unwind(AssertUnwindSafe(|| {
        check_lines(ruleset, setup, script, &mut last)
    }));
    let kind = match result {
        Ok(Ok(())) => return None,
        Ok(Err(kind)) => kind,
        Err(panic) => ViolationKind::Panicked(panic_message(&*panic)),
    };
    Some(ScriptViolation { line: last, kind })
}

fn check_lines(
    ruleset: &dyn DynRuleset,
    setup: &Setup,
    script: &[ScriptLine],
    last: &mut Option<usize>,
) -> Result<(), ViolationKind> {
    let mut game = ruleset
        .new_game(setup)
        .map_err(|e| setup_failed(setup, e))?;
    let mut replica = Replica::new(ruleset, setup)?;
    let mut accepted: Vec<Step> = Vec::new();
    game.check_invariants()
        .map_err(|v| ViolationKind::Invariant(v.to_string()))?;
    deep_check(ruleset, &mut *game, &mut replica, &accepted)?;
    for (i, line) in script.iter().enumerate() {
        *last = Some(i);
        let player = Owner(line.player);
        let text = line.action_text();
        let listed = listed_json(&mut *game, player);
        if player.0 >= game.players() && !listed.is_empty() {
            return Err(ViolationKind::GhostHasActions {
                player,
                count: listed.len(),
            });
        }
        let before = game.state_hash();
        match game.apply_json(player, &text) {
            Ok(()) => {
                if !listed.contains(&line.action) {
                    return Err(ViolationKind::UnlistedAccepted {
                        player,
                        action: text,
                    });
                }
                accepted.push(Step {
                    player: line.player,
                    text,
                });
                game.check_invariants()
                    .map_err(|v| ViolationKind::Invariant(v.to_string()))?;
                deep_check(ruleset, &mut *game, &mut replica, &accepted)?;
            }
            Err(e) => {
                if let Some(v) = plugin_panic(&e) {
                    return Err(v);
                }
                let after = game.state_hash();
                if after != before {
                    return Err(ViolationKind::RefusalChangedState {
                        action: text,
                        error: e.to_string(),
                        before,
                        after,
                    });
                }
                if listed.contains(&line.action) {
                    return Err(ViolationKind::ListedRefused {
                        player,
                        action: text,
                        error: e.to_string(),
                    });
                }
            }
        }
    }
    let outcome = game.outcome();
    if outcome != Outcome::Ongoing {
        for p in 0..game.players() {
            let count = game.legal_actions(Owner(p));
            if count > 0 {
                return Err(ViolationKind::FinishedWithLegalActions {
                    outcome,
                    player: Owner(p),
                    count,
                });
            }
        }
    }
    Ok(())
}

/// Turns a game's log into script lines (text that is not JSON becomes a JSON string).
fn to_script(log: &[Step]) -> Vec<ScriptLine> {
    log.iter()
        .map(|step| ScriptLine {
            player: step.player,
            action: serde_json::from_str(&step.text).unwrap_or(Value::String(step.text.clone())),
        })
        .collect()
}

/// Shrinks `script` by delta debugging (ddmin): removes chunks of lines while [`check_script`] still finds a
/// violation of the same kind, spending at most `budget` runs. Returns the smallest script found.
pub fn shrink(
    ruleset: &dyn DynRuleset,
    setup: &Setup,
    script: Vec<ScriptLine>,
    kind: &ViolationKind,
    budget: usize,
) -> Vec<ScriptLine> {
    let same = |candidate: &[ScriptLine]| {
        check_script(ruleset, setup, candidate).is_some_and(|v| v.kind.name() == kind.name())
    };
    let mut current = script;
    let mut runs = 0usize;
    let mut chunks = 2usize;
    while current.len() >= 2 && runs < budget {
        let size = current.len().div_ceil(chunks);
        let mut reduced = false;
        let mut start = 0;
        while start < current.len() && runs < budget {
            let end = (start + size).min(current.len());
            let candidate: Vec<ScriptLine> = current[..start]
                .iter()
                .chain(&current[end..])
                .cloned()
                .collect();
            runs += 1;
            if same(&candidate) {
                current = candidate;
                chunks = chunks.saturating_sub(1).max(2);
                reduced = true;
                break;
            }
            start = end;
        }
        if !reduced {
            if chunks >= current.len() {
                break;
            }
            chunks = (chunks * 2).min(current.len());
        }
    }
    if current.len() == 1 && runs < budget && same(&[]) {
        current.clear();
    }
    current
}

/// Why the setup file beside a script could not be used ([`script_setup`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScriptSetupError {
    /// The file could not be read.
    #[error("cannot read {}", path.display())]
    Unreadable {
        /// The setup file.
        path: PathBuf,
        /// Why.
        #[source]
        source: Box<crate::save::SaveError>,
    },
    /// The file is not `{"players": N, "seed": S, "config": {...}}`.
    #[error("{} is not a valid setup file", path.display())]
    Invalid {
        /// The setup file.
        path: PathBuf,
        /// Why.
        #[source]
        source: serde_json::Error,
    },
    /// The file's `config` is not a configuration (an object of options, at most 1 MiB).
    #[error("{} holds no valid configuration", path.display())]
    Config {
        /// The setup file.
        path: PathBuf,
        /// Why.
        #[source]
        source: crate::save::ConfigError,
    },
}

/// How a script's game is set up: `<script>.setup.json` beside it when present
/// (`{"players": N, "seed": S, "config": {...}}`, each optional), otherwise `named` players (one more than
/// the highest player the script names, at least the ruleset's minimum) and `seed`.
///
/// # Errors
/// [`ScriptSetupError`]: a setup file that cannot be read or holds anything else.
pub fn script_setup(
    script: &Path,
    named: u16,
    d: &coffer_core::Description,
    seed: u64,
) -> Result<Setup, ScriptSetupError> {
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct SetupFile {
        players: Option<u16>,
        seed: Option<u64>,
        #[serde(default)]
        config: serde_json::Value,
    }
    let mut setup = Setup::new(named.max(d.min_players), seed);
    let sidecar = script.with_extension("setup.json");
    if sidecar.is_file() {
        let text = crate::save::read_capped_text(&sidecar).map_err(|source| {
            ScriptSetupError::Unreadable {
                path: sidecar.clone(),
                source: Box::new(source),
            }
        })?;
        let file: SetupFile =
            serde_json::from_str(&text).map_err(|source| ScriptSetupError::Invalid {
                path: sidecar.clone(),
                source,
            })?;
        crate::save::check_config(&file.config).map_err(|source| ScriptSetupError::Config {
            path: sidecar.clone(),
            source,
        })?;
        setup.players = file.players.unwrap_or(setup.players);
        setup.seed = file.seed.unwrap_or(setup.seed);
        setup.config = file.config;
    }
    Ok(setup)
}

/// Writes script lines as JSON Lines.
///
/// # Errors
/// The I/O error, with the path.
pub fn write_script(path: &Path, script: &[ScriptLine]) -> std::io::Result<()> {
    let mut text = String::new();
    for line in script {
        text.push_str(&serde_json::to_string(line).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    std::fs::write(path, text)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
}

/// Reads a script written as JSON Lines; blank lines are skipped.
///
/// # Errors
/// A message naming the line that could not be read.
pub fn parse_script(text: &str) -> Result<Vec<ScriptLine>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| serde_json::from_str(l).map_err(|e| format!("line {}: {e}: {l}", i + 1)))
        .collect()
}

fn report_violation(
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

impl Report {
    /// The report as one JSON document.
    pub fn to_json(&self) -> Value {
        serde_json::json!({
            "ruleset": self.ruleset,
            "players": self.players,
            "games": self.games,
            "actions": self.actions,
            "attempts": self.attempts,
            "refusals": self.refusals,
            "finished": self.finished,
            "stuck": self.stuck,
            "at_limit": self.at_limit,
            "deep_checks": self.deep_checks,
            "threads": self.threads,
            "seconds": self.elapsed.as_secs_f64(),
            "actions_per_second": self.actions_per_second(),
            "per_thread": self.per_thread.iter().map(|t| serde_json::json!({
                "games": t.games,
                "actions": t.actions,
                "busy_seconds": t.busy.as_secs_f64(),
            })).collect::<Vec<_>>(),
            "violations": self.violations.iter().map(|v| serde_json::json!({
                "game": v.game,
                "seed": v.seed,
                "players": v.players,
                "after_actions": v.after_actions,
                "kind": v.kind.name(),
                "message": v.kind.to_string(),
                "script": v.script,
                "script_lines": v.script_lines,
                "original_lines": v.original_lines,
                "reproduced": v.reproduced,
                "script_error": v.script_error,
            })).collect::<Vec<_>>(),
        })
    }
}

//! What a run is asked ([`SimOptions`]) and what it finds and reports: the kinds of violation, the
//! scripts that show them, each thread's counts and the [`Report`].

use crate::render::outcome as render_outcome;
use coffer_core::{ActionError, Format, Outcome, Owner, Setup, StateHash};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

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
        render_outcome(outcome)
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
    /// A sandboxed (WebAssembly) ruleset's call trapped or ran past its deadline: the game was stopped.
    #[error("{0}")]
    Stopped(String),
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
            ViolationKind::Stopped(_) => "stopped",
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

pub(crate) fn per_second(n: u64, time: Duration) -> f64 {
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

/// One thread's counts.
#[derive(Default)]
pub(crate) struct Tally {
    pub(crate) thread: ThreadReport,
    pub(crate) attempts: u64,
    pub(crate) refusals: u64,
    pub(crate) finished: u64,
    pub(crate) stuck: u64,
    pub(crate) at_limit: u64,
    pub(crate) deep_checks: u64,
}

/// One entry of a game's log: what was applied (or, last, the attempt that showed a violation), as the
/// player and the action's JSON text.
#[derive(Clone, Debug)]
pub(crate) struct Step {
    /// Who acted.
    pub(crate) player: u16,
    /// The action's JSON (or malformed text).
    pub(crate) text: String,
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

pub(crate) fn plugin_panic(e: &ActionError) -> Option<ViolationKind> {
    match e {
        ActionError::Panicked(m) => Some(ViolationKind::Panicked(m.clone())),
        ActionError::Poisoned(_) => Some(ViolationKind::Poisoned(e.to_string())),
        ActionError::Stopped(m) => Some(ViolationKind::Stopped(m.clone())),
        _ => None,
    }
}

/// A setup error as a violation: a poisoned ruleset, or a refused setup.
pub(crate) fn setup_failed(setup: &Setup, e: coffer_core::SetupError) -> ViolationKind {
    match e {
        coffer_core::SetupError::Poisoned(_) => ViolationKind::Poisoned(e.to_string()),
        coffer_core::SetupError::Stopped(m) => ViolationKind::Stopped(m),
        e => ViolationKind::SetupFailed {
            players: setup.players,
            error: e.to_string(),
        },
    }
}

/// A snapshot format in words.
pub(crate) fn format_name(format: Format) -> &'static str {
    match format {
        Format::Json => "JSON",
        Format::Binary => "binary",
    }
}

/// Seats in words: "p0, p2", or "nobody".
pub(crate) fn seats(list: &[Owner]) -> String {
    if list.is_empty() {
        return "nobody".to_owned();
    }
    list.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

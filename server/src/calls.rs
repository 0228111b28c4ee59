//! `Calls`: the ruleset calls running now on blocking threads, each named by its game and ruleset, so
//! that shutdown can wait for them within its grace and name the ones it abandons.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The ruleset calls running now.
#[derive(Debug, Default)]
pub struct Calls {
    next: AtomicU64,
    running: Mutex<BTreeMap<u64, RunningCall>>,
}

/// One ruleset call running on a blocking thread.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct RunningCall {
    /// The game it is for: its id, or `a new game` while one is being started.
    pub game: String,
    /// The ruleset called, `id@version`.
    pub ruleset: String,
    /// What the call does (`an action`, `a history read`, `starting a game`).
    pub what: &'static str,
    /// When it started.
    pub since: Instant,
}

impl std::fmt::Display for RunningCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of game {} (ruleset {}), running for {:.1} s",
            self.what,
            self.game,
            self.ruleset,
            self.since.elapsed().as_secs_f64()
        )
    }
}

/// A call's place in [`Calls`], given back when dropped: when the call returns, or unwinds.
#[derive(Debug)]
pub struct Running {
    calls: Arc<Calls>,
    id: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.calls
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

impl Calls {
    /// Notes a call starting now on this thread; it counts as running until the answer is dropped.
    pub fn enter(
        self: &Arc<Self>,
        game: impl std::fmt::Display,
        ruleset: &str,
        what: &'static str,
    ) -> Running {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let call = RunningCall {
            game: game.to_string(),
            ruleset: ruleset.to_owned(),
            what,
            since: Instant::now(),
        };
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, call);
        Running {
            calls: Arc::clone(self),
            id,
        }
    }

    /// The calls running now, oldest first.
    pub fn running(&self) -> Vec<RunningCall> {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect()
    }

    /// Waits until no call runs or `until` passes, whichever is first; answers the calls still running.
    pub async fn settle(&self, until: Instant) -> Vec<RunningCall> {
        loop {
            let running = self.running();
            let now = Instant::now();
            if running.is_empty() || now >= until {
                return running;
            }
            tokio::time::sleep((until - now).min(Duration::from_millis(20))).await;
        }
    }
}

//! The deadline of every plugin call and the watchdog thread that ends the process past it.

use std::collections::BTreeMap;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::loader::calls::{SLOTS, Slot, Subject, in_call};
use crate::loader::error::LoadError;
use crate::loader::handlers;
use crate::loader::limits::{
    DEADLINE_ENV, DEFAULT_DEADLINE, EXIT_DEADLINE, MAX_DEADLINE, MIN_DEADLINE,
};

/// The deadline in nanoseconds; 0 until set or read from the environment.
pub(crate) static DEADLINE_NANOS: AtomicU64 = AtomicU64::new(0);

/// Sets the deadline of every plugin call in this process (the watchdog is process-wide), clamped to
/// [`MIN_DEADLINE`]..=[`MAX_DEADLINE`]. It takes precedence over [`DEADLINE_ENV`].
pub fn set_call_deadline(deadline: Duration) {
    let deadline = deadline.clamp(MIN_DEADLINE, MAX_DEADLINE);
    DEADLINE_NANOS.store(deadline.as_nanos() as u64, Ordering::Relaxed);
}

/// The deadline of a plugin call now: the one set, else [`DEADLINE_ENV`]'s, else [`DEFAULT_DEADLINE`].
pub fn call_deadline() -> Duration {
    let _ = init_deadline();
    Duration::from_nanos(DEADLINE_NANOS.load(Ordering::Relaxed))
}

/// The deadline [`DEADLINE_ENV`] asks for, if set.
///
/// # Errors
/// [`LoadError::BadDeadline`] for a value that is not a number of seconds from [`MIN_DEADLINE`] to
/// [`MAX_DEADLINE`].
pub fn deadline_from_env() -> Result<Option<Duration>, LoadError> {
    let Some(value) = std::env::var_os(DEADLINE_ENV) else {
        return Ok(None);
    };
    let value = value.to_string_lossy().into_owned();
    let bad = || LoadError::BadDeadline {
        value: value.clone(),
    };
    let seconds: f64 = value.trim().parse().map_err(|_| bad())?;
    if !(MIN_DEADLINE.as_secs_f64()..=MAX_DEADLINE.as_secs_f64()).contains(&seconds) {
        return Err(bad());
    }
    Ok(Some(Duration::from_secs_f64(seconds)))
}

/// Sets the deadline from the environment unless it is set already; a bad value leaves the default and
/// is returned.
pub(crate) fn init_deadline() -> Result<(), LoadError> {
    if DEADLINE_NANOS.load(Ordering::Relaxed) != 0 {
        return Ok(());
    }
    let (deadline, result) = match deadline_from_env() {
        Ok(d) => (d.unwrap_or(DEFAULT_DEADLINE), Ok(())),
        Err(e) => (DEFAULT_DEADLINE, Err(e)),
    };
    let _ = DEADLINE_NANOS.compare_exchange(
        0,
        deadline.as_nanos() as u64,
        Ordering::Relaxed,
        Ordering::Relaxed,
    );
    result
}

/// Starts the watchdog and installs the crash and exit handlers, once, before the first library loads.
pub(crate) fn install_guards() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = init_deadline();
        // Without a watchdog no deadline can be kept: loading goes on, as before this guard existed.
        if let Err(e) = std::thread::Builder::new()
            .name("coffer-plugin-watchdog".to_owned())
            .spawn(watchdog)
        {
            tracing::error!(
                target: "coffer_host::loader",
                "cannot start the plugin call watchdog, plugin calls have no deadline: {e}"
            );
        }
        handlers::install();
    });
}

/// Whether a call past its deadline is left to the host ([`contain_overdue_calls`]).
pub(crate) static CONTAIN_OVERDUE: AtomicBool = AtomicBool::new(false);

/// Leaves calls past their deadline to the host instead of ending the process: the watchdog only reports
/// each one, once, through `tracing`. For a host that keeps its own deadline around every call and can
/// stop using what the stuck call holds, as the game server does (it quarantines that game; the thread
/// stuck in the call is abandoned, never joined). Process-wide and permanent.
pub fn contain_overdue_calls() {
    CONTAIN_OVERDUE.store(true, Ordering::Relaxed);
}

/// Watches every thread's plugin call; ends the process when one outlives the deadline (unless
/// [`contain_overdue_calls`] was called).
pub(crate) fn watchdog() {
    // Per slot (by address): the odd `seq` first seen, when, and whether it was reported.
    let mut seen: BTreeMap<usize, (u64, Instant, bool)> = BTreeMap::new();
    loop {
        let deadline = call_deadline();
        let poll = (deadline / 8).clamp(Duration::from_millis(2), Duration::from_secs(1));
        std::thread::sleep(poll);
        let slots: Vec<&'static Slot> = SLOTS.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let now = Instant::now();
        for slot in slots {
            let key = std::ptr::from_ref(slot) as usize;
            let Some((seq, subject, call)) = in_call(slot) else {
                seen.remove(&key);
                continue;
            };
            match seen.get_mut(&key) {
                Some((first, since, reported)) if *first == seq => {
                    if now.duration_since(*since) >= deadline {
                        if !CONTAIN_OVERDUE.load(Ordering::Relaxed) {
                            overdue(subject, call, deadline);
                        }
                        if !*reported {
                            *reported = true;
                            tracing::error!(
                                target: "coffer_host::loader",
                                plugin = %subject.display(),
                                "plugin call `{call}` is past its deadline of {} s; the host stops using what it holds",
                                deadline.as_secs_f64()
                            );
                        }
                    }
                }
                _ => {
                    seen.insert(key, (seq, now, false));
                }
            }
        }
    }
}

#[cold]
pub(crate) fn overdue(subject: &Subject, call: &str, deadline: Duration) -> ! {
    eprintln!(
        "error: plugin library {} did not return from the call `{call}` within {} s (the plugin call \
         deadline; set it with {DEADLINE_ENV}); native code cannot be interrupted safely, so the process \
         ends with status {EXIT_DEADLINE}",
        subject.display(),
        deadline.as_secs_f64()
    );
    handlers::exit_now(EXIT_DEADLINE)
}

//! The loader's fixed numbers: the bounds of a plugin call's deadline and the variable that sets it, and the
//! exit statuses of a process whose plugin call outlived it, crashed or called `exit`.

use std::time::Duration;

/// The environment variable setting the deadline of every plugin call, in seconds (`30`, `0.5`), between
/// [`MIN_DEADLINE`] and [`MAX_DEADLINE`].
pub const DEADLINE_ENV: &str = "COFFER_PLUGIN_DEADLINE";

/// The deadline of a plugin call when none is set: generous, as a call may build a large game.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(30);

/// The shortest deadline that can be set.
pub const MIN_DEADLINE: Duration = Duration::from_millis(10);

/// The longest deadline that can be set (one day).
pub const MAX_DEADLINE: Duration = Duration::from_secs(86_400);

/// Exit status of a process ended because a plugin call outlived its deadline (as `timeout(1)`).
pub const EXIT_DEADLINE: i32 = 124;

/// Exit status of a process ended because a plugin crashed (`SIGSEGV`, `SIGBUS`, `SIGABRT`, `SIGILL`,
/// `SIGFPE`) during a call.
pub const EXIT_CRASHED: i32 = 125;

/// Exit status of a process ended because a plugin called `exit` during a call (whatever status it asked
/// for: a plugin ending the process is a failure, not a success).
pub const EXIT_EXITED: i32 = 123;

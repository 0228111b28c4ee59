//! The save format's fixed numbers: its version, the variables that set the [`Limits`](crate::save::Limits),
//! the temporary files' prefix and age, the largest configuration.

use std::time::Duration;

/// The save format this build writes and the newest it reads.
pub const FORMAT_VERSION: u32 = 1;

/// The environment variable that sets [`Limits::max_file_bytes`].
pub const MAX_FILE_BYTES_ENV: &str = "COFFER_MAX_FILE_BYTES";

/// The environment variable that sets [`Limits::lock_wait`], in milliseconds.
pub const LOCK_WAIT_ENV: &str = "COFFER_LOCK_WAIT_MS";

/// How long a temporary file of a writer that is gone is kept before a later write removes it.
pub const STALE_TEMPORARY_AGE: Duration = Duration::from_secs(60);

/// The prefix of every temporary file a save write creates (followed by the writer's pid, `-`, random
/// characters and `.tmp`).
pub const TEMPORARY_PREFIX: &str = ".coffer-save-";

/// The most bytes a game's configuration may take as JSON text: 1 MiB. A save holds its configuration
/// as the one-line JSON text of [`check_config`]; reading a save refuses a longer one before building it,
/// so a configuration never costs more than a small multiple of this.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

//! The save format's fixed numbers and the [`Limits`] on what reading a file may cost and how long a
//! writer waits for a save's lock.

use crate::save::error::SaveError;
use crate::save::format::{LOCK_WAIT_ENV, MAX_FILE_BYTES_ENV};
use std::time::Duration;

/// Bounds on what reading a file may cost and how long a writer waits for a save's lock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub(crate) max_file_bytes: u64,
    pub(crate) lock_wait: Duration,
}

impl Limits {
    /// The default size limit of every file read: 64 MiB.
    pub const DEFAULT_MAX_FILE_BYTES: u64 = 64 << 20;
    /// The largest size limit that can be set: 1 TiB.
    pub const MAX_MAX_FILE_BYTES: u64 = 1 << 40;
    /// The default time a writer waits for a save's lock: 10 seconds.
    pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(10);
    /// The longest time a writer can be told to wait for a lock: one hour.
    pub const MAX_LOCK_WAIT: Duration = Duration::from_secs(3600);

    /// Limits with the given values.
    ///
    /// # Errors
    /// [`SaveError::BadLimit`] when `max_file_bytes` is not from 1 to [`MAX_MAX_FILE_BYTES`](Self::MAX_MAX_FILE_BYTES)
    /// or `lock_wait` is longer than [`MAX_LOCK_WAIT`](Self::MAX_LOCK_WAIT).
    pub fn new(max_file_bytes: u64, lock_wait: Duration) -> Result<Limits, SaveError> {
        if !(1..=Self::MAX_MAX_FILE_BYTES).contains(&max_file_bytes) {
            return Err(SaveError::BadLimit {
                name: "the file size limit",
                value: max_file_bytes.to_string(),
                allowed: format!("a number of bytes from 1 to {}", Self::MAX_MAX_FILE_BYTES),
            });
        }
        if lock_wait > Self::MAX_LOCK_WAIT {
            return Err(SaveError::BadLimit {
                name: "the lock wait",
                value: format!("{} ms", lock_wait.as_millis()),
                allowed: format!("0 to {} ms", Self::MAX_LOCK_WAIT.as_millis()),
            });
        }
        Ok(Limits {
            max_file_bytes,
            lock_wait,
        })
    }

    /// The limits set by [`MAX_FILE_BYTES_ENV`] and [`LOCK_WAIT_ENV`], each defaulting when unset or empty.
    ///
    /// # Errors
    /// [`SaveError::BadLimit`] naming the variable, the value found and the allowed range.
    pub fn from_env() -> Result<Limits, SaveError> {
        let read = |name: &'static str, max: u64, unit: &str| -> Result<Option<u64>, SaveError> {
            let Some(value) = std::env::var_os(name) else {
                return Ok(None);
            };
            let text = value.to_string_lossy();
            if text.trim().is_empty() {
                return Ok(None);
            }
            match text.trim().parse::<u64>() {
                Ok(n) if n <= max => Ok(Some(n)),
                _ => Err(SaveError::BadLimit {
                    name,
                    value: text.into_owned(),
                    allowed: format!("a number of {unit} from 0 to {max}"),
                }),
            }
        };
        let bytes = read(MAX_FILE_BYTES_ENV, Self::MAX_MAX_FILE_BYTES, "bytes")?
            .unwrap_or(Self::DEFAULT_MAX_FILE_BYTES);
        let wait = read(
            LOCK_WAIT_ENV,
            Self::MAX_LOCK_WAIT.as_millis() as u64,
            "milliseconds",
        )?
        .map_or(Self::DEFAULT_LOCK_WAIT, Duration::from_millis);
        if bytes == 0 {
            return Err(SaveError::BadLimit {
                name: MAX_FILE_BYTES_ENV,
                value: "0".to_owned(),
                allowed: format!("a number of bytes from 1 to {}", Self::MAX_MAX_FILE_BYTES),
            });
        }
        Limits::new(bytes, wait)
    }

    /// The largest file, in bytes, that is read.
    pub fn max_file_bytes(&self) -> u64 {
        self.max_file_bytes
    }

    /// How long a writer waits for a save's lock before giving up.
    pub fn lock_wait(&self) -> Duration {
        self.lock_wait
    }
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_file_bytes: Self::DEFAULT_MAX_FILE_BYTES,
            lock_wait: Self::DEFAULT_LOCK_WAIT,
        }
    }
}

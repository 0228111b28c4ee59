//! The lock file: SHA-256 pins of the libraries allowed to load (see the loader's docs for the format).

use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};

use crate::loader::error::LoadError;
use crate::loader::paths::{PathKind, check_path_as, check_target};

/// The largest lock file read, in bytes (1 MiB: some ten thousand pins).
pub const MAX_LOCK_FILE: u64 = 1 << 20;

/// SHA-256 pins of allowed libraries (see the module docs for the format).
#[derive(Clone, Debug, Default)]
pub struct LockFile {
    pub(crate) path: PathBuf,
    pub(crate) pins: BTreeMap<String, String>,
}

impl LockFile {
    /// Reads a lock file, after checking its path like a library's ([`check_path`]): a lock file anyone
    /// else could rewrite would pin nothing.
    ///
    /// # Errors
    /// [`LoadError::LockFile`] if it cannot be read, is larger than [`MAX_LOCK_FILE`] bytes or a line is
    /// not `<sha256>  <file name>`; [`LoadError::WorldWritable`] or [`LoadError::UnsafePath`] if it or a
    /// directory above it may be changed by others.
    pub fn read(path: &Path) -> Result<LockFile, LoadError> {
        let unreadable = |reason: String| LoadError::LockFile {
            path: path.to_owned(),
            line: 0,
            reason,
        };
        let canonical = check_path_as(path, PathKind::File)?;
        let file = File::open(&canonical).map_err(|e| unreadable(e.to_string()))?;
        let meta = file.metadata().map_err(|e| unreadable(e.to_string()))?;
        check_target(path, &meta)?;
        if meta.len() > MAX_LOCK_FILE {
            return Err(unreadable(format!(
                "it has {} bytes, more than the {MAX_LOCK_FILE} a lock file may have",
                meta.len()
            )));
        }
        let mut text = String::new();
        file.take(MAX_LOCK_FILE)
            .read_to_string(&mut text)
            .map_err(|e| unreadable(e.to_string()))?;
        LockFile::parse(path, &text)
    }

    /// Parses the text of a lock file read from `path` (named in errors).
    ///
    /// # Errors
    /// [`LoadError::LockFile`] for a malformed or duplicated line.
    pub fn parse(path: &Path, text: &str) -> Result<LockFile, LoadError> {
        let bad = |line: usize, reason: String| LoadError::LockFile {
            path: path.to_owned(),
            line,
            reason,
        };
        let mut pins = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((hash, name)) = line.split_once(char::is_whitespace) else {
                return Err(bad(
                    i + 1,
                    format!("expected '<sha256>  <file name>', got '{line}'"),
                ));
            };
            let name = name.trim_start().trim_start_matches('*');
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(bad(
                    i + 1,
                    format!("'{hash}' is not a sha256 (64 hex digits)"),
                ));
            }
            if name.is_empty() || name.contains(['/', '\\']) {
                return Err(bad(i + 1, format!("'{name}' is not a bare file name")));
            }
            if pins
                .insert(name.to_owned(), hash.to_ascii_lowercase())
                .is_some()
            {
                return Err(bad(i + 1, format!("'{name}' is pinned twice")));
            }
        }
        Ok(LockFile {
            path: path.to_owned(),
            pins,
        })
    }

    /// The pinned hash of a library file name.
    pub fn pin(&self, file_name: &str) -> Option<&str> {
        self.pins.get(file_name).map(String::as_str)
    }

    /// Where it was read from.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// Checks a file's sha256 (`actual`, 64 lowercase hex digits) against its pin in `lock`.
///
/// # Errors
/// [`LoadError::Unpinned`] or [`LoadError::HashMismatch`].
pub(crate) fn check_pin(path: &Path, lock: &LockFile, actual: String) -> Result<(), LoadError> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    match lock.pin(name) {
        None => Err(LoadError::Unpinned {
            path: path.to_owned(),
            lock: lock.path.clone(),
            actual,
        }),
        Some(expected) if expected != actual => Err(LoadError::HashMismatch {
            path: path.to_owned(),
            expected: expected.to_owned(),
            actual,
        }),
        Some(_) => Ok(()),
    }
}

/// The SHA-256 of a file, as 64 lowercase hex digits.
///
/// # Errors
/// The I/O error reading it.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    sha256_of(&mut File::open(path)?)
}

/// The SHA-256 of everything read from `file`, from its start.
pub(crate) fn sha256_of(file: &mut File) -> std::io::Result<String> {
    file.rewind()?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        hasher.update(&chunk[..n]);
    }
    let mut hex = String::with_capacity(64);
    for b in hasher.finalize() {
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

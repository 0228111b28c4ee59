//! Reading files within the limits: the size cap, regular files only, text checked.

use crate::save::error::SaveError;
use crate::save::limits::Limits;
use std::fs::{File, Metadata};
use std::io::Read as _;
use std::path::Path;

/// Reads a whole file no larger than [`Limits::from_env`] allows, refusing anything but a regular file
/// (checked on the open descriptor, so what is checked is what is read). For every file the command
/// reads: scripts, configuration files, check scripts, lock files.
///
/// # Errors
/// [`SaveError::BadLimit`], [`SaveError::Io`], [`SaveError::NotRegular`], [`SaveError::TooLarge`].
pub fn read_capped(path: &Path) -> Result<Vec<u8>, SaveError> {
    read_file(path, "file", &Limits::from_env()?)
}

/// [`read_capped`] as UTF-8 text.
///
/// # Errors
/// Those of [`read_capped`] and [`SaveError::NotText`].
pub fn read_capped_text(path: &Path) -> Result<String, SaveError> {
    let bytes = read_capped(path)?;
    String::from_utf8(bytes).map_err(|e| SaveError::NotText {
        what: "file",
        path: path.to_owned(),
        offset: e.utf8_error().valid_up_to(),
    })
}

/// [`read_capped`] with explicit limits.
///
/// # Errors
/// As [`read_capped`].
pub fn read_capped_with(path: &Path, limits: &Limits) -> Result<Vec<u8>, SaveError> {
    read_file(path, "file", limits)
}

pub(crate) const SAVE_FILE: &str = "save file";

pub(crate) fn as_text<'b>(
    bytes: &'b [u8],
    path: &Path,
    what: &'static str,
) -> Result<&'b str, SaveError> {
    std::str::from_utf8(bytes).map_err(|e| SaveError::NotText {
        what,
        path: path.to_owned(),
        offset: e.valid_up_to(),
    })
}

/// Opens `path` for reading without blocking (a FIFO with no writer would block an ordinary open) and
/// checks, on the descriptor, that it is a regular file.
pub(crate) fn open_regular(path: &Path, what: &'static str) -> Result<(File, Metadata), SaveError> {
    use rustix::fs::{Mode, OFlags};
    let io = |action, source| SaveError::Io {
        action,
        what,
        path: path.to_owned(),
        source,
    };
    let fd = rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| io("open", e.into()))?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(|e| io("read", e))?;
    let kind = file_kind(&meta);
    if kind != "a regular file" {
        return Err(SaveError::NotRegular {
            what,
            path: path.to_owned(),
            kind,
        });
    }
    Ok((file, meta))
}

pub(crate) fn file_kind(meta: &Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt as _;
    let t = meta.file_type();
    if t.is_file() {
        "a regular file"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

/// Reads an open regular file, at most `limit` bytes (a file that grows past it while read is refused).
pub(crate) fn read_open(
    file: &File,
    meta: &Metadata,
    path: &Path,
    what: &'static str,
    limits: &Limits,
) -> Result<Vec<u8>, SaveError> {
    let limit = limits.max_file_bytes;
    let too_large = |size| SaveError::TooLarge {
        what,
        path: path.to_owned(),
        size,
        limit,
    };
    if meta.len() > limit {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|source| SaveError::Io {
            action: "read",
            what,
            path: path.to_owned(),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(bytes)
}

pub(crate) fn read_file(
    path: &Path,
    what: &'static str,
    limits: &Limits,
) -> Result<Vec<u8>, SaveError> {
    let (file, meta) = open_regular(path, what)?;
    read_open(&file, &meta, path, what, limits)
}

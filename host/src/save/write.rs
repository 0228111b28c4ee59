//! Writing saves safely: the lock, the temporary file renamed into place, the directory synced, stale
//! temporaries swept.

use crate::save::error::{ReadOnlyReason, SaveError};
use crate::save::format::{STALE_TEMPORARY_AGE, TEMPORARY_PREFIX};
use crate::save::limits::Limits;
use crate::save::read::{SAVE_FILE, open_regular, read_open};
use std::fs::{File, Metadata};
use std::io::Write as _;
use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// A save opened, checked and locked: the file stays locked until this is dropped.
pub(crate) struct LockedSave {
    /// The path as given (for messages).
    pub(crate) path: PathBuf,
    /// The file the path resolves to (the symlink's target), which a write replaces.
    pub(crate) target: PathBuf,
    /// The locked descriptor.
    pub(crate) file: File,
    /// The file as it was when locked.
    pub(crate) meta: Metadata,
}

impl LockedSave {
    /// Opens `path`, checks it, and locks it, waiting up to the limit. When another writer replaced the
    /// file between the open and the lock, the new file is opened and locked instead.
    pub(crate) fn acquire(path: &Path, limits: &Limits) -> Result<LockedSave, SaveError> {
        let start = Instant::now();
        let io = |action, source| SaveError::Io {
            action,
            what: SAVE_FILE,
            path: path.to_owned(),
            source,
        };
        loop {
            let (file, _) = open_regular(path, SAVE_FILE)?;
            wait_for_lock(&file, path, start, limits)?;
            let target = std::fs::canonicalize(path).map_err(|e| io("open", e))?;
            let meta = file.metadata().map_err(|e| io("read", e))?;
            let now = match std::fs::metadata(&target) {
                Ok(now) => now,
                // Replaced and removed between the open and the lock: open it again.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io("open", e)),
            };
            if (now.dev(), now.ino()) != (meta.dev(), meta.ino()) {
                // Another writer renamed a new file over the path while this one waited: the locked file
                // is no longer the save. Lock the new one, within the same wait.
                let waited = start.elapsed();
                if waited >= limits.lock_wait {
                    return Err(SaveError::Locked {
                        path: path.to_owned(),
                        waited_ms: waited.as_millis(),
                    });
                }
                continue;
            }
            check_writable(&target, &meta)?;
            return Ok(LockedSave {
                path: path.to_owned(),
                target,
                file,
                meta,
            });
        }
    }

    pub(crate) fn read(&self, limits: &Limits) -> Result<Vec<u8>, SaveError> {
        read_open(&self.file, &self.meta, &self.path, SAVE_FILE, limits)
    }

    /// Replaces the locked file with `bytes`: a temporary file in the target's directory with the
    /// target's permissions, written and synced, renamed over the target after checking that nothing
    /// changed the file meanwhile; then the directory is synced.
    pub(crate) fn replace(self, bytes: &[u8]) -> Result<(), SaveError> {
        let io = |source| SaveError::Io {
            action: "write",
            what: SAVE_FILE,
            path: self.path.clone(),
            source,
        };
        let dir = parent_of(&self.target);
        let tmp = write_temporary(dir, bytes, Some(&self.meta)).map_err(io)?;
        let fd_now = self.file.metadata().map_err(io)?;
        let path_now = std::fs::metadata(&self.target).map_err(io)?;
        let same = |m: &Metadata| {
            (m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec())
                == (
                    self.meta.dev(),
                    self.meta.ino(),
                    self.meta.len(),
                    self.meta.mtime(),
                    self.meta.mtime_nsec(),
                )
        };
        if !same(&fd_now) || !same(&path_now) {
            return Err(SaveError::Changed { path: self.path });
        }
        tmp.persist(&self.target).map_err(|e| io(e.error))?;
        sync_dir(dir).map_err(io)?;
        sweep_stale_temporaries(dir);
        Ok(())
    }
}

/// Refuses a save that has no write permission bit (even for a user, such as root, whom the system would
/// let write), that this process may not write, or that has several hard links.
pub(crate) fn check_writable(target: &Path, meta: &Metadata) -> Result<(), SaveError> {
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o222 == 0 || rustix::fs::access(target, rustix::fs::Access::WRITE_OK).is_err() {
        return Err(SaveError::ReadOnly {
            path: target.to_owned(),
            mode,
            reason: ReadOnlyReason::of(meta),
        });
    }
    if meta.nlink() > 1 {
        return Err(SaveError::HardLinked {
            path: target.to_owned(),
            links: meta.nlink(),
        });
    }
    Ok(())
}

/// Takes the exclusive lock of `file`, retrying while another process holds it, until `limits.lock_wait`
/// after `start`.
pub(crate) fn wait_for_lock(
    file: &File,
    path: &Path,
    start: Instant,
    limits: &Limits,
) -> Result<(), SaveError> {
    use rustix::fs::FlockOperation;
    let mut pause = Duration::from_millis(1);
    loop {
        match rustix::fs::flock(file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(()),
            Err(e) if e == rustix::io::Errno::WOULDBLOCK || e == rustix::io::Errno::INTR => {}
            Err(e) => {
                return Err(SaveError::Io {
                    action: "lock",
                    what: SAVE_FILE,
                    path: path.to_owned(),
                    source: e.into(),
                });
            }
        }
        let waited = start.elapsed();
        if waited >= limits.lock_wait {
            return Err(SaveError::Locked {
                path: path.to_owned(),
                waited_ms: waited.as_millis(),
            });
        }
        std::thread::sleep(pause.min(limits.lock_wait - waited));
        pause = (pause * 2).min(Duration::from_millis(50));
    }
}

/// Replaces `path` with `bytes`: under the lock of the existing file ([`update`]'s checks), or as a new
/// file.
pub(crate) fn write_replacing(path: &Path, bytes: &[u8], limits: &Limits) -> Result<(), SaveError> {
    check_size(path, bytes, limits)?;
    if std::fs::symlink_metadata(path).is_ok() {
        return LockedSave::acquire(path, limits)?.replace(bytes);
    }
    let io = |source| SaveError::Io {
        action: "write",
        what: SAVE_FILE,
        path: path.to_owned(),
        source,
    };
    let dir = parent_of(path);
    let tmp = write_temporary(dir, bytes, None).map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    sync_dir(dir).map_err(io)?;
    sweep_stale_temporaries(dir);
    Ok(())
}

/// Refuses to write a save larger than the readers' limit: every save written is one every command reads.
pub(crate) fn check_size(path: &Path, bytes: &[u8], limits: &Limits) -> Result<(), SaveError> {
    let size = bytes.len() as u64;
    if size > limits.max_file_bytes {
        return Err(SaveError::TooLargeToWrite {
            path: path.to_owned(),
            size,
            limit: limits.max_file_bytes,
        });
    }
    Ok(())
}

pub(crate) fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// A synced temporary file in `dir` holding `bytes`, named after this process (see
/// [`sweep_stale_temporaries`]), with the permissions (and, when allowed, owner) of `like`.
pub(crate) fn write_temporary(
    dir: &Path,
    bytes: &[u8],
    like: Option<&Metadata>,
) -> std::io::Result<tempfile::NamedTempFile> {
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!("{TEMPORARY_PREFIX}{}-", std::process::id()))
        .suffix(".tmp")
        .tempfile_in(dir)?;
    tmp.write_all(bytes)?;
    if let Some(meta) = like {
        // Keep the owner when this process may (root rewriting a user's save); otherwise the new file is
        // this user's, as any rewrite by them would be.
        let _ = rustix::fs::fchown(
            tmp.as_file(),
            Some(rustix::fs::Uid::from_raw(meta.uid())),
            Some(rustix::fs::Gid::from_raw(meta.gid())),
        );
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(
                meta.permissions().mode() & 0o777,
            ))?;
    }
    tmp.as_file().sync_all()?;
    Ok(tmp)
}

/// Makes a rename in `dir` durable.
pub(crate) fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

/// Removes the temporary files of save writers that are gone: `.coffer-save-<pid>-<random>.tmp` files in
/// `dir` whose pid is not a running process and that are older than [`STALE_TEMPORARY_AGE`], and
/// temporary files of older coffer versions (`.coffer-save-<random>.tmp`, no pid) older than an hour.
/// Best effort: a file that cannot be removed stays. Returns how many were removed. Every write of a save
/// calls it on the save's directory.
pub fn sweep_stale_temporaries(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let Some(middle) = name
            .strip_prefix(TEMPORARY_PREFIX)
            .and_then(|n| n.strip_suffix(".tmp"))
        else {
            continue;
        };
        let pid = middle
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<i32>().ok());
        let max_age = match pid {
            Some(pid) if !process_is_gone(pid) => continue,
            Some(_) => STALE_TEMPORARY_AGE,
            None => Duration::from_secs(3600),
        };
        let Ok(meta) = entry.metadata() else { continue };
        if !meta.is_file() {
            continue;
        }
        let age = meta
            .modified()
            .ok()
            .and_then(|m| now.duration_since(m).ok())
            .unwrap_or_default();
        if age >= max_age && std::fs::remove_file(entry.path()).is_ok() {
            tracing::debug!(target: "coffer_host::save", file = %entry.path().display(), "removed a stale temporary save file");
            removed += 1;
        }
    }
    removed
}

/// Whether no process has id `pid` (a process of another user counts as running).
pub(crate) fn process_is_gone(pid: i32) -> bool {
    if pid == i32::try_from(std::process::id()).unwrap_or(0) {
        return false;
    }
    match rustix::process::Pid::from_raw(pid) {
        Some(pid) => rustix::process::test_kill_process(pid) == Err(rustix::io::Errno::SRCH),
        None => false,
    }
}

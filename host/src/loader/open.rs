//! Loading one library file: checked, hashed and pinned, opened through its descriptor, its declaration
//! followed, its rulesets wrapped as [`DynRuleset`]s.

use coffer_core::DynRuleset;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use crate::loader::calls::{Call, InCall, Subject};
use crate::loader::declaration::{Segments, check_declaration, declaration, segments_of};
use crate::loader::error::{LoadError, PathProblem};
use crate::loader::library::{AFTER_HASH, LOADED, Library};
use crate::loader::lock::{LockFile, check_pin, sha256_of};
use crate::loader::paths::{
    PathKind, check_path_as, check_target, declaration_symbol, file_identity,
};
use crate::loader::runtime_ruleset::RuntimeRuleset;
use crate::loader::watchdog::install_guards;

/// Opens a plugin file (a library or a module) under the path policy: its resolved path, the open file
/// and its metadata, checked to be a regular file obeying the policy itself.
///
/// # Errors
/// [`LoadError::Io`], or the path policy's [`LoadError::UnsafePath`] / [`LoadError::WorldWritable`].
pub(crate) fn open_checked(path: &Path) -> Result<(PathBuf, File, std::fs::Metadata), LoadError> {
    let io = |e| LoadError::Io {
        path: path.to_owned(),
        source: e,
    };
    let canonical = check_path_as(path, PathKind::File)?;
    let file = File::open(&canonical).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: canonical,
            problem: PathProblem::NotAFile,
        });
    }
    check_target(path, &meta)?;
    Ok((canonical, file, meta))
}

/// Loads one library file and returns its rulesets, wrapped as [`DynRuleset`]s (see the module docs for
/// every check). Loading the same file again returns the already loaded library's rulesets.
///
/// # Errors
/// The [`LoadError`] of the first failed check; the library is then not used.
pub fn load_library(
    path: &Path,
    lock: Option<&LockFile>,
) -> Result<Vec<Arc<dyn DynRuleset>>, LoadError> {
    let io = |e| LoadError::Io {
        path: path.to_owned(),
        source: e,
    };
    // Opened once: the checks below, the hash and the load all see this file, whatever the path names
    // by then.
    let (canonical, mut file, meta) = open_checked(path)?;
    let identity = file_identity(&meta, &canonical);
    if let Some(lock) = lock {
        if !cfg!(target_os = "linux") {
            return Err(LoadError::PinningUnsupported {
                path: path.to_owned(),
            });
        }
        let actual = sha256_of(&mut file).map_err(io)?;
        check_pin(path, lock, actual)?;
    }
    if let Some(hook) = AFTER_HASH
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
    {
        hook(path);
    }
    let symbol = declaration_symbol(path).ok_or_else(|| LoadError::BadFileName {
        path: path.to_owned(),
    })?;

    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(lib) = loaded.iter().find(|l| l.file == identity) {
        let lib: &'static Library = lib;
        drop(loaded);
        lib.init_logging()?;
        return RuntimeRuleset::all_of(lib);
    }
    install_guards();
    let subject = Subject::leak(&canonical);
    // Leaked at once: a library is never unloaded, even one that fails the checks below (its initialisers
    // ran; see the module docs).
    let (lib, segments) = open(path, file, subject)?;
    let lib: &'static libloading::Library = Box::leak(Box::new(lib));
    let decl = declaration(path, lib, &symbol, &segments)?;
    let vt = check_declaration(path, decl, &segments)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let library: &'static Library = Box::leak(Box::new(Library {
        path: canonical,
        file: identity,
        name,
        subject,
        vt,
        poisoned: AtomicBool::new(false),
        first_panic: Mutex::new(None),
        _lib: lib,
    }));
    loaded.push(library);
    drop(loaded);
    library.init_logging()?;
    RuntimeRuleset::all_of(library)
}

/// Loads the open `file` (on Linux through `/proc/self/fd/N`: the very file checked and hashed, whatever
/// its path names now) and finds its segments. Once loaded, the descriptor stays open for the life of the
/// process, like the library: the C library knows a loaded library by the name it was opened with, so
/// `/proc/self/fd/N` must never name another file.
#[cfg(unix)]
pub(crate) fn open(
    path: &Path,
    file: File,
    subject: &'static Subject,
) -> Result<(libloading::Library, Segments), LoadError> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    let not_a_library = |e: libloading::Error| LoadError::NotALibrary {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let target = if cfg!(target_os = "linux") {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()))
    } else {
        // No way to load an open file: the path, checked just before (pinning was refused above).
        std::fs::canonicalize(path).map_err(|e| LoadError::Io {
            path: path.to_owned(),
            source: e,
        })?
    };
    let lib = {
        let _in_call = InCall::enter(subject, Call::Open);
        // SAFETY: loading runs the library's initialisers; the user named this directory as trusted plugin
        // code, and the file passed the path policy and lock-file checks. RTLD_NOW resolves every symbol
        // now, so a broken library fails here rather than at a later call.
        unsafe { Library::open(Some(&target), RTLD_NOW | RTLD_LOCAL) }.map_err(not_a_library)?
    };
    // Kept open for good (see above); a few descriptors, one per library loaded.
    let _ = std::os::fd::IntoRawFd::into_raw_fd(file);
    let handle = lib.into_raw();
    let segments = segments_of(handle);
    // SAFETY: the handle `into_raw` just gave back, taken back once.
    let lib = unsafe { Library::from_raw(handle) };
    Ok((lib.into(), segments))
}

#[cfg(not(unix))]
pub(crate) fn open(
    path: &Path,
    _file: File,
    subject: &'static Subject,
) -> Result<(libloading::Library, Segments), LoadError> {
    let _in_call = InCall::enter(subject, Call::Open);
    // SAFETY: as on Unix: trusted, checked plugin code.
    unsafe { libloading::Library::new(path) }
        .map(|lib| (lib, Segments::default()))
        .map_err(|e| LoadError::NotALibrary {
            path: path.to_owned(),
            reason: e.to_string(),
        })
}

//! Loads ruleset plugins at runtime (`libloading`) and wraps them in the same [`DynRuleset`] / [`DynGame`]
//! traits as statically linked rulesets, so nothing above this module can tell them apart.
//!
//! `docs/SECURITY.md` ("Native plugins and the loader") says what this module guarantees and what it
//! cannot: a native library runs with the host's rights, and cannot be sandboxed or preempted in-process.
//!
//! # Where plugins come from
//! Only from directories the user names: `--plugin-dir DIR` (repeatable) and [`PLUGIN_PATH_ENV`]
//! (`COFFER_PLUGIN_PATH`, a list in the platform's `PATH` syntax, see [`plugin_dirs_from_env`]). In each
//! directory every file ending in the platform's library suffix (`.so`, `.dylib`, `.dll`) is a candidate;
//! other files are ignored. A directory is read once however often it is named, and a file reached
//! through two names (a symbolic or hard link) is loaded once.
//!
//! # What is checked, in order, before anything of the library runs beyond its loader constructors
//! 1. the path policy ([`check_path`], like sshd's `StrictModes`): symbolic links are resolved and every
//!    component of the resolved path, up to the root, is owned by root or the current user and writable by
//!    no one else (a directory writable by others is accepted above the file only with the sticky bit,
//!    as `/tmp`); the plugin directory, the library and the lock file themselves are writable by no one
//!    else at all;
//! 2. the library is opened once; that descriptor is checked to be a regular file obeying the same rule,
//!    (with a [`LockFile`]) hashed, and then loaded itself (`/proc/self/fd/N` on Linux), so the bytes
//!    mapped are the bytes hashed even if the path is swapped meanwhile; where a descriptor cannot be
//!    loaded, pinning is refused ([`LoadError::PinningUnsupported`]);
//! 3. it loads as a shared library;
//! 4. it exports the declaration symbol `coffer_plugin_<crate name>`, derived from the file name
//!    (`libcoffer_charges.so` → `coffer_plugin_coffer_charges`);
//! 5. everything the declaration points to is checked before it is followed: the declaration is aligned
//!    and inside the library's readable segments, its strings are non-null, at most
//!    [`MAX_VERSION_LEN`] bytes and inside them too, its vtable is non-null, aligned and inside them, and
//!    every function pointer of the vtable is inside the library's executable segments (on Linux, from
//!    the library's program headers; elsewhere only null and alignment are checked);
//! 6. the declaration's magic number, ABI version and size match this host's;
//! 7. its core version is semver-compatible with this host's ([`abi::core_compatible`]), its rustc version
//!    is this host's and its panic strategy is `unwind` like this host's.
//!
//! Each failure is its own [`LoadError`], naming the file and both sides' values; that library is skipped
//! and the others still load. A library whose initialisers crash the process cannot be refused in-process:
//! [`check_dir`] probes each library of a directory in a child process and names the one that crashes.
//!
//! # Lock file
//! A text file in the format `sha256sum` writes: one line per allowed library,
//! `<64 lowercase hex digits>  <file name>` (blank lines and lines starting with `#` are ignored). Generate
//! it with `sha256sum *.so > coffer-plugins.lock` in the plugin directory. With a lock file, a library whose
//! file name is not listed, or whose hash differs, is refused; the message shows both hashes. The lock
//! file obeys the path policy too.
//!
//! # Panics, failures and poisoning
//! Every plugin call returns a status; a plugin that panicked is marked poisoned: the game it was applying
//! to is as it was before the action (the plugin rebuilds it, see `coffer_core::abi`), and every later call
//! into that library returns [`ActionError::Poisoned`] / [`SetupError::Poisoned`]. A call whose trait
//! method has no error (legal actions, outcome, state hash, views) answers a neutral value and the game
//! records the failure, naming the library and the call: [`DynGame::failure`] reports it, and the host
//! turns it into an error ([`crate::HostError::Plugin`]) instead of a wrong answer. Two read-only calls
//! still reach a poisoned library so the games can be inspected and compared: [`DynGame::state_hash`] and
//! freeing a game. Other libraries, and static rulesets, keep running.
//!
//! # Deadline and process faults
//! Native code cannot be interrupted safely, so a plugin call that never returns cannot be cancelled.
//! Every call into a library (its initialisers included) runs under a deadline ([`DEFAULT_DEADLINE`], set
//! by [`DEADLINE_ENV`] or [`set_call_deadline`]); a watchdog thread ends the process with
//! [`EXIT_DEADLINE`] past it, after naming the library and the call on stderr. On Linux, a plugin that
//! crashes during a call (`SIGSEGV`, `SIGBUS`, `SIGABRT`, `SIGILL`, `SIGFPE`) ends the process with
//! [`EXIT_CRASHED`] and one that calls `exit` during a call with [`EXIT_EXITED`], each after a message
//! naming the library and the call (written with async-signal-safe `write`s of text prepared before the
//! call). Outside plugin calls, the signals reach the handlers installed before (Rust's own).
//!
//! # Never unloaded
//! Loaded libraries are leaked on purpose and never `dlclose`d: thread-local destructors registered by the
//! plugin's `std` would run unmapped code at thread exit, the plugin's `tracing` dispatcher and `inventory`
//! registry are `'static`, and every game handle and function pointer the host holds points into the
//! library. A library loaded twice (same file) is loaded once and shared.
#![allow(unsafe_code)]

use crate::registry::{Origin, Registry, RegistryError};
use coffer_core::abi::{
    self, Acting, Buf, Declaration, GameHandle, Header, LogSink, StrRef, VTable,
};
use coffer_core::{
    ActionError, ActionReport, Description, DynGame, DynRuleset, Event, EventsFor, Format, GameRng,
    Outcome, Owner, PlayoutError, Progress, ResourceView, Setup, SetupError, StateHash, Table,
    Violation,
};
use sha2::{Digest, Sha256};
use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsString, c_void};
use std::fmt::{self, Write as _};
use std::fs::File;
use std::io::{Read as _, Seek as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// The environment variable listing plugin directories (`PATH` syntax).
pub const PLUGIN_PATH_ENV: &str = "COFFER_PLUGIN_PATH";

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

/// The environment variable that makes a process a probe of one library ([`probe_child_main`]).
pub const PROBE_ENV: &str = "COFFER_PROBE_LIBRARY";

/// With [`PROBE_ENV`]: the lock file the probe pins the library with.
pub const PROBE_LOCK_ENV: &str = "COFFER_PROBE_LOCK";

/// Longest version string read from a declaration.
pub const MAX_VERSION_LEN: usize = 256;

/// Why a plugin directory or library was refused. Each names the path and, for a mismatch, both sides.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The directory or file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// A plugin directory is not a directory.
    #[error("plugin directory {} is not a directory", path.display())]
    NotADirectory {
        /// The path.
        path: PathBuf,
    },
    /// Anyone may write to the directory or file, so anyone could replace the code the host runs.
    #[error("refusing {}: it is world-writable (mode {mode:o}); remove write access for others", path.display())]
    WorldWritable {
        /// The directory or file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A component of the resolved path (the file, or a directory above it) may be changed by someone
    /// other than root and the current user (see [`check_path`]).
    #[error("refusing {}: {} {problem}", path.display(), component.display())]
    UnsafePath {
        /// The path as given.
        path: PathBuf,
        /// The offending component of the resolved path.
        component: PathBuf,
        /// What is wrong with it.
        problem: PathProblem,
    },
    /// A lock file was given on a platform where the loader cannot load the very file it hashed.
    #[error("refusing {}: pinning by lock file needs loading a library from an open file, which this \
             platform cannot do; load without a lock file only from directories only you can write to",
            path.display())]
    PinningUnsupported {
        /// The library.
        path: PathBuf,
    },
    /// The plugin call deadline set in the environment is not a number of seconds in range.
    #[error("{DEADLINE_ENV} is '{value}': expected a number of seconds from {} to {} (for example 30 or 0.5); \
             using {} s", MIN_DEADLINE.as_secs_f64(), MAX_DEADLINE.as_secs(), DEFAULT_DEADLINE.as_secs())]
    BadDeadline {
        /// The value found.
        value: String,
    },
    /// The lock file could not be read or has a malformed line.
    #[error("lock file {}, line {line}: {reason}", path.display())]
    LockFile {
        /// The lock file.
        path: PathBuf,
        /// The line (1-based; 0 when the file could not be read).
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A lock file is in use and does not list this library.
    #[error("refusing {}: not pinned in lock file {} (its sha256 is {actual})", path.display(), lock.display())]
    Unpinned {
        /// The library.
        path: PathBuf,
        /// The lock file.
        lock: PathBuf,
        /// The library's hash, to add to the lock file if it is trusted.
        actual: String,
    },
    /// The library's SHA-256 differs from the pinned one.
    #[error("refusing {}: sha256 mismatch: lock file pins {expected}, the file has {actual}", path.display())]
    HashMismatch {
        /// The library.
        path: PathBuf,
        /// The pinned hash.
        expected: String,
        /// The file's hash.
        actual: String,
    },
    /// The file name does not give a declaration symbol.
    #[error("refusing {}: cannot derive the plugin's crate name from the file name", path.display())]
    BadFileName {
        /// The file.
        path: PathBuf,
    },
    /// The file is not a loadable shared library.
    #[error("{} is not a loadable library: {reason}", path.display())]
    NotALibrary {
        /// The file.
        path: PathBuf,
        /// The system loader's message.
        reason: String,
    },
    /// The library exports no declaration under the expected name.
    #[error("{} is not a Coffer plugin: it exports no symbol '{symbol}' (a plugin crate invokes \
             coffer_core::plugin! once, and the library's file name must be its crate name)", path.display())]
    NoDeclaration {
        /// The library.
        path: PathBuf,
        /// The symbol looked for.
        symbol: String,
    },
    /// The declaration does not start with the magic number.
    #[error("{}: '{symbol}' is not a Coffer declaration (magic {found:#018x}, expected {expected:#018x})", path.display())]
    BadMagic {
        /// The library.
        path: PathBuf,
        /// The symbol.
        symbol: String,
        /// What was found.
        found: u64,
        /// What this host expects.
        expected: u64,
    },
    /// The plugin speaks another ABI version.
    #[error("{}: plugin ABI version {plugin}, this host speaks ABI version {host}; rebuild the plugin \
             against this host's coffer-core", path.display())]
    AbiVersion {
        /// The library.
        path: PathBuf,
        /// The plugin's ABI version.
        plugin: u32,
        /// The host's.
        host: u32,
    },
    /// The declaration's size differs although the ABI version matches.
    #[error("{}: declaration size {plugin} bytes, this host expects {host}", path.display())]
    DeclarationSize {
        /// The library.
        path: PathBuf,
        /// The plugin's.
        plugin: u32,
        /// The host's.
        host: u32,
    },
    /// The plugin was built against an incompatible coffer-core.
    #[error("{}: plugin built with coffer-core {plugin}, this host has coffer-core {host} (not semver-compatible)",
            path.display())]
    CoreVersion {
        /// The library.
        path: PathBuf,
        /// The plugin's core version.
        plugin: String,
        /// The host's.
        host: String,
    },
    /// The plugin was built by another compiler.
    #[error("{}: plugin built with {plugin}, this host with {host}; rebuild the plugin with the host's toolchain",
            path.display())]
    RustcVersion {
        /// The library.
        path: PathBuf,
        /// The plugin's rustc.
        plugin: String,
        /// The host's.
        host: String,
    },
    /// The plugin aborts on panic (or the sides differ), so a panic could not be contained.
    #[error("{}: plugin panic strategy '{plugin}', this host's is '{host}'; plugins must be built with panic = \"unwind\"",
            path.display())]
    PanicStrategy {
        /// The library.
        path: PathBuf,
        /// The plugin's.
        plugin: String,
        /// The host's.
        host: String,
    },
    /// A declaration, or something it points to, is not what a Coffer plugin exports (a null, misaligned
    /// or stray pointer, an overlong or non-UTF-8 string, a function pointer outside the library's code).
    /// Nothing it points to was followed.
    #[error("{}: {field} {reason}; the library is not a sound Coffer plugin (rebuild it with \
             coffer_core::plugin!)", path.display())]
    BadDeclaration {
        /// The library.
        path: PathBuf,
        /// What is wrong: `declaration`, a field (`vtable`, `core_version`) or a vtable entry
        /// (`vtable entry apply_json`).
        field: String,
        /// How, with the offending value.
        reason: String,
    },
    /// The plugin refused or panicked while initialising or describing its rulesets.
    #[error("{}: plugin failed while {during}: {message}", path.display())]
    Plugin {
        /// The library.
        path: PathBuf,
        /// What the host asked.
        during: &'static str,
        /// The plugin's message.
        message: String,
    },
    /// A ruleset of the library could not be registered (e.g. its `id@version` is already registered).
    #[error(transparent)]
    Registry(#[from] RegistryError),
}

/// What [`Registry::load_dirs`] did: what it registered and what it skipped, and why.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// Registered rulesets: `id@version` and the library.
    pub loaded: Vec<(String, PathBuf)>,
    /// Every refused directory, library or ruleset, in the order met.
    pub errors: Vec<LoadError>,
}

/// The largest lock file read, in bytes (1 MiB: some ten thousand pins).
pub const MAX_LOCK_FILE: u64 = 1 << 20;

/// SHA-256 pins of allowed libraries (see the module docs for the format).
#[derive(Clone, Debug, Default)]
pub struct LockFile {
    path: PathBuf,
    pins: BTreeMap<String, String>,
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

/// The SHA-256 of a file, as 64 lowercase hex digits.
///
/// # Errors
/// The I/O error reading it.
pub fn sha256_file(path: &Path) -> std::io::Result<String> {
    sha256_of(&mut File::open(path)?)
}

/// The SHA-256 of everything read from `file`, from its start.
fn sha256_of(file: &mut File) -> std::io::Result<String> {
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

/// The plugin directories listed in [`PLUGIN_PATH_ENV`] (empty entries skipped).
pub fn plugin_dirs_from_env() -> Vec<PathBuf> {
    std::env::var_os(PLUGIN_PATH_ENV)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The declaration symbol expected in a library file: `coffer_plugin_<crate name>`.
///
/// ```
/// use std::path::Path;
/// let file = format!("{}coffer_charges{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
/// assert_eq!(coffer_host::loader::declaration_symbol(Path::new(&file)).unwrap(), "coffer_plugin_coffer_charges");
/// ```
pub fn declaration_symbol(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(std::env::consts::DLL_SUFFIX)?;
    let stem = stem
        .strip_prefix(std::env::consts::DLL_PREFIX)
        .unwrap_or(stem);
    let valid = !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    valid.then(|| format!("{}{}", abi::SYMBOL_PREFIX, stem.replace('-', "_")))
}

fn is_library_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        n.ends_with(std::env::consts::DLL_SUFFIX) && n.len() > std::env::consts::DLL_SUFFIX.len()
    })
}

/// What is wrong with a component of a path (see [`check_path`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathProblem {
    /// Owned by neither root nor the current user.
    Owner {
        /// Its owner.
        uid: u32,
        /// The current user.
        expected: u32,
    },
    /// Writable by everyone, without the sticky bit that would keep others from replacing its entries
    /// (or, for the plugin directory, the file or the lock file itself: writable by everyone at all).
    WorldWritable {
        /// Its permission bits.
        mode: u32,
    },
    /// Writable by a group other than the current user's own.
    GroupWritable {
        /// Its permission bits.
        mode: u32,
        /// Its group.
        gid: u32,
        /// The current user's group.
        expected: u32,
    },
    /// The library or lock file is not a regular file (a directory, a FIFO, a device).
    NotAFile,
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathProblem::Owner { uid, expected } => write!(
                f,
                "is owned by user {uid}, neither root nor the current user {expected}, who could replace \
                 what the host runs; chown it or choose another path"
            ),
            PathProblem::WorldWritable { mode } => write!(
                f,
                "is writable by everyone (mode {mode:o}, no sticky bit where it would help), so anyone could \
                 replace what the host runs; remove write access for others (chmod o-w)"
            ),
            PathProblem::GroupWritable {
                mode,
                gid,
                expected,
            } => write!(
                f,
                "is writable by group {gid} (mode {mode:o}), not the current user's group {expected}; remove \
                 write access for the group (chmod g-w)"
            ),
            PathProblem::NotAFile => f.write_str("is not a regular file"),
        }
    }
}

/// What a path checked by [`check_path`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathKind {
    /// A directory the loader lists: nobody else may add files to it, sticky bit or not.
    PluginDir,
    /// A library or lock file.
    File,
}

/// Checks a path like sshd's `StrictModes`: resolves symbolic links, then checks the resolved file or
/// directory and every directory above it up to the root. Each must be owned by root or the current user
/// and writable by nobody else: not by everyone, nor by a group other than the user's own. A directory
/// above the file that is writable by others is accepted only with the sticky bit (as `/tmp`), which keeps
/// others from renaming or removing what they do not own; the file or plugin directory itself never is.
/// Returns the resolved path.
///
/// # Errors
/// [`LoadError::Io`] if the path cannot be resolved, [`LoadError::WorldWritable`] for a world-writable
/// file or plugin directory itself, [`LoadError::UnsafePath`] naming the first offending component.
pub fn check_path(path: &Path) -> Result<PathBuf, LoadError> {
    let kind = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => PathKind::PluginDir,
        _ => PathKind::File,
    };
    check_path_as(path, kind)
}

fn check_path_as(path: &Path, kind: PathKind) -> Result<PathBuf, LoadError> {
    let io = |e| LoadError::Io {
        path: path.to_owned(),
        source: e,
    };
    let canonical = std::fs::canonicalize(path).map_err(io)?;
    let meta = std::fs::metadata(&canonical).map_err(io)?;
    if kind == PathKind::File && !meta.is_file() {
        return Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: canonical,
            problem: PathProblem::NotAFile,
        });
    }
    check_target(path, &meta)?;
    let mut dir = canonical.parent();
    while let Some(d) = dir {
        let meta = std::fs::metadata(d).map_err(|e| LoadError::Io {
            path: d.to_owned(),
            source: e,
        })?;
        if let Some(problem) = ancestor_problem(&meta) {
            return Err(LoadError::UnsafePath {
                path: path.to_owned(),
                component: d.to_owned(),
                problem,
            });
        }
        dir = d.parent();
    }
    Ok(canonical)
}

/// Who owns a path component and who may write to it.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
struct Ownership {
    /// Permission bits (`0o7777`).
    mode: u32,
    uid: u32,
    gid: u32,
}

/// The user running the host: their user and group.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
struct User {
    uid: u32,
    gid: u32,
}

/// What is wrong with one component for `me`: the file or plugin directory itself (`above` false) may be
/// written by nobody but its owner (root or `me`) and `me`'s group; a directory above it may also be
/// writable by others if it has the sticky bit.
#[cfg_attr(not(unix), allow(dead_code))]
fn component_problem(c: Ownership, me: User, above: bool) -> Option<PathProblem> {
    let sticky_above = above && c.mode & 0o1000 != 0;
    if c.mode & 0o002 != 0 && !sticky_above {
        return Some(PathProblem::WorldWritable { mode: c.mode });
    }
    if c.uid != 0 && c.uid != me.uid {
        return Some(PathProblem::Owner {
            uid: c.uid,
            expected: me.uid,
        });
    }
    if c.mode & 0o020 != 0 && c.gid != me.gid && !sticky_above {
        return Some(PathProblem::GroupWritable {
            mode: c.mode,
            gid: c.gid,
            expected: me.gid,
        });
    }
    None
}

#[cfg(unix)]
fn ownership(meta: &std::fs::Metadata) -> Ownership {
    use std::os::unix::fs::MetadataExt;
    Ownership {
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
    }
}

#[cfg(unix)]
fn current_user() -> User {
    User {
        uid: sys::uid(),
        gid: sys::gid(),
    }
}

/// The file or plugin directory itself (or an open file's metadata): owned by root or the current user,
/// writable by nobody else.
#[cfg(unix)]
fn check_target(path: &Path, meta: &std::fs::Metadata) -> Result<(), LoadError> {
    match component_problem(ownership(meta), current_user(), false) {
        None => Ok(()),
        Some(PathProblem::WorldWritable { mode }) => Err(LoadError::WorldWritable {
            path: path.to_owned(),
            mode,
        }),
        Some(problem) => Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: path.to_owned(),
            problem,
        }),
    }
}

#[cfg(not(unix))]
fn check_target(_: &Path, _: &std::fs::Metadata) -> Result<(), LoadError> {
    Ok(())
}

#[cfg(unix)]
fn ancestor_problem(meta: &std::fs::Metadata) -> Option<PathProblem> {
    component_problem(ownership(meta), current_user(), true)
}

#[cfg(not(unix))]
fn ancestor_problem(_: &std::fs::Metadata) -> Option<PathProblem> {
    None
}

/// The few C library functions the loader needs beyond `libloading`, declared by hand (the host links the
/// C library anyway). Layouts are those of Linux on 64-bit x86 and Arm, the platforms the crash handlers
/// and segment checks are built for; elsewhere only `getuid`/`getgid` are used.
#[cfg(unix)]
mod sys {
    use std::ffi::{c_int, c_void};

    unsafe extern "C" {
        fn getuid() -> u32;
        fn getgid() -> u32;
    }

    /// The real user id of this process.
    pub fn uid() -> u32 {
        // SAFETY: getuid has no preconditions and cannot fail.
        unsafe { getuid() }
    }

    /// The real group id of this process.
    pub fn gid() -> u32 {
        // SAFETY: getgid has no preconditions and cannot fail.
        unsafe { getgid() }
    }

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    pub use linux::*;

    #[cfg(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))]
    mod linux {
        use super::{c_int, c_void};

        /// `struct sigaction` of the Linux C libraries (glibc, musl) on x86-64 and AArch64.
        #[repr(C)]
        #[derive(Clone, Copy)]
        pub struct SigAction {
            pub handler: usize,
            pub mask: [u64; 16],
            pub flags: c_int,
            pub restorer: usize,
        }

        /// `struct dl_phdr_info` (the fields read).
        #[repr(C)]
        pub struct DlPhdrInfo {
            pub addr: usize,
            pub name: *const u8,
            pub phdr: *const Elf64Phdr,
            pub phnum: u16,
        }

        /// `Elf64_Phdr`.
        #[repr(C)]
        pub struct Elf64Phdr {
            pub p_type: u32,
            pub p_flags: u32,
            pub p_offset: u64,
            pub p_vaddr: u64,
            pub p_paddr: u64,
            pub p_filesz: u64,
            pub p_memsz: u64,
            pub p_align: u64,
        }

        /// `struct link_map` (the first field read).
        #[repr(C)]
        pub struct LinkMap {
            pub addr: usize,
        }

        pub const PT_LOAD: u32 = 1;
        pub const PF_X: u32 = 1;
        pub const PF_R: u32 = 4;
        pub const RTLD_DI_LINKMAP: c_int = 2;
        pub const SA_SIGINFO: c_int = 4;
        pub const SA_ONSTACK: c_int = 0x0800_0000;
        pub const SIG_DFL: usize = 0;
        pub const SIG_IGN: usize = 1;
        pub const SIGILL: c_int = 4;
        pub const SIGABRT: c_int = 6;
        pub const SIGBUS: c_int = 7;
        pub const SIGFPE: c_int = 8;
        pub const SIGSEGV: c_int = 11;

        unsafe extern "C" {
            pub fn dlinfo(handle: *mut c_void, request: c_int, info: *mut c_void) -> c_int;
            pub fn dl_iterate_phdr(
                callback: extern "C" fn(*mut DlPhdrInfo, usize, *mut c_void) -> c_int,
                data: *mut c_void,
            ) -> c_int;
            pub fn sigaction(signal: c_int, new: *const SigAction, old: *mut SigAction) -> c_int;
            pub fn sigemptyset(set: *mut [u64; 16]) -> c_int;
            pub fn raise(signal: c_int) -> c_int;
            pub fn write(fd: c_int, buf: *const c_void, count: usize) -> isize;
            pub fn _exit(status: c_int) -> !;
            pub fn atexit(function: extern "C" fn()) -> c_int;
        }
    }
}

/// What a plugin call is about, for the messages of the watchdog and the crash handlers: the library's
/// path as bytes, prepared before any call (a signal handler may only write existing bytes). Leaked: one
/// per library, like the library itself.
struct Subject {
    path: Box<[u8]>,
}

impl Subject {
    fn leak(path: &Path) -> &'static Subject {
        Box::leak(Box::new(Subject {
            path: path.as_os_str().as_encoded_bytes().into(),
        }))
    }

    fn display(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }
}

/// Every entry point of a library, named in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Call {
    Open,
    Init,
    RulesetCount,
    Describe,
    NewGame,
    Restore,
    FreeGame,
    FreeBuf,
    Players,
    LegalActions,
    ToAct,
    Acting,
    LegalActionJson,
    ApplyLegal,
    ApplyLegalThenActing,
    Playout,
    ApplyJson,
    ApplyJsonReporting,
    Events,
    StateHash,
    Snapshot,
    Outcome,
    Table,
    Resources,
    CheckInvariants,
    CloneGame,
}

/// The names of [`Call`]s, by discriminant: `Open` then the [`VTable`]'s fields in order.
const CALL_NAMES: [&str; 26] = [
    "loading (its initialisers)",
    "init",
    "ruleset_count",
    "describe",
    "new_game",
    "restore",
    "free_game",
    "free_buf",
    "players",
    "legal_actions",
    "to_act",
    "acting",
    "legal_action_json",
    "apply_legal",
    "apply_legal_then_acting",
    "playout",
    "apply_json",
    "apply_json_reporting",
    "events",
    "state_hash",
    "snapshot",
    "outcome",
    "table",
    "resources",
    "check_invariants",
    "clone_game",
];

/// The vtable's fields, in order (what [`check_declaration`] names).
const VTABLE_FIELDS: &[&str] = CALL_NAMES.split_at(1).1;

const VTABLE_ENTRIES: usize = std::mem::size_of::<VTable>() / std::mem::size_of::<usize>();
const _: () = assert!(VTABLE_FIELDS.len() == VTABLE_ENTRIES);

impl Call {
    fn name(self) -> &'static str {
        CALL_NAMES[self as usize]
    }

    fn from_index(index: u8) -> &'static str {
        CALL_NAMES.get(usize::from(index)).copied().unwrap_or("?")
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One thread's record of the plugin call it is in, read by the watchdog and the crash handlers. `seq` is
/// odd during a call; `call` and `subject` are written before it turns odd.
struct Slot {
    seq: AtomicU64,
    call: AtomicU8,
    subject: AtomicPtr<Subject>,
    free: AtomicBool,
}

/// Every slot ever handed to a thread (leaked; a slot is reused once its thread has exited).
static SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's slot. Constant-initialised and without destructor, so a signal handler may read it.
    static CURRENT: Cell<Option<&'static Slot>> = const { Cell::new(None) };
    /// Gives this thread's slot back when the thread exits.
    static RELEASE: SlotRelease = const { SlotRelease(Cell::new(None)) };
}

struct SlotRelease(Cell<Option<&'static Slot>>);

impl Drop for SlotRelease {
    fn drop(&mut self) {
        // In a call, this runs because the plugin called `exit` (which runs thread-local destructors
        // before `atexit` handlers): keep the slot, so the exit handler can still name the call.
        match self.0.get() {
            Some(slot) if slot.seq.load(Ordering::Relaxed) % 2 == 0 => {
                self.0.set(None);
                let _ = CURRENT.try_with(|c| c.set(None));
                slot.free.store(true, Ordering::Release);
            }
            _ => {}
        }
    }
}

#[inline]
fn slot() -> &'static Slot {
    match CURRENT.with(Cell::get) {
        Some(slot) => slot,
        None => new_slot(),
    }
}

#[cold]
fn new_slot() -> &'static Slot {
    let mut slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    let slot = match slots.iter().find(|s| {
        s.free
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }) {
        Some(slot) => *slot,
        None => {
            let slot: &'static Slot = Box::leak(Box::new(Slot {
                seq: AtomicU64::new(0),
                call: AtomicU8::new(0),
                subject: AtomicPtr::new(std::ptr::null_mut()),
                free: AtomicBool::new(false),
            }));
            slots.push(slot);
            slot
        }
    };
    drop(slots);
    CURRENT.with(|c| c.set(Some(slot)));
    let _ = RELEASE.try_with(|r| r.0.set(Some(slot)));
    slot
}

/// A plugin call in progress on this thread; dropping it ends the call.
struct InCall(&'static Slot);

impl InCall {
    #[inline]
    fn enter(subject: &'static Subject, call: Call) -> InCall {
        let slot = slot();
        slot.subject
            .store(std::ptr::from_ref(subject).cast_mut(), Ordering::Relaxed);
        slot.call.store(call as u8, Ordering::Relaxed);
        let seq = slot.seq.load(Ordering::Relaxed);
        slot.seq.store(seq | 1, Ordering::Release);
        InCall(slot)
    }
}

impl Drop for InCall {
    #[inline]
    fn drop(&mut self) {
        let seq = self.0.seq.load(Ordering::Relaxed);
        self.0.seq.store((seq | 1) + 1, Ordering::Release);
    }
}

/// The library and call of a slot in a call, if it is in one.
fn in_call(slot: &Slot) -> Option<(u64, &'static Subject, &'static str)> {
    let seq = slot.seq.load(Ordering::Acquire);
    if seq % 2 == 0 {
        return None;
    }
    let subject = slot.subject.load(Ordering::Relaxed);
    if subject.is_null() {
        return None;
    }
    // SAFETY: only `InCall::enter` stores into `subject`, and only pointers of leaked `&'static Subject`s.
    let subject: &'static Subject = unsafe { &*subject };
    Some((
        seq,
        subject,
        Call::from_index(slot.call.load(Ordering::Relaxed)),
    ))
}

/// The call this thread is in, for the crash and exit handlers.
#[cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code)
)]
fn this_thread_in_call() -> Option<(&'static Subject, &'static str)> {
    let slot = CURRENT.try_with(Cell::get).ok().flatten()?;
    in_call(slot).map(|(_, subject, call)| (subject, call))
}

/// The deadline in nanoseconds; 0 until set or read from the environment.
static DEADLINE_NANOS: AtomicU64 = AtomicU64::new(0);

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
fn init_deadline() -> Result<(), LoadError> {
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
fn install_guards() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = init_deadline();
        // Without a watchdog no deadline can be kept: loading goes on, as before this guard existed.
        if let Err(e) = std::thread::Builder::new()
            .name("coffer-plugin-watchdog".to_owned())
            .spawn(watchdog)
        {
            tracing::error!(
                "cannot start the plugin call watchdog, plugin calls have no deadline: {e}"
            );
        }
        handlers::install();
    });
}

/// Whether a call past its deadline is left to the host ([`contain_overdue_calls`]).
static CONTAIN_OVERDUE: AtomicBool = AtomicBool::new(false);

/// Leaves calls past their deadline to the host instead of ending the process: the watchdog only reports
/// each one, once, through `tracing`. For a host that keeps its own deadline around every call and can
/// stop using what the stuck call holds, as the game server does (it quarantines that game; the thread
/// stuck in the call is abandoned, never joined). Process-wide and permanent.
pub fn contain_overdue_calls() {
    CONTAIN_OVERDUE.store(true, Ordering::Relaxed);
}

/// Watches every thread's plugin call; ends the process when one outlives the deadline (unless
/// [`contain_overdue_calls`] was called).
fn watchdog() {
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
fn overdue(subject: &Subject, call: &str, deadline: Duration) -> ! {
    eprintln!(
        "error: plugin library {} did not return from the call `{call}` within {} s (the plugin call \
         deadline; set it with {DEADLINE_ENV}); native code cannot be interrupted safely, so the process \
         ends with status {EXIT_DEADLINE}",
        subject.display(),
        deadline.as_secs_f64()
    );
    handlers::exit_now(EXIT_DEADLINE)
}

/// The crash and exit handlers (Linux on x86-64 and AArch64; elsewhere nothing is installed).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod handlers {
    use super::sys::{self, SigAction};
    use super::{EXIT_CRASHED, EXIT_EXITED};
    use std::ffi::{c_int, c_void};
    use std::sync::OnceLock;

    const SIGNALS: [(c_int, &str); 5] = [
        (sys::SIGSEGV, "SIGSEGV, an invalid memory access"),
        (sys::SIGBUS, "SIGBUS, an invalid memory access"),
        (sys::SIGABRT, "SIGABRT, an abort"),
        (sys::SIGILL, "SIGILL, an illegal instruction"),
        (sys::SIGFPE, "SIGFPE, an arithmetic fault"),
    ];

    /// The handlers installed before ours, chained to outside plugin calls.
    static PREVIOUS: OnceLock<[SigAction; 5]> = OnceLock::new();

    pub fn install() {
        let mut previous = [SigAction {
            handler: sys::SIG_DFL,
            mask: [0; 16],
            flags: 0,
            restorer: 0,
        }; 5];
        for (i, (signal, _)) in SIGNALS.iter().enumerate() {
            // SAFETY: reads the current action into a valid `SigAction`; changes nothing.
            unsafe { sys::sigaction(*signal, std::ptr::null(), &mut previous[i]) };
        }
        if PREVIOUS.set(previous).is_err() {
            return;
        }
        let mut ours = SigAction {
            handler: on_fault as extern "C" fn(c_int, *mut c_void, *mut c_void) as usize,
            mask: [0; 16],
            flags: sys::SA_SIGINFO | sys::SA_ONSTACK,
            restorer: 0,
        };
        // SAFETY: initialises the mask of a valid `SigAction`.
        unsafe { sys::sigemptyset(&mut ours.mask) };
        for (signal, _) in SIGNALS {
            // SAFETY: installs a handler that only reads atomics and thread-local cells, writes with
            // `write` and ends with `_exit`, or chains to the previous handler.
            unsafe { sys::sigaction(signal, &ours, std::ptr::null_mut()) };
        }
        // SAFETY: registers a plain function; it runs at `exit` on the exiting thread.
        unsafe { sys::atexit(on_exit) };
    }

    /// Ends the process at once: no destructors, no `atexit` handlers, no other thread's code.
    pub fn exit_now(status: i32) -> ! {
        // SAFETY: `_exit` is always safe to call; it does not return.
        unsafe { sys::_exit(status) }
    }

    fn write_all(parts: &[&[u8]]) {
        for part in parts {
            let mut rest = *part;
            while !rest.is_empty() {
                // SAFETY: writes bytes of a live slice to stderr; `write` is async-signal-safe.
                let n = unsafe { sys::write(2, rest.as_ptr().cast(), rest.len()) };
                if n <= 0 {
                    return;
                }
                rest = &rest[n as usize..];
            }
        }
    }

    // The statuses as the handlers write them (no formatting in a signal handler).
    const _: () = assert!(EXIT_CRASHED == 125 && EXIT_EXITED == 123);

    extern "C" fn on_fault(signal: c_int, info: *mut c_void, context: *mut c_void) {
        let index = SIGNALS.iter().position(|(s, _)| *s == signal).unwrap_or(0);
        if let Some((subject, call)) = super::this_thread_in_call() {
            write_all(&[
                b"error: plugin library ",
                &subject.path,
                b" crashed (",
                SIGNALS[index].1.as_bytes(),
                b") during the call `",
                call.as_bytes(),
                b"`; the process ends with status 125\n",
            ]);
            exit_now(EXIT_CRASHED);
        }
        chain(index, signal, info, context);
    }

    /// Hands a signal that did not come from a plugin call to the handler installed before ours.
    fn chain(index: usize, signal: c_int, info: *mut c_void, context: *mut c_void) {
        let Some(previous) = PREVIOUS.get().map(|p| p[index]) else {
            return;
        };
        if matches!(signal, sys::SIGSEGV | sys::SIGBUS) && previous.handler > sys::SIG_IGN {
            // The fault is the host's own, and the handler before ours ends the process: std's
            // stack-overflow handler reports and calls `abort`. Its SIGABRT must not come back here:
            // on the nearly full alternate signal stack a second frame (a few KiB with AVX-512 state)
            // overflows it, and the kernel ends the process with SIGSEGV instead of the report's abort.
            let default = SigAction {
                handler: sys::SIG_DFL,
                mask: [0; 16],
                flags: 0,
                restorer: 0,
            };
            // SAFETY: restores the default action of SIGABRT; `sigaction` is async-signal-safe.
            unsafe { sys::sigaction(sys::SIGABRT, &default, std::ptr::null_mut()) };
        }
        match previous.handler {
            sys::SIG_IGN => {}
            sys::SIG_DFL => {
                let default = SigAction {
                    handler: sys::SIG_DFL,
                    mask: [0; 16],
                    flags: 0,
                    restorer: 0,
                };
                // SAFETY: restores the default action, then raises the signal again: it is delivered
                // when this handler returns (a fault recurs anyway) and ends the process as it would have.
                unsafe {
                    sys::sigaction(signal, &default, std::ptr::null_mut());
                    sys::raise(signal);
                }
            }
            handler if previous.flags & sys::SA_SIGINFO != 0 => {
                // SAFETY: the previous action was installed with SA_SIGINFO, so `handler` is a
                // three-argument signal handler; it gets the arguments this one received.
                let handler: extern "C" fn(c_int, *mut c_void, *mut c_void) =
                    unsafe { std::mem::transmute(handler) };
                handler(signal, info, context);
            }
            handler => {
                // SAFETY: the previous action was installed without SA_SIGINFO, so `handler` is a
                // one-argument signal handler.
                let handler: extern "C" fn(c_int) = unsafe { std::mem::transmute(handler) };
                handler(signal);
            }
        }
    }

    extern "C" fn on_exit() {
        if let Some((subject, call)) = super::this_thread_in_call() {
            write_all(&[
                b"error: plugin library ",
                &subject.path,
                b" ended the process (it called exit) during the call `",
                call.as_bytes(),
                b"`; a plugin ending the process is a failure: the process ends with status 123\n",
            ]);
            exit_now(EXIT_EXITED);
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod handlers {
    pub fn install() {}

    pub fn exit_now(status: i32) -> ! {
        std::process::exit(status)
    }
}

/// One loaded library, leaked: never unloaded (see the module docs).
struct Library {
    /// The resolved path.
    path: PathBuf,
    /// Device and inode: the identity of the file loaded.
    file: (u64, u64),
    name: String,
    subject: &'static Subject,
    vt: &'static VTable,
    poisoned: AtomicBool,
    /// The first panic: the call and the plugin's message.
    first_panic: Mutex<Option<String>>,
    _lib: &'static libloading::Library,
}

/// Every library loaded by this process.
static LOADED: Mutex<Vec<&'static Library>> = Mutex::new(Vec::new());

/// A failed call.
enum Failure {
    Refused(Vec<u8>),
    Panicked(String),
    Poisoned,
}

impl Library {
    /// Calls into the library unless it is poisoned; copies the out buffer and frees it with the plugin's
    /// own function; a panic poisons the library.
    fn call(
        &'static self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(Failure::Poisoned);
        }
        self.call_anyway(call, f)
    }

    /// As [`Library::call`] for the hot path, whose answers are all in out-parameters: success with an
    /// untouched out buffer returns at once, without building a byte vector.
    #[inline]
    fn call_hot(
        &'static self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<(), Failure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(Failure::Poisoned);
        }
        let mut out = Buf::EMPTY;
        let status = {
            let _in_call = InCall::enter(self.subject, call);
            f(self.vt, &mut out)
        };
        if status == abi::OK && out.ptr.is_null() {
            return Ok(());
        }
        self.finish(call, status, out).map(drop)
    }

    /// As [`Library::call`], also when poisoned (read-only calls).
    fn call_anyway(
        &'static self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        let mut out = Buf::EMPTY;
        let status = {
            let _in_call = InCall::enter(self.subject, call);
            f(self.vt, &mut out)
        };
        self.finish(call, status, out)
    }

    /// Reads a call's answer: copies the out buffer and frees it with the plugin's own function; a panic
    /// (or an unknown status) poisons the library.
    #[cold]
    fn finish(
        &'static self,
        call: Call,
        status: abi::Status,
        mut out: Buf,
    ) -> Result<Vec<u8>, Failure> {
        let bytes = if out.ptr.is_null() {
            Vec::new()
        } else {
            // SAFETY: `out` was filled by the plugin during this call and is freed just below, once.
            let bytes = unsafe { out.as_slice() }.to_vec();
            let _in_call = InCall::enter(self.subject, Call::FreeBuf);
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (self.vt.free_buf)(&mut out) };
            bytes
        };
        match status {
            abi::OK => Ok(bytes),
            abi::REFUSED => Err(Failure::Refused(bytes)),
            other => {
                let message = if other == abi::PANICKED {
                    String::from_utf8_lossy(&bytes).into_owned()
                } else {
                    format!("unknown status {other}")
                };
                let message = format!(
                    "{message} (in the call `{call}` to library {})",
                    self.path.display()
                );
                self.poisoned.store(true, Ordering::Relaxed);
                let mut first = self.first_panic.lock().unwrap_or_else(|e| e.into_inner());
                first.get_or_insert_with(|| message.clone());
                tracing::error!(plugin = %self.path.display(), "plugin panicked and is now poisoned: {message}");
                Err(Failure::Panicked(message))
            }
        }
    }

    /// What a failure was, in words, naming the library and the call.
    fn describe(&self, call: Call, failure: &Failure) -> String {
        let what = match failure {
            Failure::Refused(b) => format!("it refused: {}", String::from_utf8_lossy(b)),
            Failure::Panicked(m) => format!("it panicked: {m}"),
            Failure::Poisoned => {
                let first = self.first_panic.lock().unwrap_or_else(|e| e.into_inner());
                match first.as_deref() {
                    Some(m) => format!("the library is poisoned: it panicked earlier: {m}"),
                    None => "the library is poisoned (it panicked earlier)".to_owned(),
                }
            }
        };
        format!(
            "plugin library {} failed in the call `{call}`: {what}",
            self.path.display()
        )
    }

    fn init_logging(&'static self) -> Result<(), LoadError> {
        let max_level = match tracing::level_filters::LevelFilter::current().into_level() {
            None => 0,
            Some(tracing::Level::ERROR) => 1,
            Some(tracing::Level::WARN) => 2,
            Some(tracing::Level::INFO) => 3,
            Some(tracing::Level::DEBUG) => 4,
            Some(_) => 5,
        };
        let sink = LogSink {
            ctx: (self as *const Library).cast(),
            max_level,
            log: log_from_plugin,
        };
        self.call(Call::Init, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.init)(&sink, out) }
        })
        .map(drop)
        .map_err(|f| self.plugin_error("initialising", f))
    }

    fn plugin_error(&self, during: &'static str, failure: Failure) -> LoadError {
        let message = match failure {
            Failure::Refused(b) => String::from_utf8_lossy(&b).into_owned(),
            Failure::Panicked(m) => format!("panicked: {m}"),
            Failure::Poisoned => "the library is poisoned (it panicked earlier)".to_owned(),
        };
        LoadError::Plugin {
            path: self.path.clone(),
            during,
            message,
        }
    }

    /// The library's rulesets, wrapped.
    fn rulesets(&'static self) -> Result<Vec<Arc<dyn DynRuleset>>, LoadError> {
        let mut count = 0usize;
        self.call(Call::RulesetCount, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.ruleset_count)(&mut count, out) }
        })
        .map_err(|f| self.plugin_error("counting its rulesets", f))?;
        (0..count)
            .map(|index| {
                let bytes = self
                    .call(Call::Describe, |vt, out| {
                        // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                        // passed is valid for the whole call.
                        unsafe { (vt.describe)(index, out) }
                    })
                    .map_err(|f| self.plugin_error("describing", f))?;
                let description: Description =
                    serde_json::from_slice(&bytes).map_err(|e| LoadError::Plugin {
                        path: self.path.clone(),
                        during: "describing",
                        message: format!("unreadable description: {e}"),
                    })?;
                Ok(Arc::new(RuntimeRuleset {
                    lib: self,
                    index,
                    id: Arc::from(description.id.as_str()),
                    description,
                }) as Arc<dyn DynRuleset>)
            })
            .collect()
    }
}

extern "C" fn log_from_plugin(ctx: *const c_void, level: u8, target: StrRef, message: StrRef) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `ctx` is the `&'static Library` this host passed at init; libraries are never freed.
        let lib = unsafe { &*ctx.cast::<Library>() };
        // SAFETY: the plugin passes strings valid for the duration of this call.
        let target = unsafe { target.to_str(1024) }.unwrap_or("?");
        // SAFETY: as above.
        let message = unsafe { message.to_str(1 << 20) }.unwrap_or("<unreadable message>");
        let plugin = lib.name.as_str();
        match level {
            1 => {
                tracing::error!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            2 => {
                tracing::warn!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            3 => {
                tracing::info!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            4 => {
                tracing::debug!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
            _ => {
                tracing::trace!(target: "coffer::plugin", plugin, plugin_target = target, "{message}")
            }
        }
    });
}

/// Called after a library's hash was checked and before it is loaded; for tests only (see
/// [`set_after_hash_hook`]).
type AfterHashHook = Box<dyn Fn(&Path) + Send + Sync>;

static AFTER_HASH: Mutex<Option<AfterHashHook>> = Mutex::new(None);

/// For tests of the check-then-load race: `hook` runs with each library's path (as given) after its
/// checks and hash and before it is loaded, so a test can swap the file in between, deterministically.
/// `None` removes it. Not for other uses.
#[doc(hidden)]
pub fn set_after_hash_hook(hook: Option<AfterHashHook>) {
    *AFTER_HASH.lock().unwrap_or_else(|e| e.into_inner()) = hook;
}

/// The identity of a file: device and inode (elsewhere than Unix, a hash of its resolved path, `canonical`).
#[cfg(unix)]
fn file_identity(meta: &std::fs::Metadata, _canonical: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
fn file_identity(_: &std::fs::Metadata, canonical: &Path) -> (u64, u64) {
    use std::hash::{BuildHasher, RandomState};
    static KEYS: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
    (KEYS.get_or_init(RandomState::new).hash_one(canonical), 0)
}

/// The identity of the file a path names (after links).
fn identity_of(path: &Path) -> Option<(u64, u64)> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&canonical).ok()?;
    Some(file_identity(&meta, &canonical))
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
    let canonical = check_path_as(path, PathKind::File)?;
    // Opened once: the checks below, the hash and the load all see this file, whatever the path names
    // by then.
    let mut file = File::open(&canonical).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: canonical,
            problem: PathProblem::NotAFile,
        });
    }
    check_target(path, &meta)?;
    let identity = file_identity(&meta, &canonical);
    if let Some(lock) = lock {
        if !cfg!(target_os = "linux") {
            return Err(LoadError::PinningUnsupported {
                path: path.to_owned(),
            });
        }
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let actual = sha256_of(&mut file).map_err(io)?;
        match lock.pin(name) {
            None => {
                return Err(LoadError::Unpinned {
                    path: path.to_owned(),
                    lock: lock.path.clone(),
                    actual,
                });
            }
            Some(expected) if expected != actual => {
                return Err(LoadError::HashMismatch {
                    path: path.to_owned(),
                    expected: expected.to_owned(),
                    actual,
                });
            }
            Some(_) => {}
        }
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
        return lib.rulesets();
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
    library.rulesets()
}

/// Loads the open `file` (on Linux through `/proc/self/fd/N`: the very file checked and hashed, whatever
/// its path names now) and finds its segments. Once loaded, the descriptor stays open for the life of the
/// process, like the library: the C library knows a loaded library by the name it was opened with, so
/// `/proc/self/fd/N` must never name another file.
#[cfg(unix)]
fn open(
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
fn open(
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

/// The loaded segments of one library: start, end and ELF permission flags. Empty where they cannot be
/// read, and then only null and alignment are checked.
#[derive(Default)]
struct Segments(Vec<(usize, usize, u32)>);

const SEGMENT_READ: u32 = 4;
const SEGMENT_EXEC: u32 = 1;

impl Segments {
    fn known(&self) -> bool {
        !self.0.is_empty()
    }

    /// Whether `len` bytes from `addr` lie in one segment with all of `flags`.
    fn holds(&self, addr: usize, len: usize, flags: u32) -> bool {
        if !self.known() {
            return true;
        }
        let Some(end) = addr.checked_add(len) else {
            return false;
        };
        self.0
            .iter()
            .any(|&(s, e, f)| f & flags == flags && s <= addr && end <= e && addr < e)
    }

    fn readable(&self, addr: usize, len: usize) -> bool {
        self.holds(addr, len.max(1), SEGMENT_READ)
    }

    fn executable(&self, addr: usize) -> bool {
        self.holds(addr, 1, SEGMENT_EXEC)
    }
}

/// The `PT_LOAD` segments of a loaded library, from its program headers (`dlinfo`, `dl_iterate_phdr`).
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn segments_of(handle: *mut c_void) -> Segments {
    struct Search {
        base: usize,
        found: Vec<(usize, usize, u32)>,
    }
    extern "C" fn visit(info: *mut sys::DlPhdrInfo, _size: usize, data: *mut c_void) -> i32 {
        // SAFETY: `dl_iterate_phdr` passes a valid `dl_phdr_info` and our `Search` back.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        if info.addr != search.base || info.phdr.is_null() {
            return 0;
        }
        // SAFETY: `phdr` points to `phnum` program headers of this object, mapped while it is loaded.
        let headers = unsafe { std::slice::from_raw_parts(info.phdr, usize::from(info.phnum)) };
        for h in headers.iter().filter(|h| h.p_type == sys::PT_LOAD) {
            let start = info.addr.wrapping_add(h.p_vaddr as usize);
            search
                .found
                .push((start, start.saturating_add(h.p_memsz as usize), h.p_flags));
        }
        1
    }
    const _: () = assert!(sys::PF_R == SEGMENT_READ && sys::PF_X == SEGMENT_EXEC);
    let mut map: *mut sys::LinkMap = std::ptr::null_mut();
    // SAFETY: a live handle from `dlopen`; RTLD_DI_LINKMAP writes a `struct link_map *`.
    let ok = unsafe { sys::dlinfo(handle, sys::RTLD_DI_LINKMAP, (&raw mut map).cast()) } == 0;
    if !ok || map.is_null() {
        return Segments::default();
    }
    // SAFETY: the link map of a loaded object, alive while it is loaded (forever: never unloaded).
    let base = unsafe { (*map).addr };
    let mut search = Search {
        base,
        found: Vec::new(),
    };
    // SAFETY: `visit` only reads what it is passed and writes into `search`, which outlives the call.
    unsafe { sys::dl_iterate_phdr(visit, (&raw mut search).cast()) };
    Segments(search.found)
}

#[cfg(all(
    unix,
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    ))
))]
fn segments_of(_: *mut c_void) -> Segments {
    Segments::default()
}

fn bad_declaration(path: &Path, field: impl Into<String>, reason: String) -> LoadError {
    LoadError::BadDeclaration {
        path: path.to_owned(),
        field: field.into(),
        reason,
    }
}

fn declaration(
    path: &Path,
    lib: &'static libloading::Library,
    symbol: &str,
    segments: &Segments,
) -> Result<&'static Declaration, LoadError> {
    let no_symbol = || LoadError::NoDeclaration {
        path: path.to_owned(),
        symbol: symbol.to_owned(),
    };
    // SAFETY: the symbol is read as the address of a static; nothing is called. The library is leaked by
    // the caller on every path (never unloaded), so the address stays valid for 'static.
    let address: *const Header = unsafe { lib.get::<*const Header>(symbol.as_bytes()) }
        .map(|s| *s)
        .map_err(|_| no_symbol())?;
    if address.is_null() {
        return Err(no_symbol());
    }
    let at = address as usize;
    let field = "declaration";
    if !segments.readable(at, std::mem::size_of::<Header>()) {
        return Err(bad_declaration(
            path,
            field,
            format!("'{symbol}' at {at:#x} lies outside the library's readable segments"),
        ));
    }
    let align = std::mem::align_of::<Declaration>();
    if at % align != 0 {
        return Err(bad_declaration(
            path,
            field,
            format!(
                "'{symbol}' is misaligned: its address {at:#x} is {} past a multiple of {align}",
                at % align
            ),
        ));
    }
    // SAFETY: 16 readable bytes of the library (checked above, where segments are known); unaligned read
    // in case a foreign library placed it oddly.
    let header = unsafe { address.read_unaligned() };
    if header.magic != abi::MAGIC {
        return Err(LoadError::BadMagic {
            path: path.to_owned(),
            symbol: symbol.to_owned(),
            found: header.magic,
            expected: abi::MAGIC,
        });
    }
    if header.abi_version != abi::ABI_VERSION {
        return Err(LoadError::AbiVersion {
            path: path.to_owned(),
            plugin: header.abi_version,
            host: abi::ABI_VERSION,
        });
    }
    let host_size = std::mem::size_of::<Declaration>() as u32;
    if header.size != host_size {
        return Err(LoadError::DeclarationSize {
            path: path.to_owned(),
            plugin: header.size,
            host: host_size,
        });
    }
    if !segments.readable(at, std::mem::size_of::<Declaration>()) {
        return Err(bad_declaration(
            path,
            field,
            format!("'{symbol}' at {at:#x} does not fit in the library's readable segments"),
        ));
    }
    // SAFETY: magic, ABI version and size match, the whole `Declaration` is readable and aligned (checked),
    // every bit pattern is a valid `Declaration` (integers and raw pointers), and it lives as long as the
    // library, which is never unloaded.
    Ok(unsafe { &*address.cast::<Declaration>() })
}

/// Checks every string and pointer of a checked declaration before following it, then its versions;
/// returns its vtable.
fn check_declaration(
    path: &Path,
    decl: &Declaration,
    segments: &Segments,
) -> Result<&'static VTable, LoadError> {
    let text = |field: &'static str, s: StrRef| {
        let bad = |reason: String| bad_declaration(path, field, reason);
        if s.len > MAX_VERSION_LEN {
            return Err(bad(format!(
                "is {} bytes long, more than the {MAX_VERSION_LEN} allowed",
                s.len
            )));
        }
        if s.len == 0 {
            return Ok("");
        }
        let at = s.ptr as usize;
        if s.ptr.is_null() {
            return Err(bad(format!("is a null pointer with length {}", s.len)));
        }
        if !segments.readable(at, s.len) {
            return Err(bad(format!(
                "points to {at:#x} ({} bytes), outside the library's readable segments",
                s.len
            )));
        }
        // SAFETY: `len` (bounded) readable bytes of the library (checked where segments are known),
        // which is never unloaded; checked as UTF-8 below.
        let bytes = unsafe { std::slice::from_raw_parts(s.ptr, s.len) };
        std::str::from_utf8(bytes).map_err(|e| bad(format!("is not UTF-8 text ({e})")))
    };
    let core = text("core_version", decl.core_version)?;
    let rustc = text("rustc_version", decl.rustc_version)?;
    let panic = text("panic_strategy", decl.panic_strategy)?;
    let vt = check_vtable(path, decl.vtable, segments)?;
    if !abi::core_compatible(abi::CORE_VERSION, core) {
        return Err(LoadError::CoreVersion {
            path: path.to_owned(),
            plugin: core.to_owned(),
            host: abi::CORE_VERSION.to_owned(),
        });
    }
    if rustc != abi::RUSTC_VERSION {
        return Err(LoadError::RustcVersion {
            path: path.to_owned(),
            plugin: rustc.to_owned(),
            host: abi::RUSTC_VERSION.to_owned(),
        });
    }
    if panic != abi::PANIC_STRATEGY || panic != "unwind" {
        return Err(LoadError::PanicStrategy {
            path: path.to_owned(),
            plugin: panic.to_owned(),
            host: abi::PANIC_STRATEGY.to_owned(),
        });
    }
    Ok(vt)
}

/// The vtable a declaration points to, once it is non-null, aligned, readable, and each of its function
/// pointers is non-null and inside the library's executable segments.
fn check_vtable(
    path: &Path,
    vtable: *const VTable,
    segments: &Segments,
) -> Result<&'static VTable, LoadError> {
    let at = vtable as usize;
    let bad = |reason: String| bad_declaration(path, "vtable", reason);
    if vtable.is_null() {
        return Err(bad("is a null pointer".to_owned()));
    }
    let align = std::mem::align_of::<VTable>();
    if at % align != 0 {
        return Err(bad(format!(
            "is misaligned: its address {at:#x} is {} past a multiple of {align}",
            at % align
        )));
    }
    if !segments.readable(at, std::mem::size_of::<VTable>()) {
        return Err(bad(format!(
            "points to {at:#x}, outside the library's readable segments"
        )));
    }
    // SAFETY: aligned, readable (checked where segments are known) memory of the library's size of a
    // `VTable`, read as plain addresses: every bit pattern is a valid `usize`.
    let entries: [usize; VTABLE_ENTRIES] =
        unsafe { vtable.cast::<[usize; VTABLE_ENTRIES]>().read() };
    for (entry, name) in entries.iter().zip(VTABLE_FIELDS) {
        let field = format!("vtable entry {name}");
        if *entry == 0 {
            return Err(bad_declaration(
                path,
                field,
                "is a null function pointer".to_owned(),
            ));
        }
        if !segments.executable(*entry) {
            return Err(bad_declaration(
                path,
                field,
                format!("points to {entry:#x}, outside the library's executable segments"),
            ));
        }
    }
    // SAFETY: every entry is a non-null address inside the library's code (checked where segments are
    // known), so the table is a valid `VTable` of function pointers; the library is never unloaded.
    Ok(unsafe { &*vtable })
}

impl Registry {
    /// Loads every plugin library in `dirs` (in order; files of a directory by name) and registers their
    /// rulesets with [`Origin::Library`]. A refused directory, library or ruleset is skipped and reported;
    /// the rest load. With `lock`, only libraries pinned in it load (see [`LockFile`]). A directory named
    /// twice (or through a link) is read once, and a file already registered from the same file (another
    /// name for it) is skipped without an error.
    ///
    /// ```no_run
    /// use coffer_host::{Registry, loader};
    /// let mut registry = Registry::with_static().unwrap();
    /// let report = registry.load_dirs(&loader::plugin_dirs_from_env(), None);
    /// for error in &report.errors {
    ///     eprintln!("skipped: {error}");
    /// }
    /// ```
    pub fn load_dirs<P: AsRef<Path>>(&mut self, dirs: &[P], lock: Option<&LockFile>) -> LoadReport {
        let mut report = LoadReport::default();
        if let Err(e) = init_deadline() {
            report.errors.push(e);
        }
        let mut seen = BTreeSet::new();
        for dir in dirs {
            let dir = dir.as_ref();
            match library_files(dir) {
                Ok((canonical, files)) => {
                    if !seen.insert(canonical) {
                        continue;
                    }
                    for file in files {
                        self.load_file_into(&file, lock, &mut report);
                    }
                }
                Err(e) => report.errors.push(e),
            }
        }
        report
    }

    /// Loads one library file into the registry, as [`Registry::load_dirs`] does for each file.
    pub fn load_file(&mut self, file: &Path, lock: Option<&LockFile>) -> LoadReport {
        let mut report = LoadReport::default();
        if let Err(e) = init_deadline() {
            report.errors.push(e);
        }
        self.load_file_into(file, lock, &mut report);
        report
    }

    fn load_file_into(&mut self, file: &Path, lock: Option<&LockFile>, report: &mut LoadReport) {
        match load_library(file, lock) {
            Ok(rulesets) => {
                for ruleset in rulesets {
                    let description = ruleset.description();
                    let key = description.key();
                    let again = self
                        .get_exact(&description.id, &description.version)
                        .is_some_and(
                            |e| matches!(&e.origin, Origin::Library(p) if same_file(p, file)),
                        );
                    if again {
                        continue;
                    }
                    match self.add(ruleset, Origin::Library(file.to_owned())) {
                        Ok(()) => report.loaded.push((key, file.to_owned())),
                        Err(e) => report.errors.push(e.into()),
                    }
                }
            }
            Err(e) => report.errors.push(e),
        }
    }
}

/// Whether two paths name the same file (after links).
fn same_file(a: &Path, b: &Path) -> bool {
    match (identity_of(a), identity_of(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The resolved path of a plugin directory and its candidate library files, by name, after checking the
/// directory and every directory above it ([`check_path`]).
fn library_files(dir: &Path) -> Result<(PathBuf, Vec<PathBuf>), LoadError> {
    let io = |e| LoadError::Io {
        path: dir.to_owned(),
        source: e,
    };
    let meta = std::fs::metadata(dir).map_err(io)?;
    if !meta.is_dir() {
        return Err(LoadError::NotADirectory {
            path: dir.to_owned(),
        });
    }
    let canonical = check_path_as(dir, PathKind::PluginDir)?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if is_library_name(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok((canonical, files))
}

/// What probing one library in a child process found ([`check_dir`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The library (or the directory, when the directory itself was refused).
    pub path: PathBuf,
    /// What happened.
    pub verdict: Verdict,
}

/// How a probed library fared.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// It passed every check and registered these rulesets (`id@version`).
    Loads {
        /// The rulesets.
        rulesets: Vec<String>,
    },
    /// The loader refused it (or the directory); the reason, as the loader says it.
    Refused {
        /// Why.
        reason: String,
    },
    /// The process loading it died.
    Crashed {
        /// How: the signal or exit status, and the last message it wrote.
        how: String,
    },
}

impl CheckReport {
    /// Whether the library loads.
    pub fn loads(&self) -> bool {
        matches!(self.verdict, Verdict::Loads { .. })
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.verdict {
            Verdict::Loads { rulesets } if rulesets.is_empty() => {
                write!(f, "{path}: loads (it registers no ruleset)")
            }
            Verdict::Loads { rulesets } => write!(f, "{path}: loads: {}", rulesets.join(", ")),
            Verdict::Refused { reason } => write!(f, "{path}: refused: {reason}"),
            Verdict::Crashed { how } => {
                write!(f, "{path}: crashed the process that loaded it: {how}")
            }
        }
    }
}

/// How [`check_dir`] starts a probe: a program that calls [`probe_child_main`] first thing (the `coffer`
/// command does), with its arguments; the library to probe is passed in [`PROBE_ENV`].
#[derive(Debug, Clone)]
pub struct ProbeCommand {
    program: PathBuf,
    args: Vec<OsString>,
}

impl ProbeCommand {
    /// This executable again, without arguments: for a program whose `main` calls [`probe_child_main`].
    ///
    /// # Errors
    /// When the running executable cannot be found.
    pub fn current_exe() -> std::io::Result<ProbeCommand> {
        Ok(ProbeCommand::new(
            std::env::current_exe()?,
            Vec::<OsString>::new(),
        ))
    }

    /// `program` with `args`.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> ProbeCommand {
        ProbeCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// The line a probe writes on stdout: this prefix, a tab, `loads` or `refused`, a tab, the rest.
const PROBE_LINE: &str = "coffer-probe";

/// Probes every library of `dir` in its own child process, so that a library that crashes the process
/// loading it (its initialisers, or a declaration no check can catch) is named instead of taking the
/// caller down. `lock` pins the libraries as [`LockFile`] does. A refused directory gives one report for
/// the directory.
pub fn check_dir(dir: &Path, lock: Option<&Path>, probe: &ProbeCommand) -> Vec<CheckReport> {
    let files = match library_files(dir) {
        Ok((_, files)) => files,
        Err(e) => {
            return vec![CheckReport {
                path: dir.to_owned(),
                verdict: Verdict::Refused {
                    reason: one_line(&e.to_string()),
                },
            }];
        }
    };
    files
        .into_iter()
        .map(|file| {
            let verdict = probe_one(&file, lock, probe);
            CheckReport {
                path: file,
                verdict,
            }
        })
        .collect()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn probe_one(file: &Path, lock: Option<&Path>, probe: &ProbeCommand) -> Verdict {
    let mut command = std::process::Command::new(&probe.program);
    command
        .args(&probe.args)
        .env(PROBE_ENV, file)
        .env_remove(PROBE_LOCK_ENV)
        .stdin(std::process::Stdio::null());
    if let Some(lock) = lock {
        command.env(PROBE_LOCK_ENV, lock);
    }
    let output = match command.output() {
        Ok(output) => output,
        Err(e) => {
            return Verdict::Crashed {
                how: format!("the probe {} could not start: {e}", probe.program.display()),
            };
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = stdout.lines().find_map(|l| {
        l.strip_prefix(PROBE_LINE)
            .and_then(|rest| rest.strip_prefix('\t'))
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last_words = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default();
    match answer.and_then(|a| a.split_once('\t')) {
        Some(("loads", keys)) if output.status.success() => Verdict::Loads {
            rulesets: keys.split_whitespace().map(str::to_owned).collect(),
        },
        Some(("refused", reason)) => Verdict::Refused {
            reason: reason.to_owned(),
        },
        _ => Verdict::Crashed {
            how: format!("{}{last_words}", exit_description(&output.status)),
        },
    }
}

fn exit_description(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code} without an answer"),
        None => "ended without an answer".to_owned(),
    }
}

/// The child side of [`check_dir`]: when [`PROBE_ENV`] names a library, loads it (pinned by
/// [`PROBE_LOCK_ENV`]'s lock file if set) with every check, writes one line on stdout saying whether it
/// loads, and returns the exit status to end the process with (0 loads, 1 refused). Returns `None`, doing
/// nothing, when [`PROBE_ENV`] is not set. A program that wants [`ProbeCommand::current_exe`] to work
/// calls it first thing in `main`.
pub fn probe_child_main() -> Option<i32> {
    let path = PathBuf::from(std::env::var_os(PROBE_ENV)?);
    let refused = |reason: &str| {
        println!("{PROBE_LINE}\trefused\t{}", one_line(reason));
        Some(1)
    };
    let lock = match std::env::var_os(PROBE_LOCK_ENV) {
        Some(lock) => match LockFile::read(Path::new(&lock)) {
            Ok(lock) => Some(lock),
            Err(e) => return refused(&e.to_string()),
        },
        None => None,
    };
    let mut registry = Registry::new();
    let report = registry.load_file(&path, lock.as_ref());
    // A bad deadline in the environment is not the library's fault (the default applies).
    let refusal = report
        .errors
        .iter()
        .find(|e| !matches!(e, LoadError::BadDeadline { .. }));
    if let Some(e) = refusal {
        return refused(&e.to_string());
    }
    let keys: Vec<String> = report.loaded.into_iter().map(|(key, _)| key).collect();
    println!("{PROBE_LINE}\tloads\t{}", keys.join(" "));
    Some(0)
}

/// A runtime-loaded ruleset.
struct RuntimeRuleset {
    lib: &'static Library,
    index: usize,
    description: Description,
    /// The description's id, shared by this ruleset's games.
    id: Arc<str>,
}

fn setup_error(failure: Failure, id: &str) -> SetupError {
    match failure {
        Failure::Refused(bytes) => serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| SetupError::Config(String::from_utf8_lossy(&bytes).into_owned())),
        Failure::Panicked(m) => SetupError::Panicked(m),
        Failure::Poisoned => SetupError::Poisoned(id.to_owned()),
    }
}

fn action_error(failure: Failure, id: &str) -> ActionError {
    match failure {
        Failure::Refused(bytes) => serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| ActionError::Illegal(String::from_utf8_lossy(&bytes).into_owned())),
        Failure::Panicked(m) => ActionError::Panicked(m),
        Failure::Poisoned => ActionError::Poisoned(id.to_owned()),
    }
}

impl RuntimeRuleset {
    fn game(&self, handle: *mut GameHandle) -> Result<Box<dyn DynGame>, SetupError> {
        let mut game = RuntimeGame::new(self.lib, handle, Arc::clone(&self.id), 0);
        let mut players = 0u16;
        let h = handle.cast_const();
        self.lib
            .call(Call::Players, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.players)(h, &mut players, out) }
            })
            .map_err(|f| setup_error(f, &self.description.id))?;
        game.players = players;
        Ok(Box::new(game))
    }
}

impl DynRuleset for RuntimeRuleset {
    fn description(&self) -> &Description {
        &self.description
    }

    fn new_game(&self, setup: &Setup) -> Result<Box<dyn DynGame>, SetupError> {
        let json = serde_json::to_vec(setup).map_err(|e| SetupError::Config(e.to_string()))?;
        let mut handle: *mut GameHandle = std::ptr::null_mut();
        self.lib
            .call(Call::NewGame, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.new_game)(self.index, json.as_ptr(), json.len(), &mut handle, out) }
            })
            .map_err(|f| setup_error(f, &self.description.id))?;
        self.game(handle)
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let mut handle: *mut GameHandle = std::ptr::null_mut();
        let code = abi::format_code(format);
        self.lib
            .call(Call::Restore, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe {
                    (vt.restore)(
                        self.index,
                        code,
                        bytes.as_ptr(),
                        bytes.len(),
                        &mut handle,
                        out,
                    )
                }
            })
            .map_err(|f| setup_error(f, &self.description.id))?;
        self.game(handle)
    }
}

/// A game living in a plugin library.
struct RuntimeGame {
    lib: &'static Library,
    /// Owned by this value; null for a game that could not be copied from a poisoned library.
    handle: *mut GameHandle,
    id: Arc<str>,
    players: u16,
    events: Vec<Event>,
    /// Whether `events` holds the last action's events (fetched lazily).
    events_fresh: bool,
    /// The plugin's answer to `to_act`, as written across the boundary and as handed out.
    acting_raw: Vec<u16>,
    acting: Vec<Owner>,
    /// The first failed call whose trait method has no error (so it answered a neutral value), in words.
    failure: RefCell<Option<String>>,
}

// SAFETY: the handle is owned by this value alone and the plugin's game is a `DynGame`, which is `Send`;
// calls on it are serialised by `&mut self` / the host's per-game lock.
unsafe impl Send for RuntimeGame {}

impl RuntimeGame {
    fn new(lib: &'static Library, handle: *mut GameHandle, id: Arc<str>, players: u16) -> Self {
        RuntimeGame {
            lib,
            handle,
            id,
            players,
            events: Vec::new(),
            events_fresh: true,
            acting_raw: Vec::new(),
            acting: Vec::new(),
            failure: RefCell::new(None),
        }
    }

    #[inline]
    fn call_hot(
        &self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<(), Failure> {
        if self.handle.is_null() {
            return Err(Failure::Poisoned);
        }
        self.lib.call_hot(call, f)
    }

    fn call(
        &self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        if self.handle.is_null() {
            return Err(Failure::Poisoned);
        }
        self.lib.call(call, f)
    }

    /// Records the first failure of a call that answers a neutral value instead of an error.
    #[cold]
    fn failed(&self, call: Call, failure: &Failure) {
        let mut slot = self.failure.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.lib.describe(call, failure));
        }
    }

    /// Records an answer that could not be read.
    #[cold]
    fn unreadable(&self, call: Call, error: &postcard::Error) {
        let mut slot = self.failure.borrow_mut();
        if slot.is_none() {
            *slot = Some(format!(
                "plugin library {} failed in the call `{call}`: its answer is unreadable: {error}",
                self.lib.path.display()
            ));
        }
    }

    /// A call answering postcard bytes: the value, or `fallback` with the failure recorded.
    fn decoded<T: serde::de::DeserializeOwned>(
        &self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
        fallback: impl FnOnce() -> T,
    ) -> T {
        match self.call(call, f) {
            Ok(bytes) => postcard::from_bytes(&bytes).unwrap_or_else(|e| {
                self.unreadable(call, &e);
                fallback()
            }),
            Err(failure) => {
                self.failed(call, &failure);
                fallback()
            }
        }
    }
}

impl Drop for RuntimeGame {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            let _in_call = InCall::enter(self.lib.subject, Call::FreeGame);
            // The plugin's own function frees its memory (a panic in it is caught on the plugin side).
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (self.lib.vt.free_game)(self.handle) };
        }
    }
}

impl DynGame for RuntimeGame {
    fn players(&self) -> u16 {
        self.players
    }

    fn legal_actions(&mut self, player: Owner) -> usize {
        let mut count = 0usize;
        let h = self.handle;
        match self.call_hot(Call::LegalActions, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.legal_actions)(h, player.0, &mut count, out) }
        }) {
            Ok(_) => count,
            Err(f) => {
                self.failed(Call::LegalActions, &f);
                0
            }
        }
    }

    fn acting(&mut self) -> &[Acting] {
        let mut list: *const Acting = std::ptr::null();
        let mut count = 0usize;
        let h = self.handle;
        match self.call_hot(Call::Acting, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.acting)(h, &mut list, &mut count, out) }
        }) {
            // SAFETY: the plugin wrote a pointer to `count` entries of its game's cache, which stay
            // unchanged until the next call on this game (`VTable::acting`); the slice borrows `self`
            // mutably, so no other call on the game can happen while it lives.
            Ok(()) => unsafe { plugin_list(list, count) },
            Err(f) => {
                self.failed(Call::Acting, &f);
                &[]
            }
        }
    }

    fn to_act(&mut self) -> &[Owner] {
        self.acting_raw.resize(usize::from(self.players), 0);
        let (h, players, capacity) = (
            self.handle,
            self.acting_raw.as_mut_ptr(),
            self.acting_raw.len(),
        );
        let mut count = 0usize;
        let n = match self.call_hot(Call::ToAct, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.to_act)(h, players, capacity, &mut count, out) }
        }) {
            Ok(_) => count.min(capacity),
            Err(f) => {
                self.failed(Call::ToAct, &f);
                0
            }
        };
        self.acting.clear();
        self.acting
            .extend(self.acting_raw[..n].iter().map(|&p| Owner(p)));
        &self.acting
    }

    fn legal_action_json(&self, index: usize) -> Option<String> {
        let h = self.handle.cast_const();
        match self.call(Call::LegalActionJson, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.legal_action_json)(h, index, out) }
        }) {
            Ok(bytes) => String::from_utf8(bytes).ok(),
            // No such index: an answer, not a failure.
            Err(Failure::Refused(_)) => None,
            Err(f) => {
                self.failed(Call::LegalActionJson, &f);
                None
            }
        }
    }

    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError> {
        let h = self.handle;
        self.call_hot(Call::ApplyLegal, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.apply_legal)(h, player.0, index, out) }
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        Ok(())
    }

    fn apply_legal_then_acting(
        &mut self,
        player: Owner,
        index: usize,
    ) -> Result<&[Acting], ActionError> {
        let mut list: *const Acting = std::ptr::null();
        let mut count = 0usize;
        let h = self.handle;
        self.call_hot(Call::ApplyLegalThenActing, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.apply_legal_then_acting)(h, player.0, index, &mut list, &mut count, out) }
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        // SAFETY: as in `acting`: the plugin's cache, unchanged while the slice borrows `self` mutably.
        Ok(unsafe { plugin_list(list, count) })
    }

    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<u64, PlayoutError> {
        // The whole playout runs inside the library: one crossing.
        let mut state: [u64; 2] = rng.clone().into();
        let (mut applied, mut player, mut index) = (0u64, 0u16, 0usize);
        let h = self.handle;
        let played = self.call_hot(Call::Playout, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe {
                (vt.playout)(
                    h,
                    &mut state,
                    max_actions,
                    &mut applied,
                    &mut player,
                    &mut index,
                    out,
                )
            }
        });
        if applied > 0 {
            self.events_fresh = false;
        }
        progress.applied += applied;
        // The plugin wrote back the state its generator reached and the last step it chose (also on
        // refusal or panic); a poisoned library was not called.
        if let Ok(reached) = GameRng::try_from(state) {
            *rng = reached;
        }
        if index != usize::MAX {
            progress.chosen = Some((Owner(player), index));
        }
        played.map(|()| applied).map_err(|f| PlayoutError::Refused {
            applied,
            player: Owner(player),
            index,
            error: action_error(f, &self.id),
        })
    }

    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError> {
        let h = self.handle;
        self.call(Call::ApplyJson, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.apply_json)(h, player.0, json.as_ptr(), json.len(), out) }
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        Ok(())
    }

    fn apply_json_reporting(
        &mut self,
        player: Owner,
        json: &str,
        events: EventsFor,
    ) -> Result<ActionReport<'_>, ActionError> {
        let (mut hash, mut list, mut count) = (0u64, std::ptr::null::<Acting>(), 0usize);
        let (h, seat) = (self.handle, abi::events_code(events));
        let bytes = self
            .call(Call::ApplyJsonReporting, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe {
                    (vt.apply_json_reporting)(
                        h,
                        player.0,
                        json.as_ptr(),
                        json.len(),
                        seat,
                        &mut hash,
                        &mut list,
                        &mut count,
                        out,
                    )
                }
            })
            .map_err(|f| action_error(f, &self.id))?;
        // Applied: an unreadable answer is a failure of the game, not a refusal.
        let events = postcard::from_bytes(&bytes).unwrap_or_else(|e| {
            self.unreadable(Call::ApplyJsonReporting, &e);
            Vec::new()
        });
        self.events_fresh = false;
        Ok(ActionReport {
            hash: StateHash(hash),
            events,
            // SAFETY: as in `acting`: the plugin's cache, unchanged while the slice borrows `self` mutably.
            acting: unsafe { plugin_list(list, count) },
        })
    }

    fn events(&mut self) -> &[Event] {
        if !self.events_fresh {
            let h = self.handle;
            self.events = self.decoded(
                Call::Events,
                |vt, out| {
                    // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                    // passed is valid for the whole call.
                    unsafe { (vt.events)(h, abi::EVERYONE, out) }
                },
                Vec::new,
            );
            self.events_fresh = true;
        }
        &self.events
    }

    fn state_hash(&self) -> StateHash {
        if self.handle.is_null() {
            self.failed(Call::StateHash, &Failure::Poisoned);
            return StateHash(0);
        }
        let mut hash = 0u64;
        let h = self.handle.cast_const();
        // Read-only: allowed on a poisoned library (see the module docs).
        match self.lib.call_anyway(Call::StateHash, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.state_hash)(h, &mut hash, out) }
        }) {
            Ok(_) => StateHash(hash),
            Err(f) => {
                self.failed(Call::StateHash, &f);
                StateHash(0)
            }
        }
    }

    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError> {
        let h = self.handle.cast_const();
        let code = abi::format_code(format);
        self.call(Call::Snapshot, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.snapshot)(h, code, out) }
        })
        .map_err(|f| setup_error(f, &self.id))
    }

    fn outcome(&self) -> Outcome {
        let h = self.handle.cast_const();
        self.decoded(
            Call::Outcome,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.outcome)(h, out) }
            },
            || Outcome::Ongoing,
        )
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        let h = self.handle.cast_const();
        let code = abi::audience_code(seat);
        self.decoded(
            Call::Table,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.table)(h, code, out) }
            },
            || Table::new(seat),
        )
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        let h = self.handle.cast_const();
        let code = abi::audience_code(seat);
        self.decoded(
            Call::Resources,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.resources)(h, code, out) }
            },
            Vec::new,
        )
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        let h = self.handle;
        let code = abi::audience_code(seat);
        self.decoded(
            Call::Events,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.events)(h, code, out) }
            },
            Vec::new,
        )
    }

    fn check_invariants(&self) -> Result<(), Violation> {
        let h = self.handle.cast_const();
        match self.call(Call::CheckInvariants, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.check_invariants)(h, out) }
        }) {
            Ok(_) => Ok(()),
            Err(Failure::Refused(b)) => Err(Violation(String::from_utf8_lossy(&b).into_owned())),
            Err(f @ (Failure::Panicked(_) | Failure::Poisoned)) => {
                Err(Violation(self.lib.describe(Call::CheckInvariants, &f)))
            }
        }
    }

    fn clone_game(&self) -> Box<dyn DynGame> {
        let mut copy: *mut GameHandle = std::ptr::null_mut();
        let h = self.handle.cast_const();
        let game = match self.call(Call::CloneGame, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.clone_game)(h, &mut copy, out) }
        }) {
            Ok(_) => RuntimeGame::new(self.lib, copy, Arc::clone(&self.id), self.players),
            Err(f) => {
                self.failed(Call::CloneGame, &f);
                let game = RuntimeGame::new(
                    self.lib,
                    std::ptr::null_mut(),
                    Arc::clone(&self.id),
                    self.players,
                );
                game.failed(Call::CloneGame, &f);
                game
            }
        };
        Box::new(game)
    }

    fn state(&self) -> Option<&dyn coffer_core::erased_serde::Serialize> {
        None
    }

    fn failure(&self) -> Option<String> {
        self.failure.borrow().clone()
    }
}

/// The entries a plugin listed (empty for a null or misaligned pointer).
///
/// # Safety
/// A non-null, aligned `list` points to `count` initialised entries that stay unchanged for `'a`.
#[inline]
unsafe fn plugin_list<'a>(list: *const Acting, count: usize) -> &'a [Acting] {
    if list.is_null() || !list.is_aligned() {
        return &[];
    }
    // SAFETY: the caller's promise, for a non-null aligned pointer.
    unsafe { std::slice::from_raw_parts(list, count) }
}

/// Whether the library an [`Origin::Library`] names panicked and is poisoned; `None` for a ruleset that was not
/// loaded at runtime by this module.
pub fn is_poisoned(origin: &Origin) -> Option<bool> {
    let Origin::Library(path) = origin else {
        return None;
    };
    let identity = identity_of(path)?;
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded
        .iter()
        .find(|l| l.file == identity)
        .map(|l| l.poisoned.load(Ordering::Relaxed))
}

#[cfg(test)]
mod tests {
    use super::{Ownership, PathProblem, User, component_problem};

    const ME: User = User {
        uid: 1000,
        gid: 1000,
    };

    fn own(mode: u32, uid: u32, gid: u32) -> Ownership {
        Ownership { mode, uid, gid }
    }

    #[test]
    fn a_component_owned_by_another_user_is_refused_one_owned_by_root_or_me_is_not() {
        for above in [false, true] {
            assert_eq!(
                component_problem(own(0o755, 1001, 1001), ME, above),
                Some(PathProblem::Owner {
                    uid: 1001,
                    expected: 1000
                })
            );
            assert_eq!(component_problem(own(0o755, 0, 0), ME, above), None);
            assert_eq!(component_problem(own(0o700, 1000, 1000), ME, above), None);
        }
    }

    #[test]
    fn a_component_writable_by_another_group_is_refused_by_my_own_group_it_is_not() {
        for above in [false, true] {
            assert_eq!(
                component_problem(own(0o775, 1000, 50), ME, above),
                Some(PathProblem::GroupWritable {
                    mode: 0o775,
                    gid: 50,
                    expected: 1000
                })
            );
            assert_eq!(component_problem(own(0o775, 1000, 1000), ME, above), None);
        }
    }

    #[test]
    fn a_sticky_world_writable_directory_is_accepted_only_above_the_file() {
        // As /tmp: root's, world-writable, sticky.
        let tmp = own(0o1777, 0, 0);
        assert_eq!(component_problem(tmp, ME, true), None);
        assert_eq!(
            component_problem(tmp, ME, false),
            Some(PathProblem::WorldWritable { mode: 0o1777 }),
            "a sticky plugin directory still lets anyone add a library"
        );
        assert_eq!(
            component_problem(own(0o777, 0, 0), ME, true),
            Some(PathProblem::WorldWritable { mode: 0o777 })
        );
        // Sticky does not excuse a foreign owner.
        assert!(matches!(
            component_problem(own(0o1777, 1001, 0), ME, true),
            Some(PathProblem::Owner { .. })
        ));
    }
}

//! Loads ruleset plugins at runtime (`libloading`) and wraps them in the same [`DynRuleset`] / [`DynGame`]
//! traits as statically linked rulesets, so nothing above this module can tell them apart.
//!
//! # Where plugins come from
//! Only from directories the user names: `--plugin-dir DIR` (repeatable) and [`PLUGIN_PATH_ENV`]
//! (`COFFER_PLUGIN_PATH`, a list in the platform's `PATH` syntax, see [`plugin_dirs_from_env`]). In each
//! directory every file ending in the platform's library suffix (`.so`, `.dylib`, `.dll`) is a candidate;
//! other files are ignored. A directory or a library file that anyone may write to is refused.
//!
//! # What is checked, in order, before anything of the library runs beyond its loader constructors
//! 1. the file is not world-writable, and (with a [`LockFile`]) its SHA-256 is the pinned one;
//! 2. it loads as a shared library;
//! 3. it exports the declaration symbol `coffer_plugin_<crate name>`, derived from the file name
//!    (`libcoffer_charges.so` → `coffer_plugin_coffer_charges`);
//! 4. the declaration's magic number, ABI version and size match this host's;
//! 5. its core version is semver-compatible with this host's ([`abi::core_compatible`]), its rustc version
//!    is this host's and its panic strategy is `unwind` like this host's.
//!
//! Each failure is its own [`LoadError`], naming the file and both sides' values; that library is skipped
//! and the others still load.
//!
//! # Lock file
//! A text file in the format `sha256sum` writes: one line per allowed library,
//! `<64 lowercase hex digits>  <file name>` (blank lines and lines starting with `#` are ignored). Generate
//! it with `sha256sum *.so > coffer-plugins.lock` in the plugin directory. With a lock file, a library whose
//! file name is not listed, or whose hash differs, is refused; the message shows both hashes.
//!
//! # Panics and poisoning
//! Every plugin call returns a status; a plugin that panicked is marked poisoned: the game it was applying
//! to is as it was before the action (the plugin rebuilds it, see `coffer_core::abi`), and every later call
//! into that library returns [`ActionError::Poisoned`] / [`SetupError::Poisoned`] (or an empty answer where
//! the trait has no error: no legal action, an empty view). Two read-only calls still reach a poisoned
//! library so the games can be inspected and compared: [`DynGame::state_hash`] and freeing a game. Other
//! libraries, and static rulesets, keep running.
//!
//! # Never unloaded
//! Loaded libraries are leaked on purpose and never `dlclose`d: thread-local destructors registered by the
//! plugin's `std` would run unmapped code at thread exit, the plugin's `tracing` dispatcher and `inventory`
//! registry are `'static`, and every game handle and function pointer the host holds points into the
//! library. A library loaded twice (same canonical path) is loaded once and shared.
#![allow(unsafe_code)]

use crate::registry::{Origin, Registry, RegistryError};
use coffer_core::abi::{
    self, Acting, Buf, Declaration, GameHandle, Header, LogSink, StrRef, VTable,
};
use coffer_core::{
    ActionError, Description, DynGame, DynRuleset, Event, Format, Outcome, Owner, ResourceView,
    Setup, SetupError, StateHash, Table, Violation,
};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The environment variable listing plugin directories (`PATH` syntax).
pub const PLUGIN_PATH_ENV: &str = "COFFER_PLUGIN_PATH";

/// Longest version string read from a declaration.
const MAX_VERSION_LEN: usize = 256;

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
    /// A declaration field is not readable text.
    #[error("{}: declaration field {field} is not UTF-8 text of at most {MAX_VERSION_LEN} bytes", path.display())]
    BadDeclaration {
        /// The library.
        path: PathBuf,
        /// The field.
        field: &'static str,
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

/// SHA-256 pins of allowed libraries (see the module docs for the format).
#[derive(Clone, Debug, Default)]
pub struct LockFile {
    path: PathBuf,
    pins: BTreeMap<String, String>,
}

impl LockFile {
    /// Reads a lock file.
    ///
    /// # Errors
    /// [`LoadError::LockFile`] if it cannot be read or a line is not `<sha256>  <file name>`.
    pub fn read(path: &Path) -> Result<LockFile, LoadError> {
        let text = std::fs::read_to_string(path).map_err(|e| LoadError::LockFile {
            path: path.to_owned(),
            line: 0,
            reason: e.to_string(),
        })?;
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
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = std::io::Read::read(&mut file, &mut chunk)?;
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

#[cfg(unix)]
fn check_not_world_writable(path: &Path, meta: &std::fs::Metadata) -> Result<(), LoadError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode();
    if mode & 0o002 != 0 {
        return Err(LoadError::WorldWritable {
            path: path.to_owned(),
            mode: mode & 0o7777,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_not_world_writable(_: &Path, _: &std::fs::Metadata) -> Result<(), LoadError> {
    Ok(())
}

/// One loaded library, leaked: never unloaded (see the module docs).
struct Library {
    path: PathBuf,
    name: String,
    vt: &'static VTable,
    poisoned: AtomicBool,
    _lib: &'static libloading::Library,
}

/// Every library loaded by this process, by canonical path.
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
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(Failure::Poisoned);
        }
        self.call_anyway(f)
    }

    /// As [`Library::call`] for the hot path, whose answers are all in out-parameters: success with an
    /// untouched out buffer returns at once, without building a byte vector.
    #[inline]
    fn call_hot(
        &'static self,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<(), Failure> {
        if self.poisoned.load(Ordering::Relaxed) {
            return Err(Failure::Poisoned);
        }
        let mut out = Buf::EMPTY;
        let status = f(self.vt, &mut out);
        if status == abi::OK && out.ptr.is_null() {
            return Ok(());
        }
        self.finish(status, out).map(drop)
    }

    /// As [`Library::call`], also when poisoned (read-only calls).
    fn call_anyway(
        &'static self,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        let mut out = Buf::EMPTY;
        let status = f(self.vt, &mut out);
        self.finish(status, out)
    }

    /// Reads a call's answer: copies the out buffer and frees it with the plugin's own function; a panic
    /// (or an unknown status) poisons the library.
    #[cold]
    fn finish(&'static self, status: abi::Status, mut out: Buf) -> Result<Vec<u8>, Failure> {
        let bytes = if out.ptr.is_null() {
            Vec::new()
        } else {
            // SAFETY: `out` was filled by the plugin during this call and is freed just below, once.
            let bytes = unsafe { out.as_slice() }.to_vec();
            (self.vt.free_buf)(&mut out);
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
                self.poisoned.store(true, Ordering::Relaxed);
                tracing::error!(plugin = %self.path.display(), "plugin panicked and is now poisoned: {message}");
                Err(Failure::Panicked(message))
            }
        }
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
        self.call(|vt, out| (vt.init)(&sink, out))
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
        self.call(|vt, out| (vt.ruleset_count)(&mut count, out))
            .map_err(|f| self.plugin_error("counting its rulesets", f))?;
        (0..count)
            .map(|index| {
                let bytes = self
                    .call(|vt, out| (vt.describe)(index, out))
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
    let canonical = std::fs::canonicalize(path).map_err(io)?;
    let meta = std::fs::metadata(&canonical).map_err(io)?;
    check_not_world_writable(path, &meta)?;
    if !meta.is_file() {
        return Err(LoadError::NotALibrary {
            path: path.to_owned(),
            reason: "not a regular file".to_owned(),
        });
    }
    if let Some(lock) = lock {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let actual = sha256_file(&canonical).map_err(io)?;
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
    let symbol = declaration_symbol(path).ok_or_else(|| LoadError::BadFileName {
        path: path.to_owned(),
    })?;

    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(lib) = loaded.iter().find(|l| l.path == canonical) {
        let lib: &'static Library = lib;
        drop(loaded);
        lib.init_logging()?;
        return lib.rulesets();
    }
    // Leaked at once: a library is never unloaded, even one that fails the checks below (its initialisers
    // ran; see the module docs).
    let lib: &'static libloading::Library = Box::leak(Box::new(open(path)?));
    let decl = declaration(path, lib, &symbol)?;
    check_declaration(path, decl)?;
    // SAFETY: the declaration was checked: same magic, ABI version and size, so `vtable` points to a
    // 'static `VTable` of this layout inside the library, which is never unloaded.
    let vt: &'static VTable = unsafe { &*decl.vtable };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let library: &'static Library = Box::leak(Box::new(Library {
        path: canonical,
        name,
        vt,
        poisoned: AtomicBool::new(false),
        _lib: lib,
    }));
    loaded.push(library);
    drop(loaded);
    library.init_logging()?;
    library.rulesets()
}

fn open(path: &Path) -> Result<libloading::Library, LoadError> {
    let not_a_library = |e: libloading::Error| LoadError::NotALibrary {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    #[cfg(unix)]
    {
        use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
        // SAFETY: loading runs the library's initialisers; the user named this directory as trusted plugin
        // code, and the file passed the permission and lock-file checks. RTLD_NOW resolves every symbol now,
        // so a broken library fails here rather than at a later call.
        unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
            .map(Into::into)
            .map_err(not_a_library)
    }
    #[cfg(not(unix))]
    {
        // SAFETY: as above: trusted, checked plugin code.
        unsafe { libloading::Library::new(path) }.map_err(not_a_library)
    }
}

fn declaration(
    path: &Path,
    lib: &'static libloading::Library,
    symbol: &str,
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
    // SAFETY: by the naming convention this symbol is a `Declaration`, which starts with a 16-byte `Header`
    // readable whatever the ABI version; unaligned read in case a foreign library placed it oddly.
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
    if !address.cast::<Declaration>().is_aligned() {
        return Err(no_symbol());
    }
    // SAFETY: magic, ABI version and size match, so the symbol is a whole `Declaration` of this layout; it
    // is aligned (checked) and lives as long as the library, which is never unloaded.
    Ok(unsafe { &*address.cast::<Declaration>() })
}

fn check_declaration(path: &Path, decl: &Declaration) -> Result<(), LoadError> {
    let text = |field: &'static str, s: StrRef| {
        // SAFETY: the declaration's strings point to 'static data of the library (never unloaded); the
        // length is bounded and the bytes are checked as UTF-8.
        unsafe { s.to_str(MAX_VERSION_LEN) }.ok_or_else(|| LoadError::BadDeclaration {
            path: path.to_owned(),
            field,
        })
    };
    let core = text("core_version", decl.core_version)?;
    if !abi::core_compatible(abi::CORE_VERSION, core) {
        return Err(LoadError::CoreVersion {
            path: path.to_owned(),
            plugin: core.to_owned(),
            host: abi::CORE_VERSION.to_owned(),
        });
    }
    let rustc = text("rustc_version", decl.rustc_version)?;
    if rustc != abi::RUSTC_VERSION {
        return Err(LoadError::RustcVersion {
            path: path.to_owned(),
            plugin: rustc.to_owned(),
            host: abi::RUSTC_VERSION.to_owned(),
        });
    }
    let panic = text("panic_strategy", decl.panic_strategy)?;
    if panic != abi::PANIC_STRATEGY || panic != "unwind" {
        return Err(LoadError::PanicStrategy {
            path: path.to_owned(),
            plugin: panic.to_owned(),
            host: abi::PANIC_STRATEGY.to_owned(),
        });
    }
    if decl.vtable.is_null() {
        return Err(LoadError::BadDeclaration {
            path: path.to_owned(),
            field: "vtable",
        });
    }
    Ok(())
}

impl Registry {
    /// Loads every plugin library in `dirs` (in order; files of a directory by name) and registers their
    /// rulesets with [`Origin::Library`]. A refused directory, library or ruleset is skipped and reported;
    /// the rest load. With `lock`, only libraries pinned in it load (see [`LockFile`]).
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
        for dir in dirs {
            let dir = dir.as_ref();
            match library_files(dir) {
                Ok(files) => {
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
        self.load_file_into(file, lock, &mut report);
        report
    }

    fn load_file_into(&mut self, file: &Path, lock: Option<&LockFile>, report: &mut LoadReport) {
        match load_library(file, lock) {
            Ok(rulesets) => {
                for ruleset in rulesets {
                    let key = ruleset.description().key();
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

/// The candidate library files of a plugin directory, by name, after checking the directory.
fn library_files(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
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
    check_not_world_writable(dir, &meta)?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if is_library_name(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// A runtime-loaded ruleset.
struct RuntimeRuleset {
    lib: &'static Library,
    index: usize,
    description: Description,
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
        let id: Arc<str> = Arc::from(self.description.id.as_str());
        let mut game = RuntimeGame {
            lib: self.lib,
            handle,
            id,
            players: 0,
            events: Vec::new(),
            events_fresh: true,
            acting_raw: Vec::new(),
            acting: Vec::new(),
        };
        let mut players = 0u16;
        let h = handle.cast_const();
        self.lib
            .call(|vt, out| (vt.players)(h, &mut players, out))
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
            .call(|vt, out| (vt.new_game)(self.index, json.as_ptr(), json.len(), &mut handle, out))
            .map_err(|f| setup_error(f, &self.description.id))?;
        self.game(handle)
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let mut handle: *mut GameHandle = std::ptr::null_mut();
        let code = abi::format_code(format);
        self.lib
            .call(|vt, out| {
                (vt.restore)(
                    self.index,
                    code,
                    bytes.as_ptr(),
                    bytes.len(),
                    &mut handle,
                    out,
                )
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
}

// SAFETY: the handle is owned by this value alone and the plugin's game is a `DynGame`, which is `Send`;
// calls on it are serialised by `&mut self` / the host's per-game lock.
unsafe impl Send for RuntimeGame {}

impl RuntimeGame {
    #[inline]
    fn call_hot(&self, f: impl FnOnce(&VTable, *mut Buf) -> abi::Status) -> Result<(), Failure> {
        if self.handle.is_null() {
            return Err(Failure::Poisoned);
        }
        self.lib.call_hot(f)
    }

    fn call(&self, f: impl FnOnce(&VTable, *mut Buf) -> abi::Status) -> Result<Vec<u8>, Failure> {
        if self.handle.is_null() {
            return Err(Failure::Poisoned);
        }
        self.lib.call(f)
    }
}

impl Drop for RuntimeGame {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            // The plugin's own function frees its memory (a panic in it is caught on the plugin side).
            (self.lib.vt.free_game)(self.handle);
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
        match self.call_hot(|vt, out| (vt.legal_actions)(h, player.0, &mut count, out)) {
            Ok(_) => count,
            Err(_) => 0,
        }
    }

    fn acting(&mut self) -> &[Acting] {
        let mut list: *const Acting = std::ptr::null();
        let mut count = 0usize;
        let h = self.handle;
        match self.call_hot(|vt, out| (vt.acting)(h, &mut list, &mut count, out)) {
            // SAFETY: the plugin wrote a pointer to `count` entries of its game's cache, which stay
            // unchanged until the next call on this game (`VTable::acting`); the slice borrows `self`
            // mutably, so no other call on the game can happen while it lives.
            Ok(()) => unsafe { plugin_list(list, count) },
            Err(_) => &[],
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
        let n = match self.call_hot(|vt, out| (vt.to_act)(h, players, capacity, &mut count, out)) {
            Ok(_) => count.min(capacity),
            Err(_) => 0,
        };
        self.acting.clear();
        self.acting
            .extend(self.acting_raw[..n].iter().map(|&p| Owner(p)));
        &self.acting
    }

    fn legal_action_json(&self, index: usize) -> Option<String> {
        let h = self.handle.cast_const();
        self.call(|vt, out| (vt.legal_action_json)(h, index, out))
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
    }

    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError> {
        let h = self.handle;
        self.call_hot(|vt, out| (vt.apply_legal)(h, player.0, index, out))
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
        self.call_hot(|vt, out| {
            (vt.apply_legal_then_acting)(h, player.0, index, &mut list, &mut count, out)
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        // SAFETY: as in `acting`: the plugin's cache, unchanged while the slice borrows `self` mutably.
        Ok(unsafe { plugin_list(list, count) })
    }

    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError> {
        let h = self.handle;
        self.call(|vt, out| (vt.apply_json)(h, player.0, json.as_ptr(), json.len(), out))
            .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        Ok(())
    }

    fn events(&mut self) -> &[Event] {
        if !self.events_fresh {
            let h = self.handle;
            self.events = self
                .call(|vt, out| (vt.events)(h, abi::EVERYONE, out))
                .ok()
                .and_then(|b| postcard::from_bytes(&b).ok())
                .unwrap_or_default();
            self.events_fresh = true;
        }
        &self.events
    }

    fn state_hash(&self) -> StateHash {
        if self.handle.is_null() {
            return StateHash(0);
        }
        let mut hash = 0u64;
        let h = self.handle.cast_const();
        // Read-only: allowed on a poisoned library (see the module docs).
        match self
            .lib
            .call_anyway(|vt, out| (vt.state_hash)(h, &mut hash, out))
        {
            Ok(_) => StateHash(hash),
            Err(_) => StateHash(0),
        }
    }

    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError> {
        let h = self.handle.cast_const();
        let code = abi::format_code(format);
        self.call(|vt, out| (vt.snapshot)(h, code, out))
            .map_err(|f| setup_error(f, &self.id))
    }

    fn outcome(&self) -> Outcome {
        let h = self.handle.cast_const();
        self.call(|vt, out| (vt.outcome)(h, out))
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or(Outcome::Ongoing)
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        let h = self.handle.cast_const();
        let code = abi::audience_code(seat);
        self.call(|vt, out| (vt.table)(h, code, out))
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or_else(|| Table::new(seat))
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        let h = self.handle.cast_const();
        let code = abi::audience_code(seat);
        self.call(|vt, out| (vt.resources)(h, code, out))
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or_default()
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        let h = self.handle;
        let code = abi::audience_code(seat);
        self.call(|vt, out| (vt.events)(h, code, out))
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or_default()
    }

    fn check_invariants(&self) -> Result<(), Violation> {
        let h = self.handle.cast_const();
        match self.call(|vt, out| (vt.check_invariants)(h, out)) {
            Ok(_) => Ok(()),
            Err(Failure::Refused(b)) => Err(Violation(String::from_utf8_lossy(&b).into_owned())),
            Err(Failure::Panicked(m)) => Err(Violation(format!(
                "the plugin panicked checking invariants: {m}"
            ))),
            Err(Failure::Poisoned) => Err(Violation(format!(
                "ruleset '{}' is poisoned (it panicked earlier) and is no longer called",
                self.id
            ))),
        }
    }

    fn clone_game(&self) -> Box<dyn DynGame> {
        let mut copy: *mut GameHandle = std::ptr::null_mut();
        let h = self.handle.cast_const();
        if self
            .call(|vt, out| (vt.clone_game)(h, &mut copy, out))
            .is_err()
        {
            copy = std::ptr::null_mut();
        }
        Box::new(RuntimeGame {
            lib: self.lib,
            handle: copy,
            id: Arc::clone(&self.id),
            players: self.players,
            events: Vec::new(),
            events_fresh: true,
            acting_raw: Vec::new(),
            acting: Vec::new(),
        })
    }

    fn state(&self) -> Option<&dyn coffer_core::erased_serde::Serialize> {
        None
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
    let canonical = std::fs::canonicalize(path).ok()?;
    let loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    loaded
        .iter()
        .find(|l| l.path == canonical)
        .map(|l| l.poisoned.load(Ordering::Relaxed))
}

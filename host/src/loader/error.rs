//! Why a plugin directory or library was refused ([`LoadError`], [`PathProblem`]) and what loading a
//! set of directories did ([`LoadReport`]).

use crate::origin::RegistryError;
use std::fmt;
use std::path::PathBuf;

use crate::loader::limits::{DEADLINE_ENV, DEFAULT_DEADLINE, MAX_DEADLINE, MIN_DEADLINE};

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
    /// A `.wasm` file larger than [`wasm::MAX_MODULE_BYTES`](crate::wasm::MAX_MODULE_BYTES).
    #[error("refusing {}: {size} bytes, more than the {max} a ruleset module may have", path.display())]
    ModuleTooLarge {
        /// The module.
        path: PathBuf,
        /// Its size.
        size: u64,
        /// The most allowed.
        max: u64,
    },
    /// A `.wasm` file that does not compile or instantiate.
    #[error("{} is not a loadable WebAssembly module: {reason}", path.display())]
    NotAModule {
        /// The module.
        path: PathBuf,
        /// What the engine said.
        reason: String,
    },
    /// A module importing something outside the contract.
    #[error("refusing {}: it imports '{module}.{name}', which a ruleset module may not use (the only \
             import is coffer.panicked: no files, network, clock, environment or randomness)", path.display())]
    ModuleImport {
        /// The module.
        path: PathBuf,
        /// The import's module name.
        module: String,
        /// The import's name.
        name: String,
    },
    /// A module missing an export of the contract.
    #[error("{} is not a Coffer ruleset module: it exports no '{missing}' (a ruleset crate invokes \
             coffer_core::plugin! and is built with --target wasm32-unknown-unknown)", path.display())]
    ModuleExport {
        /// The module.
        path: PathBuf,
        /// The first missing export.
        missing: String,
    },
    /// A module of another version of the WebAssembly contract.
    #[error("{}: WebAssembly contract version {module}, this host speaks version {host}; rebuild the module \
             against this host's coffer-core", path.display())]
    ModuleAbiVersion {
        /// The module.
        path: PathBuf,
        /// The module's version.
        module: u32,
        /// The host's.
        host: u32,
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

//! Loads ruleset plugins at runtime (`libloading`) and wraps them in the same [`DynRuleset`] / [`DynGame`]
//! traits as statically linked rulesets, so nothing above this module can tell them apart.
//!
//! `docs/SECURITY.md` ("Native plugins and the loader") says what this module guarantees and what it
//! cannot: a native library runs with the host's rights, and cannot be sandboxed or preempted in-process.
//!
//! # Where plugins come from
//! Only from directories the user names: `--plugin-dir DIR` (repeatable) and [`PLUGIN_PATH_ENV`]
//! (`COFFER_PLUGIN_PATH`, a list in the platform's `PATH` syntax, see [`plugin_dirs_from_env`]). In each
//! directory every file ending in the platform's library suffix (`.so`, `.dylib`, `.dll`) or in `.wasm`
//! (a sandboxed WebAssembly module, loaded by [`crate::wasm`] after the same path and lock-file checks)
//! is a candidate; other files are ignored. A directory is read once however often it is named, and a file reached
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
//!
//! # Where the code lives
//! - [`paths`]: plugin directories, candidate files and the path policy; [`lock`]: the lock file;
//! - [`open`]: loading one library file; [`declaration`]: the checks of what it declares; [`plugin`]:
//!   loading a file of either form;
//! - [`library`]: a loaded library and every call into it; [`calls`]: which call each thread is in;
//! - [`watchdog`]: the call deadline; `handlers`: the crash and exit handlers; [`limits`]: its bounds and exit statuses;
//! - [`runtime_ruleset`] and [`runtime_game`]: the ABI-backed [`DynRuleset`] and [`DynGame`];
//! - [`probe`]: probing libraries in child processes; [`error`]: what can be refused.
//!
//! Registering what a library holds is the registry's work ([`Registry::load_dirs`](crate::Registry::load_dirs)).

#[allow(unsafe_code)]
pub(crate) mod calls;
#[allow(unsafe_code)]
pub(crate) mod declaration;
pub(crate) mod error;
#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
#[allow(unsafe_code)]
pub(crate) mod handlers;
#[allow(unsafe_code)]
pub(crate) mod library;
pub(crate) mod limits;
pub(crate) mod lock;
#[allow(unsafe_code)]
pub(crate) mod open;
pub(crate) mod paths;
pub(crate) mod plugin;
pub(crate) mod probe;
#[allow(unsafe_code)]
pub(crate) mod runtime_game;
#[allow(unsafe_code)]
pub(crate) mod runtime_ruleset;
#[cfg(unix)]
#[allow(unsafe_code)]
pub(crate) mod sys;
pub(crate) mod watchdog;

/// Where no crash handler can be installed: none is, and the process exits the ordinary way.
#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
pub(crate) mod handlers {
    /// Installs nothing.
    pub fn install() {}

    /// Ends the process with `status`.
    pub fn exit_now(status: i32) -> ! {
        std::process::exit(status)
    }
}

pub use declaration::MAX_VERSION_LEN;
pub use error::{LoadError, LoadReport, PathProblem};
pub use library::{is_poisoned, set_after_hash_hook};
pub use limits::{
    DEADLINE_ENV, DEFAULT_DEADLINE, EXIT_CRASHED, EXIT_DEADLINE, EXIT_EXITED, MAX_DEADLINE,
    MIN_DEADLINE,
};
pub use lock::{LockFile, MAX_LOCK_FILE, sha256_file};
pub use open::load_library;
pub use paths::{
    MODULE_SUFFIX, PLUGIN_PATH_ENV, check_path, declaration_symbol, is_module_name,
    plugin_dirs_from_env,
};
pub use plugin::load_plugin;
pub use probe::{
    CheckReport, PROBE_ENV, PROBE_LOCK_ENV, ProbeCommand, Verdict, check_dir, probe_child_main,
};
pub use watchdog::{call_deadline, contain_overdue_calls, deadline_from_env, set_call_deadline};

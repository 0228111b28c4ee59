//! Sandboxed rulesets: WebAssembly modules run by `wasmtime`, wrapped in the same [`DynRuleset`] and
//! [`DynGame`] traits as static and native rulesets, so nothing above the registry tells them apart.
//!
//! `docs/SECURITY.md` ("WebAssembly rulesets") states the trust model; this module is how it holds.
//!
//! # What a module is
//! A ruleset crate built for `wasm32-unknown-unknown` (`cargo xtask wasm`, or `cargo build --target
//! wasm32-unknown-unknown --release`): [`coffer_core::abi::plugin!`](coffer_core::plugin) emits the
//! exports of the contract described in [`coffer_core::abi::guest`]. A `.wasm` file in a plugin
//! directory passes the same path policy and lock file as a native library, then:
//! 1. its size is at most [`MAX_MODULE_BYTES`];
//! 2. it compiles, once per content and machine: the compiled code is kept by sha256 in the process and
//!    on disk ([`cache_dir`]; `COFFER_WASM_CACHE=off` turns the disk cache off, see [`cache`]);
//! 3. it imports nothing but `coffer.panicked` (no files, network, clock, environment or randomness:
//!    WASI is not linked at all), and a refused import is named;
//! 4. it exports its memory and every function of [`guest::EXPORTS`](coffer_core::abi::guest::EXPORTS);
//! 5. its contract version is this host's and its core version is semver-compatible with this host's.
//!
//! # Containment
//! - **Deadline.** Every call runs under an epoch deadline ([`WasmOptions::deadline`]): a ticker thread
//!   advances the engine's epoch every [`TICK`], and a call still running after the deadline traps
//!   within two ticks of it.
//! - **Memory.** Each instance's linear memory is capped ([`WasmOptions::memory_cap`]); growing past it
//!   fails, the module's allocator aborts and the call traps.
//! - **Stack.** WebAssembly's own stack is capped by the engine; overflowing it traps.
//! - **Traps.** A panic, `abort`, `exit`, `unreachable`, out-of-bounds access, stack overflow, deadline or
//!   memory cap traps the call: the game that made the call is stopped ([`ActionError::Stopped`] naming
//!   the ruleset, the call and the cause) and every later call on it answers that error. The instance
//!   it ran in is thrown away; the other games that lived in it are rebuilt, on their next call, in a
//!   fresh instance from their checkpoint (their setup or a snapshot) and the actions applied since,
//!   so they go on with exactly the same state (same state hash).
//!
//! # Instances
//! A module instance holds many games ([`WasmOptions::games_per_instance`], one module's games spread
//! over four instances per core before instances fill, so games on different threads seldom wait
//! for each other). A fresh instance costs about a megabyte (its stack and data), so an instance
//! per game would cost every idle game that much; shared, an idle game costs its state in the module's
//! memory and its checkpoint here. `docs/PERFORMANCE.md` has the figures.
//!
//! # Where the code lives
//! - [`engine`]: the engine, its epoch ticker and the compiled-module cache in memory; [`cache`]: on
//!   disk (the one module with unsafe code: loading compiled code is trusting it);
//! - [`module`]: loading and checking a `.wasm` file, and the [`DynRuleset`] over it;
//! - [`instance`]: one live instance and every call into it; the pool of instances of a module;
//! - [`track`]: a game's checkpoint and the actions since; [`shared`]: what a ruleset's games share,
//!   and rebuilding a game in a fresh instance;
//! - [`game`]: the [`DynGame`] over a game in an instance.
//!
//! [`DynRuleset`]: coffer_core::DynRuleset
//! [`DynGame`]: coffer_core::DynGame
//! [`ActionError::Stopped`]: coffer_core::ActionError::Stopped

pub(crate) mod cache;
pub(crate) mod engine;
pub(crate) mod game;
pub(crate) mod instance;
pub(crate) mod module;
pub(crate) mod shared;
pub(crate) mod track;

pub use cache::{CACHE_ENV, cache_dir};
pub use engine::{Source, TICK, compile_timed, compiled_modules};
pub use instance::INSTANCES_PER_CORE;
pub use module::{load_module, load_module_with};

use std::time::Duration;

/// The largest `.wasm` file loaded.
pub const MAX_MODULE_BYTES: u64 = 64 << 20;

/// How WebAssembly rulesets are run: their deadline, memory cap and instance policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WasmOptions {
    /// How long one call may run before it is stopped (and its game with it).
    pub deadline: Duration,
    /// The most linear memory one instance may have, in bytes.
    pub memory_cap: u64,
    /// The most games one instance holds (1: an instance per game).
    pub games_per_instance: u32,
}

/// The default deadline of a call into a module: generous for building a large game, short enough that
/// a game waiting behind a spinning one in the same instance waits little.
pub const DEFAULT_WASM_DEADLINE: Duration = Duration::from_secs(2);

/// The default memory cap of an instance: 256 MiB.
pub const DEFAULT_MEMORY_CAP: u64 = 256 << 20;

/// The default number of games an instance holds.
pub const DEFAULT_GAMES_PER_INSTANCE: u32 = 512;

impl Default for WasmOptions {
    fn default() -> WasmOptions {
        WasmOptions {
            deadline: DEFAULT_WASM_DEADLINE,
            memory_cap: DEFAULT_MEMORY_CAP,
            games_per_instance: DEFAULT_GAMES_PER_INSTANCE,
        }
    }
}

impl WasmOptions {
    /// The options within their bounds: the deadline within
    /// [`loader::MIN_DEADLINE`](crate::loader::MIN_DEADLINE)..=[`loader::MAX_DEADLINE`](crate::loader::MAX_DEADLINE),
    /// the memory cap from 1 MiB to 4 GiB, at least one game per instance.
    pub fn clamped(self) -> WasmOptions {
        WasmOptions {
            deadline: self
                .deadline
                .clamp(crate::loader::MIN_DEADLINE, crate::loader::MAX_DEADLINE),
            memory_cap: self.memory_cap.clamp(1 << 20, 4 << 30),
            games_per_instance: self.games_per_instance.max(1),
        }
    }
}

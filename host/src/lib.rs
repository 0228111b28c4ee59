//! # coffer-host
//!
//! Hosts Coffer games: a [`Registry`] of rulesets (statically linked or loaded at runtime from plugin
//! libraries), a [`Host`] running many games of different rulesets at once, verified [save files](save),
//! terminal [rendering](render) of resources, and the `coffer` command built on all of them.
//!
//! Use this crate to run games; to write a ruleset, depend on `coffer-core` instead.
//!
//! ```
//! use coffer_host::{Host, Registry};
//! // Rulesets come from linked plugin crates (`Registry::with_static`) or plugin libraries loaded at runtime.
//! let host = Host::new(Registry::with_static().unwrap());
//! for entry in host.registry().iter() {
//!     println!("{} ({})", entry.key(), entry.origin);
//! }
//! ```

mod cli;
pub mod host;
pub mod loader;
mod origin;
pub mod registry;
pub mod render;
pub mod save;
pub mod simulate;

/// What the command-line programs share, not a library API (no stability promise, hidden from the
/// docs): the `coffer` command's entry points, called by its binary and by the workspace's command
/// tests, and the plugin options and registry loading `coffer-server` takes from it so that both
/// programs accept the same flags. To run games, use [`Host`], [`HostedGame`] and [`Registry`].
#[doc(hidden)]
pub mod programs {
    pub use crate::cli::{
        Global, OutputFormat, Status, load_registry, main, plugin_dirs, run_args,
    };
}

pub use host::{GameId, Host, HostError, HostedGame, LoggedAction, names_for, refusal_reason};
pub use registry::{Entry, Origin, Registry, RegistryError};
pub use save::{SaveError, SaveFile};

/// The README's Rust examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

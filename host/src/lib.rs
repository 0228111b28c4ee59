//! # coffer-host
//!
//! Hosts Coffer games: a [`Registry`] of rulesets (statically linked or loaded at runtime from plugin
//! libraries), a [`Host`] running many games of different rulesets at once, verified [save files](save),
//! terminal [rendering](render) of resources and the [simulation engine](simulate). The `coffer` command built
//! on all of them is the `coffer-cli` crate.
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

pub mod bots;
mod game;
pub mod host;
pub mod loader;
mod origin;
pub mod registry;
pub mod render;
pub mod save;
pub mod simulate;
pub mod wasm;

pub use game::{GameId, HostError, HostedGame, LoggedAction, names_for, refusal_reason};
pub use host::Host;
pub use registry::{Entry, Form, Origin, Registry, RegistryError};
pub use save::{SaveError, SaveFile};

/// The README's Rust examples, compiled and run as doctests so they cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

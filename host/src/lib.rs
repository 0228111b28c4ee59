//! # coffer-host
//!
//! Hosts Coffer games: a [`Registry`] of rulesets (statically linked or loaded at runtime from plugin
//! libraries), a `Host` running many games of different rulesets at once, verified save files,
//! terminal rendering of resources, and the `coffer` command built on all of them.
//!
//! Use this crate to run games; to write a ruleset, depend on `coffer-core` instead.

pub mod registry;

pub use registry::{Entry, Origin, Registry, RegistryError};

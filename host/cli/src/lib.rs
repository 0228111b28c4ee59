//! # coffer-cli
//!
//! The `coffer` command: runs games of rulesets loaded at runtime from plugin libraries, built on the
//! `coffer-host` library. Not a library API: the binary calls [`main`]; the workspace's command tests call
//! [`run_args`]; `coffer-server` takes [`Global`], [`load_registry`], [`plugin_dirs`] and [`OutputFormat`]
//! from here so that both programs accept the same plugin options. To run games from Rust, use
//! `coffer_host::{Host, HostedGame, Registry}`.
//!
//! The command links no ruleset: every ruleset comes from plugin libraries loaded at runtime from the
//! directories the user names (`--plugin-dir`, `COFFER_PLUGIN_PATH`), optionally pinned by a lock file.
//!
//! # Where the code lives
//! - `output`: stdout without panics on a closed pipe, and the [`Status`] a command ends with;
//! - `args`: the command line (clap); `run`: the process and the dispatch to each subcommand;
//! - `plugins`: plugin options, `plugins check`, `rulesets`, `describe`;
//! - `games`: `new`, `act`; `play`: `play`, `show`, `log`, `replay`, `legal`;
//! - `demo`: `demo`; `simulate`: `simulate` and its progress bar.

#[macro_use]
mod output;
mod args;
mod demo;
mod games;
mod play;
mod plugins;
mod run;
mod simulate;

pub use args::{Global, OutputFormat};
pub use output::Status;
pub use plugins::{load_registry, plugin_dirs, wasm_options};
pub use run::{main, program_beside, run_args};

//! The host crate's integration tests: registry, host, save files, rendering, and the `coffer` command.

mod cli;
mod cli_limits;
mod devices;
mod fixture;
mod host;
mod registry;
mod render;
mod save;
mod words;

//! The `coffer` command's integration tests: the binary run end to end with the real plugins loaded at
//! runtime from their cdylibs.

mod bots;
mod cli_limits;
mod command;
mod devices;
mod games;
mod plugins;
mod scripts;
mod support;
mod words;

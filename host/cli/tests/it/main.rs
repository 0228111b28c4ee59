//! The `coffer` command's integration tests: the binary run end to end with the real plugins loaded at
//! runtime from their cdylibs.

mod cli;
mod cli_limits;
mod devices;
mod words;

//! The host crate's integration tests: registry, host, save files and rendering (the `coffer` command's
//! tests are coffer-cli's).

mod fixture;
mod host;
mod registry;
mod render;
mod save;
mod save_writes;

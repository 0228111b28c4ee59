//! Cross-crate tests: one binary, one module per topic.
mod cli_faults;
mod guide;
mod loader;
mod parity;
mod readable;
mod reset;
mod server_isolation;
mod shape;
mod simulate;
mod tidy;
mod undo;
mod wasm;
mod xtask;

//! Cross-crate tests: one binary, one module per topic.
mod simulate;
mod loader;
mod parity;
mod tidy;

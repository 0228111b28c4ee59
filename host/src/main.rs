//! The `coffer` command.
fn main() {}

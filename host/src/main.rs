//! The `coffer` command: runs games of rulesets loaded at runtime from plugin libraries.
//!
//! The command lives in the library's private `cli` module; this file only hands it the process.

use std::process::ExitCode;

fn main() -> ExitCode {
    coffer_host::programs::main()
}

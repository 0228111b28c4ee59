//! The `coffer` command: runs games of rulesets loaded at runtime from plugin libraries.
//!
//! The command lives in the `coffer-cli` library; this file only hands it the process.

use std::process::ExitCode;

fn main() -> ExitCode {
    coffer_cli::main()
}

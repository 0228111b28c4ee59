//! The `coffer` command: runs games of rulesets loaded at runtime from plugin libraries.
//!
//! Everything lives in [`coffer_host::cli`]; this file only hands it the process.

use std::process::ExitCode;

fn main() -> ExitCode {
    coffer_host::cli::main()
}

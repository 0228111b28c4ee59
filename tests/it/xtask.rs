//! `cargo xtask wasm`'s library: every ruleset crate of the workspace builds for wasm32-unknown-unknown
//! and is written as `<package>.wasm`, a WebAssembly module. Needs the wasm32-unknown-unknown target;
//! without it the tests print how to install it and skip, unless `COFFER_WASM_REQUIRED` is set (CI).

use coffer_tests::{ruleset_packages, wasm_fixture, wasm_modules};
use std::path::Path;

/// The first four bytes of every WebAssembly module.
const WASM_MAGIC: &[u8; 4] = b"\0asm";

fn assert_module(path: &Path) {
    let bytes =
        std::fs::read(path).unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    assert!(
        bytes.len() > WASM_MAGIC.len() && bytes.starts_with(WASM_MAGIC),
        "{} is not a WebAssembly module ({} bytes, starting {:?})",
        path.display(),
        bytes.len(),
        &bytes[..bytes.len().min(4)]
    );
}

#[test]
fn every_ruleset_crate_builds_to_a_webassembly_module() {
    let packages = ruleset_packages();
    for known in [
        "coffer-charges",
        "coffer-command-tokens",
        "coffer-story-acts",
    ] {
        assert!(
            packages.iter().any(|p| p == known),
            "{known} is not found as a ruleset (a member whose library is a cdylib): {packages:?}"
        );
    }
    let Some(dir) = wasm_modules() else { return };
    for package in &packages {
        assert_module(&dir.join(format!("{package}.wasm")));
    }
}

#[test]
fn a_fixture_crate_builds_to_a_webassembly_module() {
    let Some(module) = wasm_fixture("good") else {
        return;
    };
    assert_eq!(
        module.file_name().and_then(|n| n.to_str()),
        Some("coffer-fixture-good.wasm")
    );
    assert_module(&module);
}

//! Loading one plugin file of either form: a native library ([`load_library`]) or, by its `.wasm`
//! suffix, a WebAssembly module ([`crate::wasm::load_module_with`]).

use coffer_core::DynRuleset;
use std::path::Path;
use std::sync::Arc;

use crate::loader::error::LoadError;
use crate::loader::lock::LockFile;
use crate::loader::open::load_library;
use crate::origin::Origin;

/// Loads one plugin file, a native library or (by its `.wasm` suffix) a WebAssembly module, and returns
/// its rulesets with their origin. A module runs with the `wasm` options.
///
/// # Errors
/// The [`LoadError`] of the first failed check; the file is then not used.
pub fn load_plugin(
    path: &Path,
    lock: Option<&LockFile>,
    wasm: crate::wasm::WasmOptions,
) -> Result<(Vec<Arc<dyn DynRuleset>>, Origin), LoadError> {
    if crate::loader::paths::is_module_name(path) {
        crate::wasm::load_module_with(path, lock, wasm)
            .map(|r| (r, Origin::Module(path.to_owned())))
    } else {
        load_library(path, lock).map(|r| (r, Origin::Library(path.to_owned())))
    }
}

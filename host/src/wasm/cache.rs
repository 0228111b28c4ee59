//! The on-disk cache of compiled modules: a command that loads a module compiles it once per machine,
//! not once per run. One file per module content and engine, `<sha256 of the module>-<engine>.cwasm`, in
//! [`cache_dir`]; written atomically (a temporary file renamed), mode 0600.
//!
//! Loading compiled code is trusting it: a compiled module is machine code the engine runs as is. So
//! the cache directory obeys the plugin directories' path policy (nobody but you or root can have put a
//! file there), and a file is read into memory before it is used (a file changed afterwards changes
//! nothing). Anyone who can write your cache directory can already run code as you.

#![allow(unsafe_code)]

use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};
use wasmtime::{Engine, Module};

use crate::loader::paths::{PathKind, check_path_as};

/// The environment variable naming the cache directory, or `off` to compile in every run.
pub const CACHE_ENV: &str = "COFFER_WASM_CACHE";

/// Where compiled modules are kept: [`CACHE_ENV`], else `$XDG_CACHE_HOME/coffer/wasm`, else
/// `$HOME/.cache/coffer/wasm`; `None` when the cache is off or no home is known.
pub fn cache_dir() -> Option<PathBuf> {
    match std::env::var_os(CACHE_ENV) {
        Some(dir) if dir == "off" => None,
        Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
        _ => std::env::var_os("XDG_CACHE_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
            .map(|base| base.join("coffer").join("wasm")),
    }
}

/// The file a module's compiled code is kept in.
fn entry(dir: &Path, engine: &Engine, sha256: &[u8; 32]) -> PathBuf {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    engine.precompile_compatibility_hash().hash(&mut hasher);
    let module: String = sha256.iter().map(|b| format!("{b:02x}")).collect();
    dir.join(format!("{module}-{:016x}.cwasm", hasher.finish()))
}

/// The module compiled from bytes whose sha256 is `sha256`, if the cache holds it.
pub(crate) fn find(engine: &Engine, sha256: &[u8; 32]) -> Option<Module> {
    let dir = cache_dir()?;
    // The directory must obey the path policy, or nothing in it is used.
    check_path_as(&dir, PathKind::PluginDir).ok()?;
    let path = entry(&dir, engine, sha256);
    check_path_as(&path, PathKind::File).ok()?;
    let bytes = std::fs::read(&path).ok()?;
    // SAFETY: the bytes were written by `keep` below from `Module::serialize` of this engine's
    // configuration (the file name carries the module's hash and the engine's compatibility hash, and
    // `deserialize` checks the engine again); they come from a directory only this user or root can
    // write (checked above), and are a copy in memory, so no later change of the file reaches them.
    unsafe { Module::deserialize(engine, &bytes) }.ok()
}

/// Keeps a compiled module for later runs; a cache that cannot be written is skipped silently (the
/// module is compiled again next time).
pub(crate) fn keep(engine: &Engine, sha256: &[u8; 32], module: &Module) {
    let Some(dir) = cache_dir() else { return };
    let _ = write(&dir, &entry(&dir, engine, sha256), module);
}

fn write(dir: &Path, path: &Path, module: &Module) -> std::io::Result<()> {
    let bytes = module.serialize().map_err(std::io::Error::other)?;
    create_private(dir)?;
    let mut file = tempfile::Builder::new()
        .prefix(".coffer-wasm-")
        .tempfile_in(dir)?;
    file.write_all(&bytes)?;
    file.as_file().sync_all()?;
    file.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Creates the directory (and its parents) readable by this user alone.
fn create_private(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

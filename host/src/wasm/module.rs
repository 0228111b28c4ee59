//! Loading one `.wasm` file: checked, hashed and pinned like a native library, compiled (or found
//! compiled), its imports and exports checked, its rulesets described; and the [`DynRuleset`] over
//! each.

use coffer_core::abi::guest::{EXPORTS, PANIC_IMPORT, WASM_ABI_VERSION};
use coffer_core::abi::{self, OK};
use coffer_core::{Description, DynGame, DynRuleset, Format, Setup, SetupError};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::loader::error::LoadError;
use crate::loader::lock::{LockFile, check_pin};
use crate::loader::open::open_checked;
use crate::wasm::engine::compile;
use crate::wasm::game::WasmGame;
use crate::wasm::instance::{Fault, Live, Pool, Reply};
use crate::wasm::shared::Shared;
use crate::wasm::track::{Checkpoint, Track};
use crate::wasm::{MAX_MODULE_BYTES, WasmOptions};

/// A new game from `checkpoint` in an instance of the pool, made by `f` (`new_game` or `restore`).
fn make(
    shared: &Arc<Shared>,
    checkpoint: Checkpoint,
    call: &'static str,
    f: impl FnOnce(&mut Live) -> Result<Reply, Fault>,
) -> Result<Box<dyn DynGame>, SetupError> {
    let cell = shared.pool.cell_for_new_game();
    let made = {
        let mut slot = cell.lock();
        if slot.live.is_none() {
            match Live::new(&shared.pool.pre, shared.pool.options) {
                Ok(live) => {
                    slot.live = Some(live);
                    slot.generation += 1;
                }
                Err(fault) => {
                    drop(slot);
                    shared.pool.left(&cell);
                    return Err(SetupError::Stopped(shared.stopped_message(call, &fault)));
                }
            }
        }
        let generation = slot.generation;
        let live = slot.live.as_mut().expect("made above");
        let answered = f(live).and_then(|reply| {
            if reply.status != OK {
                return Ok(Err(live.out(&reply)?));
            }
            let handle = reply.value;
            let players = live.call(|f, s| f.players.call(s, (handle,)))?.value as u16;
            Ok(Ok((handle, players)))
        });
        if answered.is_err() {
            slot.live = None;
        }
        answered.map(|made| made.map(|(handle, players)| (generation, handle, players)))
    };
    match made {
        Ok(Ok((generation, handle, players))) => {
            let track = Track::new(generation, handle, checkpoint);
            Ok(Box::new(WasmGame::new(
                Arc::clone(shared),
                cell,
                players,
                track,
            )))
        }
        Ok(Err(bytes)) => {
            shared.pool.left(&cell);
            Err(serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                SetupError::Config(String::from_utf8_lossy(&bytes).into_owned())
            }))
        }
        Err(fault) => {
            shared.pool.left(&cell);
            Err(SetupError::Stopped(shared.stopped_message(call, &fault)))
        }
    }
}

/// A ruleset of a WebAssembly module.
pub(crate) struct WasmRuleset {
    shared: Arc<Shared>,
}

impl DynRuleset for WasmRuleset {
    fn description(&self) -> &Description {
        &self.shared.description
    }

    fn new_game(&self, setup: &Setup) -> Result<Box<dyn DynGame>, SetupError> {
        let json = serde_json::to_vec(setup).map_err(|e| SetupError::Config(e.to_string()))?;
        let index = self.shared.index;
        let checkpoint = Checkpoint::Setup(json.clone().into());
        make(&self.shared, checkpoint, "new_game", |live| {
            let len = live.input(&json)?;
            live.call(|f, s| f.new_game.call(s, (index, len)))
        })
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let index = self.shared.index;
        let code = u32::from(abi::format_code(format));
        let checkpoint = Checkpoint::Snapshot(format, bytes.into());
        make(&self.shared, checkpoint, "restore", |live| {
            let len = live.input(bytes)?;
            live.call(|f, s| f.restore.call(s, (index, code, len)))
        })
    }
}

/// Reads a module file under the path policy, at most [`MAX_MODULE_BYTES`], and checks its sha256
/// against `lock`.
fn read_checked(
    path: &Path,
    lock: Option<&LockFile>,
) -> Result<(PathBuf, Vec<u8>, [u8; 32]), LoadError> {
    let io = |e| LoadError::Io {
        path: path.to_owned(),
        source: e,
    };
    // Opened once: the checks, the hash and the compiler all see these bytes.
    let (canonical, file, meta) = open_checked(path)?;
    if meta.len() > MAX_MODULE_BYTES {
        return Err(LoadError::ModuleTooLarge {
            path: path.to_owned(),
            size: meta.len(),
            max: MAX_MODULE_BYTES,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_MODULE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(io)?;
    if bytes.len() as u64 > MAX_MODULE_BYTES {
        return Err(LoadError::ModuleTooLarge {
            path: path.to_owned(),
            size: bytes.len() as u64,
            max: MAX_MODULE_BYTES,
        });
    }
    let sha256: [u8; 32] = Sha256::digest(&bytes).into();
    if let Some(lock) = lock {
        let actual: String = sha256.iter().map(|b| format!("{b:02x}")).collect();
        check_pin(path, lock, actual)?;
    }
    Ok((canonical, bytes, sha256))
}

/// Loads one `.wasm` file and returns its rulesets, wrapped as [`DynRuleset`]s (see the module docs of
/// [`crate::wasm`] for every check). Loading the same content again reuses its compiled code.
///
/// # Errors
/// The [`LoadError`] of the first failed check; the module is then not used.
pub fn load_module(
    path: &Path,
    lock: Option<&LockFile>,
) -> Result<Vec<Arc<dyn DynRuleset>>, LoadError> {
    load_module_with(path, lock, WasmOptions::default())
}

/// [`load_module`] with [`WasmOptions`] of its own (clamped, see [`WasmOptions::clamped`]) instead of
/// the defaults.
///
/// # Errors
/// As [`load_module`].
pub fn load_module_with(
    path: &Path,
    lock: Option<&LockFile>,
    options: WasmOptions,
) -> Result<Vec<Arc<dyn DynRuleset>>, LoadError> {
    let options = options.clamped();
    let (canonical, bytes, sha256) = read_checked(path, lock)?;
    let invalid = |reason: String| LoadError::NotAModule {
        path: path.to_owned(),
        reason,
    };
    let compiled = compile(&bytes, sha256).map_err(|e| invalid(format!("{e:#}")))?;
    tracing::debug!(
        target: "coffer_host::wasm",
        module = %path.display(),
        source = ?compiled.source,
        micros = compiled.took.as_micros() as u64,
        "compiled"
    );
    let module = compiled.module;
    for import in module.imports() {
        if (import.module(), import.name()) != PANIC_IMPORT {
            return Err(LoadError::ModuleImport {
                path: path.to_owned(),
                module: import.module().to_owned(),
                name: import.name().to_owned(),
            });
        }
    }
    for export in std::iter::once("memory").chain(EXPORTS) {
        if module.get_export(export).is_none() {
            return Err(LoadError::ModuleExport {
                path: path.to_owned(),
                missing: export.to_owned(),
            });
        }
    }
    let pool = Arc::new(Pool::new(&module, options).map_err(|e| invalid(format!("{e:#}")))?);
    describe_all(path, &canonical, &pool)
}

/// Asks a fresh instance for the module's versions and descriptions.
fn describe_all(
    path: &Path,
    canonical: &Path,
    pool: &Arc<Pool>,
) -> Result<Vec<Arc<dyn DynRuleset>>, LoadError> {
    let failed = |during: &'static str, fault: Fault| LoadError::Plugin {
        path: path.to_owned(),
        during,
        message: fault.cause(),
    };
    let mut live = Live::new(&pool.pre, pool.options).map_err(|f| failed("starting", f))?;
    let version = live
        .run(|f, s| f.wasm_abi_version.call(s, ()))
        .map_err(|f| failed("starting", f))?;
    if version != WASM_ABI_VERSION {
        return Err(LoadError::ModuleAbiVersion {
            path: path.to_owned(),
            module: version,
            host: WASM_ABI_VERSION,
        });
    }
    let reply = live
        .call(|f, s| f.core_version.call(s, ()))
        .map_err(|f| failed("starting", f))?;
    let core = live.out(&reply).map_err(|f| failed("starting", f))?;
    let core = String::from_utf8_lossy(&core).into_owned();
    if !abi::core_compatible(abi::CORE_VERSION, &core) {
        return Err(LoadError::CoreVersion {
            path: path.to_owned(),
            plugin: core,
            host: abi::CORE_VERSION.to_owned(),
        });
    }
    let count = live
        .call(|f, s| f.ruleset_count.call(s, ()))
        .map_err(|f| failed("counting its rulesets", f))?
        .value;
    (0..count)
        .map(|index| {
            let reply = live
                .call(|f, s| f.describe.call(s, (index,)))
                .map_err(|f| failed("describing", f))?;
            let bytes = live.out(&reply).map_err(|f| failed("describing", f))?;
            let description: Description =
                serde_json::from_slice(&bytes).map_err(|e| LoadError::Plugin {
                    path: path.to_owned(),
                    during: "describing",
                    message: format!("unreadable description: {e}"),
                })?;
            let shared = Shared {
                path: canonical.to_owned(),
                index,
                id: Arc::from(description.id.as_str()),
                description,
                pool: Arc::clone(pool),
            };
            Ok(Arc::new(WasmRuleset {
                shared: Arc::new(shared),
            }) as Arc<dyn DynRuleset>)
        })
        .collect()
}

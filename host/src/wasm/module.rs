//! Loading one `.wasm` file: checked, hashed and pinned like a native library, compiled (or found
//! compiled), its imports and exports checked, its rulesets described; and the [`DynRuleset`] over
//! each.

use coffer_core::abi::guest::{EXPORTS, PANIC_IMPORT, WASM_ABI_VERSION};
use coffer_core::abi::{self, OK};
use coffer_core::{Description, DynGame, DynRuleset, Format, Setup, SetupError};
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::loader::error::{LoadError, PathProblem};
use crate::loader::lock::{LockFile, check_pin};
use crate::loader::paths::{PathKind, check_path_as, check_target};
use crate::wasm::engine::compile;
use crate::wasm::game::{Checkpoint, Logged, Track, WasmGame};
use crate::wasm::instance::{Fault, Live, Pool};
use crate::wasm::{MAX_MODULE_BYTES, WasmOptions, wasm_options};

/// What a ruleset of a module and its games share.
pub(crate) struct Shared {
    /// The module's file, resolved.
    pub(crate) path: PathBuf,
    pub(crate) index: u32,
    pub(crate) description: Description,
    pub(crate) id: Arc<str>,
    pub(crate) pool: Arc<Pool>,
}

impl Shared {
    /// The ruleset and its module, for messages.
    pub(crate) fn named(&self) -> String {
        format!(
            "ruleset '{}' (WebAssembly module {})",
            self.id,
            self.path.display()
        )
    }

    /// Why a game was stopped, in words naming the ruleset, the call and the cause.
    pub(crate) fn stopped_message(&self, call: &str, fault: &Fault) -> String {
        format!(
            "{} was stopped in the call `{call}`: {}; this game takes no more actions, the others go on",
            self.named(),
            fault.cause()
        )
    }

    /// Makes the game again in `live` from its checkpoint and the actions since; returns its handle.
    pub(crate) fn rebuild(&self, live: &mut Live, track: &Track) -> Result<u32, Fault> {
        let diverged = |what: &str| Fault::Trapped(format!("it did not {what} the same way again"));
        let reply = match &track.checkpoint {
            Checkpoint::Setup(json) => {
                let len = live.input(json)?;
                live.call(|f, s| f.new_game.call(s, (self.index, len)))?
            }
            Checkpoint::Snapshot(format, bytes) => {
                let len = live.input(bytes)?;
                let code = u32::from(abi::format_code(*format));
                live.call(|f, s| f.restore.call(s, (self.index, code, len)))?
            }
        };
        if reply.status != OK {
            return Err(diverged("set the game up"));
        }
        let handle = reply.value;
        for logged in &track.log {
            let reply = match *logged {
                Logged::Legal(player, index) => {
                    live.call(|f, s| f.apply_legal.call(s, (handle, u32::from(player), index)))?
                }
                Logged::Json(player, n) => {
                    let len = live.input(track.texts[n as usize].as_bytes())?;
                    live.call(|f, s| f.apply_json.call(s, (handle, u32::from(player), len)))?
                }
                Logged::Playout(n) => {
                    let ([high, low], applied) = track.playouts[n as usize];
                    let reply =
                        live.call(|f, s| f.playout.call(s, (handle, high, low, applied)))?;
                    if reply.wide != applied {
                        return Err(diverged("play a playout"));
                    }
                    reply
                }
            };
            if reply.status != OK {
                return Err(diverged("apply an action"));
            }
        }
        Ok(handle)
    }

    /// A new game from `checkpoint` in an instance of the pool, made by `f` (`new_game` or `restore`).
    fn make(
        self: &Arc<Self>,
        checkpoint: Checkpoint,
        call: &'static str,
        f: impl FnOnce(&mut Live) -> Result<crate::wasm::instance::Reply, Fault>,
    ) -> Result<Box<dyn DynGame>, SetupError> {
        let cell = self.pool.cell_for_new_game();
        let made = {
            let mut slot = cell.lock();
            if slot.live.is_none() {
                match Live::new(&self.pool.pre, self.pool.options) {
                    Ok(live) => {
                        slot.live = Some(live);
                        slot.generation += 1;
                    }
                    Err(fault) => {
                        drop(slot);
                        self.pool.left(&cell);
                        return Err(SetupError::Stopped(self.stopped_message(call, &fault)));
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
                    Arc::clone(self),
                    cell,
                    players,
                    track,
                )))
            }
            Ok(Err(bytes)) => {
                self.pool.left(&cell);
                Err(serde_json::from_slice(&bytes).unwrap_or_else(|_| {
                    SetupError::Config(String::from_utf8_lossy(&bytes).into_owned())
                }))
            }
            Err(fault) => {
                self.pool.left(&cell);
                Err(SetupError::Stopped(self.stopped_message(call, &fault)))
            }
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
        self.shared.make(checkpoint, "new_game", |live| {
            let len = live.input(&json)?;
            live.call(|f, s| f.new_game.call(s, (index, len)))
        })
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let index = self.shared.index;
        let code = u32::from(abi::format_code(format));
        let checkpoint = Checkpoint::Snapshot(format, bytes.into());
        self.shared.make(checkpoint, "restore", |live| {
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
    let canonical = check_path_as(path, PathKind::File)?;
    // Opened once: the checks, the hash and the compiler all see these bytes.
    let file = File::open(&canonical).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: canonical,
            problem: PathProblem::NotAFile,
        });
    }
    check_target(path, &meta)?;
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
    load_module_with(path, lock, wasm_options())
}

/// [`load_module`] with its own [`WasmOptions`] (clamped as [`set_wasm_options`](crate::wasm::set_wasm_options)
/// clamps them) instead of the process's.
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
        cached = compiled.cached,
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

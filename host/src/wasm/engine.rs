//! The one `wasmtime` engine of the process, the thread that advances its epoch every [`TICK`], and the
//! cache of compiled modules (by the sha256 of their bytes).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use wasmtime::{Config, Engine, Module, OptLevel};

use crate::wasm::cache;

/// How often the engine's epoch advances: a call past its deadline is stopped within two ticks of it.
pub const TICK: Duration = Duration::from_millis(10);

/// The most WebAssembly stack a call may use before it traps (a stack overflow).
pub(crate) const MAX_WASM_STACK: usize = 1 << 20;

/// The process's engine; its epoch ticker starts with it.
pub(crate) fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        config
            .epoch_interruption(true)
            .max_wasm_stack(MAX_WASM_STACK)
            .cranelift_opt_level(OptLevel::Speed);
        let engine = Engine::new(&config).expect("the engine's configuration is valid");
        let ticking = engine.clone();
        std::thread::Builder::new()
            .name("coffer-wasm-epoch".into())
            .spawn(move || tick(&ticking))
            .expect("the epoch thread starts");
        engine
    })
}

/// Advances the epoch every [`TICK`], on a fixed schedule so that late wake-ups do not add up.
fn tick(engine: &Engine) {
    let start = Instant::now();
    let mut ticks: u32 = 0;
    loop {
        ticks = ticks.wrapping_add(1);
        let next = start + TICK * ticks;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        engine.increment_epoch();
    }
}

/// The epoch ticks a deadline gives: enough that a call is never stopped before it, and stopped at
/// most two ticks after it (a call starts anywhere within a tick).
pub(crate) fn deadline_ticks(deadline: Duration) -> u64 {
    let ticks = deadline.as_nanos().div_ceil(TICK.as_nanos());
    u64::try_from(ticks).unwrap_or(u64::MAX / 2) + 1
}

/// Where a compiled module came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Compiled now.
    Compiled,
    /// Compiled earlier in this process.
    Memory,
    /// Compiled by an earlier run, read from the on-disk cache ([`cache_dir`](crate::wasm::cache_dir)).
    Disk,
}

/// A compiled module and how long compiling (or finding it) took.
pub(crate) struct Compiled {
    pub(crate) module: Module,
    pub(crate) took: Duration,
    pub(crate) source: Source,
}

static CACHE: Mutex<Option<HashMap<[u8; 32], Module>>> = Mutex::new(None);

fn remember(sha256: [u8; 32], module: &Module) {
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(sha256, module.clone());
}

/// Compiles `bytes`, or finds them compiled already (same sha256): in this process, then on disk.
pub(crate) fn compile(bytes: &[u8], sha256: [u8; 32]) -> Result<Compiled, wasmtime::Error> {
    let started = Instant::now();
    let found = CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&sha256)
        .cloned();
    let (module, source) = match found {
        Some(module) => (module, Source::Memory),
        None => match cache::find(engine(), &sha256) {
            Some(module) => {
                remember(sha256, &module);
                (module, Source::Disk)
            }
            None => {
                let module = Module::new(engine(), bytes)?;
                cache::keep(engine(), &sha256, &module);
                remember(sha256, &module);
                (module, Source::Compiled)
            }
        },
    };
    Ok(Compiled {
        module,
        took: started.elapsed(),
        source,
    })
}

/// How many distinct modules this process holds compiled.
pub fn compiled_modules() -> usize {
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or(0, HashMap::len)
}

/// Compiles (or finds compiled) the module in `bytes`, and says from where and how long it took: what
/// [`load_module`](crate::wasm::load_module) does first, for benchmarks and `coffer plugins check`.
///
/// # Errors
/// The engine's error for bytes that are not a valid module.
pub fn compile_timed(bytes: &[u8]) -> Result<(Source, Duration), wasmtime::Error> {
    use sha2::Digest;
    let sha256: [u8; 32] = sha2::Sha256::digest(bytes).into();
    compile(bytes, sha256).map(|c| (c.source, c.took))
}

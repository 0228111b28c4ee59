//! The one `wasmtime` engine of the process, the thread that advances its epoch every [`TICK`], and the
//! cache of compiled modules (by the sha256 of their bytes).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};
use wasmtime::{Config, Engine, Module, OptLevel};

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

/// A compiled module and how long compiling (or finding it) took.
pub(crate) struct Compiled {
    pub(crate) module: Module,
    pub(crate) took: Duration,
    pub(crate) cached: bool,
}

static CACHE: Mutex<Option<HashMap<[u8; 32], Module>>> = Mutex::new(None);

/// Compiles `bytes`, or finds them compiled already (same sha256).
pub(crate) fn compile(bytes: &[u8], sha256: [u8; 32]) -> Result<Compiled, wasmtime::Error> {
    let started = Instant::now();
    if let Some(module) = CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .get(&sha256)
    {
        return Ok(Compiled {
            module: module.clone(),
            took: started.elapsed(),
            cached: true,
        });
    }
    let module = Module::new(engine(), bytes)?;
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get_or_insert_with(HashMap::new)
        .insert(sha256, module.clone());
    Ok(Compiled {
        module,
        took: started.elapsed(),
        cached: false,
    })
}

/// How many distinct modules this process has compiled.
pub fn compiled_modules() -> usize {
    CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or(0, HashMap::len)
}

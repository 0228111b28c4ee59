//! One live instance of a module and every call into it ([`Live`]), under a deadline and a memory cap,
//! with its traps named; the instances of a module ([`Pool`]) and the slot a game's instance lives in
//! ([`Cell`]), thrown away after a trap and made again on the next call.

use coffer_core::abi::guest::{PANIC_IMPORT, REPLY_SIZE};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use wasmtime::{
    Caller, InstancePre, Linker, Memory, Module, ResourceLimiter, Store, Trap, TypedFunc,
};

use crate::wasm::WasmOptions;
use crate::wasm::engine::{deadline_ticks, engine};

/// The longest panic message kept from a module.
const MAX_PANIC_MESSAGE: usize = 4096;

/// What the host keeps per instance: its memory cap and what the module told it before a trap.
pub(crate) struct HostState {
    memory_cap: u64,
    /// A memory growth was refused (the cap): the trap that follows is the cap's.
    pub(crate) denied: bool,
    /// The message of the module's last panic.
    pub(crate) panic: Option<String>,
}

impl ResourceLimiter for HostState {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = desired as u64 <= self.memory_cap;
        if !allowed {
            self.denied = true;
        }
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 1 << 16)
    }
}

/// The linker of the contract: its one import, the panic messenger.
pub(crate) fn linker() -> wasmtime::Result<Linker<HostState>> {
    let mut linker = Linker::new(engine());
    linker.func_wrap(
        PANIC_IMPORT.0,
        PANIC_IMPORT.1,
        |mut caller: Caller<'_, HostState>, ptr: u32, len: u32| {
            let message = caller
                .get_export("memory")
                .and_then(|e| e.into_memory())
                .and_then(|memory| {
                    let data = memory.data(&caller);
                    let start = ptr as usize;
                    let end = start.checked_add((len as usize).min(MAX_PANIC_MESSAGE))?;
                    data.get(start..end)
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                })
                .unwrap_or_else(|| "a panic whose message could not be read".to_owned());
            caller.data_mut().panic = Some(message);
        },
    )?;
    Ok(linker)
}

/// Why a call did not answer: the instance is broken and must not be called again.
#[derive(Clone, Debug)]
pub(crate) enum Fault {
    /// It ran past its deadline.
    Deadline(std::time::Duration),
    /// It trapped; the words say why.
    Trapped(String),
}

impl Fault {
    /// The cause, in words.
    pub(crate) fn cause(&self) -> String {
        match self {
            Fault::Deadline(d) => format!("it ran past its deadline of {}", seconds(*d)),
            Fault::Trapped(why) => why.clone(),
        }
    }
}

fn seconds(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    if s >= 1.0 {
        format!("{s} s")
    } else {
        format!("{} ms", d.as_millis())
    }
}

/// The answer of a call: its status and the reply the module wrote.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Reply {
    pub(crate) status: u32,
    pub(crate) out_ptr: u32,
    pub(crate) out_len: u32,
    pub(crate) list_ptr: u32,
    pub(crate) list_len: u32,
    pub(crate) value: u32,
    pub(crate) index: u32,
    pub(crate) wide: u64,
    pub(crate) rng: [u64; 2],
}

macro_rules! funcs {
    ($($name:ident : ($($p:ty),*) -> $r:ty),+ $(,)?) => {
        /// The module's exported functions.
        pub(crate) struct Funcs {
            $(pub(crate) $name: TypedFunc<($($p,)*), $r>,)+
        }

        impl Funcs {
            fn of(instance: &wasmtime::Instance, store: &mut Store<HostState>) -> wasmtime::Result<Funcs> {
                Ok(Funcs {
                    $($name: instance.get_typed_func(&mut *store, concat!("coffer_", stringify!($name)))?,)+
                })
            }
        }
    };
}

funcs! {
    wasm_abi_version: () -> u32,
    init: () -> u32,
    input: (u32) -> u32,
    core_version: () -> u32,
    ruleset_count: () -> u32,
    describe: (u32) -> u32,
    new_game: (u32, u32) -> u32,
    restore: (u32, u32, u32) -> u32,
    free_game: (u32) -> u32,
    players: (u32) -> u32,
    legal_actions: (u32, u32) -> u32,
    to_act: (u32) -> u32,
    acting: (u32) -> u32,
    legal_action_json: (u32, u32) -> u32,
    apply_legal: (u32, u32, u32) -> u32,
    apply_legal_then_acting: (u32, u32, u32) -> u32,
    playout: (u32, u64, u64, u64) -> u32,
    apply_json: (u32, u32, u32) -> u32,
    apply_json_reporting: (u32, u32, u32, i32) -> u32,
    events: (u32, i32) -> u32,
    state_hash: (u32) -> u32,
    snapshot: (u32, u32) -> u32,
    outcome: (u32) -> u32,
    table: (u32, i32) -> u32,
    resources: (u32, i32) -> u32,
    check_invariants: (u32) -> u32,
    clone_game: (u32) -> u32,
    reset: (u32, u32) -> u32,
}

/// One live instance of a module.
pub(crate) struct Live {
    pub(crate) store: Store<HostState>,
    memory: Memory,
    reply_at: usize,
    f: Funcs,
    deadline: std::time::Duration,
    ticks: u64,
}

impl Live {
    /// A fresh instance, initialised (`coffer_init`).
    pub(crate) fn new(pre: &InstancePre<HostState>, options: WasmOptions) -> Result<Live, Fault> {
        let mut store = Store::new(
            engine(),
            HostState {
                memory_cap: options.memory_cap,
                denied: false,
                panic: None,
            },
        );
        store.limiter(|state| state);
        store.epoch_deadline_trap();
        let ticks = deadline_ticks(options.deadline);
        store.set_epoch_deadline(ticks);
        let made = pre.instantiate(&mut store).and_then(|instance| {
            let memory = instance
                .get_memory(&mut store, "memory")
                .ok_or_else(|| wasmtime::Error::msg("the module exports no memory"))?;
            let f = Funcs::of(&instance, &mut store)?;
            Ok((memory, f))
        });
        let (memory, f) = match made {
            Ok(made) => made,
            Err(e) => return Err(classify(&store, &e, options.deadline)),
        };
        let mut live = Live {
            store,
            memory,
            reply_at: 0,
            f,
            deadline: options.deadline,
            ticks,
        };
        let at = live.run(|f, store| f.init.call(store, ()))?;
        live.reply_at = at as usize;
        Ok(live)
    }

    /// Runs one call under the deadline; a trap is named.
    pub(crate) fn run<T>(
        &mut self,
        call: impl FnOnce(&Funcs, &mut Store<HostState>) -> wasmtime::Result<T>,
    ) -> Result<T, Fault> {
        self.store.set_epoch_deadline(self.ticks);
        call(&self.f, &mut self.store).map_err(|e| classify(&self.store, &e, self.deadline))
    }

    /// Runs a call that answers a status, and reads the reply.
    pub(crate) fn call(
        &mut self,
        call: impl FnOnce(&Funcs, &mut Store<HostState>) -> wasmtime::Result<u32>,
    ) -> Result<Reply, Fault> {
        let status = self.run(call)?;
        let mut reply = self.reply()?;
        reply.status = status;
        Ok(reply)
    }

    /// The reply the module wrote (see `coffer_core::abi::guest::Reply`).
    fn reply(&self) -> Result<Reply, Fault> {
        let data = self.memory.data(&self.store);
        let bytes = self
            .reply_at
            .checked_add(REPLY_SIZE)
            .and_then(|end| data.get(self.reply_at..end))
            .ok_or_else(|| Fault::Trapped("its reply lies outside its memory".to_owned()))?;
        let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
        let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
        Ok(Reply {
            status: 0,
            out_ptr: u32_at(0),
            out_len: u32_at(4),
            list_ptr: u32_at(8),
            list_len: u32_at(12),
            value: u32_at(16),
            index: u32_at(20),
            wide: u64_at(24),
            rng: [u64_at(32), u64_at(40)],
        })
    }

    /// The bytes the reply points to.
    pub(crate) fn out(&self, reply: &Reply) -> Result<Vec<u8>, Fault> {
        let start = reply.out_ptr as usize;
        self.memory
            .data(&self.store)
            .get(start..start + reply.out_len as usize)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| Fault::Trapped("its answer lies outside its memory".to_owned()))
    }

    /// The list of who may act the reply points to.
    pub(crate) fn list(
        &self,
        reply: &Reply,
        into: &mut Vec<coffer_core::Acting>,
    ) -> Result<(), Fault> {
        let start = reply.list_ptr as usize;
        let bytes = (reply.list_len as usize)
            .checked_mul(8)
            .and_then(|len| self.memory.data(&self.store).get(start..start + len))
            .ok_or_else(|| {
                Fault::Trapped("its list of who may act lies outside its memory".to_owned())
            })?;
        into.clear();
        into.extend(bytes.chunks_exact(8).map(|entry| coffer_core::Acting {
            player: u16::from_le_bytes([entry[0], entry[1]]),
            legal: u32::from_le_bytes([entry[4], entry[5], entry[6], entry[7]]) as usize,
        }));
        Ok(())
    }

    /// Writes `bytes` to the module's input buffer; returns their length for the call that reads them.
    pub(crate) fn input(&mut self, bytes: &[u8]) -> Result<u32, Fault> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| Fault::Trapped("an input larger than 4 GiB".to_owned()))?;
        let at = self.run(|f, store| f.input.call(store, (len,)))?;
        self.memory
            .write(&mut self.store, at as usize, bytes)
            .map_err(|_| Fault::Trapped("its input buffer lies outside its memory".to_owned()))?;
        Ok(len)
    }
}

/// Names a failed call's cause.
fn classify(
    store: &Store<HostState>,
    error: &wasmtime::Error,
    deadline: std::time::Duration,
) -> Fault {
    let state = store.data();
    match error.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => Fault::Deadline(deadline),
        Some(trap) => {
            let why = if let Some(message) = &state.panic {
                format!("it panicked: {message}")
            } else if state.denied {
                format!(
                    "it ran out of memory (an instance may use {} MiB)",
                    state.memory_cap >> 20
                )
            } else {
                match trap {
                    Trap::StackOverflow => "its stack overflowed".to_owned(),
                    Trap::MemoryOutOfBounds => "it read or wrote outside its memory".to_owned(),
                    Trap::UnreachableCodeReached => {
                        "it aborted (an unreachable instruction: abort, exit or a failed allocation)"
                            .to_owned()
                    }
                    Trap::IntegerDivisionByZero => "it divided by zero".to_owned(),
                    other => format!("it trapped: {other}"),
                }
            };
            Fault::Trapped(why)
        }
        None => Fault::Trapped(format!("it failed: {error}")),
    }
}

/// The slot one instance lives in, shared by its games: the live instance (none after a trap, until
/// the next call makes one) and its generation (how many instances it has had).
pub(crate) struct Cell {
    pub(crate) slot: Mutex<Slot>,
    /// How many games live here.
    pub(crate) games: AtomicU32,
}

/// What a [`Cell`]'s lock guards.
pub(crate) struct Slot {
    pub(crate) live: Option<Live>,
    pub(crate) generation: u64,
}

impl Cell {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The machine's cores, asked once: `available_parallelism` reads the process's cgroup files on Linux,
/// which costs more than a short game's whole playout.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// How many instances per core one module's games spread over before instances fill up: a call waits
/// when another thread is in its game's instance, and with one instance per core two of a busy
/// server's calls met there about half the time (measured with the load generator at 100 games: 12-20%
/// fewer actions a second than with four per core). An instance costs about a megabyte, so this is a few
/// megabytes per module on a busy server, and nothing more with many games (they fill the instances).
pub const INSTANCES_PER_CORE: usize = 4;

/// The instances of one module.
pub(crate) struct Pool {
    pub(crate) pre: InstancePre<HostState>,
    pub(crate) options: WasmOptions,
    cells: Mutex<Vec<Arc<Cell>>>,
}

impl Pool {
    pub(crate) fn new(module: &Module, options: WasmOptions) -> wasmtime::Result<Pool> {
        let pre = linker()?.instantiate_pre(module)?;
        Ok(Pool {
            pre,
            options,
            cells: Mutex::new(Vec::new()),
        })
    }

    /// The instance a new game goes to: the least full, a new one while there are fewer than
    /// [`INSTANCES_PER_CORE`] per core or all are full.
    pub(crate) fn cell_for_new_game(&self) -> Arc<Cell> {
        let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
        let least = cells
            .iter()
            .min_by_key(|c| c.games.load(Ordering::Relaxed))
            .cloned();
        let cores = cores();
        let cell = match least {
            Some(cell)
                if cell.games.load(Ordering::Relaxed) < self.options.games_per_instance
                    && (cells.len() >= cores * INSTANCES_PER_CORE
                        || cell.games.load(Ordering::Relaxed) == 0) =>
            {
                cell
            }
            _ => {
                let cell = Arc::new(Cell {
                    slot: Mutex::new(Slot {
                        live: None,
                        generation: 0,
                    }),
                    games: AtomicU32::new(0),
                });
                cells.push(Arc::clone(&cell));
                cell
            }
        };
        cell.games.fetch_add(1, Ordering::Relaxed);
        cell
    }

    /// A game left `cell`; an empty instance is dropped (its memory given back).
    pub(crate) fn left(&self, cell: &Arc<Cell>) {
        if cell.games.fetch_sub(1, Ordering::Relaxed) == 1 {
            let mut cells = self.cells.lock().unwrap_or_else(|e| e.into_inner());
            if cell.games.load(Ordering::Relaxed) == 0 {
                cells.retain(|c| !Arc::ptr_eq(c, cell));
                cell.lock().live = None;
            }
        }
    }
}

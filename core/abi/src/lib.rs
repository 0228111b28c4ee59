//! The exporting side of Coffer's C ABI: what every plugin `cdylib` exports so a host can load it at runtime.
//!
//! # What crosses the boundary
//! Only `#[repr(C)]` data, `extern "C"` functions and byte buffers. No Rust trait object, `Box`, `String`,
//! `Vec` or `TypeId` crosses: the host and the plugin each have their own copy of `coffer-core`, `std`,
//! `serde` and `tracing`, and their layouts are not promised to agree.
//!
//! # The declaration symbol
//! [`plugin!`](../coffer_core/macro.plugin.html) exports one [`Declaration`] per crate under the name
//! `coffer_plugin_<crate name>` (e.g. `coffer_plugin_coffer_charges` for the library
//! `libcoffer_charges.so`). The per-crate name lets several plugin rlibs be linked into one binary without a
//! duplicate-symbol error, and lets the host derive the symbol from the library's file name. The
//! declaration starts with a fixed [`Header`] (magic number, ABI version, the declaration's own size), then
//! the core version (semver), the rustc version and the panic strategy, then a pointer to the [`VTable`].
//! The host reads the header first and the rest only when the header matches, and calls nothing before the
//! versions were checked.
//!
//! # The functions
//! The [`VTable`] holds non-generic `extern "C"` functions defined here. Inside a plugin library, they look
//! up that library's own rulesets through its own `inventory` ([`coffer_sdk::static_rulesets`]) and hand out
//! opaque [`GameHandle`]s. Every function returns a [`Status`] and writes its result to out-parameters:
//! - the hot path (legal-action count, who may act with their counts, apply a legal action by index, and
//!   apply-then-who-may-act) passes integers only; the lists of who may act are [`Acting`] entries the host
//!   borrows from the plugin's cache until its next call on that game (no copy, nothing to free); a whole
//!   random playout is one call, [`VTable::playout`], with the generator's state in and out;
//! - a user's action is one crossing, [`VTable::apply_json_reporting`]: the action's JSON goes in, and
//!   the new state hash, the action's events for one audience (postcard bytes, as [`VTable::events`]
//!   writes them) and who may act now (as [`VTable::apply_legal_then_acting`] writes them) come back;
//! - descriptions, setups, JSON actions and errors cross as JSON bytes; events, outcomes, tables and
//!   resource views as postcard bytes; snapshots as the bytes of the requested [`Format`];
//! - an audience (whose table, resources or events) is an `i32`: a seat's index, [`SPECTATOR`], or for
//!   events [`EVERYONE`] (every event, unfiltered, for the host itself).
//!
//! Every function body runs under `catch_unwind`: a panic returns [`PANICKED`] with the panic message and
//! never unwinds into the host. A panic while applying an action (or while answering after it in the same
//! call: who may act, the hash, the events) leaves the game as it was before the call: the plugin keeps a
//! checkpoint (the game's setup, as `new_game` is deterministic, or a clone, refreshed every
//! [`CHECKPOINT_EVERY`] actions) and the actions applied since (8 bytes per action by index, in a log
//! reserved with the game; JSON actions keep their text; a playout is one entry, the generator state it
//! started from and how many actions it applied, replayed as it is deterministic), and rebuilds the game
//! from them.
//!
//! # Memory
//! Memory is freed by the side that allocated it: a [`Buf`] or [`GameHandle`] handed out by the plugin is
//! freed with the plugin's own [`VTable::free_buf`] / [`VTable::free_game`]; what the host passes in is
//! borrowed for the duration of the call.
//!
//! # Never unloaded
//! A host never unloads a plugin library (`dlclose`): thread-local destructors registered by the plugin's
//! copy of `std` would run code that is gone, `'static` data the host still refers to (descriptions it
//! copied are fine, function pointers are not) would dangle, and the plugin's `tracing` dispatcher holds
//! the host's callbacks. A process loads each library once and keeps it until exit.
//!
//! # Logging
//! [`VTable::init`] receives a [`LogSink`] from the host; the plugin installs a forwarding subscriber in its
//! own copy of `tracing`, so events emitted inside the plugin (level, target, message and fields) reach the
//! host's subscriber. Levels above the sink's `max_level` are filtered in the plugin at no cost.

#![allow(unsafe_code)]

use coffer_kernel::{GameRng, Owner};
/// Who may act, as the hot path hands it across the boundary (defined beside [`DynGame`] in the SDK).
pub use coffer_sdk::Acting;
use coffer_sdk::{
    ActionError, DynGame, DynRuleset, EventsFor, Format, PlayoutError, Progress, Setup, SetupError,
};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, OnceLock, RwLock};

/// The magic number every declaration starts with: the bytes `COFFER` then the ABI family `\0\x01`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"COFFER\0\x01");
/// The version of this ABI: the layout of [`Declaration`] and [`VTable`] and the encodings of every buffer.
pub const ABI_VERSION: u32 = 6;
/// The version of `coffer-core` this side was built with.
pub const CORE_VERSION: &str = env!("CARGO_PKG_VERSION");
/// The `rustc --version` this side was built with.
pub const RUSTC_VERSION: &str = env!("COFFER_RUSTC_VERSION");
/// The panic strategy this side was built with: `unwind` or `abort`.
pub const PANIC_STRATEGY: &str = if cfg!(panic = "unwind") {
    "unwind"
} else {
    "abort"
};
/// How many actions a plugin-side game applies between two checkpoints (see the module docs).
pub const CHECKPOINT_EVERY: usize = 1024;

/// The prefix of the declaration symbol; the crate name (as in the library's file name) follows.
pub const SYMBOL_PREFIX: &str = "coffer_plugin_";

/// What a function returns.
pub type Status = u32;
/// Success: the out-parameters hold the result.
pub const OK: Status = 0;
/// Refused: the out buffer holds the error (JSON of [`ActionError`] or [`SetupError`], or a message).
pub const REFUSED: Status = 1;
/// The plugin panicked: the out buffer holds the panic message (UTF-8).
pub const PANICKED: Status = 2;

/// The audience of a spectator: public information only.
pub const SPECTATOR: i32 = -1;
/// The audience of the host itself, for events: every event, unfiltered.
pub const EVERYONE: i32 = -2;

/// The `i32` that carries an audience across the boundary.
pub fn audience_code(seat: Option<Owner>) -> i32 {
    seat.map_or(SPECTATOR, |s| i32::from(s.0))
}

/// The audience an `i32` carries: a seat, or (any negative) a spectator.
fn audience(code: i32) -> Option<Owner> {
    u16::try_from(code).ok().map(Owner)
}

/// A borrowed UTF-8 string: a pointer and a length.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StrRef {
    /// The first byte.
    pub ptr: *const u8,
    /// The length in bytes.
    pub len: usize,
}

impl StrRef {
    /// Borrows a `'static` string.
    pub const fn from_static(s: &'static str) -> StrRef {
        StrRef {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// Borrows a string for the duration of a call.
    pub fn new(s: &str) -> StrRef {
        StrRef {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }

    /// The string, or `None` if it is longer than `max` bytes or not UTF-8.
    ///
    /// # Safety
    /// `ptr` must point to `len` readable bytes that stay valid for `'a`.
    pub unsafe fn to_str<'a>(self, max: usize) -> Option<&'a str> {
        if self.len > max || (self.ptr.is_null() && self.len > 0) {
            return None;
        }
        if self.len == 0 {
            return Some("");
        }
        // SAFETY: the caller promises `len` readable bytes at `ptr` for 'a; checked non-null above.
        let bytes = unsafe { std::slice::from_raw_parts(self.ptr, self.len) };
        std::str::from_utf8(bytes).ok()
    }
}

/// The fixed start of every declaration, readable whatever the ABI version.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Header {
    /// [`MAGIC`].
    pub magic: u64,
    /// [`ABI_VERSION`] of the plugin.
    pub abi_version: u32,
    /// `size_of::<Declaration>()` in the plugin.
    pub size: u32,
}

/// The one exported symbol of a plugin library (see the module docs).
#[repr(C)]
#[derive(Debug)]
pub struct Declaration {
    /// Magic number, ABI version, size.
    pub header: Header,
    /// [`CORE_VERSION`] of the plugin.
    pub core_version: StrRef,
    /// [`RUSTC_VERSION`] of the plugin.
    pub rustc_version: StrRef,
    /// [`PANIC_STRATEGY`] of the plugin.
    pub panic_strategy: StrRef,
    /// The plugin's functions.
    pub vtable: *const VTable,
}

// SAFETY: a declaration is immutable data: pointers to 'static strings and to a 'static table of function
// pointers, never written after construction.
unsafe impl Sync for Declaration {}

impl Declaration {
    /// The declaration of this build of `coffer-core`, as [`plugin!`](../coffer_core/macro.plugin.html) exports it.
    pub const CURRENT: Declaration = Declaration {
        header: Header {
            magic: MAGIC,
            abi_version: ABI_VERSION,
            size: std::mem::size_of::<Declaration>() as u32,
        },
        core_version: StrRef::from_static(CORE_VERSION),
        rustc_version: StrRef::from_static(RUSTC_VERSION),
        panic_strategy: StrRef::from_static(PANIC_STRATEGY),
        vtable: &VTABLE,
    };
}

/// Bytes handed out by the plugin; the host copies them and gives them back to [`VTable::free_buf`].
#[repr(C)]
#[derive(Debug)]
pub struct Buf {
    /// The first byte (dangling when empty).
    pub ptr: *mut u8,
    /// Bytes written.
    pub len: usize,
    /// Bytes allocated.
    pub cap: usize,
}

impl Buf {
    /// A buffer that owns nothing.
    pub const EMPTY: Buf = Buf {
        ptr: std::ptr::null_mut(),
        len: 0,
        cap: 0,
    };

    fn from_vec(v: Vec<u8>) -> Buf {
        let mut v = std::mem::ManuallyDrop::new(v);
        Buf {
            ptr: v.as_mut_ptr(),
            len: v.len(),
            cap: v.capacity(),
        }
    }

    /// The bytes.
    ///
    /// # Safety
    /// The buffer must come from the plugin (or be [`Buf::EMPTY`]) and not have been freed.
    pub unsafe fn as_slice(&self) -> &[u8] {
        if self.ptr.is_null() || self.len == 0 {
            return &[];
        }
        // SAFETY: a non-empty buffer was built by `from_vec` from a live Vec of `len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

/// An opaque game owned by the plugin.
#[repr(C)]
pub struct GameHandle {
    _private: [u8; 0],
}

/// Where a plugin sends its `tracing` events: the host's callbacks.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LogSink {
    /// Passed back to `log` unchanged (the host's per-library context).
    pub ctx: *const c_void,
    /// The most verbose level the host wants: 0 off, 1 error, 2 warn, 3 info, 4 debug, 5 trace.
    pub max_level: u8,
    /// Receives one event: its level (1-5), target and rendered message with fields.
    pub log: extern "C" fn(ctx: *const c_void, level: u8, target: StrRef, message: StrRef),
}

/// The functions of a plugin library. Every pointer argument must be valid for the call. The host passes
/// every out buffer empty ([`Buf::EMPTY`]); the hot-path functions (`legal_actions`, `to_act`, `acting`,
/// `apply_legal`) leave it untouched on success. A filled buffer is freed with `free_buf`, every game with `free_game`.
///
/// Its entries are `unsafe` function pointers: a bad pointer passed to one is undefined behaviour, so safe
/// code cannot call them. Only the loader does, on a library whose declaration it checked, with the
/// pointers each entry documents:
///
/// ```compile_fail,E0133
/// let mut out = coffer_core::abi::Buf::EMPTY;
/// (coffer_core::abi::VTABLE.free_buf)(&mut out); // error: call to unsafe function
/// ```
#[repr(C)]
pub struct VTable {
    /// Installs the log forwarder (or updates its level). `sink` is copied.
    pub init: unsafe extern "C" fn(sink: *const LogSink, out: *mut Buf) -> Status,
    /// How many rulesets the library registers.
    pub ruleset_count: unsafe extern "C" fn(count: *mut usize, out: *mut Buf) -> Status,
    /// The JSON of ruleset `index`'s [`Description`](coffer_sdk::Description).
    pub describe: unsafe extern "C" fn(index: usize, out: *mut Buf) -> Status,
    /// A new game from the JSON of a [`Setup`]; on refusal `out` holds the JSON of a [`SetupError`].
    pub new_game: unsafe extern "C" fn(
        index: usize,
        setup: *const u8,
        len: usize,
        game: *mut *mut GameHandle,
        out: *mut Buf,
    ) -> Status,
    /// A game from a snapshot (`format` 0 JSON, 1 binary); on refusal `out` holds a [`SetupError`] JSON.
    pub restore: unsafe extern "C" fn(
        index: usize,
        format: u8,
        bytes: *const u8,
        len: usize,
        game: *mut *mut GameHandle,
        out: *mut Buf,
    ) -> Status,
    /// Frees a game.
    pub free_game: unsafe extern "C" fn(game: *mut GameHandle),
    /// Frees a buffer.
    pub free_buf: unsafe extern "C" fn(buf: *mut Buf),
    /// The number of players.
    pub players:
        unsafe extern "C" fn(game: *const GameHandle, players: *mut u16, out: *mut Buf) -> Status,
    /// Lists `player`'s legal actions (cached in the plugin) and writes how many.
    pub legal_actions: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// The players who may act now ([`DynGame::to_act`]): writes how many there are
    /// to `count` and the first `min(count, capacity)` of them to `players`.
    pub to_act: unsafe extern "C" fn(
        game: *mut GameHandle,
        players: *mut u16,
        capacity: usize,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// The players who may act now, each with their legal-action count
    /// ([`DynGame::acting`]): writes to `list` a pointer to `count` [`Acting`]
    /// entries that the plugin owns and keeps unchanged until the next call on this game (the host reads
    /// them before it calls anything else on the game, and never frees them).
    pub acting: unsafe extern "C" fn(
        game: *mut GameHandle,
        list: *mut *const Acting,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// The JSON of listed legal action `index`; [`REFUSED`] with an empty buffer when there is none.
    pub legal_action_json:
        unsafe extern "C" fn(game: *const GameHandle, index: usize, out: *mut Buf) -> Status,
    /// Applies legal action `index`; on refusal `out` holds the JSON of an [`ActionError`].
    pub apply_legal: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        index: usize,
        out: *mut Buf,
    ) -> Status,
    /// Applies legal action `index`, then answers as `acting` for the new state
    /// ([`DynGame::apply_legal_then_acting`]); on refusal `out`
    /// holds the JSON of an [`ActionError`] and `list`/`count` are not written. A panic in either part
    /// leaves the game as it was before the call.
    pub apply_legal_then_acting: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        index: usize,
        list: *mut *const Acting,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// A random playout of at most `max_actions` actions run inside the library
    /// ([`DynGame::playout`]): one crossing instead of one per action. `rng` is
    /// the generator's state as [`GameRng`] serializes it (`[high, low]`), read, then
    /// written back as the playout left it; `applied` receives how many actions were applied. On refusal
    /// of a listed action `out` holds the JSON of an [`ActionError`] and `player`/`index` say whose and
    /// which; the actions before it stay applied. A panic leaves the game as it was after the last action
    /// applied before it (`applied` says how many), and `player`/`index` say which step failed. `index`
    /// is `usize::MAX` when no action was chosen.
    pub playout: unsafe extern "C" fn(
        game: *mut GameHandle,
        rng: *mut [u64; 2],
        max_actions: u64,
        applied: *mut u64,
        player: *mut u16,
        index: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// Applies an action from its JSON; on refusal `out` holds the JSON of an [`ActionError`].
    pub apply_json: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        json: *const u8,
        len: usize,
        out: *mut Buf,
    ) -> Status,
    /// Applies an action from its JSON and answers, in the same call, what `state_hash`, `events` and
    /// `acting` would answer right after it
    /// ([`DynGame::apply_json_reporting`]): writes the new state
    /// hash to `hash`, the postcard encoding of the action's events for `seat` (a seat's index,
    /// [`SPECTATOR`] or [`EVERYONE`]) to `out`, and to `list`/`count` the players who may act as `acting`
    /// does (the plugin's cache, unchanged until the next call on this game). On refusal `out` holds the
    /// JSON of an [`ActionError`] and `hash`, `list` and `count` are not written. A panic in any part
    /// (events that cannot be encoded included) leaves the game as it was before the call.
    pub apply_json_reporting: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        json: *const u8,
        len: usize,
        seat: i32,
        hash: *mut u64,
        list: *mut *const Acting,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// The postcard encoding of the last action's events (`Vec<Event>`).
    pub events: unsafe extern "C" fn(game: *mut GameHandle, seat: i32, out: *mut Buf) -> Status,
    /// The state hash.
    pub state_hash:
        unsafe extern "C" fn(game: *const GameHandle, hash: *mut u64, out: *mut Buf) -> Status,
    /// The snapshot bytes (`format` 0 JSON, 1 binary); on refusal `out` holds a [`SetupError`] JSON.
    pub snapshot:
        unsafe extern "C" fn(game: *const GameHandle, format: u8, out: *mut Buf) -> Status,
    /// The postcard encoding of the [`Outcome`](coffer_sdk::Outcome).
    pub outcome: unsafe extern "C" fn(game: *const GameHandle, out: *mut Buf) -> Status,
    /// The table of `seat` ([`SPECTATOR`]: a spectator's), as postcard bytes of [`Table`](coffer_sdk::Table).
    pub table: unsafe extern "C" fn(game: *const GameHandle, seat: i32, out: *mut Buf) -> Status,
    /// The postcard encoding of the `Vec<ResourceView>`.
    pub resources:
        unsafe extern "C" fn(game: *const GameHandle, seat: i32, out: *mut Buf) -> Status,
    /// [`OK`], or [`REFUSED`] with the violation's message.
    pub check_invariants: unsafe extern "C" fn(game: *const GameHandle, out: *mut Buf) -> Status,
    /// An independent copy of the game.
    pub clone_game: unsafe extern "C" fn(
        game: *const GameHandle,
        copy: *mut *mut GameHandle,
        out: *mut Buf,
    ) -> Status,
}

/// The functions of this build, pointed to by [`Declaration::CURRENT`].
pub static VTABLE: VTable = VTable {
    init,
    ruleset_count,
    describe,
    new_game,
    restore,
    free_game,
    free_buf,
    players,
    legal_actions,
    to_act,
    acting,
    legal_action_json,
    apply_legal,
    apply_legal_then_acting,
    playout,
    apply_json,
    apply_json_reporting,
    events,
    state_hash,
    snapshot,
    outcome,
    table,
    resources,
    check_invariants,
    clone_game,
};

/// Whether a plugin built with core `plugin` may be loaded by a host built with core `host`: both parse as
/// semver and each is caret-compatible with the other (same major version, or same minor below 1.0), so
/// the event and error encodings that cross the boundary agree.
pub fn core_compatible(host: &str, plugin: &str) -> bool {
    let (Ok(h), Ok(p)) = (semver::Version::parse(host), semver::Version::parse(plugin)) else {
        return false;
    };
    // The caret class: same major from 1.0 on, same minor below it, same patch below 0.1.
    let class = |v: &semver::Version| match (v.major, v.minor) {
        (0, 0) => (0, 0, v.patch),
        (0, minor) => (0, minor, 0),
        (major, _) => (major, 0, 0),
    };
    class(&h) == class(&p) && h.pre.is_empty() == p.pre.is_empty()
}

/// The format's code on the wire.
pub fn format_code(format: Format) -> u8 {
    match format {
        Format::Json => 0,
        Format::Binary => 1,
    }
}

fn format_from(code: u8) -> Option<Format> {
    match code {
        0 => Some(Format::Json),
        1 => Some(Format::Binary),
        _ => None,
    }
}

/// The message of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// What one call produces: success with bytes, a refusal with bytes, or a panic.
enum Reply {
    Ok(Vec<u8>),
    Refused(Vec<u8>),
}

/// Runs `f` under `catch_unwind` and writes its bytes to `out`.
fn guard(out: *mut Buf, f: impl FnOnce() -> Reply) -> Status {
    let (status, bytes) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Reply::Ok(bytes)) => (OK, bytes),
        Ok(Reply::Refused(bytes)) => (REFUSED, bytes),
        Err(payload) => (PANICKED, panic_message(&*payload).into_bytes()),
    };
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable `Buf` (see `VTable`); a null `out` is skipped.
        unsafe {
            out.write(if bytes.is_empty() {
                Buf::EMPTY
            } else {
                Buf::from_vec(bytes)
            })
        };
    }
    status
}

/// Writes bytes to an out buffer (a null `out` is skipped).
fn put(out: *mut Buf, bytes: Vec<u8>) {
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable `Buf` (see `VTable`).
        unsafe {
            out.write(if bytes.is_empty() {
                Buf::EMPTY
            } else {
                Buf::from_vec(bytes)
            })
        };
    }
}

/// [`guard`] for the hot path: success writes nothing (the host's `out` stays as passed, empty).
fn guard_hot(out: *mut Buf, f: impl FnOnce() -> Result<(), Vec<u8>>) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => OK,
        Ok(Err(bytes)) => {
            put(out, bytes);
            REFUSED
        }
        Err(payload) => {
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    }
}

/// [`guard_hot`] for applying an action: on a panic, the game is rebuilt as it was before the call
/// ([`PluginGame::rebuild`]) before the panic is reported.
#[inline(always)]
fn guard_apply(out: *mut Buf, g: &mut PluginGame, player: Owner, action: Applied<'_>) -> Status {
    match catch_unwind(AssertUnwindSafe(|| g.apply(player, action, out))) {
        Ok(status) => status,
        Err(payload) => {
            // A panic while rebuilding leaves the game as the first panic left it; the library is
            // poisoned either way.
            let _ = catch_unwind(AssertUnwindSafe(|| g.rebuild()));
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    }
}

/// Writes a refusal's JSON to `out`.
#[cold]
#[inline(never)]
fn refuse(out: *mut Buf, e: &ActionError) -> Status {
    put(out, json(e));
    REFUSED
}

fn json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|e| format!("\"{e}\"").into_bytes())
}

fn rulesets() -> &'static [Arc<dyn DynRuleset>] {
    static RULESETS: OnceLock<Vec<Arc<dyn DynRuleset>>> = OnceLock::new();
    RULESETS.get_or_init(coffer_sdk::static_rulesets)
}

fn ruleset(index: usize) -> Result<&'static Arc<dyn DynRuleset>, Reply> {
    rulesets().get(index).ok_or_else(|| {
        Reply::Refused(json(&SetupError::Config(format!(
            "no ruleset #{index} in this library"
        ))))
    })
}

/// An action to apply to a plugin-side game.
#[derive(Clone, Copy)]
enum Applied<'a> {
    /// Legal action `index` of the player.
    Legal(usize),
    /// An action's JSON.
    Json(&'a str),
    /// Legal action `index` of the player, then the players who may act next, written to the
    /// out-parameters of [`VTable::apply_legal_then_acting`].
    LegalThenActing(usize, *mut *const Acting, *mut usize),
    /// An action's JSON, then the answers written to the out-parameters of
    /// [`VTable::apply_json_reporting`].
    JsonReporting(Reporting<'a>),
}

/// The JSON action and the out-parameters of one [`VTable::apply_json_reporting`] call.
#[derive(Clone, Copy)]
struct Reporting<'a> {
    text: &'a str,
    /// The audience of the events, as [`VTable::events`] reads it.
    seat: i32,
    hash: *mut u64,
    list: *mut *const Acting,
    count: *mut usize,
}

/// An action applied since the last checkpoint, to rebuild the game after a panic: 8 bytes, no allocation
/// of its own.
#[derive(Clone, Copy)]
enum Logged {
    /// Legal action `index` of `player`.
    Legal(u16, u32),
    /// The JSON action `PluginGame::texts[text]` of `player`.
    Json(u16, u32),
    /// A random playout, `PluginGame::playouts[playout]`: replayed from the generator state it started
    /// from, for as many actions as it applied.
    Playout(u32),
}

/// The log's capacity when a game is made from its setup (128 bytes): a short game never grows it, and
/// applying an action never allocates for it until then. A restored or copied game makes it at its first
/// action, which copies the game anyway.
const LOG_RESERVE: usize = 16;

/// Where a plugin-side game is rebuilt from after a panic, before replaying the actions since.
enum Checkpoint {
    /// Nothing yet: a clone is taken at the game's first action (restored and copied games).
    Lazy,
    /// The game's setup: `new_game` is deterministic, so it rebuilds the initial state for free.
    Setup(usize, Setup),
    /// A copy of the game (taken lazily, then every [`CHECKPOINT_EVERY`] actions).
    Game(Box<dyn DynGame>),
}

/// A game as the plugin keeps it: the live game, a checkpoint and the actions applied since. Idle games
/// hold one state, not two: a new game's checkpoint is its setup, other games clone at their first action.
struct PluginGame {
    game: Box<dyn DynGame>,
    checkpoint: Checkpoint,
    log: Vec<Logged>,
    /// The texts of the logged JSON actions.
    texts: Vec<String>,
    /// The logged playouts: the generator state each started from, and how many actions it applied.
    playouts: Vec<([u64; 2], u64)>,
}

impl PluginGame {
    fn new(game: Box<dyn DynGame>, checkpoint: Checkpoint) -> PluginGame {
        // A restored or copied game's first action copies the whole game (its checkpoint): its log is
        // made then too, not with every restore.
        let log = match checkpoint {
            Checkpoint::Lazy => Vec::new(),
            _ => Vec::with_capacity(LOG_RESERVE),
        };
        PluginGame {
            game,
            checkpoint,
            log,
            texts: Vec::new(),
            playouts: Vec::new(),
        }
    }

    fn into_handle(self) -> *mut GameHandle {
        Box::into_raw(Box::new(self)).cast()
    }

    /// Applies `action` and on success logs it and returns [`OK`]; a refusal is written to `out`
    /// ([`REFUSED`]). A panic unwinds out of here: the caller catches it and calls
    /// [`PluginGame::rebuild`] (see [`guard_apply`]).
    #[inline(never)]
    fn apply(&mut self, player: Owner, action: Applied<'_>, out: *mut Buf) -> Status {
        if matches!(self.checkpoint, Checkpoint::Lazy) {
            self.checkpoint = Checkpoint::Game(self.game.clone_game());
        }
        let applied = match action {
            Applied::Legal(index) | Applied::LegalThenActing(index, ..) => {
                self.game.apply_legal(player, index)
            }
            Applied::Json(text) => self.game.apply_json(player, text),
            Applied::JsonReporting(reporting) => {
                // Answered before the action is logged, as below: a panic while answering rebuilds the
                // game as it was before the call.
                match self.game.apply_json_reporting(
                    player,
                    reporting.text,
                    events_audience(reporting.seat),
                ) {
                    Ok(report) => {
                        // Events that cannot be encoded are no answer: unwinding from here rebuilds the
                        // game and reports a panic, as for a failure of the ruleset itself.
                        let events = postcard::to_stdvec(&report.events).unwrap_or_else(|e| {
                            panic!("the action's events cannot be encoded: {e}")
                        });
                        // SAFETY: the host passes a writable u64, pointer and usize. The entries live in
                        // the game's cache, unchanged until the next call on this game (`record` only
                        // reads the game).
                        unsafe {
                            reporting.hash.write(report.hash.0);
                            reporting.list.write(report.acting.as_ptr());
                            reporting.count.write(report.acting.len());
                        }
                        put(out, events);
                        Ok(())
                    }
                    Err(e) => Err(e),
                }
            }
        };
        if let Err(e) = applied {
            return refuse(out, &e);
        }
        match action {
            Applied::Legal(_) | Applied::Json(_) | Applied::JsonReporting(_) => {}
            Applied::LegalThenActing(_, list, count) => {
                // Listed before the action is logged: a panic while listing rebuilds the game as it
                // was before the call.
                let acting = self.game.acting();
                // SAFETY: the host passes a writable pointer and a writable usize. The entries live in
                // the game's cache, unchanged until the next call on this game (`record` only reads the
                // game).
                unsafe {
                    list.write(acting.as_ptr());
                    count.write(acting.len());
                }
            }
        }
        self.record(player, action);
        OK
    }

    /// A random playout inside the library, logged as one entry (the generator state it starts from and
    /// how many actions it applied, by [`PluginGame::log_playout`]): it is deterministic, so a rebuild
    /// replays it. `progress` is kept step by step; a panic unwinds out of here, as from `apply`.
    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<(), PlayoutError> {
        if matches!(self.checkpoint, Checkpoint::Lazy) {
            self.checkpoint = Checkpoint::Game(self.game.clone_game());
        }
        self.game.playout(rng, max_actions, progress).map(drop)
    }

    /// Logs a playout that started from generator state `from` and applied `applied` actions (whether it
    /// ended, was refused or panicked).
    fn log_playout(&mut self, from: [u64; 2], applied: u64) {
        if applied == 0 {
            return;
        }
        let room = self.log.len() + 1 < CHECKPOINT_EVERY;
        match u32::try_from(self.playouts.len()) {
            Ok(n) if room => {
                if self.log.len() == self.log.capacity() {
                    self.make_room();
                }
                self.playouts.push((from, applied));
                self.log.push(Logged::Playout(n));
            }
            _ => self.checkpoint_now(),
        }
    }

    /// Makes room in a full log for one more entry: four times larger, up to [`CHECKPOINT_EVERY`] - 1
    /// entries, then a new checkpoint and an empty log.
    fn make_room(&mut self) {
        if self.log.len() + 1 < CHECKPOINT_EVERY {
            // Four times larger, not twice: a random playout's game grew its log four times (16 to 256
            // entries), each a reallocation that cost as much as an action.
            let target = (self.log.capacity() * 4).clamp(LOG_RESERVE, CHECKPOINT_EVERY - 1);
            self.log.reserve_exact(target - self.log.len());
        } else {
            self.checkpoint_now();
        }
    }

    /// A checkpoint of the game as it is now; the log is emptied.
    fn checkpoint_now(&mut self) {
        self.checkpoint = Checkpoint::Game(self.game.clone_game());
        self.log.clear();
        self.texts.clear();
        self.playouts.clear();
    }

    /// Logs an applied action. The fast path appends a legal action's entry to a log with room; the rest
    /// (a JSON action, a log to grow or full) is [`PluginGame::record_slow`].
    #[inline(always)]
    fn record(&mut self, player: Owner, action: Applied<'_>) {
        if let Applied::Legal(index) | Applied::LegalThenActing(index, ..) = action
            && self.log.len() < self.log.capacity()
            && let Ok(index) = u32::try_from(index)
        {
            self.log.push(Logged::Legal(player.0, index));
        } else {
            self.record_slow(player, action);
        }
    }

    /// [`PluginGame::record`] off the fast path. The log's capacity stays below [`CHECKPOINT_EVERY`]: when
    /// it is full at that length (or an action does not fit an entry: an index or a text count past
    /// `u32::MAX`), a new checkpoint is taken instead and the log emptied.
    #[cold]
    #[inline(never)]
    fn record_slow(&mut self, player: Owner, action: Applied<'_>) {
        let room = self.log.len() + 1 < CHECKPOINT_EVERY;
        let entry = match action {
            _ if !room => None,
            Applied::Legal(index) | Applied::LegalThenActing(index, ..) => u32::try_from(index)
                .ok()
                .map(|i| Logged::Legal(player.0, i)),
            Applied::Json(text) | Applied::JsonReporting(Reporting { text, .. }) => {
                u32::try_from(self.texts.len()).ok().map(|n| {
                    self.texts.push(text.to_owned());
                    Logged::Json(player.0, n)
                })
            }
        };
        match entry {
            Some(entry) => {
                if self.log.len() == self.log.capacity() {
                    self.make_room();
                }
                self.log.push(entry);
            }
            None => self.checkpoint_now(),
        }
    }

    /// The game as it was before the action that panicked: the checkpoint plus the actions since.
    fn rebuild(&mut self) {
        let mut game = match &self.checkpoint {
            Checkpoint::Lazy => return,
            Checkpoint::Game(game) => game.clone_game(),
            Checkpoint::Setup(index, setup) => {
                match rulesets().get(*index).map(|r| r.new_game(setup)) {
                    Some(Ok(game)) => game,
                    _ => return,
                }
            }
        };
        for logged in &self.log {
            let replayed = match *logged {
                Logged::Legal(player, index) => game.apply_legal(Owner(player), index as usize),
                Logged::Json(player, text) => {
                    game.apply_json(Owner(player), &self.texts[text as usize])
                }
                Logged::Playout(playout) => {
                    let (from, applied) = self.playouts[playout as usize];
                    replay_playout(&mut *game, from, applied)
                }
            };
            debug_assert!(replayed.is_ok(), "a logged action replays");
        }
        self.game = game;
    }
}

/// # Safety
/// `game` must be a live handle from this library.
unsafe fn game_ref<'a>(game: *const GameHandle) -> &'a PluginGame {
    // SAFETY: handles are `Box<PluginGame>` pointers from `into_handle`, live until `free_game`.
    unsafe { &*game.cast::<PluginGame>() }
}

/// # Safety
/// `game` must be a live handle from this library, used by one thread at a time.
unsafe fn game_mut<'a>(game: *mut GameHandle) -> &'a mut PluginGame {
    // SAFETY: as `game_ref`; the host serialises calls on one game (`DynGame` methods take `&mut self`).
    unsafe { &mut *game.cast::<PluginGame>() }
}

/// # Safety
/// `ptr` must point to `len` readable bytes (or be anything when `len` is 0).
unsafe fn bytes_in<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 || ptr.is_null() {
        return &[];
    }
    // SAFETY: the caller passes `len` readable bytes at `ptr`, borrowed for the call.
    unsafe { std::slice::from_raw_parts(ptr, len) }
}

extern "C" fn init(sink: *const LogSink, out: *mut Buf) -> Status {
    guard(out, || {
        if sink.is_null() {
            return Reply::Refused(b"no log sink".to_vec());
        }
        // SAFETY: the host passes a valid `LogSink`, which is plain data and is copied here.
        let sink = unsafe { *sink };
        forward::install(sink);
        Reply::Ok(Vec::new())
    })
}

extern "C" fn ruleset_count(count: *mut usize, out: *mut Buf) -> Status {
    guard(out, || {
        let n = rulesets().len();
        // SAFETY: the host passes a writable `usize`.
        unsafe { count.write(n) };
        Reply::Ok(Vec::new())
    })
}

extern "C" fn describe(index: usize, out: *mut Buf) -> Status {
    guard(out, || match ruleset(index) {
        Ok(r) => Reply::Ok(json(r.description())),
        Err(reply) => reply,
    })
}

fn write_game(
    slot: *mut *mut GameHandle,
    made: Result<Box<dyn DynGame>, SetupError>,
    checkpoint: Checkpoint,
) -> Reply {
    match made {
        Ok(game) => {
            // SAFETY: the host passes a writable handle slot.
            unsafe { slot.write(PluginGame::new(game, checkpoint).into_handle()) };
            Reply::Ok(Vec::new())
        }
        Err(e) => Reply::Refused(json(&e)),
    }
}

extern "C" fn new_game(
    index: usize,
    setup: *const u8,
    len: usize,
    game: *mut *mut GameHandle,
    out: *mut Buf,
) -> Status {
    guard(out, || {
        let r = match ruleset(index) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        // SAFETY: the host passes `len` readable bytes of JSON.
        let bytes = unsafe { bytes_in(setup, len) };
        let setup: Setup = match serde_json::from_slice(bytes) {
            Ok(s) => s,
            Err(e) => return Reply::Refused(json(&SetupError::Config(e.to_string()))),
        };
        let made = r.new_game(&setup);
        write_game(game, made, Checkpoint::Setup(index, setup))
    })
}

extern "C" fn restore(
    index: usize,
    format: u8,
    bytes: *const u8,
    len: usize,
    game: *mut *mut GameHandle,
    out: *mut Buf,
) -> Status {
    guard(out, || {
        let r = match ruleset(index) {
            Ok(r) => r,
            Err(reply) => return reply,
        };
        let Some(format) = format_from(format) else {
            return Reply::Refused(json(&SetupError::Snapshot(format!(
                "unknown format code {format}"
            ))));
        };
        // SAFETY: the host passes `len` readable bytes.
        let bytes = unsafe { bytes_in(bytes, len) };
        write_game(game, r.restore(format, bytes), Checkpoint::Lazy)
    })
}

extern "C" fn free_game(game: *mut GameHandle) {
    if game.is_null() {
        return;
    }
    // A panic in a Drop impl must not unwind into the host; the memory is then leaked.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: the handle came from `into_handle` and the host frees it once.
        drop(unsafe { Box::from_raw(game.cast::<PluginGame>()) });
    }));
}

extern "C" fn free_buf(buf: *mut Buf) {
    if buf.is_null() {
        return;
    }
    // SAFETY: the host passes a `Buf` this library filled, once; it is reset to empty below.
    let b = unsafe { std::ptr::replace(buf, Buf::EMPTY) };
    if !b.ptr.is_null() && b.cap > 0 {
        // SAFETY: ptr/len/cap come from a Vec<u8> leaked by `Buf::from_vec` in this library.
        drop(unsafe { Vec::from_raw_parts(b.ptr, b.len, b.cap) });
    }
}

extern "C" fn players(game: *const GameHandle, players: *mut u16, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle, a writable u16.
        unsafe { players.write(game_ref(game).game.players()) };
        Reply::Ok(Vec::new())
    })
}

extern "C" fn legal_actions(
    game: *mut GameHandle,
    player: u16,
    count: *mut usize,
    out: *mut Buf,
) -> Status {
    guard_hot(out, || {
        // SAFETY: a live handle used by one thread.
        let g = unsafe { game_mut(game) };
        let n = g.game.legal_actions(Owner(player));
        // SAFETY: the host passes a writable usize.
        unsafe { count.write(n) };
        Ok(())
    })
}

extern "C" fn to_act(
    game: *mut GameHandle,
    players: *mut u16,
    capacity: usize,
    count: *mut usize,
    out: *mut Buf,
) -> Status {
    guard_hot(out, || {
        // SAFETY: a live handle used by one thread.
        let g = unsafe { game_mut(game) };
        let acting = g.game.to_act();
        for (i, p) in acting.iter().take(capacity).enumerate() {
            // SAFETY: the host passes `capacity` writable u16s at `players`, and `i < capacity`.
            unsafe { players.add(i).write(p.0) };
        }
        // SAFETY: the host passes a writable usize.
        unsafe { count.write(acting.len()) };
        Ok(())
    })
}

extern "C" fn acting(
    game: *mut GameHandle,
    list: *mut *const Acting,
    count: *mut usize,
    out: *mut Buf,
) -> Status {
    guard_hot(out, || {
        // SAFETY: a live handle used by one thread.
        let g = unsafe { game_mut(game) };
        let acting = g.game.acting();
        // SAFETY: the host passes a writable pointer and a writable usize. The entries live in the game's
        // cache, unchanged until the next call on this game (see `VTable::acting`).
        unsafe {
            list.write(acting.as_ptr());
            count.write(acting.len());
        }
        Ok(())
    })
}

extern "C" fn legal_action_json(game: *const GameHandle, index: usize, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle.
        match unsafe { game_ref(game) }.game.legal_action_json(index) {
            Some(s) => Reply::Ok(s.into_bytes()),
            None => Reply::Refused(Vec::new()),
        }
    })
}

extern "C" fn apply_legal(
    game: *mut GameHandle,
    player: u16,
    index: usize,
    out: *mut Buf,
) -> Status {
    // SAFETY: a live handle used by one thread.
    let g = unsafe { game_mut(game) };
    guard_apply(out, g, Owner(player), Applied::Legal(index))
}

extern "C" fn apply_legal_then_acting(
    game: *mut GameHandle,
    player: u16,
    index: usize,
    list: *mut *const Acting,
    count: *mut usize,
    out: *mut Buf,
) -> Status {
    // SAFETY: a live handle used by one thread.
    let g = unsafe { game_mut(game) };
    let player = Owner(player);
    let action = Applied::LegalThenActing(index, list, count);
    if matches!(g.checkpoint, Checkpoint::Lazy)
        || g.log.len() == g.log.capacity()
        || u32::try_from(index).is_err()
    {
        // The first action of a restored or copied game, a log to grow, an index past `u32::MAX`: the
        // general path.
        return guard_apply(out, g, player, action);
    }
    // The hot path in one frame: each `catch_unwind` around a call is inlined; the log has room and
    // the game a checkpoint, so logging cannot fail. A panic rebuilds the game as it was before the call.
    let game = &mut *g.game;
    // One dynamic call into the game (it applies, then lists), not two.
    let listed = catch_unwind(AssertUnwindSafe(|| {
        game.apply_legal_then_acting(player, index)
            .map(|acting| (acting.as_ptr(), acting.len()))
    }));
    match listed {
        Ok(Ok((ptr, len))) => {
            // SAFETY: the host passes a writable pointer and a writable usize. The entries live in the
            // game's cache, unchanged until the next call on this game.
            unsafe {
                list.write(ptr);
                count.write(len);
            }
            g.record(player, action);
            OK
        }
        Ok(Err(e)) => refuse(out, &e),
        Err(payload) => {
            let _ = catch_unwind(AssertUnwindSafe(|| g.rebuild()));
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    }
}

extern "C" fn playout(
    game: *mut GameHandle,
    rng: *mut [u64; 2],
    max_actions: u64,
    applied: *mut u64,
    player: *mut u16,
    index: *mut usize,
    out: *mut Buf,
) -> Status {
    // SAFETY: a live handle used by one thread.
    let g = unsafe { game_mut(game) };
    // SAFETY: the host passes a readable and writable generator state.
    let from = unsafe { rng.read() };
    let mut generator = match GameRng::try_from(from) {
        Ok(generator) => generator,
        Err(e) => {
            // SAFETY: the host passes a writable u64 and a writable usize.
            unsafe {
                applied.write(0);
                index.write(usize::MAX);
            }
            return refuse(out, &ActionError::Malformed(e));
        }
    };
    let mut progress = Progress::default();
    let played = catch_unwind(AssertUnwindSafe(|| {
        g.playout(&mut generator, max_actions, &mut progress)
    }));
    let (who, which) = progress.chosen.unwrap_or((Owner(0), usize::MAX));
    let status = match played {
        // The game is whole: the playout is logged (the actions a refused one applied stay applied).
        Ok(result) => {
            match catch_unwind(AssertUnwindSafe(|| g.log_playout(from, progress.applied))) {
                Ok(()) => match result {
                    Ok(()) => OK,
                    Err(PlayoutError::Refused { error, .. }) => refuse(out, &error),
                    Err(PlayoutError::Observer(never)) => match never {},
                },
                Err(payload) => {
                    // Taking a checkpoint failed: back to the game as it was before the call.
                    let _ = catch_unwind(AssertUnwindSafe(|| g.rebuild()));
                    progress.applied = 0;
                    put(out, panic_message(&*payload).into_bytes());
                    PANICKED
                }
            }
        }
        // The game may be half-changed: rebuilt as it was before the call, then the actions applied
        // before the panic replayed and logged.
        Err(payload) => {
            let replayed = catch_unwind(AssertUnwindSafe(|| {
                g.rebuild();
                let replayed = replay_playout(&mut *g.game, from, progress.applied).is_ok();
                if replayed {
                    g.log_playout(from, progress.applied);
                }
                replayed
            }));
            if !matches!(replayed, Ok(true)) {
                progress.applied = 0;
                let _ = catch_unwind(AssertUnwindSafe(|| g.rebuild()));
            }
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    };
    // SAFETY: the host passes a writable generator state, u64, u16 and usize.
    unsafe {
        rng.write(generator.into());
        applied.write(progress.applied);
        player.write(who.0);
        index.write(which);
    }
    status
}

/// Plays again `applied` actions of a playout that started from generator state `from` (deterministic:
/// the same actions as the first time).
fn replay_playout(game: &mut dyn DynGame, from: [u64; 2], applied: u64) -> Result<(), ActionError> {
    let mut rng = GameRng::try_from(from).map_err(ActionError::Malformed)?;
    match game.playout(&mut rng, applied, &mut Progress::default()) {
        Ok(n) if n == applied => Ok(()),
        Ok(n) => Err(ActionError::Illegal(format!(
            "a replayed playout applied {n} actions, not {applied}"
        ))),
        Err(PlayoutError::Refused { error, .. }) => Err(error),
        Err(PlayoutError::Observer(never)) => match never {},
    }
}

/// An action's JSON bytes as text, or the refusal written to `out` when they are not UTF-8.
fn utf8_action(bytes: &[u8], out: *mut Buf) -> Result<&str, Status> {
    std::str::from_utf8(bytes).map_err(|_| {
        guard(out, || {
            Reply::Refused(json(&ActionError::Malformed(
                "the action is not UTF-8".to_owned(),
            )))
        })
    })
}

extern "C" fn apply_json(
    game: *mut GameHandle,
    player: u16,
    text: *const u8,
    len: usize,
    out: *mut Buf,
) -> Status {
    // SAFETY: the host passes `len` readable bytes.
    let text = match utf8_action(unsafe { bytes_in(text, len) }, out) {
        Ok(text) => text,
        Err(status) => return status,
    };
    // SAFETY: a live handle used by one thread.
    let g = unsafe { game_mut(game) };
    guard_apply(out, g, Owner(player), Applied::Json(text))
}

// The vtable entry's parameters: the action in, then every answer out.
#[allow(clippy::too_many_arguments)]
extern "C" fn apply_json_reporting(
    game: *mut GameHandle,
    player: u16,
    text: *const u8,
    len: usize,
    seat: i32,
    hash: *mut u64,
    list: *mut *const Acting,
    count: *mut usize,
    out: *mut Buf,
) -> Status {
    // SAFETY: the host passes `len` readable bytes.
    let text = match utf8_action(unsafe { bytes_in(text, len) }, out) {
        Ok(text) => text,
        Err(status) => return status,
    };
    // SAFETY: a live handle used by one thread.
    let g = unsafe { game_mut(game) };
    let reporting = Reporting {
        text,
        seat,
        hash,
        list,
        count,
    };
    guard_apply(out, g, Owner(player), Applied::JsonReporting(reporting))
}

/// The audience of events an `i32` carries: [`EVERYONE`], a seat, or (any other negative) a spectator.
fn events_audience(code: i32) -> EventsFor {
    if code == EVERYONE {
        EventsFor::Everyone
    } else {
        EventsFor::Seat(audience(code))
    }
}

/// The `i32` that carries an audience of events across the boundary.
pub fn events_code(events: EventsFor) -> i32 {
    match events {
        EventsFor::Everyone => EVERYONE,
        EventsFor::Seat(seat) => audience_code(seat),
    }
}

extern "C" fn events(game: *mut GameHandle, seat: i32, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle used by one thread.
        let g = unsafe { game_mut(game) };
        let bytes = if seat == EVERYONE {
            postcard::to_stdvec(g.game.events())
        } else {
            postcard::to_stdvec(&g.game.events_for(audience(seat)))
        };
        match bytes {
            Ok(bytes) => Reply::Ok(bytes),
            Err(e) => Reply::Refused(e.to_string().into_bytes()),
        }
    })
}

extern "C" fn state_hash(game: *const GameHandle, hash: *mut u64, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle; a writable u64.
        unsafe { hash.write(game_ref(game).game.state_hash().0) };
        Reply::Ok(Vec::new())
    })
}

extern "C" fn snapshot(game: *const GameHandle, format: u8, out: *mut Buf) -> Status {
    guard(out, || {
        let Some(format) = format_from(format) else {
            return Reply::Refused(json(&SetupError::Snapshot(format!(
                "unknown format code {format}"
            ))));
        };
        // SAFETY: a live handle.
        match unsafe { game_ref(game) }.game.snapshot(format) {
            Ok(bytes) => Reply::Ok(bytes),
            Err(e) => Reply::Refused(json(&e)),
        }
    })
}

extern "C" fn outcome(game: *const GameHandle, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle.
        let outcome = unsafe { game_ref(game) }.game.outcome();
        match postcard::to_stdvec(&outcome) {
            Ok(bytes) => Reply::Ok(bytes),
            Err(e) => Reply::Refused(e.to_string().into_bytes()),
        }
    })
}

extern "C" fn table(game: *const GameHandle, seat: i32, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle.
        let table = unsafe { game_ref(game) }.game.table(audience(seat));
        match postcard::to_stdvec(&table) {
            Ok(bytes) => Reply::Ok(bytes),
            Err(e) => Reply::Refused(e.to_string().into_bytes()),
        }
    })
}

extern "C" fn resources(game: *const GameHandle, seat: i32, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle.
        let resources = unsafe { game_ref(game) }.game.resources(audience(seat));
        match postcard::to_stdvec(&resources) {
            Ok(bytes) => Reply::Ok(bytes),
            Err(e) => Reply::Refused(e.to_string().into_bytes()),
        }
    })
}

extern "C" fn check_invariants(game: *const GameHandle, out: *mut Buf) -> Status {
    guard(out, || {
        // SAFETY: a live handle.
        match unsafe { game_ref(game) }.game.check_invariants() {
            Ok(()) => Reply::Ok(Vec::new()),
            Err(v) => Reply::Refused(v.0.into_bytes()),
        }
    })
}

extern "C" fn clone_game(
    game: *const GameHandle,
    copy: *mut *mut GameHandle,
    out: *mut Buf,
) -> Status {
    guard(out, || {
        // SAFETY: a live handle.
        let cloned = unsafe { game_ref(game) }.game.clone_game();
        // SAFETY: the host passes a writable handle slot.
        unsafe { copy.write(PluginGame::new(cloned, Checkpoint::Lazy).into_handle()) };
        Reply::Ok(Vec::new())
    })
}

/// The plugin-side `tracing` subscriber that forwards every event to the host's [`LogSink`].
mod forward {
    use super::{LogSink, StrRef};
    use std::fmt::Write as _;
    use std::sync::atomic::Ordering;
    use tracing::field::{Field, Visit};
    use tracing::level_filters::LevelFilter;
    use tracing::span::{Attributes, Id, Record};
    use tracing::subscriber::Interest;
    use tracing::{Event, Level, Metadata};

    pub(super) fn install(sink: LogSink) {
        super::LEVEL.store(sink.max_level.min(5), Ordering::Relaxed);
        *super::SINK.write().unwrap_or_else(|e| e.into_inner()) = Some(sink);
        if !super::INSTALLED.swap(true, Ordering::AcqRel) {
            let _ = tracing::subscriber::set_global_default(Forwarder);
        }
        tracing::callsite::rebuild_interest_cache();
    }

    fn level_code(level: &Level) -> u8 {
        match *level {
            Level::ERROR => 1,
            Level::WARN => 2,
            Level::INFO => 3,
            Level::DEBUG => 4,
            _ => 5,
        }
    }

    struct Forwarder;

    impl Forwarder {
        fn wanted(meta: &Metadata<'_>) -> bool {
            level_code(meta.level()) <= super::LEVEL.load(Ordering::Relaxed)
        }
    }

    #[derive(Default)]
    struct Message {
        message: String,
        fields: String,
    }

    impl Visit for Message {
        fn record_str(&mut self, field: &Field, value: &str) {
            if field.name() == "message" {
                self.message.push_str(value);
            } else {
                let _ = write!(self.fields, " {}={value}", field.name());
            }
        }
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            if field.name() == "message" {
                let _ = write!(self.message, "{value:?}");
            } else {
                let _ = write!(self.fields, " {}={value:?}", field.name());
            }
        }
    }

    impl tracing::Subscriber for Forwarder {
        fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
            if Self::wanted(meta) {
                Interest::always()
            } else {
                Interest::never()
            }
        }
        fn enabled(&self, meta: &Metadata<'_>) -> bool {
            Self::wanted(meta)
        }
        fn max_level_hint(&self) -> Option<LevelFilter> {
            Some(match super::LEVEL.load(Ordering::Relaxed) {
                0 => LevelFilter::OFF,
                1 => LevelFilter::ERROR,
                2 => LevelFilter::WARN,
                3 => LevelFilter::INFO,
                4 => LevelFilter::DEBUG,
                _ => LevelFilter::TRACE,
            })
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            let guard = super::SINK.read().unwrap_or_else(|e| e.into_inner());
            let Some(sink) = *guard else { return };
            let mut m = Message::default();
            event.record(&mut m);
            m.message.push_str(&m.fields);
            let meta = event.metadata();
            (sink.log)(
                sink.ctx,
                level_code(meta.level()),
                StrRef::new(meta.target()),
                StrRef::new(&m.message),
            );
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
}

static LEVEL: AtomicU8 = AtomicU8::new(0);
static INSTALLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static SINK: RwLock<Option<LogSink>> = RwLock::new(None);

// SAFETY: a sink is plain data; the host promises its callback and context are usable from any thread for
// the life of the process.
unsafe impl Send for LogSink {}
// SAFETY: as above; a sink is never mutated through a shared reference.
unsafe impl Sync for LogSink {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declaration_header_is_stable() {
        let d = Declaration::CURRENT;
        assert_eq!(d.header.magic, MAGIC);
        assert_eq!(d.header.abi_version, ABI_VERSION);
        assert_eq!(d.header.size as usize, std::mem::size_of::<Declaration>());
        assert_eq!(std::mem::offset_of!(Declaration, header), 0);
        assert_eq!(std::mem::size_of::<Header>(), 16);
    }

    #[test]
    fn core_versions_are_compatible_within_a_caret_range() {
        assert!(core_compatible("0.1.0", "0.1.7"));
        assert!(core_compatible("1.2.0", "1.0.3"));
        assert!(!core_compatible("0.1.0", "0.2.0"));
        assert!(!core_compatible("0.1.0", "0.0.1-fixture"));
        assert!(!core_compatible("1.0.0", "2.0.0"));
        assert!(!core_compatible("0.1.0", "not a version"));
    }

    #[test]
    fn panics_become_status_codes_with_the_message() {
        let mut out = Buf::EMPTY;
        let status = guard(&mut out, || panic!("boom {}", 7));
        assert_eq!(status, PANICKED);
        // SAFETY: `out` was filled by `guard` in this library.
        assert_eq!(unsafe { out.as_slice() }, b"boom 7");
        free_buf(&mut out);
        assert!(out.ptr.is_null());
    }
}

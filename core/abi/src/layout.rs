//! The `#[repr(C)]` data that crosses the boundary: borrowed strings, the declaration and its header,
//! buffers, game handles, the log sink and the table of functions.

use crate::{ABI_VERSION, CORE_VERSION, MAGIC, PANIC_STRATEGY, RUSTC_VERSION, Status, VTABLE};
use coffer_sdk::Acting;
use std::ffi::c_void;

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
    /// The declaration of this build of `coffer-core`, as [`plugin!`](crate::plugin) exports it.
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

    pub(crate) fn from_vec(v: Vec<u8>) -> Buf {
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
    /// A new game from the JSON of a [`Setup`](coffer_sdk::Setup); on refusal `out` holds the JSON of a [`SetupError`](coffer_sdk::SetupError).
    pub new_game: unsafe extern "C" fn(
        index: usize,
        setup: *const u8,
        len: usize,
        game: *mut *mut GameHandle,
        out: *mut Buf,
    ) -> Status,
    /// A game from a snapshot (`format` 0 JSON, 1 binary); on refusal `out` holds a [`SetupError`](coffer_sdk::SetupError) JSON.
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
    /// The players who may act now ([`DynGame::to_act`](coffer_sdk::DynGame::to_act)): writes how many there are
    /// to `count` and the first `min(count, capacity)` of them to `players`.
    pub to_act: unsafe extern "C" fn(
        game: *mut GameHandle,
        players: *mut u16,
        capacity: usize,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// The players who may act now, each with their legal-action count
    /// ([`DynGame::acting`](coffer_sdk::DynGame::acting)): writes to `list` a pointer to `count` [`Acting`]
    /// entries that the plugin owns and keeps unchanged until the next call on this game (the host reads
    /// them before it calls anything else on the game, and never frees them).
    pub acting: unsafe extern "C" fn(
        game: *mut GameHandle,
        list: *mut *const Acting,
        count: *mut usize,
        out: *mut Buf,
    ) -> Status,
    /// The JSON of listed legal action `index`; [`REFUSED`](crate::REFUSED) with an empty buffer when there is none.
    pub legal_action_json:
        unsafe extern "C" fn(game: *const GameHandle, index: usize, out: *mut Buf) -> Status,
    /// Applies legal action `index`; on refusal `out` holds the JSON of an [`ActionError`](coffer_sdk::ActionError).
    pub apply_legal: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        index: usize,
        out: *mut Buf,
    ) -> Status,
    /// Applies legal action `index`, then answers as `acting` for the new state
    /// ([`DynGame::apply_legal_then_acting`](coffer_sdk::DynGame::apply_legal_then_acting)); on refusal `out`
    /// holds the JSON of an [`ActionError`](coffer_sdk::ActionError) and `list`/`count` are not written. A panic in either part
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
    /// ([`DynGame::playout`](coffer_sdk::DynGame::playout)): one crossing instead of one per action. `rng` is
    /// the generator's state as [`GameRng`](coffer_kernel::GameRng) serializes it (`[high, low]`), read, then
    /// written back as the playout left it; `applied` receives how many actions were applied. On refusal
    /// of a listed action `out` holds the JSON of an [`ActionError`](coffer_sdk::ActionError) and `player`/`index` say whose and
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
    /// Applies an action from its JSON; on refusal `out` holds the JSON of an [`ActionError`](coffer_sdk::ActionError).
    pub apply_json: unsafe extern "C" fn(
        game: *mut GameHandle,
        player: u16,
        json: *const u8,
        len: usize,
        out: *mut Buf,
    ) -> Status,
    /// Applies an action from its JSON and answers, in the same call, what `state_hash`, `events` and
    /// `acting` would answer right after it
    /// ([`DynGame::apply_json_reporting`](coffer_sdk::DynGame::apply_json_reporting)): writes the new state
    /// hash to `hash`, the postcard encoding of the action's events for `seat` (a seat's index,
    /// [`SPECTATOR`](crate::SPECTATOR) or [`EVERYONE`](crate::EVERYONE)) to `out`, and to `list`/`count` the players who may act as `acting`
    /// does (the plugin's cache, unchanged until the next call on this game). On refusal `out` holds the
    /// JSON of an [`ActionError`](coffer_sdk::ActionError) and `hash`, `list` and `count` are not written. A panic in any part
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
    /// The snapshot bytes (`format` 0 JSON, 1 binary); on refusal `out` holds a [`SetupError`](coffer_sdk::SetupError) JSON.
    pub snapshot:
        unsafe extern "C" fn(game: *const GameHandle, format: u8, out: *mut Buf) -> Status,
    /// The postcard encoding of the [`Outcome`](coffer_sdk::Outcome).
    pub outcome: unsafe extern "C" fn(game: *const GameHandle, out: *mut Buf) -> Status,
    /// The table of `seat` ([`SPECTATOR`](crate::SPECTATOR): a spectator's), as postcard bytes of [`Table`](coffer_sdk::Table).
    pub table: unsafe extern "C" fn(game: *const GameHandle, seat: i32, out: *mut Buf) -> Status,
    /// The postcard encoding of the `Vec<ResourceView>`.
    pub resources:
        unsafe extern "C" fn(game: *const GameHandle, seat: i32, out: *mut Buf) -> Status,
    /// [`OK`](crate::OK), or [`REFUSED`](crate::REFUSED) with the violation's message.
    pub check_invariants: unsafe extern "C" fn(game: *const GameHandle, out: *mut Buf) -> Status,
    /// An independent copy of the game.
    pub clone_game: unsafe extern "C" fn(
        game: *const GameHandle,
        copy: *mut *mut GameHandle,
        out: *mut Buf,
    ) -> Status,
    /// Sets the game up again from `len` bytes of [`Setup`](coffer_sdk::Setup) JSON, reusing its allocations
    /// ([`DynGame::reset`](coffer_sdk::DynGame::reset)); on refusal `out` holds the JSON of a
    /// [`SetupError`](coffer_sdk::SetupError) and the game is unchanged. A panic leaves the game as it was
    /// before the call.
    pub reset: unsafe extern "C" fn(
        game: *mut GameHandle,
        setup: *const u8,
        len: usize,
        out: *mut Buf,
    ) -> Status,
}

//! The exporting side of Coffer's C ABI: what every plugin `cdylib` exports so a host can load it at runtime.
//!
//! # What crosses the boundary
//! Only `#[repr(C)]` data, `extern "C"` functions and byte buffers. No Rust trait object, `Box`, `String`,
//! `Vec` or `TypeId` crosses: the host and the plugin each have their own copy of `coffer-core`, `std`,
//! `serde` and `tracing`, and their layouts are not promised to agree.
//!
//! # The declaration symbol
//! [`plugin!`](crate::plugin) exports one [`Declaration`] per crate under the name
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

use coffer_kernel::Owner;
/// Who may act, as the hot path hands it across the boundary (defined beside [`DynGame`](coffer_sdk::DynGame) in the SDK).
pub use coffer_sdk::Acting;
use coffer_sdk::Format;

/// The magic number every declaration starts with: the bytes `COFFER` then the ABI family `\0\x01`.
pub const MAGIC: u64 = u64::from_le_bytes(*b"COFFER\0\x01");
/// The version of this ABI: the layout of [`Declaration`] and [`VTable`] and the encodings of every buffer.
pub const ABI_VERSION: u32 = 9;
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
/// Refused: the out buffer holds the error (JSON of [`ActionError`](coffer_sdk::ActionError) or [`SetupError`](coffer_sdk::SetupError), or a message).
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

/// What [`plugin!`] expands to names, re-exported so a ruleset crate needs no dependency of its own on them.
#[doc(hidden)]
pub mod __private {
    pub use coffer_sdk::{Adapter, StaticRuleset, inventory};
}

/// Registers one or more rulesets: statically (through `inventory`) for a host that links the crate, and
/// exported for hosts that load the crate's `cdylib` at runtime.
///
/// Invoke it once per crate (list every ruleset of the crate in that one call): it exports the crate's
/// [`Declaration`] under the symbol `coffer_plugin_<crate name>` (see the crate docs), which a second
/// invocation would define twice.
///
/// ```
/// use coffer_kernel::{Ledger, Owner};
/// use coffer_sdk::{ActionError, Description, Outcome, Ruleset, SetupError};
///
/// struct Solitaire;
///
/// impl Ruleset for Solitaire {
///     type State = Ledger;
///     type Action = ();
///     type Config = ();
///     fn describe(&self) -> Description {
///         Description::new("solitaire", "0.1.0", "a ruleset with nothing to do")
///     }
///     fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<Ledger, SetupError> {
///         Ok(Ledger::new(players, seed))
///     }
///     fn legal_actions(&self, _: &Ledger, _: Owner, _: &mut Vec<()>) {}
///     fn apply(&self, _: &mut Ledger, _: Owner, _: &()) -> Result<(), ActionError> {
///         Err(ActionError::Illegal("nothing to do".into()))
///     }
///     fn ledger<'s>(&self, state: &'s Ledger) -> &'s Ledger { state }
///     fn ledger_mut<'s>(&self, state: &'s mut Ledger) -> &'s mut Ledger { state }
///     fn outcome(&self, _: &Ledger) -> Outcome { Outcome::Ongoing }
/// }
///
/// coffer_abi::plugin!(Solitaire);
///
/// fn main() {
///     let found = coffer_sdk::static_rulesets();
///     assert!(found.iter().any(|r| r.description().key() == "solitaire@0.1.0"));
/// }
/// ```
#[macro_export]
macro_rules! plugin {
    ($($ruleset:expr),+ $(,)?) => {
        $(
            $crate::__private::inventory::submit! {
                $crate::__private::StaticRuleset::new(|| $crate::__private::Adapter::shared($ruleset))
            }
        )+
        #[cfg(not(target_family = "wasm"))]
        const _: () = {
            /// The runtime-loading declaration of this crate (see `coffer_abi`).
            #[allow(unsafe_code)]
            #[unsafe(export_name = concat!("coffer_plugin_", env!("CARGO_CRATE_NAME")))]
            pub static COFFER_PLUGIN_DECLARATION: $crate::Declaration = $crate::Declaration::CURRENT;
        };
        #[cfg(target_family = "wasm")]
        $crate::wasm_exports!($($ruleset),+);
    };
}

/// The exports of a WebAssembly ruleset module (see [`guest`]): what [`plugin!`] expands to when the
/// crate is built for a `wasm32` target. Each is a shell over the function of [`guest`] with its name.
#[doc(hidden)]
#[macro_export]
macro_rules! wasm_exports {
    ($($ruleset:expr),+) => {
        #[allow(unsafe_code)]
        const _: () = {
            use $crate::guest;

            #[link(wasm_import_module = "coffer")]
            unsafe extern "C" {
                /// The host's messenger for a panic's message (the one import of the contract).
                #[link_name = "panicked"]
                fn coffer_panicked(message: *const u8, len: usize);
            }

            fn messenger(message: &str) {
                // SAFETY: the host reads `len` bytes at `message` from this module's memory, which
                // holds them for the whole call.
                unsafe { coffer_panicked(message.as_ptr(), message.len()) }
            }

            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_wasm_abi_version() -> u32 { guest::WASM_ABI_VERSION }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_init() -> u32 {
                let rulesets = ::std::vec![$($crate::__private::Adapter::shared($ruleset)),+];
                guest::init(rulesets, messenger) as u32
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_input(len: u32) -> u32 { guest::input(len) as u32 }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_core_version() -> u32 { guest::core_version() }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_ruleset_count() -> u32 { guest::ruleset_count() }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_describe(index: u32) -> u32 { guest::describe(index) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_new_game(index: u32, len: u32) -> u32 { guest::new_game(index, len) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_restore(index: u32, format: u32, len: u32) -> u32 {
                guest::restore(index, format, len)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_free_game(game: u32) -> u32 { guest::free_game(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_players(game: u32) -> u32 { guest::players(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_legal_actions(game: u32, player: u32) -> u32 {
                guest::legal_actions(game, player)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_to_act(game: u32) -> u32 { guest::to_act(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_acting(game: u32) -> u32 { guest::acting(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_legal_action_json(game: u32, index: u32) -> u32 {
                guest::legal_action_json(game, index)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_apply_legal(game: u32, player: u32, index: u32) -> u32 {
                guest::apply_legal(game, player, index)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_apply_legal_then_acting(game: u32, player: u32, index: u32) -> u32 {
                guest::apply_legal_then_acting(game, player, index)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_playout(game: u32, high: u64, low: u64, max_actions: u64) -> u32 {
                guest::playout(game, high, low, max_actions)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_apply_json(game: u32, player: u32, len: u32) -> u32 {
                guest::apply_json(game, player, len)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_apply_json_reporting(game: u32, player: u32, len: u32, seat: i32) -> u32 {
                guest::apply_json_reporting(game, player, len, seat)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_events(game: u32, seat: i32) -> u32 { guest::events(game, seat) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_state_hash(game: u32) -> u32 { guest::state_hash(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_snapshot(game: u32, format: u32) -> u32 { guest::snapshot(game, format) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_outcome(game: u32) -> u32 { guest::outcome(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_table(game: u32, seat: i32) -> u32 { guest::table(game, seat) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_resources(game: u32, seat: i32) -> u32 { guest::resources(game, seat) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_check_invariants(game: u32) -> u32 { guest::check_invariants(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_clone_game(game: u32) -> u32 { guest::clone_game(game) }
            #[unsafe(no_mangle)]
            pub extern "C" fn coffer_reset(game: u32, len: u32) -> u32 { guest::reset(game, len) }
        };
    };
}

#[allow(unsafe_code)]
mod exports;
#[allow(unsafe_code)]
mod forward;
#[allow(unsafe_code)]
mod game;
#[allow(unsafe_code)]
mod guard;
pub mod guest;
#[allow(unsafe_code)]
mod layout;

pub use exports::{VTABLE, events_code};
pub use layout::{Buf, Declaration, GameHandle, Header, LogSink, StrRef, VTable};

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

pub(crate) fn format_from(code: u8) -> Option<Format> {
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

#[cfg(test)]
#[allow(unsafe_code)]
mod tests;

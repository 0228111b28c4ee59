//! The guest side of the WebAssembly contract: what a ruleset module exports so a host can run it in a
//! sandbox (`coffer_host::wasm`). [`plugin!`](crate::plugin) emits the exported functions, each a
//! one-line shell over a function of this module, when the crate is built for a `wasm32` target.
//!
//! # Why core modules and plain functions
//! The native C ABI already carries only integers and byte buffers, so the WebAssembly contract is the
//! same operations as core-module exports of `i32`/`i64` parameters, with bytes in the guest's linear
//! memory. A module builds with plain `cargo build --target wasm32-unknown-unknown`: no extra tool
//! (`cargo component`, `wit-bindgen`) for a ruleset author, and no copy through the canonical ABI on the
//! hot path (an `apply` crossing passes three integers and reads a fixed reply). `ARCHITECTURE.md` says
//! more.
//!
//! # The exports
//! Every export starts with `coffer_`; see [`EXPORTS`] for the list a host checks at load. Each call
//! returns a status ([`OK`](crate::OK), [`REFUSED`](crate::REFUSED)) and writes what it answers to the
//! [`Reply`] whose address `coffer_init` returned: the bytes of the answer (`out_ptr`, `out_len`: the same
//! encodings as the native ABI: JSON descriptions, setups, actions and errors; postcard events, outcomes,
//! tables and resource views), a game handle, a count, the list of who may act (`list_ptr`, `list_len`:
//! 8-byte entries, the player as a little-endian `u16` at offset 0 and the count of legal actions as a
//! `u32` at offset 4), a state hash and a playout's results. What the reply points to stays valid until
//! the next call. Bytes the host passes in are written to the input buffer that `coffer_input(len)`
//! returns, then the call reads its first `len` bytes.
//!
//! A panic cannot be caught on `wasm32-unknown-unknown` (it aborts: the call traps). The panic hook sends
//! the message to the host through the one import of the contract, `coffer.panicked(ptr, len)`, before
//! the trap; the host then stops the game that trapped and recovers the others (see the host's docs).
//!
//! # Handles
//! A game is a `u32` index into the module's table of games: a handle the host did not get, or freed,
//! is refused, not undefined behaviour.

use crate::{CORE_VERSION, EVERYONE, OK, REFUSED, Status, audience, format_from};
use coffer_kernel::{GameRng, Owner};
use coffer_sdk::{
    Acting, ActionError, DynGame, DynRuleset, EventsFor, PlayoutError, Progress, Setup, SetupError,
};
use std::cell::RefCell;
use std::sync::Arc;

/// The version of the WebAssembly contract: the exports, their parameters, the [`Reply`] layout and the
/// encodings of every buffer.
pub const WASM_ABI_VERSION: u32 = 4;

/// The module and name of the one function a module may import: the panic hook's messenger.
pub const PANIC_IMPORT: (&str, &str) = ("coffer", "panicked");

/// The functions every module exports, besides its `memory`.
pub const EXPORTS: [&str; 28] = [
    "coffer_wasm_abi_version",
    "coffer_init",
    "coffer_input",
    "coffer_core_version",
    "coffer_ruleset_count",
    "coffer_describe",
    "coffer_new_game",
    "coffer_restore",
    "coffer_free_game",
    "coffer_players",
    "coffer_legal_actions",
    "coffer_to_act",
    "coffer_acting",
    "coffer_legal_action_json",
    "coffer_apply_legal",
    "coffer_apply_legal_then_acting",
    "coffer_playout",
    "coffer_apply_json",
    "coffer_apply_json_reporting",
    "coffer_events",
    "coffer_state_hash",
    "coffer_snapshot",
    "coffer_outcome",
    "coffer_table",
    "coffer_resources",
    "coffer_check_invariants",
    "coffer_clone_game",
    "coffer_reset",
];

/// What the last call answered, at a fixed address in the guest's memory (little-endian, `#[repr(C)]`,
/// 64 bytes: the host reads it as [`REPLY_SIZE`] bytes at that address).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Reply {
    /// Where the answer's bytes start.
    pub out_ptr: u32,
    /// How many bytes the answer has.
    pub out_len: u32,
    /// Where the list of who may act starts.
    pub list_ptr: u32,
    /// How many entries the list has.
    pub list_len: u32,
    /// A game handle (`new_game`, `restore`, `clone_game`), a count (`ruleset_count`, `players`,
    /// `legal_actions`), or the player of a playout's last step.
    pub value: u32,
    /// The index of a playout's last step (`u32::MAX`: none).
    pub index: u32,
    /// A state hash, or how many actions a playout applied.
    pub wide: u64,
    /// A playout's generator state, high half.
    pub rng_high: u64,
    /// A playout's generator state, low half.
    pub rng_low: u64,
    /// Unused, so that the layout can grow without a new version.
    pub reserved: [u32; 4],
}

/// The size of [`Reply`] in bytes.
pub const REPLY_SIZE: usize = std::mem::size_of::<Reply>();

/// One game of the module.
struct GuestGame {
    game: Box<dyn DynGame>,
}

/// Everything a module keeps between calls.
struct Guest {
    rulesets: Vec<Arc<dyn DynRuleset>>,
    games: Vec<Option<GuestGame>>,
    /// Free slots of `games`.
    free: Vec<u32>,
    input: Vec<u8>,
    out: Vec<u8>,
    /// The who-may-act list of the last call, as the host reads it (8-byte entries).
    list: Vec<[u32; 2]>,
    reply: Box<Reply>,
}

thread_local! {
    static GUEST: RefCell<Option<Guest>> = const { RefCell::new(None) };
}

/// Runs `f` on the module's state (made by [`init`]).
fn with<T>(f: impl FnOnce(&mut Guest) -> T) -> T {
    GUEST.with(|g| {
        let mut g = g.borrow_mut();
        let g = g.as_mut().expect("coffer_init is called first");
        f(g)
    })
}

/// Makes the module's state from its rulesets, installs the panic hook (`messenger` sends a panic's
/// message to the host) and returns the address of the [`Reply`].
pub fn init(rulesets: Vec<Arc<dyn DynRuleset>>, messenger: fn(&str)) -> usize {
    std::panic::set_hook(Box::new(move |info| {
        messenger(&crate::panic_message(info.payload()));
    }));
    GUEST.with(|g| {
        let mut g = g.borrow_mut();
        let guest = g.get_or_insert_with(|| Guest {
            rulesets,
            games: Vec::new(),
            free: Vec::new(),
            input: Vec::new(),
            out: Vec::new(),
            list: Vec::new(),
            reply: Box::default(),
        });
        &*guest.reply as *const Reply as usize
    })
}

/// The address of an input buffer of at least `len` bytes.
pub fn input(len: u32) -> usize {
    with(|g| {
        let len = len as usize;
        if g.input.len() < len {
            g.input.resize(len, 0);
        }
        g.input.as_mut_ptr() as usize
    })
}

impl Guest {
    /// Answers `bytes` with `status`.
    fn answer(&mut self, status: Status, bytes: Vec<u8>) -> Status {
        self.out = bytes;
        self.reply.out_ptr = self.out.as_ptr() as usize as u32;
        self.reply.out_len = self.out.len() as u32;
        status
    }

    fn ok(&mut self) -> Status {
        self.reply.out_len = 0;
        OK
    }

    fn refuse(&mut self, error: &impl serde::Serialize) -> Status {
        let bytes = serde_json::to_vec(error).unwrap_or_default();
        self.answer(REFUSED, bytes)
    }

    fn ruleset(&self, index: u32) -> Option<Arc<dyn DynRuleset>> {
        self.rulesets.get(index as usize).cloned()
    }

    fn game(&mut self, handle: u32) -> Option<&mut dyn DynGame> {
        match self.games.get_mut(handle as usize) {
            Some(Some(g)) => Some(&mut *g.game),
            _ => None,
        }
    }

    fn keep(&mut self, game: Box<dyn DynGame>) -> Status {
        let game = Some(GuestGame { game });
        let handle = match self.free.pop() {
            Some(slot) => {
                self.games[slot as usize] = game;
                slot
            }
            None => {
                self.games.push(game);
                (self.games.len() - 1) as u32
            }
        };
        self.reply.value = handle;
        self.ok()
    }

    /// The game `handle` with the list and reply it answers into, borrowed apart so that its list of
    /// who may act is copied straight from the game's cache (no copy of its own on the hot path).
    fn game_and_list(&mut self, handle: u32) -> Option<(&mut dyn DynGame, Listing<'_>)> {
        let Guest {
            games, list, reply, ..
        } = self;
        let game = games.get_mut(handle as usize)?.as_mut()?;
        Some((&mut *game.game, Listing { list, reply }))
    }

    /// The action's JSON in the input's first `len` bytes, or the refusal of bytes that are not UTF-8.
    fn action_text(&mut self, len: u32) -> Result<String, Status> {
        match std::str::from_utf8(&self.input[..len as usize]) {
            Ok(text) => Ok(text.to_owned()),
            Err(_) => Err(self.refuse(&ActionError::Malformed(
                "the action is not UTF-8".to_owned(),
            ))),
        }
    }

    fn no_game(&mut self, handle: u32) -> Status {
        let e = ActionError::Malformed(format!("no game has handle {handle} in this module"));
        self.refuse(&e)
    }
}

/// The list of who may act and the reply that points to it.
struct Listing<'g> {
    list: &'g mut Vec<[u32; 2]>,
    reply: &'g mut Reply,
}

impl Listing<'_> {
    /// Copies who may act into the list the host reads.
    fn fill(self, acting: &[Acting]) {
        self.list.clear();
        self.list
            .extend(acting.iter().map(|a| [u32::from(a.player), a.legal as u32]));
        self.reply.list_ptr = self.list.as_ptr() as usize as u32;
        self.reply.list_len = self.list.len() as u32;
    }
}

/// Runs `f` on game `handle`, or refuses an unknown handle.
fn on_game(
    handle: u32,
    f: impl FnOnce(&mut dyn DynGame, &mut Reply) -> Result<Status, Answer>,
) -> Status {
    with(|g| {
        let Some(game) = g.games.get_mut(handle as usize).and_then(Option::as_mut) else {
            return g.no_game(handle);
        };
        let mut reply = *g.reply;
        let answered = f(&mut *game.game, &mut reply);
        *g.reply = reply;
        match answered {
            Ok(status) => {
                g.reply.out_len = 0;
                status
            }
            Err(Answer::Bytes(status, bytes)) => g.answer(status, bytes),
            Err(Answer::Action(e)) => g.refuse(&e),
            Err(Answer::Setup(e)) => g.refuse(&e),
        }
    })
}

/// What a call on a game answers besides its status and the reply's numbers.
enum Answer {
    Bytes(Status, Vec<u8>),
    Action(ActionError),
    Setup(SetupError),
}

fn postcard_answer(value: &impl serde::Serialize) -> Answer {
    match postcard::to_stdvec(value) {
        Ok(bytes) => Answer::Bytes(OK, bytes),
        Err(e) => Answer::Bytes(REFUSED, e.to_string().into_bytes()),
    }
}

/// The core version the module was built with, as bytes of the reply.
pub fn core_version() -> Status {
    with(|g| g.answer(OK, CORE_VERSION.as_bytes().to_vec()))
}

/// How many rulesets the module holds, in `value`.
pub fn ruleset_count() -> Status {
    with(|g| {
        g.reply.value = g.rulesets.len() as u32;
        g.ok()
    })
}

/// The JSON description of ruleset `index`.
pub fn describe(index: u32) -> Status {
    with(|g| match g.ruleset(index) {
        Some(r) => {
            let bytes = serde_json::to_vec(r.description()).unwrap_or_default();
            g.answer(OK, bytes)
        }
        None => g.refuse(&SetupError::Config(format!("no ruleset has index {index}"))),
    })
}

/// A new game of ruleset `index` from the setup JSON in the input's first `len` bytes; its handle in
/// `value`.
pub fn new_game(index: u32, len: u32) -> Status {
    with(|g| {
        let Some(r) = g.ruleset(index) else {
            return g.refuse(&SetupError::Config(format!("no ruleset has index {index}")));
        };
        let setup: Setup = match serde_json::from_slice(&g.input[..len as usize]) {
            Ok(s) => s,
            Err(e) => return g.refuse(&SetupError::Config(e.to_string())),
        };
        match r.new_game(&setup) {
            Ok(game) => g.keep(game),
            Err(e) => g.refuse(&e),
        }
    })
}

/// A game of ruleset `index` from a snapshot (`format` 0 JSON, 1 binary) in the input.
pub fn restore(index: u32, format: u32, len: u32) -> Status {
    with(|g| {
        let Some(r) = g.ruleset(index) else {
            return g.refuse(&SetupError::Config(format!("no ruleset has index {index}")));
        };
        let Some(format) = u8::try_from(format).ok().and_then(format_from) else {
            return g.refuse(&SetupError::Snapshot(format!(
                "unknown format code {format}"
            )));
        };
        match r.restore(format, &g.input[..len as usize]) {
            Ok(game) => g.keep(game),
            Err(e) => g.refuse(&e),
        }
    })
}

/// Frees game `handle` (an unknown handle is ignored).
pub fn free_game(handle: u32) -> Status {
    with(|g| {
        if let Some(slot) = g.games.get_mut(handle as usize)
            && slot.take().is_some()
        {
            g.free.push(handle);
        }
        // Freed games give their memory back to the module's allocator; an empty table gives it all.
        if g.free.len() == g.games.len() {
            g.games = Vec::new();
            g.free = Vec::new();
        }
        g.ok()
    })
}

/// The number of players, in `value`.
pub fn players(handle: u32) -> Status {
    on_game(handle, |game, reply| {
        reply.value = u32::from(game.players());
        Ok(OK)
    })
}

/// Lists `player`'s legal actions; how many in `value`.
pub fn legal_actions(handle: u32, player: u32) -> Status {
    on_game(handle, |game, reply| {
        reply.value = game.legal_actions(Owner(player as u16)) as u32;
        Ok(OK)
    })
}

/// Who may act, as little-endian `u16`s in the answer's bytes.
pub fn to_act(handle: u32) -> Status {
    on_game(handle, |game, _| {
        let bytes = game
            .to_act()
            .iter()
            .flat_map(|p| p.0.to_le_bytes())
            .collect();
        Err(Answer::Bytes(OK, bytes))
    })
}

/// Who may act with their counts, in the list.
pub fn acting(handle: u32) -> Status {
    with(|g| {
        let Some((game, listing)) = g.game_and_list(handle) else {
            return g.no_game(handle);
        };
        listing.fill(game.acting());
        g.ok()
    })
}

/// The JSON of listed legal action `index`; refused with no bytes when there is none.
pub fn legal_action_json(handle: u32, index: u32) -> Status {
    on_game(handle, |game, _| {
        match game.legal_action_json(index as usize) {
            Some(s) => Err(Answer::Bytes(OK, s.into_bytes())),
            None => Err(Answer::Bytes(REFUSED, Vec::new())),
        }
    })
}

/// Applies legal action `index` of `player`.
pub fn apply_legal(handle: u32, player: u32, index: u32) -> Status {
    on_game(handle, |game, _| {
        game.apply_legal(Owner(player as u16), index as usize)
            .map(|()| OK)
            .map_err(Answer::Action)
    })
}

/// Applies legal action `index` of `player`, then lists who may act.
pub fn apply_legal_then_acting(handle: u32, player: u32, index: u32) -> Status {
    with(|g| {
        let Some((game, listing)) = g.game_and_list(handle) else {
            return g.no_game(handle);
        };
        match game.apply_legal_then_acting(Owner(player as u16), index as usize) {
            Ok(acting) => {
                listing.fill(acting);
                g.ok()
            }
            Err(e) => g.refuse(&e),
        }
    })
}

/// A random playout of at most `max_actions` actions from generator state `[high, low]`: how many were
/// applied in `wide`, the generator's state after in `rng_high`/`rng_low`, the last step's player and
/// index in `value`/`index` (`u32::MAX`: none). A refused step answers its error.
pub fn playout(handle: u32, high: u64, low: u64, max_actions: u64) -> Status {
    on_game(handle, |game, reply| {
        let mut rng = match GameRng::try_from([high, low]) {
            Ok(rng) => rng,
            Err(e) => {
                reply.wide = 0;
                reply.index = u32::MAX;
                return Err(Answer::Action(ActionError::Malformed(e)));
            }
        };
        let mut progress = Progress::default();
        let played = game.playout(&mut rng, max_actions, &mut progress);
        let [high, low]: [u64; 2] = rng.into();
        reply.rng_high = high;
        reply.rng_low = low;
        reply.wide = progress.applied;
        let (who, which) = progress
            .chosen
            .map_or((0, u32::MAX), |(p, i)| (p.0, i as u32));
        reply.value = u32::from(who);
        reply.index = which;
        match played {
            Ok(_) => Ok(OK),
            Err(PlayoutError::Refused { error, .. }) => Err(Answer::Action(error)),
            Err(PlayoutError::Observer(never)) => match never {},
        }
    })
}

/// Applies the action whose JSON is the input's first `len` bytes.
pub fn apply_json(handle: u32, player: u32, len: u32) -> Status {
    with(|g| {
        let text = match g.action_text(len) {
            Ok(text) => text,
            Err(status) => return status,
        };
        let Some(game) = g.game(handle) else {
            return g.no_game(handle);
        };
        match game.apply_json(Owner(player as u16), &text) {
            Ok(()) => g.ok(),
            Err(e) => g.refuse(&e),
        }
    })
}

/// Applies the action in the input as [`apply_json`], then answers the state hash (`wide`), the action's
/// events for `seat` (postcard bytes) and who may act (the list).
pub fn apply_json_reporting(handle: u32, player: u32, len: u32, seat: i32) -> Status {
    with(|g| {
        let text = match g.action_text(len) {
            Ok(text) => text,
            Err(status) => return status,
        };
        let audience = if seat == EVERYONE {
            EventsFor::Everyone
        } else {
            EventsFor::Seat(audience(seat))
        };
        let Some((game, listing)) = g.game_and_list(handle) else {
            return g.no_game(handle);
        };
        match game.apply_json_reporting(Owner(player as u16), &text, audience) {
            Ok(report) => {
                let events = postcard::to_stdvec(&report.events)
                    .unwrap_or_else(|e| panic!("the action's events cannot be encoded: {e}"));
                listing.reply.wide = report.hash.0;
                listing.fill(report.acting);
                g.answer(OK, events)
            }
            Err(e) => g.refuse(&e),
        }
    })
}

/// The postcard encoding of the last action's events for `seat` ([`EVERYONE`]: all).
pub fn events(handle: u32, seat: i32) -> Status {
    on_game(handle, |game, _| {
        if seat == EVERYONE {
            Err(postcard_answer(&game.events()))
        } else {
            Err(postcard_answer(&game.events_for(audience(seat))))
        }
    })
}

/// The state hash, in `wide`.
pub fn state_hash(handle: u32) -> Status {
    on_game(handle, |game, reply| {
        reply.wide = game.state_hash().0;
        Ok(OK)
    })
}

/// The snapshot bytes (`format` 0 JSON, 1 binary).
pub fn snapshot(handle: u32, format: u32) -> Status {
    on_game(handle, |game, _| {
        let Some(format) = u8::try_from(format).ok().and_then(format_from) else {
            return Err(Answer::Setup(SetupError::Snapshot(format!(
                "unknown format code {format}"
            ))));
        };
        match game.snapshot(format) {
            Ok(bytes) => Err(Answer::Bytes(OK, bytes)),
            Err(e) => Err(Answer::Setup(e)),
        }
    })
}

/// The postcard encoding of the outcome.
pub fn outcome(handle: u32) -> Status {
    on_game(handle, |game, _| Err(postcard_answer(&game.outcome())))
}

/// The postcard encoding of `seat`'s table.
pub fn table(handle: u32, seat: i32) -> Status {
    on_game(handle, |game, _| {
        Err(postcard_answer(&game.table(audience(seat))))
    })
}

/// The postcard encoding of the resources `seat` may see.
pub fn resources(handle: u32, seat: i32) -> Status {
    on_game(handle, |game, _| {
        Err(postcard_answer(&game.resources(audience(seat))))
    })
}

/// [`OK`], or [`REFUSED`] with the violation's message.
pub fn check_invariants(handle: u32) -> Status {
    on_game(handle, |game, _| match game.check_invariants() {
        Ok(()) => Ok(OK),
        Err(v) => Err(Answer::Bytes(REFUSED, v.0.into_bytes())),
    })
}

/// An independent copy of the game; its handle in `value`.
pub fn clone_game(handle: u32) -> Status {
    with(|g| {
        let Some(game) = g.game(handle) else {
            return g.no_game(handle);
        };
        let copy = game.clone_game();
        g.keep(copy)
    })
}

/// Sets game `handle` up again from the setup JSON in the input's first `len` bytes
/// ([`DynGame::reset`]); on refusal the game is unchanged.
pub fn reset(handle: u32, len: u32) -> Status {
    with(|g| {
        let setup: Setup = match serde_json::from_slice(&g.input[..len as usize]) {
            Ok(s) => s,
            Err(e) => return g.refuse(&SetupError::Config(e.to_string())),
        };
        let Some(game) = g.games.get_mut(handle as usize).and_then(Option::as_mut) else {
            return g.no_game(handle);
        };
        match game.game.reset(&setup) {
            Ok(()) => g.ok(),
            Err(e) => g.refuse(&e),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Solitaire;

    impl coffer_sdk::Ruleset for Solitaire {
        type State = coffer_kernel::Ledger;
        type Action = ();
        type Config = ();
        fn describe(&self) -> coffer_sdk::Description {
            coffer_sdk::Description::new("solitaire", "0.1.0", "a ruleset with nothing to do")
        }
        fn new_game(
            &self,
            players: u16,
            seed: u64,
            _: &(),
        ) -> Result<coffer_kernel::Ledger, SetupError> {
            Ok(coffer_kernel::Ledger::new(players, seed))
        }
        fn legal_actions(&self, _: &coffer_kernel::Ledger, _: Owner, _: &mut Vec<()>) {}
        fn apply(
            &self,
            _: &mut coffer_kernel::Ledger,
            _: Owner,
            _: &(),
        ) -> Result<(), ActionError> {
            Err(ActionError::Illegal("nothing to do".into()))
        }
        fn ledger<'s>(&self, state: &'s coffer_kernel::Ledger) -> &'s coffer_kernel::Ledger {
            state
        }
        fn ledger_mut<'s>(
            &self,
            state: &'s mut coffer_kernel::Ledger,
        ) -> &'s mut coffer_kernel::Ledger {
            state
        }
        fn outcome(&self, _: &coffer_kernel::Ledger) -> coffer_sdk::Outcome {
            coffer_sdk::Outcome::Ongoing
        }
    }

    fn reply() -> Reply {
        with(|g| *g.reply)
    }

    fn out() -> Vec<u8> {
        with(|g| g.out[..g.reply.out_len as usize].to_vec())
    }

    #[test]
    fn a_game_made_through_the_guest_plays_and_refuses_unknown_handles() {
        init(vec![coffer_sdk::Adapter::shared(Solitaire)], |_| {});
        drop(std::panic::take_hook());
        assert_eq!(ruleset_count(), OK);
        let count = reply().value;
        assert!(count >= 1);
        assert_eq!(describe(0), OK);
        assert!(out().starts_with(b"{"));
        let setup = serde_json::to_vec(&Setup::new(2, 7)).unwrap();
        let at = input(setup.len() as u32);
        assert_ne!(at, 0);
        with(|g| g.input[..setup.len()].copy_from_slice(&setup));
        let status = new_game(0, setup.len() as u32);
        assert_eq!(status, OK, "{}", String::from_utf8_lossy(&out()));
        let handle = reply().value;
        assert_eq!(state_hash(handle), OK);
        assert_eq!(players(handle), OK);
        assert_eq!(reply().value, 2);
        assert_eq!(
            apply_legal(handle, 0, 0),
            REFUSED,
            "solitaire has no action"
        );
        assert!(
            String::from_utf8_lossy(&out()).contains("NoSuchLegalAction"),
            "{:?}",
            String::from_utf8_lossy(&out())
        );
        assert_eq!(free_game(handle), OK);
        assert_eq!(apply_legal(handle, 0, 0), REFUSED);
        assert_eq!(state_hash(handle), REFUSED);
        assert!(String::from_utf8_lossy(&out()).contains("no game has handle"));
    }
}

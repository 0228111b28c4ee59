//! A game of a runtime-loaded ruleset: the [`DynGame`] backed by a library's vtable, each call under the
//! watchdog, its failures recorded instead of answered wrongly.

use coffer_core::abi::{self, Acting, Buf, GameHandle, VTable};
use coffer_core::{
    ActionError, ActionReport, DynGame, Event, EventsFor, Format, GameRng, Outcome, Owner,
    PlayoutError, Progress, ResourceView, Setup, SetupError, StateHash, Table, Violation,
};
use std::cell::RefCell;
use std::sync::Arc;

use crate::loader::calls::{Call, InCall};
use crate::loader::library::{Failure, Library};

pub(crate) fn setup_error(failure: Failure, id: &str) -> SetupError {
    match failure {
        Failure::Refused(bytes) => serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| SetupError::Config(String::from_utf8_lossy(&bytes).into_owned())),
        Failure::Panicked(m) => SetupError::Panicked(m),
        Failure::Poisoned => SetupError::Poisoned(id.to_owned()),
    }
}

pub(crate) fn action_error(failure: Failure, id: &str) -> ActionError {
    match failure {
        Failure::Refused(bytes) => serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| ActionError::Illegal(String::from_utf8_lossy(&bytes).into_owned())),
        Failure::Panicked(m) => ActionError::Panicked(m),
        Failure::Poisoned => ActionError::Poisoned(id.to_owned()),
    }
}

/// A game living in a plugin library.
pub(crate) struct RuntimeGame {
    pub(crate) lib: &'static Library,
    /// Owned by this value; null for a game that could not be copied from a poisoned library.
    pub(crate) handle: *mut GameHandle,
    pub(crate) id: Arc<str>,
    pub(crate) players: u16,
    pub(crate) events: Vec<Event>,
    /// Whether `events` holds the last action's events (fetched lazily).
    pub(crate) events_fresh: bool,
    /// The plugin's answer to `to_act`, as written across the boundary and as handed out.
    pub(crate) acting_raw: Vec<u16>,
    pub(crate) acting: Vec<Owner>,
    /// The first failed call whose trait method has no error (so it answered a neutral value), in words.
    pub(crate) failure: RefCell<Option<String>>,
}

// SAFETY: the handle is owned by this value alone and the plugin's game is a `DynGame`, which is `Send`;
// calls on it are serialised by `&mut self` / the host's per-game lock.
unsafe impl Send for RuntimeGame {}

impl RuntimeGame {
    pub(crate) fn new(
        lib: &'static Library,
        handle: *mut GameHandle,
        id: Arc<str>,
        players: u16,
    ) -> Self {
        RuntimeGame {
            lib,
            handle,
            id,
            players,
            events: Vec::new(),
            events_fresh: true,
            acting_raw: Vec::new(),
            acting: Vec::new(),
            failure: RefCell::new(None),
        }
    }

    #[inline]
    pub(crate) fn call_hot(
        &self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<(), Failure> {
        if self.handle.is_null() {
            return Err(Failure::Poisoned);
        }
        self.lib.call_hot(call, f)
    }

    pub(crate) fn call(
        &self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
    ) -> Result<Vec<u8>, Failure> {
        if self.handle.is_null() {
            return Err(Failure::Poisoned);
        }
        self.lib.call(call, f)
    }

    /// Records the first failure of a call that answers a neutral value instead of an error.
    #[cold]
    pub(crate) fn failed(&self, call: Call, failure: &Failure) {
        let mut slot = self.failure.borrow_mut();
        if slot.is_none() {
            *slot = Some(self.lib.describe(call, failure));
        }
    }

    /// Records an answer that could not be read.
    #[cold]
    pub(crate) fn unreadable(&self, call: Call, error: &postcard::Error) {
        let mut slot = self.failure.borrow_mut();
        if slot.is_none() {
            *slot = Some(format!(
                "plugin library {} failed in the call `{call}`: its answer is unreadable: {error}",
                self.lib.path.display()
            ));
        }
    }

    /// A call answering postcard bytes: the value, or `fallback` with the failure recorded.
    pub(crate) fn decoded<T: serde::de::DeserializeOwned>(
        &self,
        call: Call,
        f: impl FnOnce(&VTable, *mut Buf) -> abi::Status,
        fallback: impl FnOnce() -> T,
    ) -> T {
        match self.call(call, f) {
            Ok(bytes) => postcard::from_bytes(&bytes).unwrap_or_else(|e| {
                self.unreadable(call, &e);
                fallback()
            }),
            Err(failure) => {
                self.failed(call, &failure);
                fallback()
            }
        }
    }
}

impl Drop for RuntimeGame {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            let _in_call = InCall::enter(self.lib.subject, Call::FreeGame);
            // The plugin's own function frees its memory (a panic in it is caught on the plugin side).
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (self.lib.vt.free_game)(self.handle) };
        }
    }
}

impl DynGame for RuntimeGame {
    fn players(&self) -> u16 {
        self.players
    }

    fn legal_actions(&mut self, player: Owner) -> usize {
        let mut count = 0usize;
        let h = self.handle;
        match self.call_hot(Call::LegalActions, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.legal_actions)(h, player.0, &mut count, out) }
        }) {
            Ok(_) => count,
            Err(f) => {
                self.failed(Call::LegalActions, &f);
                0
            }
        }
    }

    fn acting(&mut self) -> &[Acting] {
        let mut list: *const Acting = std::ptr::null();
        let mut count = 0usize;
        let h = self.handle;
        match self.call_hot(Call::Acting, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.acting)(h, &mut list, &mut count, out) }
        }) {
            // SAFETY: the plugin wrote a pointer to `count` entries of its game's cache, which stay
            // unchanged until the next call on this game (`VTable::acting`); the slice borrows `self`
            // mutably, so no other call on the game can happen while it lives.
            Ok(()) => unsafe { plugin_list(list, count) },
            Err(f) => {
                self.failed(Call::Acting, &f);
                &[]
            }
        }
    }

    fn to_act(&mut self) -> &[Owner] {
        self.acting_raw.resize(usize::from(self.players), 0);
        let (h, players, capacity) = (
            self.handle,
            self.acting_raw.as_mut_ptr(),
            self.acting_raw.len(),
        );
        let mut count = 0usize;
        let n = match self.call_hot(Call::ToAct, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.to_act)(h, players, capacity, &mut count, out) }
        }) {
            Ok(_) => count.min(capacity),
            Err(f) => {
                self.failed(Call::ToAct, &f);
                0
            }
        };
        self.acting.clear();
        self.acting
            .extend(self.acting_raw[..n].iter().map(|&p| Owner(p)));
        &self.acting
    }

    fn legal_action_json(&self, index: usize) -> Option<String> {
        let h = self.handle.cast_const();
        match self.call(Call::LegalActionJson, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.legal_action_json)(h, index, out) }
        }) {
            Ok(bytes) => String::from_utf8(bytes).ok(),
            // No such index: an answer, not a failure.
            Err(Failure::Refused(_)) => None,
            Err(f) => {
                self.failed(Call::LegalActionJson, &f);
                None
            }
        }
    }

    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError> {
        let h = self.handle;
        self.call_hot(Call::ApplyLegal, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.apply_legal)(h, player.0, index, out) }
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        Ok(())
    }

    fn apply_legal_then_acting(
        &mut self,
        player: Owner,
        index: usize,
    ) -> Result<&[Acting], ActionError> {
        let mut list: *const Acting = std::ptr::null();
        let mut count = 0usize;
        let h = self.handle;
        self.call_hot(Call::ApplyLegalThenActing, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.apply_legal_then_acting)(h, player.0, index, &mut list, &mut count, out) }
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        // SAFETY: as in `acting`: the plugin's cache, unchanged while the slice borrows `self` mutably.
        Ok(unsafe { plugin_list(list, count) })
    }

    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<u64, PlayoutError> {
        // The whole playout runs inside the library: one crossing.
        let mut state: [u64; 2] = rng.clone().into();
        let (mut applied, mut player, mut index) = (0u64, 0u16, 0usize);
        let h = self.handle;
        let played = self.call_hot(Call::Playout, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe {
                (vt.playout)(
                    h,
                    &mut state,
                    max_actions,
                    &mut applied,
                    &mut player,
                    &mut index,
                    out,
                )
            }
        });
        if applied > 0 {
            self.events_fresh = false;
        }
        progress.applied += applied;
        // The plugin wrote back the state its generator reached and the last step it chose (also on
        // refusal or panic); a poisoned library was not called.
        if let Ok(reached) = GameRng::try_from(state) {
            *rng = reached;
        }
        if index != usize::MAX {
            progress.chosen = Some((Owner(player), index));
        }
        played.map(|()| applied).map_err(|f| PlayoutError::Refused {
            applied,
            player: Owner(player),
            index,
            error: action_error(f, &self.id),
        })
    }

    fn reset(&mut self, setup: &Setup) -> Result<(), SetupError> {
        let json = serde_json::to_vec(setup).map_err(|e| SetupError::Config(e.to_string()))?;
        let h = self.handle;
        self.call(Call::Reset, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.reset)(h, json.as_ptr(), json.len(), out) }
        })
        .map_err(|f| setup_error(f, &self.id))?;
        // As a new game: no events, nothing listed.
        self.players = setup.players;
        self.events.clear();
        self.events_fresh = true;
        self.acting.clear();
        Ok(())
    }

    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError> {
        let h = self.handle;
        self.call(Call::ApplyJson, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.apply_json)(h, player.0, json.as_ptr(), json.len(), out) }
        })
        .map_err(|f| action_error(f, &self.id))?;
        self.events_fresh = false;
        Ok(())
    }

    fn apply_json_reporting(
        &mut self,
        player: Owner,
        json: &str,
        events: EventsFor,
    ) -> Result<ActionReport<'_>, ActionError> {
        let (mut hash, mut list, mut count) = (0u64, std::ptr::null::<Acting>(), 0usize);
        let (h, seat) = (self.handle, abi::events_code(events));
        let bytes = self
            .call(Call::ApplyJsonReporting, |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe {
                    (vt.apply_json_reporting)(
                        h,
                        player.0,
                        json.as_ptr(),
                        json.len(),
                        seat,
                        &mut hash,
                        &mut list,
                        &mut count,
                        out,
                    )
                }
            })
            .map_err(|f| action_error(f, &self.id))?;
        // Applied: an unreadable answer is a failure of the game, not a refusal.
        let events = postcard::from_bytes(&bytes).unwrap_or_else(|e| {
            self.unreadable(Call::ApplyJsonReporting, &e);
            Vec::new()
        });
        self.events_fresh = false;
        Ok(ActionReport {
            hash: StateHash(hash),
            events,
            // SAFETY: as in `acting`: the plugin's cache, unchanged while the slice borrows `self` mutably.
            acting: unsafe { plugin_list(list, count) },
        })
    }

    fn events(&mut self) -> &[Event] {
        if !self.events_fresh {
            let h = self.handle;
            self.events = self.decoded(
                Call::Events,
                |vt, out| {
                    // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                    // passed is valid for the whole call.
                    unsafe { (vt.events)(h, abi::EVERYONE, out) }
                },
                Vec::new,
            );
            self.events_fresh = true;
        }
        &self.events
    }

    fn state_hash(&self) -> StateHash {
        if self.handle.is_null() {
            self.failed(Call::StateHash, &Failure::Poisoned);
            return StateHash(0);
        }
        let mut hash = 0u64;
        let h = self.handle.cast_const();
        // Read-only: allowed on a poisoned library (see the module docs).
        match self.lib.call_anyway(Call::StateHash, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.state_hash)(h, &mut hash, out) }
        }) {
            Ok(_) => StateHash(hash),
            Err(f) => {
                self.failed(Call::StateHash, &f);
                StateHash(0)
            }
        }
    }

    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError> {
        let h = self.handle.cast_const();
        let code = abi::format_code(format);
        self.call(Call::Snapshot, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.snapshot)(h, code, out) }
        })
        .map_err(|f| setup_error(f, &self.id))
    }

    fn outcome(&self) -> Outcome {
        let h = self.handle.cast_const();
        self.decoded(
            Call::Outcome,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.outcome)(h, out) }
            },
            || Outcome::Ongoing,
        )
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        let h = self.handle.cast_const();
        let code = abi::audience_code(seat);
        self.decoded(
            Call::Table,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.table)(h, code, out) }
            },
            || Table::new(seat),
        )
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        let h = self.handle.cast_const();
        let code = abi::audience_code(seat);
        self.decoded(
            Call::Resources,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.resources)(h, code, out) }
            },
            Vec::new,
        )
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        let h = self.handle;
        let code = abi::audience_code(seat);
        self.decoded(
            Call::Events,
            |vt, out| {
                // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
                // passed is valid for the whole call.
                unsafe { (vt.events)(h, code, out) }
            },
            Vec::new,
        )
    }

    fn check_invariants(&self) -> Result<(), Violation> {
        let h = self.handle.cast_const();
        match self.call(Call::CheckInvariants, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.check_invariants)(h, out) }
        }) {
            Ok(_) => Ok(()),
            Err(Failure::Refused(b)) => Err(Violation(String::from_utf8_lossy(&b).into_owned())),
            Err(f @ (Failure::Panicked(_) | Failure::Poisoned)) => {
                Err(Violation(self.lib.describe(Call::CheckInvariants, &f)))
            }
        }
    }

    fn clone_game(&self) -> Box<dyn DynGame> {
        let mut copy: *mut GameHandle = std::ptr::null_mut();
        let h = self.handle.cast_const();
        let game = match self.call(Call::CloneGame, |vt, out| {
            // SAFETY: a vtable entry checked at load to point into the library's code; every pointer
            // passed is valid for the whole call.
            unsafe { (vt.clone_game)(h, &mut copy, out) }
        }) {
            Ok(_) => RuntimeGame::new(self.lib, copy, Arc::clone(&self.id), self.players),
            Err(f) => {
                self.failed(Call::CloneGame, &f);
                let game = RuntimeGame::new(
                    self.lib,
                    std::ptr::null_mut(),
                    Arc::clone(&self.id),
                    self.players,
                );
                game.failed(Call::CloneGame, &f);
                game
            }
        };
        Box::new(game)
    }

    fn state(&self) -> Option<&dyn coffer_core::erased_serde::Serialize> {
        None
    }

    fn failure(&self) -> Option<String> {
        self.failure.borrow().clone()
    }
}

/// The entries a plugin listed (empty for a null or misaligned pointer).
///
/// # Safety
/// A non-null, aligned `list` points to `count` initialised entries that stay unchanged for `'a`.
#[inline]
pub(crate) unsafe fn plugin_list<'a>(list: *const Acting, count: usize) -> &'a [Acting] {
    if list.is_null() || !list.is_aligned() {
        return &[];
    }
    // SAFETY: the caller's promise, for a non-null aligned pointer.
    unsafe { std::slice::from_raw_parts(list, count) }
}

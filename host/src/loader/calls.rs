//! Which plugin call each thread is in: the [`Call`]s of a library, and the per-thread slots the watchdog
//! and the crash handlers read to name the library and the call at fault.

use coffer_core::abi::VTable;
use std::cell::Cell;
use std::fmt;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU64, Ordering};

/// What a plugin call is about, for the messages of the watchdog and the crash handlers: the library's
/// path as bytes, prepared before any call (a signal handler may only write existing bytes). Leaked: one
/// per library, like the library itself.
pub(crate) struct Subject {
    pub(crate) path: Box<[u8]>,
}

impl Subject {
    pub(crate) fn leak(path: &Path) -> &'static Subject {
        Box::leak(Box::new(Subject {
            path: path.as_os_str().as_encoded_bytes().into(),
        }))
    }

    pub(crate) fn display(&self) -> String {
        String::from_utf8_lossy(&self.path).into_owned()
    }
}

/// Every entry point of a library, named in messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Call {
    Open,
    Init,
    RulesetCount,
    Describe,
    NewGame,
    Restore,
    FreeGame,
    FreeBuf,
    Players,
    LegalActions,
    ToAct,
    Acting,
    LegalActionJson,
    ApplyLegal,
    ApplyLegalThenActing,
    Playout,
    ApplyJson,
    ApplyJsonReporting,
    Events,
    StateHash,
    Snapshot,
    Outcome,
    Table,
    Resources,
    CheckInvariants,
    CloneGame,
    Reset,
}

/// The names of [`Call`]s, by discriminant: `Open` then the [`VTable`]'s fields in order.
pub(crate) const CALL_NAMES: [&str; 27] = [
    "loading (its initialisers)",
    "init",
    "ruleset_count",
    "describe",
    "new_game",
    "restore",
    "free_game",
    "free_buf",
    "players",
    "legal_actions",
    "to_act",
    "acting",
    "legal_action_json",
    "apply_legal",
    "apply_legal_then_acting",
    "playout",
    "apply_json",
    "apply_json_reporting",
    "events",
    "state_hash",
    "snapshot",
    "outcome",
    "table",
    "resources",
    "check_invariants",
    "clone_game",
    "reset",
];

/// The vtable's fields, in order (what [`check_declaration`] names).
pub(crate) const VTABLE_FIELDS: &[&str] = CALL_NAMES.split_at(1).1;

pub(crate) const VTABLE_ENTRIES: usize =
    std::mem::size_of::<VTable>() / std::mem::size_of::<usize>();
const _: () = assert!(VTABLE_FIELDS.len() == VTABLE_ENTRIES);

impl Call {
    pub(crate) fn name(self) -> &'static str {
        CALL_NAMES[self as usize]
    }

    pub(crate) fn from_index(index: u8) -> &'static str {
        CALL_NAMES.get(usize::from(index)).copied().unwrap_or("?")
    }
}

impl fmt::Display for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One thread's record of the plugin call it is in, read by the watchdog and the crash handlers. `seq` is
/// odd during a call; `call` and `subject` are written before it turns odd.
pub(crate) struct Slot {
    pub(crate) seq: AtomicU64,
    pub(crate) call: AtomicU8,
    pub(crate) subject: AtomicPtr<Subject>,
    pub(crate) free: AtomicBool,
}

/// Every slot ever handed to a thread (leaked; a slot is reused once its thread has exited).
pub(crate) static SLOTS: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

thread_local! {
    /// This thread's slot. Constant-initialised and without destructor, so a signal handler may read it.
    static CURRENT: Cell<Option<&'static Slot>> = const { Cell::new(None) };
    /// Gives this thread's slot back when the thread exits.
    static RELEASE: SlotRelease = const { SlotRelease(Cell::new(None)) };
}

pub(crate) struct SlotRelease(Cell<Option<&'static Slot>>);

impl Drop for SlotRelease {
    fn drop(&mut self) {
        // In a call, this runs because the plugin called `exit` (which runs thread-local destructors
        // before `atexit` handlers): keep the slot, so the exit handler can still name the call.
        match self.0.get() {
            Some(slot) if slot.seq.load(Ordering::Relaxed) % 2 == 0 => {
                self.0.set(None);
                let _ = CURRENT.try_with(|c| c.set(None));
                slot.free.store(true, Ordering::Release);
            }
            _ => {}
        }
    }
}

#[inline]
pub(crate) fn slot() -> &'static Slot {
    match CURRENT.with(Cell::get) {
        Some(slot) => slot,
        None => new_slot(),
    }
}

#[cold]
pub(crate) fn new_slot() -> &'static Slot {
    let mut slots = SLOTS.lock().unwrap_or_else(|e| e.into_inner());
    let slot = match slots.iter().find(|s| {
        s.free
            .compare_exchange(true, false, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }) {
        Some(slot) => *slot,
        None => {
            let slot: &'static Slot = Box::leak(Box::new(Slot {
                seq: AtomicU64::new(0),
                call: AtomicU8::new(0),
                subject: AtomicPtr::new(std::ptr::null_mut()),
                free: AtomicBool::new(false),
            }));
            slots.push(slot);
            slot
        }
    };
    drop(slots);
    CURRENT.with(|c| c.set(Some(slot)));
    let _ = RELEASE.try_with(|r| r.0.set(Some(slot)));
    slot
}

/// A plugin call in progress on this thread; dropping it ends the call.
pub(crate) struct InCall(&'static Slot);

impl InCall {
    #[inline]
    pub(crate) fn enter(subject: &'static Subject, call: Call) -> InCall {
        let slot = slot();
        slot.subject
            .store(std::ptr::from_ref(subject).cast_mut(), Ordering::Relaxed);
        slot.call.store(call as u8, Ordering::Relaxed);
        let seq = slot.seq.load(Ordering::Relaxed);
        slot.seq.store(seq | 1, Ordering::Release);
        InCall(slot)
    }
}

impl Drop for InCall {
    #[inline]
    fn drop(&mut self) {
        let seq = self.0.seq.load(Ordering::Relaxed);
        self.0.seq.store((seq | 1) + 1, Ordering::Release);
    }
}

/// The library and call of a slot in a call, if it is in one.
pub(crate) fn in_call(slot: &Slot) -> Option<(u64, &'static Subject, &'static str)> {
    let seq = slot.seq.load(Ordering::Acquire);
    if seq.is_multiple_of(2) {
        return None;
    }
    let subject = slot.subject.load(Ordering::Relaxed);
    if subject.is_null() {
        return None;
    }
    // SAFETY: only `InCall::enter` stores into `subject`, and only pointers of leaked `&'static Subject`s.
    let subject: &'static Subject = unsafe { &*subject };
    Some((
        seq,
        subject,
        Call::from_index(slot.call.load(Ordering::Relaxed)),
    ))
}

/// The call this thread is in, for the crash and exit handlers.
#[cfg_attr(
    not(all(
        target_os = "linux",
        any(target_arch = "x86_64", target_arch = "aarch64")
    )),
    allow(dead_code)
)]
pub(crate) fn this_thread_in_call() -> Option<(&'static Subject, &'static str)> {
    let slot = CURRENT.try_with(Cell::get).ok().flatten()?;
    in_call(slot).map(|(_, subject, call)| (subject, call))
}

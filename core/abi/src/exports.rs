//! The exported functions: the [`VTABLE`] every plugin library points its declaration at, each function
//! a thin `extern "C"` shell that checks its pointers and runs its body under a guard.

use crate::forward;
use crate::game::{
    Applied, Checkpoint, PluginGame, Reporting, bytes_in, game_mut, game_ref, guard_apply,
    replay_playout,
};
use crate::guard::{Reply, guard, guard_hot, json, put, refuse, ruleset, rulesets};
use crate::{
    Buf, EVERYONE, GameHandle, LogSink, OK, PANICKED, Status, VTable, audience, audience_code,
    format_from, panic_message,
};
use coffer_kernel::{GameRng, Owner};
use coffer_sdk::{
    Acting, ActionError, DynGame, EventsFor, PlayoutError, Progress, Setup, SetupError,
};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// The functions of this build, pointed to by [`Declaration::CURRENT`](crate::Declaration::CURRENT).
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
    reset,
};

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

pub(crate) fn write_game(
    slot: *mut *mut GameHandle,
    index: usize,
    made: Result<Box<dyn DynGame>, SetupError>,
    checkpoint: Checkpoint,
) -> Reply {
    match made {
        Ok(game) => {
            // SAFETY: the host passes a writable handle slot.
            unsafe { slot.write(PluginGame::new(game, index, checkpoint).into_handle()) };
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
        write_game(game, index, made, Checkpoint::Setup(index, setup))
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
        write_game(game, index, r.restore(format, bytes), Checkpoint::Lazy)
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

pub(crate) extern "C" fn free_buf(buf: *mut Buf) {
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

/// An action's JSON bytes as text, or the refusal written to `out` when they are not UTF-8.
pub(crate) fn utf8_action(bytes: &[u8], out: *mut Buf) -> Result<&str, Status> {
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
        let original = unsafe { game_ref(game) };
        let cloned = original.game.clone_game();
        let copied = PluginGame::new(cloned, original.ruleset, Checkpoint::Lazy);
        // SAFETY: the host passes a writable handle slot.
        unsafe { copy.write(copied.into_handle()) };
        Reply::Ok(Vec::new())
    })
}

extern "C" fn reset(game: *mut GameHandle, setup: *const u8, len: usize, out: *mut Buf) -> Status {
    // SAFETY: the host passes `len` readable bytes of JSON.
    let bytes = unsafe { bytes_in(setup, len) };
    let setup: Setup = match serde_json::from_slice(bytes) {
        Ok(s) => s,
        Err(e) => {
            return guard(out, || {
                Reply::Refused(json(&SetupError::Config(e.to_string())))
            });
        }
    };
    // SAFETY: a live handle used by one thread.
    let g = unsafe { game_mut(game) };
    match catch_unwind(AssertUnwindSafe(|| g.reset(setup))) {
        Ok(Ok(())) => guard(out, || Reply::Ok(Vec::new())),
        Ok(Err(e)) => guard(out, || Reply::Refused(json(&e))),
        // Half set up: back to the game before the call (its checkpoint and log are unchanged).
        Err(payload) => {
            let _ = catch_unwind(AssertUnwindSafe(|| g.rebuild()));
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    }
}

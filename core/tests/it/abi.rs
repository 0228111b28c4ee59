//! The exported C ABI driven in-process, as a host drives a loaded library: every call through
//! [`abi::VTABLE`], every buffer freed by the side that allocated it. Its entries are `unsafe extern "C"`
//! pointers, so safe code cannot call them with bad pointers; this test is the one place outside the
//! loader that calls them, and runs under Miri too (`cargo +nightly miri test -p coffer-core --test it
//! abi::`; see docs/SECURITY.md).

use coffer_core::abi::{self, Acting, Buf, GameHandle};
use coffer_core::{
    ActionError, AmountId, AmountSpec, Cause, Description, Event, Key, Kind, Ledger, Outcome,
    Owner, Ruleset, SetupError, Table,
};

/// A one-amount game: `Add` gains 1 up to 3, a refusal above it; after `Arm`, listing legal actions panics.
struct Counter;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct State {
    ledger: Ledger,
    counters: Vec<AmountId>,
    armed: bool,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Action {
    Add,
    Spend(u64),
    Arm,
}

impl Ruleset for Counter {
    type State = State;
    type Action = Action;
    type Config = ();
    fn describe(&self) -> Description {
        Description::new("abi-counter", "0.1.0", "adds one at a time")
    }
    fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
        let mut ledger = Ledger::new(players, seed);
        let counters = (0..players)
            .map(|p| ledger.add_amount(AmountSpec::new(Key::new(Owner(p), Kind(0), 0)).cap(3)))
            .collect::<Result<_, _>>()?;
        Ok(State {
            ledger,
            counters,
            armed: false,
        })
    }
    fn legal_actions(&self, s: &State, _: Owner, out: &mut Vec<Action>) {
        assert!(!s.armed, "armed: listing panics");
        out.push(Action::Add);
    }
    fn apply(&self, s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
        let id = s.counters[p.index()];
        let cause = Cause::Action { player: p, code: 0 };
        match a {
            Action::Add => {
                s.ledger.gain(id, 1, cause)?;
            }
            Action::Spend(n) => s.ledger.spend(id, *n, cause)?,
            Action::Arm => s.armed = true,
        }
        Ok(())
    }
    fn ledger<'s>(&self, s: &'s State) -> &'s Ledger {
        &s.ledger
    }
    fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger {
        &mut s.ledger
    }
    fn outcome(&self, _: &State) -> Outcome {
        Outcome::Ongoing
    }
}

coffer_core::plugin!(Counter);

/// The bytes of `out`, then `out` freed by the exporting side.
fn take(out: &mut Buf) -> Vec<u8> {
    if out.ptr.is_null() {
        return Vec::new();
    }
    // SAFETY: `out` was filled by the exporting side during the call just made, and not freed yet.
    let bytes = unsafe { out.as_slice() }.to_vec();
    // SAFETY: a buffer the exporting side filled, freed once with its own `free_buf`.
    unsafe { (abi::VTABLE.free_buf)(out) };
    *out = Buf::EMPTY;
    bytes
}

#[test]
fn the_exported_abi_plays_a_game_in_process() {
    let vt = &abi::VTABLE;
    let mut out = Buf::EMPTY;
    // `init` is not called: it installs the plugin side's global `tracing` subscriber, and in this test
    // binary the "plugin" is the binary itself, whose events test owns that subscriber. The loader tests
    // call it on real libraries.
    let game = new_counter_game(vt);

    // A legal action by index, then its events for everyone.
    let mut legal = 0usize;
    // SAFETY: a live game handle; `legal` and `out` live across the call.
    let status = unsafe { (vt.legal_actions)(game, 0, &mut legal, &mut out) };
    assert_eq!(status, abi::OK);
    assert_eq!(legal, 1);
    // SAFETY: a live game handle used by this thread only.
    assert_eq!(unsafe { (vt.apply_legal)(game, 0, 0, &mut out) }, abi::OK);
    // SAFETY: as above.
    let status = unsafe { (vt.events)(game, abi::EVERYONE, &mut out) };
    assert_eq!(status, abi::OK);
    let events: Vec<Event> = postcard::from_bytes(&take(&mut out)).unwrap();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].values(), Some((0, 1)));

    // A refusal leaves the game as it was and comes back as the JSON of the typed error.
    let mut before = 0u64;
    // SAFETY: a live game handle; `before` and `out` live across the call.
    let status = unsafe { (vt.state_hash)(game, &mut before, &mut out) };
    assert_eq!(status, abi::OK);
    let spend = br#"{"Spend":9}"#;
    // SAFETY: `spend` is valid for its length; a live game handle.
    let status = unsafe { (vt.apply_json)(game, 0, spend.as_ptr(), spend.len(), &mut out) };
    assert_eq!(status, abi::REFUSED);
    let error: ActionError = serde_json::from_slice(&take(&mut out)).unwrap();
    assert!(matches!(error, ActionError::Refused(_)), "{error}");
    let mut after = 0u64;
    // SAFETY: as above.
    let status = unsafe { (vt.state_hash)(game, &mut after, &mut out) };
    assert_eq!(status, abi::OK);
    assert_eq!(before, after);

    // A seat's table, and a copy of the game freed on its own.
    // SAFETY: a live game handle.
    assert_eq!(unsafe { (vt.table)(game, 1, &mut out) }, abi::OK);
    let table: Table = postcard::from_bytes(&take(&mut out)).unwrap();
    assert_eq!(table.seat, Some(Owner(1)));
    let mut copy: *mut GameHandle = std::ptr::null_mut();
    // SAFETY: a live game handle; `copy` and `out` live across the call.
    let status = unsafe { (vt.clone_game)(game, &mut copy, &mut out) };
    assert_eq!(status, abi::OK);
    // SAFETY: both handles came from this library and are freed once each.
    unsafe {
        (vt.free_game)(copy);
        (vt.free_game)(game);
    }
}

/// A new game of the test's ruleset through the exported ABI.
fn new_counter_game(vt: &abi::VTable) -> *mut GameHandle {
    let mut out = Buf::EMPTY;
    let mut count = 0usize;
    // SAFETY: `count` and `out` live across the call.
    assert_eq!(unsafe { (vt.ruleset_count)(&mut count, &mut out) }, abi::OK);
    let index = (0..count)
        .find(|&i| {
            // SAFETY: `out` lives across the call.
            assert_eq!(unsafe { (vt.describe)(i, &mut out) }, abi::OK);
            let d: Description = serde_json::from_slice(&take(&mut out)).unwrap();
            d.id == "abi-counter"
        })
        .expect("the test's ruleset is exported");
    let setup = br#"{"players":2,"seed":1,"config":null}"#;
    let mut game: *mut GameHandle = std::ptr::null_mut();
    // SAFETY: `setup` is valid for its length; `game` and `out` live across the call.
    let status = unsafe { (vt.new_game)(index, setup.as_ptr(), setup.len(), &mut game, &mut out) };
    assert_eq!(
        status,
        abi::OK,
        "{}",
        String::from_utf8_lossy(&take(&mut out))
    );
    assert!(!game.is_null());
    game
}

/// The hash, the events for `seat` and who may act, each asked by its own call.
fn separate_answers(
    vt: &abi::VTable,
    game: *mut GameHandle,
    seat: i32,
) -> (u64, Vec<u8>, Vec<Acting>) {
    let mut out = Buf::EMPTY;
    let mut hash = 0u64;
    // SAFETY: a live game handle; `hash` and `out` live across the call.
    let status = unsafe { (vt.state_hash)(game, &mut hash, &mut out) };
    assert_eq!(status, abi::OK);
    // SAFETY: as above.
    assert_eq!(unsafe { (vt.events)(game, seat, &mut out) }, abi::OK);
    let events = take(&mut out);
    let mut list: *const Acting = std::ptr::null();
    let mut count = 0usize;
    // SAFETY: a live game handle; `list`, `count` and `out` live across the call.
    let status = unsafe { (vt.acting)(game, &mut list, &mut count, &mut out) };
    assert_eq!(status, abi::OK);
    // SAFETY: the plugin wrote `count` entries of its cache, unchanged until the next call on the game.
    let acting = unsafe { std::slice::from_raw_parts(list, count) }.to_vec();
    (hash, events, acting)
}

/// One `apply_json_reporting` call: its status, the hash, the bytes of `out` and who may act.
fn apply_reporting(
    vt: &abi::VTable,
    game: *mut GameHandle,
    player: u16,
    action: &[u8],
    seat: i32,
) -> (abi::Status, u64, Vec<u8>, Vec<Acting>) {
    let mut out = Buf::EMPTY;
    // Sentinels: a refusal writes none of them.
    let mut hash = u64::MAX;
    let mut list: *const Acting = std::ptr::null();
    let mut count = usize::MAX;
    // SAFETY: `action` is valid for its length; a live game handle; every out-parameter lives across the
    // call.
    let status = unsafe {
        (vt.apply_json_reporting)(
            game,
            player,
            action.as_ptr(),
            action.len(),
            seat,
            &mut hash,
            &mut list,
            &mut count,
            &mut out,
        )
    };
    let acting = if list.is_null() {
        assert_eq!(count, usize::MAX, "no list, no count");
        Vec::new()
    } else {
        // SAFETY: the plugin wrote `count` entries of its cache, unchanged until the next call on the game.
        unsafe { std::slice::from_raw_parts(list, count) }.to_vec()
    };
    (status, hash, take(&mut out), acting)
}

#[test]
fn apply_json_reporting_answers_what_the_separate_calls_answer_and_a_refusal_changes_nothing() {
    let vt = &abi::VTABLE;
    let mut out = Buf::EMPTY;
    for seat in [0, 1, abi::SPECTATOR, abi::EVERYONE] {
        let game = new_counter_game(vt);
        // The same action on a copy, through `apply_json` and the separate calls.
        let mut copy: *mut GameHandle = std::ptr::null_mut();
        // SAFETY: a live game handle; `copy` and `out` live across the call.
        let status = unsafe { (vt.clone_game)(game, &mut copy, &mut out) };
        assert_eq!(status, abi::OK);
        let add = br#""Add""#;
        // SAFETY: `add` is valid for its length; a live game handle.
        let status = unsafe { (vt.apply_json)(copy, 1, add.as_ptr(), add.len(), &mut out) };
        assert_eq!(status, abi::OK);
        let (hash, events, acting) = separate_answers(vt, copy, seat);

        let (status, reported_hash, reported_events, reported_acting) =
            apply_reporting(vt, game, 1, add, seat);
        assert_eq!(
            status,
            abi::OK,
            "{}",
            String::from_utf8_lossy(&reported_events)
        );
        assert_eq!(reported_hash, hash, "seat {seat}");
        assert_eq!(reported_events, events, "seat {seat}");
        assert_eq!(reported_acting, acting, "seat {seat}");
        let decoded: Vec<Event> = postcard::from_bytes(&reported_events).unwrap();
        assert_eq!(decoded.len(), 1, "the counter's own events are public");
        assert_eq!(decoded[0].values(), Some((0, 1)));
        // And the game answers the same afterwards, separately.
        assert_eq!(separate_answers(vt, game, seat), (hash, events, acting));

        // A refusal comes back typed, writes no answer and leaves the hash as it was.
        let spend = br#"{"Spend":9}"#;
        let (status, refused_hash, error, refused_acting) =
            apply_reporting(vt, game, 1, spend, seat);
        assert_eq!(status, abi::REFUSED);
        let error: ActionError = serde_json::from_slice(&error).unwrap();
        assert!(matches!(error, ActionError::Refused(_)), "{error}");
        assert_eq!(refused_hash, u64::MAX, "a refusal writes no hash");
        assert!(refused_acting.is_empty());
        assert_eq!(separate_answers(vt, game, seat).0, hash);
        // Text that is not UTF-8 is refused as malformed, before the game sees it.
        let (status, _, error, _) = apply_reporting(vt, game, 1, b"\xff", seat);
        assert_eq!(status, abi::REFUSED);
        let error: ActionError = serde_json::from_slice(&error).unwrap();
        assert!(matches!(error, ActionError::Malformed(_)), "{error}");
        assert_eq!(separate_answers(vt, game, seat).0, hash);
        // SAFETY: both handles came from this library and are freed once each.
        unsafe {
            (vt.free_game)(copy);
            (vt.free_game)(game);
        }
    }
}

#[test]
fn a_panic_while_apply_json_reporting_answers_leaves_the_game_as_it_was() {
    let vt = &abi::VTABLE;
    let game = new_counter_game(vt);
    let add = br#""Add""#;
    assert_eq!(apply_reporting(vt, game, 0, add, 0).0, abi::OK);
    let (before, _, _) = separate_answers(vt, game, 0);
    // `Arm` applies; listing who may act after it panics, inside the same call.
    let (status, hash, message, _) = apply_reporting(vt, game, 0, br#""Arm""#, 0);
    assert_eq!(status, abi::PANICKED);
    assert_eq!(hash, u64::MAX, "a panic writes no hash");
    assert!(
        String::from_utf8_lossy(&message).contains("armed: listing panics"),
        "{}",
        String::from_utf8_lossy(&message)
    );
    // Rebuilt from its checkpoint and the logged `Add`: as before the call, and playable.
    assert_eq!(separate_answers(vt, game, 0).0, before);
    let (status, _, events, _) = apply_reporting(vt, game, 0, add, 0);
    assert_eq!(status, abi::OK);
    let events: Vec<Event> = postcard::from_bytes(&events).unwrap();
    assert_eq!(events[0].values(), Some((1, 2)));
    // SAFETY: the handle came from this library and is freed once.
    unsafe { (vt.free_game)(game) };
}

/// A playout through [`abi::VTable::playout`]: the generator's state in and out.
fn playout(
    vt: &abi::VTable,
    game: *mut GameHandle,
    rng: &mut [u64; 2],
    max: u64,
    out: &mut Buf,
) -> (abi::Status, u64, u16, usize) {
    let (mut applied, mut player, mut index) = (0u64, 0u16, 0usize);
    // SAFETY: a live game handle used by this thread only; every pointer lives across the call.
    let status =
        unsafe { (vt.playout)(game, rng, max, &mut applied, &mut player, &mut index, out) };
    (status, applied, player, index)
}

#[test]
fn a_playout_is_one_call_and_a_panic_in_it_leaves_the_game_as_it_was() {
    let vt = &abi::VTABLE;
    let mut out = Buf::EMPTY;
    let game = new_counter_game(vt);
    // The same playout in-process, through the adapter: the same actions and the same draws.
    let mut reference = coffer_core::Adapter::shared(Counter)
        .new_game(&coffer_core::Setup::new(2, 1))
        .unwrap();
    let mut expected = coffer_core::GameRng::new(5);
    let applied = reference
        .playout(&mut expected, 5, &mut coffer_core::Progress::default())
        .unwrap();
    assert_eq!(applied, 5);
    let mut rng: [u64; 2] = coffer_core::GameRng::new(5).into();
    let (status, applied, player, index) = playout(vt, game, &mut rng, 5, &mut out);
    assert_eq!(
        status,
        abi::OK,
        "{}",
        String::from_utf8_lossy(&take(&mut out))
    );
    assert_eq!((applied, index), (5, 0));
    assert!(player < 2);
    assert_eq!(rng, <[u64; 2]>::from(expected));
    let mut hash = 0u64;
    // SAFETY: a live game handle; `hash` and `out` live across the call.
    let status = unsafe { (vt.state_hash)(game, &mut hash, &mut out) };
    assert_eq!(status, abi::OK);
    assert_eq!(hash, reference.state_hash().0);

    // A generator state no generator has (an even one) is refused; nothing is played.
    let mut even = [2u64, 4];
    let (status, applied, _, index) = playout(vt, game, &mut even, 5, &mut out);
    assert_eq!(status, abi::REFUSED);
    let error: ActionError = serde_json::from_slice(&take(&mut out)).unwrap();
    assert!(matches!(error, ActionError::Malformed(_)), "{error}");
    assert_eq!((applied, index), (0, usize::MAX));
    let mut unchanged = 0u64;
    // SAFETY: a live game handle; `unchanged` and `out` live across the call.
    let status = unsafe { (vt.state_hash)(game, &mut unchanged, &mut out) };
    assert_eq!(status, abi::OK);
    assert_eq!(unchanged, hash);

    // Armed, listing panics: the playout answers PANICKED before any action, the game as it was.
    let arm = br#""Arm""#;
    // SAFETY: `arm` is valid for its length; a live game handle.
    let status = unsafe { (vt.apply_json)(game, 0, arm.as_ptr(), arm.len(), &mut out) };
    assert_eq!(
        status,
        abi::OK,
        "{}",
        String::from_utf8_lossy(&take(&mut out))
    );
    let mut before = 0u64;
    // SAFETY: as above.
    let status = unsafe { (vt.state_hash)(game, &mut before, &mut out) };
    assert_eq!(status, abi::OK);
    let (status, applied, _, index) = playout(vt, game, &mut rng, 5, &mut out);
    assert_eq!(status, abi::PANICKED);
    assert!(String::from_utf8_lossy(&take(&mut out)).contains("armed: listing panics"));
    assert_eq!(
        (applied, index),
        (0, usize::MAX),
        "nothing applied, nothing chosen"
    );
    let mut after = 0u64;
    // SAFETY: as above.
    let status = unsafe { (vt.state_hash)(game, &mut after, &mut out) };
    assert_eq!(status, abi::OK);
    assert_eq!(before, after);
    // SAFETY: a handle from this library, freed once.
    unsafe { (vt.free_game)(game) };
}

//! The exported C ABI driven in-process, as a host drives a loaded library: every call through
//! [`abi::VTABLE`], every buffer freed by the side that allocated it. Its entries are `unsafe extern "C"`
//! pointers, so safe code cannot call them with bad pointers; this test is the one place outside the
//! loader that calls them, and runs under Miri too (`cargo +nightly miri test -p coffer-core --test it
//! abi::`; see docs/SECURITY.md).

use coffer_core::abi::{self, Buf, GameHandle};
use coffer_core::{
    ActionError, AmountId, AmountSpec, Cause, Description, Event, Key, Kind, Ledger, Outcome,
    Owner, Ruleset, SetupError, Table,
};

/// A one-amount game: `Add` gains 1 up to 3, a refusal above it.
struct Counter;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct State {
    ledger: Ledger,
    counters: Vec<AmountId>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
enum Action {
    Add,
    Spend(u64),
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
        Ok(State { ledger, counters })
    }
    fn legal_actions(&self, _: &State, _: Owner, out: &mut Vec<Action>) {
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

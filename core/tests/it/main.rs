//! Integration tests of the resource kernel, one module per topic, each test named after the clause of
//! RULES.md (K1-K11) it proves.

// The exported ABI is driven through its raw entries: the plugin-loading boundary, where unsafe code lives.
#[allow(unsafe_code)]
mod abi;
mod amounts;
mod charges;
mod clock;
mod costs;
mod events;
mod inputs;
mod props;
mod routes;
mod second;
mod tokens;
mod undo;
mod vocab;

use coffer_core::{AmountId, AmountSpec, Key, Kind, Ledger, Owner, StateHash, state_hash};

/// A key for owner `o`, kind `k`, subject `s`.
pub fn key(o: u16, k: u16, s: u32) -> Key {
    Key::new(Owner(o), Kind(k), s)
}

/// Adds the amount `spec` to `ledger`, which must accept it, and returns its handle.
#[track_caller]
pub fn new_amount(ledger: &mut Ledger, spec: AmountSpec) -> AmountId {
    ledger.add_amount(spec).unwrap()
}

/// The ledger's state hash.
pub fn hash(ledger: &Ledger) -> StateHash {
    state_hash(ledger)
}

/// Asserts that `f` is refused and leaves the ledger as it was: same hash, no new event (K8).
#[track_caller]
pub fn assert_refused<T: std::fmt::Debug>(
    ledger: &mut Ledger,
    f: impl FnOnce(&mut Ledger) -> Result<T, coffer_core::Refusal>,
) -> coffer_core::Refusal {
    let before = hash(ledger);
    let events = ledger.events().len();
    let result = f(ledger);
    assert_eq!(hash(ledger), before, "a refusal changed the state");
    assert_eq!(ledger.events().len(), events, "a refusal emitted an event");
    match result {
        Err(refusal) => refusal,
        Ok(v) => panic!("expected a refusal, got Ok({v:?})"),
    }
}

/// Edits the token matrix of a ledger's JSON form (`[cells, [[cell, count], ...]]`, only the cells that
/// hold tokens) as a dense array of counts, and writes it back in that form.
pub fn edit_token_cells(json: &mut serde_json::Value, edit: impl FnOnce(&mut Vec<u64>)) {
    let len = json["tokens"][0].as_u64().unwrap() as usize;
    let mut cells = vec![0; len];
    for held in json["tokens"][1].as_array().unwrap() {
        cells[held[0].as_u64().unwrap() as usize] = held[1].as_u64().unwrap();
    }
    edit(&mut cells);
    let held: Vec<_> = (0..len)
        .filter(|&i| cells[i] > 0)
        .map(|i| serde_json::json!([i, cells[i]]))
        .collect();
    json["tokens"] = serde_json::json!([len, held]);
}

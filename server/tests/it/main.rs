//! The server's tests: the store (one suite run against every store, a crash test for the SQLite
//! store) and the API of real servers on loopback.

mod bad_input;
mod bots;
mod browser;
pub mod client;
mod concurrency;
mod crash;
mod crash_api;
mod differential;
mod hostile;
mod legal;
mod logs;
#[path = "../shared/long_game.rs"]
mod long_game;
mod play;
mod retention;
mod schemathesis;
mod secrecy;
mod shutdown;
mod store_file;
mod suite;
pub mod support;
mod undo;

use coffer_server::{Action, GameId, NewGame, RulesetKey, Setup, StateHash, TokenHash};
use serde_json::value::RawValue;

/// A two-seat game with both seats free.
pub fn new_game(id: u64) -> NewGame {
    new_game_with_seats(id, vec![None, None])
}

/// A game with the given seats.
pub fn new_game_with_seats(id: u64, seats: Vec<Option<TokenHash>>) -> NewGame {
    NewGame {
        id: GameId(id),
        ruleset: RulesetKey::new("charges@1").expect("a valid key"),
        setup: Setup {
            players: u32::try_from(seats.len()).expect("few seats"),
            seed: 0xC0FFEE ^ id,
            config: serde_json::json!({ "round_limit": 3, "name": format!("game {id}") }),
            bots: Default::default(),
            clock: None,
        },
        created_unix_ms: 1_700_000_000_000 + id % 1000,
        seats,
    }
}

/// The action a test writes at `seq` of `game` by `writer`: its content and hash say who wrote it
/// where, so a misplaced or half-written row shows.
pub fn action(game: u64, seq: u64, writer: u64) -> Action {
    let text = format!(r#"{{"game":{game},"seq":{seq},"writer":{writer}}}"#);
    Action {
        seq,
        seat: u32::try_from(seq % 2).expect("0 or 1"),
        action: RawValue::from_string(text).expect("valid json"),
        hash: StateHash(expected_hash(game, seq, writer)),
        key: None,
        at_unix_ms: 0,
    }
}

/// The hash [`action`] writes.
pub fn expected_hash(game: u64, seq: u64, writer: u64) -> u64 {
    (game << 40) ^ (seq << 8) ^ writer ^ 0x9E37_79B9_7F4A_7C15
}

//! The SQLite store against the reference: the same random calls give the same answers from both.

use coffer_server::{
    GameId, MemoryStore, Snapshot, SqliteConfig, SqliteStore, StateHash, Store, TokenHash,
};

use crate::{action, new_game_with_seats};

/// A small xorshift generator: the sequence of calls is the same on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One call's answer, in a form both stores can be compared on: the value's `Debug` or the error's
/// message.
fn answer<T: std::fmt::Debug>(result: Result<T, coffer_server::StoreError>) -> String {
    match result {
        Ok(value) => format!("ok {value:?}"),
        Err(error) => format!("error {error}"),
    }
}

/// A random call on a few games, with sequence numbers near the right one, so most appends succeed
/// and many are refused.
fn call(store: &dyn Store, rng: &mut Rng, step: u64) -> String {
    let game = 1 + rng.below(4);
    let id = GameId(game);
    match rng.below(10) {
        0 => {
            let seats = (0..1 + rng.below(3))
                .map(|seat| (rng.below(2) == 0).then(|| TokenHash::of_token(&[seat as u8])))
                .collect();
            answer(store.create_game(new_game_with_seats(game, seats)))
        }
        1 => answer(store.claim_seat(
            id,
            rng.below(4) as u32,
            TokenHash::of_token(&step.to_le_bytes()),
        )),
        2..=5 => {
            let current = store.game(id).map_or(0, |game| game.seq);
            let seq = (current + rng.below(4)).saturating_sub(1);
            let mut action = action(game, seq, step);
            action.seat = rng.below(3) as u32;
            answer(store.append(id, action))
        }
        6 => {
            let current = store.game(id).map_or(0, |game| game.seq);
            let seq = (current + rng.below(2)).saturating_sub(rng.below(3));
            answer(store.put_snapshot(
                id,
                Snapshot {
                    seq,
                    bytes: step.to_le_bytes().to_vec(),
                    hash: StateHash(step),
                },
            ))
        }
        7 => {
            if rng.below(8) == 0 {
                answer(store.finish(id))
            } else {
                answer(store.seats(id))
            }
        }
        8 => answer(store.recover(id)),
        _ => answer(store.actions_after(id, rng.below(5))),
    }
}

#[test]
fn sqlite_answers_every_call_as_the_memory_store_does() {
    let dir = tempfile::tempdir().unwrap();
    let sqlite = SqliteStore::open(&dir.path().join("store.db"), SqliteConfig::default()).unwrap();
    let memory = MemoryStore::new();
    let mut answers = Vec::new();
    for seed in [1_u64, 2, 3] {
        let (mut left, mut right) = (Rng(seed * 0x9E37_79B9), Rng(seed * 0x9E37_79B9));
        for step in 0..400 {
            let expected = call(&memory, &mut left, seed * 1000 + step);
            let got = call(&sqlite, &mut right, seed * 1000 + step);
            assert_eq!(got, expected, "seed {seed}, call {step}");
            answers.push(got);
        }
    }
    // The calls reach the interesting cases, not only refusals of unknown games.
    let count = |pattern: &str| answers.iter().filter(|a| a.contains(pattern)).count();
    for (pattern, least) in [
        ("ok ()", 100),
        ("is not the next one", 30),
        ("snapshot: Some", 5),
        ("is finished", 1),
        ("already taken", 1),
        ("no seat", 5),
    ] {
        assert!(
            count(pattern) >= least,
            "only {} answers with '{pattern}'",
            count(pattern)
        );
    }
    assert_eq!(
        answer(sqlite.unfinished_games()),
        answer(memory.unfinished_games())
    );
}

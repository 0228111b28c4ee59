//! A long game written straight into a SQLite store, as the server would have stored it: shared by the
//! history tests (`tests/it/hostile.rs`) and the history benchmark (`benches/history.rs`), each of which
//! includes this file.

use std::path::Path;

use coffer_core::{Format, Setup as CoreSetup};
use coffer_host::{HostedGame, Registry};
use coffer_server::{
    Action, Durability, GameId, NewGame, RulesetKey, Setup, Snapshot, SqliteConfig, SqliteStore,
    StateHash, Store,
};
use serde_json::json;
use serde_json::value::RawValue;

/// A small deterministic generator for the test's own choices.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Writes into the SQLite store at `db` a game of command-tokens `actions` actions long, played in
/// this process on the statically linked ruleset (the same hashes as the runtime-loaded one), with a
/// snapshot every `every` actions as the server stores them. Returns the game's id.
pub fn write_long_game(db: &Path, actions: u64, every: u64) -> u64 {
    let registry = Registry::with_static().expect("the static rulesets register");
    let entry = registry
        .get("command-tokens")
        .expect("command-tokens is linked");
    let rules = json!({"rounds": 1000});
    let (players, seed) = (6u16, 11u64);
    let setup = CoreSetup::new(players, seed).config(rules.clone());
    let mut game = HostedGame::start(entry.ruleset.clone(), setup).expect("the game starts");
    let mut config = SqliteConfig::default();
    config.durability = Durability::ProcessCrash;
    let store = SqliteStore::open(db, config).expect("the store opens");
    let id = 4242u64;
    store
        .create_game(NewGame {
            id: GameId(id),
            ruleset: RulesetKey::new(&entry.key()).expect("a key"),
            setup: Setup {
                players: u32::from(players),
                seed,
                config: rules,
                bots: Default::default(),
                clock: None,
            },
            created_unix_ms: 1_800_000_000_000,
            seats: vec![None; usize::from(players)],
        })
        .expect("the game is stored");
    let mut rng = Lcg(7);
    for seq in 1..=actions {
        let (player, action) = (0..players)
            .find_map(|p| {
                let legal = game.legal_actions(p);
                (!legal.is_empty()).then(|| {
                    let i = rng.below(legal.len());
                    (p, legal[i].clone())
                })
            })
            .unwrap_or_else(|| panic!("nobody may act at action {seq}: the game ended too early"));
        game.apply_json(player, &action)
            .unwrap_or_else(|e| panic!("a legal action is refused at {seq}: {e}"));
        let hash = game.state_hash().0;
        store
            .append(
                GameId(id),
                Action {
                    seq,
                    seat: u32::from(player),
                    action: RawValue::from_string(action).expect("JSON"),
                    hash: StateHash(hash),
                    key: None,
                    at_unix_ms: 0,
                },
            )
            .expect("appended");
        if seq % every == 0 {
            let bytes = game.game().snapshot(Format::Binary).expect("a snapshot");
            store
                .put_snapshot(
                    GameId(id),
                    Snapshot {
                        seq,
                        bytes,
                        hash: StateHash(hash),
                    },
                )
                .expect("snapshot stored");
        }
    }
    id
}

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
use serde_json::value::RawValue;
use serde_json::{Value, json};

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

/// Game `id` of the statically linked ruleset `ruleset`, stored in `store` with every seat free, and the
/// same game started in this process to play its actions.
pub fn stored_game(
    store: &SqliteStore,
    id: u64,
    ruleset: &str,
    (players, seed): (u16, u64),
    config: Value,
) -> HostedGame {
    let registry = Registry::with_static().expect("the static rulesets register");
    let entry = registry
        .get(ruleset)
        .unwrap_or_else(|_| panic!("{ruleset} is linked"));
    let setup = CoreSetup::new(players, seed).config(config.clone());
    let game = HostedGame::start(entry.ruleset.clone(), setup).expect("the game starts");
    store
        .create_game(NewGame {
            id: GameId(id),
            ruleset: RulesetKey::new(&entry.key()).expect("a key"),
            setup: Setup {
                players: u32::from(players),
                seed,
                config,
                bots: Default::default(),
                clock: None,
            },
            created_unix_ms: 1_800_000_000_000,
            seats: vec![None; usize::from(players)],
        })
        .expect("the game is stored");
    game
}

/// Applies `player`'s `action` to `game` and appends it to game `id` in `store` as action `seq`.
pub fn play_and_store(
    store: &SqliteStore,
    id: u64,
    game: &mut HostedGame,
    seq: u64,
    (player, action): (u16, String),
) {
    game.apply_json(player, &action)
        .unwrap_or_else(|e| panic!("a legal action is refused at {seq}: {e}"));
    store
        .append(
            GameId(id),
            Action {
                seq,
                seat: u32::from(player),
                action: RawValue::from_string(action).expect("JSON"),
                hash: StateHash(game.state_hash().0),
                key: None,
                at_unix_ms: 0,
            },
        )
        .expect("appended");
}

/// Writes into the SQLite store at `db` a game of command-tokens `actions` actions long (six players, so
/// that its 1,000 rounds last past 100,000 actions), played in this process on the statically linked
/// ruleset (the same hashes as the runtime-loaded one), with a snapshot every `every` actions as the
/// server stores them. Returns the game's id.
pub fn write_long_game(db: &Path, actions: u64, every: u64) -> u64 {
    let mut config = SqliteConfig::default();
    config.durability = Durability::ProcessCrash;
    let store = SqliteStore::open(db, config).expect("the store opens");
    let id = 4242u64;
    let players = 6;
    let mut game = stored_game(
        &store,
        id,
        "command-tokens",
        (players, 11),
        json!({"rounds": 1000}),
    );
    let mut rng = Lcg(7);
    for seq in 1..=actions {
        let chosen = (0..players)
            .find_map(|p| {
                let legal = game.legal_actions(p);
                (!legal.is_empty()).then(|| (p, legal[rng.below(legal.len())].clone()))
            })
            .unwrap_or_else(|| panic!("nobody may act at action {seq}: the game ended too early"));
        play_and_store(&store, id, &mut game, seq, chosen);
        if seq % every == 0 {
            let bytes = game.game().snapshot(Format::Binary).expect("a snapshot");
            store
                .put_snapshot(
                    GameId(id),
                    Snapshot {
                        seq,
                        bytes,
                        hash: StateHash(game.state_hash().0),
                    },
                )
                .expect("snapshot stored");
        }
    }
    id
}

//! The Coffer game server (`coffer serve`): games of every loaded ruleset hosted over an HTTP JSON API
//! and a WebSocket per game, on a durable event store.
//!
//! - [`serve::serve`] runs a server: it opens the store, recovers every unfinished game, and serves
//!   [`http::router`] until SIGTERM; [`Games`] hosts the games, each behind its own lock, every ruleset
//!   call on a blocking thread under the plugin deadline; [`Limits`] bounds everything a client can
//!   make the server hold.
//! - `docs/SERVER.md` documents the API, the store, the trust model and the limits.
//!
//! # The store
//! Games
//! (ruleset key, setup, created time, finished flag), seats (the SHA-256 of each seat's bearer token,
//! never the token), each game's gapless action log and its snapshots are kept behind one [`Store`]
//! trait with two implementations: [`MemoryStore`], the reference behaviour, and [`SqliteStore`], one
//! SQLite file in WAL mode written by one thread that commits concurrent appends in groups.
//!
//! ```
//! use coffer_server::{Action, GameId, MemoryStore, NewGame, RulesetKey, Setup, StateHash, Store,
//!     StoreError, TokenHash};
//! use serde_json::value::RawValue;
//!
//! let store = MemoryStore::new();
//! store.create_game(NewGame {
//!     id: GameId(1),
//!     ruleset: RulesetKey::new("charges@1")?,
//!     setup: Setup { players: 2, seed: 7, config: serde_json::json!({}), bots: Default::default(), clock: None },
//!     created_unix_ms: 0,
//!     seats: vec![Some(TokenHash::of_token(b"secret of seat 0")), None],
//! })?;
//! let action = |seq| Action {
//!     seq,
//!     seat: 0,
//!     action: RawValue::from_string(r#"{"pass":null}"#.into()).unwrap(),
//!     hash: StateHash(seq),
//!     key: None,
//!     at_unix_ms: 0,
//! };
//! store.append(GameId(1), action(1))?;
//! // A second submission that also read the game at sequence 0 is refused with the current one.
//! match store.append(GameId(1), action(1)) {
//!     Err(StoreError::SequenceConflict { current, .. }) => assert_eq!(current, 1),
//!     other => panic!("{other:?}"),
//! }
//! let recovery = store.recover(GameId(1))?;
//! assert_eq!(recovery.tail.len(), 1);
//! # Ok::<(), StoreError>(())
//! ```

pub mod calls;
pub mod canned;
pub mod clients;
pub mod cluster;
pub mod error;
pub mod export;
pub mod follow;
pub mod games;
pub mod http;
pub mod limits;
mod memory;
pub mod metrics;
mod postgres;
pub mod resident;
pub mod serve;
mod sqlite;
mod store;
pub mod web;

pub use error::ApiError;
pub use games::GameError;
pub use games::Games;
pub use limits::Limits;

pub use memory::MemoryStore;
pub use postgres::{ACTIONS_CHANNEL, NodeConfig, PgStore};
pub use sqlite::{
    APPLICATION_ID as SQLITE_APPLICATION_ID, Durability, Opening, SqliteConfig, SqliteStore,
    WriterStats,
};
pub use store::{
    Action, Clock, Done, GameId, GameRecord, NewGame, Passage, Recovery, RulesetKey, Setup,
    Snapshot, StateHash, Store, StoreError, TokenHash,
};

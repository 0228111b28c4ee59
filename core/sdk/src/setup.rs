//! How a game starts: [`Setup`] (players, seed, JSON configuration) and the snapshot [`Format`]s.

use serde::{Deserialize, Serialize};

/// How a state is written out.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub enum Format {
    /// JSON (human-readable).
    Json,
    /// postcard (compact binary).
    Binary,
}

/// What starting a game takes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Setup {
    /// Number of players.
    pub players: u16,
    /// Seed of the game's RNG.
    pub seed: u64,
    /// Ruleset configuration as JSON; `null` or `{}` for the defaults.
    pub config: serde_json::Value,
}

impl Setup {
    /// Players and seed, default configuration.
    pub fn new(players: u16, seed: u64) -> Setup {
        Setup {
            players,
            seed,
            config: serde_json::Value::Null,
        }
    }
    /// With a configuration.
    pub fn config(mut self, config: serde_json::Value) -> Setup {
        self.config = config;
        self
    }
}

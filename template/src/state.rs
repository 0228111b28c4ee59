//! The state of one game and how it is set up: the bank, each player's purse and mines (setup, K4.6), and
//! who has won (the rules' end).

use coffer_core::{
    AmountId, AmountSpec, Cause, Key, Kind, Ledger, Outcome, Owner, SetupError, Zone, ZoneId,
};
use serde::{Deserialize, Serialize};

/// Resource kinds of this ruleset (the kernel knows no game words; kinds give them meaning).
pub const PURSE: Kind = Kind(0);
/// A player's mines.
pub const MINES: Kind = Kind(1);
/// The bank.
pub const BANK: Kind = Kind(2);

/// The whole state of one game. No `HashMap`/`HashSet` here: state hashes need a canonical encoding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    pub(crate) ledger: Ledger,
    pub(crate) bank: ZoneId,
    pub(crate) purse: Vec<ZoneId>,
    pub(crate) mines: Vec<AmountId>,
    pub(crate) turn: u16,
    pub(crate) goal: u8,
}

/// Configuration; `Default` gives the documented defaults.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Coins that win (2 to 100).
    pub goal: u8,
    /// Coins in the bank (the goal to 1000).
    pub bank: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config { goal: 10, bank: 30 }
    }
}

impl State {
    /// A new game: the bank stocked, a purse zone and a mine counter per player.
    ///
    /// # Errors
    /// [`SetupError::Config`] naming the value out of range.
    pub fn new(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        if !(2..=100).contains(&config.goal) {
            return Err(SetupError::Config(format!(
                "goal {}: choose 2 to 100",
                config.goal
            )));
        }
        if !(u32::from(config.goal)..=1000).contains(&config.bank) {
            return Err(SetupError::Config(format!(
                "bank {}: choose the goal ({}) to 1000",
                config.bank, config.goal
            )));
        }
        let mut ledger = Ledger::new(players, seed);
        // The bank: the game's own supply of coins (K4.6), conserved wherever they go.
        let bank = ledger.add_zone(Zone::new(Key::new(Owner::GAME, BANK, 0)))?;
        ledger.stock(Owner::GAME, bank, config.bank, Cause::Setup)?;
        let mut purse = Vec::new();
        let mut mines = Vec::new();
        for p in (0..players).map(Owner) {
            purse.push(ledger.add_zone(Zone::new(Key::new(p, PURSE, 0)))?);
            mines.push(ledger.add_amount(AmountSpec::new(Key::new(p, MINES, 0)))?);
        }
        Ok(State {
            ledger,
            bank,
            purse,
            mines,
            turn: 0,
            goal: config.goal,
        })
    }

    /// `p`'s coins.
    pub fn coins(&self, p: Owner) -> u32 {
        self.ledger.tokens(self.purse[p.index()], Owner::GAME)
    }

    /// Who has won, if anybody: the goal reached, or the richest once the bank is dry.
    pub fn outcome(&self) -> Outcome {
        if !self.is_over() {
            return Outcome::Ongoing;
        }
        // The goal is reached on the turn it is (so by the richest), or the bank ran dry: the richest
        // win, ties sharing.
        Outcome::by_score(
            (0..self.ledger.owners())
                .map(|p| i64::from(self.coins(Owner(p))))
                .collect(),
        )
    }

    /// Whether the game has ended: a player reached the goal, or the bank ran dry. A question without
    /// the scores' list that [`outcome`](Self::outcome) builds, for checks made once per action.
    pub fn is_over(&self) -> bool {
        let goal = (0..self.ledger.owners()).any(|p| self.coins(Owner(p)) >= u32::from(self.goal));
        goal || self.ledger.tokens(self.bank, Owner::GAME) == 0
    }
}

//! The state of a `wide-board` game: the sizes and starting pools, the kernel kinds, the configuration, the
//! kernel handles, the state itself with its setup and questions, and the ruleset's own invariants.

use coffer_core::{
    AmountId, AmountSpec, Cause, Key, Ledger, Owner, PermanentId, Scope, SetupError, Violation,
    Zone, ZoneId,
};
use serde::{Deserialize, Serialize};

/// Most players.
pub const MAX_PLAYERS: u16 = 8;
/// Most systems on the board.
pub const MAX_SYSTEMS: u16 = 200;
/// Most rounds.
pub const MAX_ROUNDS: u16 = 100;
/// Each player's command tokens.
pub const TOKENS: u32 = 16;
/// Tokens in the tactic, fleet and strategy pools at the start (the rest are in reinforcements).
pub const START_POOLS: [u32; 3] = [3, 3, 2];
/// Tokens a strategic action gains into the tactic pool.
pub const STRATEGIC_GAIN: u32 = 2;

/// Resource kinds (indexing [`Vocabulary::kinds`](coffer_core::Vocabulary::kinds)).
pub mod kind {
    use coffer_core::Kind;
    /// Reinforcements: each player's tokens off the sheet and off the board (the kernel reserve).
    pub const REINFORCEMENTS: Kind = Kind(0);
    /// The tactic pool.
    pub const TACTIC: Kind = Kind(1);
    /// The fleet pool.
    pub const FLEET: Kind = Kind(2);
    /// The strategy pool.
    pub const STRATEGY: Kind = Kind(3);
    /// A system (subject: its index).
    pub const SYSTEM: Kind = Kind(4);
    /// A player's score.
    pub const SCORE: Kind = Kind(5);
    /// A player's strategic action, exhausted once used in a round.
    pub const STRATEGIC: Kind = Kind(6);
}

/// A pool of a player's command sheet, in the order of [`START_POOLS`] and [`Handles::pools`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pool {
    /// Spent for tactical actions.
    Tactic,
    /// Kept; never spent.
    Fleet,
    /// Spent for the strategic action.
    Strategy,
}

impl Pool {
    /// Its index in [`START_POOLS`] and [`Handles::pools`].
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Configuration; `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Systems on the board, 1 to 200.
    pub systems: u16,
    /// Rounds played, 1 to 100.
    pub rounds: u16,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            systems: 30,
            rounds: 8,
        }
    }
}

impl Config {
    /// Checks the ranges documented on the fields.
    ///
    /// # Errors
    /// [`SetupError::Config`] naming the value and its range.
    pub fn check(&self) -> Result<(), SetupError> {
        if !(1..=MAX_SYSTEMS).contains(&self.systems) {
            return Err(SetupError::Config(format!(
                "systems {}: choose 1 to {MAX_SYSTEMS}",
                self.systems
            )));
        }
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(SetupError::Config(format!(
                "rounds {}: choose 1 to {MAX_ROUNDS}",
                self.rounds
            )));
        }
        Ok(())
    }
}

/// The kernel handles of a game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Handles {
    /// Reinforcements (every player's kernel reserve).
    pub reinforcements: ZoneId,
    /// Tactic, fleet and strategy pools.
    pub pools: [ZoneId; 3],
    /// One one-per-owner zone per system, by system index; created one after another.
    pub systems: Vec<ZoneId>,
    /// Each player's score.
    pub scores: Vec<AmountId>,
    /// Each player's strategic action (exhausted once used this round, readied at the round's end).
    pub strategic: Vec<PermanentId>,
}

/// The whole state of one game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// Every resource.
    pub ledger: Ledger,
    /// Where they are.
    pub h: Handles,
    /// Whose turn it is.
    pub(crate) active: u16,
    /// Who has passed this round, one bit per player.
    pub(crate) passed: u16,
    /// Rounds of the game.
    pub(crate) rounds: u16,
    /// Whether the last round has ended.
    pub(crate) over: bool,
}

impl State {
    /// A new game at the start of round 1, player 0 to act.
    ///
    /// # Errors
    /// [`SetupError`] for a player count outside 2 to 8 or a bad configuration.
    pub fn new(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        config.check()?;
        if !(2..=MAX_PLAYERS).contains(&players) {
            return Err(SetupError::Players {
                got: players,
                min: 2,
                max: MAX_PLAYERS,
            });
        }
        let mut l = Ledger::new(players, seed);
        let g = Owner::GAME;
        let reinforcements = l.add_zone(Zone::new(Key::new(g, kind::REINFORCEMENTS, 0)))?;
        let pools = [
            l.add_zone(Zone::new(Key::new(g, kind::TACTIC, 0)))?,
            l.add_zone(Zone::new(Key::new(g, kind::FLEET, 0)))?,
            l.add_zone(Zone::new(Key::new(g, kind::STRATEGY, 0)))?,
        ];
        let mut systems = Vec::with_capacity(usize::from(config.systems));
        l.add_zones(
            (0..u32::from(config.systems))
                .map(|s| Zone::new(Key::new(g, kind::SYSTEM, s)).one_per_owner()),
            &mut systems,
        )?;
        let mut scores = Vec::with_capacity(usize::from(players));
        let mut strategic = Vec::with_capacity(usize::from(players));
        for owner in (0..players).map(Owner) {
            l.stock(owner, reinforcements, TOKENS, Cause::Setup)?;
            for (pool, n) in pools.iter().zip(START_POOLS) {
                l.move_tokens(owner, reinforcements, *pool, n, Cause::Setup)?;
            }
            scores.push(l.add_amount(AmountSpec::new(Key::new(owner, kind::SCORE, 0)))?);
            strategic.push(l.add_permanent(Key::new(owner, kind::STRATEGIC, 0), Some(Scope::Act))?);
        }
        Ok(State {
            ledger: l,
            h: Handles {
                reinforcements,
                pools,
                systems,
                scores,
                strategic,
            },
            active: 0,
            passed: 0,
            rounds: config.rounds,
            over: false,
        })
    }

    /// Number of players.
    #[inline]
    pub fn players(&self) -> u16 {
        self.ledger.owners()
    }

    /// Whose turn it is; `None` once the game is over.
    #[inline]
    pub fn active(&self) -> Option<Owner> {
        (!self.over).then_some(Owner(self.active))
    }

    /// Whether `player` has passed this round.
    pub fn passed(&self, player: Owner) -> bool {
        self.passed & (1 << player.0) != 0
    }

    /// Whether the last round has ended.
    pub fn over(&self) -> bool {
        self.over
    }

    /// The round being played, from 0.
    #[inline]
    pub fn round(&self) -> u32 {
        self.ledger.clock().act
    }

    /// `player`'s tokens in a pool.
    #[inline]
    pub fn pool(&self, player: Owner, pool: Pool) -> u32 {
        self.ledger.tokens(self.h.pools[pool.index()], player)
    }

    /// `player`'s score so far.
    #[inline]
    pub fn score(&self, player: Owner) -> i64 {
        self.ledger.value(self.h.scores[player.index()])
    }

    /// The ruleset's own invariants: every player holds exactly [`TOKENS`], the player to act has not
    /// passed, and the round is within the game.
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_rules(&self) -> Result<(), Violation> {
        for owner in (0..self.players()).map(Owner) {
            let supply = self.ledger.supply(owner);
            if supply != TOKENS {
                return Err(Violation(format!(
                    "p{} has {supply} command tokens, not {TOKENS}",
                    owner.0
                )));
            }
        }
        if self.active >= self.players() {
            return Err(Violation(format!(
                "player to act p{} is not in the game",
                self.active
            )));
        }
        if !self.over && self.passed & (1 << self.active) != 0 {
            return Err(Violation(format!(
                "p{} is to act but has passed",
                self.active
            )));
        }
        if self.round() >= u32::from(self.rounds) {
            return Err(Violation(format!(
                "round {} of a {}-round game",
                self.round() + 1,
                self.rounds
            )));
        }
        Ok(())
    }
}

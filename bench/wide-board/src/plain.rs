//! The same game written by hand in plain Rust, for the bench's baseline: fixed arrays and a flag per
//! player and system, no kernel, no events, no transactions, no checks beyond debug assertions.
//!
//! Its legal moves come in the ruleset's order (see the crate docs), and [`playout`] draws from the RNG
//! exactly as `coffer_host::simulate::playout` does for a game that lists one player to act, so the same
//! seed plays the identical game on both (`tests/it/agree.rs` checks it).
//!
//! ```
//! use coffer_core::GameRng;
//! use coffer_wide_board::{Config, plain};
//!
//! let mut game = plain::Game::new(6, &Config::default());
//! let applied = plain::playout(&mut game, &mut GameRng::new(1), &mut Vec::new(), u64::MAX);
//! assert!(game.over());
//! assert!(applied > 0);
//! ```

use crate::state::{Config, MAX_PLAYERS, START_POOLS, STRATEGIC_GAIN, TOKENS};
use coffer_core::GameRng;

const P: usize = MAX_PLAYERS as usize;

/// A move, as the ruleset's [`Action`](crate::Action).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// A tactic-pool token into this system.
    Tactical(u16),
    /// Spend a strategy-pool token, gain 2 into the tactic pool.
    Strategic,
    /// Out for the round.
    Pass,
}

/// One game.
#[derive(Clone, Debug)]
pub struct Game {
    players: u16,
    systems: u16,
    rounds: u16,
    /// `held[player * systems + system]`: whether that player's token is in that system.
    held: Vec<bool>,
    reinforcements: [u32; P],
    tactic: [u32; P],
    fleet: [u32; P],
    strategy: [u32; P],
    /// Who used the strategic action this round, one bit per player.
    used: u16,
    /// Who passed this round, one bit per player.
    passed: u16,
    active: u16,
    round: u16,
    over: bool,
    scores: [i64; P],
}

impl Game {
    /// A new game at the start of round 1, player 0 to act.
    ///
    /// # Panics
    /// For a player count outside 2 to 8 or a configuration that [`Config::check`] refuses.
    pub fn new(players: u16, config: &Config) -> Game {
        assert!((2..=MAX_PLAYERS).contains(&players), "{players} players");
        assert!(config.check().is_ok(), "{config:?}");
        let pools: u32 = START_POOLS.iter().sum();
        Game {
            players,
            systems: config.systems,
            rounds: config.rounds,
            held: vec![false; usize::from(players) * usize::from(config.systems)],
            reinforcements: [TOKENS - pools; P],
            tactic: [START_POOLS[0]; P],
            fleet: [START_POOLS[1]; P],
            strategy: [START_POOLS[2]; P],
            used: 0,
            passed: 0,
            active: 0,
            round: 0,
            over: false,
            scores: [0; P],
        }
    }

    /// Whose turn it is; `None` once the game is over.
    #[inline]
    pub fn active(&self) -> Option<u16> {
        (!self.over).then_some(self.active)
    }

    /// Whether the last round has ended.
    pub fn over(&self) -> bool {
        self.over
    }

    /// Each player's score.
    pub fn scores(&self) -> &[i64] {
        &self.scores[..usize::from(self.players)]
    }

    /// Each player's tokens in reinforcements, tactic, fleet and strategy pools and on the board.
    pub fn tokens(&self, player: u16) -> [u32; 5] {
        let p = usize::from(player);
        [
            self.reinforcements[p],
            self.tactic[p],
            self.fleet[p],
            self.strategy[p],
            self.row(p).iter().filter(|&&h| h).count() as u32,
        ]
    }

    #[inline]
    fn row(&self, p: usize) -> &[bool] {
        let s = usize::from(self.systems);
        &self.held[p * s..(p + 1) * s]
    }

    /// Appends the active player's legal moves (nothing once the game is over), in the ruleset's order.
    #[inline]
    pub fn legal(&self, out: &mut Vec<Move>) {
        if self.over {
            return;
        }
        let p = usize::from(self.active);
        if self.tactic[p] > 0 {
            for (s, &held) in self.row(p).iter().enumerate() {
                if !held {
                    out.push(Move::Tactical(s as u16));
                }
            }
        }
        if self.strategy[p] > 0 && self.used & (1 << p) == 0 {
            out.push(Move::Strategic);
        }
        out.push(Move::Pass);
    }

    /// Plays a legal move of the active player (one [`legal`](Self::legal) listed: nothing is checked
    /// but in debug builds).
    #[inline]
    pub fn apply(&mut self, m: Move) {
        debug_assert!(!self.over);
        let p = usize::from(self.active);
        match m {
            Move::Tactical(s) => {
                let at = p * usize::from(self.systems) + usize::from(s);
                debug_assert!(self.tactic[p] > 0 && !self.held[at]);
                self.tactic[p] -= 1;
                self.held[at] = true;
                self.next_turn();
            }
            Move::Strategic => {
                debug_assert!(self.strategy[p] > 0 && self.used & (1 << p) == 0);
                self.used |= 1 << p;
                self.strategy[p] -= 1;
                self.reinforcements[p] += 1;
                let gained = STRATEGIC_GAIN.min(self.reinforcements[p]);
                self.reinforcements[p] -= gained;
                self.tactic[p] += gained;
                self.next_turn();
            }
            Move::Pass => {
                self.passed |= 1 << p;
                if self.passed.count_ones() == u32::from(self.players) {
                    self.end_round();
                } else {
                    self.next_turn();
                }
            }
        }
    }

    #[inline]
    fn next_turn(&mut self) {
        let mut q = self.active;
        loop {
            q = if q + 1 == self.players { 0 } else { q + 1 };
            if self.passed & (1 << q) == 0 {
                break;
            }
        }
        self.active = q;
    }

    fn end_round(&mut self) {
        let s = usize::from(self.systems);
        for p in 0..usize::from(self.players) {
            let row = &mut self.held[p * s..(p + 1) * s];
            let mut held = 0;
            for h in row.iter_mut() {
                held += u32::from(*h);
                *h = false;
            }
            self.scores[p] += i64::from(held);
            self.reinforcements[p] += held;
        }
        self.passed = 0;
        if self.round + 1 >= self.rounds {
            self.over = true;
            return;
        }
        self.round += 1;
        self.used = 0;
        for p in 0..usize::from(self.players) {
            let t = self.reinforcements[p].min(1);
            self.reinforcements[p] -= t;
            self.tactic[p] += t;
            let s = self.reinforcements[p].min(1);
            self.reinforcements[p] -= s;
            self.strategy[p] += s;
        }
        self.active = self.round % self.players;
    }
}

/// One random playout of at most `max_actions` moves; returns how many were played. `moves` is scratch
/// space kept between calls.
///
/// The draws are those of `coffer_host::simulate::playout`, which first draws who acts among the players
/// a game lists (here always one: `below(1)`), then one of that player's legal actions
/// (`below(count)`).
#[inline]
pub fn playout(game: &mut Game, rng: &mut GameRng, moves: &mut Vec<Move>, max_actions: u64) -> u64 {
    let mut applied = 0;
    while applied < max_actions && !game.over {
        moves.clear();
        game.legal(moves);
        rng.below(1);
        let i = rng.below(moves.len() as u64) as usize;
        game.apply(moves[i]);
        applied += 1;
    }
    applied
}

//! The same game written by hand in plain Rust, for the bench's baseline: fixed arrays, a bit per player
//! for who passed and who harvested, no kernel, no events, no transactions, no checks beyond debug
//! assertions. A game is set up once and [`reset`](Game::reset) in place between playouts, as
//! hand-written code does: its arrays are re-initialised, never reallocated.
//!
//! Its legal moves come in the ruleset's order (see the crate docs), and [`playout`] draws from the RNG
//! exactly as `coffer_host::simulate::playout` does for a game that lists one player to act, so the same
//! seed plays the identical game on both (`tests/it/agree.rs` checks it).
//!
//! ```
//! use coffer_core::GameRng;
//! use coffer_guide_board::{Config, plain};
//!
//! let mut game = plain::Game::new(6, &Config::default());
//! let applied = plain::playout(&mut game, &mut GameRng::new(1), &mut Vec::new(), u64::MAX);
//! assert!(game.over());
//! assert!(applied > 0);
//! game.reset();
//! assert!(!game.over());
//! ```

use crate::state::{Config, ENERGY, MAX_PLAYERS, MAX_SCORE, TOKENS};
use coffer_core::GameRng;

const P: usize = MAX_PLAYERS as usize;
/// `holder` of a site nobody holds.
const NOBODY: u8 = u8::MAX;

/// A move, as the ruleset's [`Action`](crate::Action).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Move {
    /// A token from reinforcements onto this site.
    Place(u16),
    /// A token from the first site to its neighbour, the second.
    Shift(u16, u16),
    /// A point per site held, once a round.
    Harvest,
    /// Out for the round.
    Pass,
}

/// One game.
#[derive(Clone, Debug)]
pub struct Game {
    players: u16,
    sites: u16,
    rounds: u16,
    /// `holder[site]`: the player whose tokens are on the site, or [`NOBODY`].
    holder: Vec<u8>,
    /// `count[site]`: how many tokens are on the site.
    count: Vec<u8>,
    /// Sites each player holds.
    held: [u32; P],
    reinforcements: [u32; P],
    energy: [u32; P],
    scores: [i64; P],
    /// Who passed this round, one bit per player.
    passed: u8,
    /// Who harvested this round, one bit per player.
    harvested: u8,
    active: u16,
    round: u16,
    over: bool,
}

impl Game {
    /// A new game at the start of round 1, player 0 to act.
    ///
    /// # Panics
    /// For a player count outside 2 to 6 or a configuration that [`Config::check`] refuses.
    pub fn new(players: u16, config: &Config) -> Game {
        assert!((2..=MAX_PLAYERS).contains(&players), "{players} players");
        assert!(config.check().is_ok(), "{config:?}");
        let sites = usize::from(config.sites);
        let mut game = Game {
            players,
            sites: config.sites,
            rounds: config.rounds,
            holder: vec![NOBODY; sites],
            count: vec![0; sites],
            held: [0; P],
            reinforcements: [0; P],
            energy: [0; P],
            scores: [0; P],
            passed: 0,
            harvested: 0,
            active: 0,
            round: 0,
            over: false,
        };
        game.reset();
        game
    }

    /// Back to the start of round 1, in place (nothing is allocated).
    pub fn reset(&mut self) {
        self.holder.fill(NOBODY);
        self.count.fill(0);
        self.held = [0; P];
        self.reinforcements = [TOKENS; P];
        self.energy = [ENERGY as u32; P];
        self.scores = [0; P];
        self.passed = 0;
        self.harvested = 0;
        self.active = 0;
        self.round = 0;
        self.over = false;
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

    /// A player's tokens in reinforcements and on the board, and the sites they hold.
    pub fn tokens(&self, player: u16) -> (u32, u32, u32) {
        let p = player as u8;
        let on_board = (0..usize::from(self.sites))
            .filter(|&s| self.holder[s] == p)
            .map(|s| u32::from(self.count[s]))
            .sum();
        (
            self.reinforcements[usize::from(player)],
            on_board,
            self.held[usize::from(player)],
        )
    }

    /// A player's energy.
    pub fn energy(&self, player: u16) -> u32 {
        self.energy[usize::from(player)]
    }

    /// The neighbours of `site` on the ring, ascending, without repeats or the site itself.
    #[inline]
    fn neighbours(&self, site: u16) -> ([u16; 2], usize) {
        let n = self.sites;
        match n {
            1 => ([0, 0], 0),
            2 => ([1 - site, 0], 1),
            _ if site == 0 => ([1, n - 1], 2),
            _ if site == n - 1 => ([0, n - 2], 2),
            _ => ([site - 1, site + 1], 2),
        }
    }

    /// Appends the active player's legal moves (nothing once the game is over), in the ruleset's order.
    #[inline]
    pub fn legal(&self, out: &mut Vec<Move>) {
        if self.over {
            return;
        }
        let p = usize::from(self.active);
        let me = p as u8;
        if self.energy[p] > 0 {
            if self.reinforcements[p] > 0 {
                for (s, &h) in self.holder.iter().enumerate() {
                    if h == NOBODY || h == me {
                        out.push(Move::Place(s as u16));
                    }
                }
            }
            if self.held[p] > 0 {
                for (from, &h) in self.holder.iter().enumerate() {
                    if h != me {
                        continue;
                    }
                    let (to, k) = self.neighbours(from as u16);
                    for &t in &to[..k] {
                        let th = self.holder[usize::from(t)];
                        if th == NOBODY || th == me {
                            out.push(Move::Shift(from as u16, t));
                        }
                    }
                }
            }
        }
        if self.harvested & (1 << p) == 0 {
            out.push(Move::Harvest);
        }
        out.push(Move::Pass);
    }

    /// Plays a legal move of the active player (one [`legal`](Self::legal) listed: nothing is checked
    /// but in debug builds).
    #[inline]
    pub fn apply(&mut self, m: Move) {
        debug_assert!(!self.over);
        let p = usize::from(self.active);
        let me = p as u8;
        match m {
            Move::Place(s) => {
                let s = usize::from(s);
                debug_assert!(self.energy[p] > 0 && self.reinforcements[p] > 0);
                debug_assert!(self.holder[s] == NOBODY || self.holder[s] == me);
                self.energy[p] -= 1;
                self.reinforcements[p] -= 1;
                if self.holder[s] == NOBODY {
                    self.holder[s] = me;
                    self.held[p] += 1;
                }
                self.count[s] += 1;
                self.next_turn();
            }
            Move::Shift(from, to) => {
                let (f, t) = (usize::from(from), usize::from(to));
                debug_assert!(self.energy[p] > 0 && self.holder[f] == me);
                debug_assert!(self.holder[t] == NOBODY || self.holder[t] == me);
                self.energy[p] -= 1;
                self.count[f] -= 1;
                if self.count[f] == 0 {
                    self.holder[f] = NOBODY;
                    self.held[p] -= 1;
                }
                if self.holder[t] == NOBODY {
                    self.holder[t] = me;
                    self.held[p] += 1;
                }
                self.count[t] += 1;
                self.next_turn();
            }
            Move::Harvest => {
                debug_assert!(self.harvested & (1 << p) == 0);
                self.harvested |= 1 << p;
                self.scores[p] = (self.scores[p] + i64::from(self.held[p])).min(MAX_SCORE);
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
        self.passed = 0;
        self.harvested = 0;
        self.round += 1;
        if self.round >= self.rounds {
            self.energy = [0; P];
            self.over = true;
            return;
        }
        self.energy = [ENERGY as u32; P];
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

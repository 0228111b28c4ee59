//! Coffer ruleset `wide-board`: a small Twilight-Imperium-like command-token game on a wide board (30
//! systems by default), written on the kernel's token zones to measure a ruleset over the kernel against
//! the same game written by hand in plain Rust ([`plain`]), which `benches/playout.rs` times side by side.
//!
//! ```
//! use coffer_core::{Adapter, Owner, Setup};
//! use coffer_wide_board::WideBoard;
//!
//! let ruleset = Adapter::shared(WideBoard);
//! let mut game = ruleset.new_game(&Setup::new(6, 1)).unwrap();
//! // Player 0 opens round 1: a tactical action into each of the 30 systems, a strategic action, or pass.
//! assert_eq!(game.legal_actions(Owner(0)), 32);
//! game.apply_json(Owner(0), r#"{"type":"tactical","system":7}"#).unwrap();
//! assert!(game.check_invariants().is_ok());
//! // Player 1's turn now; player 0 may not place a second token in system 7 on a later turn.
//! assert_eq!(game.legal_actions(Owner(0)), 0);
//! ```
//!
//! # The game
//!
//! Each of N players (2 to 8; 6 in the bench) has 16 command tokens: 3 in the tactic pool, 3 in the
//! fleet pool, 2 in the strategy pool and 8 in reinforcements. Rounds start with player `round % N` and go
//! round the table, skipping players who passed. On their turn a player takes one action:
//!
//! - **tactical**: move a token from their tactic pool into a system that holds none of their tokens
//!   (other players' tokens do not block);
//! - **strategic**, once per round: spend a strategy-pool token (to reinforcements) and gain 2 tokens
//!   from reinforcements into the tactic pool (fewer if reinforcements hold fewer);
//! - **pass**, out for the rest of the round.
//!
//! When everyone has passed the round ends: each player scores 1 per system holding one of their tokens,
//! every board token returns to its owner's reinforcements, and, unless it was the last round, each
//! player gains 1 token into the tactic pool and 1 into the strategy pool. After the last round
//! (`rounds`, default 8) the highest score wins (ties share the win).
//!
//! # Legal-action order
//!
//! Only the player whose turn it is has legal actions, in this order: `tactical` for every system
//! without their token, by ascending system index (none when the tactic pool is empty); then
//! `strategic`, if they have not used it this round and their strategy pool holds a token; then `pass`
//! (always). [`plain::Game::legal`] lists the same moves in the same order, so a seeded random playout
//! plays the identical game on both.
//!
//! # On the kernel
//!
//! | Rule | Kernel primitive |
//! |------|------------------|
//! | 16 tokens per player | K4 token supply: one reinforcements zone (the reserve), three pool zones |
//! | One token per player per system | K4.3 one-per-owner zones, one per system |
//! | Tactical, strategic, the round's return | K4.1 `move_tokens` |
//! | Gaining tokens | K4.2 `gain_tokens` (short reinforcements reported, not refused) |
//! | Strategic once per round | K5 permanent per player, readied by the clock at the round's end |
//! | Rounds | K10 clock: an act scope per round |
//! | Scores | K1 amount per player |
//!
//! The questions about the whole board (the tactical list, the score, the return) are in one private
//! module, `board`, each one call to the kernel's board index (K4.8).

mod board;
#[doc(hidden)]
pub mod plain;

use coffer_core::{
    ActionError, AmountId, AmountSpec, Cause, Description, Doc, Key, Ledger, NoteTerm, Outcome,
    Owner, PermanentId, Ruleset, Scope, SetupError, Table, Term, Violation, Vocabulary, Zone,
    ZoneId,
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

/// Resource kinds (indexing [`Vocabulary::kinds`]).
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

/// Action codes in [`Cause::Action`], indexing [`Vocabulary::actions`].
mod code {
    pub const TACTICAL: u16 = 0;
    pub const STRATEGIC: u16 = 1;
    pub const PASS: u16 = 2;
}

/// Effect codes in [`Cause::Effect`], indexing [`Vocabulary::effects`].
const ROUND_END: u16 = 0;

/// Note codes, indexing [`Vocabulary::notes`].
mod note {
    pub const PASS: u16 = 0;
    pub const GAME_OVER: u16 = 1;
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

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Clone, Copy, Debug, Default)]
pub struct WideBoard;

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

/// A player's action, as JSON: `{"type":"tactical","system":3}`, `{"type":"strategic"}`,
/// `{"type":"pass"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Move a tactic-pool token into a system without one of your tokens.
    Tactical {
        /// The system's index, 0 to `systems - 1`.
        system: u16,
    },
    /// Spend a strategy-pool token; gain 2 tokens into the tactic pool. Once per round.
    Strategic,
    /// Out for the rest of the round.
    Pass,
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
    active: u16,
    /// Who has passed this round, one bit per player.
    passed: u16,
    /// Rounds of the game.
    rounds: u16,
    /// Whether the last round has ended.
    over: bool,
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
        let systems = (0..u32::from(config.systems))
            .map(|s| l.add_zone(Zone::new(Key::new(g, kind::SYSTEM, s)).one_per_owner()))
            .collect::<Result<Vec<_>, _>>()?;
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

    /// Appends `player`'s legal actions in the documented order (see the crate docs).
    #[inline]
    pub fn legal_actions(&self, player: Owner, out: &mut Vec<Action>) {
        if self.over || player.0 != self.active {
            return;
        }
        if self.pool(player, Pool::Tactic) > 0 {
            self.open_systems(player, out);
        }
        if self.pool(player, Pool::Strategy) > 0
            && !self.ledger.is_exhausted(self.h.strategic[player.index()])
        {
            out.push(Action::Strategic);
        }
        out.push(Action::Pass);
    }

    /// Applies `player`'s action. Refusals come before any change of this state; a refusal of the
    /// kernel's (an empty pool, a used strategic action, a second token in a system) is rolled back by
    /// the adapter with everything the action did to the ledger.
    ///
    /// # Errors
    /// [`ActionError`] when the game is over, it is not `player`'s turn, or the action is not legal.
    pub fn apply(&mut self, player: Owner, action: &Action) -> Result<(), ActionError> {
        if self.over {
            return Err(ActionError::GameOver);
        }
        if player.0 != self.active {
            return Err(ActionError::NotYourTurn {
                player,
                reason: format!("it is p{}'s turn", self.active),
            });
        }
        match *action {
            Action::Tactical { system } => {
                let cause = Cause::Action {
                    player,
                    code: code::TACTICAL,
                };
                let Some(&zone) = self.h.systems.get(usize::from(system)) else {
                    return Err(ActionError::Illegal(format!(
                        "system {system}: the board has systems 0 to {}",
                        self.h.systems.len() - 1
                    )));
                };
                // An empty tactic pool is refused by the kernel; a token for a system that holds one of
                // the player's would go to reinforcements instead (K4.3): refuse that.
                let tactic = self.h.pools[Pool::Tactic.index()];
                if self.ledger.move_tokens(player, tactic, zone, 1, cause)? > 0 {
                    return Err(ActionError::Illegal(format!(
                        "system {system} already holds a command token of p{}",
                        player.0
                    )));
                }
                self.next_turn(player);
            }
            Action::Strategic => {
                let cause = Cause::Action {
                    player,
                    code: code::STRATEGIC,
                };
                // Refused by the kernel when used this round (K5) or with an empty strategy pool.
                self.ledger
                    .activate(self.h.strategic[player.index()], cause)?;
                let (strategy, tactic) = (
                    self.h.pools[Pool::Strategy.index()],
                    self.h.pools[Pool::Tactic.index()],
                );
                self.ledger
                    .move_tokens(player, strategy, self.h.reinforcements, 1, cause)?;
                self.ledger
                    .gain_tokens(player, tactic, STRATEGIC_GAIN, cause)?;
                self.next_turn(player);
            }
            Action::Pass => {
                let cause = Cause::Action {
                    player,
                    code: code::PASS,
                };
                self.ledger
                    .note(Key::new(player, kind::SCORE, 0), note::PASS, [0; 3], cause);
                self.passed |= 1 << player.0;
                if self.passed.count_ones() == u32::from(self.players()) {
                    self.end_round()?;
                } else {
                    self.next_turn(player);
                }
            }
        }
        Ok(())
    }

    /// The next player after `player` round the table who has not passed (`player` again if everyone
    /// else has). At least one player has not passed.
    #[inline]
    fn next_turn(&mut self, player: Owner) {
        let n = self.players();
        let mut q = player.0;
        loop {
            q = if q + 1 == n { 0 } else { q + 1 };
            if self.passed & (1 << q) == 0 {
                break;
            }
        }
        self.active = q;
    }

    /// Everyone passed: scores, the return of every board token, then the next round or the end.
    fn end_round(&mut self) -> Result<(), ActionError> {
        let cause = Cause::Effect(ROUND_END);
        for owner in (0..self.players()).map(Owner) {
            // One token per system at most: the tokens returned are the systems held.
            let held = self.return_board_tokens(owner, cause)?;
            if held > 0 {
                self.ledger
                    .gain(self.h.scores[owner.index()], u64::from(held), cause)?;
            }
        }
        self.passed = 0;
        if self.round() + 1 >= u32::from(self.rounds) {
            self.over = true;
            self.ledger.note(
                Key::new(Owner::GAME, kind::SCORE, 0),
                note::GAME_OVER,
                [0; 3],
                cause,
            );
            return Ok(());
        }
        // Readies every strategic action (K5) and counts the round (K10).
        self.ledger.end_scope(Scope::Act);
        let (tactic, strategy) = (
            self.h.pools[Pool::Tactic.index()],
            self.h.pools[Pool::Strategy.index()],
        );
        for owner in (0..self.players()).map(Owner) {
            self.ledger.gain_tokens(owner, tactic, 1, cause)?;
            self.ledger.gain_tokens(owner, strategy, 1, cause)?;
        }
        self.active = (self.round() % u32::from(self.players())) as u16;
        Ok(())
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

impl Ruleset for WideBoard {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        let mut d = Description::new(
            "wide-board",
            env!("CARGO_PKG_VERSION"),
            "command tokens on a wide board: tactical actions into systems, a strategic action, pass; score systems held at each round's end",
        );
        d.min_players = 2;
        d.max_players = MAX_PLAYERS;
        d.phases = vec!["action".into()];
        d.resources = vec![
            Doc::new(
                "reinforcements",
                "Each player's command tokens off the sheet and off the board (16 in all per player).",
            ),
            Doc::new("tactic pool", "Tokens spent for tactical actions."),
            Doc::new("fleet pool", "Tokens kept on the sheet; never spent."),
            Doc::new("strategy pool", "Tokens spent for the strategic action."),
            Doc::new(
                "system",
                "One zone per system: at most one token per player.",
            ),
            Doc::new("score", "Systems held at each round's end, summed."),
            Doc::new(
                "strategic action",
                "Used once per round; readied at the round's end.",
            ),
        ];
        d.actions = vec![
            Doc::with(
                "tactical",
                "Move a tactic-pool token into a system (index, 0 to systems - 1) that holds none of your tokens.",
                serde_json::json!({"type": "tactical", "system": 3}),
            ),
            Doc::with(
                "strategic",
                "Once per round: spend a strategy-pool token; gain 2 tokens from reinforcements into the tactic pool.",
                serde_json::json!({"type": "strategic"}),
            ),
            Doc::with(
                "pass",
                "Out for the rest of the round; the round ends when everyone has passed.",
                serde_json::json!({"type": "pass"}),
            ),
        ];
        let c = Config::default();
        d.options = vec![
            Doc::with(
                "systems",
                "Systems on the board, 1 to 200.",
                serde_json::json!(c.systems),
            ),
            Doc::with(
                "rounds",
                "Rounds played, 1 to 100.",
                serde_json::json!(c.rounds),
            ),
        ];
        d.vocabulary = Vocabulary {
            kinds: vec![
                Term::new("reinforcements"),
                Term::new("tactic pool"),
                Term::new("fleet pool"),
                Term::new("strategy pool"),
                Term::new("system"),
                Term::new("score"),
                Term::new("strategic action"),
            ],
            phases: vec!["Action".to_owned()],
            actions: vec![
                "Tactical action".to_owned(),
                "Strategic action".to_owned(),
                "Pass".to_owned(),
            ],
            effects: vec!["round end".to_owned()],
            notes: vec![
                NoteTerm::new("{who} passes"),
                NoteTerm::new("the last round is over"),
            ],
            ..Vocabulary::default()
        };
        d
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        State::new(players, seed, config)
    }

    #[inline]
    fn legal_actions(&self, state: &State, player: Owner, out: &mut Vec<Action>) {
        state.legal_actions(player, out);
    }

    /// Only the player whose turn it is, until the game is over.
    #[inline]
    fn to_act(&self, state: &State, out: &mut Vec<Owner>) {
        out.extend(state.active());
    }

    #[inline]
    fn apply(&self, state: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        state.apply(player, action)
    }

    fn ledger<'s>(&self, state: &'s State) -> &'s Ledger {
        &state.ledger
    }

    fn ledger_mut<'s>(&self, state: &'s mut State) -> &'s mut Ledger {
        &mut state.ledger
    }

    fn outcome(&self, state: &State) -> Outcome {
        if !state.over {
            return Outcome::Ongoing;
        }
        Outcome::by_score(
            (0..state.players())
                .map(|p| state.score(Owner(p)))
                .collect(),
        )
    }

    /// The same table for every seat and spectators: nothing is hidden.
    fn table(&self, state: &State, _seat: Option<Owner>, table: &mut Table) {
        let player = Owner(state.active);
        table.clock(state.round(), Some(0), None).turn(player);
        if !state.over {
            table.act(player, "to take a tactical or strategic action, or pass");
        }
        let scores = table.section("Scores");
        for p in (0..state.players()).map(Owner) {
            let passed = if state.passed(p) { ", passed" } else { "" };
            scores.row(p, "score", format!("{}{passed}", state.score(p)));
        }
    }

    fn label(&self, _state: &State, key: Key) -> Option<String> {
        (key.kind == kind::SYSTEM).then(|| format!("system {}", key.subject))
    }

    fn check_invariants(&self, state: &State) -> Result<(), Violation> {
        state.check_rules()
    }
}

// Registers the ruleset for hosts that link this crate, and exports it from the cdylib for
// `coffer --plugin-dir`. Once per crate.
coffer_core::plugin!(WideBoard);

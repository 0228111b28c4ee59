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
//!
//! # Files
//!
//! The shared ruleset layout (docs/WRITING_A_RULESET.md), in small rooms: `actions` (the enum and its
//! codes), `legal` (who acts, the legal list), `apply` (refusals, moves, the round's end), `state`
//! (sizes, kinds, configuration, setup, invariants), `words`, `describe`, `table`; `board` and `plain`
//! as above.

pub mod actions;
mod apply;
mod board;
pub mod describe;
mod legal;
#[doc(hidden)]
pub mod plain;
pub mod state;
pub mod table;
pub mod words;

pub use actions::Action;
pub use state::{
    Config, Handles, MAX_PLAYERS, MAX_ROUNDS, MAX_SYSTEMS, Pool, START_POOLS, STRATEGIC_GAIN,
    State, TOKENS, kind,
};

use coffer_core::{
    ActionError, Description, Key, Ledger, Outcome, Owner, Ruleset, SetupError, Table, Violation,
};

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Clone, Copy, Debug, Default)]
pub struct WideBoard;

impl Ruleset for WideBoard {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        describe::description()
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
        table::fill(state, table);
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

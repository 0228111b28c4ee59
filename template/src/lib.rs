//! A template Coffer ruleset, "coin race": each turn a player takes one or two coins from the bank, or
//! pays three back to it to build a mine that yields one coin (from the bank) at the start of each of their
//! turns. The first player whose purse reaches the goal wins; if the bank runs dry first, the richest
//! player wins. Replace the rules with yours; keep the shape.
//!
//! The bank is a supply the game owns (`Owner::GAME`): coins are the game's tokens wherever they are, so
//! the kernel conserves them, and a purse is a zone of the player's holding the game's coins.
//!
//! The files are those of every Coffer ruleset (docs/WRITING_A_RULESET.md, "A ruleset's files"):
//! `actions.rs` (the actions and their codes), `validate.rs` (one check per action, shared by the legal
//! list and `apply`), `refusals.rs` (why an action is refused, and its words), `legal.rs` (the legal
//! list), `apply.rs` (validate, then the rule), `rules/` (what each action does, by topic), `state.rs`
//! (the state and its setup, who has won), `describe.rs` (the description), `words.rs` (the
//! vocabulary), `table.rs` (what a seat sees), and this file (the `Ruleset` implementation that ties them
//! together). A ruleset with content (cards, ships, maps) as data adds `content.rs`. The tests are in
//! `tests/it/`: a few rules, each a test named after it, through `coffer_core::testing`.

pub mod actions;
pub mod apply;
pub mod describe;
pub mod legal;
pub mod refusals;
pub mod rules;
pub mod state;
pub mod table;
pub mod validate;
pub mod words;

pub use actions::Action;
pub use state::{Config, State};

use coffer_core::{ActionError, Description, Ledger, Outcome, Owner, Ruleset, SetupError, Table};

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Default)]
pub struct CoinRace;

impl Ruleset for CoinRace {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        describe::description()
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        State::new(players, seed, config)
    }

    fn legal_actions(&self, s: &State, player: Owner, out: &mut Vec<Action>) {
        legal::legal_actions(s, player, out);
    }

    fn apply(&self, s: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        apply::apply(s, player, action)
    }

    fn ledger<'s>(&self, s: &'s State) -> &'s Ledger {
        &s.ledger
    }

    fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger {
        &mut s.ledger
    }

    fn outcome(&self, s: &State) -> Outcome {
        s.outcome()
    }

    fn table(&self, s: &State, seat: Option<Owner>, table: &mut Table) {
        s.fill_table(seat, table);
    }
}

// Registers the ruleset for hosts that link this crate, and exports it from the cdylib for
// `coffer --plugin-dir`. Once per crate.
coffer_core::plugin!(CoinRace);

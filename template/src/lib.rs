//! A template Coffer ruleset, "coin race": each turn a player takes one or two coins from the bank, or
//! pays three back to it to build a mine that yields one coin (from the bank) at the start of each of their
//! turns. The first player whose purse reaches the goal wins; if the bank runs dry first, the richest
//! player wins. Replace the rules with yours; keep the shape.
//!
//! The bank is a supply the game owns (`Owner::GAME`): coins are the game's tokens wherever they are, so
//! the kernel conserves them, and a purse is a zone of the player's holding the game's coins.

//!
//! The files are those of every Coffer ruleset: `state.rs` (the state and its setup, who has won),
//! `actions.rs` (the actions, the legal list, applying them), `words.rs` (the vocabulary), `table.rs` (what
//! a seat sees), and this file (the description and the `Ruleset` implementation that ties them together).
//! A ruleset with content (cards, ships, maps) as data adds `content.rs`.

mod actions;
mod state;
mod table;
mod words;

pub use actions::Action;
pub use state::{Config, State};

use coffer_core::{
    ActionError, Description, Doc, Ledger, Outcome, Owner, Ruleset, SetupError, Table,
};

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Default)]
pub struct CoinRace;

impl Ruleset for CoinRace {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        let mut d = Description::new("my-ruleset", "0.1.0", "coin race: first to the goal wins");
        d.min_players = 2;
        d.max_players = 4;
        d.phases = vec!["turn".to_owned()];
        d.resources = vec![
            Doc::new("purse", "a player's coins; the goal wins"),
            Doc::new(
                "bank",
                "the coins nobody holds; taking stops when it is empty",
            ),
            Doc::new(
                "mines",
                "each yields one coin at the start of its owner's turn",
            ),
        ];
        d.actions = vec![
            Doc::with(
                "take",
                "take one or two coins from the bank (what is left, if it holds fewer)",
                serde_json::json!({"type": "take", "coins": 2}),
            ),
            Doc::with(
                "build",
                "pay three coins back to the bank for a mine",
                serde_json::json!({"type": "build"}),
            ),
        ];
        d.options = vec![
            Doc::with("goal", "coins that win (2 to 100)", serde_json::json!(10)),
            Doc::with(
                "bank",
                "coins in the bank (the goal to 1000)",
                serde_json::json!(30),
            ),
        ];
        // What this ruleset calls things (`words.rs`): hosts name resources, causes and events with it.
        d.vocabulary = words::vocabulary();
        d
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        State::new(players, seed, config)
    }

    fn legal_actions(&self, s: &State, player: Owner, out: &mut Vec<Action>) {
        s.legal_actions(player, out);
    }

    fn apply(&self, s: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        s.apply(player, action)
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

#[cfg(test)]
mod tests {
    use super::*;
    use coffer_core::{Adapter, Setup};

    #[test]
    fn building_a_mine_with_too_few_coins_is_refused_and_changes_nothing() {
        let game = Adapter::shared(CoinRace);
        let mut g = game.new_game(&Setup::new(2, 1)).unwrap();
        let before = g.state_hash();
        assert!(g.apply_json(Owner(0), r#"{"type":"build"}"#).is_err());
        assert_eq!(g.state_hash(), before);
    }

    #[test]
    fn the_bank_pays_what_it_holds_and_a_dry_bank_ends_the_game() {
        let game = Adapter::shared(CoinRace);
        let setup = Setup::new(2, 1).config(serde_json::json!({"goal": 3, "bank": 3}));
        let mut g = game.new_game(&setup).unwrap();
        g.apply_json(Owner(0), r#"{"type":"take","coins":2}"#)
            .unwrap();
        // One coin is left: p1 asks for two and gets one; the bank is dry and p0 is the richest.
        g.apply_json(Owner(1), r#"{"type":"take","coins":2}"#)
            .unwrap();
        match g.outcome() {
            Outcome::Finished { winners, scores } => {
                assert_eq!(winners, [Owner(0)]);
                assert_eq!(scores, [2, 1]);
            }
            Outcome::Ongoing => panic!("a dry bank ends the game"),
        }
    }
}

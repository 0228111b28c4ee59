//! Who plays now and why, and the goal: what hosts show beside the resources. Hidden information would go
//! into its owner's table only (`seat == Some(owner)`); this game has none.

use crate::state::State;
use coffer_core::{Outcome, Owner, Table};

impl State {
    /// Fills one audience's table.
    pub fn fill_table(&self, _seat: Option<Owner>, table: &mut Table) {
        let player = Owner(self.turn);
        table.clock(0, Some(0), None).turn(player);
        if self.outcome() == Outcome::Ongoing {
            table.act(player, "to take coins or build a mine");
        }
        let goal = table.section("Goal");
        goal.row(Owner::GAME, "coins that win", self.goal.to_string());
        let bank = self.ledger.tokens(self.bank, Owner::GAME);
        goal.row(Owner::GAME, "coins in the bank", bank.to_string());
    }
}

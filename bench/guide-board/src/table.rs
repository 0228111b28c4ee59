//! What every seat and spectator sees besides the resources: the round, whose turn it is, who has
//! passed, and who holds each site. Outposts hides nothing.

use crate::state::State;
use coffer_core::{Owner, Table};

impl State {
    /// Fills one audience's table (every audience sees the same).
    pub fn fill_table(&self, _seat: Option<Owner>, table: &mut Table) {
        table.clock(
            u32::from(self.round.min(self.rounds - 1)) + 1,
            Some(0),
            None,
        );
        if let Some(player) = self.active() {
            table.turn(player);
            table.act(player, "to place, shift, harvest or pass");
        }
        for p in (0..self.players()).map(Owner) {
            if self.has_passed(p) {
                table.pass(p);
            }
        }
        let game = table.section("Game");
        game.row(
            Owner::GAME,
            "rounds",
            format!("{} of {}", self.round.min(self.rounds - 1) + 1, self.rounds),
        );
        let board = table.section("Board");
        for site in 0..self.site_count() {
            if let Some(holder) = self.holder(site) {
                board.row(holder, format!("site {site}"), "held");
            }
        }
    }
}

//! What each seat sees: the same table for every seat and spectators (nothing is hidden): the round, whose
//! turn it is, and every player's score.

use crate::state::State;
use coffer_core::{Owner, Table};

/// The same table for every seat and spectators: nothing is hidden.
pub fn fill(state: &State, table: &mut Table) {
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

//! Who acts and the legal list: only the player whose turn it is, in the documented order (tactical by
//! ascending system, strategic, pass), the order [`plain::Game::legal`](crate::plain::Game::legal) follows.

use crate::actions::Action;
use crate::state::{Pool, State};
use coffer_core::Owner;

impl State {
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
}

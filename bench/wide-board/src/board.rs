//! The ruleset's questions about the whole board, each one kernel call over the board index (K4.8): the
//! systems without a player's token, a player's count on the board, and the round's return of every board
//! token. None looks a zone up one by one.

use crate::actions::Action;
use crate::state::{State, kind};
use coffer_core::{Cause, Owner, Refusal};

impl State {
    /// Appends a tactical action for every system that holds none of `player`'s tokens, by ascending
    /// system index (systems are created in index order, and the board index lists zones so).
    #[inline]
    pub(crate) fn open_systems(&self, player: Owner, out: &mut Vec<Action>) {
        let first = self.h.systems.first().map_or(0, |z| z.index());
        self.ledger
            .zones_without(player, kind::SYSTEM)
            .extend_into(out, |zone| Action::Tactical {
                system: (zone.index() - first) as u16,
            });
    }

    /// `player`'s tokens on the board: the systems they hold (one token per system at most).
    pub fn board_tokens(&self, player: Owner) -> u32 {
        self.ledger.tokens_in(player, kind::SYSTEM)
    }

    /// Returns every one of `player`'s board tokens to reinforcements in one kernel operation, and says
    /// how many there were (the systems they held).
    pub(crate) fn return_board_tokens(
        &mut self,
        player: Owner,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        self.ledger.return_tokens(player, kind::SYSTEM, cause)
    }
}

//! The ruleset's loops over every system of the board, kept together: each visits all systems with one
//! kernel look-up per zone. Kernel operations over an owner's zones ("an owner's zones without tokens",
//! "an owner's count across a class of zones", "return all of an owner's board tokens to the reserve")
//! would replace each body with one call; nothing else in the crate scans the board.

use crate::{Action, State};
use coffer_core::{Cause, Owner, Refusal};

impl State {
    /// Appends a tactical action for every system that holds none of `player`'s tokens, by ascending
    /// system index.
    ///
    /// Per-zone scan (one `Ledger::tokens` look-up per system): the hot loop of the legal-action list.
    /// Swap for the kernel's "`owner`'s zones without tokens" among the systems.
    #[inline]
    pub(crate) fn open_systems(&self, player: Owner, out: &mut Vec<Action>) {
        for (s, &zone) in self.h.systems.iter().enumerate() {
            if self.ledger.tokens(zone, player) == 0 {
                out.push(Action::Tactical { system: s as u16 });
            }
        }
    }

    /// `player`'s tokens on the board: the systems they hold (one token per system at most).
    ///
    /// Per-zone scan. Swap for the kernel's "`owner`'s count across a class of zones". Not on the hot
    /// path: the round's end counts what [`return_board_tokens`](Self::return_board_tokens) returns.
    pub fn board_tokens(&self, player: Owner) -> u32 {
        self.h
            .systems
            .iter()
            .map(|&zone| self.ledger.tokens(zone, player))
            .sum()
    }

    /// Returns every one of `player`'s board tokens to reinforcements, one `move_tokens` per system
    /// holding one, and says how many there were (the systems they held).
    ///
    /// Per-zone scan. Swap for the kernel's "return all of an owner's board tokens to the reserve".
    pub(crate) fn return_board_tokens(
        &mut self,
        player: Owner,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        let reinforcements = self.h.reinforcements;
        let mut returned = 0;
        for &zone in &self.h.systems {
            let n = self.ledger.tokens(zone, player);
            if n > 0 {
                self.ledger
                    .move_tokens(player, zone, reinforcements, n, cause)?;
                returned += n;
            }
        }
        Ok(returned)
    }
}

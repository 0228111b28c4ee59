//! Applying an action: the turn and the refusals, the action's moves on the ledger, the next turn, and
//! the round's end (scores, the return of board tokens, the next round or the game's end).

use crate::actions::Action;
use crate::state::{Pool, STRATEGIC_GAIN, State, kind};
use crate::words::{ROUND_END, note};
use coffer_core::{ActionError, Cause, Key, Owner, Scope};

impl State {
    /// Applies `player`'s action. Refusals come before any change of this state; a refusal of the
    /// kernel's (an empty pool, a used strategic action, a second token in a system) is rolled back by
    /// the adapter with everything the action did to the ledger.
    ///
    /// # Errors
    /// [`ActionError`] when the game is over, it is not `player`'s turn, or the action is not legal.
    #[inline]
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
        let cause = Cause::Action {
            player,
            code: action.code(),
        };
        match *action {
            Action::Tactical { system } => {
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
}

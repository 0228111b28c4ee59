//! What a player may do: the actions, the legal list and how an action applies (the rules).

use crate::state::{PURSE, State};
use coffer_core::{ActionError, Cause, Key, Outcome, Owner};
use serde::{Deserialize, Serialize};

/// A player's action, as JSON: `{"type":"take","coins":2}`, `{"type":"build"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Take one or two coins.
    Take {
        /// 1 or 2.
        coins: u8,
    },
    /// Pay three coins back to the bank for a mine.
    Build,
}

/// Action codes in [`Cause::Action`], indexing the vocabulary's actions.
pub const TAKE: u16 = 0;
/// See [`TAKE`].
pub const BUILD: u16 = 1;

/// The effect code of a mine's income ([`Cause::Effect`]), indexing the vocabulary's effects.
pub const MINE_INCOME: u16 = 0;

/// The code of this ruleset's own event "the turn passes", indexing the vocabulary's notes.
pub const NEXT_TURN: u16 = 0;

/// What a mine costs.
pub const MINE_COST: u32 = 3;

impl State {
    /// Every action `player` may take now, complete: each applies, and nothing else does.
    pub fn legal_actions(&self, player: Owner, out: &mut Vec<Action>) {
        if player.0 != self.turn || self.outcome() != Outcome::Ongoing {
            return;
        }
        if self.ledger.tokens(self.bank, Owner::GAME) > 0 {
            out.push(Action::Take { coins: 1 });
            out.push(Action::Take { coins: 2 });
        }
        // The kernel's read-only check of the payment `apply` makes (K8.2): no copy of its rule here.
        let purse = self.purse[player.index()];
        if self
            .ledger
            .can_move_tokens(Owner::GAME, purse, self.bank, MINE_COST)
            .is_ok()
        {
            out.push(Action::Build);
        }
    }

    /// Applies `player`'s action; validation comes first, kernel refusals are rolled back by the adapter.
    ///
    /// # Errors
    /// [`ActionError`] in the rules' words.
    pub fn apply(&mut self, player: Owner, action: &Action) -> Result<(), ActionError> {
        // Validate first: a refusal must leave the state exactly as it was.
        if self.outcome() != Outcome::Ongoing {
            return Err(ActionError::GameOver);
        }
        if player.0 != self.turn {
            return Err(ActionError::NotYourTurn {
                player,
                reason: format!("it is player {}'s turn", self.turn),
            });
        }
        let code = match action {
            Action::Take { .. } => TAKE,
            Action::Build => BUILD,
        };
        let cause = Cause::Action { player, code };
        let purse = self.purse[player.index()];
        match action {
            Action::Take { .. } if self.ledger.tokens(self.bank, Owner::GAME) == 0 => {
                return Err(ActionError::Illegal("the bank is empty".into()));
            }
            Action::Take {
                coins: coins @ 1..=2,
            } => {
                // A draw from the bank: fewer if it holds fewer (reported in the event, K4.2).
                self.ledger
                    .gain_tokens(Owner::GAME, purse, u32::from(*coins), cause)?;
            }
            Action::Take { coins } => {
                return Err(ActionError::Illegal(format!("take {coins}: take 1 or 2")));
            }
            Action::Build => {
                // The kernel refuses a payment that is short; the adapter rolls back the whole action then.
                self.ledger
                    .move_tokens(Owner::GAME, purse, self.bank, MINE_COST, cause)?;
                self.ledger.gain(self.mines[player.index()], 1, cause)?;
            }
        }
        // The next player's turn starts with their mines' income, from the bank.
        self.turn = (self.turn + 1) % self.ledger.owners();
        let next = Owner(self.turn);
        // A ruleset's own event: the turn is the ruleset's state, not the ledger's.
        self.ledger
            .note(Key::new(next, PURSE, 0), NEXT_TURN, [0; 3], cause);
        let income = self.ledger.value(self.mines[next.index()]);
        if income > 0 && self.outcome() == Outcome::Ongoing {
            self.ledger.gain_tokens(
                Owner::GAME,
                self.purse[next.index()],
                u32::try_from(income).unwrap_or(u32::MAX),
                Cause::Effect(MINE_INCOME),
            )?;
        }
        Ok(())
    }
}

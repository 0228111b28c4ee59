//! Why an action is refused: a small `Copy` enum (cheap to build while the legal list tries candidates),
//! written in words only when an action is actually refused.

use crate::rules::coins::MINE_COST;
use crate::state::State;
use coffer_core::{ActionError, Owner};

/// Why an action is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The game is over.
    GameOver,
    /// It is another player's turn.
    NotYourTurn,
    /// The bank holds no coin to take.
    BankEmpty,
    /// A take of other than 1 or 2 coins.
    Coins(u8),
    /// The purse cannot pay for a mine.
    CannotPay,
}

impl Why {
    /// The refusal of `player`'s action in `s`, in words.
    pub fn error(self, s: &State, player: Owner) -> ActionError {
        match self {
            Why::GameOver => ActionError::GameOver,
            Why::NotYourTurn => ActionError::NotYourTurn {
                player,
                reason: format!("it is player {}'s turn", s.turn),
            },
            Why::BankEmpty => ActionError::Illegal("the bank is empty".into()),
            Why::Coins(coins) => ActionError::Illegal(format!("take {coins}: take 1 or 2")),
            // The kernel's own words for the payment it refuses (K8.2).
            Why::CannotPay => {
                let purse = s.purse[player.index()];
                match s
                    .ledger
                    .can_move_tokens(Owner::GAME, purse, s.bank, MINE_COST)
                {
                    Err(refusal) => ActionError::from(refusal),
                    Ok(_) => ActionError::Illegal("a mine cannot be paid now".into()),
                }
            }
        }
    }
}

//! One check per action, shared by `apply` and the legal list: the rules written once.

use crate::actions::Action;
use crate::refusals::Why;
use crate::rules::coins::MINE_COST;
use crate::state::State;
use coffer_core::Owner;

/// Checks `player`'s action without changing anything: `Ok` exactly when `apply` applies it.
///
/// # Errors
/// [`Why`] it is refused.
pub fn validate(s: &State, player: Owner, action: &Action) -> Result<(), Why> {
    if s.is_over() {
        return Err(Why::GameOver);
    }
    if player.0 != s.turn {
        return Err(Why::NotYourTurn);
    }
    match action {
        Action::Take { .. } if s.ledger.tokens(s.bank, Owner::GAME) == 0 => Err(Why::BankEmpty),
        Action::Take { coins: 1..=2 } => Ok(()),
        Action::Take { coins } => Err(Why::Coins(*coins)),
        // The kernel's read-only check of the payment `apply` makes (K8.2): no copy of its rule here.
        Action::Build => s
            .ledger
            .can_move_tokens(Owner::GAME, s.purse[player.index()], s.bank, MINE_COST)
            .map(|_| ())
            .map_err(|_| Why::CannotPay),
    }
}

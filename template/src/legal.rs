//! The legal list: every candidate action, kept when [`validate`] accepts it. (Who acts is the default:
//! the players whose list is not empty; a ruleset with many players overrides `to_act`.)

use crate::actions::Action;
use crate::state::State;
use crate::validate::validate;
use coffer_core::Owner;

/// Every action `player` may take now, complete: each applies, and nothing else does.
pub fn legal_actions(s: &State, player: Owner, out: &mut Vec<Action>) {
    for action in [
        Action::Take { coins: 1 },
        Action::Take { coins: 2 },
        Action::Build,
    ] {
        if validate(s, player, &action).is_ok() {
            out.push(action);
        }
    }
}

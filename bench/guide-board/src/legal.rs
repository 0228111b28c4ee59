//! Who acts (`to_act`: the player whose turn it is) and the legal list: candidates kept when [`validate`]
//! accepts them, in the order the crate docs give.

use crate::actions::Action;
use crate::rules::sites::neighbours;
use crate::state::{SITE, State};
use crate::validate::validate;
use coffer_core::Owner;

/// The player whose turn it is, until the game is over.
pub fn to_act(s: &State, out: &mut Vec<Owner>) {
    out.extend(s.active());
}

/// Every action `player` may take now, complete: each applies, and nothing else does. Places by site,
/// then shifts by (from, to), then harvest, then pass.
pub fn legal_actions(s: &State, player: Owner, out: &mut Vec<Action>) {
    let mut keep = |action: Action| {
        if validate(s, player, &action).is_ok() {
            out.push(action);
        }
    };
    for site in 0..s.site_count() {
        keep(Action::Place { site });
    }
    // Shifts start from the sites holding the player's tokens: the board index lists them (K4.8).
    let zones = s.ledger.zones();
    for zone in s.ledger.zones_holding_in(player, SITE) {
        let from = zones[zone.index()].key.subject as u16;
        for to in neighbours(from, s.site_count()) {
            keep(Action::Shift { from, to });
        }
    }
    keep(Action::Harvest);
    keep(Action::Pass);
}

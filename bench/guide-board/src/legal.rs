//! Who acts (`to_act`: the player whose turn it is) and the legal list, in the order the crate docs give,
//! written as the guide teaches a list of many candidates: what holds for every candidate (the turn,
//! the energy, a token left in reinforcements) is checked once with the checks `validate` uses, and the
//! board index answers which sites are open (K4.8), instead of validating each candidate in turn.
//! `tests/it/rules.rs` keeps the list and `validate` in step: every listed action validates, and every
//! action `validate` accepts is listed.

use crate::actions::Action;
use crate::rules::sites::neighbours;
use crate::state::{SITE, State};
use crate::validate::{check_energy, check_turn};
use coffer_core::Owner;

/// The player whose turn it is, until the game is over.
pub fn to_act(s: &State, out: &mut Vec<Owner>) {
    out.extend(s.active());
}

/// Every action `player` may take now, complete: each applies, and nothing else does. Places by site,
/// then shifts by (from, to), then harvest, then pass.
pub fn legal_actions(s: &State, player: Owner, out: &mut Vec<Action>) {
    if check_turn(s, player).is_err() {
        return;
    }
    let (l, p) = (&s.ledger, player.index());
    let zones = l.zones();
    let site = |zone: coffer_core::ZoneId| zones[zone.index()].key.subject as u16;
    if check_energy(s, player).is_ok() {
        // A token left in reinforcements: the same check for every site (they share one supply).
        if l.can_move_tokens(player, s.reinforcements[p], s.sites[0], 1)
            .is_ok()
        {
            l.zones_open_to(player, SITE)
                .extend_into(out, |zone| Action::Place { site: site(zone) });
        }
        for zone in l.zones_holding_in(player, SITE) {
            let from = site(zone);
            for to in neighbours(from, s.site_count()) {
                if l.is_open_to(s.sites[usize::from(to)], player) {
                    out.push(Action::Shift { from, to });
                }
            }
        }
    }
    if l.can_exhaust(s.harvest[p]).is_ok() {
        out.push(Action::Harvest);
    }
    out.push(Action::Pass);
}

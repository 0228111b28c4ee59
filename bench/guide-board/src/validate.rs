//! One check per action, shared by `apply` and the legal list: the rules written once, with the kernel's
//! read-only checks (K8.2) for what the kernel pays.

use crate::actions::Action;
use crate::refusals::Why;
use crate::rules::sites::are_neighbours;
use crate::state::State;
use coffer_core::Owner;

/// Checks `player`'s action without changing anything: `Ok` exactly when `apply` applies it.
///
/// # Errors
/// [`Why`] it is refused.
pub fn validate(s: &State, player: Owner, action: &Action) -> Result<(), Why> {
    check_turn(s, player)?;
    match *action {
        Action::Place { site } => {
            check_site(s, site)?;
            check_open(s, player, site)?;
            check_energy(s, player)?;
            // The kernel's read-only check of the move `apply` makes: a token left in reinforcements.
            s.ledger
                .can_move_tokens(
                    player,
                    s.reinforcements[player.index()],
                    s.sites[usize::from(site)],
                    1,
                )
                .map(|_| ())
                .map_err(|_| Why::NoReinforcements(site))
        }
        Action::Shift { from, to } => {
            check_site(s, from)?;
            check_site(s, to)?;
            if !are_neighbours(from, to, s.site_count()) {
                return Err(Why::NotNeighbours { from, to });
            }
            check_open(s, player, to)?;
            check_energy(s, player)?;
            s.ledger
                .can_move_tokens(
                    player,
                    s.sites[usize::from(from)],
                    s.sites[usize::from(to)],
                    1,
                )
                .map(|_| ())
                .map_err(|_| Why::NotYours(from))
        }
        Action::Harvest => s
            .ledger
            .can_exhaust(s.harvest[player.index()])
            .map_err(|_| Why::Harvested),
        Action::Pass => Ok(()),
    }
}

/// A game still on, and `player`'s turn.
pub(crate) fn check_turn(s: &State, player: Owner) -> Result<(), Why> {
    if s.is_over() {
        return Err(Why::GameOver);
    }
    if player.0 != s.active {
        return Err(Why::NotYourTurn);
    }
    Ok(())
}

/// A site of the board.
fn check_site(s: &State, site: u16) -> Result<(), Why> {
    if site < s.site_count() {
        Ok(())
    } else {
        Err(Why::NoSuchSite(site))
    }
}

/// A site that is empty or already `player`'s (K4.8).
fn check_open(s: &State, player: Owner, site: u16) -> Result<(), Why> {
    if s.ledger.is_open_to(s.sites[usize::from(site)], player) {
        return Ok(());
    }
    // Not open to `player`: another player holds it (a site only ever holds one player's tokens).
    let holder = s.holder(site).unwrap_or(player);
    Err(Why::HeldByAnother { site, holder })
}

/// One energy to pay (the kernel's read-only check of the spend `apply` makes).
pub(crate) fn check_energy(s: &State, player: Owner) -> Result<(), Why> {
    s.ledger
        .can_spend(s.energy[player.index()], 1)
        .map_err(|_| Why::NoEnergy)
}

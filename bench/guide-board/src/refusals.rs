//! Why an action is refused: a small `Copy` enum (cheap to build while the legal list tries candidates),
//! written in words only when an action is actually refused.

use crate::state::State;
use coffer_core::{ActionError, Owner};

/// Why an action is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The game is over.
    GameOver,
    /// It is another player's turn.
    NotYourTurn,
    /// No site has this number.
    NoSuchSite(u16),
    /// The site is held by another player.
    HeldByAnother {
        /// The site.
        site: u16,
        /// Who holds it.
        holder: Owner,
    },
    /// A shift between sites that are not neighbours on the ring.
    NotNeighbours {
        /// The site the token would leave.
        from: u16,
        /// The site it would go to.
        to: u16,
    },
    /// A shift from a site holding none of the player's tokens.
    NotYours(u16),
    /// The energy pool is empty (the kernel's words).
    NoEnergy,
    /// Reinforcements are empty (the kernel's words).
    NoReinforcements(u16),
    /// The harvest was used this round.
    Harvested,
}

impl Why {
    /// The refusal of `player`'s action in `s`, in words.
    pub fn error(self, s: &State, player: Owner) -> ActionError {
        match self {
            Why::GameOver => ActionError::GameOver,
            Why::NotYourTurn => ActionError::NotYourTurn {
                player,
                reason: format!("it is {}'s turn", Owner(s.active)),
            },
            Why::NoSuchSite(site) => ActionError::Illegal(format!(
                "site {site}: the board has sites 0 to {}",
                s.site_count() - 1
            )),
            Why::HeldByAnother { site, holder } => {
                ActionError::Illegal(format!("site {site} is held by {holder}"))
            }
            Why::NotNeighbours { from, to } => ActionError::Illegal(format!(
                "site {to} is not a neighbour of site {from}: a shift moves one site round the ring"
            )),
            Why::NotYours(site) => {
                ActionError::Illegal(format!("{player} holds no token on site {site}"))
            }
            // The kernel's own words for what it refuses (K8.2).
            Why::NoEnergy => match s.ledger.can_spend(s.energy[player.index()], 1) {
                Err(refusal) => ActionError::from(refusal),
                Ok(()) => ActionError::Illegal("no energy left this round".into()),
            },
            Why::NoReinforcements(site) => match s.ledger.can_move_tokens(
                player,
                s.reinforcements[player.index()],
                s.sites[usize::from(site)],
                1,
            ) {
                Err(refusal) => ActionError::from(refusal),
                Ok(_) => ActionError::Illegal("no token left in reinforcements".into()),
            },
            // The kernel's words, with the vocabulary's for the harvest's state ("is used up this round").
            Why::Harvested => match s.ledger.can_exhaust(s.harvest[player.index()]) {
                Err(refusal) => ActionError::from(refusal),
                Ok(()) => ActionError::Illegal(format!("{player}'s harvest is ready")),
            },
        }
    }
}

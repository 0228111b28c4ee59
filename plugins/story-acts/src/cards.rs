//! Where cards are: Bands (S15) and zones, card instances, and the slots of their kernel handles.

use coffer_core::{AmountId, Owner, PermanentId, TrackId};
use serde::{Deserialize, Serialize};
use std::fmt;

/// A Band (S15): the shared Space Band, or a player's Surface or Planetary Band.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Band {
    /// The shared Space Band.
    Space,
    /// A player's Surface Band.
    Surface(u16),
    /// A player's Planetary Band.
    Planetary(u16),
}

impl fmt::Display for Band {
    /// "the Space Band", "p1's Surface Band", "p0's Planetary Band".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Band::Space => f.write_str("the Space Band"),
            Band::Surface(p) => write!(f, "p{p}'s Surface Band"),
            Band::Planetary(p) => write!(f, "p{p}'s Planetary Band"),
        }
    }
}

impl Band {
    /// The player whose Band it is (none for Space).
    pub fn player(self) -> Option<Owner> {
        match self {
            Band::Space => None,
            Band::Surface(p) | Band::Planetary(p) => Some(Owner(p)),
        }
    }
}

/// Where a card is.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Zone {
    /// In its owner's deck.
    Deck,
    /// In its owner's hand.
    Hand,
    /// In play.
    Play,
    /// In the discard pile (played Maneuvers, completed Storylines, destroyed cards).
    Discard,
}

/// Where a card's kernel handle is kept: an index into one of the [`Handles`] tables, or none. Two bytes
/// instead of the eight of an `Option` of a handle, for each of a card's three handles: a game holds every
/// card of every deck from setup on, and most of them are idle.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(into = "Option<u16>", try_from = "Option<u16>")]
pub struct Slot(u16);

impl Slot {
    /// No handle.
    pub const NONE: Slot = Slot(u16::MAX);

    /// Whether the card has this handle.
    #[inline]
    pub fn is_some(self) -> bool {
        self != Slot::NONE
    }

    /// The handle in `table` (none for [`Slot::NONE`] or an index past the table's end).
    #[inline]
    pub fn get<T: Copy>(self, table: &[T]) -> Option<T> {
        table.get(usize::from(self.0)).copied()
    }

    /// The slot of a handle about to be pushed to `table`.
    fn next<T>(table: &[T]) -> Result<Slot, SlotError> {
        u16::try_from(table.len())
            .ok()
            .filter(|&i| i != u16::MAX)
            .map(Slot)
            .ok_or(SlotError(table.len()))
    }
}

/// A slot index too large for a [`Slot`] (`u16::MAX` means none).
#[derive(Clone, Copy, PartialEq, Eq, Debug, thiserror::Error)]
#[error("handle slot {0} out of range: at most 65534")]
#[non_exhaustive]
pub struct SlotError(pub usize);

impl From<Slot> for Option<u16> {
    fn from(s: Slot) -> Option<u16> {
        s.is_some().then_some(s.0)
    }
}

impl TryFrom<Option<u16>> for Slot {
    type Error = SlotError;
    fn try_from(v: Option<u16>) -> Result<Slot, SlotError> {
        match v {
            None => Ok(Slot::NONE),
            Some(u16::MAX) => Err(SlotError(usize::from(u16::MAX))),
            Some(i) => Ok(Slot(i)),
        }
    }
}

/// The kernel handles of the cards' own resources, each table in card order; a [`Card`] names its handles by
/// [`Slot`].
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Handles {
    /// Readiness permanents (K5).
    pub perms: Vec<PermanentId>,
    /// Character Points amounts (S8).
    pub cps: Vec<AmountId>,
    /// "-X CP:" ability tracks (S8).
    pub abilities: Vec<TrackId>,
}

impl Handles {
    /// Empty tables with room for exactly the given numbers of handles.
    pub fn with_capacity(perms: usize, cps: usize, abilities: usize) -> Handles {
        Handles {
            perms: Vec::with_capacity(perms),
            cps: Vec::with_capacity(cps),
            abilities: Vec::with_capacity(abilities),
        }
    }

    /// A card's readiness permanent.
    #[inline]
    pub fn perm(&self, c: &Card) -> Option<PermanentId> {
        c.perm.get(&self.perms)
    }

    /// A card's CP amount.
    #[inline]
    pub fn cp(&self, c: &Card) -> Option<AmountId> {
        c.cp.get(&self.cps)
    }

    /// A card's ability track.
    #[inline]
    pub fn ability(&self, c: &Card) -> Option<TrackId> {
        c.ability.get(&self.abilities)
    }

    /// Keeps a new readiness permanent; its slot.
    pub fn push_perm(&mut self, id: PermanentId) -> Result<Slot, SlotError> {
        let slot = Slot::next(&self.perms)?;
        self.perms.push(id);
        Ok(slot)
    }

    /// Keeps a new CP amount; its slot.
    pub fn push_cp(&mut self, id: AmountId) -> Result<Slot, SlotError> {
        let slot = Slot::next(&self.cps)?;
        self.cps.push(id);
        Ok(slot)
    }

    /// Keeps a new ability track; its slot.
    pub fn push_ability(&mut self, id: TrackId) -> Result<Slot, SlotError> {
        let slot = Slot::next(&self.abilities)?;
        self.abilities.push(id);
        Ok(slot)
    }

    /// Whether every slot of `c` is none or names a handle here.
    pub fn holds(&self, c: &Card) -> bool {
        (!c.perm.is_some() || self.perm(c).is_some())
            && (!c.cp.is_some() || self.cp(c).is_some())
            && (!c.ability.is_some() || self.ability(c).is_some())
    }
}

/// One physical card of the game (22 bytes: a game keeps one per card of every deck).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Card {
    /// Its definition number.
    pub def: u16,
    /// Who owns it.
    pub owner: u16,
    /// Who controls it (differs from the owner for a captured Surface Location).
    pub controller: u16,
    /// Where it is.
    pub zone: Zone,
    /// Its Band while in play (units and Locations).
    pub band: Option<Band>,
    /// Its readiness (K5), for permanents: a slot of [`Handles::perms`].
    pub perm: Slot,
    /// Its CP (S8), for cards with printed CP: a slot of [`Handles::cps`].
    pub cp: Slot,
    /// Its "-X CP:" ability's once-per-turn use (a 1-charge track recovering at each turn's end): a slot of
    /// [`Handles::abilities`].
    pub ability: Slot,
    /// Storyline progress.
    pub progress: u16,
    /// A captured Surface Location not yet Restored (S14).
    pub contested: bool,
    /// A Prime Character that has Fallen.
    pub fallen: bool,
    /// Its last activation committed its Votes (S5): it then leaves standing Vote until it readies.
    pub committed: bool,
}

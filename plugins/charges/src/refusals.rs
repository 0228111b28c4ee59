//! Why an action is refused: [`Why`], a `Copy` enum of the reasons and the values they name, and its
//! words, naming ships and cards as the rulebook does.

use crate::actions::{ChargeRef, MAX_EFFECT_DAMAGE};
use crate::state::{Phase, State};
use crate::turn::{Turn, turn};
use coffer_core::{ActionError, Owner};

/// Why an action is refused: the reason and the values it names, without formatting, so that
/// validation (also run for every candidate of a legal-action list) allocates nothing.
/// [`Why::error`] writes it in words when an action is actually refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The rules forbid it now, for this reason.
    Illegal(&'static str),
    /// It is another player's to take, for this reason.
    NotYours(&'static str),
    /// The player is not in the game.
    NoSuchPlayer,
    /// No ship with this number.
    NoSuchShip(u8),
    /// The ship is destroyed.
    Destroyed(u8),
    /// The ship belongs to another player.
    NotYourShip(u8),
    /// The ship does not have the turn.
    NotItsTurn(u8),
    /// It is done only in `phase`; `what` says what ("maneuvers are executed").
    WrongPhase {
        /// What is done then.
        what: &'static str,
        /// When.
        phase: Phase,
    },
    /// Something about the ship: "{ship} {what}".
    Ship(u8, &'static str),
    /// No card with this number on the ship.
    NoSuchCard {
        /// The ship.
        ship: u8,
        /// The card asked for.
        card: u8,
    },
    /// Something about a card on a ship: "{card} on {ship} {what}".
    Card {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// What is wrong.
        what: &'static str,
    },
    /// A card with too few active charges for its ability (C3).
    CardCharges {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// Its active charges.
        active: u32,
        /// The ability's cost.
        cost: u8,
    },
    /// A ship with too little active Force for a card's ability paid with the Force (C14).
    ForceCost {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// The ship's active Force.
        active: u32,
        /// The ability's cost.
        cost: u8,
    },
    /// A huge ship with too little active energy for a card's ability paid with energy (C20).
    EnergyCost {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// The ship's active energy.
        active: u32,
        /// The ability's cost.
        cost: u8,
    },
    /// The ship has none of these charges.
    NoCharges(u8, ChargeRef),
    /// Something about a ship's charges: "{charges} {what}".
    Charges(u8, ChargeRef, &'static str),
    /// A friendly ship as the target of an attack.
    FriendlyTarget(u8),
    /// More dice results than dice.
    TooManyResults {
        /// Results given.
        results: u16,
        /// Dice rolled.
        dice: u8,
        /// Defence dice rather than attack dice.
        defence: bool,
    },
    /// An effect's damage out of its range.
    EffectDamage {
        /// Hits given.
        hits: u8,
        /// Crits given.
        crits: u8,
    },
}

impl Why {
    /// Whether the action is another player's to take (rather than forbidden to everyone now).
    pub fn theirs(self) -> bool {
        matches!(
            self,
            Why::NotYours(_) | Why::NoSuchPlayer | Why::NotYourShip(_) | Why::NotItsTurn(_)
        )
    }

    /// The refusal of `p`'s action in `s`, in words.
    pub fn error(self, s: &State, p: Owner) -> ActionError {
        let reason = self.text(s, p);
        if self.theirs() {
            ActionError::NotYourTurn { player: p, reason }
        } else {
            ActionError::Illegal(reason)
        }
    }

    /// The reason in words, naming ships and cards as the rulebook does.
    pub fn text(self, s: &State, p: Owner) -> String {
        let ship = |i: u8| ship_name(s, usize::from(i));
        match self {
            Why::Illegal(why) | Why::NotYours(why) => why.to_owned(),
            Why::NoSuchPlayer => format!(
                "{p} is not in this game: it has players p0-p{}",
                s.done.len().saturating_sub(1)
            ),
            Why::NoSuchShip(i) => format!(
                "ship {i} does not exist: this game has ships 0-{}",
                s.ships.len().saturating_sub(1)
            ),
            Why::Destroyed(i) => format!("{} is destroyed", ship(i)),
            Why::NotYourShip(i) => format!("{} is not {p}'s ship", ship(i)),
            Why::NotItsTurn(i) => match turn(s) {
                Turn::Ship(j) => {
                    format!("it is the turn of {}, not of {}", ship_name(s, j), ship(i))
                }
                Turn::Attacker(_) | Turn::Defender(_) => match s.attack {
                    Some(at) => format!(
                        "{} must wait: the attack of {} on {} is being resolved",
                        ship(i),
                        ship(at.attacker),
                        ship(at.defender)
                    ),
                    None => format!("{} does not have the turn", ship(i)),
                },
                _ => format!("{} does not have the turn", ship(i)),
            },
            Why::WrongPhase { what, phase } => format!(
                "{what} in the {}; this is the {}",
                phase.name(),
                s.phase().name()
            ),
            Why::Ship(i, what) => format!("{} {what}", ship(i)),
            Why::NoSuchCard { ship: i, card } => {
                let cards = s.ships.get(usize::from(i)).map_or(1, |sh| sh.cards.len());
                if cards <= 1 {
                    format!(
                        "{} has no card {card}: its only card is 0, the pilot card",
                        ship(i)
                    )
                } else {
                    format!(
                        "{} has no card {card}: its cards are 0-{} (0 is the pilot card)",
                        ship(i),
                        cards - 1
                    )
                }
            }
            Why::Card {
                ship: i,
                card,
                what,
            } => format!("{} {what}", card_on(s, i, card)),
            Why::CardCharges {
                ship: i,
                card,
                active,
                cost,
            } => format!(
                "{} has {active} active {}; its ability costs {cost} (C3)",
                card_on(s, i, card),
                plural(active, "charge", "charges")
            ),
            Why::ForceCost {
                ship: i,
                card,
                active,
                cost,
            } => format!(
                "{} has {active} active Force; the ability of {} costs {cost} Force (C14)",
                ship(i),
                card_on(s, i, card)
            ),
            Why::EnergyCost {
                ship: i,
                card,
                active,
                cost,
            } => format!(
                "{} has {active} active energy; the ability of {} costs {cost} energy, spent from the ship card (C20)",
                ship(i),
                card_on(s, i, card)
            ),
            Why::NoCharges(i, r) => match r {
                ChargeRef::Force => format!("{} has no Force", ship(i)),
                ChargeRef::Shield => format!("{} has no shields", ship(i)),
                ChargeRef::Energy => format!("{} has no energy", ship(i)),
                ChargeRef::Card(c) => {
                    let cards = s.ships.get(usize::from(i)).map_or(0, |sh| sh.cards.len());
                    if usize::from(c) < cards {
                        format!("{} has no charges", card_on(s, i, c))
                    } else {
                        Why::NoSuchCard { ship: i, card: c }.text(s, p)
                    }
                }
            },
            Why::Charges(i, r, what) => {
                let charges = match r {
                    ChargeRef::Force => "Force".to_owned(),
                    ChargeRef::Shield => "shields".to_owned(),
                    ChargeRef::Energy => "energy".to_owned(),
                    ChargeRef::Card(0) => "charges".to_owned(),
                    ChargeRef::Card(c) => format!("{} charges", card_name(s, i, c)),
                };
                format!("{} {charges} {what}", ship(i))
            }
            Why::FriendlyTarget(i) => {
                format!("{} is friendly: an attack targets an enemy ship", ship(i))
            }
            Why::TooManyResults {
                results,
                dice,
                defence,
            } => format!(
                "{results} results for {dice} {} dice: give at most {dice}",
                if defence { "defence" } else { "attack" }
            ),
            Why::EffectDamage { hits, crits } => format!(
                "{hits} {} and {crits} {}: an effect deals 0-{MAX_EFFECT_DAMAGE} hits and 0-{MAX_EFFECT_DAMAGE} crits, at least one in all",
                plural(u32::from(hits), "hit", "hits"),
                plural(u32::from(crits), "crit", "crits")
            ),
        }
    }
}

/// A ship with its owner, for texts: "p0's Luke Skywalker" (or "ship 7" for a number past the ships).
pub fn ship_name(s: &State, i: usize) -> String {
    match s.ships.get(i) {
        Some(sh) => format!("{}'s {}", sh.owner, sh.name),
        None => format!("ship {i}"),
    }
}

/// A card's printed name ("card 3" past the ship's cards).
fn card_name(s: &State, ship: u8, card: u8) -> String {
    s.ships
        .get(usize::from(ship))
        .and_then(|sh| sh.card_names.get(usize::from(card)))
        .map_or_else(|| format!("card {card}"), Clone::clone)
}

/// A card with its ship, for texts: "Proton Torpedoes on p0's Luke Skywalker", "the pilot card of p0's
/// Luke Skywalker".
fn card_on(s: &State, ship: u8, card: u8) -> String {
    if card == 0 {
        format!("the pilot card of {}", ship_name(s, usize::from(ship)))
    } else {
        format!(
            "{} on {}",
            card_name(s, ship, card),
            ship_name(s, usize::from(ship))
        )
    }
}

/// `one` or `many` after a count of `n`.
fn plural(n: u32, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// The rules forbid it now, for this reason.
pub(crate) fn illegal(reason: &'static str) -> Why {
    Why::Illegal(reason)
}

/// It is another player's to take, for this reason.
pub(crate) fn not_yours(reason: &'static str) -> Why {
    Why::NotYours(reason)
}

//! Cards' abilities: when one may be used and what it costs (C3, C14, C20), using it, and a device that
//! could not be placed (C16).

use crate::content::Color;
use crate::content::{Ability, Effect, Pays, Slot, Timing};
use crate::refusals::Why;
use crate::rules::activation::{action_available, after_action, left_to_perform};
use crate::rules::ships::{ship_key, ship_ok, stressed};
use crate::state::{Card, CardKind, Device, Ship, State};
use crate::words::note;
use coffer_core::{ActionError, Cause, Owner, Part, Refusal};

/// [`validate`](crate::validate::validate) of [`Action::DeviceNotPlaced`]: `p`'s ship just placed the device of `card`, and
/// nothing else happened since (C16).
pub(crate) fn check_device_not_placed(s: &State, p: Owner, ship: u8, card: u8) -> Result<(), Why> {
    let i = ship_ok(s, ship)?;
    let sh = &s.ships[i];
    if sh.owner != p {
        return Err(Why::NotYourShip(ship));
    }
    let c = sh
        .cards
        .get(usize::from(card))
        .ok_or(Why::NoSuchCard { ship, card })?;
    if c.kind != CardKind::Upgrade(Slot::Device) {
        return Err(Why::Card {
            ship,
            card,
            what: "is not a device upgrade: only a device that could not be placed is reversed (C16)",
        });
    }
    let dropped = s.ledger.is_exhausted(c.used);
    match sh.stage.device {
        Device::JustPlaced if dropped => {}
        Device::JustPlaced => {
            return Err(Why::Card {
                ship,
                card,
                what: "is not the device the ship just placed (C16)",
            });
        }
        Device::Placed if dropped => {
            return Err(Why::Card {
                ship,
                card,
                what: "was placed before the last action: play is reversed only right after the device is dropped, before anything else happens (C16)",
            });
        }
        Device::Placed | Device::Free => {
            return Err(Why::Card {
                ship,
                card,
                what: "was not just placed: there is no drop to reverse (C16)",
            });
        }
    }
    match c.ability {
        Some(ab) if ab.timing == Timing::System && ab.effect == Effect::None => Ok(()),
        _ => Err(Why::Card {
            ship,
            card,
            what: "has an effect beyond placing its device: only a plain drop is reversed (C16)",
        }),
    }
}

/// The part of [`validate`](crate::validate::validate) for using ability `ab` of card `card` (`c`) of ship `i` once the timing's
/// turn and phase hold: the ship's progress in its activation, the ability unused this round, its cost
/// payable (C3) and its effect able to resolve.
pub(crate) fn ability_usable(
    s: &State,
    i: usize,
    card: u8,
    c: &Card,
    ab: Ability,
) -> Result<(), Why> {
    let sh = &s.ships[i];
    let ship = i as u8;
    if c.kind == CardKind::Upgrade(Slot::Device) && sh.stage.device.placed() {
        return Err(Why::Ship(
            ship,
            "has already placed a device this System Phase: a ship places one per System Phase (C16)",
        ));
    }
    match ab.timing {
        Timing::Reveal if sh.stage.executed => {
            return Err(Why::Ship(
                ship,
                "has already revealed its dial: this ability comes before the maneuver",
            ));
        }
        Timing::Action => action_available(s, i)?,
        Timing::AfterAction if !sh.stage.acted || sh.stage.bonus => {
            return Err(Why::Card {
                ship,
                card,
                what: "is used only right after the ship performs its action",
            });
        }
        _ => {}
    }
    // K8.2: the cost `apply` pays, checked by the kernel: the card unused this round, its charges (C3),
    // and a shield to recover when that is the effect.
    let (parts, n) = ability_cost(c, ab, sh);
    if let Err(refused) = s.ledger.check_cost(&parts[..n]) {
        return Err(match refused {
            Refusal::InsufficientCharges { active, .. } if ab.pays == Pays::Force => {
                Why::ForceCost {
                    ship,
                    card,
                    active,
                    cost: ab.cost,
                }
            }
            Refusal::InsufficientCharges { active, .. } if ab.pays == Pays::Energy => {
                Why::EnergyCost {
                    ship,
                    card,
                    active,
                    cost: ab.cost,
                }
            }
            Refusal::InsufficientCharges { active, .. } => Why::CardCharges {
                ship,
                card,
                active,
                cost: ab.cost,
            },
            Refusal::Unrecoverable { .. } => Why::Ship(ship, "cannot recover its shields"),
            Refusal::NothingToRecover { .. } => Why::Ship(
                ship,
                "has every shield active: the ability cannot resolve, so its cost cannot be paid (C3)",
            ),
            _ => Why::Card {
                ship,
                card,
                what: "was already used this round",
            },
        });
    }
    match ab.effect {
        Effect::RecoverShield if sh.shields.is_none() => Err(Why::Ship(
            ship,
            "has every shield active: the ability cannot resolve, so its cost cannot be paid (C3)",
        )),
        Effect::RepairFacedown if s.ledger.value(sh.facedown) == 0 => Err(Why::Ship(
            ship,
            "has no facedown damage card to repair: the ability's cost cannot be paid (C3)",
        )),
        Effect::AnotherAction if stressed(s, i) => Err(Why::Ship(
            ship,
            "is stressed: a stressed ship cannot perform actions, so the ability cannot resolve (C15)",
        )),
        Effect::AnotherAction if !left_to_perform(sh, |_| true) => Err(Why::Ship(
            ship,
            "has performed every action of its bar this round: the ability cannot resolve (C17)",
        )),
        Effect::ExtraAction if stressed(s, i) || !left_to_perform(sh, |c| c == Color::White) => {
            Err(Why::Ship(
                ship,
                "has no white action left to perform as red: it is stressed, or its bar has none it has not performed this round (C17)",
            ))
        }
        _ => Ok(()),
    }
}

/// An ability's cost as kernel parts: the first `.1` of the array.
pub(crate) type Cost = ([Part<'static>; 3], usize);

/// The cost of using ability `ab` of card `c` on ship `sh`, as kernel parts (the first `n`): the card
/// exhausted for the round, its charges or the ship's Force (C14), and a shield recovered when that is the
/// effect. [`validate`](crate::validate::validate) checks it with `check_cost`; `apply` pays it with `pay_cost`, so both read the same
/// parts.
pub(crate) fn ability_cost(c: &Card, ab: Ability, sh: &Ship) -> Cost {
    let mut parts = [Part::Exhaust(c.used); 3];
    let mut n = 1;
    let paid_from = match ab.pays {
        Pays::Charges => c.track,
        Pays::Force => sh.force,
        Pays::Energy => sh.energy,
    };
    if let Some(t) = paid_from {
        parts[n] = Part::Charges(t, u32::from(ab.cost));
        n += 1;
    }
    if let (Effect::RecoverShield, Some(t)) = (ab.effect, sh.shields) {
        parts[n] = Part::Recover(t, 1);
        n += 1;
    }
    (parts, n)
}

/// Ship `ship`'s card `card`, its ability and that ability's cost ([`ability_cost`]), for an action
/// [`validate`](crate::validate::validate) accepted.
pub(crate) fn card_ability(
    s: &State,
    p: Owner,
    ship: u8,
    card: u8,
) -> Result<(usize, Card, Ability, Cost), ActionError> {
    let i = usize::from(ship);
    let cd = s.ships[i].cards[usize::from(card)];
    match cd.ability {
        Some(ab) => Ok((i, cd, ab, ability_cost(&cd, ab, &s.ships[i]))),
        None => Err(Why::Card {
            ship,
            card,
            what: "has no ability",
        }
        .error(s, p)),
    }
}

/// Uses the ability of ship `ship`'s card `card`: pays its cost whole (K8), then its effect; a device
/// upgrade's ability places its device (C16).
pub(crate) fn use_ability(
    s: &mut State,
    p: Owner,
    ship: u8,
    card: u8,
    c: Cause,
) -> Result<(), ActionError> {
    let (i, cd, ab, (parts, n)) = card_ability(s, p, ship, card)?;
    let (facedown, disarm) = (s.ships[i].facedown, s.ships[i].disarm);
    // K8: the charge, the exhaustion and the recovery are paid whole or not at all.
    s.ledger.pay_cost(&parts[..n], c)?;
    if ab.effect == Effect::RepairFacedown {
        s.ledger.spend(facedown, 1, c)?;
    }
    if ab.disarm {
        s.ledger.gain(disarm, 1, c)?;
    }
    if ab.effect.grants_action() {
        // The vocabulary's values: 0 a white action treated as red, 1 any action at its colour.
        let at_colour = i32::from(ab.effect == Effect::AnotherAction);
        let key = ship_key(s, i);
        s.ledger.note(key, note::EXTRA_ACTION, [at_colour, 0, 0], c);
    }
    let stage = &mut s.ships[i].stage;
    // C16: using a device upgrade's ability places its device; until anything else happens,
    // the table may report that it could not be placed.
    if cd.kind == CardKind::Upgrade(Slot::Device) {
        stage.device = Device::JustPlaced;
    }
    match (ab.timing, ab.effect) {
        (_, Effect::ExtraAction) => stage.bonus = true,
        (_, Effect::AnotherAction) => {
            stage.bonus = true;
            stage.bonus_at_colour = true;
        }
        (Timing::Action, _) => after_action(stage),
        _ => {}
    }
    Ok(())
}

/// Reverses the drop of the device of ship `ship`'s card `card` (C16): its cost given back whole.
pub(crate) fn reverse_device(
    s: &mut State,
    p: Owner,
    ship: u8,
    card: u8,
    c: Cause,
) -> Result<(), ActionError> {
    // "Play is reversed to before the device was placed: the device is not placed, any charges
    // spent and other costs paid are recovered" (C16): the kernel gives the cost back whole.
    let (i, _, ab, cost) = card_ability(s, p, ship, card)?;
    let disarm = s.ships[i].disarm;
    s.ledger.refund_cost(&cost.0[..cost.1], c)?;
    if ab.disarm {
        s.ledger.spend(disarm, 1, c)?;
    }
    let key = ship_key(s, i);
    s.ledger
        .note(key, note::DEVICE_NOT_PLACED, [i32::from(card), 0, 0], c);
    s.ships[i].stage.device = Device::Free;
    Ok(())
}

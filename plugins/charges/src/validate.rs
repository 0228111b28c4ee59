//! One check per action, shared by [`apply`](crate::apply::apply) and the legal list
//! ([`legal_actions`](crate::legal::legal_actions)): who may take it now, and whether the rules allow
//! it. It changes nothing and allocates nothing: a refusal is a [`Why`].

use crate::actions::{Action, MAX_EFFECT_DAMAGE, ShipAction};
use crate::content::{Color, Timing};
use crate::refusals::{Why, illegal, not_yours};
use crate::rules::abilities::{ability_usable, check_device_not_placed};
use crate::rules::activation::{
    action_available, not_performed, perform_color, reload_card, reload_color,
};
use crate::rules::engagement::{attack_target, attack_weapon, modify_step};
use crate::rules::planning::plan_maneuver;
use crate::rules::ships::{ship_ok, track_of};
use crate::state::{AttackStep, Phase, State};
use crate::turn::{Turn, turn};
use coffer_core::{Owner, Refusal};

/// Checks an action without changing anything: the one rule book for both `apply` and `legal_actions`.
///
/// # Errors
/// [`Why`] the action is refused.
pub fn validate(s: &State, p: Owner, a: &Action) -> Result<(), Why> {
    validate_in(s, turn(s), p, a)
}

/// [`validate`](crate::validate::validate) with `t = turn(s)` already worked out (legal-action enumeration computes it once).
pub(crate) fn validate_in(s: &State, t: Turn, p: Owner, a: &Action) -> Result<(), Why> {
    if s.winners.is_some() {
        return Err(illegal("the game is over"));
    }
    if p.index() >= s.done.len() {
        return Err(Why::NoSuchPlayer);
    }
    match *a {
        Action::Plan { ship, maneuver } => plan(s, t, p, ship, maneuver),
        Action::UseAbility { ship, card } => use_ability(s, t, p, ship, card),
        Action::Execute { ship } => execute(s, t, p, ship),
        Action::Perform { ship, action } => perform(s, t, p, ship, action),
        Action::Reload { ship, card } => reload(s, t, p, ship, card),
        Action::Pass { ship } => pass(s, t, p, ship),
        Action::Attack {
            ship,
            target,
            weapon,
        } => attack(s, t, p, ship, target, weapon),
        Action::AttackDice { hits, crits, focus } => attack_dice(s, t, p, hits, crits, focus),
        Action::DefenceDice { evades, focus } => defence_dice(s, t, p, evades, focus),
        Action::SpendForce | Action::SpendFocus | Action::SpendEvade => spend(s, p, a),
        Action::Done => done(s, t, p),
        Action::DeviceNotPlaced { ship, card } => check_device_not_placed(s, p, ship, card),
        Action::SufferDamage { .. }
        | Action::DealDamageCard { .. }
        | Action::GainStress { .. }
        | Action::Lose { .. }
        | Action::Recover { .. }
        | Action::PlaceInReserve { .. }
        | Action::Deploy { .. } => effect(s, t, p, a),
    }
}

/// The ship exists and is in play, `phase` is the current phase (`what` is done in it), the ship has the
/// turn, and `p` owns it.
pub(crate) fn my_ship_turn(
    s: &State,
    t: Turn,
    p: Owner,
    ship: u8,
    phase: Phase,
    what: &'static str,
) -> Result<usize, Why> {
    let i = ship_ok(s, ship)?;
    if s.phase() != phase {
        return Err(Why::WrongPhase { what, phase });
    }
    if t != Turn::Ship(i) {
        return Err(Why::NotItsTurn(ship));
    }
    if s.ships[i].owner != p {
        return Err(Why::NotYourShip(ship));
    }
    Ok(i)
}

/// Effect inputs are entered by the owner of the ship whose turn it is, outside an attack.
fn effect_turn(s: &State, t: Turn, p: Owner) -> Result<(), Why> {
    match t {
        Turn::Ship(i) if s.ships[i].owner == p => Ok(()),
        Turn::Ship(_) => Err(not_yours(
            "effects are entered by the owner of the ship whose turn it is",
        )),
        _ => Err(illegal(
            "effects are entered on a ship's turn in the System, Activation or Engagement Phase, outside an attack",
        )),
    }
}

/// A plan: Planning, `p`'s ship in play without a dial, a maneuver it can fly (C8, C19).
fn plan(s: &State, t: Turn, p: Owner, ship: u8, maneuver: Color) -> Result<(), Why> {
    let i = ship_ok(s, ship)?;
    if t != Turn::Planning {
        return Err(Why::WrongPhase {
            what: "dials are planned",
            phase: Phase::Planning,
        });
    }
    let sh = &s.ships[i];
    if sh.owner != p {
        return Err(Why::NotYourShip(ship));
    }
    if sh.planned.is_some() {
        return Err(Why::Ship(ship, "already has a dial planned this round"));
    }
    if sh.reserve {
        return Err(Why::Ship(
            ship,
            "is in reserve: a ship in reserve is not assigned a dial (C19)",
        ));
    }
    plan_maneuver(s, i, maneuver)
}

/// An ability: the ship in play, the card's ability, its timing's turn and phase, then [`ability_usable`].
fn use_ability(s: &State, t: Turn, p: Owner, ship: u8, card: u8) -> Result<(), Why> {
    let i = ship_ok(s, ship)?;
    let sh = &s.ships[i];
    if sh.reserve {
        return Err(Why::Ship(
            ship,
            "is in reserve: the abilities of a ship in reserve are inactive (C19)",
        ));
    }
    let c = sh
        .cards
        .get(usize::from(card))
        .ok_or(Why::NoSuchCard { ship, card })?;
    let ab = c.ability.ok_or(Why::Card {
        ship,
        card,
        what: "has no ability",
    })?;
    match ab.timing {
        Timing::System => {
            my_ship_turn(s, t, p, ship, Phase::System, "System abilities are used")?;
        }
        Timing::Reveal | Timing::Action | Timing::AfterAction => {
            my_ship_turn(s, t, p, ship, Phase::Activation, "this ability is used")?;
        }
        Timing::End => {
            if t != Turn::End {
                return Err(Why::WrongPhase {
                    what: "End Phase abilities are used",
                    phase: Phase::End,
                });
            }
            if sh.owner != p {
                return Err(Why::NotYourShip(ship));
            }
            if s.ledger.is_exhausted(s.done[p.index()]) {
                return Err(illegal("you are already done with this End Phase"));
            }
        }
    }
    ability_usable(s, i, card, c, ab)
}

/// Executing: the ship's Activation turn, not executed yet.
fn execute(s: &State, t: Turn, p: Owner, ship: u8) -> Result<(), Why> {
    let i = my_ship_turn(s, t, p, ship, Phase::Activation, "maneuvers are executed")?;
    if s.ships[i].stage.executed {
        return Err(Why::Ship(ship, "has already executed its maneuver"));
    }
    Ok(())
}

/// Performing a bar action: the ship's Activation turn, an action available, not performed this round, its colour payable.
fn perform(s: &State, t: Turn, p: Owner, ship: u8, action: ShipAction) -> Result<(), Why> {
    let i = my_ship_turn(s, t, p, ship, Phase::Activation, "actions are performed")?;
    action_available(s, i)?;
    not_performed(s, i, Some(action))?;
    perform_color(s, i, action)
}

/// Reloading: as [`perform`], and a card to reload (C11).
fn reload(s: &State, t: Turn, p: Owner, ship: u8, card: u8) -> Result<(), Why> {
    let i = my_ship_turn(s, t, p, ship, Phase::Activation, "actions are performed")?;
    action_available(s, i)?;
    not_performed(s, i, None)?;
    reload_color(s, i)?;
    reload_card(s, i, card)
}

/// Passing: the ship's turn in a phase with ship turns, after its maneuver in the Activation Phase.
fn pass(s: &State, t: Turn, p: Owner, ship: u8) -> Result<(), Why> {
    let phase = s.phase();
    if !phase.has_ship_turns() {
        return Err(illegal(
            "a ship passes only on its turn in the System, Activation or Engagement Phase",
        ));
    }
    let i = my_ship_turn(s, t, p, ship, phase, "ships pass")?;
    if phase == Phase::Activation && !s.ships[i].stage.executed {
        return Err(Why::Ship(
            ship,
            "must execute its maneuver before it passes",
        ));
    }
    Ok(())
}

/// An attack: the ship's Engagement turn, not disarmed, an enemy target in play, a weapon ready.
fn attack(s: &State, t: Turn, p: Owner, ship: u8, target: u8, weapon: u8) -> Result<(), Why> {
    let i = my_ship_turn(s, t, p, ship, Phase::Engagement, "attacks are made")?;
    let sh = &s.ships[i];
    if s.ledger.value(sh.disarm) > 0 {
        return Err(Why::Ship(
            ship,
            "is disarmed: a disarmed ship cannot attack",
        ));
    }
    attack_target(s, p, target)?;
    attack_weapon(s, i, weapon)
}

/// What the check of a dice input says, for the attack dice or the defence dice.
struct DiceInput {
    /// Defence dice rather than attack dice.
    defence: bool,
    /// The step that awaits them.
    step: AttackStep,
    /// No attack (or defence) awaits them.
    none: &'static str,
    /// They are rolled already.
    rolled: &'static str,
    /// Another player's ship rolls them.
    owner: &'static str,
}

/// The attack dice's check.
const ATTACK_DICE: DiceInput = DiceInput {
    defence: false,
    step: AttackStep::Roll,
    none: "no attack awaits its attack dice",
    rolled: "the attack dice are already rolled",
    owner: "the attacking ship's owner enters the attack dice",
};

/// The defence dice's check.
const DEFENCE_DICE: DiceInput = DiceInput {
    defence: true,
    step: AttackStep::DefenceRoll,
    none: "no defence awaits its defence dice",
    rolled: "the defence dice are already rolled",
    owner: "the defending ship's owner enters the defence dice",
};

/// The attack dice: entered by the attacker's owner, at most as many results as dice.
fn attack_dice(s: &State, t: Turn, p: Owner, hits: u8, crits: u8, focus: u8) -> Result<(), Why> {
    let results = u16::from(hits) + u16::from(crits) + u16::from(focus);
    dice(s, t, p, &ATTACK_DICE, results)
}

/// The defence dice: entered by the defender's owner, at most as many results as its agility.
fn defence_dice(s: &State, t: Turn, p: Owner, evades: u8, focus: u8) -> Result<(), Why> {
    dice(s, t, p, &DEFENCE_DICE, u16::from(evades) + u16::from(focus))
}

/// A dice input of `results` results: its step open, entered by the rolling ship's owner, at most as
/// many results as dice (the attack's, or the defender's agility).
fn dice(s: &State, t: Turn, p: Owner, input: &DiceInput, results: u16) -> Result<(), Why> {
    let i = match (t, input.defence) {
        (Turn::Attacker(i), false) | (Turn::Defender(i), true) => i,
        _ => return Err(illegal(input.none)),
    };
    let at = s.attack.ok_or(illegal(input.none))?;
    if at.step != input.step {
        return Err(illegal(input.rolled));
    }
    if s.ships[i].owner != p {
        return Err(not_yours(input.owner));
    }
    let dice = if input.defence {
        s.ships[i].agility
    } else {
        at.dice
    };
    if results > u16::from(dice) {
        return Err(Why::TooManyResults {
            results,
            dice,
            defence: input.defence,
        });
    }
    Ok(())
}

/// Spending the Force, a focus or an evade token (`a`) on the open dice step of `p`'s ship.
fn spend(s: &State, p: Owner, a: &Action) -> Result<(), Why> {
    let (i, at) = modify_step(s, p)?;
    let sh = &s.ships[i];
    let ship = i as u8;
    let attacking = at.step == AttackStep::Modify;
    let focus_results = if attacking {
        at.focus
    } else {
        at.defence_focus
    };
    match a {
        Action::SpendForce => {
            if focus_results == 0 {
                return Err(illegal(
                    "no focus result to change: the Force cannot be spent (C3)",
                ));
            }
            if s.active(sh.force) == 0 {
                return Err(Why::Ship(ship, "has no active Force (C3)"));
            }
        }
        Action::SpendFocus => {
            if focus_results == 0 {
                return Err(illegal(
                    "no focus result to change: a focus token cannot be spent",
                ));
            }
            if s.ledger.value(sh.focus) == 0 {
                return Err(Why::Ship(ship, "has no focus token"));
            }
        }
        _ => {
            if attacking {
                return Err(illegal(
                    "evade tokens are spent while defending, not while attacking",
                ));
            }
            if s.ledger.value(sh.evade) == 0 {
                return Err(Why::Ship(ship, "has no evade token"));
            }
        }
    }
    Ok(())
}

/// Done: with the player's End Phase, or with the open dice step of `p`'s ship.
fn done(s: &State, t: Turn, p: Owner) -> Result<(), Why> {
    match t {
        Turn::End => {
            if s.ledger.is_exhausted(s.done[p.index()]) {
                return Err(illegal("you are already done with this End Phase"));
            }
            Ok(())
        }
        _ if s.attack.is_none() => Err(illegal(
            "there is nothing to be done with: no dice step is open and this is not the End Phase",
        )),
        _ => modify_step(s, p).map(|_| ()),
    }
}

/// An effect input: on the turn of `p`'s ship, on a ship not destroyed, with what the effect names.
fn effect(s: &State, t: Turn, p: Owner, a: &Action) -> Result<(), Why> {
    match *a {
        Action::SufferDamage { ship, hits, crits } => {
            effect_turn(s, t, p)?;
            ship_ok(s, ship)?;
            if hits > MAX_EFFECT_DAMAGE || crits > MAX_EFFECT_DAMAGE || hits + crits == 0 {
                return Err(Why::EffectDamage { hits, crits });
            }
            Ok(())
        }
        Action::DealDamageCard { ship, .. } | Action::GainStress { ship } => {
            effect_turn(s, t, p)?;
            ship_ok(s, ship).map(|_| ())
        }
        Action::Lose { ship, charges } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            track_of(s, i, charges).ok_or(Why::NoCharges(ship, charges))?;
            Ok(())
        }
        Action::PlaceInReserve { ship } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            if s.ships[i].reserve {
                return Err(Why::Ship(ship, "is already in reserve"));
            }
            Ok(())
        }
        Action::Deploy { ship } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            if !s.ships[i].reserve {
                return Err(Why::Ship(ship, "is not in reserve: it is in the play area"));
            }
            Ok(())
        }
        Action::Recover { ship, charges } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            let t = track_of(s, i, charges).ok_or(Why::NoCharges(ship, charges))?;
            // K8.2: the kernel's own check of the recovery.
            match s.ledger.can_recover(t, 1) {
                Ok(()) => Ok(()),
                Err(Refusal::Unrecoverable { .. }) => Err(Why::Charges(
                    ship,
                    charges,
                    "cannot be recovered: the card says so (C11)",
                )),
                Err(Refusal::NothingToRecover { .. }) => Err(Why::Charges(
                    ship,
                    charges,
                    "are all active: nothing to recover (C4)",
                )),
                Err(_) => Err(Why::NoCharges(ship, charges)),
            }
        }
        _ => Ok(()),
    }
}

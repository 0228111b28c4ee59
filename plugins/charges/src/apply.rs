//! Applying an action: [`validate`] it, then dispatch to its rule in
//! [`rules`](crate::rules), then move the clock on.

use crate::actions::Action;
use crate::rules::end::{advance, settled};
use crate::rules::{abilities, activation, damage, engagement, planning};
use crate::state::{Device, State};
use crate::turn::ship_to_act;
use crate::validate::validate;
use coffer_core::{ActionError, Cause, Owner};

/// Applies a validated action. Ledger changes first; the ruleset's own fields change last, so a kernel
/// refusal (rolled back by the adapter) leaves everything as it was. Every applied action leaves at least
/// one event that says what happened: the ledger's, or the ruleset's own note.
///
/// # Errors
/// [`ActionError`] in words when the rules refuse it.
pub fn apply(s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
    validate(s, p, a).map_err(|why| why.error(s, p))?;
    let c = Cause::Action {
        player: p,
        code: a.code(),
    };
    // C16: a device just placed can be reported unplaceable only until anything else happens.
    let just_placed = s
        .ships
        .iter()
        .position(|sh| sh.stage.device == Device::JustPlaced);
    dispatch(s, p, a, c)?;
    if let Some(i) = just_placed {
        let stage = &mut s.ships[i].stage;
        if stage.device == Device::JustPlaced {
            stage.device = Device::Placed;
        }
    }
    if keeps_settled(a) {
        debug_assert!(
            s.current == ship_to_act(s) && settled(s),
            "{a:?} changed whose turn it is"
        );
    } else {
        advance(s);
    }
    Ok(())
}

/// The rule of each action.
fn dispatch(s: &mut State, p: Owner, a: &Action, c: Cause) -> Result<(), ActionError> {
    let at = usize::from;
    match *a {
        Action::Plan { ship, maneuver } => planning::plan(s, at(ship), maneuver, c),
        Action::UseAbility { ship, card } => abilities::use_ability(s, p, ship, card, c)?,
        Action::Execute { ship } => activation::execute(s, at(ship), c)?,
        Action::Perform { ship, action } => activation::perform(s, at(ship), action, c)?,
        Action::Reload { ship, card } => activation::reload(s, at(ship), card, c)?,
        Action::Pass { ship } => activation::pass(s, at(ship), c)?,
        Action::Attack {
            ship,
            target,
            weapon,
        } => engagement::attack(s, ship, target, weapon, c)?,
        Action::AttackDice { hits, crits, focus } => {
            engagement::attack_dice(s, hits, crits, focus, c);
        }
        Action::DefenceDice { evades, focus } => engagement::defence_dice(s, evades, focus, c),
        Action::SpendForce | Action::SpendFocus | Action::SpendEvade => {
            engagement::spend(s, p, a, c)?;
        }
        Action::Done => engagement::done(s, p, c)?,
        Action::SufferDamage { ship, hits, crits } => damage::suffer(s, at(ship), hits, crits, c)?,
        Action::DealDamageCard { ship, faceup } => {
            damage::deal_damage_card(s, at(ship), faceup, c)?;
        }
        Action::GainStress { ship } => damage::gain_stress(s, at(ship), c)?,
        Action::Lose { ship, charges } => damage::lose(s, ship, charges, c)?,
        Action::Recover { ship, charges } => damage::recover(s, ship, charges, c)?,
        Action::PlaceInReserve { ship } => damage::place_in_reserve(s, ship, c),
        Action::Deploy { ship } => damage::deploy(s, ship, c),
        Action::DeviceNotPlaced { ship, card } => abilities::reverse_device(s, p, ship, card, c)?,
    }
    Ok(())
}

/// Whether an applied action leaves every input of [`settled`] as it was: the winners, the phase, the
/// plans, which ships are in play, the attack's presence, the ships' turns and the players' End Phases.
/// These actions only move tokens and charges (none deals damage; a repair keeps a ship in play) or an
/// attack's dice, so after one of them from a settled state the clock need not be asked to move.
fn keeps_settled(a: &Action) -> bool {
    matches!(
        a,
        Action::UseAbility { .. }
            | Action::DeviceNotPlaced { .. }
            | Action::Execute { .. }
            | Action::Perform { .. }
            | Action::Reload { .. }
            | Action::GainStress { .. }
            | Action::Lose { .. }
            | Action::Recover { .. }
            | Action::AttackDice { .. }
            | Action::DefenceDice { .. }
            | Action::SpendForce
            | Action::SpendFocus
            | Action::SpendEvade
    )
}

//! The Engagement Phase: attacks (target and weapon), the attack and defence dice as inputs, their
//! modification with the Force, focus and evade tokens, and the damage that ends an attack (C9).

use crate::actions::Action;
use crate::content::MAX_AGILITY;
use crate::content::MAX_ATTACK_DICE;
use crate::refusals::{Why, illegal, not_yours};
use crate::rules::damage::suffer;
use crate::rules::ships::{ship_key, ship_ok};
use crate::state::{Attack, AttackStep, State, kind};
use crate::words::note;
use coffer_core::{ActionError, Cause, Key, Owner};

/// The target part of [`validate`](crate::validate::validate) for an attack by `p`'s ship: an enemy ship in play.
pub(crate) fn attack_target(s: &State, p: Owner, target: u8) -> Result<(), Why> {
    let t = ship_ok(s, target)?;
    if s.ships[t].owner == p {
        return Err(Why::FriendlyTarget(target));
    }
    if s.ships[t].reserve {
        return Err(Why::Ship(
            target,
            "is in reserve, out of the play area: it cannot be attacked (C19)",
        ));
    }
    Ok(())
}

/// The weapon part of [`validate`](crate::validate::validate) for an attack by ship `i`: the primary weapon (0) or an ordnance card
/// with an active charge.
pub(crate) fn attack_weapon(s: &State, i: usize, weapon: u8) -> Result<(), Why> {
    let sh = &s.ships[i];
    let ship = i as u8;
    if weapon == 0 {
        if sh.attack == 0 {
            return Err(Why::Ship(ship, "has no primary weapon"));
        }
    } else {
        let c = sh
            .cards
            .get(usize::from(weapon))
            .ok_or(Why::NoSuchCard { ship, card: weapon })?;
        if c.attack == 0 {
            return Err(Why::Card {
                ship,
                card: weapon,
                what: "is not a weapon",
            });
        }
        if c.track.is_some() && s.active(c.track) == 0 {
            return Err(Why::Card {
                ship,
                card: weapon,
                what: "has no active charge to attack with (C3)",
            });
        }
    }
    Ok(())
}

/// The dice step open for `p` to modify: the ship whose dice they are, and the attack.
pub(crate) fn modify_step(s: &State, p: Owner) -> Result<(usize, Attack), Why> {
    let at = s.attack.ok_or(illegal("no attack is in progress"))?;
    let i = match at.step {
        AttackStep::Modify => usize::from(at.attacker),
        AttackStep::DefenceModify => usize::from(at.defender),
        AttackStep::Roll => return Err(illegal("the attack dice are not entered yet")),
        AttackStep::DefenceRoll => return Err(illegal("the defence dice are not entered yet")),
    };
    if s.ships[i].owner != p {
        return Err(not_yours("the other player modifies these dice"));
    }
    Ok((i, at))
}

/// Ship `ship` attacks `target` with `weapon` (0: primary; n: upgrade card n, spending one of its
/// charges): the attack opens at its attack dice.
pub(crate) fn attack(
    s: &mut State,
    ship: u8,
    target: u8,
    weapon: u8,
    c: Cause,
) -> Result<(), ActionError> {
    let i = usize::from(ship);
    let sh = &s.ships[i];
    let card = (weapon != 0).then(|| sh.cards[usize::from(weapon)]);
    let dice = card.map_or(sh.attack, |cd| cd.attack).min(MAX_ATTACK_DICE);
    let (attacker, defender) = (ship_key(s, i), ship_key(s, usize::from(target)));
    let weapon_kind = i32::from(weapon != 0);
    s.ledger.note(
        attacker,
        note::ATTACKS,
        [weapon_kind, i32::from(dice), 0],
        c,
    );
    s.ledger.note(defender, note::DEFENDS, [0; 3], c);
    if let Some(t) = card.and_then(|cd| cd.track) {
        s.ledger.spend_charges(t, 1, c)?;
    }
    s.attack = Some(Attack {
        attacker: ship,
        defender: target,
        weapon,
        dice,
        step: AttackStep::Roll,
        hits: 0,
        crits: 0,
        focus: 0,
        evades: 0,
        defence_focus: 0,
    });
    Ok(())
}

/// The attacker's dice results: the attack moves on to their modification.
pub(crate) fn attack_dice(s: &mut State, hits: u8, crits: u8, focus: u8, c: Cause) {
    if let Some(at) = s.attack {
        let key = ship_key(s, usize::from(at.attacker));
        let args = [i32::from(hits), i32::from(crits), i32::from(focus)];
        s.ledger.note(key, note::ATTACK_DICE, args, c);
    }
    if let Some(at) = s.attack.as_mut() {
        at.hits = hits;
        at.crits = crits;
        at.focus = focus;
        at.step = AttackStep::Modify;
    }
}

/// The defender's dice results: the attack moves on to their modification.
pub(crate) fn defence_dice(s: &mut State, evades: u8, focus: u8, c: Cause) {
    if let Some(at) = s.attack {
        let key = ship_key(s, usize::from(at.defender));
        let args = [i32::from(evades), i32::from(focus), 0];
        s.ledger.note(key, note::DEFENCE_DICE, args, c);
    }
    if let Some(at) = s.attack.as_mut() {
        at.evades = evades.min(MAX_AGILITY);
        at.defence_focus = focus;
        at.step = AttackStep::DefenceModify;
    }
}

/// `p` spends the Force, a focus token or an evade token (`a`) on the open dice step.
pub(crate) fn spend(s: &mut State, p: Owner, a: &Action, c: Cause) -> Result<(), ActionError> {
    let Some(mut at) = s.attack else {
        return Err(Why::Illegal("no attack is in progress").error(s, p));
    };
    let attacking = at.step == AttackStep::Modify;
    let i = usize::from(if attacking { at.attacker } else { at.defender });
    let key = ship_key(s, i);
    let into = i32::from(!attacking);
    let sh = &s.ships[i];
    match a {
        Action::SpendForce => {
            let force = sh.force;
            s.ledger.note(key, note::FORCE_CHANGE, [into, 0, 0], c);
            if let Some(f) = force {
                s.ledger.spend_charges(f, 1, c)?;
            }
            if attacking {
                at.focus -= 1;
                at.hits += 1;
            } else {
                at.defence_focus -= 1;
                at.evades += 1;
            }
        }
        Action::SpendFocus => {
            let focus = sh.focus;
            let n = if attacking {
                at.focus
            } else {
                at.defence_focus
            };
            s.ledger
                .note(key, note::FOCUS_CHANGE, [into, i32::from(n), 0], c);
            s.ledger.spend(focus, 1, c)?;
            if attacking {
                at.hits += at.focus;
                at.focus = 0;
            } else {
                at.evades += at.defence_focus;
                at.defence_focus = 0;
            }
        }
        _ => {
            let evade = sh.evade;
            s.ledger.note(key, note::EVADE_ADDED, [0; 3], c);
            s.ledger.spend(evade, 1, c)?;
            at.evades += 1;
        }
    }
    s.attack = Some(at);
    Ok(())
}

/// `p` is done: with the attacker's dice (the defence rolls next), with the defender's (the damage is
/// suffered, the attack ends) or, outside an attack, with their End Phase.
pub(crate) fn done(s: &mut State, p: Owner, c: Cause) -> Result<(), ActionError> {
    match s.attack {
        Some(mut at) if at.step == AttackStep::Modify => {
            let key = ship_key(s, usize::from(at.attacker));
            s.ledger.note(key, note::ATTACK_MODIFIED, [0; 3], c);
            at.step = AttackStep::DefenceRoll;
            s.attack = Some(at);
        }
        Some(at) => {
            // Evade results cancel hits first, then crits; the rest is suffered (C9).
            let cancel_hits = at.evades.min(at.hits);
            let cancel_crits = (at.evades - cancel_hits).min(at.crits);
            let (hits, crits) = (at.hits - cancel_hits, at.crits - cancel_crits);
            suffer(s, usize::from(at.defender), hits, crits, c)?;
            let attacker = usize::from(at.attacker);
            s.ledger.activate(s.ships[attacker].turn, c)?;
            s.attack = None;
        }
        None => {
            let key = Key::new(p, kind::DONE, 0);
            s.ledger.note(key, note::END_DONE, [0; 3], c);
            s.ledger.activate(s.done[p.index()], c)?;
        }
    }
    Ok(())
}

//! The legal list: every action a player may take now, in a fixed order, each choice with a condition
//! checked by [`validate`](crate::validate::validate)(crate::validate::validate) or its parts.

use crate::actions::{Action, ChargeRef, MAX_EFFECT_DAMAGE, ShipAction};
use crate::content::{Color, MAX_UPGRADES, Timing};
use crate::rules::abilities::ability_usable;
use crate::rules::activation::{
    action_available, not_performed, perform_color, reload_card, reload_color,
};
use crate::rules::engagement::{attack_target, attack_weapon};
use crate::rules::planning::plan_maneuver;
use crate::state::{AttackStep, Device, Phase, State};
use crate::turn::{Turn, turn};
use crate::validate::{my_ship_turn, validate_in};
use coffer_core::{Owner, TrackId};

/// The maneuver colours, in listing order.
const MANEUVERS: [Color; 4] = [Color::Blue, Color::White, Color::Red, Color::Purple];

/// Room reserved in a legal-action list: a two-ship ship turn lists about 40 actions.
const LIST_CAPACITY: usize = 64;

/// The effect inputs on a ship in play that need nothing but the ship (every `suffer_damage` with 0..=2
/// hits and 0..=2 crits, at least one in all, hits outer; both damage cards; a stress), in listing order.
fn unconditional_effects(ship: u8) -> [Action; 11] {
    // The list below spells out the damage inputs for this bound.
    const _: () = assert!(MAX_EFFECT_DAMAGE == 2);
    let d = |hits, crits| Action::SufferDamage { ship, hits, crits };
    [
        d(0, 1),
        d(0, 2),
        d(1, 0),
        d(1, 1),
        d(1, 2),
        d(2, 0),
        d(2, 1),
        d(2, 2),
        Action::DealDamageCard {
            ship,
            faceup: false,
        },
        Action::DealDamageCard { ship, faceup: true },
        Action::GainStress { ship },
    ]
}

/// Every action `p` may take now. Complete and sound: choices with context-dependent conditions are
/// checked by [`validate`](crate::validate::validate)(crate::validate::validate); the effect inputs and dice results, valid by
/// construction in the state that lists them, are pushed directly (the playout property test checks
/// both against `validate`).
pub fn legal_actions(s: &State, p: Owner, out: &mut Vec<Action>) {
    // One allocation for a fresh list instead of growing it step by step (games are short).
    out.reserve(LIST_CAPACITY);
    let t = turn(s);
    if p.index() >= s.done.len() {
        return;
    }
    match t {
        Turn::Over => {}
        Turn::Planning => planning(s, p, out),
        Turn::Ship(i) => {
            if s.ships[i].owner == p {
                ship_turn(s, t, p, i, out);
            }
        }
        Turn::Attacker(a) | Turn::Defender(a) => {
            if s.ships[a].owner == p {
                dice(s, t, p, out);
            }
        }
        Turn::End => end_phase(s, t, p, out),
    }
}

/// Pushes `a` if [`validate_in`] accepts it.
fn keep(s: &State, t: Turn, p: Owner, a: Action, out: &mut Vec<Action>) {
    if validate_in(s, t, p, &a).is_ok() {
        out.push(a);
    }
}

/// Planning: each maneuver of each of `p`'s ships still to plan.
fn planning(s: &State, p: Owner, out: &mut Vec<Action>) {
    // `validate` of a plan: the ship exists and is in play, Planning, `p`'s, not yet planned,
    // then `plan_maneuver`.
    for (i, sh) in s.ships.iter().enumerate() {
        if sh.owner == p && sh.planned.is_none() && s.in_play(i) {
            for m in MANEUVERS {
                if plan_maneuver(s, i, m).is_ok() {
                    out.push(Action::Plan {
                        ship: i as u8,
                        maneuver: m,
                    });
                }
            }
        }
    }
}

/// Ship `i`'s turn (its owner is `p`): its abilities, a device to report, its phase's actions, then the
/// effect inputs.
fn ship_turn(s: &State, t: Turn, p: Owner, i: usize, out: &mut Vec<Action>) {
    let sh = &s.ships[i];
    let ship = i as u8;
    let cards = sh.cards.len() as u8;
    let phase = s.phase();
    // `validate` of an ability: the timing's `my_ship_turn` (here: the phase, the rest holds;
    // End-Phase abilities wait for the End Phase), then `ability_usable`.
    for (c, card) in sh.cards.iter().enumerate() {
        let Some(ab) = card.ability else { continue };
        let in_phase = match ab.timing {
            Timing::System => phase == Phase::System,
            Timing::Reveal | Timing::Action | Timing::AfterAction => phase == Phase::Activation,
            Timing::End => false,
        };
        if in_phase && ability_usable(s, i, c as u8, card, ab).is_ok() {
            out.push(Action::UseAbility {
                ship,
                card: c as u8,
            });
        }
    }
    // C16: right after a drop, the table may report that the device could not be placed.
    if sh.stage.device == Device::JustPlaced {
        for c in 0..cards {
            keep(s, t, p, Action::DeviceNotPlaced { ship, card: c }, out);
        }
    }
    match phase {
        Phase::Activation => activation(s, t, p, i, out),
        Phase::Engagement => engagement(s, t, p, i, out),
        _ => out.push(Action::Pass { ship }),
    }
    effect_inputs(s, out);
}

/// The Activation Phase turn of ship `i`: execute, or its bar actions and pass.
fn activation(s: &State, t: Turn, p: Owner, i: usize, out: &mut Vec<Action>) {
    let sh = &s.ships[i];
    let ship = i as u8;
    let cards = sh.cards.len() as u8;
    if !sh.stage.executed {
        out.push(Action::Execute { ship });
        return;
    }
    // `validate` of perform and reload: the ship's turn (true here, as for
    // attacks below), `action_available`, then the parts checked here.
    debug_assert!(my_ship_turn(s, t, p, ship, Phase::Activation, "").is_ok());
    if action_available(s, i).is_ok() {
        for action in [ShipAction::Focus, ShipAction::Evade] {
            if not_performed(s, i, Some(action)).is_ok() && perform_color(s, i, action).is_ok() {
                out.push(Action::Perform { ship, action });
            }
        }
        // Card 0 is the ship card, which is never reloadable.
        if not_performed(s, i, None).is_ok() && reload_color(s, i).is_ok() {
            for c in 1..cards {
                if reload_card(s, i, c).is_ok() {
                    out.push(Action::Reload { ship, card: c });
                }
            }
        }
    }
    out.push(Action::Pass { ship });
}

/// The Engagement Phase turn of ship `i`: its attacks, then pass.
fn engagement(s: &State, t: Turn, p: Owner, i: usize, out: &mut Vec<Action>) {
    let sh = &s.ships[i];
    let ship = i as u8;
    let cards = sh.cards.len() as u8;
    // `validate` of an attack is: the ship's turn (true here: `t` is this ship's turn,
    // its owner is `p`, the phase is 3), not disarmed, then `attack_target` and
    // `attack_weapon`, which do not depend on each other: each is checked once.
    // A ship has at most 16 cards, so one bit per weapon fits.
    const _: () = assert!(MAX_UPGRADES < 16);
    debug_assert!(my_ship_turn(s, t, p, ship, Phase::Engagement, "").is_ok());
    if s.ledger.value(sh.disarm) == 0 {
        let mut ready = 0u16;
        for w in 0..cards.min(16) {
            if attack_weapon(s, i, w).is_ok() {
                ready |= 1 << w;
            }
        }
        if ready != 0 {
            for target in 0..s.ships.len() as u8 {
                if attack_target(s, p, target).is_err() {
                    continue;
                }
                for w in 0..cards.min(16) {
                    if ready & (1 << w) != 0 {
                        out.push(Action::Attack {
                            ship,
                            target,
                            weapon: w,
                        });
                    }
                }
            }
        }
    }
    out.push(Action::Pass { ship });
}

/// The effect inputs, for the owner of the ship whose turn it is, on any ship in play.
fn effect_inputs(s: &State, out: &mut Vec<Action>) {
    let tracks = s.ledger.tracks();
    for (j, target) in s.ships.iter().enumerate() {
        if !s.alive(j) {
            continue;
        }
        let ship = j as u8;
        out.extend_from_slice(&unconditional_effects(ship));
        out.push(if target.reserve {
            Action::Deploy { ship }
        } else {
            Action::PlaceInReserve { ship }
        });
        let mut charges = |r: ChargeRef, track: Option<TrackId>| {
            if let Some(track) = track.and_then(|id| tracks.get(id.index())) {
                out.push(Action::Lose { ship, charges: r });
                if !track.unrecoverable() && track.inactive() > 0 {
                    out.push(Action::Recover { ship, charges: r });
                }
            }
        };
        charges(ChargeRef::Force, target.force);
        charges(ChargeRef::Shield, target.shields);
        charges(ChargeRef::Energy, target.energy);
        for (c, card) in target.cards.iter().enumerate() {
            charges(ChargeRef::Card(c as u8), card.track);
        }
    }
}

/// The dice step of the attack in progress, for the owner of the ship whose dice they are.
fn dice(s: &State, t: Turn, p: Owner, out: &mut Vec<Action>) {
    let Some(at) = s.attack else { return };
    match at.step {
        AttackStep::Roll => {
            for hits in 0..=at.dice {
                for crits in 0..=at.dice - hits {
                    for focus in 0..=at.dice - hits - crits {
                        out.push(Action::AttackDice { hits, crits, focus });
                    }
                }
            }
        }
        AttackStep::DefenceRoll => {
            let dice = s.ships[usize::from(at.defender)].agility;
            for evades in 0..=dice {
                for focus in 0..=dice - evades {
                    out.push(Action::DefenceDice { evades, focus });
                }
            }
        }
        _ => {
            keep(s, t, p, Action::SpendForce, out);
            keep(s, t, p, Action::SpendFocus, out);
            keep(s, t, p, Action::SpendEvade, out);
            out.push(Action::Done);
        }
    }
}

/// The End Phase, for `p` not yet done: their End Phase abilities, then done.
fn end_phase(s: &State, t: Turn, p: Owner, out: &mut Vec<Action>) {
    if s.ledger.is_exhausted(s.done[p.index()]) {
        return;
    }
    for (i, sh) in s.ships.iter().enumerate() {
        if sh.owner == p && s.alive(i) {
            for c in 0..sh.cards.len() as u8 {
                if sh.cards[usize::from(c)].ability.is_some() {
                    let card = Action::UseAbility {
                        ship: i as u8,
                        card: c,
                    };
                    keep(s, t, p, card, out);
                }
            }
        }
    }
    out.push(Action::Done);
}

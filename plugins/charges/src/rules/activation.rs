//! The Activation Phase: executing the planned maneuver, the action bar (focus, evade, Reload: once each
//! per round, C17; its colours, C8, C15) and ending a ship's turn.

use crate::actions::ShipAction;
use crate::content::Color;
use crate::refusals::Why;
use crate::rules::damage::gain_stress;
use crate::rules::ships::{colour_number, ship_key, stressed};
use crate::state::{CardKind, Ship, Stage, State};
use crate::words::note;
use coffer_core::{ActionError, Cause, Refusal};

/// Whether ship `i` may perform an action now (its action step, or an extra action an ability gave it).
pub(crate) fn action_available(s: &State, i: usize) -> Result<(), Why> {
    let (ship, stage) = (i as u8, s.ships[i].stage);
    if !stage.executed {
        return Err(Why::Ship(
            ship,
            "has not executed its maneuver yet: actions come after it",
        ));
    }
    if stage.acted && !stage.bonus {
        return Err(Why::Ship(ship, "has already performed its action"));
    }
    // C15: a stressed ship performs no action at all, white, blue or purple ones included.
    if stressed(s, i) {
        return Err(Why::Ship(
            ship,
            "is stressed: a stressed ship cannot perform actions (C15)",
        ));
    }
    Ok(())
}

/// The bit of [`Stage::performed`] for an action-bar action: `Some` focus or evade, `None` reload.
pub(crate) fn bar_bit(action: Option<ShipAction>) -> u8 {
    match action {
        Some(ShipAction::Focus) => 1,
        Some(ShipAction::Evade) => 2,
        None => 4,
    }
}

/// Whether ship `sh` has an action on its bar, of a colour `fits` accepts, that it has not performed this
/// round (C17).
pub(crate) fn left_to_perform(sh: &Ship, fits: impl Fn(Color) -> bool) -> bool {
    let bar = sh.actions;
    [
        (bar.focus, bar_bit(Some(ShipAction::Focus))),
        (bar.evade, bar_bit(Some(ShipAction::Evade))),
        (bar.reload, bar_bit(None)),
    ]
    .into_iter()
    .any(|(colour, bit)| colour.is_some_and(&fits) && sh.stage.performed & bit == 0)
}

/// C17: ship `i` has not performed this action-bar action (`Some` focus or evade, `None` reload) this round.
pub(crate) fn not_performed(s: &State, i: usize, action: Option<ShipAction>) -> Result<(), Why> {
    if s.ships[i].stage.performed & bar_bit(action) == 0 {
        return Ok(());
    }
    let what = match action {
        Some(ShipAction::Focus) => {
            "has already performed the focus action this round: each action once per round (C17)"
        }
        Some(ShipAction::Evade) => {
            "has already performed the evade action this round: each action once per round (C17)"
        }
        None => {
            "has already performed the Reload action this round: each action once per round (C17)"
        }
    };
    Err(Why::Ship(i as u8, what))
}

/// The action-bar part of [`validate`](crate::validate::validate) for ship `i` performing `action`: on the bar, and its colour payable.
pub(crate) fn perform_color(s: &State, i: usize, action: ShipAction) -> Result<(), Why> {
    let bar = s.ships[i].actions;
    let color = match action {
        ShipAction::Focus => bar
            .focus
            .ok_or(Why::Ship(i as u8, "has no focus action on its action bar"))?,
        ShipAction::Evade => bar
            .evade
            .ok_or(Why::Ship(i as u8, "has no evade action on its action bar"))?,
    };
    check_action_color(s, i, color)
}

/// The action-bar part of [`validate`](crate::validate::validate) for ship `i` reloading: Reload on the bar, its colour payable.
pub(crate) fn reload_color(s: &State, i: usize) -> Result<(), Why> {
    let color = s.ships[i]
        .actions
        .reload
        .ok_or(Why::Ship(i as u8, "has no Reload action on its action bar"))?;
    check_action_color(s, i, color)
}

/// The card part of [`validate`](crate::validate::validate) for ship `i` reloading `card` (C11): a torpedo, missile or device
/// upgrade whose recoverable charge is below its limit.
pub(crate) fn reload_card(s: &State, i: usize, card: u8) -> Result<(), Why> {
    let ship = i as u8;
    let c = s.ships[i]
        .cards
        .get(usize::from(card))
        .ok_or(Why::NoSuchCard { ship, card })?;
    let why = |what| Why::Card { ship, card, what };
    if !matches!(c.kind, CardKind::Upgrade(slot) if slot.reloadable()) {
        return Err(why(
            "cannot be reloaded: only torpedo, missile and device upgrades can (C11)",
        ));
    }
    let t = c.track.ok_or(why("has no charge to reload"))?;
    let t = s
        .ledger
        .track(t)
        .map_err(|_| why("has no charge to reload"))?;
    if t.unrecoverable() {
        return Err(why("has a charge that cannot be recovered (C11)"));
    }
    if t.inactive() == 0 {
        return Err(why(
            "has every charge active: it is at its limit, nothing to reload (C11)",
        ));
    }
    Ok(())
}

/// The colour part of an action's check: an extra action is white, treated as red (C14); purple needs an active Force (C8), red no stress.
pub(crate) fn check_action_color(s: &State, i: usize, color: Color) -> Result<(), Why> {
    let sh = &s.ships[i];
    let ship = i as u8;
    // An extra action is a white one treated as red, unless it keeps its colour (C14).
    let bonus = sh.stage.acted && !sh.stage.bonus_at_colour;
    if bonus && color != Color::White {
        return Err(Why::Ship(
            ship,
            "may take only a white action as its extra action (it is treated as red)",
        ));
    }
    let effective = if bonus { Color::Red } else { color };
    match effective {
        Color::Purple if s.active(sh.force) == 0 => Err(Why::Ship(
            ship,
            "has no active Force: a purple action costs one (C8)",
        )),
        Color::Red if stressed(s, i) => Err(Why::Ship(
            ship,
            "is stressed: a stressed ship cannot perform a red action",
        )),
        _ => Ok(()),
    }
}

/// Pays an action's colour: purple spends one Force, red (or an extra action) gains stress.
pub(crate) fn pay_action_color(
    s: &mut State,
    i: usize,
    color: Color,
    c: Cause,
) -> Result<(), Refusal> {
    let stage = s.ships[i].stage;
    let effective = if stage.acted && !stage.bonus_at_colour {
        Color::Red
    } else {
        color
    };
    match effective {
        Color::Purple => {
            if let Some(f) = s.ships[i].force {
                s.ledger.spend_charges(f, 1, c)?;
            }
            Ok(())
        }
        Color::Red => gain_stress(s, i, c),
        _ => Ok(()),
    }
}

/// Ship stage after an action: the extra action it was given is used, else its action step.
pub(crate) fn after_action(stage: &mut Stage) {
    if stage.acted {
        stage.bonus = false;
        stage.bonus_at_colour = false;
    } else {
        stage.acted = true;
    }
}

/// Reveals ship `i`'s dial and executes its maneuver: blue removes a stress, red gains one (a huge ship
/// loses energy instead, C10), purple spends one Force (C13); a stressed red or an unpaid purple is a
/// white [2 straight] instead (C12).
pub(crate) fn execute(s: &mut State, i: usize, c: Cause) -> Result<(), ActionError> {
    let sh = &s.ships[i];
    let (stress, force, energy, huge) = (sh.stress, sh.force, sh.energy, sh.huge);
    let planned = sh.planned.unwrap_or(Color::White);
    // C13: a purple maneuver costs one Force; a ship whose Force is gone by now cannot pay it and
    // executes a white [2 straight] instead, as a stressed ship does for a red one (C12).
    let unpaid_purple = planned == Color::Purple && s.active(force) == 0;
    // C12: a stressed ship that would execute a red maneuver executes a white [2 straight]
    // instead, so it gains no stress (and a huge ship spends no energy).
    let stressed_red = planned == Color::Red && stressed(s, i);
    let color = if unpaid_purple || stressed_red {
        Color::White
    } else {
        planned
    };
    // The vocabulary's values: 4 "a white [2 straight] instead of its purple maneuver", 5 "... of
    // its red maneuver".
    let shown = if unpaid_purple {
        4
    } else if stressed_red {
        5
    } else {
        colour_number(planned)
    };
    let key = ship_key(s, i);
    s.ledger.note(key, note::EXECUTED, [shown, 0, 0], c);
    match color {
        Color::Blue => {
            if s.ledger.value(stress) > 0 {
                s.ledger.spend(stress, 1, c)?;
            }
        }
        Color::White => {}
        Color::Purple => {
            if let Some(f) = force {
                s.ledger.spend_charges(f, 1, c)?;
            }
        }
        Color::Red => {
            // C10: a huge ship with energy loses one energy instead of gaining stress.
            match energy {
                Some(e) if huge && s.ledger.active(e) > 0 => {
                    s.ledger.lose_charges(e, 1, c)?;
                }
                _ => gain_stress(s, i, c)?,
            }
        }
    }
    s.ships[i].stage.executed = true;
    s.ships[i].revealed = true;
    Ok(())
}

/// Ship `i` performs `action` of its bar: pays its colour and gains its token.
pub(crate) fn perform(
    s: &mut State,
    i: usize,
    action: ShipAction,
    c: Cause,
) -> Result<(), ActionError> {
    let sh = &s.ships[i];
    let (color, token) = match action {
        ShipAction::Focus => (sh.actions.focus, sh.focus),
        ShipAction::Evade => (sh.actions.evade, sh.evade),
    };
    pay_action_color(s, i, color.unwrap_or(Color::White), c)?;
    s.ledger.gain(token, 1, c)?;
    s.ships[i].stage.performed |= bar_bit(Some(action));
    after_action(&mut s.ships[i].stage);
    Ok(())
}

/// Ship `i` performs the Reload action on `card` (C11): pays its colour, recovers one charge, gains a
/// disarm token.
pub(crate) fn reload(s: &mut State, i: usize, card: u8, c: Cause) -> Result<(), ActionError> {
    let sh = &s.ships[i];
    let color = sh.actions.reload.unwrap_or(Color::White);
    let (track, disarm) = (sh.cards[usize::from(card)].track, sh.disarm);
    pay_action_color(s, i, color, c)?;
    if let Some(t) = track {
        s.ledger.recover_exactly(t, 1, c)?;
    }
    s.ledger.gain(disarm, 1, c)?;
    s.ships[i].stage.performed |= bar_bit(None);
    after_action(&mut s.ships[i].stage);
    Ok(())
}

/// Ship `i` ends its turn in this phase.
pub(crate) fn pass(s: &mut State, i: usize, c: Cause) -> Result<(), ActionError> {
    let key = ship_key(s, i);
    s.ledger.note(key, note::PASSED, [0; 3], c);
    s.ledger.activate(s.ships[i].turn, c)?;
    s.ships[i].stage = Stage::default();
    Ok(())
}

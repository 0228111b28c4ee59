//! The table of a `charges` game for one seat or a spectator: the clock (round, phase, dice step), whose
//! ship has the turn, who may act and why, and the ships, the attack in progress, the End Phase and the
//! result as sections. A planned dial is written only into its owner's table until it is revealed.

use crate::state::{AttackStep, Phase, Ship, State};
use crate::turn::{Turn, turn};
use coffer_core::{Owner, Table};
use std::fmt::Write as _;

/// Fills `table` for `seat` (`None`: a spectator).
pub fn fill(s: &State, seat: Option<Owner>, table: &mut Table) {
    let over = s.winners.is_some();
    if over {
        table.clock(s.rounds(), None, None);
    } else {
        let step = s.attack.map(|at| at.step.number());
        table.clock(s.rounds() + 1, Some(s.phase().number()), step);
    }
    let phase = s.phase();
    match turn(s) {
        Turn::Over => {}
        Turn::Planning => {
            for p in 0..s.done.len() {
                let owner = Owner(p as u16);
                let mut why = String::new();
                for (i, sh) in s.ships.iter().enumerate() {
                    if sh.owner == owner && sh.planned.is_none() && s.alive(i) {
                        why.push_str(if why.is_empty() {
                            "to plan a dial for "
                        } else {
                            ", "
                        });
                        why.push_str(&sh.name);
                    }
                }
                if !why.is_empty() {
                    table.act(owner, why);
                }
            }
        }
        Turn::Ship(i) => {
            let sh = &s.ships[i];
            table.turn(sh.owner);
            let why = match phase {
                Phase::System => format!(
                    "{} has its System Phase turn: abilities, then pass",
                    sh.name
                ),
                Phase::Activation if !sh.stage.executed => {
                    format!("{} activates: reveal and execute its maneuver", sh.name)
                }
                Phase::Activation => format!("{} activates: perform an action, then pass", sh.name),
                _ => format!("{} engages: attack, or pass", sh.name),
            };
            table.act(sh.owner, why);
        }
        Turn::Attacker(i) | Turn::Defender(i) => {
            let sh = &s.ships[i];
            table.turn(sh.owner);
            let step = s.attack.map_or(AttackStep::Roll, |at| at.step);
            let why = match step {
                AttackStep::Roll => format!("to enter the attack dice of {}", sh.name),
                AttackStep::Modify => {
                    format!("to modify the attack dice of {}, then done", sh.name)
                }
                AttackStep::DefenceRoll => format!("to enter the defence dice of {}", sh.name),
                AttackStep::DefenceModify => {
                    format!("to modify the defence dice of {}, then done", sh.name)
                }
            };
            table.act(sh.owner, why);
        }
        Turn::End => {
            for (p, &done) in s.done.iter().enumerate() {
                let owner = Owner(p as u16);
                if s.ledger.is_exhausted(done) {
                    table.pass(owner);
                } else {
                    table.act(owner, "to use End Phase abilities, then done");
                }
            }
        }
    }
    ships(s, seat, table);
    attack(s, table);
    if phase == Phase::End && !over {
        let section = table.section("End Phase");
        for (p, &done) in s.done.iter().enumerate() {
            let owner = Owner(p as u16);
            let value = if s.ledger.is_exhausted(done) {
                "done"
            } else if ships_in_play(s, owner) == 0 {
                "no ship in play: done when they say so"
            } else {
                "may use End Phase abilities"
            };
            section.row(owner, owner.to_string(), value);
        }
    }
    if let Some(winners) = &s.winners {
        let section = table.section("Result");
        for p in 0..s.done.len() {
            let owner = Owner(p as u16);
            let n = ships_in_play(s, owner);
            let ships = if n == 1 { "ship" } else { "ships" };
            let value = if winners.contains(&owner) {
                format!("wins, with {n} {ships} in play")
            } else {
                format!("{n} {ships} in play")
            };
            section.row(owner, "result", value);
        }
        if winners.is_empty() {
            section.row(Owner::GAME, "winners", "none: a draw");
        }
    }
}

fn ships_in_play(s: &State, owner: Owner) -> usize {
    (0..s.ships.len())
        .filter(|&i| s.ships[i].owner == owner && s.alive(i))
        .count()
}

/// The "Ships" section: one row per ship, its dial in words only for those who may see it.
fn ships(s: &State, seat: Option<Owner>, table: &mut Table) {
    let section = table.section("Ships");
    section.rows.reserve(s.ships.len());
    let l = &s.ledger;
    for sh in &s.ships {
        let mut v = String::with_capacity(144);
        let (facedown, faceup) = (l.value(sh.facedown), l.value(sh.faceup));
        let alive = facedown + faceup < i64::from(sh.hull);
        v.push_str(match (alive, sh.reserve) {
            (false, _) => "destroyed",
            (true, true) => "in reserve",
            (true, false) => "in play",
        });
        v.push_str(", initiative ");
        number(&mut v, i64::from(sh.initiative));
        if alive {
            v.push_str(", ");
            dial(sh, seat == Some(sh.owner), &mut v);
            for (name, id) in [
                (", stress ", sh.stress),
                (", focus ", sh.focus),
                (", evade ", sh.evade),
                (", disarm ", sh.disarm),
            ] {
                v.push_str(name);
                number(&mut v, l.value(id));
            }
        }
        v.push_str(", damage ");
        number(&mut v, facedown + faceup);
        v.push_str(" of hull ");
        number(&mut v, i64::from(sh.hull));
        v.push_str(" (");
        number(&mut v, facedown);
        v.push_str(" facedown, ");
        number(&mut v, faceup);
        v.push_str(" faceup)");
        section.row(sh.owner, sh.name.clone(), v);
    }
}

/// Writes a number: the small counts of a table without the formatting machinery.
fn number(v: &mut String, n: i64) {
    match u8::try_from(n) {
        Ok(n) if n < 10 => v.push(char::from(b'0' + n)),
        Ok(n) if n < 100 => {
            v.push(char::from(b'0' + n / 10));
            v.push(char::from(b'0' + n % 10));
        }
        _ => {
            let _ = write!(v, "{n}");
        }
    }
}

/// The dial in words: its maneuver for its owner or once revealed, else only whether it is planned.
fn dial(sh: &Ship, owner: bool, v: &mut String) {
    match sh.planned {
        None => v.push_str("dial not planned"),
        Some(m) if sh.revealed => {
            v.push_str("dial ");
            v.push_str(m.name());
            v.push_str(", executed");
        }
        Some(m) if owner => {
            v.push_str("dial ");
            v.push_str(m.name());
            v.push_str(" (hidden from the others), not executed");
        }
        Some(_) => v.push_str("dial planned, not executed"),
    }
}

/// The "Attack" section, while an attack is in progress.
fn attack(s: &State, table: &mut Table) {
    let Some(at) = s.attack else { return };
    let (a, d) = (
        &s.ships[usize::from(at.attacker)],
        &s.ships[usize::from(at.defender)],
    );
    let section = table.section("Attack");
    section.row(a.owner, "attacker", a.name.clone());
    section.row(d.owner, "defender", d.name.clone());
    let weapon = if at.weapon == 0 {
        "primary weapon".to_owned()
    } else {
        a.card_names
            .get(usize::from(at.weapon))
            .cloned()
            .unwrap_or_default()
    };
    section.row(
        a.owner,
        "weapon",
        format!("{weapon}, {} attack dice", at.dice),
    );
    section.row(Owner::GAME, "dice step", at.step.name());
    let attack_dice = if at.step == AttackStep::Roll {
        format!("{} dice, not entered yet", at.dice)
    } else {
        format!("hits {}, crits {}, focus {}", at.hits, at.crits, at.focus)
    };
    section.row(a.owner, "attack dice", attack_dice);
    let defence_dice = match at.step {
        AttackStep::Roll | AttackStep::Modify | AttackStep::DefenceRoll => {
            format!("{} dice, not entered yet", d.agility)
        }
        AttackStep::DefenceModify => format!("evades {}, focus {}", at.evades, at.defence_focus),
    };
    section.row(d.owner, "defence dice", defence_dice);
}

//! Who acts: the [`Turn`] a state is at, the ship whose turn it is, and the players with an action.

use crate::state::{AttackStep, Phase, State};
use coffer_core::Owner;

/// Who is to act now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// The game is over.
    Over,
    /// Planning: every player with unplanned ships.
    Planning,
    /// The ship whose turn it is in the System, Activation or Engagement Phase.
    Ship(usize),
    /// The attacker of the attack in progress.
    Attacker(usize),
    /// The defender of the attack in progress.
    Defender(usize),
    /// End Phase: every player not yet done.
    End,
}

/// The ship whose turn it is in `phase`: lowest initiative first (System, Activation), highest first
/// (Engagement); ties go to the lower player, then the lower ship index.
pub fn current_ship(s: &State) -> Option<usize> {
    let engagement = s.phase() == Phase::Engagement;
    let mut best: Option<(usize, (i16, u16))> = None;
    for (i, ship) in s.ships.iter().enumerate() {
        let init = i16::from(ship.initiative);
        let key = (if engagement { -init } else { init }, ship.owner.0);
        // The lowest key among the ships still to act, the lower index on a tie: a ship that cannot
        // beat the best so far need not be looked at further.
        if best.is_some_and(|(_, k)| key >= k) {
            continue;
        }
        if s.ledger.is_exhausted(ship.turn) || !s.in_play(i) {
            continue;
        }
        // C19: a ship deployed from reserve after planning has no dial, so no Activation turn.
        if ship.planned.is_none() && s.phase() == Phase::Activation {
            continue;
        }
        best = Some((i, key));
    }
    best.map(|(i, _)| i)
}

/// What [`State::current`] holds: the [`current_ship`] in the System, Activation and Engagement Phases
/// of a game not over, `None` otherwise.
pub fn ship_to_act(s: &State) -> Option<u8> {
    if s.winners.is_none() && s.phase().has_ship_turns() {
        current_ship(s).map(|i| i as u8)
    } else {
        None
    }
}

/// Who is to act.
pub fn turn(s: &State) -> Turn {
    if s.winners.is_some() {
        return Turn::Over;
    }
    match s.phase() {
        Phase::Planning => Turn::Planning,
        Phase::System | Phase::Activation | Phase::Engagement => match s.attack {
            Some(a) if matches!(a.step, AttackStep::Roll | AttackStep::Modify) => {
                Turn::Attacker(usize::from(a.attacker))
            }
            Some(a) => Turn::Defender(usize::from(a.defender)),
            None => s.current.map_or(Turn::Over, |i| Turn::Ship(usize::from(i))),
        },
        Phase::End => Turn::End,
    }
}

/// The players who have a legal action now, exactly: the owner of the ship whose turn, attack or defence
/// it is; during Planning, the players with a ship in play still to plan (blue is always a legal
/// maneuver); in the End Phase, the players not yet done (`done` is always legal for them).
pub fn to_act(s: &State, out: &mut Vec<Owner>) {
    out.reserve(s.done.len());
    match turn(s) {
        Turn::Over => {}
        Turn::Ship(i) | Turn::Attacker(i) | Turn::Defender(i) => out.push(s.ships[i].owner),
        Turn::Planning => {
            for p in 0..s.done.len() {
                let owner = Owner(p as u16);
                let planning = s
                    .ships
                    .iter()
                    .enumerate()
                    .any(|(i, sh)| sh.owner == owner && sh.planned.is_none() && s.in_play(i));
                if planning {
                    out.push(owner);
                }
            }
        }
        Turn::End => {
            for (p, &done) in s.done.iter().enumerate() {
                if !s.ledger.is_exhausted(done) {
                    out.push(Owner(p as u16));
                }
            }
        }
    }
}

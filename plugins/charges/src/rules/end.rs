//! The clock and the End Phase: phases end while nobody has anything to do, and the round ends with the
//! kernel's upkeep (circular tokens removed, recurring charges, C6-C10, C18) and the win check.

use crate::rules::damage::spend_recovered_energy;
use crate::state::{Phase, Stage, State, kind};
use crate::turn::ship_to_act;
use crate::words::note;
use coffer_core::{Cause, Key, Owner, Scope};

/// Moves the clock on while nobody has anything to do: ends phases, and ends the round with the End
/// Phase's upkeep (C6/C7 order) and the win check.
pub fn advance(s: &mut State) {
    loop {
        s.current = ship_to_act(s);
        if settled(s) {
            return;
        }
        if s.phase() < Phase::End {
            s.ledger.end_scope(Scope::Phase);
        } else {
            end_round(s);
        }
    }
}

/// Whether the clock stays where it is: the game is over, or somebody has something to do in this phase
/// (`s.current` up to date).
pub(crate) fn settled(s: &State) -> bool {
    if s.winners.is_some() {
        return true;
    }
    match s.phase() {
        Phase::Planning => (0..s.ships.len()).any(|i| s.in_play(i) && s.ships[i].planned.is_none()),
        Phase::System | Phase::Activation | Phase::Engagement => {
            s.attack.is_some() || s.current.is_some()
        }
        Phase::End => (0..s.done.len()).any(|p| {
            !s.ledger.is_exhausted(s.done[p])
                && (0..s.ships.len()).any(|i| s.ships[i].owner.index() == p && s.alive(i))
        }),
    }
}

/// The End Phase after every End-Phase ability: the kernel's upkeep at the end of the round removes the
/// circular tokens (focus, evade, disarm) and then applies recurring and negative recurring charges
/// (C6, C7, C8, C9, C10), readies the per-round permanents; then the win check.
pub(crate) fn end_round(s: &mut State) {
    // Each ship's energy before the upkeep, to see which recovered some (at most 4 players of 4 ships).
    let mut energy = [0u32; 4 * crate::content::MAX_SHIPS_PER_PLAYER];
    for (e, sh) in energy.iter_mut().zip(&s.ships) {
        *e = s.active(sh.energy);
    }
    s.ledger.end_scope(Scope::Act);
    for (i, &before) in energy.iter().enumerate().take(s.ships.len()) {
        if s.alive(i) && s.active(s.ships[i].energy) > before {
            // Cannot fail: the ship has the stress and the energy it pays with.
            let _ = spend_recovered_energy(s, i, Cause::Upkeep(Scope::Act));
        }
    }
    for sh in &mut s.ships {
        sh.planned = None;
        sh.revealed = false;
        sh.stage = Stage::default();
    }
    let players = s.done.len();
    let mut alive = [0u32; 8];
    for i in 0..s.ships.len() {
        if s.alive(i) {
            alive[s.ships[i].owner.index().min(7)] += 1;
        }
    }
    let standing = alive[..players.min(8)].iter().filter(|&&n| n > 0).count();
    if standing <= 1 || s.rounds() >= s.max_rounds {
        let best = alive.iter().copied().max().unwrap_or(0);
        let winners: Vec<Owner> = (0..players)
            .filter(|&p| best > 0 && alive[p.min(7)] == best)
            .map(|p| Owner(p as u16))
            .collect();
        let c = Cause::Upkeep(Scope::Act);
        for &w in &winners {
            let key = Key::new(w, kind::DONE, 0);
            s.ledger.note(key, note::WINS, [best as i32, 0, 0], c);
        }
        if winners.is_empty() {
            s.ledger
                .note(Key::new(Owner::GAME, kind::DONE, 0), note::DRAW, [0; 3], c);
        }
        s.winners = Some(winners);
    }
}

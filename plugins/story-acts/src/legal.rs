//! Who acts and the legal list: the players who may have an action now, and every action of one of them,
//! candidates filtered by the one check [`validate`](crate::validate::validate).

use crate::actions::{Action, CpSplit};
use crate::cards::Band;
use crate::content::{CardType, Effect};
use crate::state::{Phase, State};
use crate::validate::{ready_perm, validate_in};
use coffer_core::Owner;

/// Appends the players who may have a legal action (see [`legal`]): nobody once the game is won or outside
/// the Main phase, only the chooser while a discard is pending; else the active player, and each other
/// player holding a fast Maneuver or controlling a ready card that prints Votes (the only actions taken out
/// of turn).
pub fn to_act(s: &State, out: &mut Vec<Owner>) {
    if s.winners.is_some() {
        return;
    }
    if let Some(d) = s.ledger.pending().first() {
        if d.key.owner.0 < s.players() {
            out.push(d.key.owner);
        }
        return;
    }
    if s.phase != Phase::Main {
        return;
    }
    if s.players() > 64 {
        // More players than bits below (a game has at most 4): list everybody, which is always allowed.
        out.extend((0..s.players()).map(Owner));
        return;
    }
    // Players who may commit Votes out of turn, as bits (no allocation per action).
    let mut out_of_turn = 0u64;
    for (card, c) in s.play() {
        // The conditions `check` puts on committing Votes, but the phase (Main here).
        if c.controller != s.active
            && s.rules.db.get(c.def).votes > 0
            && ready_perm(s, card).is_ok()
        {
            out_of_turn |= 1u64.checked_shl(u32::from(c.controller)).unwrap_or(0);
        }
    }
    for p in (0..s.players()).map(Owner) {
        let fast = || {
            s.hands[p.index()]
                .iter()
                .any(|&card| s.def(card).fast_maneuver())
        };
        let votes = out_of_turn & 1u64.checked_shl(u32::from(p.0)).unwrap_or(0) != 0;
        if p == s.active() || votes || fast() {
            out.push(p);
        }
    }
}

/// Appends every legal action of `p` to `out` (the legal-action list: candidates filtered by [`validate`](crate::validate::validate)).
pub fn legal(s: &State, p: Owner, out: &mut Vec<Action>) {
    if s.winners.is_some() || p.0 >= s.players() {
        return;
    }
    let occupied = s.occupied_surfaces();
    let mut push = |a: Action| {
        if validate_in(s, Some(occupied), p, &a).is_ok() {
            out.push(a);
        }
    };
    if let Some(d) = s.ledger.pending().first() {
        if d.key.owner == p {
            for &card in &s.hands[p.index()] {
                push(Action::Discard { card });
            }
        }
        return;
    }
    if s.phase != Phase::Main {
        return;
    }
    let mine = p == s.active();
    for &card in &s.hands[p.index()] {
        let d = s.def(card);
        if !(mine || d.fast_maneuver()) {
            continue;
        }
        let mut each_target = |target: Option<u16>| {
            if d.cp_cost == 0 {
                push(Action::Deploy {
                    card,
                    target,
                    cp: CpSplit::default(),
                });
            } else {
                let mut split = CpSplit::default();
                splits(s, p, 0, d.cp_cost, &mut split, &mut |cp| {
                    push(Action::Deploy { card, target, cp })
                });
            }
        };
        match d.effect.and_then(Effect::target) {
            None => each_target(None),
            Some(_) => {
                for (t, c) in s.play() {
                    if c.cp.is_some() {
                        each_target(Some(t));
                    }
                }
            }
        }
    }
    for (card, c) in s.play() {
        if c.controller != p.0 {
            continue;
        }
        let d = s.rules.db.get(c.def);
        if d.votes > 0 {
            push(Action::CommitVotes { card });
        }
        if !mine {
            continue;
        }
        if d.ev > 0 {
            push(Action::AddEv { card });
        }
        if d.ability.is_some() {
            push(Action::UseAbility { card });
        }
        match d.card_type {
            CardType::Storyline => {
                push(Action::AdvanceStoryline { card });
                push(Action::CompleteStoryline { card });
            }
            CardType::Location if c.contested => push(Action::Restore { location: card }),
            t if t.is_unit() => {
                let ready = s
                    .handles
                    .perm(c)
                    .is_some_and(|id| !s.ledger.is_exhausted(id));
                if let Some(b) = c.band.filter(|_| ready) {
                    s.adjacent_in(occupied, b, |to| push(Action::Move { card, to }));
                    if let Band::Surface(_) = b {
                        for (l, lc) in s.play() {
                            if lc.band == Some(b) && lc.controller != p.0 {
                                push(Action::Capture {
                                    location: l,
                                    unit: card,
                                });
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if mine {
        let votes = s.pool_votes(p);
        let per = i64::from(s.config().votes_per_factor_step).max(1);
        if votes >= per {
            for (f, def) in s.config().factors.iter().enumerate() {
                let v = s.factor(f);
                for (up, room) in [(true, def.max - v), (false, v - def.min)] {
                    // Candidates up to what the track and the pool allow; `check` decides each.
                    let most = room.min(votes / per).clamp(0, 255);
                    for steps in 1..=most as u8 {
                        push(Action::PushFactor {
                            factor: f as u8,
                            up,
                            steps,
                        });
                    }
                }
            }
        }
        push(Action::EndTurn {});
    }
}

/// Enumerates every canonical CP split of `left` over `p`'s permanents with CP, from card `start` on.
fn splits(
    s: &State,
    p: Owner,
    start: usize,
    left: u32,
    split: &mut CpSplit,
    f: &mut dyn FnMut(CpSplit),
) {
    if left == 0 {
        f(*split);
        return;
    }
    for (i, c) in s.play() {
        let i = usize::from(i);
        if i < start || c.controller != p.0 {
            continue;
        }
        let Some(cp) = s.handles.cp(c) else {
            continue;
        };
        let have = u32::try_from(s.ledger.value(cp).max(0)).unwrap_or(u32::MAX);
        for n in 1..=left.min(have) {
            split.push(i as u16, n as u16);
            splits(s, p, i + 1, left - n, split, f);
            split.pop();
        }
    }
}

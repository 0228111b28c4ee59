//! State-based reactions (K11): an empty Treasury gives the S11 award; a card at 0 CP is destroyed, or a
//! Prime Character Falls (S8).

use crate::cards::Zone;
use crate::config::AwardTo;
use crate::state::{Seat, State, card_key, effect, key, kind, leave_play, note};
use coffer_core::{Cause, Change, Ledger, Owner, Refusal};

/// K11: reacts to what reached a floor (K1.5) since log position `from`: an empty Treasury gives the S11
/// award; a card at 0 CP is destroyed, or Falls if Morality Penalties took a Prime Character there (S8).
pub fn settle(s: &mut State, from: usize) -> Result<(), Refusal> {
    let rules = &s.rules;
    let cards = &mut s.cards;
    let handles = &s.handles;
    let in_play = &mut s.in_play;
    let seats = &mut s.seats;
    s.ledger.settle(from, 10_000, |l, ev| {
        let Change::Floor { .. } = ev.change else {
            return Ok::<(), Refusal>(());
        };
        let who = ev.key.owner;
        if ev.key.kind == kind::TREASURY {
            award(
                l,
                seats,
                rules.config.award_to,
                rules.config.award_sp,
                who.0,
            )?;
        } else if ev.key.kind == kind::CP {
            let i = ev.key.subject as usize;
            let c = cards[i];
            // State-based: only a card in play still at 0 CP is affected.
            if c.zone != Zone::Play || handles.cp(&c).is_some_and(|cp| l.value(cp) != 0) {
                return Ok(());
            }
            let d = rules.db.get(c.def);
            let morality = ev.cause == Cause::Effect(effect::MORALITY);
            let own = morality
                || matches!(ev.cause, Cause::Action { player, .. } if player.0 == c.controller);
            let card = key(Owner(c.owner), kind::CARD, i as u32);
            if morality && d.prime && !c.fallen {
                cards[i].fallen = true;
                let fallen_cp = i32::try_from(d.fallen_cp).unwrap_or(i32::MAX);
                l.note(card, note::FALLS, [fallen_cp, 0, 0], ev.cause);
                if let Some(cp) = handles.cp(&c) {
                    l.set(cp, i64::from(d.fallen_cp), Cause::Effect(effect::FALL))?;
                }
                let seat = &mut seats[usize::from(c.owner)];
                if rules.config.fall_flips_homeworld && seat.prime_face {
                    seat.prime_face = false;
                    let homeworld = card_key(Owner(c.owner), seat.homeworld);
                    l.note(
                        homeworld,
                        note::PRIME_LOST,
                        [0; 3],
                        Cause::Effect(effect::FALL),
                    );
                }
            } else {
                l.note(card, note::DESTROYED, [0; 3], Cause::StateCheck);
                leave_play(cards, in_play, i as u16, Zone::Discard);
            }
            if own {
                award(
                    l,
                    seats,
                    rules.config.award_to,
                    rules.config.award_sp,
                    c.controller,
                )?;
            }
        }
        Ok(())
    })?;
    Ok(())
}

/// S11: the self-inflicted award for `who`'s empty Treasury or own Character's Fall or destruction.
fn award(l: &mut Ledger, seats: &[Seat], to: AwardTo, sp: u32, who: u16) -> Result<(), Refusal> {
    let n = seats.len() as u16;
    let cause = Cause::Effect(effect::AWARD);
    match to {
        AwardTo::Nobody => {}
        AwardTo::NextPlayer => {
            l.gain(seats[usize::from((who + 1) % n)].sp, u64::from(sp), cause)?;
        }
        AwardTo::EachOpponent => {
            for q in 0..n {
                if q != who {
                    l.gain(seats[usize::from(q)].sp, u64::from(sp), cause)?;
                }
            }
        }
    }
    Ok(())
}

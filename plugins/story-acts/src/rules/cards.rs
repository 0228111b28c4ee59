//! Cards' own rules: deploying and playing them (S3), what their printed Votes, EV and abilities do (S5,
//! S6, S8), their alignment and Morality Penalties (S8), Maneuver effects, and Storylines' steps.

use crate::actions::CpSplit;
use crate::cards::Zone;
use crate::content::{CardDef, CardType, Deed, Effect, MAX_CP_COST};
use crate::rules::turns::draw;
use crate::state::{State, card_key, effect, note};
use coffer_core::{Cause, Owner, Part, Refusal};

/// The cost-relevant part of a card definition (copied so the state can be borrowed mutably).
#[derive(Clone, Copy)]
struct Costs {
    maneuver: bool,
    cost: u32,
    vote_cost: u32,
    effect: Option<Effect>,
}

impl Costs {
    /// Card `d`'s costs.
    fn of(d: &CardDef) -> Costs {
        Costs {
            maneuver: d.card_type == CardType::Maneuver,
            cost: d.cost,
            vote_cost: d.vote_cost,
            effect: d.effect,
        }
    }
}

/// `p` deploys `card` from hand, or plays it when a Maneuver (its effect resolved on `target`), paying
/// its Currency, Vote and CP costs (S3, S8).
pub(crate) fn deploy(
    s: &mut State,
    p: Owner,
    card: u16,
    target: Option<u16>,
    cp: CpSplit,
    cause: Cause,
) -> Result<(), Refusal> {
    let seat = s.seats[p.index()];
    let d = Costs::of(s.def(card));
    let what = if d.maneuver { note::PLAY } else { note::DEPLOY };
    s.ledger.note(card_key(p, card), what, [0; 3], cause);
    if d.maneuver {
        s.ledger.pay_cost(
            &[
                Part::Spend(seat.treasury, u64::from(d.cost)),
                Part::Spend(seat.votes, u64::from(d.vote_cost)),
            ],
            cause,
        )?;
    } else {
        s.ledger.spend(seat.treasury, u64::from(d.cost), cause)?;
    }
    if !cp.is_empty() {
        let mut alloc = [(seat.treasury, 0u64); MAX_CP_COST as usize];
        let parts = cp.parts();
        for (i, &(h, n)) in parts.iter().enumerate() {
            let id = s
                .cp_id(h)
                .ok_or_else(|| Refusal::Invalid(format!("card #{h} has no CP to pay with")))?;
            alloc[i] = (id, u64::from(n));
        }
        s.ledger
            .spend_split(&alloc[..parts.len()], u64::from(cp.total()), cause)?;
    }
    let hand = &mut s.hands[p.index()];
    if let Some(i) = hand.iter().position(|&h| h == card) {
        hand.remove(i);
    }
    let band = s.deploy_band(s.def(card), p);
    if d.maneuver {
        s.cards[usize::from(card)].zone = Zone::Discard;
        if let Some(e) = d.effect {
            resolve(s, p, e, target, cause)?;
        }
    } else {
        s.put_in_play(card, band);
    }
    Ok(())
}

/// `card` commits its printed Votes to `p`'s Resource Pool (S5).
pub(crate) fn commit_votes(
    s: &mut State,
    p: Owner,
    card: u16,
    cause: Cause,
) -> Result<(), Refusal> {
    to_pool(s, p, card, Deed::CommitVotes, cause)
}

/// `card` adds its printed EV to `p`'s Resource Pool (S6).
pub(crate) fn add_ev(s: &mut State, p: Owner, card: u16, cause: Cause) -> Result<(), Refusal> {
    to_pool(s, p, card, Deed::AddEv, cause)
}

/// Activates `card` and adds what it prints for `deed` (its Votes, committed, or its EV) to `p`'s
/// Resource Pool, then its alignment and Penalties for the deed (S8).
fn to_pool(
    s: &mut State,
    p: Owner,
    card: u16,
    deed_done: Deed,
    cause: Cause,
) -> Result<(), Refusal> {
    let seat = s.seats[p.index()];
    activate(s, card, cause)?;
    let votes = deed_done == Deed::CommitVotes;
    let (pool, n) = if votes {
        (seat.votes, s.def(card).votes)
    } else {
        (seat.ev, s.def(card).ev)
    };
    s.ledger.gain(pool, u64::from(n), cause)?;
    s.cards[usize::from(card)].committed = votes;
    deed(s, card, deed_done)
}

/// `p` uses `card`'s "-X CP:" ability (S8): one use this turn and its CP, then its effect.
pub(crate) fn use_ability(s: &mut State, p: Owner, card: u16, cause: Cause) -> Result<(), Refusal> {
    let ab = s
        .def(card)
        .ability
        .ok_or_else(|| Refusal::Invalid(format!("card #{card} has no \"-X CP:\" ability")))?;
    let (Some(track), Some(cp)) = (s.ability_id(card), s.cp_id(card)) else {
        return Err(Refusal::Invalid(format!(
            "card #{card} has no ability track or no CP"
        )));
    };
    s.ledger.pay_cost(
        &[Part::Charges(track, 1), Part::Spend(cp, u64::from(ab.cp))],
        cause,
    )?;
    resolve(s, p, ab.effect, None, cause)?;
    Ok(())
}

/// `p` advances Storyline `card` one step, paying its EV per step.
pub(crate) fn advance_storyline(
    s: &mut State,
    p: Owner,
    card: u16,
    cause: Cause,
) -> Result<(), Refusal> {
    let seat = s.seats[p.index()];
    let (per, steps) = (s.def(card).ev_per_step, s.def(card).steps);
    s.ledger.spend(seat.ev, u64::from(per), cause)?;
    let c = &mut s.cards[usize::from(card)];
    c.progress += 1;
    let done = [i32::from(c.progress), steps as i32, 0];
    s.ledger.note(card_key(p, card), note::ADVANCE, done, cause);
    Ok(())
}

/// Activates (exhausts) permanent `card` (K5).
pub(crate) fn activate(s: &mut State, card: u16, cause: Cause) -> Result<(), Refusal> {
    let perm = s.perm_id(card).ok_or_else(|| {
        Refusal::Invalid(format!(
            "card #{card} is not a permanent: it cannot be activated"
        ))
    })?;
    s.ledger.activate(perm, cause)
}

/// S8: a card's aligned ability raises its CP, its Penalties lower it (Morality Penalties).
pub(crate) fn deed(s: &mut State, card: u16, deed: Deed) -> Result<(), Refusal> {
    let Some(cp) = s.cp_id(card) else {
        return Ok(());
    };
    let d = s.def(card);
    let (aligned, penalty) = (d.aligned, d.penalty);
    if let Some(t) = aligned.filter(|t| t.on == deed) {
        s.ledger
            .gain(cp, u64::from(t.cp), Cause::Effect(effect::ALIGNED))?;
    }
    if let Some(t) = penalty.filter(|t| t.on == deed) {
        s.ledger
            .pay(cp, u64::from(t.cp), Cause::Effect(effect::MORALITY))?;
    }
    Ok(())
}

/// Resolves effect `e` of a card `p` played or used, on `target` when it names one.
pub(crate) fn resolve(
    s: &mut State,
    p: Owner,
    e: Effect,
    target: Option<u16>,
    cause: Cause,
) -> Result<(), Refusal> {
    let seat = s.seats[p.index()];
    match e {
        Effect::GainCurrency(n) => {
            s.ledger.gain(seat.treasury, u64::from(n), cause)?;
        }
        Effect::OpponentsPay(n) => {
            for q in (0..s.players()).map(Owner) {
                if q != p {
                    s.ledger
                        .pay(s.seats[q.index()].treasury, u64::from(n), cause)?;
                }
            }
        }
        Effect::AddVotes(n) => {
            s.ledger.gain(seat.votes, u64::from(n), cause)?;
        }
        Effect::AddEv(n) => {
            s.ledger.gain(seat.ev, u64::from(n), cause)?;
        }
        Effect::DrawCards(n) => draw(s, p, n, cause),
        Effect::DrainCp(n) | Effect::GainCp(n) => {
            let t =
                target.ok_or_else(|| Refusal::Invalid("the effect needs a target card".into()))?;
            let cp = s
                .cp_id(t)
                .ok_or_else(|| Refusal::Invalid(format!("card #{t} has no CP")))?;
            if matches!(e, Effect::DrainCp(_)) {
                s.ledger.pay(cp, u64::from(n), cause)?;
            } else {
                s.ledger.gain(cp, u64::from(n), cause)?;
            }
        }
    }
    Ok(())
}

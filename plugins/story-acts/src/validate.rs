//! One check per action, shared by [`apply`](crate::apply::apply) and the legal list
//! ([`legal`](crate::legal::legal)): who may take it now, and whether the rules and the costs allow it. It
//! changes nothing, and a refusal is a [`Why`] without text ([`State::explain`] writes it in words).

use crate::actions::{Action, CpSplit};
use crate::cards::{Band, Card, Zone};
use crate::content::{CardType, Effect};
use crate::refusals::{PendingChoice, Rule, Why};
use crate::state::{Phase, State};
use coffer_core::{AmountId, Owner, Refusal};

/// `Ok` when `ok`, else the refusal of rule `why`.
fn rule(ok: bool, why: Rule) -> Result<(), Why> {
    if ok { Ok(()) } else { Err(Why::Rule(why)) }
}

/// K8.2: the kernel's check of spending `need` from `id`, as the refusal the rulebook words.
fn afford(s: &State, id: AmountId, need: u64) -> Result<(), Why> {
    s.ledger
        .can_spend(id, need)
        .map_err(|refused| match refused {
            Refusal::Insufficient { key, need, have } => Why::Short(key, need, have),
            _ => Why::Rule(Rule::Inconsistent),
        })
}

/// Card `card`, if it is in `p`'s hand (`zone` Hand) or in play under `p`'s control (`zone` Play).
/// A card that is not in `p`'s hand is refused the same way wherever it is: the refusal must not tell
/// where a hidden card lies.
fn card_of(s: &State, card: u16, p: Owner, zone: Zone) -> Result<&Card, Why> {
    let c = s
        .cards
        .get(usize::from(card))
        .ok_or(Why::Rule(Rule::NoSuchCard(card)))?;
    if zone == Zone::Hand {
        rule(
            c.zone == Zone::Hand && c.owner == p.0,
            Rule::NotInHand(card),
        )?;
    } else {
        rule(c.zone == Zone::Play, Rule::NotInPlay(card))?;
        rule(c.controller == p.0, Rule::NotYours(card))?;
    }
    Ok(c)
}

/// A slow action: only the active player, in their main phase.
fn slow(s: &State, p: Owner) -> Result<(), Why> {
    if p != s.active() {
        return Err(Why::Slow);
    }
    if s.phase != Phase::Main {
        return Err(Why::NotMain);
    }
    Ok(())
}

/// A Fast action: any player, in a main phase.
fn fast(s: &State) -> Result<(), Why> {
    if s.phase != Phase::Main {
        return Err(Why::NotMain);
    }
    Ok(())
}

/// Card `card` is a permanent and ready (K5).
///
/// # Errors
/// [`Why`] it is not.
pub fn ready_perm(s: &State, card: u16) -> Result<(), Why> {
    let perm = s.perm_id(card).ok_or(Why::Rule(Rule::NotPermanent(card)))?;
    rule(!s.ledger.is_exhausted(perm), Rule::Exhausted(card))
}

/// Checks an action without changing anything; `Ok` exactly when [`apply`](crate::apply::apply) will
/// apply it.
///
/// # Errors
/// Why it is not legal now ([`State::explain`] writes it in words).
pub fn validate(s: &State, p: Owner, a: &Action) -> Result<(), Why> {
    validate_in(s, None, p, a)
}

/// [`validate`], with the Surface Bands' occupancy already known when `occupied` is given.
pub(crate) fn validate_in(
    s: &State,
    occupied: Option<u32>,
    p: Owner,
    a: &Action,
) -> Result<(), Why> {
    if s.winners.is_some() {
        return Err(Why::Over);
    }
    if p.0 >= s.players() {
        return Err(Why::NoPlayer(p.0));
    }
    if let Action::Discard { card } = *a {
        let Some(d) = s.ledger.pending().first() else {
            return Err(Why::Rule(Rule::NothingToDiscard));
        };
        if d.key.owner != p {
            return Err(Why::OtherDiscards(d.key.owner));
        }
        card_of(s, card, p, Zone::Hand)?;
        return Ok(());
    }
    if let Some(d) = s.ledger.pending().first() {
        return Err(Why::Pending(PendingChoice {
            owner: d.key.owner,
            key: d.key,
            excess: d.excess,
        }));
    }
    match *a {
        Action::Deploy { card, target, cp } => deploy(s, p, card, target, cp),
        Action::CommitVotes { card } => commit_votes(s, p, card),
        Action::AddEv { card } => add_ev(s, p, card),
        Action::PushFactor { factor, up, steps } => push_factor(s, p, factor, up, steps),
        Action::UseAbility { card } => use_ability(s, p, card),
        Action::Move { card, to } => move_unit(s, occupied, p, card, to),
        Action::Capture { location, unit } => capture(s, p, location, unit),
        Action::Restore { location } => restore(s, p, location),
        Action::AdvanceStoryline { card } => advance_storyline(s, p, card),
        Action::CompleteStoryline { card } => complete_storyline(s, p, card),
        Action::EndTurn {} => slow(s, p),
        Action::Discard { .. } => Ok(()),
    }
}

/// Deploying (or playing) `card` from hand (S3): its speed, its costs (Currency, Votes, CP split, S8), its target.
fn deploy(s: &State, p: Owner, card: u16, target: Option<u16>, cp: CpSplit) -> Result<(), Why> {
    let c = card_of(s, card, p, Zone::Hand)?;
    let d = s.rules.db.get(c.def);
    if d.fast_maneuver() {
        fast(s)?;
    } else {
        slow(s, p)?;
    }
    afford(s, s.seats[p.index()].treasury, u64::from(d.cost))?;
    let seat = &s.seats[p.index()];
    match d.effect.and_then(Effect::target) {
        Some(own) => {
            let t = target.ok_or(Why::Rule(Rule::NeedsTarget(card)))?;
            let tc = s
                .cards
                .get(usize::from(t))
                .ok_or(Why::Rule(Rule::NoSuchCard(t)))?;
            rule(
                tc.zone == Zone::Play && tc.cp.is_some(),
                Rule::BadTarget { card, target: t },
            )?;
            rule(
                (tc.controller == p.0) == own,
                Rule::WrongController { card, target: t },
            )?;
        }
        None => {
            if let Some(t) = target {
                return Err(Why::Rule(Rule::TakesNoTarget { card, target: t }));
            }
        }
    }
    if d.card_type == CardType::Maneuver {
        afford(s, seat.votes, u64::from(d.vote_cost))?;
        if d.requires_control {
            rule(s.political_control() == Some(p), Rule::NeedsControl(card))?;
        }
    }
    rule(
        cp.total() == d.cp_cost,
        Rule::SplitSum {
            card,
            total: cp.total(),
        },
    )?;
    let mut last: Option<u16> = None;
    for &(h, n) in cp.parts() {
        rule(n > 0, Rule::SplitZero(h))?;
        if let Some(after) = last {
            rule(h > after, Rule::SplitOrder { card: h, after })?;
        }
        last = Some(h);
        let hc = card_of(s, h, p, Zone::Play)?;
        let id = s.handles.cp(hc).ok_or(Why::Rule(Rule::NoCp(h)))?;
        afford(s, id, u64::from(n))?;
    }
    Ok(())
}

/// Committing a ready card's printed Votes (S5), a Fast action.
fn commit_votes(s: &State, p: Owner, card: u16) -> Result<(), Why> {
    fast(s)?;
    let c = card_of(s, card, p, Zone::Play)?;
    rule(s.rules.db.get(c.def).votes > 0, Rule::NoVotes(card))?;
    ready_perm(s, card)
}

/// Adding a ready permanent's printed EV (S6).
fn add_ev(s: &State, p: Owner, card: u16) -> Result<(), Why> {
    slow(s, p)?;
    let c = card_of(s, card, p, Zone::Play)?;
    rule(s.rules.db.get(c.def).ev > 0, Rule::NoEv(card))?;
    ready_perm(s, card)
}

/// Pushing a Galactic Factor (S5): room on its track, committed Votes to pay.
fn push_factor(s: &State, p: Owner, factor: u8, up: bool, steps: u8) -> Result<(), Why> {
    let cfg = s.config();
    slow(s, p)?;
    let f = usize::from(factor);
    rule(f < s.factors.len(), Rule::NoSuchFactor(factor))?;
    rule(steps > 0, Rule::ZeroSteps)?;
    let def = &cfg.factors[f];
    let v = s.factor(f);
    let room = if up { def.max - v } else { v - def.min };
    rule(i64::from(steps) <= room, Rule::NoRoom { factor, up, steps })?;
    let need = u64::from(steps) * u64::from(cfg.votes_per_factor_step);
    afford(s, s.seats[p.index()].votes, need)
}

/// Using a Character's "-X CP:" ability (S8): unused this turn, its CP to pay.
fn use_ability(s: &State, p: Owner, card: u16) -> Result<(), Why> {
    slow(s, p)?;
    let c = card_of(s, card, p, Zone::Play)?;
    let ab = s
        .rules
        .db
        .get(c.def)
        .ability
        .ok_or(Why::Rule(Rule::NoAbility(card)))?;
    let track = s
        .handles
        .ability(c)
        .ok_or(Why::Rule(Rule::NoAbility(card)))?;
    rule(s.ledger.active(track) > 0, Rule::AbilityUsed(card))?;
    let cp = s.handles.cp(c).ok_or(Why::Rule(Rule::NoCp(card)))?;
    afford(s, cp, u64::from(ab.cp))
}

/// Moving a ready unit to an adjacent Band (S15).
fn move_unit(s: &State, occupied: Option<u32>, p: Owner, card: u16, to: Band) -> Result<(), Why> {
    slow(s, p)?;
    let c = card_of(s, card, p, Zone::Play)?;
    rule(
        s.rules.db.get(c.def).card_type.is_unit(),
        Rule::NotUnit(card),
    )?;
    ready_perm(s, card)?;
    rule(
        to.player().is_none_or(|q| q.0 < s.players()),
        Rule::NoSuchBand(to),
    )?;
    let from = c.band.ok_or(Why::Rule(Rule::NoBand(card)))?;
    rule(
        s.is_adjacent_in(occupied.unwrap_or_else(|| s.occupied_surfaces()), from, to),
        Rule::NotAdjacent { card, to },
    )
}

/// Capturing an undefended Surface Location with a ready unit there (S14).
fn capture(s: &State, p: Owner, location: u16, unit: u16) -> Result<(), Why> {
    slow(s, p)?;
    let u = card_of(s, unit, p, Zone::Play)?;
    rule(
        s.rules.db.get(u.def).card_type.is_unit(),
        Rule::NotUnit(unit),
    )?;
    ready_perm(s, unit)?;
    let Some(Band::Surface(q)) = u.band else {
        return Err(Why::Rule(Rule::NotInSurface(unit)));
    };
    let l = s
        .cards
        .get(usize::from(location))
        .ok_or(Why::Rule(Rule::NoSuchCard(location)))?;
    let ld = s.rules.db.get(l.def);
    rule(
        l.zone == Zone::Play && ld.card_type == CardType::Location,
        Rule::NotLocation(location),
    )?;
    rule(
        l.band == Some(Band::Surface(q)),
        Rule::LocationElsewhere { location, unit },
    )?;
    rule(l.controller != p.0, Rule::AlreadyYours(location))?;
    let defended = s.play().any(|(_, d)| {
        d.controller == l.controller
            && d.band == Some(Band::Surface(q))
            && s.rules.db.get(d.def).card_type.is_unit()
    });
    rule(!defended, Rule::Defended(location))
}

/// Restoring a Contested Surface Location one controls (S14): its cost in Currency.
fn restore(s: &State, p: Owner, location: u16) -> Result<(), Why> {
    let cfg = s.config();
    slow(s, p)?;
    let l = card_of(s, location, p, Zone::Play)?;
    rule(l.contested, Rule::NotContested(location))?;
    afford(s, s.seats[p.index()].treasury, u64::from(cfg.restore_cost))
}

/// Advancing a Storyline one step: steps left, its EV per step to pay.
fn advance_storyline(s: &State, p: Owner, card: u16) -> Result<(), Why> {
    slow(s, p)?;
    let c = card_of(s, card, p, Zone::Play)?;
    let d = s.rules.db.get(c.def);
    rule(d.card_type == CardType::Storyline, Rule::NotStoryline(card))?;
    rule(u32::from(c.progress) < d.steps, Rule::StepsDone(card))?;
    afford(s, s.seats[p.index()].ev, u64::from(d.ev_per_step))
}

/// Completing a Storyline whose steps are all done (S12).
fn complete_storyline(s: &State, p: Owner, card: u16) -> Result<(), Why> {
    slow(s, p)?;
    let c = card_of(s, card, p, Zone::Play)?;
    let d = s.rules.db.get(c.def);
    rule(d.card_type == CardType::Storyline, Rule::NotStoryline(card))?;
    rule(u32::from(c.progress) >= d.steps, Rule::StepsLeft(card))
}

//! The table one seat (or a spectator) sees: the Act, the phase, whose turn it is, who may act and why, and
//! the game's own state in sections: hands (cards only in their owner's table), decks and discard piles,
//! the cards in play by controller, the Galactic Factors, standing Vote, and the Acts' results.
//!
//! Built for one audience at a time, from public information plus that seat's own hand: another player's
//! hand is a count, a deck is a count for everybody, and who may act out of turn is what the audience can
//! know (a ready card printing Votes is public; a Fast Maneuver in hand shows only in its owner's table).

use crate::Action;
use crate::actions;
use crate::cards::{CardDef, CardType};
use crate::state::{Card, Phase, State, Zone};
use coffer_core::{Owner, Table};
use std::fmt::Write as _;

/// Fills `seat`'s table (`None`: a spectator's).
pub fn fill(s: &State, seat: Option<Owner>, t: &mut Table) {
    t.clock(u32::from(s.act), Some(s.phase.number()), None);
    if s.winners.is_none() {
        t.turn(Owner(s.active));
        acting(s, seat, t);
    }
    held(s, t);
    if let Some(p) = seat.filter(|p| p.0 < s.players()) {
        hand(s, p.0, t);
    }
    in_play(s, t);
    discards(s, t);
    factors(s, t);
    politics(s, t);
    results(s, t);
}

/// Who may act now, and why, as far as the audience may know.
fn acting(s: &State, seat: Option<Owner>, t: &mut Table) {
    if let Some(d) = s.ledger.pending().first() {
        let why = format!(
            "to discard {} down to the hand limit of {}",
            plural(u64::from(d.excess), "card", "cards"),
            s.config().hand_limit
        );
        t.act(d.key.owner, why);
        return;
    }
    if s.phase != Phase::Main {
        return;
    }
    t.act(
        Owner(s.active),
        "to take actions in the main phase, or end the turn",
    );
    for q in (0..s.players()).filter(|&q| q != s.active) {
        let votes = s.play().any(|(card, c)| {
            c.controller == q && s.rules.db.get(c.def).votes > 0 && s.ready_perm(card).is_ok()
        });
        let fast = seat == Some(Owner(q)) && fast_maneuver_playable(s, q);
        let why = match (votes, fast) {
            (true, true) => "to commit Votes or play a Fast Maneuver out of turn",
            (true, false) => "to commit Votes out of turn (a Fast action)",
            (false, true) => "to play a Fast Maneuver out of turn",
            (false, false) => continue,
        };
        t.act(Owner(q), why);
    }
}

/// Whether `q` may deploy a Fast Maneuver from hand now (their own business: asked only for their table).
fn fast_maneuver_playable(s: &State, q: u16) -> bool {
    if !s.hands[usize::from(q)]
        .iter()
        .any(|&c| s.def(c).fast_maneuver())
    {
        return false;
    }
    let mut legal = Vec::new();
    actions::legal(s, q, &mut legal);
    legal.iter().any(|a| matches!(a, Action::Deploy { .. }))
}

/// Hand and deck sizes, public.
fn held(s: &State, t: &mut Table) {
    let section = t.section("Hands and decks");
    for q in 0..s.players() {
        let o = Owner(q);
        section.row(o, "hand", count(s.hands[usize::from(q)].len()));
        section.row(o, "deck", count(s.decks[usize::from(q)].len()));
    }
}

/// The cards in `p`'s own hand, with their costs: only in `p`'s table.
fn hand(s: &State, p: u16, t: &mut Table) {
    let section = t.section("Hand");
    for &card in &s.hands[usize::from(p)] {
        let d = s.def(card);
        section.row(Owner(p), card_label(d, card), in_hand(d));
    }
}

/// The cards in play, grouped by controller: a captured Location under its captor.
fn in_play(s: &State, t: &mut Table) {
    let section = t.section("In play");
    for q in 0..s.players() {
        for (card, c) in s.play().filter(|(_, c)| c.controller == q) {
            let d = s.rules.db.get(c.def);
            section.row(Owner(q), card_label(d, card), on_table(s, card, c, d));
        }
    }
}

/// Each player's discard pile (played Maneuvers, completed Storylines, discarded and destroyed cards).
fn discards(s: &State, t: &mut Table) {
    let section = t.section("Discard piles");
    for q in 0..s.players() {
        let mut value = String::new();
        let mut n = 0usize;
        for (i, c) in s.cards.iter().enumerate() {
            if c.owner == q && c.zone == Zone::Discard {
                value.push_str(if n == 0 { ": " } else { ", " });
                let _ = write!(value, "{} (#{i})", s.rules.db.get(c.def).name);
                n += 1;
            }
        }
        let value = if n == 0 {
            "empty".to_owned()
        } else {
            let mut head = count(n);
            head.push_str(&value);
            head
        };
        section.row(Owner(q), "discard pile", value);
    }
}

/// The Galactic Factors: signed position on its track, and the Homeworlds that prefer a value (S13 (a)).
fn factors(s: &State, t: &mut Table) {
    let section = t.section("Galactic Factors");
    for (f, def) in s.config().factors.iter().enumerate() {
        let mut value = String::with_capacity(48);
        signed(&mut value, s.factor(f));
        let _ = write!(value, " (range {}..{})", def.min, def.max);
        for q in 0..s.players() {
            let hw = s.def(s.seats[usize::from(q)].homeworld);
            if let Some(pref) = hw.preferred.iter().find(|p| p.factor == def.name) {
                let _ = write!(value, "; p{q}'s {} prefers ", hw.name);
                signed(&mut value, pref.value);
            }
        }
        section.row(Owner::GAME, def.name.as_str(), value);
    }
}

/// Standing Vote and political control (S4).
fn politics(s: &State, t: &mut Table) {
    let section = t.section("Politics");
    for q in 0..s.players() {
        section.row(Owner(q), "standing Vote", s.standing_vote(q).to_string());
    }
    let control = match s.political_control() {
        Some(q) => format!("p{q}"),
        None => "nobody".to_owned(),
    };
    section.row(Owner::GAME, "political control", control);
}

/// Each Act's result, the Act in progress, and the winners once the game is over.
fn results(s: &State, t: &mut Table) {
    let section = t.section("Acts");
    for r in &s.results {
        let mut value = format!("won by p{}; SP", r.winner);
        for (q, sp) in r.scores.iter().enumerate() {
            let _ = write!(value, "{} p{q} {sp}", if q == 0 { "" } else { "," });
        }
        section.row(Owner::GAME, format!("Act {}", r.act), value);
    }
    match &s.winners {
        None => {
            section.row(Owner::GAME, format!("Act {}", s.act), "in progress");
        }
        Some(winners) => {
            let mut value = String::new();
            for (i, w) in winners.iter().enumerate() {
                let _ = write!(value, "{}p{w}", if i == 0 { "" } else { ", " });
            }
            let label = if winners.len() == 1 {
                "winner"
            } else {
                "winners"
            };
            section.row(Owner::GAME, label, value);
        }
    }
}

/// "Jedi Knight (#12)": a card by name and the number actions name it by.
fn card_label(d: &CardDef, card: u16) -> String {
    let mut label = String::with_capacity(d.name.len() + 8);
    let _ = write!(label, "{} (#{card})", d.name);
    label
}

/// A card in hand: its type and what playing it costs and does.
fn in_hand(d: &CardDef) -> String {
    let mut v = String::with_capacity(64);
    v.push_str(d.card_type.name());
    let _ = write!(v, ", cost {} Currency", d.cost);
    if d.vote_cost > 0 {
        let votes = coffer_core::plural(u64::from(d.vote_cost), "Vote", "Votes");
        let _ = write!(v, " + {} {votes}", d.vote_cost);
    }
    if d.cp_cost > 0 {
        let _ = write!(v, " + {} CP", d.cp_cost);
    }
    if d.fast {
        v.push_str(", Fast");
    }
    if d.requires_control {
        v.push_str(", needs political control");
    }
    if let Some(e) = d.effect {
        let _ = write!(v, ": {e}");
    }
    printed(&mut v, d);
    if d.card_type == CardType::Storyline {
        let _ = write!(
            v,
            ", {} steps of {} EV, reward {} SP",
            d.steps, d.ev_per_step, d.reward
        );
    }
    v
}

/// What a card prints that matters in play: CP, Votes, EV, income.
fn printed(v: &mut String, d: &CardDef) {
    if let Some(cp) = d.cp {
        let _ = write!(v, ", {cp} CP");
    }
    if d.votes > 0 {
        let _ = write!(
            v,
            ", {} {}",
            d.votes,
            coffer_core::plural(u64::from(d.votes), "Vote", "Votes")
        );
    }
    if d.ev > 0 {
        let _ = write!(v, ", Add {} EV", d.ev);
    }
    if d.income > 0 {
        let _ = write!(v, ", income {}", d.income);
    }
    if let Some(a) = d.ability {
        let _ = write!(v, ", -{} CP: {}", a.cp, a.effect);
    }
}

/// A card in play: where it is and its state.
fn on_table(s: &State, card: u16, c: &Card, d: &CardDef) -> String {
    let mut v = String::with_capacity(64);
    v.push_str(d.card_type.name());
    if let Some(band) = c.band {
        let _ = write!(v, " in {}", band);
    }
    if c.owner != c.controller {
        let _ = write!(v, ", owned by p{}", c.owner);
    }
    if let Some(perm) = s.perm_id(card) {
        if s.ledger.is_exhausted(perm) {
            v.push_str(if c.committed {
                ", exhausted (Votes committed)"
            } else {
                ", exhausted"
            });
        } else {
            v.push_str(", ready");
        }
    }
    if let Some(cp) = s.cp_id(card) {
        let _ = write!(v, ", {} CP", s.ledger.value(cp));
    }
    if s.ability_id(card).is_some_and(|a| s.ledger.active(a) == 0) {
        v.push_str(", ability used this turn");
    }
    if c.contested {
        v.push_str(", Contested");
    }
    if c.fallen {
        v.push_str(", Fallen");
    }
    if d.card_type == CardType::Storyline {
        let _ = write!(v, ", {} of {} steps done", c.progress, d.steps);
    }
    if d.card_type == CardType::Homeworld {
        let prime = s.seats[usize::from(c.owner)].prime_face;
        v.push_str(if prime {
            ", Prime face up"
        } else {
            ", off its Prime face"
        });
    }
    v
}

/// "1 card", "5 cards".
fn count(n: usize) -> String {
    plural(n as u64, "card", "cards")
}

/// A count and its noun.
fn plural(n: u64, one: &'static str, many: &'static str) -> String {
    format!("{n} {}", coffer_core::plural(n, one, many))
}

/// A track position with its sign: "+2", "0", "-1".
fn signed(out: &mut String, v: i64) {
    if v > 0 {
        let _ = write!(out, "+{v}");
    } else {
        let _ = write!(out, "{v}");
    }
}

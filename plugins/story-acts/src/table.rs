//! The table one seat (or a spectator) sees: the Act, the phase, whose turn it is, who may act and why, and
//! the game's own state in sections: hands (cards only in their owner's table), decks and discard piles,
//! the cards in play by controller, the Galactic Factors, standing Vote, and the Acts' results.
//!
//! Built for one audience at a time, from public information plus that seat's own hand: another player's
//! hand is a count, a deck is a count for everybody, and who may act out of turn is what the audience can
//! know (a ready card printing Votes is public; a Fast Maneuver in hand shows only in its owner's table).

use crate::actions::Action;
use crate::cards::{Band, Card, Zone};
use crate::content::{CardDef, CardType};
use crate::legal;
use crate::state::{Phase, State, card_key};
use crate::validate::ready_perm;
use coffer_core::{Owner, Table};
use std::fmt::Write as _;

/// Fills `seat`'s table (`None`: a spectator's).
pub fn fill(s: &State, seat: Option<Owner>, t: &mut Table) {
    t.sections.reserve(8);
    t.clock(u32::from(s.act), Some(s.phase.number()), None);
    if s.winners.is_none() {
        t.turn(s.active());
        acting(s, seat, t);
    }
    held(s, t);
    if let Some(p) = seat.filter(|p| p.0 < s.players()) {
        hand(s, p, t);
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
    for q in (0..s.players()).map(Owner).filter(|&q| q != s.active()) {
        let votes = s.play().any(|(card, c)| {
            c.controller == q.0 && s.rules.db.get(c.def).votes > 0 && ready_perm(s, card).is_ok()
        });
        let fast = seat == Some(q) && fast_maneuver_playable(s, q);
        let why = match (votes, fast) {
            (true, true) => "to commit Votes or play a Fast Maneuver out of turn",
            (true, false) => "to commit Votes out of turn (a Fast action)",
            (false, true) => "to play a Fast Maneuver out of turn",
            (false, false) => continue,
        };
        t.act(q, why);
    }
}

/// Whether `q` may deploy a Fast Maneuver from hand now (their own business: asked only for their table).
fn fast_maneuver_playable(s: &State, q: Owner) -> bool {
    if !s.hands[q.index()].iter().any(|&c| s.def(c).fast_maneuver()) {
        return false;
    }
    let mut legal = Vec::new();
    legal::legal(s, q, &mut legal);
    legal.iter().any(|a| matches!(a, Action::Deploy { .. }))
}

/// Hand and deck sizes, public.
fn held(s: &State, t: &mut Table) {
    let section = t.section("Hands and decks");
    section.rows.reserve(2 * usize::from(s.players()));
    for q in 0..s.players() {
        let o = Owner(q);
        section.row(o, "hand", count(s.hands[usize::from(q)].len()));
        section.row(o, "deck", count(s.decks[usize::from(q)].len()));
    }
}

/// The cards in `p`'s own hand, with their costs: only in `p`'s table.
fn hand(s: &State, p: Owner, t: &mut Table) {
    let cards = &s.hands[p.index()];
    let section = t.section("Hand");
    section.rows.reserve(cards.len());
    for &card in cards {
        let d = s.def(card);
        section.row(p, card_label(d, card), in_hand(d));
    }
    // Notes about these cards (drawn, discarded) are keyed by the card: name them for this seat only.
    for &card in cards {
        t.label(card_key(p, card), card_label(s.def(card), card));
    }
}

/// The cards in play, grouped by controller: a captured Location under its captor.
fn in_play(s: &State, t: &mut Table) {
    let section = t.section("In play");
    section.rows.reserve(s.in_play.len());
    for q in 0..s.players() {
        for (card, c) in s.play().filter(|(_, c)| c.controller == q) {
            let d = s.rules.db.get(c.def);
            section.row(Owner(q), card_label(d, card), on_table(s, card, c, d));
        }
    }
    // Notes about cards in play (a Storyline advanced, a Location captured) are keyed by the card.
    for (card, c) in s.play() {
        t.label(
            card_key(Owner(c.owner), card),
            card_label(s.rules.db.get(c.def), card),
        );
    }
}

/// Each player's discard pile (played Maneuvers, completed Storylines, discarded and destroyed cards):
/// "2 cards: Windfall (#30), Senator (#12)". One pass over the cards for every pile.
fn discards(s: &State, t: &mut Table) {
    let mut piles: Vec<(u32, String)> = vec![(0, String::new()); usize::from(s.players())];
    for (i, c) in s.cards.iter().enumerate() {
        if c.zone == Zone::Discard {
            if let Some((n, names)) = piles.get_mut(usize::from(c.owner)) {
                names.push_str(if *n == 0 { ": " } else { ", " });
                push_card(names, s.rules.db.get(c.def), i);
                *n += 1;
            }
            // A played Maneuver or a completed Storyline is named in the notes that put it here.
            t.label(
                card_key(Owner(c.owner), i as u16),
                card_label(s.rules.db.get(c.def), i as u16),
            );
        }
    }
    let section = t.section("Discard piles");
    section.rows.reserve(piles.len());
    for (q, (n, names)) in piles.into_iter().enumerate() {
        let value = if n == 0 {
            "empty".to_owned()
        } else {
            let mut value = String::with_capacity(names.len() + 12);
            amount(&mut value, n, "card", "cards");
            value.push_str(&names);
            value
        };
        section.row(Owner(q as u16), "discard pile", value);
    }
}

/// The Galactic Factors: signed position on its track, and the Homeworlds that prefer a value (S13 (a)).
fn factors(s: &State, t: &mut Table) {
    let defs = &s.config().factors;
    let section = t.section("Galactic Factors");
    section.rows.reserve(defs.len());
    for (f, def) in defs.iter().enumerate() {
        let mut value = String::with_capacity(64);
        signed(&mut value, s.factor(f));
        value.push_str(" (range ");
        num(&mut value, def.min);
        value.push_str("..");
        num(&mut value, def.max);
        value.push(')');
        for q in 0..s.players() {
            let hw = s.def(s.seats[usize::from(q)].homeworld);
            if let Some(pref) = hw.preferred.iter().find(|p| p.factor == def.name) {
                value.push_str("; ");
                seat(&mut value, q);
                value.push_str("'s ");
                value.push_str(&hw.name);
                value.push_str(" prefers ");
                signed(&mut value, pref.value);
            }
        }
        section.row(Owner::GAME, def.name.clone(), value);
    }
}

/// Standing Vote and political control (S4).
fn politics(s: &State, t: &mut Table) {
    let votes: Vec<u64> = (0..s.players())
        .map(|q| s.standing_vote(Owner(q)))
        .collect();
    let section = t.section("Politics");
    section.rows.reserve(votes.len() + 1);
    for (q, &v) in votes.iter().enumerate() {
        let mut value = String::with_capacity(4);
        num(&mut value, i64::try_from(v).unwrap_or(i64::MAX));
        section.row(Owner(q as u16), "standing Vote", value);
    }
    let mut control = String::with_capacity(8);
    match s.control_by(|q| votes.get(q.index()).copied().unwrap_or(0)) {
        Some(q) => seat(&mut control, q.0),
        None => control.push_str("nobody"),
    }
    section.row(Owner::GAME, "political control", control);
}

/// Each Act's result, the Act in progress, and the winners once the game is over.
fn results(s: &State, t: &mut Table) {
    let section = t.section("Acts");
    section.rows.reserve(s.results.len() + 1);
    let act = |n: u8| {
        let mut label = String::with_capacity(6);
        label.push_str("Act ");
        num(&mut label, i64::from(n));
        label
    };
    for r in &s.results {
        let mut value = String::with_capacity(32);
        value.push_str("won by ");
        seat(&mut value, r.winner);
        value.push_str("; SP");
        for (q, &sp) in r.scores.iter().enumerate() {
            value.push_str(if q == 0 { " " } else { ", " });
            seat(&mut value, q as u16);
            value.push(' ');
            num(&mut value, sp);
        }
        section.row(Owner::GAME, act(r.act), value);
    }
    match &s.winners {
        None => {
            section.row(Owner::GAME, act(s.act), "in progress");
        }
        Some(winners) => {
            let mut value = String::with_capacity(8);
            for (i, &w) in winners.iter().enumerate() {
                if i > 0 {
                    value.push_str(", ");
                }
                seat(&mut value, w);
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
    push_card(&mut label, d, usize::from(card));
    label
}

fn push_card(out: &mut String, d: &CardDef, card: usize) {
    out.push_str(&d.name);
    out.push_str(" (#");
    num(out, card as i64);
    out.push(')');
}

/// A card in hand: its type and what playing it costs and does.
fn in_hand(d: &CardDef) -> String {
    let mut v = String::with_capacity(64);
    v.push_str(d.card_type.name());
    v.push_str(", cost ");
    num(&mut v, i64::from(d.cost));
    v.push_str(" Currency");
    if d.vote_cost > 0 {
        v.push_str(" + ");
        amount(&mut v, d.vote_cost, "Vote", "Votes");
    }
    if d.cp_cost > 0 {
        v.push_str(" + ");
        amount(&mut v, d.cp_cost, "CP", "CP");
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

/// What a card prints that matters in play: CP, Votes, EV, income, a "-X CP:" ability.
fn printed(v: &mut String, d: &CardDef) {
    if let Some(cp) = d.cp {
        v.push_str(", ");
        amount(v, cp, "CP", "CP");
    }
    if d.votes > 0 {
        v.push_str(", ");
        amount(v, d.votes, "Vote", "Votes");
    }
    if d.ev > 0 {
        v.push_str(", Add ");
        amount(v, d.ev, "EV", "EV");
    }
    if d.income > 0 {
        v.push_str(", income ");
        num(v, i64::from(d.income));
    }
    if let Some(a) = d.ability {
        let _ = write!(v, ", -{} CP: {}", a.cp, a.effect);
    }
}

/// A card in play: where it is and its state.
fn on_table(s: &State, card: u16, c: &Card, d: &CardDef) -> String {
    let mut v = String::with_capacity(80);
    v.push_str(d.card_type.name());
    if let Some(band) = c.band {
        v.push_str(" in ");
        match band {
            Band::Space => v.push_str("the Space Band"),
            Band::Surface(q) => {
                seat(&mut v, q);
                v.push_str("'s Surface Band");
            }
            Band::Planetary(q) => {
                seat(&mut v, q);
                v.push_str("'s Planetary Band");
            }
        }
    }
    if c.owner != c.controller {
        v.push_str(", owned by ");
        seat(&mut v, c.owner);
    }
    if let Some(perm) = s.perm_id(card) {
        if s.ledger.is_exhausted(perm) {
            v.push_str(if c.committed {
                ", activated (Votes committed)"
            } else {
                ", activated"
            });
        } else {
            v.push_str(", ready");
        }
    }
    if let Some(cp) = s.cp_id(card) {
        v.push_str(", ");
        num(&mut v, s.ledger.value(cp));
        v.push_str(" CP");
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
        v.push_str(", ");
        num(&mut v, i64::from(c.progress));
        v.push_str(" of ");
        num(&mut v, i64::from(d.steps));
        v.push_str(" steps done");
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
    let mut out = String::with_capacity(12);
    amount(
        &mut out,
        u32::try_from(n).unwrap_or(u32::MAX),
        "card",
        "cards",
    );
    out
}

/// A count and its noun.
fn plural(n: u64, one: &'static str, many: &'static str) -> String {
    let mut out = String::with_capacity(12);
    num(&mut out, i64::try_from(n).unwrap_or(i64::MAX));
    out.push(' ');
    out.push_str(coffer_core::plural(n, one, many));
    out
}

/// Appends a count and its noun: "1 Vote", "2 Votes".
fn amount(out: &mut String, n: u32, one: &str, many: &str) {
    num(out, i64::from(n));
    out.push(' ');
    out.push_str(if n == 1 { one } else { many });
}

/// Appends a seat: "p1".
fn seat(out: &mut String, q: u16) {
    out.push('p');
    num(out, i64::from(q));
}

/// Appends a track position with its sign: "+2", "0", "-1".
fn signed(out: &mut String, v: i64) {
    if v > 0 {
        out.push('+');
    }
    num(out, v);
}

/// Appends a number in decimal, without the formatting machinery (a table writes many small ones).
fn num(out: &mut String, v: i64) {
    if v < 0 {
        out.push('-');
    }
    let n = v.unsigned_abs();
    if n < 10 {
        out.push(char::from(b'0' + n as u8));
        return;
    }
    if n < 100 {
        out.push(char::from(b'0' + (n / 10) as u8));
        out.push(char::from(b'0' + (n % 10) as u8));
        return;
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut n = n;
    while n > 0 {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    for &d in &digits[at..] {
        out.push(char::from(d));
    }
}

//! The turn: drawing cards, the Ready, Income and Draw phases (S2, S9, S10), ending the main phase, the
//! hand limit at the End Phase (S10, K6) and the next player's turn.

use crate::cards::Zone;
use crate::rules::settle::settle;
use crate::state::{Phase, State, card_key, effect, key, kind, note};
use coffer_core::{Cause, Key, Owner, Refusal, Scope};

/// Draws up to `n` cards from the top of `p`'s deck (an empty deck gives nothing), each recorded twice:
/// which card, for `p` alone, and that a card was drawn, for everyone else.
pub fn draw(s: &mut State, p: Owner, n: u32, cause: Cause) {
    let hand = key(p, kind::HAND, 0);
    for _ in 0..n {
        let Some(card) = s.decks[p.index()].pop() else {
            s.ledger.note(hand, note::DECK_EMPTY, [0; 3], cause);
            return;
        };
        s.cards[usize::from(card)].zone = Zone::Hand;
        s.hands[p.index()].push(card);
        s.ledger.note(card_key(p, card), note::DREW, [0; 3], cause);
        s.ledger.note(hand, note::DRAW, [0; 3], cause);
    }
}

/// S10/K6: checks `p`'s hand against the limit; returns the excess still to discard.
pub(crate) fn check_hand(s: &mut State, p: Owner) -> u32 {
    let n = s.hands[p.index()].len() as u64;
    let max = u64::from(s.config().hand_limit);
    s.ledger.check_limit(
        Key::new(p, kind::HAND, 0),
        n,
        max,
        Cause::Upkeep(Scope::Phase),
    )
}

/// Ends the End Phase and the turn, then starts the next player's turn.
pub(crate) fn finish_turn(s: &mut State) -> Result<(), Refusal> {
    s.ledger.end_scope(Scope::Phase);
    s.ledger.end_scope(Scope::Turn);
    s.active = (s.active + 1) % s.players();
    start_turn(s)
}

/// Runs the Ready (S9), Income (S2) and Draw (S10) phases of the active player's turn, each closed with
/// the kernel clock, and opens the main phase.
pub fn start_turn(s: &mut State) -> Result<(), Refusal> {
    let p = s.active();
    let from = s.ledger.events().len();
    s.ledger.note(
        key(p, kind::TREASURY, 0),
        note::TURN,
        [0; 3],
        Cause::Upkeep(Scope::Turn),
    );
    s.phase = Phase::Ready;
    // K5: the permanents the active player controls ready (a captured Location with its new controller).
    for i in 0..s.in_play.len() {
        let c = s.cards[usize::from(s.in_play[i])];
        if let (true, Some(perm)) = (c.controller == p.0, s.handles.perm(&c)) {
            s.ledger.ready(perm, Cause::Effect(effect::READY))?;
        }
    }
    s.ledger.end_scope(Scope::Phase);
    s.phase = Phase::Income;
    let income = s.income(p);
    s.ledger.gain(
        s.seats[p.index()].treasury,
        income,
        Cause::Effect(effect::INCOME),
    )?;
    s.ledger.end_scope(Scope::Phase);
    s.phase = Phase::Draw;
    draw(s, p, s.config().draw_per_turn, Cause::Effect(effect::DRAW));
    s.ledger.end_scope(Scope::Phase);
    s.phase = Phase::Main;
    settle(s, from)
}

/// `p` discards `card` down to the hand limit; the turn ends when none is left to discard.
pub(crate) fn discard(s: &mut State, p: Owner, card: u16, cause: Cause) -> Result<(), Refusal> {
    s.ledger
        .note(card_key(p, card), note::DISCARD, [0; 3], cause);
    let hand = &mut s.hands[p.index()];
    if let Some(i) = hand.iter().position(|&h| h == card) {
        hand.remove(i);
    }
    s.cards[usize::from(card)].zone = Zone::Discard;
    if check_hand(s, p) == 0 {
        finish_turn(s)?;
    }
    Ok(())
}

/// `p` ends the main phase: the End Phase checks the hand limit, then the next turn begins.
pub(crate) fn end_turn(s: &mut State, p: Owner, cause: Cause) -> Result<(), Refusal> {
    s.ledger
        .note(key(p, kind::TREASURY, 0), note::END_TURN, [0; 3], cause);
    s.ledger.end_scope(Scope::Phase);
    s.phase = Phase::End;
    if check_hand(s, p) == 0 {
        finish_turn(s)?;
    }
    Ok(())
}

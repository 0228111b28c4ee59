//! Applying an action: [`validate`] it, dispatch to its rule in
//! [`rules`](crate::rules), react to what reached a floor (K11), and end the Act when a Storyline was
//! completed (S12).

use crate::actions::Action;
use crate::rules::settle::settle;
use crate::rules::{board, cards, turns};
use crate::scoring;
use crate::state::{State, card_key, note};
use crate::validate::validate;
use coffer_core::{ActionError, Cause, Owner, Refusal};

/// Applies `p`'s action, or refuses it in words ([`Why::error`](crate::refusals::Why::error)) without changing anything.
///
/// # Errors
/// [`ActionError`]: the refusal, or a kernel refusal (never expected after a successful check; the
/// adapter rolls the ledger back).
pub fn apply(s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
    validate(s, p, a).map_err(|why| why.error(s, p))?;
    execute(s, p, a)?;
    Ok(())
}

/// Applies an action that [`validate`] accepted.
///
/// # Errors
/// A kernel refusal (never expected after a successful check; the adapter rolls the ledger back).
pub fn execute(s: &mut State, p: Owner, a: &Action) -> Result<(), Refusal> {
    let from = s.ledger.events().len();
    let cause = Cause::Action {
        player: p,
        code: a.code(),
    };
    let mut act_over: Option<u16> = None;
    match *a {
        Action::Deploy { card, target, cp } => cards::deploy(s, p, card, target, cp, cause)?,
        Action::CommitVotes { card } => cards::commit_votes(s, p, card, cause)?,
        Action::AddEv { card } => cards::add_ev(s, p, card, cause)?,
        Action::PushFactor { factor, up, steps } => {
            board::push_factor(s, p, factor, up, steps, cause)?;
        }
        Action::UseAbility { card } => cards::use_ability(s, p, card, cause)?,
        Action::Move { card, to } => board::move_unit(s, card, to, cause)?,
        Action::Capture { location, unit } => board::capture(s, p, location, unit, cause)?,
        Action::Restore { location } => board::restore(s, p, location, cause)?,
        Action::AdvanceStoryline { card } => cards::advance_storyline(s, p, card, cause)?,
        Action::CompleteStoryline { card } => {
            s.ledger
                .note(card_key(p, card), note::COMPLETE, [0; 3], cause);
            act_over = Some(card);
        }
        Action::Discard { card } => turns::discard(s, p, card, cause)?,
        Action::EndTurn {} => turns::end_turn(s, p, cause)?,
    }
    settle(s, from)?;
    if let Some(card) = act_over {
        scoring::end_act(s, p, card)?;
    }
    Ok(())
}

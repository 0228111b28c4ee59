//! End of an Act: the S13 scoring table, the Act's winner (S12), the catch-up (S16) and the game's end.

use crate::cards::{Band, Zone};
use crate::content::{CardType, RewardTo};
use crate::rules::turns::start_turn;
use crate::state::{ActResult, State, effect, key, kind, note};
use coffer_core::{Cause, Owner, Refusal, Scope};
use serde::{Deserialize, Serialize};

/// One player's score lines at the end of an Act (S13), each already rounded down on its own.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct ScoreLines {
    /// (a) Galactic Factors at the Homeworld's preferred value: 1 SP each.
    pub factors: u64,
    /// (b) uncontested Surface Locations controlled: 1 SP per two.
    pub surface: u64,
    /// (c) units in opponents' Bands (Planetary counts two): 1 SP per two.
    pub units: u64,
    /// (d) the Storyline that ended the Act: its reward, to the player it names.
    pub storyline: u64,
    /// (e) Homeworld on its Prime face: 1 SP.
    pub prime: u64,
}

impl ScoreLines {
    /// The sum of the lines (the S11 awards are already in the player's SP).
    pub fn total(&self) -> u64 {
        self.factors + self.surface + self.units + self.storyline + self.prime
    }
}

/// S13 for player `p`; `ended_by` is `(completer, storyline card)` when a Storyline ended the Act.
pub fn score_lines(s: &State, p: Owner, ended_by: Option<(Owner, u16)>) -> ScoreLines {
    let seat = &s.seats[p.index()];
    let hw = s.def(seat.homeworld);
    let cfg = s.config();
    let factors = hw
        .preferred
        .iter()
        .filter(|pref| {
            cfg.factors
                .iter()
                .position(|f| f.name == pref.factor)
                .is_some_and(|i| s.factor(i) == pref.value)
        })
        .count() as u64;
    let mut surface = 0u64;
    let mut depth = 0u64;
    for (_, c) in s.play() {
        if c.controller != p.0 {
            continue;
        }
        let d = s.rules.db.get(c.def);
        match (d.card_type, c.band) {
            (CardType::Location, Some(Band::Surface(_))) if !c.contested => surface += 1,
            (CardType::Character | CardType::GroundUnit, Some(b))
            | (CardType::Spacecraft, Some(b))
                if !(d.card_type == CardType::Spacecraft && d.capital) =>
            {
                match b {
                    Band::Surface(q) if q != p.0 => depth += 1,
                    Band::Planetary(q) if q != p.0 => depth += 2,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let storyline = match ended_by {
        Some((completer, card)) => {
            let d = s.def(card);
            if reward_recipients(d.reward_to, completer, p) {
                u64::from(d.reward)
            } else {
                0
            }
        }
        None => 0,
    };
    ScoreLines {
        factors,
        surface: surface / 2,
        units: depth / 2,
        storyline,
        prime: u64::from(seat.prime_face),
    }
}

/// S12: the Act's winner from the players' SP: most SP; a tie goes to the active player, or, if the active
/// player is not among the tied, to the first tied player after them in turn order.
pub fn act_winner(scores: &[i64], active: Owner) -> Owner {
    let best = scores.iter().copied().max().unwrap_or(0);
    let n = scores.len() as u16;
    (0..n)
        .map(|k| Owner((active.0 + k) % n))
        .find(|&q| scores[q.index()] == best)
        .unwrap_or(active)
}

/// Ends the current Act at once (S12): scores it (S13), records the winner, gives the catch-up (S16), and
/// either ends the game (the last Act's Story Points stay as they were counted, and no Act follows on the
/// clock) or resets SP through the kernel clock (`Scope::Act`) and starts the next Act with the next
/// player's turn.
///
/// # Errors
/// A kernel refusal (not expected).
pub fn end_act(s: &mut State, completer: Owner, storyline: u16) -> Result<(), Refusal> {
    let n = s.players();
    let cause = Cause::Effect(effect::SCORING);
    for p in (0..n).map(Owner) {
        let lines = score_lines(s, p, Some((completer, storyline)));
        s.ledger.gain(s.seats[p.index()].sp, lines.total(), cause)?;
    }
    let scores: Vec<i64> = (0..n).map(|p| s.sp(Owner(p))).collect();
    let winner = act_winner(&scores, s.active());
    let won = Cause::Effect(effect::ACT_WON);
    let winner_sp = i32::try_from(scores[winner.index()]).unwrap_or(i32::MAX);
    s.ledger.note(
        key(winner, kind::ACT_WINS, 0),
        note::ACT_WON,
        [i32::from(s.act), winner_sp, 0],
        won,
    );
    s.ledger.gain(s.seats[winner.index()].act_wins, 1, won)?;
    s.results.push(ActResult {
        act: s.act,
        scores,
        winner: winner.0,
        active: s.active,
    });
    s.leave_play(storyline, Zone::Discard);
    let catch_up = u64::from(s.config().catch_up_currency);
    for p in (0..n).map(Owner).filter(|&p| p != winner) {
        s.ledger.gain(
            s.seats[p.index()].treasury,
            catch_up,
            Cause::Effect(effect::CATCH_UP),
        )?;
    }
    let winners = if s.act_wins(winner) >= 2 {
        Some(vec![winner])
    } else if s.act >= 3 {
        Some(if s.config().act3_winner_wins {
            vec![winner]
        } else {
            let most = (0..n).map(|p| s.act_wins(Owner(p))).max().unwrap_or(0);
            (0..n)
                .map(Owner)
                .filter(|&p| s.act_wins(p) == most)
                .collect()
        })
    } else {
        None
    };
    if let Some(winners) = winners {
        for &p in &winners {
            s.ledger
                .note(key(p, kind::ACT_WINS, 0), note::GAME_WON, [0; 3], won);
        }
        s.winners = Some(winners.iter().map(|w| w.0).collect());
    } else {
        s.ledger.end_scope(Scope::Act);
        s.act += 1;
        s.active = (s.active + 1) % n;
        start_turn(s)?;
    }
    Ok(())
}

/// Who receives a Storyline's reward.
pub fn reward_recipients(to: RewardTo, completer: Owner, q: Owner) -> bool {
    match to {
        RewardTo::Completer => q == completer,
        RewardTo::EachOpponent => q != completer,
    }
}

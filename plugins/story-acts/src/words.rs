//! What the ruleset calls things: its [`vocabulary`] (kinds of resource, phases, actions, effects and its own
//! events, in the rulebook's words) and the labels of its resources ([`label`]).

use crate::actions::Action;
use crate::cards::Zone;
use crate::state::{PHASES, State, effect, kind, note};
use coffer_core::{Key, NoteTerm, Term, Vocabulary};

/// The vocabulary, declared once in the ruleset's description.
///
/// Kinds are named by their numbers in [`kind`], actions by [`Action::code`](crate::Action::code), effects
/// by [`effect`], notes by [`note`], phases by [`Phase::number`](crate::Phase::number). The game has no
/// steps.
pub fn vocabulary() -> Vocabulary {
    let mut kinds = vec![Term::default(); 10];
    let mut name = |k: coffer_core::Kind, term: Term| kinds[usize::from(k.0)] = term;
    name(kind::TREASURY, Term::new("Treasury"));
    name(kind::VOTES, Term::new("committed Votes"));
    name(kind::EV, Term::new("EV"));
    name(kind::SP, Term::new("Story Points"));
    name(kind::CP, Term::new("CP"));
    name(kind::ACT_WINS, Term::new("Acts won"));
    name(kind::FACTOR, Term::new("Galactic Factor"));
    name(
        kind::CARD,
        Term::new("card").states("is activated", "readies"),
    );
    name(kind::ABILITY, Term::new("ability"));
    name(kind::HAND, Term::new("hand").choice("discard"));

    let mut effects = vec![String::new(); effect::COUNT];
    for (code, text) in [
        (effect::DRAW, "the Draw Phase"),
        (effect::MORALITY, "Morality Penalties"),
        (effect::ALIGNED, "an aligned ability"),
        (effect::INCOME, "Income"),
        (effect::SCORING, "the end-of-Act scoring"),
        (effect::CATCH_UP, "the end-of-Act catch-up"),
        (effect::AWARD, "a self-inflicted award"),
        (effect::FALL, "a Fall"),
        (effect::ACT_WON, "the Act's result"),
        (effect::READY, "the Ready Phase"),
    ] {
        effects[usize::from(code)] = text.to_owned();
    }

    let mut notes = vec![NoteTerm::default(); note::COUNT];
    for (code, term) in [
        (note::DEPLOY, NoteTerm::new("{who} deploys {name}")),
        (note::PLAY, NoteTerm::new("{who} plays {name}")),
        (note::DREW, NoteTerm::secret("{who} draws {name}", "")),
        (note::DRAW, NoteTerm::secret("", "{who} draws a card")),
        (
            note::DECK_EMPTY,
            NoteTerm::new("{who}'s deck is empty: no card drawn"),
        ),
        (
            note::MOVE_SPACE,
            NoteTerm::new("{subject} moves to the Space Band"),
        ),
        (
            note::MOVE_SURFACE,
            NoteTerm::new("{subject} moves to p{0}'s Surface Band"),
        ),
        (
            note::MOVE_PLANETARY,
            NoteTerm::new("{subject} moves to p{0}'s Planetary Band"),
        ),
        (
            note::CAPTURE,
            NoteTerm::new("{subject} is captured by p{0} and becomes Contested"),
        ),
        (
            note::RESTORE,
            NoteTerm::new("{subject} is Restored: no longer Contested"),
        ),
        (
            note::ADVANCE,
            NoteTerm::new("{subject} advances: {0} of {1} steps done"),
        ),
        (
            note::COMPLETE,
            NoteTerm::new("{who} completes {name}: the Act ends"),
        ),
        (note::DISCARD, NoteTerm::new("{who} discards {name}")),
        (note::DESTROYED, NoteTerm::new("{subject} is destroyed")),
        (
            note::FALLS,
            NoteTerm::new("{subject} Falls: its CP becomes {0}"),
        ),
        (
            note::PRIME_LOST,
            NoteTerm::new("{subject} is flipped off its Prime face"),
        ),
        (
            note::ACT_WON,
            NoteTerm::new("{who} wins Act {0} with {1} SP"),
        ),
        (note::GAME_WON, NoteTerm::new("{who} wins the game")),
        (note::TURN, NoteTerm::new("{who}'s turn begins")),
        (note::END_TURN, NoteTerm::new("{who} ends the turn")),
    ] {
        notes[usize::from(code)] = term;
    }

    Vocabulary {
        round: "Act".to_owned(),
        kinds,
        phases: PHASES.map(String::from).to_vec(),
        steps: Vec::new(),
        actions: Action::NAMES.map(String::from).to_vec(),
        effects,
        notes,
    }
}

/// A resource's label, without its owner: "Treasury", "CP of Jedi Knight (#12)", "Galactic Factor order".
/// Cards carry their instance number, the number actions name them by.
pub fn label(state: &State, key: Key) -> Option<String> {
    // A card's resources are keyed by its owner for the whole game: say where the card is now when that
    // is not in play under its owner (discarded, destroyed, captured).
    let card = || {
        let c = state.cards.get(key.subject as usize)?;
        let name = &state.rules.db.get(c.def).name;
        Some(match c.zone {
            Zone::Discard => format!("{name} (#{}, in the discard pile)", key.subject),
            Zone::Play if c.controller != c.owner => {
                format!("{name} (#{}, captured by p{})", key.subject, c.controller)
            }
            _ => format!("{name} (#{})", key.subject),
        })
    };
    Some(match key.kind {
        kind::TREASURY => "Treasury".to_owned(),
        kind::VOTES => "committed Votes".to_owned(),
        kind::EV => "EV".to_owned(),
        kind::SP => "Story Points".to_owned(),
        kind::ACT_WINS => "Acts won".to_owned(),
        kind::HAND => "hand".to_owned(),
        kind::CP => format!("CP of {}", card()?),
        kind::CARD => card()?,
        kind::ABILITY => format!("ability of {}", card()?),
        kind::FACTOR => format!(
            "Galactic Factor {}",
            state.config().factors.get(key.subject as usize)?.name
        ),
        _ => return None,
    })
}

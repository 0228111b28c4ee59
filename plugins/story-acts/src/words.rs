//! What the ruleset calls things: its [`vocabulary`] (kinds of resource, phases, actions, effects and its own
//! events, in the rulebook's words) and the labels of its resources ([`label`]).

use crate::actions::Action;
use crate::cards::Zone;
use crate::state::note::*;
use crate::state::{PHASES, State, effect, kind, note};
use coffer_core::{Key, NoteTerm, Term, Vocabulary};

/// The ruleset's public notes: code (in [`note`]) and text (the secret ones are set in [`vocabulary`]).
const NOTES: &[(u16, &str)] = &[
    (DEPLOY, "{who} deploys {name}"),
    (PLAY, "{who} plays {name}"),
    (DECK_EMPTY, "{who}'s deck is empty: no card drawn"),
    (MOVE_SPACE, "{subject} moves to the Space Band"),
    (MOVE_SURFACE, "{subject} moves to p{0}'s Surface Band"),
    (MOVE_PLANETARY, "{subject} moves to p{0}'s Planetary Band"),
    (
        CAPTURE,
        "{subject} is captured by p{0} and becomes Contested",
    ),
    (RESTORE, "{subject} is Restored: no longer Contested"),
    (ADVANCE, "{subject} advances: {0} of {1} steps done"),
    (COMPLETE, "{who} completes {name}: the Act ends"),
    (DISCARD, "{who} discards {name}"),
    (DESTROYED, "{subject} is destroyed"),
    (FALLS, "{subject} Falls: its CP becomes {0}"),
    (PRIME_LOST, "{subject} is flipped off its Prime face"),
    (ACT_WON, "{who} wins Act {0} with {1} SP"),
    (GAME_WON, "{who} wins the game"),
    (TURN, "{who}'s turn begins"),
    (END_TURN, "{who} ends the turn"),
];

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
        Term::new("card").states("is activated", "is ready"),
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
    for &(code, text) in NOTES {
        notes[usize::from(code)] = NoteTerm::new(text);
    }
    notes[usize::from(note::DREW)] = NoteTerm::secret("{who} draws {name}", "");
    notes[usize::from(note::DRAW)] = NoteTerm::secret("", "{who} draws a card");

    Vocabulary {
        round: "Act".to_owned(),
        kinds,
        phases: PHASES.map(String::from).to_vec(),
        steps: Vec::new(),
        actions: Action::NAMES.map(String::from).to_vec(),
        effects,
        notes,
        ..Default::default()
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

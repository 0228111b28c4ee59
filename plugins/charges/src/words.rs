//! What the `charges` ruleset calls things: its [`Vocabulary`] (kinds, phases, dice steps, actions and
//! its own events), the codes of those events ([`note`]), and the labels of its resources.

use crate::actions::Action;
use crate::state::{AttackStep, Phase, State, kind};
use coffer_core::{Key, NoteTerm, Term, Vocabulary};

/// The codes of the ruleset's own events ([`Ledger::note`](coffer_core::Ledger::note)), indexing
/// [`vocabulary`]`().notes`. Ship notes are keyed by the ship's turn permanent (labelled with the ship's
/// name), so `{subject}` reads "p0's Luke Skywalker".
pub mod note {
    /// Secret: a dial planned (`[colour]`); only its owner reads the maneuver.
    pub const PLANNED: u16 = 0;
    /// A dial revealed and its maneuver executed (`[colour]`; 4 and 5: a white [2 straight] instead of purple or red).
    pub const EXECUTED: u16 = 1;
    /// A card ability granted one more action.
    pub const EXTRA_ACTION: u16 = 2;
    /// A ship ended its turn in the phase.
    pub const PASSED: u16 = 3;
    /// An attack declared (`[weapon: 0 primary, 1 ordnance, dice]`).
    pub const ATTACKS: u16 = 4;
    /// The defender of the attack just declared.
    pub const DEFENDS: u16 = 5;
    /// Attack dice results entered (`[hits, crits, focus]`).
    pub const ATTACK_DICE: u16 = 6;
    /// Defence dice results entered (`[evades, focus]`).
    pub const DEFENCE_DICE: u16 = 7;
    /// One Force spent to change a focus result (`[0 hit, 1 evade]`).
    pub const FORCE_CHANGE: u16 = 8;
    /// A focus token spent to change every focus result (`[0 hits, 1 evades, how many]`).
    pub const FOCUS_CHANGE: u16 = 9;
    /// An evade token spent to add an evade result.
    pub const EVADE_ADDED: u16 = 10;
    /// The attacker is done modifying its dice.
    pub const ATTACK_MODIFIED: u16 = 11;
    /// A ship suffers damage (`[hits, crits]`): the end of an attack or an effect.
    pub const SUFFERS: u16 = 12;
    /// A ship's damage cards reached its hull.
    pub const DESTROYED: u16 = 13;
    /// A player is done with the End Phase.
    pub const END_DONE: u16 = 14;
    /// A loss of one charge found none active (`key`: the track).
    pub const NOTHING_LOST: u16 = 15;
    /// A player won (`[ships in play]`).
    pub const WINS: u16 = 16;
    /// Nobody won: no ship is left in play.
    pub const DRAW: u16 = 17;
    /// A ship is placed in reserve (C19).
    pub const TO_RESERVE: u16 = 18;
    /// A ship in reserve is placed in the play area (C19).
    pub const DEPLOYED: u16 = 19;
    /// The device a ship just dropped could not be placed: play is reversed (C16) (`[card]`).
    pub const DEVICE_NOT_PLACED: u16 = 20;
}

/// The maneuver colours by their note number.
const COLOURS: [&str; 4] = ["blue", "white", "red", "purple"];

/// The ruleset's vocabulary, declared once in `describe`.
pub fn vocabulary() -> Vocabulary {
    let mut kinds = vec![Term::default(); 14];
    // Kind 0 is not used.
    for (k, name) in [
        (kind::SHIELD, "shields"),
        (kind::FORCE, "Force"),
        (kind::ENERGY, "energy"),
        (kind::CHARGE, "charges"),
        (kind::FOCUS, "focus tokens"),
        (kind::EVADE, "evade tokens"),
        (kind::DISARM, "disarm tokens"),
        (kind::STRESS, "stress tokens"),
        (kind::FACEDOWN, "facedown damage cards"),
        (kind::FACEUP, "faceup damage cards"),
        (kind::TURN, "ship"),
        (kind::USED, "card ability"),
        (kind::DONE, "End Phase"),
    ] {
        kinds[usize::from(k.0)] = Term::new(name);
    }
    // A ship's turn, an ability's use per round and a player's End Phase are permanents: say what their
    // states mean.
    for (k, exhausted, ready) in [
        (kind::TURN, "has had its turn", "may take its turn"),
        (kind::USED, "has been used this round", "may be used"),
        (kind::DONE, "is done", "is not done yet"),
    ] {
        let term = std::mem::take(&mut kinds[usize::from(k.0)]);
        kinds[usize::from(k.0)] = term.states(exhausted, ready);
    }
    let mut notes = vec![NoteTerm::default(); 21];
    let mut set = |code: u16, term: NoteTerm| notes[usize::from(code)] = term;
    set(
        note::PLANNED,
        NoteTerm::secret(
            "{who} planned a {value} maneuver for {name}",
            "{who} planned a dial for {name}",
        )
        .values(COLOURS),
    );
    set(
        note::EXECUTED,
        NoteTerm::new("{subject} revealed its dial and executed {value}").values([
            "a blue maneuver",
            "a white maneuver",
            "a red maneuver",
            "a purple maneuver",
            "a white [2 straight] instead of its purple maneuver: it has no active Force to spend",
            "a white [2 straight] instead of its red maneuver: it is stressed",
        ]),
    );
    set(
        note::EXTRA_ACTION,
        NoteTerm::new("{subject} may perform one more action: {value}").values([
            "a white action, treated as red",
            "any action, at its own colour",
        ]),
    );
    // The notes written plainly, without values or a secret form.
    for (code, text) in [
        (note::PASSED, "{subject} ends its turn"),
        (note::DEFENDS, "{subject} defends"),
        (
            note::ATTACK_DICE,
            "{subject} rolled hits: {0}, crits: {1}, focus: {2}",
        ),
        (
            note::DEFENCE_DICE,
            "{subject} rolled evades: {0}, focus: {1}",
        ),
        (
            note::EVADE_ADDED,
            "{subject} spent an evade token to add an evade result",
        ),
        (
            note::ATTACK_MODIFIED,
            "{subject} is done modifying its attack dice",
        ),
        (note::SUFFERS, "{subject} suffers hits: {0}, crits: {1}"),
        (note::DESTROYED, "{subject} is destroyed"),
        (note::END_DONE, "{who} is done with the End Phase"),
        (note::NOTHING_LOST, "{subject}: no active charge to lose"),
        (note::WINS, "{who} wins, with ships in play: {0}"),
        (
            note::DRAW,
            "the game ends in a draw: no ship is left in play",
        ),
        (note::TO_RESERVE, "{subject} is placed in reserve"),
        (
            note::DEPLOYED,
            "{subject} is placed in the play area from reserve",
        ),
        (
            note::DEVICE_NOT_PLACED,
            "the device {subject} just dropped could not be placed: play is reversed, the device is \
             not placed, its charge is recovered and the ship may still place a device this System \
             Phase (C16)",
        ),
    ] {
        set(code, NoteTerm::new(text));
    }
    set(
        note::ATTACKS,
        NoteTerm::new("{subject} attacks with {value}: {1} attack dice")
            .values(["its primary weapon", "an ordnance upgrade"]),
    );
    set(
        note::FORCE_CHANGE,
        NoteTerm::new("{subject} spent a Force to change a focus result into {value}")
            .values(["a hit", "an evade"]),
    );
    set(
        note::FOCUS_CHANGE,
        NoteTerm::new("{subject} spent a focus token: focus results changed into {value}: {1}")
            .values(["hits", "evades"]),
    );
    Vocabulary {
        round: "Round".to_owned(),
        kinds,
        phases: Phase::ALL.map(|p| p.name().to_owned()).to_vec(),
        steps: [
            AttackStep::Roll,
            AttackStep::Modify,
            AttackStep::DefenceRoll,
            AttackStep::DefenceModify,
        ]
        .map(|s| s.name().to_owned())
        .to_vec(),
        actions: Action::NAMES.map(str::to_owned).to_vec(),
        effects: Vec::new(),
        notes,
        ..Default::default()
    }
}

/// The label of a resource, without its owner: "Luke Skywalker shields", "Luke Skywalker Proton
/// Torpedoes charges", "Luke Skywalker" (the ship's turn permanent, which ship notes are keyed by).
/// `None` for a key this ruleset does not make.
pub fn label(s: &State, key: Key) -> Option<String> {
    let card = |subject: u32| {
        let ship = s.ships.get((subject / 16) as usize)?;
        let c = (subject % 16) as usize;
        Some((ship, c, ship.card_names.get(c)?))
    };
    let ship = || s.ships.get(key.subject as usize).map(|sh| sh.name.as_str());
    let what = match key.kind {
        kind::SHIELD => "shields",
        kind::FORCE => "Force",
        kind::ENERGY => "energy",
        kind::FOCUS => "focus tokens",
        kind::EVADE => "evade tokens",
        kind::DISARM => "disarm tokens",
        kind::STRESS => "stress tokens",
        kind::FACEDOWN => "facedown damage cards",
        kind::FACEUP => "faceup damage cards",
        kind::TURN => return ship().map(str::to_owned),
        kind::CHARGE => {
            let (ship, c, name) = card(key.subject)?;
            return Some(if c == 0 {
                format!("{} charges", ship.name)
            } else {
                format!("{} {name} charges", ship.name)
            });
        }
        kind::USED => {
            let (ship, c, name) = card(key.subject)?;
            return Some(if c == 0 {
                format!("{} pilot ability", ship.name)
            } else {
                format!("{} {name} ability", ship.name)
            });
        }
        kind::DONE => return Some("End Phase".to_owned()),
        _ => return None,
    };
    Some(format!("{} {what}", ship()?))
}

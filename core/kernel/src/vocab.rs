//! What a ruleset calls things: its [`Vocabulary`], declared once in its `Description` (coffer-sdk): a
//! name for every kind of resource ([`Term`]), phase, step, action and effect cause, and the templates of
//! its own events ([`NoteTerm`], for [`Change::Note`](crate::Change::Note)). It is plain data, so it crosses the runtime
//! boundary with the description and every host and front end can name things without calling back into
//! the ruleset; [`Names`](crate::Names) writes with it.

use crate::clock::Scope;
use crate::id::Kind;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The name of one kind of resource.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Term {
    /// Its name, as the rulebook writes it ("Gold", "supply pool").
    pub name: String,
    /// What a pending choice on this kind asks its owner to do, as a verb ("return"); empty: "give up".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub choice: String,
    /// What a permanent of this kind is when exhausted, after its name ("has had its turn"); empty: "is
    /// exhausted".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub exhausted: String,
    /// What it is when ready ("may act this round"); empty: "is ready".
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub ready: String,
}

impl Term {
    /// A kind's name.
    pub fn new(name: impl Into<String>) -> Term {
        Term {
            name: name.into(),
            choice: String::new(),
            exhausted: String::new(),
            ready: String::new(),
        }
    }

    /// With the words for a permanent of this kind exhausted and ready ("has had its turn", "may act").
    pub fn states(mut self, exhausted: impl Into<String>, ready: impl Into<String>) -> Term {
        self.exhausted = exhausted.into();
        self.ready = ready.into();
        self
    }

    /// With the verb of a pending choice on it ("return").
    pub fn choice(mut self, verb: impl Into<String>) -> Term {
        self.choice = verb.into();
        self
    }
}

/// The template of a ruleset's own event ([`Change::Note`](crate::Change::Note) with this code), for actions and effects that
/// change the ruleset's state rather than the ledger's ("p0 picks the Crown").
///
/// Placeholders: `{who}` the event key's owner (`p0`), `{player}` the player whose action caused it (the
/// key's owner when no action did; for notes about the game's things: "{player} picks {name}"),
/// `{subject}` the event key's label with its owner ("p0's Ranger"), `{name}` the label alone, `{0}` `{1}` `{2}` the note's numbers, and `{value}`
/// the first number through [`values`](Self::values).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoteTerm {
    /// What happened, for those who may see it.
    pub text: String,
    /// Names for the first number (`{value}`): `values[n]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Whether only the key's owner may see `text` (a planned move, a card drawn).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub secret: bool,
    /// For a secret note, what everyone else sees (numbers are not filled in); empty: nothing.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub redacted: String,
}

impl NoteTerm {
    /// A public note.
    pub fn new(text: impl Into<String>) -> NoteTerm {
        NoteTerm {
            text: text.into(),
            ..NoteTerm::default()
        }
    }

    /// A note only the key's owner reads in full; everyone else reads `redacted` (empty: nothing).
    pub fn secret(text: impl Into<String>, redacted: impl Into<String>) -> NoteTerm {
        NoteTerm {
            text: text.into(),
            secret: true,
            redacted: redacted.into(),
            values: Vec::new(),
        }
    }

    /// With names for the first number.
    pub fn values<S: Into<String>>(mut self, values: impl IntoIterator<Item = S>) -> NoteTerm {
        self.values = values.into_iter().map(Into::into).collect();
        self
    }
}

/// What a ruleset calls things: declared once per ruleset, in its `Description` (coffer-sdk).
///
/// Each list is indexed by the number the ruleset uses: `kinds[k]` names [`Kind`](crate::Kind)`(k)`, `actions[c]` names
/// [`Cause::Action`](crate::Cause::Action) code `c`, `effects[c]` [`Cause::Effect`](crate::Cause::Effect)`(c)`, `notes[c]` [`Change::Note`](crate::Change::Note) code `c`,
/// `phases[p]` and `steps[s]` the phase and step numbers of the ruleset's `Table` (coffer-sdk) clock.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Vocabulary {
    /// What a round (or act) is called: "Round", "Act"; empty: "Round".
    pub round: String,
    /// What the clock's turn level is called, lower case ("turn", "player turn"); empty: "turn".
    pub turn_name: String,
    /// What the clock's phase level is called, lower case ("phase", "step"); empty: "phase".
    pub phase_name: String,
    /// What the clock's step level is called, lower case ("step", "window"); empty: "step".
    pub step_name: String,
    /// Kinds of resource.
    pub kinds: Vec<Term>,
    /// Phases.
    pub phases: Vec<String>,
    /// Steps.
    pub steps: Vec<String>,
    /// Actions, by their code in [`Cause::Action`](crate::Cause::Action).
    pub actions: Vec<String>,
    /// Effects, by their code in [`Cause::Effect`](crate::Cause::Effect).
    pub effects: Vec<String>,
    /// The ruleset's own events, by their code in [`Change::Note`](crate::Change::Note).
    pub notes: Vec<NoteTerm>,
}

impl Vocabulary {
    /// The vocabulary of a ruleset that declares nothing.
    pub const EMPTY: Vocabulary = Vocabulary {
        round: String::new(),
        turn_name: String::new(),
        phase_name: String::new(),
        step_name: String::new(),
        kinds: Vec::new(),
        phases: Vec::new(),
        steps: Vec::new(),
        actions: Vec::new(),
        effects: Vec::new(),
        notes: Vec::new(),
    };

    /// A kind's name: declared, or "resource N".
    pub fn kind(&self, kind: Kind) -> Cow<'_, str> {
        match self.kinds.get(usize::from(kind.0)) {
            Some(t) if !t.name.is_empty() => Cow::Borrowed(&t.name),
            _ if kind == Kind::CLOCK => Cow::Borrowed("clock"),
            _ => Cow::Owned(format!("resource {}", kind.0)),
        }
    }

    /// A phase's name: declared, or "phase N" (with the phase level's word).
    pub fn phase(&self, phase: u16) -> Cow<'_, str> {
        named(&self.phases, phase, &self.scope(Scope::Phase))
    }

    /// A step's name: declared, or "step N" (with the step level's word).
    pub fn step(&self, step: u16) -> Cow<'_, str> {
        named(&self.steps, step, &self.scope(Scope::Step))
    }

    /// What a level of the clock is called, lower case: the ruleset's word ("act", "step") or the
    /// kernel's ("round", "phase").
    pub fn scope(&self, scope: Scope) -> Cow<'_, str> {
        let declared = match scope {
            Scope::Game => "",
            Scope::Act => return Cow::Owned(self.round().to_lowercase()),
            Scope::Turn => &self.turn_name,
            Scope::Phase => &self.phase_name,
            Scope::Step => &self.step_name,
        };
        if declared.is_empty() {
            Cow::Borrowed(scope.name())
        } else {
            Cow::Borrowed(declared)
        }
    }

    /// An action's name: declared, or "action N".
    pub fn action(&self, code: u16) -> Cow<'_, str> {
        named(&self.actions, code, "action")
    }

    /// An effect's name: declared, or "effect N".
    pub fn effect(&self, code: u16) -> Cow<'_, str> {
        named(&self.effects, code, "effect")
    }

    /// What a round is called.
    pub fn round(&self) -> &str {
        if self.round.is_empty() {
            "Round"
        } else {
            &self.round
        }
    }
}

fn named<'v>(list: &'v [String], n: u16, plain: &str) -> Cow<'v, str> {
    match list.get(usize::from(n)) {
        Some(name) if !name.is_empty() => Cow::Borrowed(name),
        _ => Cow::Owned(format!("{plain} {n}")),
    }
}

//! The table: what one seat (or a spectator) sees of a game besides the ledger's resources.
//!
//! A [`Table`] holds the clock as the ruleset counts it (round, phase, step), whose turn it is, who may act
//! and why, who has passed, the pending choices, each ruleset's own public state as titled sections of
//! rows, and the outcome. A ruleset fills its part in [`Ruleset::table`](crate::Ruleset::table); the
//! adapter adds the names from the vocabulary, the pending choices and the outcome.
//!
//! A table is built for one audience: a seat's table holds what that seat may see and nothing more, a
//! spectator's only public information. Nothing hidden is put in and filtered out later.
//!
//! ```
//! use coffer_kernel::Owner;
//! use coffer_sdk::Table;
//!
//! let mut table = Table::new(Some(Owner(0)));
//! table.clock(2, Some(1), None);
//! table.turn(Owner(1));
//! table.act(Owner(1), "to pick a title");
//! table.section("Titles").row(Owner(0), "the Crown", "picked");
//! assert_eq!(table.round, 2);
//! assert_eq!(table.sections[0].rows[0].value, "picked");
//! ```

use crate::Outcome;
use coffer_kernel::{Key, Owner};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A numbered thing with its name in the ruleset's words: a phase, a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    /// The ruleset's number.
    pub number: u16,
    /// Its name from the vocabulary.
    pub name: String,
}

/// A player who may act now, and what for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mover {
    /// The seat.
    pub seat: Owner,
    /// Why, in the ruleset's words ("to pick a title"); empty when the ruleset does not say.
    pub why: String,
}

/// A pending choice (K6): its owner must give up `excess` of a resource.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pending {
    /// Who must choose.
    pub owner: Owner,
    /// The resource over its limit.
    pub key: Key,
    /// How many must go.
    pub excess: u32,
    /// The resource's label without its owner ("stash"), for naming it where it is not a resource.
    pub label: String,
    /// The choice in words ("p0 must return 1 of p0's stash").
    pub text: String,
}

/// Text of a table: borrowed when it is a constant of the ruleset ("picked"), owned when it is built.
pub type Text = Cow<'static, str>;

/// One row of a [`Section`]: a label and a value, for a seat or for the whole table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// Whose row it is ([`Owner::GAME`] for the table's own).
    pub owner: Owner,
    /// What the row is about ("the Crown", "the Ranger").
    pub label: Text,
    /// Its state in words ("picked", "move planned").
    pub value: Text,
}

/// The name of something events may mention that is not one of the seat's resources (a card played from
/// a stash, a title), so that hosts can name it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    /// What events key it by.
    pub key: Key,
    /// Its name without its owner.
    pub name: Text,
}

/// A titled part of a ruleset's own state ("Titles", "Stash", "Round results").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// The title.
    pub title: String,
    /// Its rows, in the ruleset's order.
    pub rows: Vec<Row>,
}

impl Section {
    /// Adds a row for `owner` ([`Owner::GAME`] for the table's own).
    pub fn row(
        &mut self,
        owner: Owner,
        label: impl Into<Text>,
        value: impl Into<Text>,
    ) -> &mut Section {
        self.rows.push(Row {
            owner,
            label: label.into(),
            value: value.into(),
        });
        self
    }
}

/// What one audience sees of a game besides the ledger's resources: a seat's table holds what that seat
/// may see and nothing more, a spectator's only public information.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// Whose table this is; `None` for a spectator's.
    pub seat: Option<Owner>,
    /// The round (or act), counted from 1; 0 when the ruleset has none.
    pub round: u32,
    /// What a round is called in this ruleset ("Round", "Act").
    pub round_name: String,
    /// The phase, when the game has phases.
    pub phase: Option<Named>,
    /// The step of the phase, when it has steps.
    pub step: Option<Named>,
    /// Whose turn it is, when the game has turns.
    pub turn: Option<Owner>,
    /// Who may act now, and why.
    pub acting: Vec<Mover>,
    /// Who has passed.
    pub passed: Vec<Owner>,
    /// Choices that must be made before play goes on.
    pub pending: Vec<Pending>,
    /// The ruleset's own state.
    pub sections: Vec<Section>,
    /// Names of things events may mention that are not among the seat's resources ([`Table::label`]).
    pub labels: Vec<Label>,
    /// Whether and how the game ended.
    pub outcome: Outcome,
    /// The seat that may take back its last actions now (`"~undo"`, [`UNDO`](crate::UNDO)), filled by
    /// the adapter; `None` when nobody may.
    #[serde(default)]
    pub undo: Option<Undo>,
}

/// Who may take back actions, and how many ([`Table::undo`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Undo {
    /// The seat that acted last.
    pub seat: Owner,
    /// How many of its last actions it may take back, one `"~undo"` each.
    pub actions: u32,
}

impl Table {
    /// An empty table for `seat` (`None`: a spectator).
    pub fn new(seat: Option<Owner>) -> Table {
        Table {
            seat,
            round: 0,
            round_name: String::new(),
            phase: None,
            step: None,
            turn: None,
            acting: Vec::new(),
            passed: Vec::new(),
            pending: Vec::new(),
            sections: Vec::new(),
            labels: Vec::new(),
            outcome: Outcome::Ongoing,
            undo: None,
        }
    }

    /// Sets the clock: the round (from 1) and the phase and step numbers, named from the vocabulary.
    pub fn clock(&mut self, round: u32, phase: Option<u16>, step: Option<u16>) -> &mut Table {
        self.round = round;
        self.phase = phase.map(|number| Named {
            number,
            name: String::new(),
        });
        self.step = step.map(|number| Named {
            number,
            name: String::new(),
        });
        self
    }

    /// Sets whose turn it is.
    pub fn turn(&mut self, seat: Owner) -> &mut Table {
        self.turn = Some(seat);
        self
    }

    /// Lists `seat` among those who may act now, with why.
    pub fn act(&mut self, seat: Owner, why: impl Into<String>) -> &mut Table {
        self.acting.push(Mover {
            seat,
            why: why.into(),
        });
        self
    }

    /// Marks `seat` as passed.
    pub fn pass(&mut self, seat: Owner) -> &mut Table {
        self.passed.push(seat);
        self
    }

    /// Adds a titled section and returns it to fill.
    pub fn section(&mut self, title: impl Into<String>) -> &mut Section {
        self.sections.push(Section {
            title: title.into(),
            rows: Vec::new(),
        });
        let last = self.sections.len() - 1;
        &mut self.sections[last]
    }

    /// Names `key` for hosts, where events mention something that is not among this seat's resources (a
    /// card played from a stash, a title): only what this table's seat may see.
    pub fn label(&mut self, key: Key, name: impl Into<Text>) -> &mut Table {
        self.labels.push(Label {
            key,
            name: name.into(),
        });
        self
    }

    /// Whether `seat` is one of those who may see `owner`'s hidden state (its own seat).
    pub fn sees(&self, owner: Owner) -> bool {
        self.seat == Some(owner)
    }
}

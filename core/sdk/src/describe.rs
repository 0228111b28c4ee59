//! What a ruleset says about itself: its [`Description`] (id, version, players, phases, vocabulary) and
//! the [`Doc`] of each resource, action and option, with a JSON example where there is one.

use coffer_kernel::Vocabulary;
use serde::{Deserialize, Serialize};

/// Documentation of one named thing a ruleset has: a resource, an action, an option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Doc {
    /// Its name.
    pub name: String,
    /// What it is, in a sentence or two.
    pub doc: String,
    /// An example (an action's JSON) or a default (an option's value); `null` when not applicable.
    #[serde(default)]
    pub value: serde_json::Value,
}

impl Doc {
    /// A doc without example.
    pub fn new(name: impl Into<String>, doc: impl Into<String>) -> Doc {
        Doc {
            name: name.into(),
            doc: doc.into(),
            value: serde_json::Value::Null,
        }
    }
    /// A doc with an example or default value.
    pub fn with(name: impl Into<String>, doc: impl Into<String>, value: serde_json::Value) -> Doc {
        Doc {
            name: name.into(),
            doc: doc.into(),
            value,
        }
    }
}

/// What a ruleset is: its id and version, and what it offers (shown by `coffer describe`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Description {
    /// Stable id, e.g. `charges`.
    pub id: String,
    /// Semantic version of the ruleset.
    pub version: String,
    /// One line: what game this is.
    pub summary: String,
    /// Fewest players.
    pub min_players: u16,
    /// Most players.
    pub max_players: u16,
    /// Phases of a turn or round, in order.
    pub phases: Vec<String>,
    /// Resources it tracks.
    pub resources: Vec<Doc>,
    /// Actions, each with a JSON example.
    pub actions: Vec<Doc>,
    /// Configuration options, each with its default.
    pub options: Vec<Doc>,
    /// What the ruleset calls things: kinds of resource, phases, steps, actions, effects and its own
    /// events. Hosts and front ends name things with it (see [`Names`](coffer_kernel::Names)).
    #[serde(default)]
    pub vocabulary: Vocabulary,
}

impl Description {
    /// A description with no phases, resources, actions or options yet, for 2 to 8 players.
    pub fn new(
        id: impl Into<String>,
        version: impl Into<String>,
        summary: impl Into<String>,
    ) -> Description {
        Description {
            id: id.into(),
            version: version.into(),
            summary: summary.into(),
            min_players: 2,
            max_players: 8,
            phases: Vec::new(),
            resources: Vec::new(),
            actions: Vec::new(),
            options: Vec::new(),
            vocabulary: Vocabulary::default(),
        }
    }

    /// The registry key, `id@version`.
    pub fn key(&self) -> String {
        format!("{}@{}", self.id, self.version)
    }
}

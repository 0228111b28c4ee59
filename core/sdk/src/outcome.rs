//! How a game finished, or that it has not: the [`Outcome`] every ruleset reports.

use coffer_kernel::Owner;
use serde::{Deserialize, Serialize};

/// How a game finished, or that it has not.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Outcome {
    /// Still being played.
    Ongoing,
    /// Over.
    Finished {
        /// Who won (several on a shared win, none on a draw).
        winners: Vec<Owner>,
        /// Final scores per player, when the ruleset keeps score.
        scores: Vec<i64>,
    },
}

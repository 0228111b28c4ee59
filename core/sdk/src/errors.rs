//! Why an action or a setup was refused: [`ActionError`] and [`SetupError`], in words a player reads.

use coffer_kernel::Owner;
use coffer_kernel::Refusal;
use serde::{Deserialize, Serialize};

/// Why an action was refused. The game is unchanged.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum ActionError {
    /// The action's JSON could not be read as one of this ruleset's actions.
    #[error("malformed action: {0}")]
    Malformed(String),
    /// The player index is not in the game.
    #[error("player {player} is not in this {players}-player game")]
    NoSuchPlayer {
        /// The player asked.
        player: u16,
        /// How many play.
        players: u16,
    },
    /// The player may not act now.
    #[error("it is not {player}'s turn to act: {reason}")]
    NotYourTurn {
        /// Who tried.
        player: Owner,
        /// Whose turn or what is awaited.
        reason: String,
    },
    /// The rules forbid the action now.
    #[error("illegal action: {0}")]
    Illegal(String),
    /// A legal-action index past the end of the list.
    #[error("no legal action #{index}: {player} has {count}")]
    NoSuchLegalAction {
        /// Who acted.
        player: Owner,
        /// The index asked.
        index: usize,
        /// How many legal actions there are.
        count: usize,
    },
    /// The kernel refused a part of it (a cost that could not be paid...).
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The game is over.
    #[error("the game is over")]
    GameOver,
    /// `"~undo"` ([`UNDO`](crate::UNDO)) was refused: the player has nothing to take back now.
    #[error("{player} cannot take back an action: {reason}")]
    CannotUndo {
        /// Who asked.
        player: Owner,
        /// Why, in words.
        reason: String,
    },
    /// The plugin panicked while applying it; the game is unchanged and the plugin is no longer called.
    #[error("the plugin panicked: {0}")]
    Panicked(String),
    /// The plugin panicked earlier and is no longer called.
    #[error("ruleset '{0}' is poisoned (it panicked earlier) and is no longer called")]
    Poisoned(String),
    /// A sandboxed ruleset's call trapped or ran past its deadline: this game was stopped (the words say
    /// which ruleset, call and cause) and takes no more actions; other games go on.
    #[error("the game was stopped: {0}")]
    Stopped(String),
}

/// Why a game could not be started or restored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SetupError {
    /// A player count the ruleset does not support.
    #[error("{got} players: this ruleset takes {min} to {max}")]
    Players {
        /// Asked.
        got: u16,
        /// Fewest.
        min: u16,
        /// Most.
        max: u16,
    },
    /// The configuration is not valid for this ruleset.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// Content (cards, pieces, sides) failed validation.
    #[error("invalid content: {0}")]
    Content(String),
    /// A snapshot could not be read, or does not describe a valid state.
    #[error("invalid snapshot: {0}")]
    Snapshot(String),
    /// The kernel refused a setup step.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// The plugin panicked.
    #[error("the plugin panicked: {0}")]
    Panicked(String),
    /// The plugin panicked earlier and is no longer called.
    #[error("ruleset '{0}' is poisoned (it panicked earlier) and is no longer called")]
    Poisoned(String),
    /// A sandboxed ruleset's call trapped or ran past its deadline while making the game (the words say
    /// which ruleset, call and cause).
    #[error("the game was stopped: {0}")]
    Stopped(String),
}

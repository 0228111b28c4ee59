//! The host's own actions, which the adapter reads before the ruleset's: `"~undo"` (take back the seat's
//! last actions, from the binary snapshots kept before them), `"~default"` (the ruleset's default move)
//! and `"~forfeit"` (take the seat out of the game).

use super::{Game, views::SNAPSHOT_CAPACITY};
use crate::{ActionError, Outcome, Ruleset};
use coffer_kernel::Owner;
use std::fmt;

/// The action that takes back the acting seat's last action, as JSON: a string no ruleset's action
/// reads as. Hosts apply it with [`DynGame::apply_json`](crate::DynGame::apply_json) like any action
/// and log it like any action, so every replay of a log takes the same actions back.
///
/// A seat may take back its own last actions, one per `"~undo"`, while no other seat has acted since,
/// none of them drew random numbers or revealed hidden state ([`Ruleset::reveals`]) and the game has
/// not ended; [`Table::undo`](crate::Table::undo) says who may and how many. Refused otherwise with
/// [`ActionError::CannotUndo`], the game unchanged. Undo returns the whole state, random numbers
/// included, so the state hash after it is the hash before the action it took back.
///
/// What undo keeps is part of the game but not of its snapshot: a game restored from a snapshot, or a
/// [`DynGame::clone_game`](crate::DynGame::clone_game), has nothing to take back. Hosts that take snapshots of a live game take
/// them while [`Table::undo`](crate::Table::undo) is `None`, so that a replay from a snapshot takes back what the live game
/// did.
pub const UNDO: &str = "\"~undo\"";

/// The action that plays the seat's default move ([`Ruleset::default_action`]: pass, end the turn), as
/// JSON; refused with [`ActionError::Illegal`] where the ruleset has none. Hosts play it for a seat whose
/// time ran out.
pub const DEFAULT: &str = "\"~default\"";

/// The action that takes the seat out of the game ([`Ruleset::forfeit`]), as JSON; refused where the
/// ruleset cannot.
pub const FORFEIT: &str = "\"~forfeit\"";

/// The refusal of an undo whose kept state does not read back (it cannot happen: the adapter wrote it).
#[cold]
fn refuse_reason(player: Owner, e: &dyn fmt::Display) -> ActionError {
    ActionError::CannotUndo {
        player,
        reason: format!("the state before the action does not read back ({e})"),
    }
}

/// The host's own actions, which the adapter reads before the ruleset's: [`UNDO`], [`DEFAULT`],
/// [`FORFEIT`]. One place tells them from a ruleset's action, for the adapter and for every host that
/// words or treats them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostAction {
    /// `"~undo"`: take back the seat's last action.
    Undo,
    /// `"~default"`: the ruleset's default move for the seat.
    Default,
    /// `"~forfeit"`: take the seat out of the game.
    Forfeit,
}

impl HostAction {
    /// Its JSON: [`UNDO`], [`DEFAULT`] or [`FORFEIT`].
    pub fn json(self) -> &'static str {
        match self {
            HostAction::Undo => UNDO,
            HostAction::Default => DEFAULT,
            HostAction::Forfeit => FORFEIT,
        }
    }

    /// Which host action `json` is, if any (surrounding whitespace allowed).
    pub fn of(json: &str) -> Option<HostAction> {
        match json.trim() {
            UNDO => Some(HostAction::Undo),
            DEFAULT => Some(HostAction::Default),
            FORFEIT => Some(HostAction::Forfeit),
            _ => None,
        }
    }
}

/// How many of its last actions a seat may take back: each keeps a copy of the state before it. A seat's
/// next action after as many in a row closes the window (nothing can be taken back until its next one),
/// so a window never spans more than this many actions.
pub const UNDO_DEPTH: usize = 8;

impl<R: Ruleset> Game<R> {
    /// Applies host action `host` for `player`.
    pub(super) fn host_action(
        &mut self,
        player: Owner,
        host: HostAction,
    ) -> Result<(), ActionError> {
        match host {
            HostAction::Undo => self.undo(player),
            HostAction::Default => {
                let Some(action) = self.ruleset.default_action(&self.state, player) else {
                    return Err(ActionError::Illegal(format!(
                        "{player} has no default action now"
                    )));
                };
                self.apply_undoable(player, &action)
            }
            HostAction::Forfeit => self.forfeit(player),
        }
    }

    /// Applies `action` as a person's action: keeps the state before it for `"~undo"` when it can be
    /// taken back.
    pub(super) fn apply_undoable(
        &mut self,
        player: Owner,
        action: &R::Action,
    ) -> Result<(), ActionError> {
        let before = self.state.clone();
        self.apply_action(player, action)?;
        let r = &*self.ruleset;
        let closed = r.ledger(&self.state).drew_since(r.ledger(&before))
            || r.outcome(&self.state) != Outcome::Ongoing
            || r.reveals(&before, &self.state, player, action);
        if self.undo_seat != player {
            self.undo.clear();
        }
        // A seat's run of actions longer than UNDO_DEPTH closes the window: it never stays open for
        // long, so hosts that take snapshots outside windows are never kept waiting long.
        if closed || self.undo.len() == UNDO_DEPTH {
            self.undo.clear();
        } else {
            // A snapshot leaves out the events (an undone game answers none) and shared tables.
            match postcard::to_extend(&before, Vec::with_capacity(SNAPSHOT_CAPACITY)) {
                Ok(mut bytes) => {
                    bytes.shrink_to_fit();
                    self.undo.push(bytes);
                    self.undo_seat = player;
                }
                // Serializing a state cannot fail (see `state_hash`); if it did, nothing is kept.
                Err(_) => self.undo.clear(),
            }
        }
        Ok(())
    }

    /// `"~forfeit"`: the ruleset takes `player` out of the game, atomically.
    fn forfeit(&mut self, player: Owner) -> Result<(), ActionError> {
        if self.ruleset.outcome(&self.state) != Outcome::Ongoing {
            return Err(ActionError::GameOver);
        }
        let before = self.ruleset.ledger(&self.state).events().len();
        let mark = self.ruleset.ledger_mut(&mut self.state).begin();
        match self.ruleset.forfeit(&mut self.state, player) {
            Ok(()) => self.ruleset.ledger_mut(&mut self.state).commit(mark),
            Err(e) => {
                self.ruleset.ledger_mut(&mut self.state).rollback(mark);
                return Err(e);
            }
        }
        self.undo.clear();
        self.accepted(before);
        Ok(())
    }

    /// `"~undo"`: returns to the state before `player`'s last action.
    fn undo(&mut self, player: Owner) -> Result<(), ActionError> {
        let refuse = |reason: String| Err(ActionError::CannotUndo { player, reason });
        if self.undo.is_empty() {
            return refuse("nothing can be taken back now".to_owned());
        }
        if self.undo_seat != player {
            return refuse(format!("the last action was {}'s", self.undo_seat));
        }
        if let Some(bytes) = self.undo.pop() {
            let mut before: R::State =
                postcard::from_bytes(&bytes).map_err(|e| refuse_reason(player, &e))?;
            self.ruleset.ledger_mut(&mut before).shrink_to_fit();
            self.state = before;
            self.events_from = self.ruleset.ledger(&self.state).events().len();
            self.changed();
        }
        Ok(())
    }
}

//! Taking back actions (`"~undo"`, [`coffer_core::UNDO`]): the ruleset's adapter keeps what an undo
//! returns to and refuses what cannot be taken back (another seat's action, a draw, a card shown); the
//! server refuses besides the moves it played itself, so a seat cannot take back its bot's or its
//! timeout's move (and stall a game by undoing every timeout), and keeps its snapshots out of a seat's
//! undo window, so that every replay from a snapshot takes back what the live game did.

use super::*;
use coffer_core::{HostAction, Names};

/// Whether `action` (JSON) is an undo.
pub(super) fn is_undo(action: &str) -> bool {
    HostAction::of(action) == Some(HostAction::Undo)
}

/// Who chose the game's last committed actions, newest last: what the server lets a seat take back.
/// Rebuilt with the game from the actions after its snapshot (no snapshot falls inside a seat's undo
/// window), so it survives a restart and a takeover.
#[derive(Debug, Default)]
pub(super) struct Moves(Vec<(u16, Option<Chooser>)>);

impl Moves {
    /// The moves of `tail`, the actions after the game's snapshot.
    pub(super) fn of(tail: &[Action]) -> Moves {
        let mut moves = Moves::default();
        for action in tail {
            moves.note(
                action.seat as u16,
                action.key.as_deref(),
                is_undo(action.action.get()),
            );
        }
        moves
    }

    /// A committed action of `seat`, keyed `key`, that took the seat's last action back or not.
    pub(super) fn note(&mut self, seat: u16, key: Option<&str>, undo: bool) {
        if undo {
            self.0.pop();
            return;
        }
        if self.0.len() > coffer_core::UNDO_DEPTH {
            self.0.remove(0);
        }
        self.0.push((seat, Chooser::of(key)));
    }

    /// Why `seat` may not take back the last action, in words; `None`: the ruleset decides.
    pub(super) fn refusal(&self, seat: u16, names: &Names<'_>) -> Option<String> {
        let who = names.owner(Owner(seat));
        match self.0.last() {
            Some((s, None)) if *s == seat => None,
            Some((s, Some(chooser))) if *s == seat => Some(format!(
                "{who} cannot take back an action: the last move was played for {who} {}, not \
                 chosen at the table",
                match chooser {
                    Chooser::Bot => "by its bot",
                    Chooser::Timeout => "when its clock ran out",
                    Chooser::Server => "by the server",
                }
            )),
            _ => Some(format!(
                "{who} cannot take back an action: only a seat's own last actions can be taken \
                 back, before another seat acts"
            )),
        }
    }
}

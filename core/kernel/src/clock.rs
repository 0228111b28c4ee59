//! The game clock (K10): game > act/round > turn > phase > step, and where the clock stands.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A scope of the game's clock, from the outermost ([`Scope::Game`]) to the innermost ([`Scope::Step`]).
///
/// Scopes are ordered outer to inner: `Scope::Game < Scope::Act < ... < Scope::Step`. Ending a scope also
/// ends every scope inside it, so a lifetime or a recurrence "at `s`" is processed when `s` or any scope
/// outside it ends.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub enum Scope {
    /// The whole game: never ends during play.
    Game,
    /// An act or a round.
    Act,
    /// A player's turn.
    Turn,
    /// A phase of a turn or round.
    Phase,
    /// A step of a phase.
    Step,
}

impl Scope {
    /// Every scope, outer to inner.
    pub const ALL: [Scope; 5] = [
        Scope::Game,
        Scope::Act,
        Scope::Turn,
        Scope::Phase,
        Scope::Step,
    ];

    /// Whether ending `ended` ends this scope too (this scope is `ended` or lies inside it).
    #[inline]
    pub fn ends_with(self, ended: Scope) -> bool {
        self >= ended
    }

    /// Lower-case name, as shown to users.
    pub fn name(self) -> &'static str {
        match self {
            Scope::Game => "game",
            Scope::Act => "act",
            Scope::Turn => "turn",
            Scope::Phase => "phase",
            Scope::Step => "step",
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How many acts, turns, phases and steps have ended. Ending a scope counts it and restarts the counts of
/// the scopes inside it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct Clock {
    /// Acts (or rounds) ended so far.
    pub act: u32,
    /// Turns ended in the current act.
    pub turn: u32,
    /// Phases ended in the current turn.
    pub phase: u32,
    /// Steps ended in the current phase.
    pub step: u32,
}

impl Clock {
    /// The clock after `scope` ends. Ending [`Scope::Game`] leaves the counts unchanged.
    pub fn after(self, scope: Scope) -> Clock {
        let mut c = self;
        match scope {
            Scope::Game => {}
            Scope::Act => {
                c.act = c.act.saturating_add(1);
                c.turn = 0;
                c.phase = 0;
                c.step = 0;
            }
            Scope::Turn => {
                c.turn = c.turn.saturating_add(1);
                c.phase = 0;
                c.step = 0;
            }
            Scope::Phase => {
                c.phase = c.phase.saturating_add(1);
                c.step = 0;
            }
            Scope::Step => c.step = c.step.saturating_add(1),
        }
        c
    }
}

//! Player actions: the serde [`Action`] enum, its CP cost split ([`CpSplit`]), and the actions' codes in
//! `Cause::Action`. Who may take one is in [`validate`](crate::validate), what it does in
//! [`apply`](crate::apply).

use crate::cards::Band;
use crate::content::MAX_CP_COST;
use serde::{Deserialize, Serialize};

/// A CP cost split over permanents (S8, K7): `[[card, cp], ...]`, cards in ascending order, each once, each
/// part at least 1.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<(u16, u16)>", into = "Vec<(u16, u16)>")]
pub struct CpSplit {
    len: u8,
    parts: [(u16, u16); MAX_CP_COST as usize],
}

impl CpSplit {
    /// The parts, `(card, cp)`.
    pub fn parts(&self) -> &[(u16, u16)] {
        &self.parts[..usize::from(self.len)]
    }

    /// Whether no CP is paid.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The total CP.
    pub fn total(&self) -> u32 {
        self.parts().iter().map(|&(_, n)| u32::from(n)).sum()
    }

    pub(crate) fn push(&mut self, card: u16, n: u16) {
        self.parts[usize::from(self.len)] = (card, n);
        self.len += 1;
    }

    pub(crate) fn pop(&mut self) {
        self.len -= 1;
        self.parts[usize::from(self.len)] = (0, 0);
    }
}

impl TryFrom<Vec<(u16, u16)>> for CpSplit {
    type Error = String;
    fn try_from(v: Vec<(u16, u16)>) -> Result<CpSplit, String> {
        if v.len() > MAX_CP_COST as usize {
            return Err(format!(
                "a CP split of {} parts: it has at most {MAX_CP_COST}, one per CP of the largest CP cost",
                v.len()
            ));
        }
        let mut s = CpSplit::default();
        for (card, n) in v {
            s.push(card, n);
        }
        Ok(s)
    }
}

impl From<CpSplit> for Vec<(u16, u16)> {
    fn from(s: CpSplit) -> Vec<(u16, u16)> {
        s.parts().to_vec()
    }
}

/// One player action. JSON: `{"type":"deploy","card":3}`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// S3: deploy (or, for a Maneuver, play) a card from hand, paying its Currency cost; a Maneuver also pays
    /// its Vote cost and its CP cost split as `cp` says, and names a `target` when its effect needs one.
    Deploy {
        /// The card instance, in hand.
        card: u16,
        /// The target card of a targeted effect.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<u16>,
        /// The CP cost's split.
        #[serde(default, skip_serializing_if = "CpSplit::is_empty")]
        cp: CpSplit,
    },
    /// S5: activate a card to commit its printed Votes to the Resource Pool (a Fast action).
    CommitVotes {
        /// The card instance.
        card: u16,
    },
    /// S6: activate a permanent printing "Add N EV".
    AddEv {
        /// The card instance.
        card: u16,
    },
    /// S5: push a Galactic Factor `steps` steps up or down, paying committed Votes.
    PushFactor {
        /// Factor index.
        factor: u8,
        /// Up (`true`) or down.
        up: bool,
        /// Steps.
        steps: u8,
    },
    /// S8: use a Character's "-X CP:" ability, paid from its own CP, once per turn.
    UseAbility {
        /// The card instance.
        card: u16,
    },
    /// S15: move a ready unit to an adjacent Band (activates it).
    Move {
        /// The unit.
        card: u16,
        /// The Band.
        to: Band,
    },
    /// S14: a ready unit in a Surface Band captures a Surface Location there that another player controls
    /// and none of that player's units defends; it becomes Contested.
    Capture {
        /// The Surface Location.
        location: u16,
        /// The capturing unit.
        unit: u16,
    },
    /// S14: pay the Restore cost to make a Contested Surface Location you control uncontested.
    Restore {
        /// The Surface Location.
        location: u16,
    },
    /// Advance a Storyline one step, paying its EV per step.
    AdvanceStoryline {
        /// The Storyline.
        card: u16,
    },
    /// S12: complete a Storyline whose steps are all done: the Act ends at once.
    CompleteStoryline {
        /// The Storyline.
        card: u16,
    },
    /// S10/K6: discard a card from hand while over the hand limit at the End Phase.
    Discard {
        /// The card instance, in hand.
        card: u16,
    },
    /// End the main phase: the End Phase checks the hand limit, then the next player's turn begins.
    EndTurn {},
}

coffer_core::action_codes!(Action {
    Deploy => "Deploy",
    CommitVotes => "Commit Votes",
    AddEv => "Add EV",
    PushFactor => "Push a Galactic Factor",
    UseAbility => "Use a CP ability",
    Move => "Move",
    Capture => "Capture",
    Restore => "Restore",
    AdvanceStoryline => "Advance a Storyline",
    CompleteStoryline => "Complete a Storyline",
    Discard => "Discard",
    EndTurn => "End Turn",
});

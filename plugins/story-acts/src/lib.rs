//! Coffer ruleset `story-acts`: the Story/Act card game's resources (Currency, Votes, EV, CP, Story Points)
//! and its Acts, on the kernel's primitives.
//!
//! It speaks the rulebook's words ([`words`]: the vocabulary and resource labels), shows each seat its
//! table ([`table`]: the Act, the phase, who may act and why, hands, cards in play, Galactic Factors, the
//! Acts' results), hides hands from everyone but their owner and decks from everyone, and writes refusals
//! for the player who tried ([`refusals`]).
//!
//! ```
//! use coffer_core::{Adapter, Owner, Setup};
//! use coffer_story_acts::StoryActs;
//!
//! let ruleset = Adapter::shared(StoryActs::new());
//! let mut game = ruleset.new_game(&Setup::new(2, 7)).unwrap();
//! assert!(game.legal_actions(Owner(0)) > 0);
//! game.apply_json(Owner(0), r#"{"type":"end_turn"}"#).unwrap();
//! ```

pub mod actions;
pub mod apply;
pub mod card_db;
pub mod cards;
pub mod config;
pub mod content;
pub mod describe;
pub mod invariants;
pub mod legal;
pub mod refusals;
pub mod rules;
pub mod scoring;
pub mod setup;
pub mod state;
pub mod table;
pub mod validate;
pub mod words;

pub use actions::{Action, CpSplit};
pub use card_db::CardDb;
pub use cards::{Band, Card, Handles, Slot, SlotError, Zone};
pub use config::{AwardTo, Config, FactorDef, PoliticalTie, Rules};
pub use content::{CardDef, CardType, ContentError, Deed, Effect};
pub use describe::{ID, OPTIONS, action_docs};
pub use refusals::{PendingChoice, Rule, Why};
pub use scoring::{ScoreLines, act_winner, score_lines};
pub use setup::bounds;
pub use state::{ActResult, Phase, Seat, State};
pub use words::vocabulary;

use coffer_core::{
    ActionError, Description, Key, Ledger, Outcome, Owner, SetupError, Table, Violation,
};
use state::kind;

/// The `story-acts` ruleset.
#[derive(Clone, Copy, Debug, Default)]
pub struct StoryActs;

impl StoryActs {
    /// The ruleset.
    pub fn new() -> StoryActs {
        StoryActs
    }
}

coffer_core::plugin!(StoryActs::new());

impl coffer_core::Ruleset for StoryActs {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        describe::description()
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        setup::setup(players, seed, config)
    }

    fn legal_actions(&self, state: &State, player: Owner, out: &mut Vec<Action>) {
        legal::legal(state, player, out);
    }

    /// Nobody after the end or outside the Main phase, the chooser of a pending discard, else everybody
    /// (out-of-turn fast Maneuvers and votes).
    fn to_act(&self, state: &State, out: &mut Vec<Owner>) {
        legal::to_act(state, out);
    }

    fn apply(&self, state: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        apply::apply(state, player, action)
    }

    fn ledger<'s>(&self, state: &'s State) -> &'s Ledger {
        &state.ledger
    }

    fn ledger_mut<'s>(&self, state: &'s mut State) -> &'s mut Ledger {
        &mut state.ledger
    }

    fn outcome(&self, state: &State) -> Outcome {
        match &state.winners {
            None => Outcome::Ongoing,
            Some(w) => Outcome::Finished {
                winners: w.iter().map(|&p| Owner(p)).collect(),
                scores: (0..state.players())
                    .map(|p| state.act_wins(Owner(p)))
                    .collect(),
            },
        }
    }

    /// The Act, the phase, whose turn it is, who may act and why, and the game's own state (see
    /// [`table`]): a seat's table shows its own hand; other hands and the decks are counts.
    fn table(&self, state: &State, seat: Option<Owner>, table: &mut Table) {
        table::fill(state, seat, table);
    }

    /// Cards in a hand are seen by their owner alone, cards in a deck by nobody: their readiness, CP and
    /// ability resources, and the notes about them, are hidden accordingly. Everything else is public.
    fn visible(&self, state: &State, key: Key, seat: Option<Owner>) -> bool {
        match key.kind {
            kind::CARD | kind::CP | kind::ABILITY => {
                u16::try_from(key.subject).is_ok_and(|card| state.sees_card(seat, card))
            }
            _ => true,
        }
    }

    /// An action reveals when a card some seat (or a spectator) could not see becomes one it can: a
    /// card deployed from a hand, a card drawn from a deck. Such an action cannot be taken back.
    fn reveals(&self, before: &State, after: &State, _: Owner, _: &Action) -> bool {
        let seats = (0..after.players()).map(|p| Some(Owner(p))).chain([None]);
        let cards = u16::try_from(after.cards.len()).unwrap_or(u16::MAX);
        seats.into_iter().any(|seat| {
            (0..cards).any(|card| !before.sees_card(seat, card) && after.sees_card(seat, card))
        })
    }

    /// A seat out of time ends its turn where it may; otherwise the host's policy plays.
    fn default_action(&self, state: &State, player: Owner) -> Option<Action> {
        let mut legal = Vec::new();
        self.legal_actions(state, player, &mut legal);
        legal
            .into_iter()
            .find(|a| matches!(a, Action::EndTurn { .. }))
    }

    /// A seat of a two-player game forfeits: the other seat wins at once. With more seats the game has
    /// no elimination, and hosts give the seat to a bot instead.
    fn forfeit(&self, state: &mut State, player: Owner) -> Result<(), ActionError> {
        let players = state.players();
        if players != 2 {
            return Err(ActionError::Illegal(format!(
                "only a seat of a two-player game can forfeit; this game has {players} players"
            )));
        }
        state.winners = Some(vec![1 - player.0]);
        Ok(())
    }

    fn label(&self, state: &State, key: Key) -> Option<String> {
        words::label(state, key)
    }

    /// The ruleset's own invariants (the host checks the ledger's first).
    fn check_invariants(&self, state: &State) -> Result<(), Violation> {
        invariants::check(state)
    }
}

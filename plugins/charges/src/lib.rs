//! # coffer-charges
//!
//! The `charges` ruleset: X-Wing second edition charges, Force, shields and energy (RULES.md C1–C20) on
//! the Coffer kernel's charge tracks. Ships and upgrades are data ([`content`]); a game is a squad per
//! player played through Planning, System, Activation, Engagement and End phases, with dice results and
//! damage given as action inputs. Its [`words`] names everything in the rulebook's words, and its
//! [`table`] shows each seat the game, a planned dial only to its owner until it is revealed.
//!
//! ```
//! use coffer_core::{Adapter, Owner, Setup};
//!
//! let charges = Adapter::shared(coffer_charges::Charges::new());
//! let mut game = charges.new_game(&Setup::new(2, 1)).unwrap();
//! game.apply_json(Owner(0), r#"{"type":"plan","ship":0,"maneuver":"white"}"#).unwrap();
//! let refused = game.apply_json(Owner(0), r#"{"type":"plan","ship":1,"maneuver":"white"}"#);
//! assert_eq!(
//!     refused.unwrap_err().to_string(),
//!     "it is not p0's turn to act: p1's Darth Vader is not p0's ship"
//! );
//! let table = game.table(None);
//! assert_eq!(table.acting[0].why, "to plan a dial for Darth Vader");
//! assert!(table.sections[0].rows[0].value.contains("dial planned, not executed"));
//! ```

pub mod actions;
pub mod apply;
pub mod content;
pub mod describe;
pub mod invariants;
pub mod legal;
pub mod refusals;
pub mod rules;
pub mod setup;
pub mod state;
pub mod table;
pub mod turn;
pub mod validate;
pub mod words;

pub use actions::{Action, ChargeRef, ShipAction};
pub use content::{Content, ContentError};
pub use describe::{action_docs, option_docs};
pub use refusals::Why;
pub use state::{Config, Device, ForceRecovery, Phase, ShipChoice, State, default_squads};
pub use turn::Turn;

use coffer_core::{
    ActionError, Description, Key, Ledger, Outcome, Owner, Ruleset, SetupError, Table, Violation,
};

/// The `charges` ruleset.
#[derive(Clone, Copy, Debug, Default)]
pub struct Charges;

impl Charges {
    /// The ruleset.
    pub fn new() -> Charges {
        Charges
    }
}

impl Ruleset for Charges {
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
        legal::legal_actions(state, player, out);
    }

    fn to_act(&self, state: &State, out: &mut Vec<Owner>) {
        turn::to_act(state, out);
    }

    fn apply(&self, state: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        if state.winners.is_some() {
            return Err(ActionError::GameOver);
        }
        apply::apply(state, player, action)
    }

    fn ledger<'s>(&self, state: &'s State) -> &'s Ledger {
        &state.ledger
    }

    fn ledger_mut<'s>(&self, state: &'s mut State) -> &'s mut Ledger {
        &mut state.ledger
    }

    fn outcome(&self, state: &State) -> Outcome {
        state.outcome()
    }

    /// A seat out of time passes with a ship, or says it is done, where it may; otherwise the host's
    /// policy plays.
    fn default_action(&self, state: &State, player: Owner) -> Option<Action> {
        let mut legal = Vec::new();
        legal::legal_actions(state, player, &mut legal);
        legal
            .into_iter()
            .find(|a| matches!(a, Action::Pass { .. } | Action::Done))
    }

    /// A seat of a two-player game forfeits: the other seat wins at once. With more seats the game has
    /// no elimination, and hosts give the seat to a bot instead.
    fn forfeit(&self, state: &mut State, player: Owner) -> Result<(), ActionError> {
        let players = state.done.len();
        if players != 2 {
            return Err(ActionError::Illegal(format!(
                "only a seat of a two-player game can forfeit; this game has {players} players"
            )));
        }
        state.winners = Some(vec![Owner(1 - player.0)]);
        Ok(())
    }

    fn table(&self, state: &State, seat: Option<Owner>, table: &mut Table) {
        table::fill(state, seat, table);
    }

    fn label(&self, state: &State, key: Key) -> Option<String> {
        words::label(state, key)
    }

    /// The ruleset's own invariants (the host checks the ledger's first).
    fn check_invariants(&self, state: &State) -> Result<(), Violation> {
        invariants::check(state)
    }
}

coffer_core::plugin!(Charges::new());

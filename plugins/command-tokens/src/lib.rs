//! Coffer ruleset `command-tokens`: Twilight Imperium 4 command tokens, pools and reinforcements (clauses
//! T1-T29), on the kernel's token supplies (K4), limits awaiting a choice (K6), exhaustion (K5) and clock.
//!
//! ```
//! use coffer_command_tokens::CommandTokens;
//! use coffer_core::{Adapter, Names, Owner, Setup};
//!
//! let ruleset = Adapter::shared(CommandTokens::new());
//! let mut game = ruleset.new_game(&Setup::new(3, 1)).unwrap();
//! let table = game.table(None);
//! assert_eq!(table.acting[0].why, "to pick a strategy card");
//! // The speaker (p0) picks Leadership in the strategy phase.
//! game.apply_json(Owner(0), r#"{"type":"pick","card":0}"#).unwrap();
//! assert!(game.check_invariants().is_ok());
//! let vocabulary = &ruleset.description().vocabulary;
//! let names = Names::with_resources(vocabulary, &game.resources(None));
//! let said = names.event(&game.events()[0], None).unwrap();
//! assert_eq!(said, "p0 picks Leadership, by p0's strategy card pick");
//! ```

mod actions;
mod apply;
mod config;
pub mod content;
mod describe;
mod flow;
mod galaxy;
mod ids;
mod invariants;
mod legal;
mod phase;
mod refusals;
mod resolve;
mod rules;
mod setup;
mod state;
mod table;
mod words;

pub use actions::{Action, Players};
pub use config::{
    Ability, AgendaOp, AgendaRule, COMMAND_TOKENS, Config, Forge, HandCard, MAX_INFLUENCE,
    MAX_PLAYERS, MAX_PRODUCTION, MAX_ROUNDS, MAX_SYSTEMS, MIN_PLAYERS, NOBODY, Rules, ShipsConfig,
    SystemConfig, SystemInfo, Vote,
};
pub use content::{
    AbilityKind, AbilitySpec, ActionCard, Agenda, AgendaEffect, Card, CardEffect, Content,
    ContentError, ContentOverride, Effect, EffectSpec, Faction, Law, Placed, ShipClass, StarForge,
    StrategyCard, Technology, Window,
};
pub use galaxy::default_galaxy;
pub use ids::{Pool, effect, face, kind, note};
pub use phase::{Flow, Phase, Step};
pub use setup::{Prepared, StartShips};
pub use state::{Handles, State, ship_supply};
pub use words::vocabulary;

use coffer_core::{
    ActionError, Description, Key, Ledger, Outcome, Owner, Ruleset, SetupError, Table, Violation,
};
use std::sync::OnceLock;

/// The ruleset. Keeps the default configuration's setup per player count, resolved on first use (and with
/// it, those games' shared rules alive).
pub struct CommandTokens {
    defaults: [OnceLock<Result<Prepared, SetupError>>; MAX_PLAYERS + 1],
}

impl CommandTokens {
    /// The ruleset with the embedded content (`data/*.json`).
    pub fn new() -> CommandTokens {
        CommandTokens {
            defaults: std::array::from_fn(|_| OnceLock::new()),
        }
    }
}

impl Default for CommandTokens {
    fn default() -> CommandTokens {
        CommandTokens::new()
    }
}

impl Ruleset for CommandTokens {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        describe::description()
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        let cached = self
            .defaults
            .get(usize::from(players))
            .filter(|_| *config == Config::default());
        match cached {
            Some(cell) => State::from_prepared(
                cell.get_or_init(|| Prepared::new(players, config))
                    .as_ref()
                    .map_err(Clone::clone)?,
                seed,
            ),
            None => State::from_prepared(&Prepared::new(players, config)?, seed),
        }
    }

    #[inline]
    fn legal_actions(&self, state: &State, player: Owner, out: &mut Vec<Action>) {
        state.legal_actions(player, out);
    }

    /// Only the player whose decision the game waits for ([`State::actor`]) ever has legal actions.
    fn to_act(&self, state: &State, out: &mut Vec<Owner>) {
        out.extend(state.actor());
    }

    #[inline]
    fn apply(&self, state: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        state.apply(player, action)
    }

    fn ledger<'s>(&self, state: &'s State) -> &'s Ledger {
        &state.ledger
    }

    fn ledger_mut<'s>(&self, state: &'s mut State) -> &'s mut Ledger {
        &mut state.ledger
    }

    fn outcome(&self, state: &State) -> Outcome {
        if state.flow.phase != Phase::Over || !state.ledger.pending().is_empty() {
            return Outcome::Ongoing;
        }
        // An eliminated player (T18) ranks below every player still in the game.
        let score = |p| match state.is_eliminated(p) {
            true => -1,
            false => i64::from(state.sheet(p)),
        };
        Outcome::by_score(state.owners().map(score).collect())
    }

    /// The same table for every seat and spectators: nothing in this ruleset is hidden.
    fn table(&self, state: &State, _: Option<Owner>, table: &mut Table) {
        state.fill_table(table);
    }

    fn label(&self, state: &State, key: Key) -> Option<String> {
        let r = &state.rules;
        let s = key.subject as usize;
        Some(match key.kind {
            kind::REINFORCEMENTS => "reinforcements".into(),
            kind::TACTIC => "tactic pool".into(),
            kind::FLEET => "fleet pool".into(),
            kind::STRATEGY => "strategy pool".into(),
            kind::SYSTEM => r.system_labels.get(s)?.clone(),
            kind::SHIP_RESERVE => format!("{} reinforcements", r.classes.get(s)?.name),
            kind::SHIPS => {
                let classes = r.class_count().max(1);
                format!(
                    "{} in {}",
                    r.classes.get(s % classes)?.name,
                    r.system_labels.get(s / classes)?
                )
            }
            kind::INFLUENCE => "influence".into(),
            kind::STRUCTURES => "structures".into(),
            kind::CARD => r.cards.get(s)?.name.clone(),
            kind::FLEET_LIMIT => format!("fleet in {}", r.system_labels.get(s)?),
            kind::CAPTURED => format!("fleet pool of {}", r.faction_names.get(s)?),
            kind::AGENDA => r.agendas.get(s)?.name.clone(),
            kind::ABILITY => r.abilities.get(s)?.name.clone(),
            kind::ACTION_CARD => r.hands.get(s)?.name.clone(),
            kind::FRAGMENTS => "relic fragments".into(),
            kind::BOX => match s {
                0 => "command tokens in the game box".into(),
                s => format!("{} in the game box", r.classes.get(s - 1)?.name),
            },
            _ => return None,
        })
    }

    /// A seat out of time passes, declines or says it is done where it may; otherwise the host's policy
    /// plays. (Games of three or more seats have no elimination: a seat that leaves is played by a bot.)
    fn default_action(&self, state: &State, player: Owner) -> Option<Action> {
        let mut legal = Vec::new();
        self.legal_actions(state, player, &mut legal);
        legal.into_iter().find(|a| {
            matches!(
                a,
                Action::Pass
                    | Action::Done
                    | Action::Decline
                    | Action::NoCard
                    | Action::EndMovement
                    | Action::NoRetreat
            )
        })
    }

    fn check_invariants(&self, state: &State) -> Result<(), Violation> {
        state.check_rules()
    }
}

coffer_core::plugin!(CommandTokens::new());

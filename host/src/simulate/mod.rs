//! Random playouts with invariant checking under load (`coffer simulate`), and the shrinking of a found
//! violation into a minimal `coffer play` script.
//!
//! Everything here drives an `Arc<dyn DynRuleset>` only, so a statically linked ruleset and one loaded at
//! runtime are simulated by exactly the same code.
//!
//! # What one game does
//! Game `i` of a run starts from seed `seed + i` (wrapping) and, unless [`SimOptions::players`] fixes it, a
//! player count drawn from that seed within the ruleset's range. A separate generator seeded from the same
//! seed makes the playout's choices, so the game's own RNG is never disturbed. At each step:
//!
//! 1. **Choice of a legal action**: the players the ruleset says may act ([`DynGame::to_act`]), with their
//!    legal-action counts, come from one call ([`DynGame::acting`]); they are visited in a random order (a
//!    lazy Fisher-Yates shuffle) and the first one with at least one legal action acts; among its actions
//!    one is drawn uniformly. This is uniform over *the players who can act*, then uniform over *that
//!    player's actions* (not uniform over all (player, action) pairs).
//! 2. **Illegal attempts**: with probability [`SimOptions::illegal_share`], instead of a legal action the
//!    playout tries one of: malformed JSON, an unknown action type, a legal action's JSON applied by another
//!    player, an out-of-range player index, the legal action with a number changed to an extreme value
//!    (huge, negative, fractional, one past the end...), or a legal-action index past the end of the list.
//!    Every refusal must leave the state hash unchanged; an attempt that is accepted must be in the acting
//!    player's legal list (otherwise the enumeration is incomplete); a plugin panic is always a violation.
//! 3. After every applied action: [`DynGame::check_invariants`] (the kernel's caps, floors, charge bounds
//!    and per-owner token totals, plus the ruleset's own invariants).
//! 4. Every [`SimOptions::check_every`] actions and at the end of the game: every player with a legal action
//!    is listed by [`DynGame::to_act`] (else the playout would never ask them); a clone has the same state
//!    hash; a JSON and a binary snapshot, restored by [`DynRuleset::restore`], have the same hash; and a
//!    replica game, started fresh from the same setup and fed the log (each legal action as its JSON,
//!    through [`DynGame::apply_json`]), has the same hash.
//!
//! The game stops when its outcome is [`Outcome::Finished`] (a finished game must list no legal action),
//! when nobody has a legal action, or after [`SimOptions::max_actions`] applied actions.
//!
//! # Violations
//! A game stops at its first violation. Its log is turned into a `coffer play` script (JSON Lines of
//! `{"player":P,"action":{...}}`), shrunk by delta debugging while [`check_script`] still finds a violation
//! of the same kind, and written to [`SimOptions::repro_dir`]. [`check_script`] (`coffer simulate ID
//! --check-script FILE`) re-runs such a script with every check after every line; `coffer play ... --keep-going`
//! re-runs it too.
//!
//! ```
//! # use coffer_core::*;
//! # use serde::{Deserialize, Serialize};
//! # struct Coins;
//! # #[derive(Clone, Debug, Serialize, Deserialize)]
//! # struct State { ledger: Ledger, purse: Vec<AmountId> }
//! # #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! # enum Action { Take }
//! # impl Ruleset for Coins {
//! #     type State = State; type Action = Action; type Config = ();
//! #     fn describe(&self) -> Description { Description::new("coins", "0.1.0", "take coins") }
//! #     fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
//! #         let mut ledger = Ledger::new(players, seed);
//! #         let purse = (0..players)
//! #             .map(|p| ledger.add_amount(AmountSpec::new(Key::new(Owner(p), Kind(0), 0)).cap(3)))
//! #             .collect::<Result<_, _>>()?;
//! #         Ok(State { ledger, purse })
//! #     }
//! #     fn legal_actions(&self, s: &State, _: Owner, out: &mut Vec<Action>) {
//! #         if self.outcome(s) == Outcome::Ongoing { out.push(Action::Take) }
//! #     }
//! #     fn apply(&self, s: &mut State, p: Owner, _: &Action) -> Result<(), ActionError> {
//! #         if self.outcome(s) != Outcome::Ongoing { return Err(ActionError::GameOver) }
//! #         s.ledger.gain(s.purse[p.index()], 1, Cause::Action { player: p, code: 0 })?;
//! #         Ok(())
//! #     }
//! #     fn ledger<'s>(&self, s: &'s State) -> &'s Ledger { &s.ledger }
//! #     fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger { &mut s.ledger }
//! #     fn outcome(&self, s: &State) -> Outcome {
//! #         let winners: Vec<Owner> = (0..s.ledger.owners()).map(Owner)
//! #             .filter(|p| s.ledger.value(s.purse[p.index()]) == 3).collect();
//! #         if winners.is_empty() { Outcome::Ongoing } else { Outcome::Finished { winners, scores: vec![] } }
//! #     }
//! # }
//! use coffer_host::simulate::{self, SimOptions};
//!
//! let ruleset = Adapter::shared(Coins); // or a ruleset loaded at runtime
//! let options = SimOptions { games: 50, seed: 7, ..SimOptions::default() };
//! let report = simulate::run(&ruleset, &options, &|| {});
//! assert_eq!(report.games, 50);
//! assert!(report.violations.is_empty(), "{report}");
//! ```

//!
//! # Where the code lives
//! `report`: what a run is asked and reports; `playout`: the hot path shared with the host's games; `run`:
//! a checked run; `attempt` and `deep_check`: the checks of a checked game; `script`: scripts.

pub(crate) mod attempt;
pub(crate) mod deep_check;
pub(crate) mod playout;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod script;

pub use coffer_core::PlayoutError;
pub use playout::{Played, pick_legal, playout, playout_with};
pub use report::{
    Found, Report, ScriptLine, ScriptViolation, SimOptions, ThreadReport, ViolationKind,
};
pub use run::run;
pub use script::{
    ScriptSetupError, check_script, parse_script, script_setup, shrink, write_script,
};

//! The [`Ruleset`] trait a game module implements: its state, actions and configuration, and what the
//! host asks of it. Hosts drive it through the object-safe [`DynRuleset`](crate::DynRuleset) /
//! [`DynGame`](crate::DynGame) pair (`dynamic.rs`), statically linked or loaded at runtime alike.
//!
//! # Lifecycle
//! 1. A plugin crate implements [`Ruleset`] and invokes [`plugin!`](../coffer_core/macro.plugin.html) once. That registers the
//!    ruleset statically (`inventory`) and exports it from the crate's `cdylib` build.
//! 2. The host finds it (statically, or by loading the library) as an `Arc<dyn DynRuleset>`.
//! 3. [`DynRuleset::new_game`] starts a game from players, seed and JSON configuration; the host then asks
//!    for legal actions and applies them, by index on the hot path or from a user's JSON.
//! 4. Each applied action is one kernel transaction: a refused action leaves the kernel state as it was.
//!
//! ```
//! use coffer_kernel::*;
//! use coffer_sdk::*;
//! use serde::{Deserialize, Serialize};
//!
//! /// A one-resource game: each player may add 1 to a purse capped at 3; first to 3 wins.
//! struct Coins;
//!
//! #[derive(Clone, Debug, Serialize, Deserialize)]
//! struct State { ledger: Ledger, purse: Vec<AmountId> }
//!
//! #[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
//! enum Action { Take }
//!
//! impl Ruleset for Coins {
//!     type State = State;
//!     type Action = Action;
//!     type Config = ();
//!     fn describe(&self) -> Description {
//!         Description::new("coins", "0.1.0", "take coins until you have three")
//!     }
//!     fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
//!         let mut ledger = Ledger::new(players, seed);
//!         let purse = (0..players)
//!             .map(|p| ledger.add_amount(AmountSpec::new(Key::new(Owner(p), Kind(0), 0)).cap(3)))
//!             .collect::<Result<_, _>>()?;
//!         Ok(State { ledger, purse })
//!     }
//!     fn legal_actions(&self, s: &State, p: Owner, out: &mut Vec<Action>) {
//!         if self.outcome(s) == Outcome::Ongoing { out.push(Action::Take) }
//!     }
//!     fn apply(&self, s: &mut State, p: Owner, _: &Action) -> Result<(), ActionError> {
//!         if self.outcome(s) != Outcome::Ongoing { return Err(ActionError::GameOver) }
//!         s.ledger.gain(s.purse[p.index()], 1, Cause::Action { player: p, code: 0 })?;
//!         Ok(())
//!     }
//!     fn ledger<'s>(&self, s: &'s State) -> &'s Ledger { &s.ledger }
//!     fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger { &mut s.ledger }
//!     fn outcome(&self, s: &State) -> Outcome {
//!         let winners: Vec<Owner> = (0..s.ledger.owners()).map(Owner)
//!             .filter(|p| s.ledger.value(s.purse[p.index()]) == 3).collect();
//!         if winners.is_empty() { Outcome::Ongoing } else { Outcome::Finished { winners, scores: vec![] } }
//!     }
//! }
//!
//! let coins = Adapter::shared(Coins);
//! let mut game = coins.new_game(&Setup::new(2, 42)).unwrap();
//! assert_eq!(game.legal_actions(Owner(0)), 1);
//! game.apply_json(Owner(0), r#""Take""#).unwrap();
//! assert_eq!(game.events().len(), 1);
//! assert!(matches!(game.apply_json(Owner(0), r#""Give""#), Err(ActionError::Malformed(_))));
//! ```

use crate::{ActionError, Description, Outcome, SetupError, Table};
use coffer_kernel::{Key, Owner};
use coffer_kernel::{Ledger, Violation};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::fmt;

/// A game module: its rules over kernel primitives. Implement this, then register it with
/// [`plugin!`](../coffer_core/macro.plugin.html).
///
/// Contract:
/// - `legal_actions` is complete: every action it lists applies, and every action that applies is listed.
/// - `apply` validates before it changes the ruleset's own state; kernel changes are rolled back by the
///   adapter when it returns `Err`, so a refused action leaves the whole state (and its hash) unchanged.
/// - The state holds no `HashMap`/`HashSet` (state hashes encode it canonically) and draws randomness only
///   from its ledger.
pub trait Ruleset: Send + Sync + 'static {
    /// The whole state of one game, kernel ledger included.
    type State: Clone + fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// One player action, read from JSON by serde.
    type Action: Clone
        + fmt::Debug
        + PartialEq
        + Serialize
        + DeserializeOwned
        + Send
        + Sync
        + 'static;
    /// Configuration; `Default` gives the documented defaults. Use `#[serde(default, deny_unknown_fields)]`.
    type Config: Clone + fmt::Debug + Default + Serialize + DeserializeOwned + Send + Sync + 'static;

    /// Id, version and documentation.
    fn describe(&self) -> Description;

    /// A new game.
    ///
    /// # Errors
    /// [`SetupError`] for an unsupported player count or invalid configuration or content.
    fn new_game(
        &self,
        players: u16,
        seed: u64,
        config: &Self::Config,
    ) -> Result<Self::State, SetupError>;

    /// Sets `state` up again as [`new_game`](Self::new_game)`(players, seed, config)` would, for hosts that
    /// play many games one after another on one game value (random playouts, bots, simulations:
    /// [`DynGame::reset`](crate::DynGame::reset)). On an error `state` is unchanged.
    ///
    /// The default calls `new_game` and gives the replaced state's ledger back to the kernel
    /// ([`Ledger::recycle`]), so the next reset's [`Ledger::new`] on this thread grows no table: no
    /// ruleset needs to write it. Override it only to set up faster still (re-dealing into the state's
    /// own tables, say); the answer must equal `new_game`'s, which the SDK's tests of a ruleset can check
    /// by comparing [`state_hash`](coffer_kernel::state_hash)es.
    ///
    /// # Errors
    /// What `new_game` answers.
    fn reset(
        &self,
        state: &mut Self::State,
        players: u16,
        seed: u64,
        config: &Self::Config,
    ) -> Result<(), SetupError> {
        let fresh = self.new_game(players, seed, config)?;
        let mut old = std::mem::replace(state, fresh);
        self.ledger_mut(&mut old).recycle();
        Ok(())
    }

    /// Appends every action `player` may take now to `out` (which arrives empty).
    fn legal_actions(&self, state: &Self::State, player: Owner, out: &mut Vec<Self::Action>);

    /// Appends the players who may have a legal action now to `out` (which arrives empty), each once, in
    /// any order. Every player with a legal action must be listed; listing one without is allowed but
    /// costs hosts an enumeration. The default lists every player; a ruleset that knows whose turn it is
    /// should say so, since random playouts and hosts ask only these players.
    fn to_act(&self, state: &Self::State, out: &mut Vec<Owner>) {
        out.extend((0..self.ledger(state).owners()).map(Owner));
    }

    /// Applies an action.
    ///
    /// # Errors
    /// [`ActionError`] when refused; see the trait's contract.
    fn apply(
        &self,
        state: &mut Self::State,
        player: Owner,
        action: &Self::Action,
    ) -> Result<(), ActionError>;

    /// The state's kernel ledger.
    fn ledger<'s>(&self, state: &'s Self::State) -> &'s Ledger;

    /// The state's kernel ledger, mutably.
    fn ledger_mut<'s>(&self, state: &'s mut Self::State) -> &'s mut Ledger;

    /// Whether and how the game ended.
    fn outcome(&self, state: &Self::State) -> Outcome;

    /// Fills the ruleset's part of `seat`'s [`Table`] (`None`: a spectator's): the clock
    /// ([`Table::clock`]), whose turn it is, who may act and why, who has passed, and the ruleset's own
    /// state as sections of rows. Put in only what `seat` may see: a seat's hidden state (cards held,
    /// a planned move) goes into that seat's table alone. The adapter adds the names of the phase and step,
    /// the pending choices and the outcome; when the ruleset lists nobody as acting, it lists
    /// [`to_act`](Self::to_act).
    fn table(&self, state: &Self::State, seat: Option<Owner>, table: &mut Table) {
        let _ = (state, seat, table);
    }

    /// Whether `seat` (`None`: a spectator) may see the resource `key` now: its value in
    /// [`DynGame::resources`](crate::DynGame::resources) and the events that change it. The default shows everything; a ruleset with
    /// hidden information (cards held, a draw pile) hides those resources from everyone but their owner.
    fn visible(&self, state: &Self::State, key: Key, seat: Option<Owner>) -> bool {
        let _ = (state, key, seat);
        true
    }

    /// A display name for a resource of the ledger, without its owner ("Gold", "strength of the Ranger");
    /// `None` names it from the vocabulary's kind ([`Names::label`](coffer_kernel::Names::label)).
    fn label(&self, state: &Self::State, key: Key) -> Option<String> {
        let _ = (state, key);
        None
    }

    /// Whether `player`'s accepted `action`, which turned `before` into `after`, showed any seat
    /// something that was hidden from it (a card played from a hand, a face turned up). Such an action
    /// cannot be taken back (`"~undo"`, [`UNDO`](crate::UNDO)): what was seen stays seen. The adapter
    /// already refuses to take back an action that drew from the ledger's random numbers (a die, a draw,
    /// a shuffle, [`Ledger::drew_since`]) or ended the game; the default reveals nothing else, which is
    /// right for a game without hidden state. Called once per action applied from JSON (the way hosts
    /// apply a person's action), never in playouts.
    fn reveals(
        &self,
        before: &Self::State,
        after: &Self::State,
        player: Owner,
        action: &Self::Action,
    ) -> bool {
        let _ = (before, after, player, action);
        false
    }

    /// The action `player` plays when it runs out of time and the game has a natural one for it now
    /// (pass, end the turn, decline): hosts apply it with the action `"~default"`
    /// ([`DEFAULT`](crate::DEFAULT)), which is logged like any action and replays exactly. `None` (the
    /// default) leaves it to the host's policy (a bot plays, or the seat forfeits). What it answers must
    /// be one of `player`'s legal actions.
    fn default_action(&self, state: &Self::State, player: Owner) -> Option<Self::Action> {
        let _ = (state, player);
        None
    }

    /// Takes `player` out of the game for good (it resigned, or left, or its time ran out and the host
    /// forfeits such seats): hosts apply it with the action `"~forfeit"` ([`FORFEIT`](crate::FORFEIT)),
    /// logged like any action. Change the state as the game's elimination does (the other seat wins a
    /// two-player game); atomic like [`apply`](Self::apply): a refusal leaves the state as it was. The
    /// default refuses, and hosts then give the seat to a bot.
    ///
    /// # Errors
    /// [`ActionError`] when the seat cannot be taken out now, in words.
    fn forfeit(&self, state: &mut Self::State, player: Owner) -> Result<(), ActionError> {
        let _ = (state, player);
        Err(ActionError::Illegal(
            "this game has no way to take a seat out of play".to_owned(),
        ))
    }

    /// Checks the ruleset's own invariants (the default has none). The kernel's are not this method's
    /// business: hosts check the ledger first ([`DynGame::check_invariants`](crate::DynGame::check_invariants)), and a restored snapshot's
    /// ledger was checked when it was read.
    ///
    /// # Errors
    /// The first [`Violation`].
    fn check_invariants(&self, state: &Self::State) -> Result<(), Violation> {
        let _ = state;
        Ok(())
    }
}

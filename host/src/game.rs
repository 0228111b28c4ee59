//! A [`HostedGame`]: one game that remembers how it was set up and every action applied to it (what a save
//! file records), the [`LoggedAction`]s of its log, the [`HostError`]s of hosting, and how a refusal is told
//! in the game's words.

use crate::registry::RegistryError;
use crate::render::{ECHO_LIMIT, cut};
use crate::save::error::SaveError;
use crate::simulate::playout::playout_with;
use coffer_core::PlayoutError;
use coffer_core::{
    ActionError, Description, DynGame, DynRuleset, Event, EventsFor, Names, Outcome, Owner,
    ResourceView, Setup, SetupError, StateHash, Table,
};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;
use std::sync::Arc;

/// One applied action as the log records it.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoggedAction {
    /// Who acted (player index).
    pub player: u16,
    /// The action, as the JSON text the ruleset read: kept verbatim (checked to be JSON by a scan), not
    /// parsed again into a tree, and embedded as it is in a save file.
    pub action: Box<RawValue>,
    /// The state hash right after this action, so a replay can name the first action that diverges.
    #[serde(with = "crate::save::hex_hash")]
    pub hash: StateHash,
}

impl PartialEq for LoggedAction {
    fn eq(&self, other: &LoggedAction) -> bool {
        self.player == other.player
            && self.action.get() == other.action.get()
            && self.hash == other.hash
    }
}

impl LoggedAction {
    /// The logged form of an action's JSON text: verbatim when it is JSON (it is whenever a ruleset read
    /// it), else the text as a JSON string; `None` (a plugin that could not write the action) is `null`.
    pub fn action_json(json: Option<String>) -> Box<RawValue> {
        let null = || RawValue::from_string("null".to_owned()).expect("null is JSON");
        match json {
            None => null(),
            Some(text) => match serde_json::from_str::<&RawValue>(&text) {
                Ok(raw) => raw.to_owned(),
                // Not JSON (a plugin accepted it anyway): kept as a JSON string of the text.
                Err(_) => serde_json::value::to_raw_value(&text).unwrap_or_else(|_| null()),
            },
        }
    }
}

/// Why the host refused something. A refused action leaves the game unchanged.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// The ruleset name did not resolve.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The ruleset refused to start the game.
    #[error("cannot start a game of '{ruleset}'")]
    Setup {
        /// The ruleset key.
        ruleset: String,
        /// Why.
        #[source]
        source: SetupError,
    },
    /// The ruleset refused an action; the game is unchanged.
    #[error("p{player} cannot play {action}: {reason}")]
    Action {
        /// Who acted.
        player: u16,
        /// The action as given, cut to [`render::ECHO_LIMIT`](ECHO_LIMIT) characters.
        action: String,
        /// Why, in the game's words (the refusal written with the ruleset's vocabulary).
        reason: String,
        /// Why, typed. Not a `source`: `reason` already says it in words.
        refusal: ActionError,
    },
    /// No game has that id.
    #[error("no game {0} in this host")]
    NoSuchGame(GameId),
    /// A save file could not be written or read back.
    #[error(transparent)]
    Save(#[from] SaveError),
    /// A thread panicked while it held this game; the game may be half-changed and is not used again.
    #[error("game {0} is poisoned: a thread panicked while using it")]
    Poisoned(GameId),
    /// The ruleset's plugin failed in a call that has no error of its own (legal actions, the outcome,
    /// the state hash, a view): what it answered is no answer ([`DynGame::failure`]).
    #[error("{message}")]
    Plugin {
        /// The ruleset key.
        ruleset: String,
        /// What failed, naming the library and the call.
        message: String,
    },
}

/// A game together with how it was set up and its action log: everything a save file records.
pub struct HostedGame {
    ruleset: Arc<dyn DynRuleset>,
    key: String,
    setup: Setup,
    log: Vec<LoggedAction>,
    game: Box<dyn DynGame>,
    /// The events of the last action applied by [`HostedGame::apply_json`], as the game answered them.
    events: Vec<Event>,
}

impl fmt::Debug for HostedGame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HostedGame")
            .field("ruleset", &self.key)
            .field("setup", &self.setup)
            .field("actions", &self.log.len())
            .field("hash", &self.game.state_hash())
            .finish()
    }
}

impl HostedGame {
    /// Starts a new game of `ruleset`.
    ///
    /// # Errors
    /// [`HostError::Setup`] when the ruleset refuses the players, seed or configuration.
    pub fn start(ruleset: Arc<dyn DynRuleset>, setup: Setup) -> Result<HostedGame, HostError> {
        let key = ruleset.description().key();
        let game = ruleset
            .new_game(&setup)
            .map_err(|source| HostError::Setup {
                ruleset: key.clone(),
                source,
            })?;
        Ok(HostedGame {
            ruleset,
            key,
            setup,
            log: Vec::new(),
            game,
            events: Vec::new(),
        })
    }

    /// The game without its log: what an update of a save starts from ([`crate::save::update_replaying`]).
    pub(crate) fn without_log(mut self) -> HostedGame {
        self.log.clear();
        self
    }

    /// Assembles a game from parts already checked against each other (used when loading a save).
    pub(crate) fn from_parts(
        ruleset: Arc<dyn DynRuleset>,
        setup: Setup,
        log: Vec<LoggedAction>,
        game: Box<dyn DynGame>,
    ) -> HostedGame {
        let key = ruleset.description().key();
        HostedGame {
            ruleset,
            key,
            setup,
            log,
            game,
            events: Vec::new(),
        }
    }

    /// The ruleset.
    pub fn ruleset(&self) -> &Arc<dyn DynRuleset> {
        &self.ruleset
    }

    /// The ruleset's key, `id@version`.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// Players, seed and configuration the game started from.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// Every action applied so far, in order.
    pub fn log(&self) -> &[LoggedAction] {
        &self.log
    }

    /// The running game, read-only.
    pub fn game(&self) -> &dyn DynGame {
        &*self.game
    }

    /// The state hash now. A plugin failure answers 0: see [`try_state_hash`](Self::try_state_hash).
    pub fn state_hash(&self) -> StateHash {
        self.game.state_hash()
    }

    /// The outcome now. A plugin failure answers "ongoing": see [`try_outcome`](Self::try_outcome).
    pub fn outcome(&self) -> Outcome {
        self.game.outcome()
    }

    /// Whether every answer of the game's plugin so far was a real one.
    ///
    /// # Errors
    /// [`HostError::Plugin`], naming the library and the call, once a plugin call without an error of
    /// its own failed (its neutral answer, such as no legal action or hash 0, is no answer).
    pub fn check_plugin(&self) -> Result<(), HostError> {
        match self.game.failure() {
            None => Ok(()),
            Some(message) => Err(HostError::Plugin {
                ruleset: self.key.clone(),
                message,
            }),
        }
    }

    /// The state hash now, or the plugin's failure.
    ///
    /// # Errors
    /// [`HostError::Plugin`] (see [`check_plugin`](Self::check_plugin)).
    pub fn try_state_hash(&self) -> Result<StateHash, HostError> {
        let hash = self.game.state_hash();
        self.check_plugin().map(|()| hash)
    }

    /// The outcome now, or the plugin's failure.
    ///
    /// # Errors
    /// [`HostError::Plugin`] (see [`check_plugin`](Self::check_plugin)).
    pub fn try_outcome(&self) -> Result<Outcome, HostError> {
        let outcome = self.game.outcome();
        self.check_plugin().map(|()| outcome)
    }

    /// The JSON of every legal action of `player` now, or the plugin's failure.
    ///
    /// # Errors
    /// [`HostError::Plugin`] (see [`check_plugin`](Self::check_plugin)).
    pub fn try_legal_actions(&mut self, player: u16) -> Result<Vec<String>, HostError> {
        let actions = self.legal_actions(player);
        self.check_plugin().map(|()| actions)
    }

    /// The JSON of every legal action of `player` now (empty for a player not in the game).
    pub fn legal_actions(&mut self, player: u16) -> Vec<String> {
        let count = self.game.legal_actions(Owner(player));
        (0..count)
            .filter_map(|i| self.game.legal_action_json(i))
            .collect()
    }

    /// How many legal actions `player` has now.
    pub fn legal_count(&mut self, player: u16) -> usize {
        self.game.legal_actions(Owner(player))
    }

    /// The names of this game as `seat` (`None`: a spectator) may read them: the ruleset's vocabulary, the
    /// labels of the resources `seat` may see, and those of pending choices.
    pub fn names(&self, seat: Option<Owner>) -> Names<'_> {
        self.names_from(&self.game.resources(seat), &self.game.table(seat))
    }

    /// [`names`](Self::names) from a seat's resources and table already at hand (no second call into the
    /// game for them).
    pub fn names_from(&self, resources: &[ResourceView], table: &Table) -> Names<'_> {
        names_for(self.ruleset.description(), resources, table)
    }

    /// What `seat` (`None`: a spectator) sees of the game besides its resources.
    pub fn table(&self, seat: Option<Owner>) -> Table {
        self.game.table(seat)
    }

    /// The resources `seat` (`None`: a spectator) may see.
    pub fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        self.game.resources(seat)
    }

    /// The events of the last applied action that `seat` (`None`: a spectator) may see.
    pub fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        self.game.events_for(seat)
    }

    /// A refusal of `player`'s `action`, its reason written in the game's words.
    fn refused(&self, player: u16, action: &str, refusal: ActionError) -> HostError {
        let reason = refusal_reason(&self.names(Some(Owner(player))), &refusal);
        HostError::Action {
            player,
            action: cut(action, ECHO_LIMIT),
            reason,
            refusal,
        }
    }

    /// Applies an action given as JSON, logs it, and returns its events (all of them: filter with
    /// [`events_for`](Self::events_for)). The action, its new state hash and its events are one call into
    /// the game ([`DynGame::apply_json_reporting`]: one boundary crossing for a runtime-loaded game).
    ///
    /// # Errors
    /// [`HostError::Action`] with the ruleset's reason in words and typed; the game and the log are
    /// unchanged. A plugin that panicked while applying the action or answering after it is such a
    /// refusal ([`ActionError::Panicked`]): its game is rebuilt as it was, and the plugin is no longer
    /// called (it is poisoned). [`HostError::Plugin`] when the plugin's answer (the events) could not be
    /// read: the action is not logged.
    pub fn apply_json(&mut self, player: u16, json: &str) -> Result<&[Event], HostError> {
        self.check_plugin()?;
        let hash = match self
            .game
            .apply_json_reporting(Owner(player), json, EventsFor::Everyone)
        {
            Ok(report) => {
                self.events = report.events;
                report.hash
            }
            Err(refusal) => return Err(self.refused(player, json, refusal)),
        };
        self.check_plugin()?;
        // The ruleset read it, so it is JSON: the log keeps the text, which the save file embeds.
        let action = LoggedAction::action_json(Some(json.to_owned()));
        self.log.push(LoggedAction {
            player,
            action,
            hash,
        });
        Ok(&self.events)
    }

    /// Applies legal action `index` of `player` (the hot path), logs it, and returns its events.
    ///
    /// # Errors
    /// [`HostError::Action`]; the game and the log are unchanged. [`HostError::Plugin`] as for
    /// [`apply_json`](Self::apply_json), and when the plugin failed listing the legal actions (nothing
    /// is applied then).
    pub fn apply_legal(&mut self, player: u16, index: usize) -> Result<&[Event], HostError> {
        let count = self.game.legal_actions(Owner(player));
        let json = self.game.legal_action_json(index);
        self.check_plugin()?;
        let shown = json
            .clone()
            .unwrap_or_else(|| format!("legal action #{index} of {count}"));
        if let Err(refusal) = self.game.apply_legal(Owner(player), index) {
            return Err(self.refused(player, &shown, refusal));
        }
        let action = LoggedAction::action_json(json);
        let hash = self.game.state_hash();
        self.game.events();
        self.check_plugin()?;
        self.log.push(LoggedAction {
            player,
            action,
            hash,
        });
        Ok(self.game.events())
    }

    /// A random playout of at most `max_actions` legal actions, each logged, chosen and applied by the
    /// simulation engine's one loop ([`crate::simulate::playout_with`]); `observe` is shown each logged
    /// action and the game right after it. A plugin failure without an error of its own ends the playout
    /// early: [`check_plugin`](Self::check_plugin) reports it.
    ///
    /// # Errors
    /// As [`crate::simulate::playout_with`]; the actions applied before stay applied and logged.
    pub fn playout<E>(
        &mut self,
        rng: &mut coffer_core::GameRng,
        max_actions: u64,
        mut observe: impl FnMut(&LoggedAction, &mut dyn DynGame) -> Result<(), E>,
    ) -> Result<u64, PlayoutError<E>> {
        let log = &mut self.log;
        playout_with(&mut *self.game, rng, max_actions, |played| {
            let action = LoggedAction::action_json(played.action);
            log.push(LoggedAction {
                player: played.player.0,
                action,
                hash: played.game.state_hash(),
            });
            match log.last() {
                Some(logged) => observe(logged, played.game),
                None => Ok(()),
            }
        })
    }
}

/// The names of a game of the ruleset `description` as one audience reads them, from that audience's
/// resources and table: the vocabulary, the resources' labels, the table's labels and pending choices.
pub fn names_for<'d>(
    description: &'d Description,
    resources: &[ResourceView],
    table: &Table,
) -> Names<'d> {
    let mut names = Names::with_resources(&description.vocabulary, resources);
    for label in &table.labels {
        names.label_key(label.key, label.name.clone());
    }
    for pending in &table.pending {
        names.label_key(pending.key, pending.label.clone());
    }
    names
}

/// Why an action was refused, in words: the ruleset's refusal written with `names` (those of the seat
/// that acted), or the parser's message cut to twice [`ECHO_LIMIT`](ECHO_LIMIT).
pub fn refusal_reason(names: &Names<'_>, refusal: &ActionError) -> String {
    match refusal {
        ActionError::Refused(r) => names.refusal(r),
        // A parser's message may quote the input again: cut it too.
        other => cut(&other.to_string(), 2 * ECHO_LIMIT),
    }
}

/// A game's id within one [`Host`].
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Serialize, Deserialize)]
pub struct GameId(pub u64);

impl fmt::Display for GameId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

//! The [`Adapter`]: a typed [`Ruleset`](crate::Ruleset) driven as a [`DynRuleset`](crate::DynRuleset),
//! its games as [`DynGame`](crate::DynGame)s: atomic actions, the legal-action cache, views per seat.

use crate::playout::Track;
use crate::{
    Acting, ActionError, ActionReport, Description, DynGame, DynRuleset, EventsFor, Format,
    Outcome, PlayoutError, Progress, ResourceView, Ruleset, Setup, SetupError, Table,
    random_playout,
};
use coffer_kernel::Event;
use coffer_kernel::GameRng;
use coffer_kernel::Owner;
use coffer_kernel::Vocabulary;
use coffer_kernel::{Ledger, Violation};
use coffer_kernel::{StateHash, state_hash};
use std::sync::Arc;

mod host_actions;
mod views;

pub use host_actions::{DEFAULT, FORFEIT, HostAction, UNDO, UNDO_DEPTH};
use views::as_seen_by;

/// Wraps a typed [`Ruleset`] as a [`DynRuleset`].
pub struct Adapter<R: Ruleset> {
    ruleset: Arc<R>,
    description: Description,
    vocabulary: Arc<Vocabulary>,
}

impl<R: Ruleset> Adapter<R> {
    /// The adapter, shared.
    pub fn shared(ruleset: R) -> Arc<dyn DynRuleset> {
        let description = ruleset.describe();
        let vocabulary = Arc::new(description.vocabulary.clone());
        Arc::new(Adapter {
            ruleset: Arc::new(ruleset),
            description,
            vocabulary,
        })
    }

    fn game(&self, state: R::State, players: u16) -> Box<dyn DynGame> {
        Box::new(Game::<R>::new(
            Arc::clone(&self.ruleset),
            Arc::clone(&self.vocabulary),
            state,
            players,
            self.players(),
        ))
    }

    /// The player counts the ruleset supports, fewest and most.
    fn players(&self) -> (u16, u16) {
        (self.description.min_players, self.description.max_players)
    }
}

/// The configuration of `setup`, read for `R` (its default when `setup` has none), once its player count
/// is checked against `allowed` (fewest, most).
fn config_of<R: Ruleset>(setup: &Setup, (min, max): (u16, u16)) -> Result<R::Config, SetupError> {
    if setup.players < min || setup.players > max {
        return Err(SetupError::Players {
            got: setup.players,
            min,
            max,
        });
    }
    if setup.config.is_null() {
        return Ok(R::Config::default());
    }
    serde_path_to_error::deserialize(&setup.config).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            SetupError::Config(inner.to_string())
        } else {
            SetupError::Config(format!("{path}: {inner}"))
        }
    })
}

impl<R: Ruleset> DynRuleset for Adapter<R> {
    fn description(&self) -> &Description {
        &self.description
    }

    fn new_game(&self, setup: &Setup) -> Result<Box<dyn DynGame>, SetupError> {
        let config = config_of::<R>(setup, self.players())?;
        let mut state = self.ruleset.new_game(setup.players, setup.seed, &config)?;
        // Setup's events are not part of play. Taking them also frees the log: setup records many more
        // events than an action, and keeping that capacity doubled an idle command-tokens game.
        let ledger = self.ruleset.ledger_mut(&mut state);
        drop(ledger.take_events());
        ledger.shrink_to_fit();
        Ok(self.game(state, setup.players))
    }

    fn restore(&self, format: Format, bytes: &[u8]) -> Result<Box<dyn DynGame>, SetupError> {
        let state: R::State = match format {
            Format::Json => {
                serde_json::from_slice(bytes).map_err(|e| SetupError::Snapshot(e.to_string()))?
            }
            Format::Binary => {
                postcard::from_bytes(bytes).map_err(|e| SetupError::Snapshot(e.to_string()))?
            }
        };
        // The ledger's invariants were checked as it was read (a `Ledger` cannot be deserialized
        // otherwise); the ruleset's remain.
        self.ruleset
            .check_invariants(&state)
            .map_err(|v| SetupError::Snapshot(v.to_string()))?;
        let players = self.ruleset.ledger(&state).owners();
        Ok(self.game(state, players))
    }
}

struct Game<R: Ruleset> {
    ruleset: Arc<R>,
    vocabulary: Arc<Vocabulary>,
    state: R::State,
    players: u16,
    /// The player counts the ruleset supports (fewest, most), for [`DynGame::reset`].
    allowed: (u16, u16),
    /// The listed legal actions of the players in `lists`, one player's after another.
    legal: Vec<R::Action>,
    /// Whose legal actions `legal` holds, where: at most one entry per player, emptied by every change.
    lists: Vec<Listed>,
    /// The entry of `lists` that [`DynGame::legal_action_json`] reads (the last `legal_actions` call).
    shown: Option<usize>,
    acting: Vec<Owner>,
    acting_fresh: bool,
    movers: Vec<Acting>,
    movers_fresh: bool,
    /// Where the last accepted action's events start in the ledger's log: the events before them are
    /// forgotten only once there are more than [`FORGET_AFTER`], not after every action.
    events_from: usize,
    /// The states before `undo_seat`'s last actions applied from JSON, as binary snapshots (a fifth of
    /// the memory of a copy: an idle game keeps one), oldest first, at most
    /// [`UNDO_DEPTH`]: what `"~undo"` returns to. Emptied when another seat acts, when an action reveals
    /// or draws, when the game ends, by the action after [`UNDO_DEPTH`] in a row, and by actions applied
    /// by index (playouts).
    undo: Vec<Vec<u8>>,
    undo_seat: Owner,
}

impl<R: Ruleset> Drop for Game<R> {
    /// The game's ledger goes back to the kernel ([`Ledger::recycle`]): the next game set up on this
    /// thread (a new playout's, say) takes its tables instead of growing its own.
    fn drop(&mut self) {
        self.ruleset.ledger_mut(&mut self.state).recycle();
    }
}

/// Older events the ledger's log may keep before the adapter forgets them (moving the newest action's
/// events to the front of the log): often enough that the log stays within
/// [`Ledger::ACTION_EVENTS`] for ordinary actions, rarely enough that
/// most actions move nothing.
const FORGET_AFTER: usize = Ledger::ACTION_EVENTS / 2;

/// Where one player's legal actions are in [`Game::legal`].
#[derive(Clone, Copy)]
struct Listed {
    player: Owner,
    start: usize,
    len: usize,
}

impl<R: Ruleset> Game<R> {
    fn new(
        ruleset: Arc<R>,
        vocabulary: Arc<Vocabulary>,
        state: R::State,
        players: u16,
        allowed: (u16, u16),
    ) -> Game<R> {
        Game {
            ruleset,
            vocabulary,
            state,
            players,
            allowed,
            legal: Vec::new(),
            lists: Vec::new(),
            shown: None,
            acting: Vec::new(),
            acting_fresh: false,
            movers: Vec::new(),
            movers_fresh: false,
            events_from: 0,
            undo: Vec::new(),
            undo_seat: Owner(0),
        }
    }

    /// The last accepted action's events.
    #[inline]
    fn last_events(&self) -> &[Event] {
        let log = self.ruleset.ledger(&self.state).events();
        log.get(self.events_from..).unwrap_or(&[])
    }

    fn check_player(&self, player: Owner) -> Result<(), ActionError> {
        if player.0 >= self.players {
            return Err(ActionError::NoSuchPlayer {
                player: player.0,
                players: self.players,
            });
        }
        Ok(())
    }

    /// The entry of `lists` for `player`, enumerating their legal actions if they are not listed yet.
    ///
    /// The look-up is inlined into its callers and the enumeration is not: applying a listed action
    /// finds its list without the enumeration's register saves (1.5% of a wide-board playout's
    /// instructions).
    #[inline(always)]
    fn list(&mut self, player: Owner) -> usize {
        match self.lists.iter().position(|l| l.player == player) {
            Some(i) => i,
            None => self.enumerate(player),
        }
    }

    /// Lists `player`'s legal actions in a new entry of `lists`, and returns it.
    #[inline(never)]
    fn enumerate(&mut self, player: Owner) -> usize {
        let start = self.legal.len();
        if player.0 < self.players {
            self.ruleset
                .legal_actions(&self.state, player, &mut self.legal);
        }
        self.lists.push(Listed {
            player,
            start,
            len: self.legal.len() - start,
        });
        self.lists.len() - 1
    }

    /// Forgets every cached answer: the state changed.
    fn changed(&mut self) {
        self.legal.clear();
        self.lists.clear();
        self.shown = None;
        self.acting_fresh = false;
        self.movers_fresh = false;
    }

    #[inline(always)]
    fn apply_action(&mut self, player: Owner, action: &R::Action) -> Result<(), ActionError> {
        // The last accepted action's events stay in the ledger's log (they are what `events` answers,
        // from `events_from`) until the next action is accepted: a refusal, rolled back to the
        // transaction's start, leaves them; an accepted action's events replace them. Older events are
        // forgotten (the newest moved to the front) only once there are more than `FORGET_AFTER`: one
        // move every few actions instead of one per action.
        let before = self.ruleset.ledger(&self.state).events().len();
        crate::apply_atomically(&*self.ruleset, &mut self.state, player, action)?;
        self.accepted(before);
        Ok(())
    }

    /// What follows an accepted change whose events start at `before` in the ledger's log.
    #[inline(always)]
    fn accepted(&mut self, before: usize) {
        if before > FORGET_AFTER {
            self.ruleset
                .ledger_mut(&mut self.state)
                .forget_events(before);
            self.events_from = 0;
        } else {
            self.events_from = before;
        }
        self.changed();
        // One relaxed load when nothing listens at DEBUG; the publishing itself is out of line.
        if tracing::level_enabled!(tracing::Level::DEBUG)
            && tracing::enabled!(target: "coffer::event", tracing::Level::DEBUG)
        {
            self.publish();
        }
    }

    /// Publishes the last accepted action's events to `tracing` (target `coffer::event`, level DEBUG)
    /// as a spectator reads them ([`DynGame::events_for`] with no seat): what the ruleset hides from
    /// spectators ([`Ruleset::visible`], secret notes) is left out or redacted, so a log never holds a
    /// seat's hidden state, whatever its level. Setup's events are not published.
    #[cold]
    #[inline(never)]
    fn publish(&self) {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        for e in self.last_events() {
            if let Some(e) = as_seen_by(r, s, v, e, None) {
                tracing::debug!(target: "coffer::event", owner = %e.key.owner, kind = e.key.kind.0,
                    subject = e.key.subject, change = ?e.change, cause = ?e.cause, "resource changed");
            }
        }
    }
}

impl<R: Ruleset> DynGame for Game<R> {
    fn players(&self) -> u16 {
        self.players
    }

    fn legal_actions(&mut self, player: Owner) -> usize {
        let i = self.list(player);
        self.shown = Some(i);
        self.lists[i].len
    }

    fn to_act(&mut self) -> &[Owner] {
        if !self.acting_fresh {
            self.acting.clear();
            self.ruleset.to_act(&self.state, &mut self.acting);
            self.acting_fresh = true;
        }
        &self.acting
    }

    // Always inlined, as `apply_legal` and `apply_action`: a playout's step calls them directly, and each
    // out-of-line frame cost 15-20 instructions of register saves per action (2.5% of a wide-board
    // playout's instructions for the three).
    #[inline(always)]
    fn acting(&mut self) -> &[Acting] {
        if !self.movers_fresh {
            self.to_act();
            self.movers.clear();
            for k in 0..self.acting.len() {
                let player = self.acting[k];
                let i = self.list(player);
                self.movers.push(Acting {
                    player: player.0,
                    legal: self.lists[i].len,
                });
            }
            self.movers_fresh = true;
        }
        &self.movers
    }

    fn legal_action_json(&self, index: usize) -> Option<String> {
        let listed = self.lists.get(self.shown?)?;
        if index >= listed.len {
            return None;
        }
        self.legal
            .get(listed.start + index)
            .and_then(|a| serde_json::to_string(a).ok())
    }

    #[inline(always)]
    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError> {
        self.check_player(player)?;
        let i = self.list(player);
        self.shown = Some(i);
        let listed = self.lists[i];
        // `index` first: `start + index` could overflow for a huge index.
        if index >= listed.len {
            return Err(ActionError::NoSuchLegalAction {
                player,
                index,
                count: listed.len,
            });
        }
        let action = self.legal[listed.start + index].clone();
        // Index actions (playouts, bots' look-ahead) keep nothing to take back.
        if !self.undo.is_empty() {
            self.undo.clear();
        }
        self.apply_action(player, &action)
    }

    #[inline]
    fn apply_legal_then_acting(
        &mut self,
        player: Owner,
        index: usize,
    ) -> Result<&[Acting], ActionError> {
        self.apply_legal(player, index)?;
        Ok(self.acting())
    }

    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<u64, PlayoutError> {
        random_playout(self, rng, max_actions, &mut Track(progress))
    }

    fn reset(&mut self, setup: &Setup) -> Result<(), SetupError> {
        let config = config_of::<R>(setup, self.allowed)?;
        self.ruleset
            .reset(&mut self.state, setup.players, setup.seed, &config)?;
        // Setup's events are not part of play; the log keeps its capacity for the game's actions.
        let ledger = self.ruleset.ledger_mut(&mut self.state);
        let setup_events = ledger.events().len();
        ledger.forget_events(setup_events);
        self.players = setup.players;
        self.changed();
        self.events_from = 0;
        self.undo.clear();
        Ok(())
    }

    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError> {
        self.check_player(player)?;
        // The host's own actions: strings no ruleset's action reads as.
        if let Some(host) = HostAction::of(json) {
            return self.host_action(player, host);
        }
        let action: R::Action =
            serde_json::from_str(json).map_err(|e| ActionError::Malformed(e.to_string()))?;
        self.apply_undoable(player, &action)
    }

    fn apply_json_reporting(
        &mut self,
        player: Owner,
        json: &str,
        events: EventsFor,
    ) -> Result<ActionReport<'_>, ActionError> {
        // One parse, and no dynamic call: the parts are this type's own methods.
        self.apply_json(player, json)?;
        let events = match events {
            EventsFor::Everyone => self.events().to_vec(),
            EventsFor::Seat(seat) => self.events_for(seat),
        };
        Ok(ActionReport {
            hash: state_hash(&self.state),
            events,
            acting: self.acting(),
        })
    }

    fn events(&mut self) -> &[Event] {
        self.last_events()
    }

    fn state_hash(&self) -> StateHash {
        state_hash(&self.state)
    }

    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError> {
        views::snapshot(&self.state, format)
    }

    fn outcome(&self) -> Outcome {
        self.ruleset.outcome(&self.state)
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        self.seat_table(seat)
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        self.seat_resources(seat)
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        self.seat_events(seat)
    }

    fn check_invariants(&self) -> Result<(), Violation> {
        self.ruleset.ledger(&self.state).check_invariants()?;
        self.ruleset.check_invariants(&self.state)
    }

    fn clone_game(&self) -> Box<dyn DynGame> {
        let mut game = Game::<R>::new(
            Arc::clone(&self.ruleset),
            Arc::clone(&self.vocabulary),
            self.state.clone(),
            self.players,
            self.allowed,
        );
        game.events_from = self.events_from;
        Box::new(game)
    }

    fn state(&self) -> Option<&dyn erased_serde::Serialize> {
        Some(&self.state)
    }
}

//! The [`Adapter`]: a typed [`Ruleset`](crate::Ruleset) driven as a [`DynRuleset`](crate::DynRuleset),
//! its games as [`DynGame`](crate::DynGame)s: atomic actions, the legal-action cache, views per seat.

use crate::playout::Track;
use crate::{
    Acting, ActionError, ActionReport, Description, DynGame, DynRuleset, EventsFor, Format, Mover,
    Outcome, Pending, PlayoutError, Progress, ResourceView, Ruleset, Setup, SetupError, Table,
    Undo, random_playout,
};
use coffer_kernel::GameRng;
use coffer_kernel::{Change, Event};
use coffer_kernel::{Key, Owner};
use coffer_kernel::{Ledger, Violation};
use coffer_kernel::{Names, Vocabulary};
use coffer_kernel::{StateHash, state_hash};
use std::fmt;
use std::sync::Arc;

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

/// Bytes reserved up front for a binary snapshot (JSON reserves four times as many); a larger state grows
/// the buffer (a six-player command-tokens binary snapshot, 4,140 bytes, does twice: reserving its size
/// instead measured no difference).
const SNAPSHOT_CAPACITY: usize = 2048;

/// Where a JSON snapshot is written: a `Vec` that copies the few bytes of a number or a bracket in place,
/// where `Vec`'s own `io::Write` calls `memcpy` for every one of them (7% of a JSON snapshot's time).
struct JsonOut(Vec<u8>);

impl std::io::Write for JsonOut {
    #[inline]
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.write_all(bytes)?;
        Ok(bytes.len())
    }

    #[inline]
    fn write_all(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.len() <= 8 {
            self.0.reserve(8);
            for &b in bytes {
                self.0.push(b);
            }
        } else {
            self.0.extend_from_slice(bytes);
        }
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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

/// The action that takes back the acting seat's last action, as JSON: a string no ruleset's action
/// reads as. Hosts apply it with [`DynGame::apply_json`] like any action and log it like any action, so
/// every replay of a log takes the same actions back.
///
/// A seat may take back its own last actions, one per `"~undo"`, while no other seat has acted since,
/// none of them drew random numbers or revealed hidden state ([`Ruleset::reveals`]) and the game has
/// not ended; [`Table::undo`] says who may and how many. Refused otherwise with
/// [`ActionError::CannotUndo`], the game unchanged. Undo returns the whole state, random numbers
/// included, so the state hash after it is the hash before the action it took back.
///
/// What undo keeps is part of the game but not of its snapshot: a game restored from a snapshot, or a
/// [`DynGame::clone_game`], has nothing to take back. Hosts that take snapshots of a live game take
/// them while [`Table::undo`] is `None`, so that a replay from a snapshot takes back what the live game
/// did.
pub const UNDO: &str = "\"~undo\"";

/// The action that plays the seat's default move ([`Ruleset::default_action`]: pass, end the turn), as
/// JSON; refused with [`ActionError::Illegal`] where the ruleset has none. Hosts play it for a seat whose
/// time ran out.
pub const DEFAULT: &str = "\"~default\"";

/// The action that takes the seat out of the game ([`Ruleset::forfeit`]), as JSON; refused where the
/// ruleset cannot.
pub const FORFEIT: &str = "\"~forfeit\"";

/// The refusal of an undo whose kept state does not read back (it cannot happen: the adapter wrote it).
#[cold]
fn refuse_reason(player: Owner, e: &dyn fmt::Display) -> ActionError {
    ActionError::CannotUndo {
        player,
        reason: format!("the state before the action does not read back ({e})"),
    }
}

/// The host's own actions, which the adapter reads before the ruleset's: [`UNDO`], [`DEFAULT`],
/// [`FORFEIT`]. One place tells them from a ruleset's action, for the adapter and for every host that
/// words or treats them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HostAction {
    /// `"~undo"`: take back the seat's last action.
    Undo,
    /// `"~default"`: the ruleset's default move for the seat.
    Default,
    /// `"~forfeit"`: take the seat out of the game.
    Forfeit,
}

impl HostAction {
    /// Its JSON: [`UNDO`], [`DEFAULT`] or [`FORFEIT`].
    pub fn json(self) -> &'static str {
        match self {
            HostAction::Undo => UNDO,
            HostAction::Default => DEFAULT,
            HostAction::Forfeit => FORFEIT,
        }
    }

    /// Which host action `json` is, if any (surrounding whitespace allowed).
    pub fn of(json: &str) -> Option<HostAction> {
        match json.trim() {
            UNDO => Some(HostAction::Undo),
            DEFAULT => Some(HostAction::Default),
            FORFEIT => Some(HostAction::Forfeit),
            _ => None,
        }
    }
}

/// How many of its last actions a seat may take back: each keeps a copy of the state before it. A seat's
/// next action after as many in a row closes the window (nothing can be taken back until its next one),
/// so a window never spans more than this many actions.
pub const UNDO_DEPTH: usize = 8;

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

    /// Applies `action` as a person's action: keeps the state before it for `"~undo"` when it can be
    /// taken back.
    fn apply_undoable(&mut self, player: Owner, action: &R::Action) -> Result<(), ActionError> {
        let before = self.state.clone();
        self.apply_action(player, action)?;
        let r = &*self.ruleset;
        let closed = r.ledger(&self.state).drew_since(r.ledger(&before))
            || r.outcome(&self.state) != Outcome::Ongoing
            || r.reveals(&before, &self.state, player, action);
        if closed || self.undo_seat != player {
            self.undo.clear();
        }
        // A seat's run of actions longer than UNDO_DEPTH closes the window: it never stays open for
        // long, so hosts that take snapshots outside windows are never kept waiting long.
        if closed || self.undo.len() == UNDO_DEPTH {
            self.undo.clear();
        } else {
            // A snapshot leaves out the events (an undone game answers none) and shared tables.
            match postcard::to_extend(&before, Vec::with_capacity(SNAPSHOT_CAPACITY)) {
                Ok(mut bytes) => {
                    bytes.shrink_to_fit();
                    self.undo.push(bytes);
                    self.undo_seat = player;
                }
                // Serializing a state cannot fail (see `state_hash`); if it did, nothing is kept.
                Err(_) => self.undo.clear(),
            }
        }
        Ok(())
    }

    /// `"~forfeit"`: the ruleset takes `player` out of the game, atomically.
    fn forfeit(&mut self, player: Owner) -> Result<(), ActionError> {
        if self.ruleset.outcome(&self.state) != Outcome::Ongoing {
            return Err(ActionError::GameOver);
        }
        let before = self.ruleset.ledger(&self.state).events().len();
        let mark = self.ruleset.ledger_mut(&mut self.state).begin();
        match self.ruleset.forfeit(&mut self.state, player) {
            Ok(()) => self.ruleset.ledger_mut(&mut self.state).commit(mark),
            Err(e) => {
                self.ruleset.ledger_mut(&mut self.state).rollback(mark);
                return Err(e);
            }
        }
        self.undo.clear();
        self.accepted(before);
        Ok(())
    }

    /// `"~undo"`: returns to the state before `player`'s last action.
    fn undo(&mut self, player: Owner) -> Result<(), ActionError> {
        let refuse = |reason: String| Err(ActionError::CannotUndo { player, reason });
        if self.undo.is_empty() {
            return refuse("nothing can be taken back now".to_owned());
        }
        if self.undo_seat != player {
            return refuse(format!("the last action was {}'s", self.undo_seat));
        }
        if let Some(bytes) = self.undo.pop() {
            let mut before: R::State =
                postcard::from_bytes(&bytes).map_err(|e| refuse_reason(player, &e))?;
            self.ruleset.ledger_mut(&mut before).shrink_to_fit();
            self.state = before;
            self.events_from = self.ruleset.ledger(&self.state).events().len();
            self.changed();
        }
        Ok(())
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

/// `e` as `seat` (`None`: a spectator) sees it: unchanged, redacted (a secret note of another owner
/// whose vocabulary gives redacted text), or not at all (a resource the ruleset hides from `seat`, a
/// secret note without redacted text).
fn as_seen_by<R: Ruleset>(
    r: &R,
    s: &R::State,
    v: &Vocabulary,
    e: &Event,
    seat: Option<Owner>,
) -> Option<Event> {
    if let Change::Note { code, .. } = e.change {
        match v.notes.get(usize::from(code)) {
            Some(term) if term.secret && seat != Some(e.key.owner) => {
                return (!term.redacted.is_empty()).then_some(Event {
                    change: Change::Note { code, args: [0; 3] },
                    ..*e
                });
            }
            _ => {}
        }
    }
    (e.key.kind == coffer_kernel::Kind::CLOCK || r.visible(s, e.key, seat)).then_some(*e)
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
        match HostAction::of(json) {
            Some(HostAction::Undo) => return self.undo(player),
            Some(HostAction::Default) => {
                let Some(action) = self.ruleset.default_action(&self.state, player) else {
                    return Err(ActionError::Illegal(format!(
                        "{player} has no default action now"
                    )));
                };
                return self.apply_undoable(player, &action);
            }
            Some(HostAction::Forfeit) => return self.forfeit(player),
            None => {}
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
        let error = |e: &dyn fmt::Display| SetupError::Snapshot(e.to_string());
        match format {
            Format::Json => {
                let mut out = JsonOut(Vec::with_capacity(SNAPSHOT_CAPACITY * 4));
                serde_json::to_writer(&mut out, &self.state).map_err(|e| error(&e))?;
                Ok(out.0)
            }
            // The `Extend` flavor writes bytes in place; the default `Vec` flavor copies each varint
            // with a `memcpy` call (a third of the round-trip's time in a profile).
            Format::Binary => {
                postcard::to_extend(&self.state, Vec::with_capacity(SNAPSHOT_CAPACITY))
                    .map_err(|e| error(&e))
            }
        }
    }

    fn outcome(&self) -> Outcome {
        self.ruleset.outcome(&self.state)
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        let mut table = Table::new(seat);
        r.table(s, seat, &mut table);
        table.round_name = v.round().to_owned();
        if let Some(phase) = &mut table.phase {
            phase.name = v.phase(phase.number).into_owned();
        }
        if let Some(step) = &mut table.step {
            step.name = v.step(step.number).into_owned();
        }
        table.outcome = r.outcome(s);
        if let Some(actions) = std::num::NonZeroUsize::new(self.undo.len()) {
            table.undo = Some(Undo {
                seat: self.undo_seat,
                actions: actions.get() as u32,
            });
        }
        if table.acting.is_empty() && table.outcome == Outcome::Ongoing {
            let mut acting = Vec::new();
            r.to_act(s, &mut acting);
            table.acting = acting
                .into_iter()
                .map(|seat| Mover {
                    seat,
                    why: String::new(),
                })
                .collect();
        }
        let pending = r.ledger(s).pending();
        if !pending.is_empty() {
            let mut names = Names::new(v);
            for d in pending {
                let label = r
                    .label(s, d.key)
                    .unwrap_or_else(|| names.label(d.key).into_owned());
                names.label_key(d.key, label.clone());
                table.pending.push(Pending {
                    owner: d.key.owner,
                    key: d.key,
                    excess: d.excess,
                    text: names.demand(d),
                    label,
                });
            }
        }
        table
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        let r = &*self.ruleset;
        let s = &self.state;
        let l = r.ledger(s);
        let names = Names::new(&self.vocabulary);
        let label = |key: Key| {
            r.label(s, key)
                .unwrap_or_else(|| names.label(key).into_owned())
        };
        let seen = |key: Key| r.visible(s, key, seat);
        let mut out = Vec::new();
        for (i, a) in l.amounts().iter().enumerate() {
            let key = a.key();
            if seen(key) {
                out.push(ResourceView::Amount {
                    label: label(key),
                    key,
                    index: i as u32,
                    value: a.value(),
                    floor: a.floor(),
                    cap: a.cap(),
                    lifetime: a.lifetime(),
                });
            }
        }
        for (i, t) in l.tracks().iter().enumerate() {
            let key = t.key();
            if seen(key) {
                out.push(ResourceView::Charges {
                    label: label(key),
                    key,
                    index: i as u32,
                    active: t.active(),
                    limit: t.limit(),
                    unrecoverable: t.unrecoverable(),
                });
            }
        }
        for (z, zone) in l.zone_entries() {
            if seen(zone.key) {
                out.push(ResourceView::Tokens {
                    label: label(zone.key),
                    key: zone.key,
                    index: z.index() as u32,
                    face: zone.face,
                    counts: l.zone_tokens(z).to_vec(),
                    game: l.tokens(z, Owner::GAME),
                });
            }
        }
        for (i, p) in l.permanents().iter().enumerate() {
            let key = p.key();
            if seen(key) {
                out.push(ResourceView::Permanent {
                    label: label(key),
                    key,
                    index: i as u32,
                    exhausted: p.exhausted(),
                });
            }
        }
        out
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        let events = self.last_events();
        let mut out = Vec::with_capacity(events.len());
        out.extend(events.iter().filter_map(|e| as_seen_by(r, s, v, e, seat)));
        out
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

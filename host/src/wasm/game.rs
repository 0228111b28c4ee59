//! A game living in a module instance: the [`DynGame`] over its handle, each call under the instance's
//! deadline, its own trap stopping it alone; and its checkpoint (its setup or a snapshot) and the
//! actions applied since, which rebuild it exactly in a fresh instance after another game's trap.

use coffer_core::abi::{self, OK};
use coffer_core::{
    Acting, ActionError, ActionReport, DynGame, Event, EventsFor, Format, GameRng, Outcome, Owner,
    PlayoutError, Progress, ResourceView, Setup, SetupError, StateHash, Table, Violation,
};
use std::cell::RefCell;
use std::sync::Arc;

use crate::wasm::instance::{Cell, Fault, Live, Reply};
use crate::wasm::shared::Shared;
use crate::wasm::track::{Checkpoint, Logged, Track};

/// A game of a WebAssembly ruleset.
pub(crate) struct WasmGame {
    pub(crate) shared: Arc<Shared>,
    pub(crate) cell: Arc<Cell>,
    pub(crate) players: u16,
    pub(crate) track: RefCell<Track>,
    acting: Vec<Acting>,
    to_act: Vec<Owner>,
    events: Vec<Event>,
    events_fresh: bool,
    /// The first failed call whose trait method has no error, in words.
    failure: RefCell<Option<String>>,
}

/// The refusal in a reply's bytes.
fn refusal<E: serde::de::DeserializeOwned>(bytes: &[u8], other: impl FnOnce(String) -> E) -> E {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| other(String::from_utf8_lossy(bytes).into_owned()))
}

impl WasmGame {
    pub(crate) fn new(
        shared: Arc<Shared>,
        cell: Arc<Cell>,
        players: u16,
        track: Track,
    ) -> WasmGame {
        WasmGame {
            shared,
            cell,
            players,
            track: RefCell::new(track),
            acting: Vec::new(),
            to_act: Vec::new(),
            events: Vec::new(),
            events_fresh: true,
            failure: RefCell::new(None),
        }
    }

    /// Runs `f` on the game in its instance: makes the instance if a trap threw it away, rebuilds the
    /// game there if it lived in the instance before, and stops the game if `f` (or the rebuild) traps.
    /// The error is the message of the stopped game.
    fn on<T>(
        &self,
        call: &'static str,
        f: impl FnOnce(&mut Live, u32) -> Result<T, Fault>,
    ) -> Result<T, String> {
        let mut track = self.track.borrow_mut();
        if let Some(stopped) = &track.stopped {
            return Err(stopped.clone());
        }
        let mut slot = self.cell.lock();
        if slot.live.is_none() {
            match Live::new(&self.shared.pool.pre, self.shared.pool.options) {
                Ok(live) => {
                    slot.live = Some(live);
                    slot.generation += 1;
                }
                Err(fault) => return Err(self.stop(&mut track, "making an instance", &fault)),
            }
        }
        let generation = slot.generation;
        let live = slot.live.as_mut().expect("made above");
        if track.generation != generation {
            match self.shared.rebuild(live, &track) {
                Ok(handle) => {
                    track.handle = handle;
                    track.generation = generation;
                }
                Err(fault) => {
                    slot.live = None;
                    return Err(self.stop(&mut track, "rebuilding the game", &fault));
                }
            }
        }
        match f(live, track.handle) {
            Ok(answer) => Ok(answer),
            Err(fault) => {
                slot.live = None;
                Err(self.stop(&mut track, call, &fault))
            }
        }
    }

    /// Stops the game: records and returns why.
    #[cold]
    fn stop(&self, track: &mut Track, call: &str, fault: &Fault) -> String {
        let message = self.shared.stopped_message(call, fault);
        tracing::warn!(target: "coffer_host::wasm", ruleset = %self.shared.id, call, "{message}");
        track.stopped = Some(message.clone());
        message
    }

    /// Records the first failure of a call that answers a neutral value instead of an error.
    #[cold]
    fn failed(&self, message: String) {
        let mut slot = self.failure.borrow_mut();
        if slot.is_none() {
            *slot = Some(message);
        }
    }

    /// A call answering bytes on success; a refusal's bytes are the error; a stop is recorded.
    fn bytes(
        &self,
        call: &'static str,
        f: impl FnOnce(&mut Live, u32) -> Result<Reply, Fault>,
    ) -> Option<Result<Vec<u8>, Vec<u8>>> {
        let answered = self.on(call, |live, handle| {
            let reply = f(live, handle)?;
            let out = live.out(&reply)?;
            Ok(if reply.status == OK {
                Ok(out)
            } else {
                Err(out)
            })
        });
        match answered {
            Ok(answer) => Some(answer),
            Err(stopped) => {
                self.failed(stopped);
                None
            }
        }
    }

    /// A call answering postcard bytes: the value, or `fallback` with the failure recorded.
    fn decoded<T: serde::de::DeserializeOwned>(
        &self,
        call: &'static str,
        f: impl FnOnce(&mut Live, u32) -> Result<Reply, Fault>,
        fallback: impl FnOnce() -> T,
    ) -> T {
        match self.bytes(call, f) {
            Some(Ok(bytes)) => postcard::from_bytes(&bytes).unwrap_or_else(|e| {
                self.failed(format!(
                    "{}: its answer to `{call}` is unreadable: {e}",
                    self.shared.named()
                ));
                fallback()
            }),
            Some(Err(bytes)) => {
                self.failed(format!(
                    "{} failed in the call `{call}`: {}",
                    self.shared.named(),
                    String::from_utf8_lossy(&bytes)
                ));
                fallback()
            }
            None => fallback(),
        }
    }

    /// Applies an action: `f` makes the call; on success the action is logged (and a checkpoint taken
    /// when due), on refusal the game is unchanged.
    fn apply(
        &mut self,
        call: &'static str,
        logged: impl FnOnce(&mut Track) -> Logged,
        f: impl FnOnce(&mut Live, u32) -> Result<Reply, Fault>,
    ) -> Result<Reply, ActionError> {
        let answered = self.on(call, |live, handle| {
            let reply = f(live, handle)?;
            let refused = if reply.status == OK {
                None
            } else {
                Some(live.out(&reply)?)
            };
            Ok((reply, refused))
        });
        match answered {
            Ok((reply, None)) => {
                self.events_fresh = false;
                let mut track = self.track.borrow_mut();
                let entry = logged(&mut track);
                track.log.push(entry);
                let due = track.due();
                drop(track);
                if due {
                    self.checkpoint_now();
                }
                Ok(reply)
            }
            Ok((_, Some(bytes))) => Err(refusal(&bytes, ActionError::Illegal)),
            Err(stopped) => Err(ActionError::Stopped(stopped)),
        }
    }

    /// A new checkpoint: a binary snapshot, and an empty log. A ruleset that cannot snapshot keeps its
    /// log.
    fn checkpoint_now(&self) {
        let Some(Ok(bytes)) = self.bytes("snapshot", |live, handle| {
            live.call(|f, s| {
                f.snapshot
                    .call(s, (handle, u32::from(abi::format_code(Format::Binary))))
            })
        }) else {
            return;
        };
        let mut track = self.track.borrow_mut();
        track.checkpoint = Checkpoint::Snapshot(Format::Binary, bytes.into());
        track.log = Vec::new();
        track.texts = Vec::new();
        track.text_bytes = 0;
        track.playouts = Vec::new();
    }

    fn json_logged(player: Owner, json: &str) -> impl FnOnce(&mut Track) -> Logged {
        move |track| {
            track.texts.push(json.into());
            track.text_bytes += json.len();
            Logged::Json(player.0, (track.texts.len() - 1) as u32)
        }
    }
}

impl Drop for WasmGame {
    fn drop(&mut self) {
        let track = self.track.get_mut();
        let mut slot = self.cell.lock();
        if track.stopped.is_none() && track.generation == slot.generation {
            let handle = track.handle;
            if let Some(live) = slot.live.as_mut()
                && live.run(|f, s| f.free_game.call(s, (handle,))).is_err()
            {
                slot.live = None;
            }
        }
        drop(slot);
        self.shared.pool.left(&self.cell);
    }
}

impl DynGame for WasmGame {
    fn players(&self) -> u16 {
        self.players
    }

    fn legal_actions(&mut self, player: Owner) -> usize {
        match self.on("legal_actions", |live, handle| {
            live.call(|f, s| f.legal_actions.call(s, (handle, u32::from(player.0))))
        }) {
            Ok(reply) => reply.value as usize,
            Err(stopped) => {
                self.failed(stopped);
                0
            }
        }
    }

    fn to_act(&mut self) -> &[Owner] {
        self.to_act.clear();
        if let Some(Ok(bytes)) = self.bytes("to_act", |live, handle| {
            live.call(|f, s| f.to_act.call(s, (handle,)))
        }) {
            self.to_act.extend(
                bytes
                    .chunks_exact(2)
                    .map(|b| Owner(u16::from_le_bytes([b[0], b[1]]))),
            );
        }
        &self.to_act
    }

    fn acting(&mut self) -> &[Acting] {
        let mut list = std::mem::take(&mut self.acting);
        let listed = self.on("acting", |live, handle| {
            let reply = live.call(|f, s| f.acting.call(s, (handle,)))?;
            live.list(&reply, &mut list)
        });
        if let Err(stopped) = listed {
            list.clear();
            self.failed(stopped);
        }
        self.acting = list;
        &self.acting
    }

    fn legal_action_json(&self, index: usize) -> Option<String> {
        let index = u32::try_from(index).ok()?;
        match self.bytes("legal_action_json", |live, handle| {
            live.call(|f, s| f.legal_action_json.call(s, (handle, index)))
        }) {
            Some(Ok(bytes)) => String::from_utf8(bytes).ok(),
            _ => None,
        }
    }

    fn apply_legal(&mut self, player: Owner, index: usize) -> Result<(), ActionError> {
        let index = u32::try_from(index).map_err(|_| ActionError::NoSuchLegalAction {
            player,
            index,
            count: 0,
        })?;
        self.apply(
            "apply_legal",
            |_| Logged::Legal(player.0, index),
            |live, handle| {
                live.call(|f, s| f.apply_legal.call(s, (handle, u32::from(player.0), index)))
            },
        )
        .map(drop)
    }

    fn apply_legal_then_acting(
        &mut self,
        player: Owner,
        index: usize,
    ) -> Result<&[Acting], ActionError> {
        let index = u32::try_from(index).map_err(|_| ActionError::NoSuchLegalAction {
            player,
            index,
            count: 0,
        })?;
        let mut list = std::mem::take(&mut self.acting);
        let applied = self.apply(
            "apply_legal_then_acting",
            |_| Logged::Legal(player.0, index),
            |live, handle| {
                let reply = live.call(|f, s| {
                    f.apply_legal_then_acting
                        .call(s, (handle, u32::from(player.0), index))
                })?;
                if reply.status == OK {
                    live.list(&reply, &mut list)?;
                }
                Ok(reply)
            },
        );
        self.acting = list;
        applied.map(|_| &self.acting[..])
    }

    fn playout(
        &mut self,
        rng: &mut GameRng,
        max_actions: u64,
        progress: &mut Progress,
    ) -> Result<u64, PlayoutError> {
        let from: [u64; 2] = rng.clone().into();
        let answered = self.on("playout", |live, handle| {
            let reply =
                live.call(|f, s| f.playout.call(s, (handle, from[0], from[1], max_actions)))?;
            let refused = if reply.status == OK {
                None
            } else {
                Some(live.out(&reply)?)
            };
            Ok((reply, refused))
        });
        let (reply, refused) = match answered {
            Ok(answer) => answer,
            Err(stopped) => {
                return Err(PlayoutError::Refused {
                    applied: 0,
                    player: Owner(0),
                    index: usize::MAX,
                    error: ActionError::Stopped(stopped),
                });
            }
        };
        let applied = reply.wide;
        if applied > 0 {
            self.events_fresh = false;
            let mut track = self.track.borrow_mut();
            track.playouts.push((from, applied));
            let n = (track.playouts.len() - 1) as u32;
            track.log.push(Logged::Playout(n));
            let due = track.due();
            drop(track);
            if due {
                self.checkpoint_now();
            }
        }
        progress.applied += applied;
        if let Ok(reached) = GameRng::try_from(reply.rng) {
            *rng = reached;
        }
        let index = if reply.index == u32::MAX {
            usize::MAX
        } else {
            reply.index as usize
        };
        if index != usize::MAX {
            progress.chosen = Some((Owner(reply.value as u16), index));
        }
        match refused {
            None => Ok(applied),
            Some(bytes) => Err(PlayoutError::Refused {
                applied,
                player: Owner(reply.value as u16),
                index,
                error: refusal(&bytes, ActionError::Illegal),
            }),
        }
    }

    fn apply_json(&mut self, player: Owner, json: &str) -> Result<(), ActionError> {
        self.apply(
            "apply_json",
            Self::json_logged(player, json),
            |live, handle| {
                let len = live.input(json.as_bytes())?;
                live.call(|f, s| f.apply_json.call(s, (handle, u32::from(player.0), len)))
            },
        )
        .map(drop)
    }

    fn apply_json_reporting(
        &mut self,
        player: Owner,
        json: &str,
        events: EventsFor,
    ) -> Result<ActionReport<'_>, ActionError> {
        let seat = abi::events_code(events);
        let mut list = std::mem::take(&mut self.acting);
        let mut bytes = Vec::new();
        let applied = self.apply(
            "apply_json_reporting",
            Self::json_logged(player, json),
            |live, handle| {
                let len = live.input(json.as_bytes())?;
                let reply = live.call(|f, s| {
                    f.apply_json_reporting
                        .call(s, (handle, u32::from(player.0), len, seat))
                })?;
                if reply.status == OK {
                    live.list(&reply, &mut list)?;
                    bytes = live.out(&reply)?;
                }
                Ok(reply)
            },
        );
        self.acting = list;
        let reply = applied?;
        let events = postcard::from_bytes(&bytes).unwrap_or_else(|e| {
            self.failed(format!(
                "{}: its answer to `apply_json_reporting` is unreadable: {e}",
                self.shared.named()
            ));
            Vec::new()
        });
        Ok(ActionReport {
            hash: StateHash(reply.wide),
            events,
            acting: &self.acting,
        })
    }

    fn events(&mut self) -> &[Event] {
        if !self.events_fresh {
            self.events = self.decoded(
                "events",
                |live, handle| live.call(|f, s| f.events.call(s, (handle, abi::EVERYONE))),
                Vec::new,
            );
            self.events_fresh = true;
        }
        &self.events
    }

    fn state_hash(&self) -> StateHash {
        match self.on("state_hash", |live, handle| {
            live.call(|f, s| f.state_hash.call(s, (handle,)))
        }) {
            Ok(reply) => StateHash(reply.wide),
            Err(stopped) => {
                self.failed(stopped);
                StateHash(0)
            }
        }
    }

    fn snapshot(&self, format: Format) -> Result<Vec<u8>, SetupError> {
        let code = u32::from(abi::format_code(format));
        let answered = self.on("snapshot", |live, handle| {
            let reply = live.call(|f, s| f.snapshot.call(s, (handle, code)))?;
            Ok((reply.status, live.out(&reply)?))
        });
        match answered {
            Ok((OK, bytes)) => Ok(bytes),
            Ok((_, bytes)) => Err(refusal(&bytes, SetupError::Snapshot)),
            Err(stopped) => Err(SetupError::Stopped(stopped)),
        }
    }

    fn outcome(&self) -> Outcome {
        self.decoded(
            "outcome",
            |live, handle| live.call(|f, s| f.outcome.call(s, (handle,))),
            || Outcome::Ongoing,
        )
    }

    fn table(&self, seat: Option<Owner>) -> Table {
        let code = abi::audience_code(seat);
        self.decoded(
            "table",
            |live, handle| live.call(|f, s| f.table.call(s, (handle, code))),
            || Table::new(seat),
        )
    }

    fn resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
        let code = abi::audience_code(seat);
        self.decoded(
            "resources",
            |live, handle| live.call(|f, s| f.resources.call(s, (handle, code))),
            Vec::new,
        )
    }

    fn events_for(&mut self, seat: Option<Owner>) -> Vec<Event> {
        let code = abi::audience_code(seat);
        self.decoded(
            "events",
            |live, handle| live.call(|f, s| f.events.call(s, (handle, code))),
            Vec::new,
        )
    }

    fn check_invariants(&self) -> Result<(), Violation> {
        match self.bytes("check_invariants", |live, handle| {
            live.call(|f, s| f.check_invariants.call(s, (handle,)))
        }) {
            Some(Ok(_)) => Ok(()),
            Some(Err(bytes)) => Err(Violation(String::from_utf8_lossy(&bytes).into_owned())),
            None => Err(Violation(
                self.failure()
                    .unwrap_or_else(|| "the game was stopped".to_owned()),
            )),
        }
    }

    fn reset(&mut self, setup: &Setup) -> Result<(), SetupError> {
        let json = serde_json::to_vec(setup).map_err(|e| SetupError::Config(e.to_string()))?;
        let answered = self.on("reset", |live, handle| {
            let len = live.input(&json)?;
            let reply = live.call(|f, s| f.reset.call(s, (handle, len)))?;
            Ok(if reply.status == OK {
                None
            } else {
                Some(live.out(&reply)?)
            })
        });
        match answered {
            Ok(None) => {
                // As a new game: its setup is the checkpoint, nothing since.
                let mut track = self.track.borrow_mut();
                track.checkpoint = Checkpoint::Setup(json.into());
                track.log.clear();
                track.texts.clear();
                track.text_bytes = 0;
                track.playouts.clear();
                drop(track);
                self.players = setup.players;
                self.events.clear();
                self.events_fresh = true;
                self.acting.clear();
                self.to_act.clear();
                Ok(())
            }
            Ok(Some(bytes)) => Err(refusal(&bytes, SetupError::Config)),
            Err(stopped) => Err(SetupError::Stopped(stopped)),
        }
    }

    fn clone_game(&self) -> Box<dyn DynGame> {
        let copied = self.on("clone_game", |live, handle| {
            live.call(|f, s| f.clone_game.call(s, (handle,)))
        });
        // The copy lives in the instance the call ran in: the generation `on` left in the track.
        let mut track = self.track.borrow().clone();
        match copied {
            Ok(reply) if reply.status == OK => {
                track.handle = reply.value;
            }
            Ok(_) => {
                track.stopped = Some(format!("{} could not copy the game", self.shared.named()));
            }
            Err(stopped) => track.stopped = Some(stopped),
        }
        self.cell
            .games
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let copy = WasmGame::new(
            Arc::clone(&self.shared),
            Arc::clone(&self.cell),
            self.players,
            track,
        );
        if let Some(stopped) = copy.track.borrow().stopped.clone() {
            copy.failed(stopped);
        }
        Box::new(copy)
    }

    fn state(&self) -> Option<&dyn coffer_core::erased_serde::Serialize> {
        None
    }

    fn failure(&self) -> Option<String> {
        self.failure
            .borrow()
            .clone()
            .or_else(|| self.track.borrow().stopped.clone())
    }
}

//! What one action does to a game: the messages each audience is sent, and applying it under the lock.

use super::*;

/// One event as the API writes it (the JSON of `coffer log --format json`).
#[derive(serde::Serialize)]
pub(super) struct EventOut<'a> {
    pub(super) text: Option<String>,
    pub(super) key: coffer_core::Key,
    pub(super) label: String,
    pub(super) change: &'a coffer_core::Change,
    pub(super) cause: String,
}

/// The table and resources an audience sees.
#[derive(serde::Serialize)]
pub(super) struct ViewOut<'a> {
    pub(super) table: &'a coffer_core::Table,
    pub(super) resources: &'a [coffer_core::ResourceView],
}

/// An `action` message, serialized straight to text (no JSON tree in between: this is the hot path).
#[derive(serde::Serialize)]
pub(super) struct ActionOut<'a> {
    #[serde(rename = "type")]
    pub(super) kind: &'static str,
    pub(super) seq: u64,
    pub(super) actor: u16,
    /// Who chose the move when it was not the seat's player: `bot` or `timeout`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) by: Option<&'static str>,
    /// Whether the seat took back its last action (`"~undo"`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(super) undo: bool,
    pub(super) action: &'a str,
    pub(super) events: &'a [EventOut<'a>],
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) view: Option<ViewOut<'a>>,
    /// With the view, the audience seat's legal actions when it may act next: it needs no `legal`
    /// round trip.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) legal: Option<&'a Legal>,
}

/// Who chose a move the server played for a seat. Its idempotency key says so in the log:
/// `~bot@<seq>`, `~timeout@<seq>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Chooser {
    /// The seat's bot.
    Bot,
    /// The random bot, for a seat whose clock ran out.
    Timeout,
    /// The server by the game's policy: a seat that left forfeits (`"~forfeit"`).
    Server,
}

impl Chooser {
    const ALL: [Chooser; 3] = [Chooser::Bot, Chooser::Timeout, Chooser::Server];

    /// Its name in action messages (`"by"`).
    pub(super) fn name(self) -> &'static str {
        match self {
            Chooser::Bot => "bot",
            Chooser::Timeout => "timeout",
            Chooser::Server => "server",
        }
    }

    /// The idempotency key of its move at `seq`.
    pub(super) fn key(self, seq: u64) -> String {
        format!("~{}@{seq}", self.name())
    }

    /// Who chose a move, from its key; `None`: the seat's player.
    pub(super) fn of(key: Option<&str>) -> Option<Chooser> {
        let rest = key?.strip_prefix('~')?;
        Chooser::ALL.into_iter().find(|c| {
            rest.strip_prefix(c.name())
                .is_some_and(|r| r.starts_with('@'))
        })
    }
}

/// The `"by"` of a move's action message, from its key.
pub(super) fn chosen_by(key: Option<&str>) -> Option<&'static str> {
    Chooser::of(key).map(Chooser::name)
}

pub(super) fn to_text(value: &impl serde::Serialize) -> String {
    // Serializing these types cannot fail: every map key is a string.
    serde_json::to_string(value).unwrap_or_default()
}

/// Which texts of an action message to write: each costs a serialization.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Forms {
    /// The message alone (an answer, a history entry).
    Plain,
    /// The message with the table, the resources and the audience's legal actions after it (a push).
    Viewed,
    /// Both: the actor's answer and its push.
    Both,
}

impl Forms {
    fn plain(self) -> bool {
        self != Forms::Viewed
    }

    fn viewed(self) -> bool {
        self != Forms::Plain
    }
}

/// One action as `audience` reads it: who acted, the action's heading and its events in the game's
/// words; and (as `forms` asks) the same message with the table and resources after it.
pub(super) fn action_message(
    game: &mut dyn DynGame,
    description: &Description,
    told: Told,
    audience: Audience,
    forms: Forms,
) -> (Option<String>, Option<String>) {
    let events = game.events_for(audience);
    let legal = if forms.viewed() {
        legal_now(game, audience, told.seq)
    } else {
        None
    };
    action_message_of(
        game,
        description,
        told,
        audience,
        &events,
        forms,
        legal.as_ref(),
    )
}

/// `audience`'s legal actions at `seq` when it is a seat the game lists as acting with some: what an
/// action message pushed to it carries, so that it needs no `legal` round trip.
pub(super) fn legal_now(game: &mut dyn DynGame, audience: Audience, seq: u64) -> Option<Legal> {
    let seat = audience?;
    may_act(game, seat).then(|| legal_list(game, seat, seq))
}

/// Whether the game lists `seat` as acting, with legal actions.
fn may_act(game: &mut dyn DynGame, seat: Owner) -> bool {
    game.acting()
        .iter()
        .any(|a| a.owner() == seat && a.legal > 0)
}

/// `seat`'s legal actions at `seq`: one JSON array written once, which pushes, answers and `legal`
/// requests all pass on as it is.
pub(super) fn legal_list(game: &mut dyn DynGame, seat: Owner, seq: u64) -> Legal {
    let count = game.legal_actions(seat);
    // The ruleset's JSON is passed on as written, each action checked to be JSON but not parsed into a
    // tree.
    let mut array = String::from("[");
    for json in (0..count).filter_map(|i| game.legal_action_json(i)) {
        if serde_json::from_str::<&RawValue>(&json).is_ok() {
            if array.len() > 1 {
                array.push(',');
            }
            array.push_str(&json);
        }
    }
    array.push(']');
    let actions = (array.len() > 2)
        .then(|| RawValue::from_string(array).ok())
        .flatten()
        .map(Arc::new);
    Legal { seq, actions }
}

/// Every seat's legal actions at `seq`, the game being at `seq`.
pub(super) fn every_legal(game: &mut dyn DynGame, seq: u64) -> Box<[Legal]> {
    (0..game.players())
        .map(|seat| legal_list(game, Owner(seat), seq))
        .collect()
}

/// Which committed action a message tells of: its sequence number, its seat, who chose it when not the
/// seat's player (`"by"`), and which of the host's own actions it was, if one.
#[derive(Clone, Copy)]
pub(super) struct Told {
    pub(super) seq: u64,
    pub(super) actor: u16,
    pub(super) by: Option<&'static str>,
    pub(super) host_action: Option<coffer_core::HostAction>,
}

impl Told {
    /// The stored action `action` of `seat` at `seq`, keyed `key`.
    pub(super) fn of(seq: u64, seat: u16, key: Option<&str>, action: &str) -> Told {
        Told {
            seq,
            actor: seat,
            by: chosen_by(key),
            host_action: coffer_core::HostAction::of(action),
        }
    }
}

/// [`action_message`] with `audience`'s events at hand (as applying the action answered them).
pub(super) fn action_message_of(
    game: &dyn DynGame,
    description: &Description,
    Told {
        seq,
        actor,
        by,
        host_action,
    }: Told,
    audience: Audience,
    events: &[Event],
    forms: Forms,
    legal: Option<&Legal>,
) -> (Option<String>, Option<String>) {
    let table = game.table(audience);
    let resources = game.resources(audience);
    let names = names_for(description, &resources, &table);
    let out: Vec<EventOut<'_>> = events
        .iter()
        .enumerate()
        .map(|(i, event)| EventOut {
            text: names.change_at(events, i, audience),
            key: event.key,
            label: names.key(event.key),
            change: &event.change,
            cause: names.cause(&event.cause),
        })
        .collect();
    let json = host_action.map_or("", coffer_core::HostAction::json);
    let heading = render::action_heading(&names, actor, json, events);
    let undo = host_action == Some(coffer_core::HostAction::Undo);
    let mut message = ActionOut {
        kind: "action",
        seq,
        actor,
        by,
        undo,
        action: &heading,
        events: &out,
        view: None,
        legal: None,
    };
    let plain = forms.plain().then(|| to_text(&message));
    let with_view = forms.viewed().then(|| {
        message.view = Some(ViewOut {
            table: &table,
            resources: &resources,
        });
        message.legal = legal;
        to_text(&message)
    });
    (plain, with_view)
}

/// A `view` message, serialized straight to text.
#[derive(serde::Serialize)]
struct ViewMessage<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    seq: u64,
    seat: Audience,
    view: ViewOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clock: Option<&'a Value>,
}

/// What `audience` sees of the game now, with the game's `clock` when it has one.
pub(super) fn view_message(
    game: &dyn DynGame,
    seq: u64,
    audience: Audience,
    clock: Option<&Value>,
) -> String {
    to_text(&ViewMessage {
        kind: "view",
        seq,
        seat: audience,
        view: ViewOut {
            table: &game.table(audience),
            resources: &game.resources(audience),
        },
        clock,
    })
}

pub(super) fn plugin_failed(game: &dyn DynGame) -> Result<(), String> {
    match game.failure() {
        Some(message) => Err(message),
        None => Ok(()),
    }
}

/// What an audience sees of a game at one sequence number: the `view` message's text.
#[derive(Debug, Clone)]
pub struct View {
    /// The sequence number of the last action it shows.
    pub seq: u64,
    /// `{"type":"view","seq","seat","view":{"table","resources"}}`, and `"clock"` when the game has one.
    pub text: String,
}

/// A seat's legal actions at one sequence number: what a pushed action message carries, what the
/// `legal` request answers, and what each hosted game keeps for every seat at its last committed action,
/// so that the request needs no call into the game (see [`Games::legal`](super::Games::legal)). Written
/// as `{"seq": N, "actions": [...]}`.
#[derive(Debug, Clone)]
pub struct Legal {
    /// The sequence number they are legal at.
    pub seq: u64,
    /// The JSON array of the actions, each as the ruleset wrote it; `None` when there are none.
    actions: Option<Arc<Box<RawValue>>>,
}

impl serde::Serialize for Legal {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;
        let mut out = serializer.serialize_struct("Legal", 2)?;
        out.serialize_field("seq", &self.seq)?;
        match &self.actions {
            Some(actions) => out.serialize_field("actions", &***actions)?,
            None => out.serialize_field("actions", &[(); 0])?,
        }
        out.end()
    }
}

impl Legal {
    /// The actions legal at `seq`, given as the JSON array of them (`[]`: none).
    pub(super) fn of_json(seq: u64, actions: &RawValue) -> Legal {
        Legal {
            seq,
            actions: (actions.get().trim() != "[]").then(|| Arc::new(actions.to_owned())),
        }
    }

    /// An answer to an action asked with `then=legal`, split into the action as it was logged and the
    /// actor's legal actions after it (`None` when the answer has none): the route puts them last
    /// (`..., "legal": {"seq": N, "actions": [...]}}`), and that key cannot occur unescaped inside a
    /// string of the action's.
    pub(super) fn split_from(answer: String) -> (String, Option<Legal>) {
        const KEY: &str = r#","legal":{"seq":"#;
        #[derive(serde::Deserialize)]
        struct Part<'a> {
            seq: u64,
            #[serde(borrow)]
            actions: &'a RawValue,
        }
        let Some(at) = answer.rfind(KEY) else {
            return (answer, None);
        };
        let object = &answer[at + r#","legal":"#.len()..answer.len().saturating_sub(1)];
        match serde_json::from_str::<Part<'_>>(object) {
            Ok(part) => {
                let legal = Legal::of_json(part.seq, part.actions);
                let mut action = answer[..at].to_owned();
                action.push('}');
                (action, Some(legal))
            }
            Err(_) => (answer, None),
        }
    }

    /// `{"seq": N, "actions": [...]}`, or with `kind` `{"type": kind, "seq": N, "actions": [...]}`.
    pub fn to_json(&self, kind: Option<&str>) -> String {
        let actions = self
            .actions
            .as_deref()
            .map_or("[]", |actions| actions.get());
        match kind {
            Some(kind) => format!(
                r#"{{"type":{},"seq":{},"actions":{actions}}}"#,
                to_text(&kind),
                self.seq
            ),
            None => format!(r#"{{"seq":{},"actions":{actions}}}"#, self.seq),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.actions.is_none()
    }
}

/// What applying an action gave, before it is committed.
pub(super) enum Applied {
    Refused(String),
    Duplicate(u64),
    Remembered(u64, Arc<str>),
    Done(Done),
}

/// An action applied in memory, waiting for its commit: what to store, answer and push.
pub(super) struct Done {
    pub(super) seq: u64,
    pub(super) hash: StateHash,
    pub(super) answer: String,
    pub(super) pushes: Vec<(Audience, Arc<str>)>,
    pub(super) finished: bool,
    pub(super) snapshot: Option<Vec<u8>>,
    /// Whether it took the seat's last action back.
    pub(super) undo: bool,
    /// The seats to act after it, when the game has a clock.
    pub(super) to_act: Vec<u16>,
    /// Every seat's legal actions after it.
    pub(super) legal: Box<[Legal]>,
}

/// What applying one submitted action needs on the game's thread.
pub(super) struct Applying {
    pub(super) store: Arc<dyn Store>,
    pub(super) ruleset: Option<Arc<dyn DynRuleset>>,
    pub(super) slot: Arc<Slot>,
    pub(super) seat: u16,
    pub(super) action: Box<RawValue>,
    pub(super) expected_seq: Option<u64>,
    pub(super) key: Option<String>,
    pub(super) snapshot_every: u64,
}

impl Applying {
    /// Applies the action to the live game: a retry's first answer, a refusal in the seat's words, or
    /// the action applied with its answer and each audience's push (not yet committed).
    pub(super) fn apply(self, live: &mut Live) -> Result<Applied, CallError> {
        let seat = self.seat;
        let expected_seq = self.expected_seq;
        let id = self.slot.id;
        let slot = &self.slot;
        if let Some(key) = &self.key {
            if let Some((seq, answer)) = slot.remembered(seat, key) {
                return Ok(Applied::Remembered(seq, answer));
            }
            match self.store.keyed_action(id, u32::from(seat), key) {
                Ok(Some(first)) => return Ok(Applied::Duplicate(first)),
                Ok(None) => {}
                Err(e) => return Err(CallError::Refused(storage(&e))),
            }
        }
        if slot.finished.load(Ordering::Acquire) {
            return Err(CallError::Refused(GameError::Finished(id.0)));
        }
        if let Some(expected) = expected_seq
            && expected != live.seq
        {
            return Err(CallError::Refused(GameError::Stale {
                expected,
                current: live.seq,
            }));
        }
        let Some(ruleset) = &self.ruleset else {
            return Err(CallError::Stop(
                "the ruleset of this game is not loaded".into(),
            ));
        };
        let description = ruleset.description();
        let game = live
            .game
            .as_deref_mut()
            .ok_or_else(|| CallError::Stop("the game is not loaded".into()))?;
        let actor = Some(Owner(seat));
        let undo = is_undo(self.action.get());
        if undo {
            let table = game.table(actor);
            let resources = game.resources(actor);
            if let Some(reason) = live
                .moves
                .refusal(seat, &names_for(description, &resources, &table))
            {
                return Ok(Applied::Refused(reason));
            }
        }
        // One call applies the action and answers its hash and the actor's events.
        let applied =
            game.apply_json_reporting(Owner(seat), self.action.get(), EventsFor::Seat(actor));
        let (hash, actor_events) = match applied {
            Ok(report) => (StateHash(report.hash.0), report.events),
            Err(refusal) => {
                if let coffer_core::ActionError::Panicked(_)
                | coffer_core::ActionError::Poisoned(_)
                | coffer_core::ActionError::Stopped(_) = refusal
                {
                    return Err(CallError::Stop(format!(
                        "game {id} is stopped: its ruleset's plugin failed ({refusal}); its games take no more actions"
                    )));
                }
                let audience = actor;
                let table = game.table(audience);
                let resources = game.resources(audience);
                let reason = refusal_reason(&names_for(description, &resources, &table), &refusal);
                plugin_failed(game).map_err(CallError::Stop)?;
                return Ok(Applied::Refused(reason));
            }
        };
        let seq = live.seq + 1;
        let told = Told::of(seq, seat, self.key.as_deref(), self.action.get());
        let mut actor_events = Some(actor_events);
        let mut answer = None;
        let mut pushes = Vec::new();
        // Every seat's legal actions: pushed to the seats that may act, and kept for `legal` requests.
        let legal = every_legal(game, seq);
        for audience in slot.listening() {
            let events = match actor_events.take_if(|_| audience == actor) {
                Some(events) => events,
                None => game.events_for(audience),
            };
            let legal = audience
                .filter(|&seat| may_act(game, seat))
                .and_then(|Owner(seat)| legal.get(usize::from(seat)));
            // The actor's answer is its own feed's message without the view; the other audiences
            // are only pushed to.
            let forms = if audience == actor {
                Forms::Both
            } else {
                Forms::Viewed
            };
            let (plain, with_view) =
                action_message_of(game, description, told, audience, &events, forms, legal);
            pushes.push((audience, Arc::<str>::from(with_view.unwrap_or_default())));
            if plain.is_some() {
                answer = plain;
            }
        }
        let answer = match (answer, actor_events) {
            (Some(answer), _) => Some(answer),
            (None, Some(events)) => {
                action_message_of(game, description, told, actor, &events, Forms::Plain, None).0
            }
            (None, None) => action_message(game, description, told, actor, Forms::Plain).0,
        }
        .unwrap_or_default();
        let finished = matches!(game.outcome(), Outcome::Finished { .. });
        // A snapshot falls outside every undo window (a replay from it must take back what this game
        // does): one due while a seat may take actions back waits for the window to close.
        let due = seq.is_multiple_of(self.snapshot_every) || finished || live.snapshot_owed;
        let snapshot = if due && (finished || game.table(None).undo.is_none()) {
            live.snapshot_owed = false;
            game.snapshot(Format::Binary).ok()
        } else {
            live.snapshot_owed |= due;
            None
        };
        let to_act = if slot.setup.clock.is_some() {
            seats_to_act(game)
        } else {
            Vec::new()
        };
        plugin_failed(game).map_err(CallError::Stop)?;
        Ok(Applied::Done(Done {
            seq,
            hash,
            answer,
            pushes,
            finished,
            snapshot,
            undo,
            to_act,
            legal,
        }))
    }
}

/// A failure inside a blocking call: the game must stop, or the request fails on its own.
pub(super) enum CallError {
    Stop(String),
    /// The request was refused or failed in the games layer's own terms; the game goes on.
    Refused(GameError),
    /// The call was withdrawn before it started (it waited past the deadline for a thread).
    Withdrawn,
}

#[cfg(test)]
mod tests {
    use super::{Chooser, Legal};

    #[test]
    fn an_answer_with_legal_actions_splits_into_the_logged_action_and_the_list() {
        // An event's text may hold the key's words, escaped; only the list the route appends is split.
        let action =
            r#"{"type":"action","seq":3,"events":[{"text":"a \",\"legal\":{\"seq\": 1"}]}"#;
        let answer = format!(
            r#"{},"legal":{{"seq":3,"actions":[{{"type":"pass"}}]}}}}"#,
            &action[..action.len() - 1]
        );
        let (logged, legal) = Legal::split_from(answer);
        assert_eq!(logged, action);
        let legal = legal.expect("the list");
        assert_eq!(
            legal.to_json(None),
            r#"{"seq":3,"actions":[{"type":"pass"}]}"#
        );
        let (logged, legal) = Legal::split_from(action.to_owned());
        assert_eq!((logged.as_str(), legal.is_none()), (action, true));
    }

    #[test]
    fn a_move_the_server_chose_is_known_by_its_key_and_no_other_key_passes_for_one() {
        for by in [Chooser::Bot, Chooser::Timeout] {
            assert_eq!(Chooser::of(Some(&by.key(12))), Some(by));
        }
        assert_eq!(Chooser::key(Chooser::Timeout, 3), "~timeout@3");
        for other in ["~bots@1", "~bot", "bot@1", "~timeout", "k-1", "~abc"] {
            assert_eq!(Chooser::of(Some(other)), None, "{other}");
        }
        assert_eq!(Chooser::of(None), None);
    }
}

//! K9 events: typed, serializable, published to `tracing` as a spectator sees them, and replayable.

use crate::{hash, key, new_amount};
use coffer_core::{
    AmountSpec, Cause, Change, ChargeOp, Event, Ledger, Owner, Refusal, Scope, TrackSpec, Zone,
};

/// A ledger with one of everything, and a log of mixed changes recorded after setup.
pub fn busy_ledger() -> (Ledger, Ledger, Vec<Event>) {
    let mut l = Ledger::new(2, 77);
    let a = new_amount(
        &mut l,
        AmountSpec::new(key(0, 1, 0)).cap(10).lasts(Scope::Phase),
    );
    let b = new_amount(
        &mut l,
        AmountSpec::new(key(1, 1, 0))
            .start(2)
            .lasts(Scope::Turn)
            .resets(),
    );
    let t = l
        .add_track(TrackSpec::new(key(0, 2, 0), 2).recurring(1, Scope::Phase))
        .unwrap();
    let r0 = l.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    let pool = l.add_zone(Zone::new(key(0, 4, 0)).face(1)).unwrap();
    let sys = l
        .add_zone(Zone::new(key(u16::MAX, 5, 0)).one_per_owner())
        .unwrap();
    let p = l.add_permanent(key(0, 6, 0), Some(Scope::Turn)).unwrap();
    l.stock(Owner(0), r0, 4, Cause::Setup).unwrap();
    l.take_events();
    let initial = l.clone();
    let act = Cause::Action {
        player: Owner(0),
        code: 3,
    };
    l.gain(a, 12, act).unwrap();
    l.spend(a, 4, act).unwrap();
    l.pay(b, 5, act).unwrap();
    l.set(a, 3, act).unwrap();
    l.set_cap(a, Some(2), act).unwrap();
    l.spend_charges(t, 2, act).unwrap();
    l.add_capacity(t, 8, 1, 0, act).unwrap();
    l.lose_charges(t, 1, act).unwrap();
    l.recover_charges(t, 1, act).unwrap();
    l.gain_tokens(Owner(0), pool, 3, act).unwrap();
    l.move_tokens(Owner(0), pool, sys, 2, act).unwrap();
    l.place_from_reserve(Owner(0), sys, None, act).unwrap();
    l.activate(p, act).unwrap();
    l.check_limit(key(1, 9, 0), 9, 7, act);
    l.random_below(10, act);
    let mut deck = [0u8; 5];
    l.shuffle(&mut deck, act);
    l.end_scope(Scope::Turn);
    l.remove_capacity(t, 8, Cause::Effect(2)).unwrap();
    l.check_limit(key(1, 9, 0), 7, 7, act);
    let events = l.take_events();
    (initial, l, events)
}

#[test]
fn k9_every_change_emits_a_typed_event_with_owner_resource_values_and_cause() {
    let mut l = Ledger::new(2, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(1, 4, 2)));
    let cause = Cause::Action {
        player: Owner(1),
        code: 9,
    };
    l.gain(a, 3, cause).unwrap();
    let e = l.events()[0];
    assert_eq!(e.key, key(1, 4, 2));
    assert_eq!(e.key.owner, Owner(1));
    assert_eq!(e.values(), Some((0, 3)));
    assert_eq!(e.cause, cause);
    assert_eq!(
        e.to_string(),
        "p1's resource 4 #2: +3, 0 -> 3, by p1's action 9"
    );
    let (initial, after, events) = busy_ledger();
    assert_ne!(hash(&initial), hash(&after));
    // Each kind of change shows up in the busy log.
    for probe in [
        |c: &Change| matches!(c, Change::Gain { .. }),
        |c: &Change| matches!(c, Change::Spend { .. }),
        |c: &Change| matches!(c, Change::Pay { .. }),
        |c: &Change| matches!(c, Change::Set { .. }),
        |c: &Change| matches!(c, Change::Expire { .. }),
        |c: &Change| matches!(c, Change::Cap { .. }),
        |c: &Change| matches!(c, Change::Floor { .. }),
        |c: &Change| {
            matches!(
                c,
                Change::Charges {
                    op: ChargeOp::Recur,
                    ..
                }
            )
        },
        |c: &Change| matches!(c, Change::Capacity { added: false, .. }),
        |c: &Change| matches!(c, Change::Tokens { .. }),
        |c: &Change| {
            matches!(
                c,
                Change::Exhaust {
                    exhausted: false,
                    ..
                }
            )
        },
        |c: &Change| matches!(c, Change::Demand { raised: false, .. }),
        |c: &Change| matches!(c, Change::Random { .. }),
        |c: &Change| matches!(c, Change::Scope { .. }),
    ]
    .iter()
    .enumerate()
    {
        assert!(
            events.iter().any(|e| probe.1(&e.change)),
            "no event for probe {}",
            probe.0
        );
    }
    for e in &events {
        assert!(!e.to_string().is_empty());
    }
}

#[test]
fn k9_events_round_trip_through_json_and_postcard() {
    let (_, _, events) = busy_ledger();
    let json = serde_json::to_string(&events).unwrap();
    let back: Vec<Event> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, events);
    let bytes = postcard::to_allocvec(&events).unwrap();
    let back: Vec<Event> = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(back, events);
}

#[test]
fn k9_replaying_the_event_log_rebuilds_the_same_state_hash() {
    let (initial, after, events) = busy_ledger();
    let mut replay = initial.clone();
    for e in &events {
        replay.redo(e).unwrap();
    }
    assert_eq!(hash(&replay), hash(&after));
    assert_eq!(replay, after);
    // The same through JSON, as a saved log would be read back.
    let json = serde_json::to_string(&events).unwrap();
    let mut replay = initial;
    for e in serde_json::from_str::<Vec<Event>>(&json).unwrap() {
        replay.redo(&e).unwrap();
    }
    assert_eq!(hash(&replay), hash(&after));
}

#[test]
fn k9_redo_refuses_an_event_that_does_not_fit_and_changes_nothing() {
    let (initial, _, events) = busy_ledger();
    let mut l = initial.clone();
    let before = hash(&l);
    // Forged: a gain past the cap.
    let mut forged = events[0];
    if let Change::Gain { ref mut after, .. } = forged.change {
        *after = 11;
    }
    assert!(matches!(l.redo(&forged), Err(Refusal::Invalid(_))));
    assert_eq!(hash(&l), before);
    // Applied twice: the second time its before side is not the current state.
    l.redo(&events[0]).unwrap();
    let once = hash(&l);
    let r = l.redo(&events[0]);
    assert!(
        matches!(r, Err(Refusal::Invalid(ref m)) if m.contains("does not fit")),
        "{r:?}"
    );
    assert_eq!(hash(&l), once);
    // Tokens nobody holds.
    let mut other = Ledger::new(2, 0);
    let z = other.add_zone(Zone::new(key(0, 0, 0))).unwrap();
    let forged = Event {
        key: key(0, 0, 0),
        change: Change::Tokens {
            owner: Owner(0),
            op: coffer_core::TokenOp::Move,
            from: z,
            to: z,
            n: u32::MAX,
        },
        cause: Cause::Setup,
    };
    assert!(l.redo(&forged).is_err());
    assert_eq!(hash(&l), once);
    // A ledger without those resources refuses every event that names one.
    let mut empty = Ledger::new(0, 0);
    let empty_hash = hash(&empty);
    for e in &events {
        let names_nothing = matches!(
            e.change,
            Change::Random { .. } | Change::Scope { .. } | Change::Demand { raised: true, .. }
        );
        if !names_nothing {
            assert!(empty.redo(e).is_err(), "{e:?}");
        }
    }
    assert_eq!(hash(&empty), empty_hash);
}

thread_local! {
    static SEEN: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Records, per thread, the `tracing` events with the events' target, as `change cause`. Installed as
/// the global default (a scoped dispatcher races with other test threads over the callsite's cached
/// interest).
struct Recorder;

/// The `change` and `cause` fields of one event.
#[derive(Default)]
struct Fields(String);

impl tracing::field::Visit for Fields {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        if matches!(field.name(), "change" | "cause") {
            self.0.push_str(&format!("{value:?} "));
        }
    }
}

impl tracing::Subscriber for Recorder {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        if event.metadata().target() == "coffer::event" {
            let mut fields = Fields::default();
            event.record(&mut fields);
            SEEN.with(|seen| seen.borrow_mut().push(fields.0));
        }
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// The events published on this thread since the last call.
fn published() -> Vec<String> {
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| {
        tracing::subscriber::set_global_default(Recorder)
            .expect("no other global subscriber in this binary");
    });
    SEEN.with(|seen| std::mem::take(&mut *seen.borrow_mut()))
}

#[test]
fn k9_the_kernel_publishes_no_event_since_it_cannot_tell_what_a_seat_may_see() {
    published();
    let mut l = Ledger::new(1, 0);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)));
    l.gain(a, 1, Cause::Setup).unwrap();
    let mark = l.begin();
    l.gain(a, 1, Cause::Setup).unwrap();
    l.commit(mark);
    assert_eq!(published(), Vec::<String>::new());
    assert_eq!(l.events().len(), 2, "the kernel's own log keeps them");
}

#[test]
fn k9_an_accepted_action_s_events_are_published_as_a_spectator_sees_them() {
    use coffer_core::Setup;
    published();
    let rules = coffer_core::Adapter::shared(crate::vocab::Secrets);
    let mut games = [1, 2].map(|_| rules.new_game(&Setup::new(2, 1)).unwrap());
    assert_eq!(published(), Vec::<String>::new(), "setup is not published");
    let mut logs = Vec::new();
    for (game, (plan, draw)) in games.iter_mut().zip([(2, 1), (0, 3)]) {
        // p0's hand is hidden from spectators; its plan is a secret note; its Treasury is public.
        game.apply_json(Owner(0), &format!(r#"{{"Draw":{draw}}}"#))
            .unwrap();
        game.apply_json(Owner(0), &format!(r#"{{"Plan":{plan}}}"#))
            .unwrap();
        game.apply_json(Owner(0), r#"{"Pay":1}"#).unwrap();
        assert!(game.apply_json(Owner(0), r#"{"Pay":99}"#).is_err());
        logs.push(published());
    }
    assert_eq!(
        logs[0], logs[1],
        "games that differ only in hidden state publish the same"
    );
    assert_eq!(logs[0].len(), 2, "{:?}", logs[0]);
    assert!(
        logs[0][0].starts_with("Note { code: 1, args: [0, 0, 0] }"),
        "redacted: {:?}",
        logs[0]
    );
    assert!(
        logs[0][1].starts_with("Spend {"),
        "the Treasury's payment: {:?}",
        logs[0]
    );
}

#[test]
fn k9_events_stay_small_enough_to_log_every_change() {
    // Every primitive copies one event into the log (docs/PERFORMANCE.md): keep it at most 72 bytes.
    assert!(
        std::mem::size_of::<Event>() <= 72,
        "{}",
        std::mem::size_of::<Event>()
    );
    assert!(
        std::mem::size_of::<Result<(), Refusal>>() <= 48,
        "{}",
        std::mem::size_of::<Result<(), Refusal>>()
    );
}

#[test]
fn k9_shrinking_a_ledger_changes_no_state_and_keeps_its_events() {
    let (mut l, _, log) = busy_ledger();
    let before = hash(&l);
    let events = l.events().to_vec();
    l.shrink_to_fit();
    assert_eq!(hash(&l), before);
    assert_eq!(l.events(), events.as_slice());
    assert!(!log.is_empty());
}

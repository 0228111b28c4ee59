//! What each audience sees of a game, and the game written out: the per-seat table, resources and
//! events (a seat never receives another's hidden state: [`Ruleset::visible`] and secret notes), and
//! snapshots.

use super::Game;
use crate::{Format, Mover, Outcome, Pending, ResourceView, Ruleset, SetupError, Table, Undo};
use coffer_kernel::{Change, Event, Key, Names, Owner, Vocabulary};
use std::fmt;

/// Bytes reserved up front for a binary snapshot (JSON reserves four times as many); a larger state grows
/// the buffer (a six-player command-tokens binary snapshot, 4,140 bytes, does twice: reserving its size
/// instead measured no difference).
pub(super) const SNAPSHOT_CAPACITY: usize = 2048;

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

/// The whole state `state`, written out ([`DynGame::snapshot`](crate::DynGame::snapshot)).
pub(super) fn snapshot<S: serde::Serialize>(
    state: &S,
    format: Format,
) -> Result<Vec<u8>, SetupError> {
    let error = |e: &dyn fmt::Display| SetupError::Snapshot(e.to_string());
    match format {
        Format::Json => {
            let mut out = JsonOut(Vec::with_capacity(SNAPSHOT_CAPACITY * 4));
            serde_json::to_writer(&mut out, state).map_err(|e| error(&e))?;
            Ok(out.0)
        }
        // The `Extend` flavor writes bytes in place; the default `Vec` flavor copies each varint
        // with a `memcpy` call (a third of the round-trip's time in a profile).
        Format::Binary => {
            postcard::to_extend(state, Vec::with_capacity(SNAPSHOT_CAPACITY)).map_err(|e| error(&e))
        }
    }
}

/// `e` as `seat` (`None`: a spectator) sees it: unchanged, redacted (a secret note of another owner
/// whose vocabulary gives redacted text), or not at all (a resource the ruleset hides from `seat`, a
/// secret note without redacted text).
pub(super) fn as_seen_by<R: Ruleset>(
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

impl<R: Ruleset> Game<R> {
    /// What `seat` (`None`: a spectator) sees of the game besides its resources ([`DynGame::table`](crate::DynGame::table)).
    pub(super) fn seat_table(&self, seat: Option<Owner>) -> Table {
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

    /// The resources `seat` may see, labelled ([`DynGame::resources`](crate::DynGame::resources)).
    pub(super) fn seat_resources(&self, seat: Option<Owner>) -> Vec<ResourceView> {
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

    /// The last action's events `seat` may see ([`DynGame::events_for`](crate::DynGame::events_for)).
    pub(super) fn seat_events(&self, seat: Option<Owner>) -> Vec<Event> {
        let (r, s, v) = (&*self.ruleset, &self.state, &*self.vocabulary);
        let events = self.last_events();
        let mut out = Vec::with_capacity(events.len());
        out.extend(events.iter().filter_map(|e| as_seen_by(r, s, v, e, seat)));
        out
    }
}

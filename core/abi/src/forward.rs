//! Logging across the boundary: the plugin-side `tracing` subscriber that forwards every event to the
//! host's [`LogSink`].

use crate::layout::{LogSink, StrRef};
use std::fmt::Write as _;
use std::sync::RwLock;
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering;
use tracing::field::{Field, Visit};
use tracing::level_filters::LevelFilter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata};

pub(crate) fn install(sink: LogSink) {
    LEVEL.store(sink.max_level.min(5), Ordering::Relaxed);
    *SINK.write().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    if !INSTALLED.swap(true, Ordering::AcqRel) {
        let _ = tracing::subscriber::set_global_default(Forwarder);
    }
    tracing::callsite::rebuild_interest_cache();
}

fn level_code(level: &Level) -> u8 {
    match *level {
        Level::ERROR => 1,
        Level::WARN => 2,
        Level::INFO => 3,
        Level::DEBUG => 4,
        _ => 5,
    }
}

struct Forwarder;

impl Forwarder {
    fn wanted(meta: &Metadata<'_>) -> bool {
        level_code(meta.level()) <= LEVEL.load(Ordering::Relaxed)
    }
}

#[derive(Default)]
struct Message {
    message: String,
    fields: String,
}

impl Visit for Message {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else {
            let _ = write!(self.fields, " {}={value}", field.name());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
        } else {
            let _ = write!(self.fields, " {}={value:?}", field.name());
        }
    }
}

impl tracing::Subscriber for Forwarder {
    fn register_callsite(&self, meta: &'static Metadata<'static>) -> Interest {
        if Self::wanted(meta) {
            Interest::always()
        } else {
            Interest::never()
        }
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        Self::wanted(meta)
    }
    fn max_level_hint(&self) -> Option<LevelFilter> {
        Some(match LEVEL.load(Ordering::Relaxed) {
            0 => LevelFilter::OFF,
            1 => LevelFilter::ERROR,
            2 => LevelFilter::WARN,
            3 => LevelFilter::INFO,
            4 => LevelFilter::DEBUG,
            _ => LevelFilter::TRACE,
        })
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let guard = SINK.read().unwrap_or_else(|e| e.into_inner());
        let Some(sink) = *guard else { return };
        let mut m = Message::default();
        event.record(&mut m);
        m.message.push_str(&m.fields);
        let meta = event.metadata();
        (sink.log)(
            sink.ctx,
            level_code(meta.level()),
            StrRef::new(meta.target()),
            StrRef::new(&m.message),
        );
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

pub(crate) static LEVEL: AtomicU8 = AtomicU8::new(0);
pub(crate) static INSTALLED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);
pub(crate) static SINK: RwLock<Option<LogSink>> = RwLock::new(None);

// SAFETY: a sink is plain data; the host promises its callback and context are usable from any thread for
// the life of the process.
unsafe impl Send for LogSink {}
// SAFETY: as above; a sink is never mutated through a shared reference.
unsafe impl Sync for LogSink {}

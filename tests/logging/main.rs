//! Plugin logs reach the host's subscriber. This test has a process of its own: `tracing` keeps its
//! dispatchers and callsite interest process-wide, and a subscriber installed for one thread of a test
//! binary whose other tests emit plugin events on other threads can see a callsite's interest cached as
//! "never" by those threads. Here the subscriber is global, as in the `coffer` binary.

use coffer_core::{Owner, Setup};
use coffer_host::{Registry, loader};
use coffer_tests::{fixture_library, plugin_dir_with};
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Loads one directory into a fresh registry.
fn load(dir: &Path) -> (Registry, loader::LoadReport) {
    let mut registry = Registry::new();
    let report = registry.load_dirs(&[dir], None);
    (registry, report)
}

/// Records every event the host's subscriber sees.
#[derive(Default, Clone)]
struct Capture(Arc<Mutex<Vec<(tracing::Level, String, String)>>>);

struct Fields<'a>(&'a mut String);

impl tracing::field::Visit for Fields<'_> {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        use std::fmt::Write as _;
        let _ = write!(self.0, "{}={value:?};", field.name());
    }
}

impl tracing::Subscriber for Capture {
    fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, event: &tracing::Event<'_>) {
        let mut fields = String::new();
        event.record(&mut Fields(&mut fields));
        let meta = event.metadata();
        self.0
            .lock()
            .unwrap()
            .push((*meta.level(), meta.target().to_owned(), fields));
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

#[test]
fn tracing_events_inside_a_plugin_reach_the_host_subscriber() {
    let capture = Capture::default();
    tracing::subscriber::set_global_default(capture.clone())
        .expect("the only subscriber of this process");
    // Loading (or re-loading) a library passes the host's current level to the plugin's forwarder.
    let dir = plugin_dir_with(&[&fixture_library("good")]);
    let (registry, report) = load(dir.path());
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let mut game = registry
        .get("fixture-coins")
        .unwrap()
        .ruleset
        .new_game(&Setup::new(2, 1))
        .unwrap();
    game.apply_json(Owner(0), r#"{"type":"take","n":2}"#)
        .unwrap();
    let seen = capture.0.lock().unwrap().clone();
    let took = seen
        .iter()
        .find(|(_, target, fields)| target == "coffer::plugin" && fields.contains("took 2 coins"))
        .unwrap_or_else(|| panic!("the plugin's event did not reach the host: {seen:#?}"));
    assert_eq!(took.0, tracing::Level::INFO);
    assert!(
        took.2.contains("plugin_target=\"coffer_fixture\""),
        "{}",
        took.2
    );
    assert!(
        took.2.contains("player=0"),
        "fields are forwarded: {}",
        took.2
    );
}

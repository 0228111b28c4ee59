//! The server's Prometheus metrics, served at `/metrics` in the text exposition format.

use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Every metric the server keeps.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Actions applied and committed.
    pub actions: Counter,
    /// Actions the ruleset refused.
    pub refusals: Counter,
    /// Actions the server played for a seat: its bots' moves and timeouts' (counted in `actions` too).
    pub bot_actions: Counter,
    /// Clocks that ran out.
    pub timeouts: Counter,
    /// How late after its deadline each timeout fired, in seconds.
    pub timeout_late_seconds: Histogram,
    /// Submissions refused before the ruleset saw them: stale `expected_seq`, rate limit, stopped game.
    pub rejected: Counter,
    /// Seconds from handing an action to the store to its commit.
    pub commit_seconds: Histogram,
    /// WebSocket clients connected now.
    pub connected_clients: Gauge,
    /// Connections open now (HTTP and WebSocket).
    pub connections: Gauge,
    /// Connections closed at once because `max_connections` were open.
    pub connections_refused: Counter,
    /// Games hosted now.
    pub games: Gauge,
    /// Games stopped (quarantined): a plugin past its deadline, a panic, a poisoned library, a storage
    /// failure.
    pub games_stopped: Counter,
    /// With several nodes: actions this node passed on to the node owning their game.
    pub forwarded: Counter,
    /// With several nodes: games this node took over from another (an expired lease).
    pub takeovers: Counter,
    /// With several nodes: appends the store refused because another node had taken the game's lease.
    pub fenced: Counter,
    /// With several nodes: games whose lease this node lost (taken over, or not renewed in time).
    pub leases_lost: Counter,
    /// With several nodes: actions of games another node owns, applied here from the notice that
    /// announced them (no store read).
    pub followed_from_notices: Counter,
    /// With several nodes: actions of games another node owns, read from the store to apply them here.
    pub followed_from_store: Counter,
    /// With several nodes: announcements of actions of games nobody watched on this node, left
    /// unapplied until a request or the sweep catches the game up.
    pub notices_left: Counter,
    /// With several nodes: games nobody watched here caught up with their logs by the sweep.
    pub dormant_caught_up: Counter,
    /// `legal` requests answered from every seat's legal actions kept at the game's last action, with
    /// no call into the game.
    pub legal_kept: Counter,
    /// Actions replayed to answer history reads (events, a WebSocket's `since`, an old keyed retry):
    /// at most a snapshot interval plus the actions returned per read, whatever a log's length.
    pub history_replayed: Counter,
    /// Requests refused because the server was saturated (history replays or threads for rulesets
    /// all busy): `503 saturated`, never blamed on a game.
    pub saturated: Counter,
    /// Requests refused by a client quota: reads per second, games or connections per client.
    pub quota_refused: Counter,
    /// Finished games deleted from the store by the retention policy (`--keep-finished-days`).
    pub games_deleted: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("coffer");
        let r = &mut registry;
        let metrics = Self {
            actions: counter(r, "actions", "Actions applied and committed"),
            refusals: counter(r, "refusals", "Actions the ruleset refused"),
            bot_actions: counter(
                r,
                "bot_actions",
                "Actions the server played for a seat (bots, timeouts)",
            ),
            timeouts: counter(r, "timeouts", "Clocks that ran out"),
            timeout_late_seconds: histogram(
                r,
                "timeout_late_seconds",
                "How late after its deadline each timeout fired",
                [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0],
            ),
            rejected: counter(
                r,
                "rejected",
                "Submissions refused before the ruleset saw them (stale, rate limited, stopped game)",
            ),
            commit_seconds: histogram(
                r,
                "commit_seconds",
                "Seconds from handing an action to the store to its commit",
                [
                    0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0,
                ],
            ),
            connected_clients: gauge(r, "connected_clients", "WebSocket clients connected now"),
            connections: gauge(r, "connections", "Connections open now"),
            connections_refused: counter(
                r,
                "connections_refused",
                "Connections closed at once because the connection limit was reached",
            ),
            games: gauge(r, "games", "Games hosted now"),
            games_stopped: counter(
                r,
                "games_stopped",
                "Games stopped: plugin past its deadline, panic, poisoned library, storage failure",
            ),
            forwarded: counter(
                r,
                "forwarded",
                "Actions passed on to the node owning their game",
            ),
            followed_from_notices: counter(
                r,
                "followed_from_notices",
                "Actions of other nodes' games applied from the notice that announced them",
            ),
            followed_from_store: counter(
                r,
                "followed_from_store",
                "Actions of other nodes' games read from the store to apply them",
            ),
            notices_left: counter(
                r,
                "notices_left",
                "Announced actions of other nodes' games nobody watched here, left for a later catch-up",
            ),
            dormant_caught_up: counter(
                r,
                "dormant_caught_up",
                "Games nobody watched here caught up with their logs by the periodic sweep",
            ),
            legal_kept: counter(
                r,
                "legal_kept",
                "Legal-action requests answered from the lists kept at the game's last action, without a call into the game",
            ),
            takeovers: counter(
                r,
                "takeovers",
                "Games taken over from another node after its lease expired",
            ),
            fenced: counter(
                r,
                "fenced",
                "Appends refused because another node had taken the game's lease",
            ),
            leases_lost: counter(r, "leases_lost", "Games whose lease this node lost"),
            history_replayed: counter(
                r,
                "history_replayed_actions",
                "Actions replayed to answer history reads",
            ),
            saturated: counter(
                r,
                "saturated",
                "Requests refused because the server was saturated (history replays or ruleset threads busy)",
            ),
            quota_refused: counter(
                r,
                "quota_refused",
                "Requests refused by a client quota (reads per second, games or connections per client)",
            ),
            games_deleted: counter(
                r,
                "games_deleted",
                "Finished games deleted from the store by the retention policy",
            ),
            registry: Registry::default(),
        };
        Self {
            registry,
            ..metrics
        }
    }
}

/// A new counter, registered as `coffer_<name>_total`.
fn counter(registry: &mut Registry, name: &str, help: &str) -> Counter {
    let counter = Counter::default();
    registry.register(name, help, counter.clone());
    counter
}

/// A new gauge, registered as `coffer_<name>`.
fn gauge(registry: &mut Registry, name: &str, help: &str) -> Gauge {
    let gauge = Gauge::default();
    registry.register(name, help, gauge.clone());
    gauge
}

/// A new histogram with these bucket bounds, registered as `coffer_<name>`.
fn histogram<const N: usize>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    buckets: [f64; N],
) -> Histogram {
    let histogram = Histogram::new(buckets);
    registry.register(name, help, histogram.clone());
    histogram
}

impl Metrics {
    /// The metrics in Prometheus' text format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.registry);
        out
    }
}

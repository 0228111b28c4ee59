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
        let actions = Counter::default();
        let refusals = Counter::default();
        let bot_actions = Counter::default();
        let timeouts = Counter::default();
        let timeout_late_seconds =
            Histogram::new([0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0]);
        let rejected = Counter::default();
        let commit_seconds = Histogram::new([
            0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0,
        ]);
        let connected_clients = Gauge::default();
        let connections = Gauge::default();
        let connections_refused = Counter::default();
        let games = Gauge::default();
        let games_stopped = Counter::default();
        let forwarded = Counter::default();
        let followed_from_notices = Counter::default();
        let followed_from_store = Counter::default();
        let notices_left = Counter::default();
        let dormant_caught_up = Counter::default();
        let takeovers = Counter::default();
        let fenced = Counter::default();
        let leases_lost = Counter::default();
        let history_replayed = Counter::default();
        let saturated = Counter::default();
        let quota_refused = Counter::default();
        let games_deleted = Counter::default();
        registry.register(
            "games_deleted",
            "Finished games deleted from the store by the retention policy",
            games_deleted.clone(),
        );
        registry.register("actions", "Actions applied and committed", actions.clone());
        registry.register("refusals", "Actions the ruleset refused", refusals.clone());
        registry.register(
            "bot_actions",
            "Actions the server played for a seat (bots, timeouts)",
            bot_actions.clone(),
        );
        registry.register("timeouts", "Clocks that ran out", timeouts.clone());
        registry.register(
            "timeout_late_seconds",
            "How late after its deadline each timeout fired",
            timeout_late_seconds.clone(),
        );
        registry.register(
            "rejected",
            "Submissions refused before the ruleset saw them (stale, rate limited, stopped game)",
            rejected.clone(),
        );
        registry.register(
            "commit_seconds",
            "Seconds from handing an action to the store to its commit",
            commit_seconds.clone(),
        );
        registry.register(
            "connected_clients",
            "WebSocket clients connected now",
            connected_clients.clone(),
        );
        registry.register("connections", "Connections open now", connections.clone());
        registry.register(
            "connections_refused",
            "Connections closed at once because the connection limit was reached",
            connections_refused.clone(),
        );
        registry.register("games", "Games hosted now", games.clone());
        registry.register(
            "games_stopped",
            "Games stopped: plugin past its deadline, panic, poisoned library, storage failure",
            games_stopped.clone(),
        );
        registry.register(
            "forwarded",
            "Actions passed on to the node owning their game",
            forwarded.clone(),
        );
        registry.register(
            "followed_from_notices",
            "Actions of other nodes' games applied from the notice that announced them",
            followed_from_notices.clone(),
        );
        registry.register(
            "followed_from_store",
            "Actions of other nodes' games read from the store to apply them",
            followed_from_store.clone(),
        );
        registry.register(
            "notices_left",
            "Announced actions of other nodes' games nobody watched here, left for a later catch-up",
            notices_left.clone(),
        );
        registry.register(
            "dormant_caught_up",
            "Games nobody watched here caught up with their logs by the periodic sweep",
            dormant_caught_up.clone(),
        );
        registry.register(
            "takeovers",
            "Games taken over from another node after its lease expired",
            takeovers.clone(),
        );
        registry.register(
            "fenced",
            "Appends refused because another node had taken the game's lease",
            fenced.clone(),
        );
        registry.register(
            "leases_lost",
            "Games whose lease this node lost",
            leases_lost.clone(),
        );
        registry.register(
            "history_replayed_actions",
            "Actions replayed to answer history reads",
            history_replayed.clone(),
        );
        registry.register(
            "saturated",
            "Requests refused because the server was saturated (history replays or ruleset threads busy)",
            saturated.clone(),
        );
        registry.register(
            "quota_refused",
            "Requests refused by a client quota (reads per second, games or connections per client)",
            quota_refused.clone(),
        );
        Self {
            registry,
            actions,
            refusals,
            bot_actions,
            timeouts,
            timeout_late_seconds,
            rejected,
            commit_seconds,
            connected_clients,
            connections,
            connections_refused,
            games,
            games_stopped,
            forwarded,
            followed_from_notices,
            followed_from_store,
            notices_left,
            dormant_caught_up,
            takeovers,
            fenced,
            leases_lost,
            history_replayed,
            saturated,
            quota_refused,
            games_deleted,
        }
    }
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

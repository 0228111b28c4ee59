//! What the server bounds, and the defaults. `coffer serve --help` lists the options that set them.

use std::time::Duration;

/// Every bound the server keeps. Each has a command-line option (`coffer serve --help`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Limits {
    /// The largest request body, in bytes; a larger one is refused with 413.
    pub max_body_bytes: usize,
    /// The deepest nesting of arrays and objects in a JSON body or WebSocket message; deeper is refused
    /// with 400 before it is parsed.
    pub max_json_depth: usize,
    /// The largest WebSocket message (and frame) a client may send, in bytes; the socket is closed with
    /// code 1009 past it.
    pub max_ws_message_bytes: usize,
    /// Open connections at once (HTTP and WebSocket); past it new connections are closed at once.
    pub max_connections: usize,
    /// Games hosted at once; past it creating one is refused with 503.
    pub max_games: usize,
    /// Actions one seat's token may submit per second, sustained; past it 429 with `Retry-After`.
    pub actions_per_second: u32,
    /// Actions one seat's token may submit at once before the per-second rate applies.
    pub action_burst: u32,
    /// How long a new connection may take to send its request's headers before it is closed.
    pub header_timeout: Duration,
    /// How often the server pings an idle WebSocket; one that answers nothing for two periods is closed.
    pub ws_ping: Duration,
    /// How long a call into a ruleset may take before its game is stopped (quarantined).
    pub plugin_deadline: Duration,
    /// A snapshot of a game is stored every this many actions (and when it ends), so recovery replays
    /// at most this many.
    pub snapshot_every: u64,
    /// How long shutdown waits for requests in flight before it closes what is left.
    pub shutdown_grace: Duration,
    /// The most actions one history read answers (`GET /events`, one page of a WebSocket's `since`);
    /// a client pages on with `since`.
    pub history_page: u64,
    /// History replays running at once, on threads of their own; more wait for a free one.
    pub history_replays: usize,
    /// How long a history read waits for a free replay before it is refused `503 saturated`.
    pub history_wait: Duration,
    /// Reads one client address may make per second, sustained: history (`/events`, a WebSocket opened
    /// with `since`).
    pub reads_per_second: u32,
    /// Reads one client address may make at once before the per-second rate applies.
    pub read_burst: u32,
    /// Unfinished games one client address may have created and hosted at once.
    pub max_games_per_client: usize,
    /// Connections one client address may hold open at once (HTTP and WebSocket); `0`: a quarter of
    /// `max_connections`.
    pub max_connections_per_client: usize,
    /// WebSockets one seat's token may hold open at once.
    pub max_sockets_per_token: usize,
    /// The largest state a new game may hold, in bytes of its binary snapshot; a larger one is refused
    /// `413 too_large` before it is hosted or stored.
    pub max_game_bytes: usize,
    /// The server's memory budget, in bytes of resident memory: past it, creating a game is refused
    /// `503 full`. `u64::MAX`: none.
    pub max_memory_bytes: u64,
    /// How long a request's body may take to arrive, once its headers have.
    pub body_timeout: Duration,
    /// How long a finished game stays in memory (its last view readable) before it leaves; its log
    /// stays in the store.
    pub finished_linger: Duration,
    /// How long the store keeps a finished game (its record, seats, log and snapshots) after it
    /// finished, before the retention policy deletes it; `Duration::ZERO` keeps them forever.
    pub keep_finished: Duration,
}

impl Limits {
    /// The connections one client address may hold: [`max_connections_per_client`](Self::max_connections_per_client),
    /// or a quarter of [`max_connections`](Self::max_connections) when that is 0.
    pub fn connections_per_client(&self) -> usize {
        match self.max_connections_per_client {
            0 => (self.max_connections / 4).max(1),
            n => n,
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_body_bytes: 64 * 1024,
            max_json_depth: 32,
            max_ws_message_bytes: 64 * 1024,
            max_connections: 4096,
            max_games: 100_000,
            actions_per_second: 50,
            action_burst: 100,
            header_timeout: Duration::from_secs(10),
            ws_ping: Duration::from_secs(30),
            plugin_deadline: Duration::from_secs(30),
            snapshot_every: 64,
            shutdown_grace: Duration::from_secs(10),
            history_page: 500,
            history_replays: 4,
            history_wait: Duration::from_secs(2),
            reads_per_second: 50,
            read_burst: 200,
            max_games_per_client: 1_000,
            max_connections_per_client: 0,
            max_sockets_per_token: 16,
            max_game_bytes: 64 * 1024,
            max_memory_bytes: u64::MAX,
            body_timeout: Duration::from_secs(10),
            finished_linger: Duration::from_secs(600),
            keep_finished: Duration::from_secs(30 * 24 * 3600),
        }
    }
}

/// Whether the JSON text `bytes` nests arrays and objects deeper than `max`. Brackets inside strings do
/// not count. Runs before parsing, so a deeply nested body costs a scan, not a recursion.
pub fn too_deep(bytes: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::too_deep;

    #[test]
    fn depth_counts_brackets_outside_strings_only() {
        assert!(!too_deep(br#"{"a":[1,{"b":2}]}"#, 3));
        assert!(too_deep(br#"{"a":[1,{"b":2}]}"#, 2));
        assert!(!too_deep(br#"{"a":"[[[[[[\"[[["}"#, 1));
        assert!(too_deep(&[b'['; 100], 32));
    }
}

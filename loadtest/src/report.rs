//! The statistics of a run and its report: counters and latencies per driver, points, memory, rendering.

use super::*;

/// What one task counted.
#[derive(Default)]
pub(super) struct Stats {
    pub(super) latencies_us: Vec<u32>,
    pub(super) acks: u64,
    pub(super) stale: u64,
    pub(super) refused: u64,
    pub(super) errors: u64,
    pub(super) games_ended: u64,
    pub(super) legal_calls: u64,
    pub(super) first_errors: Vec<String>,
}

impl Stats {
    pub(super) fn ack(&mut self, shared: &Shared, latency: Duration) {
        if shared.measuring() {
            self.acks += 1;
            self.latencies_us
                .push(u32::try_from(latency.as_micros()).unwrap_or(u32::MAX));
            shared.acks.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub(super) fn error(&mut self, shared: &Shared, what: impl FnOnce() -> String) {
        if !shared.stopping() {
            self.errors += 1;
            if self.first_errors.len() < 3 {
                self.first_errors.push(what());
            }
        }
    }

    pub(super) fn merge(&mut self, other: Stats) {
        self.latencies_us.extend(other.latencies_us);
        self.acks += other.acks;
        self.stale += other.stale;
        self.refused += other.refused;
        self.errors += other.errors;
        self.games_ended += other.games_ended;
        self.legal_calls += other.legal_calls;
        for e in other.first_errors {
            if self.first_errors.len() < 5 {
                self.first_errors.push(e);
            }
        }
    }
}

/// The `p`th percentile (nearest rank) of sorted microseconds, in milliseconds; 0 when empty.
pub(super) fn percentile_ms(sorted_us: &[u32], p: f64) -> f64 {
    if sorted_us.is_empty() {
        return 0.0;
    }
    let rank = ((p / 100.0) * sorted_us.len() as f64).ceil() as usize;
    let index = rank.clamp(1, sorted_us.len()) - 1;
    f64::from(sorted_us[index]) / 1000.0
}

// ----- the clients -----

/// One point: a number of games and a transport.
#[derive(Debug, Serialize)]
pub struct Point {
    pub(super) games: usize,
    pub(super) transport: Transport,
    pub(super) seconds: f64,
    pub(super) acks: u64,
    pub(super) acks_per_second: f64,
    pub(super) p50_ms: f64,
    pub(super) p99_ms: f64,
    pub(super) max_ms: f64,
    pub(super) stale: u64,
    pub(super) refused: u64,
    pub(super) errors: u64,
    pub(super) games_ended: u64,
    pub(super) legal_calls: u64,
    /// CPU time of the server per acknowledged action, in microseconds (only a server started here).
    pub(super) server_cpu_us_per_ack: Option<f64>,
    /// CPU time of the load generator per acknowledged action, in microseconds.
    pub(super) client_cpu_us_per_ack: Option<f64>,
    /// Cores the server kept busy on average while measured.
    pub(super) server_cores: Option<f64>,
    /// Cores the load generator kept busy on average while measured.
    pub(super) client_cores: Option<f64>,
    /// The spectators watching the point's games (`--spectators`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) spectators: Option<Spectators>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(super) first_errors: Vec<String>,
}

/// What the spectators of a point saw: the server's memory per watching socket, and how long an action
/// took from its submission to a spectator's screen.
#[derive(Debug, Serialize)]
pub struct Spectators {
    pub(super) sockets: usize,
    /// How many connected before the warm-up (within two minutes).
    pub(super) connected: usize,
    pub(super) rss_before: Option<u64>,
    pub(super) rss_after: Option<u64>,
    /// The server's resident set size grown by the spectators' sockets, per socket (a server started
    /// here only).
    pub(super) bytes_per_socket: Option<f64>,
    /// Action messages the spectators read while measured.
    pub(super) pushes: u64,
    /// Of those, the ones timed (the game's latest submission when read).
    pub(super) timed: u64,
    pub(super) p50_ms: f64,
    pub(super) p99_ms: f64,
    pub(super) max_ms: f64,
    pub(super) errors: u64,
}

/// The memory figure.
#[derive(Debug, Serialize)]
pub struct Memory {
    pub(super) games: usize,
    pub(super) rss_before: u64,
    pub(super) rss_after: u64,
    pub(super) bytes_per_game: f64,
    pub(super) setup_seconds: f64,
}

/// The clocks figure: timeouts of the idle games with a clock, and how late they fired (the upper
/// bounds of the server's histogram buckets).
#[derive(Debug, Serialize)]
pub struct Clocks {
    pub(super) games: usize,
    pub(super) clock_ms: u64,
    pub(super) seconds: f64,
    pub(super) timeouts: u64,
    pub(super) per_second: f64,
    pub(super) late_p50_ms_at_most: f64,
    pub(super) late_p99_ms_at_most: f64,
    pub(super) late_all_ms_at_most: f64,
}

/// Everything measured.
#[derive(Debug, Serialize)]
pub struct Report {
    pub(super) ruleset: String,
    pub(super) players: u16,
    pub(super) seconds: f64,
    pub(super) warmup: f64,
    pub(super) server: String,
    pub(super) cores: usize,
    pub(super) load_before: Option<[f64; 3]>,
    pub(super) load_after: Option<[f64; 3]>,
    pub(super) points: Vec<Point>,
    pub(super) memory: Option<Memory>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) clocks: Option<Clocks>,
}

impl Report {
    pub(super) fn text(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "coffer loadtest: {} games of {} players, {} s measured per point after {} s of warm-up; server {}",
            self.ruleset, self.players, self.seconds, self.warmup, self.server
        );
        let _ = writeln!(
            out,
            "{:>6} {:<9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7} {:>8} {:>7} {:>7} {:>14} {:>14}",
            "games",
            "transport",
            "acks/s",
            "p50 ms",
            "p99 ms",
            "max ms",
            "acks",
            "stale",
            "refused",
            "errors",
            "ended",
            "server us/ack",
            "client us/ack"
        );
        let cpu = |us: Option<f64>, cores: Option<f64>| match (us, cores) {
            (Some(us), Some(cores)) => format!("{us:.0} ({cores:.2}c)"),
            _ => "-".to_owned(),
        };
        for p in &self.points {
            let _ = writeln!(
                out,
                "{:>6} {:<9} {:>10.0} {:>9.2} {:>9.2} {:>9.2} {:>9} {:>7} {:>8} {:>7} {:>7} {:>14} {:>14}",
                p.games,
                p.transport.name(),
                p.acks_per_second,
                p.p50_ms,
                p.p99_ms,
                p.max_ms,
                p.acks,
                p.stale,
                p.refused,
                p.errors,
                p.games_ended,
                cpu(p.server_cpu_us_per_ack, p.server_cores),
                cpu(p.client_cpu_us_per_ack, p.client_cores)
            );
        }
        for p in &self.points {
            let Some(w) = &p.spectators else { continue };
            let memory = match (w.rss_before, w.rss_after, w.bytes_per_socket) {
                (Some(before), Some(after), Some(per)) => {
                    format!("server RSS {before} -> {after} bytes, {per:.0} bytes per socket")
                }
                _ => "memory not measured".to_owned(),
            };
            let _ = writeln!(
                out,
                "spectators at {} games {}: {} of {} connected, {memory}; {} actions pushed to them while \
                 measured ({} timed): submission to spectator p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms; \
                 {} errors",
                p.games,
                p.transport.name(),
                w.connected,
                w.sockets,
                w.pushes,
                w.timed,
                w.p50_ms,
                w.p99_ms,
                w.max_ms,
                w.errors
            );
        }
        let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
        for e in self.points.iter().flat_map(|p| &p.first_errors) {
            *errors.entry(e.as_str()).or_default() += 1;
        }
        for (e, n) in errors {
            let _ = writeln!(out, "  error (x{n}): {e}");
        }
        match &self.memory {
            Some(m) => {
                let _ = writeln!(
                    out,
                    "memory: {} idle games (two actions played in each): server RSS {} -> {} bytes, {:.0} bytes per game",
                    m.games, m.rss_before, m.rss_after, m.bytes_per_game
                );
            }
            None => {
                let _ = writeln!(out, "memory: not measured");
            }
        }
        if let Some(c) = &self.clocks {
            let _ = writeln!(
                out,
                "clocks: {} games with {} ms a decision, nobody playing: {} timeouts in {} s ({:.0}/s), \
                 each fired at most {} ms late at p50, {} ms at p99, {} ms for all",
                c.games,
                c.clock_ms,
                c.timeouts,
                c.seconds,
                c.per_second,
                c.late_p50_ms_at_most,
                c.late_p99_ms_at_most,
                c.late_all_ms_at_most
            );
        }
        let load = |l: &Option<[f64; 3]>| {
            l.map_or("unknown".to_owned(), |[a, b, c]| {
                format!("{a:.2} {b:.2} {c:.2}")
            })
        };
        let _ = writeln!(
            out,
            "machine: {} cores shared by the server and the load generator; load average {} before, {} after",
            self.cores,
            load(&self.load_before),
            load(&self.load_after)
        );
        out
    }
}

//! Spectators: WebSockets without a token, watching the games the point's drivers play. They give the
//! server's memory per watching socket and how soon an action reaches its watchers.
//!
//! A spectator watches one of the newest games; when that game ends (or its socket closes) it watches
//! another. Its push latency runs from the moment the acting seat sent the action (the drivers note the
//! sequence number each submission would take and when they sent it) to the moment the spectator read
//! that action's message: the commit and the fan-out, as a watcher sees them.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use super::*;

/// Submissions kept per game for timing its pushes: a spectator that reads an action later than this
/// many submissions after it is not timed (and counted as pushed only).
const KEPT: usize = 64;

/// What the drivers tell the spectators: the games being played and each game's latest submission.
#[derive(Default)]
pub(super) struct Watched {
    /// Every game the drivers created during the point, with the node it was created on, oldest first.
    games: Mutex<Vec<(u64, usize)>>,
    /// Each game's latest [`KEPT`] submissions: the sequence number each would take, and when it was
    /// sent.
    sent: Mutex<HashMap<u64, VecDeque<(u64, Instant)>>>,
    /// Spectators that have opened their first socket.
    pub(super) connected: AtomicUsize,
}

impl Watched {
    /// A driver created `game` on node `node`.
    pub(super) fn created(&self, game: &Game) {
        lock(&self.games).push((game.id, game.node));
    }

    /// A driver sends the submission that would become action `seq` of `game`.
    pub(super) fn sending(&self, game: u64, seq: u64, at: Instant) {
        let mut sent = lock(&self.sent);
        let kept = sent.entry(game).or_default();
        if kept.len() == KEPT {
            kept.pop_front();
        }
        kept.push_back((seq, at));
    }

    /// When the latest submission that would become action `seq` of `game` was sent, if it is among the
    /// game's latest [`KEPT`].
    fn sent_at(&self, game: u64, seq: u64) -> Option<Instant> {
        lock(&self.sent)
            .get(&game)?
            .iter()
            .rev()
            .find(|(sent, _)| *sent == seq)
            .map(|&(_, at)| at)
    }

    /// The game spectator `i` should watch: one of the `newest` newest games.
    fn pick(&self, i: usize, newest: usize) -> Option<(u64, usize)> {
        let games = lock(&self.games);
        let among = games.len().min(newest.max(1));
        (among > 0).then(|| games[games.len() - 1 - i % among])
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What one spectator measured.
#[derive(Default)]
pub(super) struct Watching {
    /// Push latencies in microseconds, measured only while the point is measured.
    pub(super) latencies_us: Vec<u32>,
    /// Action messages read while measured.
    pub(super) pushes: u64,
    pub(super) stats: Stats,
}

/// Spectator `i` of a point of `games` games: watches one game after another until the point stops.
pub(super) async fn spectator(
    ctx: Arc<Ctx>,
    shared: Arc<Shared>,
    i: usize,
    games: usize,
) -> Watching {
    let mut watching = Watching::default();
    let Some(watched) = &shared.watched else {
        return watching;
    };
    let mut stop = shared.stop.clone();
    let mut counted = false;
    while !shared.stopping() {
        let Some((game, node)) = watched.pick(i, games) else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let url = format!(
            "{}/api/games/{game}/ws",
            ctx.ws_bases[node % ctx.ws_bases.len()]
        );
        let mut socket = match connect(url).await {
            Ok(socket) => socket,
            Err(e) => {
                watching
                    .stats
                    .error(&shared, || format!("spectator's WebSocket connect: {e}"));
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        if !counted {
            counted = true;
            watched.connected.fetch_add(1, Ordering::Relaxed);
        }
        loop {
            let message = tokio::select! {
                message = next_message(&mut socket) => message,
                _ = stop.changed() => break,
            };
            let message = match message {
                Ok(Some(message)) => message,
                Ok(None) => break,
                Err(e) => {
                    watching.stats.error(&shared, || format!("spectator: {e}"));
                    break;
                }
            };
            match message.kind.as_str() {
                "action" => {
                    let read = Instant::now();
                    if shared.measuring()
                        && let Some(seq) = message.seq
                    {
                        watching.pushes += 1;
                        if let Some(sent) = watched.sent_at(game, seq) {
                            let us = read.saturating_duration_since(sent).as_micros();
                            watching
                                .latencies_us
                                .push(u32::try_from(us).unwrap_or(u32::MAX));
                        }
                    }
                }
                "stopped" | "lagged" => {
                    watching.stats.error(&shared, || {
                        format!(
                            "spectator: {}: {}",
                            message.kind,
                            message.message.unwrap_or_default()
                        )
                    });
                    break;
                }
                _ => {}
            }
            if message.view.as_ref().is_some_and(|v| v.table.over()) {
                break;
            }
        }
        let _ = socket.close(None).await;
    }
    watching
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(id: u64, node: usize) -> Game {
        Game {
            id,
            tokens: Vec::new(),
            node,
        }
    }

    #[test]
    fn spectators_spread_over_the_newest_games_only() {
        let watched = Watched::default();
        assert_eq!(watched.pick(0, 2), None, "no game yet");
        for id in 1..=5 {
            watched.created(&game(id, id as usize % 3));
        }
        let picked: Vec<_> = (0..4).map(|i| watched.pick(i, 2).unwrap().0).collect();
        assert_eq!(picked, [5, 4, 5, 4]);
        assert_eq!(watched.pick(1, 10), Some((4, 1)), "with its node");
    }

    #[test]
    fn a_push_is_timed_from_the_latest_submission_of_its_action_among_the_games_kept() {
        let watched = Watched::default();
        let start = Instant::now();
        let at = |ms| start + Duration::from_millis(ms);
        watched.sending(7, 3, at(0));
        // Refused as stale and sent again: the push is timed from the submission that made it.
        watched.sending(7, 3, at(5));
        assert_eq!(watched.sent_at(7, 3), Some(at(5)));
        assert_eq!(watched.sent_at(7, 2), None, "never sent");
        assert_eq!(watched.sent_at(8, 3), None, "another game");
        for seq in 4..4 + KEPT as u64 {
            watched.sending(7, seq, at(seq));
        }
        assert_eq!(watched.sent_at(7, 3), None, "older than the kept ones");
        assert_eq!(watched.sent_at(7, 4), Some(at(4)));
    }
}

//! This node's part in a cluster: the tasks that renew its leases, take over expired ones and follow what
//! the other nodes commit, each handing what it learns to the node's [`Games`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::games::Games;

/// The tasks of a node: renewing its leases, taking over expired ones, following the channel.
pub struct Running {
    tasks: Vec<tokio::task::JoinHandle<()>>,
    cluster: Arc<Cluster>,
}

impl Running {
    /// Stops renewing and claiming, then lets this node's leases expire at once so the other nodes
    /// take its games over without waiting (after its last commit: a graceful shutdown).
    pub async fn release(self) {
        for task in &self.tasks {
            task.abort();
        }
        let cluster = self.cluster;
        match tokio::task::spawn_blocking(move || cluster.release_all()).await {
            Ok(Ok(released)) => tracing::info!(released, "leases released to the other nodes"),
            Ok(Err(error)) => {
                tracing::warn!("leases not released, they expire in their time: {error}")
            }
            Err(_) => {}
        }
    }
}

/// Starts this node's part in the cluster for `games` (made [`with_cluster`](Games::with_cluster)):
/// renews its leases every third of a lease (and, when no renewal has worked for a whole lease, takes
/// itself for owner of nothing), takes over expired leases every quarter of a lease, follows what
/// the other nodes commit, and catches up the games nobody watches here every
/// [`DORMANT_CATCH_UP_EVERY`](crate::games::DORMANT_CATCH_UP_EVERY).
///
/// # Errors
/// When the listening thread cannot be started.
pub fn start(games: &Arc<Games>) -> std::io::Result<Running> {
    let cluster = Arc::clone(
        games
            .cluster()
            .ok_or_else(|| std::io::Error::other("these games are not one node's of a cluster"))?,
    );
    let lease = cluster.node().lease;
    let (notices, mut heard) = tokio::sync::mpsc::unbounded_channel();
    cluster.listen(move |notice| {
        let _ = notices.send(notice);
    })?;
    let mut tasks = Vec::new();
    tasks.push(tokio::spawn({
        let games = Arc::clone(games);
        async move {
            while let Some(notice) = heard.recv().await {
                games.on_notice(notice);
            }
        }
    }));
    tasks.push(tokio::spawn({
        let games = Arc::clone(games);
        let cluster = Arc::clone(&cluster);
        async move {
            let mut every = ticker(lease / 3);
            let mut renewed = Instant::now();
            loop {
                every.tick().await;
                let asked = Instant::now();
                let cluster = Arc::clone(&cluster);
                match tokio::task::spawn_blocking(move || cluster.renew()).await {
                    Ok(Ok(held)) => {
                        renewed = asked;
                        games.renewed(&held);
                    }
                    Ok(Err(error)) => {
                        tracing::warn!("leases not renewed: {error}");
                        if renewed.elapsed() >= lease {
                            games.lost_all();
                        }
                    }
                    Err(_) => {}
                }
            }
        }
    }));
    tasks.push(tokio::spawn({
        let games = Arc::clone(games);
        let cluster = Arc::clone(&cluster);
        async move {
            let mut every = ticker(lease / 4);
            loop {
                every.tick().await;
                let claiming = Arc::clone(&cluster);
                match tokio::task::spawn_blocking(move || claiming.claim_expired(64)).await {
                    Ok(Ok(taken)) if !taken.is_empty() => games.took(taken).await,
                    Ok(Ok(_)) | Err(_) => {}
                    Ok(Err(error)) => tracing::warn!("expired leases not claimed: {error}"),
                }
            }
        }
    }));
    tasks.push(tokio::spawn({
        let games = Arc::clone(games);
        async move {
            let mut every = ticker(crate::games::DORMANT_CATCH_UP_EVERY);
            loop {
                every.tick().await;
                games.catch_up_dormant().await;
            }
        }
    }));
    Ok(Running { tasks, cluster })
}

/// Ticks every `period` (at least 20 ms); a tick missed while the node was busy or paused is not made up
/// in a burst.
fn ticker(period: Duration) -> tokio::time::Interval {
    let mut every = tokio::time::interval(period.max(Duration::from_millis(20)));
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    every
}

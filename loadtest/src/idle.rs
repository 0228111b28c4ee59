//! The idle games' figures: the server's memory per idle game, and how late the timeouts of idle games
//! with clocks fire.

use super::*;

/// The clocks figure: timeouts fired in `seconds` by the idle games (each with `clock_ms` a decision),
/// and how late, from the server's `coffer_timeouts_total` and `coffer_timeout_late_seconds`.
pub(super) async fn measure_clocks(
    ctx: &Ctx,
    base: &str,
    games: usize,
    clock_ms: u64,
    seconds: f64,
) -> Result<Clocks, String> {
    let before = timeout_metrics(ctx, base).await?;
    eprintln!("  clocks: {games} games with {clock_ms} ms a decision, {seconds} s of timeouts");
    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    let after = timeout_metrics(ctx, base).await?;
    let fired = after.count.saturating_sub(before.count);
    let buckets: Vec<(f64, u64)> = after
        .buckets
        .iter()
        .zip(&before.buckets)
        .map(|(&(le, a), &(_, b))| (le, a.saturating_sub(b)))
        .collect();
    // The upper bound of the bucket holding quantile q.
    let quantile = |q: f64| {
        let want = (q * fired as f64).ceil() as u64;
        buckets
            .iter()
            .find(|(_, n)| *n >= want.max(1))
            .map_or(f64::INFINITY, |(le, _)| le * 1e3)
    };
    let figure = Clocks {
        games,
        clock_ms,
        seconds,
        timeouts: fired,
        per_second: fired as f64 / seconds,
        late_p50_ms_at_most: quantile(0.5),
        late_p99_ms_at_most: quantile(0.99),
        late_all_ms_at_most: quantile(1.0),
    };
    eprintln!(
        "  clocks: {} timeouts ({:.0}/s), late by at most {} ms at p50, {} ms at p99, {} ms for all",
        figure.timeouts,
        figure.per_second,
        figure.late_p50_ms_at_most,
        figure.late_p99_ms_at_most,
        figure.late_all_ms_at_most
    );
    Ok(figure)
}

/// The server's timeout counter and the cumulative buckets of its lateness histogram (`le`, count).
struct TimeoutMetrics {
    count: u64,
    buckets: Vec<(f64, u64)>,
}

async fn timeout_metrics(ctx: &Ctx, base: &str) -> Result<TimeoutMetrics, String> {
    let text = ctx
        .http
        .get(format!("{base}/metrics"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| format!("GET /metrics: {e}"))?
        .text()
        .await
        .map_err(|e| format!("GET /metrics: {e}"))?;
    let mut count = 0;
    let mut buckets = Vec::new();
    for line in text.lines() {
        if let Some(n) = line.strip_prefix("coffer_timeout_late_seconds_count ") {
            count = n.trim().parse().unwrap_or(0);
        } else if let Some(rest) = line.strip_prefix("coffer_timeout_late_seconds_bucket{le=\"")
            && let Some((le, n)) = rest.split_once("\"} ")
        {
            // `+Inf` parses as infinity.
            let le: f64 = le.parse().unwrap_or(f64::INFINITY);
            buckets.push((le, n.trim().parse().unwrap_or(0)));
        }
    }
    if buckets.is_empty() {
        return Err("the server's /metrics has no coffer_timeout_late_seconds".into());
    }
    Ok(TimeoutMetrics { count, buckets })
}

/// The memory figure: RSS before and after `n` games are created and played two actions each.
pub(super) async fn measure_memory(ctx: &Arc<Ctx>, pid: u32, n: usize) -> Result<Memory, String> {
    let progress = progress_bar(n as u64, "idle games");
    // Warm the server: code paths, the store's caches, the allocator's first arenas.
    create_and_play(ctx, 64, 2, None).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = rss_bytes(pid).ok_or("cannot read the server's VmRSS")?;
    let started = Instant::now();
    create_and_play(ctx, n, 2, Some(&progress)).await?;
    let seconds = started.elapsed().as_secs_f64();
    progress.finish_and_clear();
    // Let the allocator settle: the RSS read after a second of quiet, twice, the later one kept.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = rss_bytes(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let after = rss_bytes(pid).ok_or("cannot read the server's VmRSS")?;
    let memory = Memory {
        games: n,
        rss_before: before,
        rss_after: after,
        bytes_per_game: after.saturating_sub(before) as f64 / n as f64,
        setup_seconds: seconds,
    };
    eprintln!(
        "  memory: {n} idle games, RSS {} -> {} bytes: {:.0} bytes per game",
        before, after, memory.bytes_per_game
    );
    Ok(memory)
}

//! Terminal rendering of resources, events and outcomes (what `coffer show` and `coffer play` print).
//!
//! ```
//! use coffer_host::render;
//! assert_eq!(render::bar(5, 0, 10), "[#####.....] 5/10");
//! assert_eq!(render::charges(2, 3), "●●○ 2/3");
//! ```

use coffer_core::{Change, Event, Outcome, Owner, ResourceView, Scope};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The widest bar drawn; larger ranges are scaled down to it.
pub const BAR_WIDTH: i64 = 20;

/// A bar for an amount between `floor` and `cap`: `[#####.....] 5/10`. Ranges wider than [`BAR_WIDTH`]
/// are scaled; the numbers are always exact.
pub fn bar(value: i64, floor: i64, cap: i64) -> String {
    let span = i128::from(cap) - i128::from(floor);
    let (width, filled) = if span <= 0 {
        (0, 0)
    } else {
        let width = span.min(i128::from(BAR_WIDTH));
        let above = (i128::from(value) - i128::from(floor)).clamp(0, span);
        // Round to nearest so a nearly full bar does not look empty and vice versa.
        (width, (above * width + span / 2) / span)
    };
    let (width, filled) = (width as usize, filled as usize);
    format!(
        "[{}{}] {value}/{cap}",
        "#".repeat(filled),
        ".".repeat(width - filled)
    )
}

/// Filled and empty marks for a charge track: `●●○ 2/3` (active charges filled). Tracks with more than 40
/// charges are written as counts only.
pub fn charges(active: u32, limit: u32) -> String {
    if limit > 40 {
        return format!("{active}/{limit} active");
    }
    let active_marks = active.min(limit) as usize;
    format!(
        "{}{} {active}/{limit}",
        "●".repeat(active_marks),
        "○".repeat(limit as usize - active_marks)
    )
}

fn owner_heading(owner: Owner) -> String {
    if owner.is_player() {
        format!("Player {}", owner.0)
    } else {
        "Game (shared)".to_owned()
    }
}

fn scope_note(lifetime: Scope) -> &'static str {
    match lifetime {
        Scope::Game => "",
        Scope::Act => " (until the act or round ends)",
        Scope::Turn => " (until the turn ends)",
        Scope::Phase => " (until the phase ends)",
        Scope::Step => " (until the step ends)",
    }
}

fn tokens(counts: &[u32]) -> String {
    let held: Vec<String> = counts
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(o, n)| format!("p{o}: {n}"))
        .collect();
    let total: u64 = counts.iter().map(|n| u64::from(*n)).sum();
    if held.is_empty() {
        "empty".to_owned()
    } else {
        let plural = if total == 1 { "" } else { "s" };
        format!("{total} token{plural} ({})", held.join(", "))
    }
}

/// Every resource, grouped by owner (players in order, then shared ones), one line each, labels aligned.
pub fn resources(views: &[ResourceView]) -> String {
    let mut groups: BTreeMap<Owner, Vec<(String, String)>> = BTreeMap::new();
    for view in views {
        let (owner, label, drawn) = match view {
            ResourceView::Amount {
                label,
                owner,
                value,
                floor,
                cap,
                lifetime,
            } => {
                let drawn = match cap {
                    Some(cap) => bar(*value, *floor, *cap),
                    None => value.to_string(),
                };
                (*owner, label, format!("{drawn}{}", scope_note(*lifetime)))
            }
            ResourceView::Charges {
                label,
                owner,
                active,
                limit,
                unrecoverable,
            } => {
                let note = if *unrecoverable {
                    " (cannot be recovered)"
                } else {
                    ""
                };
                (*owner, label, format!("{}{note}", charges(*active, *limit)))
            }
            ResourceView::Tokens {
                label,
                owner,
                face,
                counts,
            } => {
                let face = if *face == 0 {
                    String::new()
                } else {
                    format!(" face {face}")
                };
                (*owner, label, format!("{}{face}", tokens(counts)))
            }
            ResourceView::Permanent {
                label,
                owner,
                exhausted,
            } => (
                *owner,
                label,
                if *exhausted {
                    "○ exhausted"
                } else {
                    "● ready"
                }
                .to_owned(),
            ),
            // ResourceView may grow; show what we can rather than fail.
            #[allow(unreachable_patterns)]
            other => (Owner::GAME, &String::new(), format!("{other:?}")),
        };
        groups
            .entry(owner)
            .or_default()
            .push((label.clone(), drawn));
    }
    let mut out = String::new();
    for (owner, lines) in &groups {
        let _ = writeln!(out, "{}", owner_heading(*owner));
        let width = lines
            .iter()
            .map(|(l, _)| l.chars().count())
            .max()
            .unwrap_or(0);
        for (label, drawn) in lines {
            let pad = width - label.chars().count();
            let _ = writeln!(out, "  {label}{}  {drawn}", " ".repeat(pad));
        }
    }
    if out.is_empty() {
        out.push_str("(no resources)\n");
    }
    out
}

/// The outcome in one line: `ongoing`, or the winners and scores.
pub fn outcome(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ongoing => "ongoing".to_owned(),
        Outcome::Finished { winners, scores } => {
            let winners = match winners.as_slice() {
                [] => "a draw (no winner)".to_owned(),
                [one] => format!("{one} wins"),
                many => format!(
                    "{} win",
                    many.iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            if scores.is_empty() {
                format!("finished: {winners}")
            } else {
                let scores: Vec<String> = scores
                    .iter()
                    .enumerate()
                    .map(|(p, s)| format!("p{p} {s}"))
                    .collect();
                format!("finished: {winners}; scores: {}", scores.join(", "))
            }
        }
    }
}

/// One line per event, indented by `indent` spaces; `(no change)` when there is none.
pub fn events(events: &[Event], indent: usize) -> String {
    events_labelled(events, &Labels::default(), indent)
}

/// The display names of a game's resources, to name them in events.
///
/// Built from [`DynGame::resources`](coffer_core::DynGame::resources), which lists amounts, charge tracks,
/// token zones and permanents, each in ledger order, so that a handle's index finds its label. A handle
/// with no label is shown as the kernel writes it.
#[derive(Clone, Debug, Default)]
pub struct Labels {
    amounts: Vec<String>,
    tracks: Vec<String>,
    zones: Vec<String>,
    permanents: Vec<String>,
}

impl Labels {
    /// The labels of these resources.
    pub fn new(views: &[ResourceView]) -> Labels {
        let mut labels = Labels::default();
        for view in views {
            match view {
                ResourceView::Amount { label, .. } => labels.amounts.push(label.clone()),
                ResourceView::Charges { label, .. } => labels.tracks.push(label.clone()),
                ResourceView::Tokens { label, .. } => labels.zones.push(label.clone()),
                ResourceView::Permanent { label, .. } => labels.permanents.push(label.clone()),
                #[allow(unreachable_patterns)]
                _ => {}
            }
        }
        labels
    }
}

/// The label of the resource an event changed, prefixed with its owner unless the label names it.
fn event_label(e: &Event, labels: &Labels) -> Option<String> {
    let label = match e.change {
        Change::Gain { amount, .. }
        | Change::Spend { amount, .. }
        | Change::Pay { amount, .. }
        | Change::Set { amount, .. }
        | Change::Expire { amount, .. }
        | Change::Cap { amount, .. }
        | Change::Floor { amount, .. } => labels.amounts.get(amount.index()),
        Change::Charges { track, .. } => labels.tracks.get(track.index()),
        Change::Capacity { source, .. } => labels.tracks.get(source.track.index()),
        Change::Tokens { to, .. } => labels.zones.get(to.index()),
        Change::Exhaust { permanent, .. } => labels.permanents.get(permanent.index()),
        _ => None,
    }?;
    let owner = e.key.owner.to_string();
    if label.starts_with(&format!("{owner} ")) || !e.key.owner.is_player() {
        Some(label.clone())
    } else {
        Some(format!("{owner} {label}"))
    }
}

/// One event, naming its resource by label where `labels` has it.
pub fn event(e: &Event, labels: &Labels) -> String {
    if let Change::Tokens {
        owner,
        op,
        from,
        to,
        n,
    } = e.change
    {
        if let (Some(from), Some(to)) =
            (labels.zones.get(from.index()), labels.zones.get(to.index()))
        {
            let verb = format!("{op:?}").to_lowercase();
            return format!("{n} token(s) of {owner}: {verb} {from} -> {to}");
        }
    }
    let text = e.to_string();
    match (event_label(e, labels), text.split_once(": ")) {
        (Some(label), Some((_, rest))) => format!("{label}: {rest}"),
        _ => text,
    }
}

/// One line per event, naming resources by label, indented by `indent` spaces; `(no change)` when there
/// is none.
pub fn events_labelled(events: &[Event], labels: &Labels, indent: usize) -> String {
    let pad = " ".repeat(indent);
    if events.is_empty() {
        return format!("{pad}(no change)\n");
    }
    events
        .iter()
        .map(|e| format!("{pad}{}\n", event(e, labels)))
        .collect()
}

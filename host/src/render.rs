//! Terminal rendering in the game's words: tables, resources, events and outcomes (what `coffer show`,
//! `coffer log`, `coffer act` and `coffer play` print).
//!
//! Everything is named through [`Names`]: the ruleset's vocabulary and the game's resource labels. No
//! function here writes a `Debug` rendering.
//!
//! ```
//! use coffer_host::render;
//! assert_eq!(render::bar(5, 0, 10), "[#####.....] 5/10");
//! assert_eq!(render::bar(-1, -3, 3), "[##....] -1 (-3 to 3)");
//! assert_eq!(render::charges(2, 3), "●●○ 2/3");
//! ```

use coffer_core::{Cause, Event, Names, Outcome, Owner, ResourceView, Scope, Seat, Table};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The widest bar drawn; larger ranges are scaled down to it.
pub const BAR_WIDTH: i64 = 20;

/// The longest an echoed action (or any user-given text) is shown; longer ones are cut with `…`.
pub const ECHO_LIMIT: usize = 80;

/// A bar for an amount between `floor` and `cap`: `[#####.....] 5/10`, or for a range that does not start
/// at 0 (a signed track) `[##....] -1 (-3 to 3)`. Ranges wider than [`BAR_WIDTH`] are scaled; the numbers
/// are always exact.
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
    let numbers = if floor == 0 {
        format!("{value}/{cap}")
    } else {
        format!("{value} ({floor} to {cap})")
    };
    format!(
        "[{}{}] {numbers}",
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

/// `text` cut to `limit` characters, with `…` where it was cut: for echoing what a user typed.
pub fn cut(text: &str, limit: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(limit) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

/// How many characters of a person's input [`echo`] repeats.
pub const ECHO_PREFIX: usize = 120;

/// Input repeated in a message: whole when short, else its first [`ECHO_PREFIX`] characters then
/// `… (N bytes)`, so a huge line never floods the terminal.
pub fn echo(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(ECHO_PREFIX) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}… ({} bytes)", &text[..end], text.len()),
    }
}

fn owner_heading(names: &Names<'_>, owner: Owner) -> String {
    if owner.is_player() {
        names.owner(owner)
    } else {
        "The game".to_owned()
    }
}

fn scope_note(names: &Names<'_>, lifetime: Scope) -> String {
    match lifetime {
        Scope::Game => String::new(),
        other => format!(" (empties at the end of the {})", names.scope(other)),
    }
}

fn tokens(names: &Names<'_>, counts: &[u32], game: u32) -> String {
    let owners = counts
        .iter()
        .enumerate()
        .map(|(o, &n)| (Owner(o as u16), n))
        .chain([(Owner::GAME, game)]);
    let held: Vec<String> = owners
        .clone()
        .filter(|&(_, n)| n > 0)
        .map(|(o, n)| format!("{} {n}", names.owner(o)))
        .collect();
    let total: u64 = owners.map(|(_, n)| u64::from(n)).sum();
    if held.is_empty() {
        "empty".to_owned()
    } else {
        let plural = coffer_core::plural(total, "token", "tokens");
        format!("{total} {plural} ({})", held.join(", "))
    }
}

/// One resource's state, drawn: a bar, charge marks, token counts or readiness.
pub fn drawn(names: &Names<'_>, view: &ResourceView) -> String {
    match view {
        ResourceView::Amount {
            value,
            floor,
            cap,
            lifetime,
            ..
        } => {
            let drawn = match cap {
                Some(cap) => bar(*value, *floor, *cap),
                None => value.to_string(),
            };
            format!("{drawn}{}", scope_note(names, *lifetime))
        }
        ResourceView::Charges {
            active,
            limit,
            unrecoverable,
            ..
        } => {
            let note = if *unrecoverable {
                " (cannot be recovered)"
            } else {
                ""
            };
            format!("{}{note}", charges(*active, *limit))
        }
        ResourceView::Tokens {
            face, counts, game, ..
        } => {
            let face = if *face == 0 {
                String::new()
            } else {
                format!(", face {face} up")
            };
            format!("{}{face}", tokens(names, counts, *game))
        }
        ResourceView::Permanent { key, exhausted, .. } => {
            // The ruleset's words for the state ("has had its turn"), without the "is" of the default
            // "is exhausted" / "is ready".
            let words = names.readiness(key.kind, *exhausted);
            let words = words.strip_prefix("is ").unwrap_or(words);
            format!("{} {words}", if *exhausted { '○' } else { '●' })
        }
    }
}

/// Lines `  label  value`, labels padded to the widest.
fn aligned(out: &mut String, indent: &str, lines: &[(String, String)]) {
    let width = lines
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0);
    for (label, value) in lines {
        let pad = width - label.chars().count();
        let _ = writeln!(out, "{indent}{label}{}  {value}", " ".repeat(pad));
    }
}

/// Every resource, grouped by owner (players in order, then the game's), one line each, labels aligned.
pub fn resources(names: &Names<'_>, views: &[ResourceView]) -> String {
    let mut groups: BTreeMap<Owner, Vec<(String, String)>> = BTreeMap::new();
    for view in views {
        groups
            .entry(view.owner())
            .or_default()
            .push((view.label().to_owned(), drawn(names, view)));
    }
    let mut out = String::new();
    for (owner, lines) in &groups {
        let _ = writeln!(out, "{}", owner_heading(names, *owner));
        aligned(&mut out, "  ", lines);
    }
    if out.is_empty() {
        out.push_str("(no resources to show)\n");
    }
    out
}

fn seats(names: &Names<'_>, seats: &[Owner]) -> String {
    seats
        .iter()
        .map(|s| names.owner(*s))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The table: the clock, whose turn, who may act and why, who passed, pending choices, the ruleset's
/// sections, and the outcome.
pub fn table(names: &Names<'_>, table: &Table) -> String {
    let mut out = String::new();
    let mut clock = Vec::new();
    if table.round > 0 {
        clock.push(format!("{} {}", table.round_name, table.round));
    }
    if let Some(phase) = &table.phase {
        clock.push(phase.name.clone());
    }
    if let Some(step) = &table.step {
        clock.push(step.name.clone());
    }
    if !clock.is_empty() {
        let _ = writeln!(out, "{}", clock.join(" · "));
    }
    if let Some(turn) = table.turn {
        let _ = writeln!(out, "Turn: {}", names.owner(turn));
    }
    if table.outcome == Outcome::Ongoing {
        if table.acting.is_empty() {
            let _ = writeln!(out, "To act: nobody");
        }
        for mover in &table.acting {
            if mover.why.is_empty() {
                let _ = writeln!(out, "To act: {}", names.owner(mover.seat));
            } else {
                let _ = writeln!(out, "To act: {}, {}", names.owner(mover.seat), mover.why);
            }
        }
    }
    if !table.passed.is_empty() {
        let _ = writeln!(out, "Passed: {}", seats(names, &table.passed));
    }
    for pending in &table.pending {
        let _ = writeln!(out, "Pending: {}", pending.text);
    }
    for section in &table.sections {
        let _ = writeln!(out, "\n{}", section.title);
        if section.rows.is_empty() {
            let _ = writeln!(out, "  (none)");
            continue;
        }
        let rows: Vec<(String, String)> = section
            .rows
            .iter()
            .map(|r| {
                let label = if r.owner.is_player() {
                    format!("{} {}", names.owner(r.owner), r.label)
                } else {
                    r.label.to_string()
                };
                (label, r.value.to_string())
            })
            .collect();
        aligned(&mut out, "  ", &rows);
    }
    out
}

/// Who reads: "p0" or "a spectator".
pub fn audience(names: &Names<'_>, seat: Seat) -> String {
    seat.map_or_else(|| "a spectator".to_owned(), |s| names.owner(s))
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

/// The action that caused these events, if one did: the first [`Cause::Action`] among them.
pub fn action_cause(events: &[Event]) -> Option<Cause> {
    events
        .iter()
        .map(|e| e.cause)
        .find(|c| matches!(c, Cause::Action { .. }))
}

/// The events of one action as `seat` reads them: one line each, indented by `indent` spaces, without
/// the cause where it is the action itself. Events not for `seat` and draws from the random generator
/// are left out.
pub fn event_lines(names: &Names<'_>, events: &[Event], seat: Seat, indent: usize) -> Vec<String> {
    let pad = " ".repeat(indent);
    let action = action_cause(events);
    events
        .iter()
        .enumerate()
        .filter_map(|(i, e)| {
            let text = if Some(e.cause) == action {
                names.change_at(events, i, seat)
            } else {
                names.event_at(events, i, seat)
            }?;
            Some(format!("{pad}{text}"))
        })
        .collect()
}

/// The heading of one applied action, `action` its JSON: "p0's Deploy", "p0 took back their last
/// action" for an undo ([`coffer_core::UNDO`]), "p0 forfeited" ([`coffer_core::FORFEIT`]), or "p0
/// acted" when no event names the action.
pub fn action_heading(names: &Names<'_>, player: u16, action: &str, events: &[Event]) -> String {
    match coffer_core::HostAction::of(action) {
        Some(coffer_core::HostAction::Undo) => return undo_heading(names, player),
        Some(coffer_core::HostAction::Forfeit) => {
            return format!("{} forfeited", names.owner(Owner(player)));
        }
        Some(coffer_core::HostAction::Default) | None => {}
    }
    match action_cause(events) {
        Some(cause) => names.cause(&cause),
        None => format!("{} acted", names.owner(Owner(player))),
    }
}

/// The heading of an undo (`"~undo"`): "p1 took back their last action".
pub fn undo_heading(names: &Names<'_>, player: u16) -> String {
    format!("{} took back their last action", names.owner(Owner(player)))
}

/// An applied action (`action` its JSON) as `seat` reads it: its heading, then its events indented by
/// two spaces.
pub fn action(
    names: &Names<'_>,
    player: u16,
    action: &str,
    events: &[Event],
    seat: Seat,
) -> String {
    let mut out = action_heading(names, player, action, events);
    out.push('\n');
    for line in event_lines(names, events, seat, 2) {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// One action's events as documented JSON, in order: each as [`event_json`], its text read with its
/// neighbours ([`Names::change_at`]: a pending choice that changed reads once).
pub fn events_json(names: &Names<'_>, events: &[Event], seat: Seat) -> Vec<serde_json::Value> {
    (0..events.len())
        .map(|i| json_of(names, &events[i], names.change_at(events, i, seat)))
        .collect()
}

/// One event as documented JSON: its text for `seat` (`null` when it has none), the resource's key and
/// label, the change as the kernel records it, and the cause in words. An event of a list reads best
/// with its neighbours: [`events_json`].
pub fn event_json(names: &Names<'_>, event: &Event, seat: Seat) -> serde_json::Value {
    json_of(names, event, names.change(event, seat))
}

fn json_of(names: &Names<'_>, event: &Event, text: Option<String>) -> serde_json::Value {
    serde_json::json!({
        "text": text,
        "key": event.key,
        "label": names.key(event.key),
        "change": event.change,
        "cause": names.cause(&event.cause),
    })
}

/// An error and its causes on one line, `outer: inner: innermost`. A cause whose text the line already
/// holds (an error that prints its source itself) is not repeated.
pub fn error_chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut line = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !line.contains(&text) {
            line.push_str(": ");
            line.push_str(&text);
        }
        source = cause.source();
    }
    line
}

//! Rendering resources for a terminal.

use crate::fixture::registry;
use coffer_core::{Outcome, Owner, Setup};
use coffer_host::{Host, render};

#[test]
fn capped_amounts_are_bars_with_exact_numbers() {
    assert_eq!(render::bar(5, 0, 10), "[#####.....] 5/10");
    assert_eq!(render::bar(0, 0, 3), "[...] 0/3");
    assert_eq!(render::bar(3, 0, 3), "[###] 3/3");
    // Wide ranges are scaled to the bar width; the numbers stay exact.
    assert_eq!(
        render::bar(50, 0, 100),
        format!("[{}{}] 50/100", "#".repeat(10), ".".repeat(10))
    );
    // Extreme values do not overflow.
    assert!(
        render::bar(i64::MAX, i64::MIN, i64::MAX).ends_with(&format!("{}/{}", i64::MAX, i64::MAX))
    );
}

#[test]
fn charges_are_filled_and_empty_marks() {
    assert_eq!(render::charges(2, 3), "●●○ 2/3");
    assert_eq!(render::charges(0, 2), "○○ 0/2");
    assert_eq!(render::charges(100, 100), "100/100 active");
}

#[test]
fn show_groups_every_resource_by_owner() {
    let host = Host::new(registry());
    let id = host.start("tally", Setup::new(2, 1)).unwrap();
    host.apply_json(id, 0, r#"{"type":"earn","n":3}"#).unwrap();
    host.apply_json(id, 0, r#"{"type":"work"}"#).unwrap();
    host.apply_json(id, 0, r#"{"type":"place"}"#).unwrap();
    let text = host
        .with_game(id, |g| render::resources(&g.game().resources()))
        .unwrap();
    let p0 = text.find("Player 0").expect(&text);
    let p1 = text.find("Player 1").expect(&text);
    let game = text.find("Game (shared)").expect(&text);
    assert!(p0 < p1 && p1 < game, "{text}");
    let player0 = &text[p0..p1];
    assert!(
        player0.contains("coins           [####......] 4/10"),
        "{text}"
    );
    assert!(player0.contains("stamina         ●●○ 2/3"), "{text}");
    assert!(player0.contains("workshop        ○ exhausted"), "{text}");
    assert!(
        player0.contains("reinforcements  3 tokens (p0: 3)"),
        "{text}"
    );
    assert!(text[p1..game].contains("workshop        ● ready"), "{text}");
    assert!(text[game..].contains("board  1 token (p0: 1)"), "{text}");
}

#[test]
fn outcomes_name_winners_and_scores() {
    assert_eq!(render::outcome(&Outcome::Ongoing), "ongoing");
    let won = Outcome::Finished {
        winners: vec![Owner(1)],
        scores: vec![3, 7],
    };
    assert_eq!(
        render::outcome(&won),
        "finished: p1 wins; scores: p0 3, p1 7"
    );
    let draw = Outcome::Finished {
        winners: vec![],
        scores: vec![],
    };
    assert_eq!(render::outcome(&draw), "finished: a draw (no winner)");
}

#[test]
fn events_name_the_resources_they_changed() {
    let host = Host::new(registry());
    let id = host.start("tally", Setup::new(2, 1)).unwrap();
    let lines = |action: &str| {
        let events = host.apply_json(id, 0, action).unwrap();
        let labels = host
            .with_game(id, |g| render::Labels::new(&g.game().resources()))
            .unwrap();
        (
            render::events_labelled(&events, &labels, 0),
            render::events(&events, 0),
        )
    };
    let (labelled, plain) = lines(r#"{"type":"earn","n":3}"#);
    assert!(
        labelled.starts_with("p0 stamina: charges Spend 3 -> 2"),
        "{labelled}"
    );
    assert!(labelled.contains("\np0 coins: gain 0 -> 3"), "{labelled}");
    assert!(
        plain.starts_with("p0 kind 1 #0: charges Spend 3 -> 2"),
        "{plain}"
    );
    let (labelled, _) = lines(r#"{"type":"place"}"#);
    assert_eq!(labelled, "1 token(s) of p0: move reinforcements -> board\n");
    let (labelled, _) = lines(r#"{"type":"work"}"#);
    assert!(labelled.starts_with("p0 workshop: exhausted"), "{labelled}");
    assert_eq!(render::events(&[], 2), "  (no change)\n");
}

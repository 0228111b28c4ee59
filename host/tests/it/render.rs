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
        render::bar(i64::MAX, i64::MIN, i64::MAX).ends_with(&format!(
            "{} ({} to {})",
            i64::MAX,
            i64::MIN,
            i64::MAX
        ))
    );
}

#[test]
fn charges_are_filled_and_empty_marks() {
    assert_eq!(render::charges(2, 3), "●●○ 2/3");
    assert_eq!(render::charges(0, 2), "○○ 0/2");
    assert_eq!(render::charges(100, 100), "100/100 active");
}

#[test]
fn signed_ranges_show_their_range() {
    assert_eq!(render::bar(-1, -3, 3), "[##....] -1 (-3 to 3)");
    assert_eq!(render::bar(3, -3, 3), "[######] 3 (-3 to 3)");
}

#[test]
fn echoed_text_is_cut_to_a_sane_length() {
    assert_eq!(render::cut("  short  ", 80), "short");
    let long = "x".repeat(200);
    let cut = render::cut(&long, render::ECHO_LIMIT);
    assert_eq!(cut.chars().count(), render::ECHO_LIMIT + 1);
    assert!(cut.ends_with('…'));
}

#[test]
fn show_groups_every_resource_by_owner() {
    let host = Host::new(registry());
    let id = host.start("tally", Setup::new(2, 1)).unwrap();
    host.apply_json(id, 0, r#"{"type":"earn","n":3}"#).unwrap();
    host.apply_json(id, 0, r#"{"type":"work"}"#).unwrap();
    host.apply_json(id, 0, r#"{"type":"place"}"#).unwrap();
    let text = host
        .with_game(id, |g| {
            let views = g.resources(None);
            render::resources(&g.names(None), &views)
        })
        .unwrap();
    let p0 = text.find("p0\n").expect(&text);
    let p1 = text.find("p1\n").expect(&text);
    let game = text.find("The game").expect(&text);
    assert!(p0 < p1 && p1 < game, "{text}");
    let player0 = &text[p0..p1];
    assert!(
        player0.contains("coins           [####......] 4/10"),
        "{text}"
    );
    assert!(player0.contains("stamina         ●●○ 2/3"), "{text}");
    assert!(player0.contains("workshop        ○ exhausted"), "{text}");
    assert!(
        player0.contains("reinforcements  3 tokens (p0 3)"),
        "{text}"
    );
    assert!(text[p1..game].contains("workshop        ● ready"), "{text}");
    assert!(text[game..].contains("the board  1 token (p0 1)"), "{text}");
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
fn events_name_the_resources_they_changed_in_words() {
    let host = Host::new(registry());
    let id = host.start("tally", Setup::new(2, 1)).unwrap();
    let lines = |action: &str| {
        host.apply_json(id, 0, action).unwrap();
        host.with_game(id, |g| {
            let events = g.events_for(Some(Owner(0)));
            render::action(&g.names(Some(Owner(0))), 0, action, &events, Some(Owner(0)))
        })
        .unwrap()
    };
    assert_eq!(
        lines(r#"{"type":"earn","n":3}"#),
        "p0's Earn\n  p0's stamina: spent 1 charge, 3 -> 2 active\n  p0's coins: +3, 0 -> 3\n"
    );
    assert_eq!(
        lines(r#"{"type":"place"}"#),
        "p0's Place\n  p0 moved 1 token from reinforcements to the board\n"
    );
    assert_eq!(
        lines(r#"{"type":"work"}"#),
        "p0's Work\n  p0's workshop is exhausted\n  p0's coins: +1, 3 -> 4\n"
    );
    let pass = lines(r#"{"type":"pass"}"#);
    assert_eq!(
        pass,
        "p0's Pass\n  p0 passes\n  p0's workshop is ready, by the end of the turn\n  the turn ends\n"
    );
}

#[test]
fn k5_a_permanent_is_shown_in_the_ruleset_s_words_for_its_states() {
    let vocabulary = coffer_core::Vocabulary {
        kinds: vec![
            coffer_core::Term::new("land").states("is tapped", "is untapped"),
            coffer_core::Term::new("leader").states("has had its turn", "may act this round"),
            coffer_core::Term::new("workshop"),
        ],
        ..Default::default()
    };
    let names = coffer_core::Names::new(&vocabulary);
    let permanent = |kind: u16, exhausted: bool| coffer_core::ResourceView::Permanent {
        label: String::new(),
        key: coffer_core::Key::new(Owner(0), coffer_core::Kind(kind), 0),
        index: 0,
        exhausted,
    };
    assert_eq!(render::drawn(&names, &permanent(0, true)), "○ tapped");
    assert_eq!(render::drawn(&names, &permanent(0, false)), "● untapped");
    assert_eq!(
        render::drawn(&names, &permanent(1, true)),
        "○ has had its turn"
    );
    assert_eq!(
        render::drawn(&names, &permanent(1, false)),
        "● may act this round"
    );
    // Without words of its own: the kernel's.
    assert_eq!(render::drawn(&names, &permanent(2, true)), "○ exhausted");
    assert_eq!(render::drawn(&names, &permanent(2, false)), "● ready");
}

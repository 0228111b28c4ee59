//! The table: the clock, whose turn it is, who may act and why, and the sections (ships, the attack in
//! progress, the End Phase, the result) in rules situations.

use crate::common::G;
use coffer_charges::Phase;
use coffer_core::{Owner, Table};
use serde_json::json;

const NO: &[&str] = &[];

/// Luke Skywalker (p0, initiative 5, Proton Torpedoes) against Darth Vader (p1, initiative 6, Homing
/// Missiles).
fn duel() -> G {
    G::squads(
        &[("luke-skywalker", &["proton-torpedoes"])],
        &[("darth-vader", &["homing-missiles"])],
    )
}

fn phase(t: &Table) -> Option<(u16, &str)> {
    t.phase.as_ref().map(|p| (p.number, p.name.as_str()))
}

fn step(t: &Table) -> Option<(u16, &str)> {
    t.step.as_ref().map(|s| (s.number, s.name.as_str()))
}

fn acting(t: &Table) -> Vec<(Owner, &str)> {
    t.acting.iter().map(|m| (m.seat, m.why.as_str())).collect()
}

/// Advances a duel to phase `to` and checks the table's clock (`phase`), whose turn it is (`turn`) and
/// the one acting member and why (`why`).
fn turn_at(to: Phase, phase_is: (u16, &str), turn: Owner, why: &str) -> G {
    let mut g = duel();
    g.advance_to(to);
    let t = g.game.table(None);
    assert_eq!(phase(&t), Some(phase_is));
    assert_eq!(t.turn, Some(turn));
    assert_eq!(acting(&t), [(turn, why)]);
    g
}

/// The value of the row `label` of section `title`.
fn row<'t>(t: &'t Table, title: &str, label: &str) -> &'t str {
    let section = t
        .sections
        .iter()
        .find(|s| s.title == title)
        .unwrap_or_else(|| panic!("no section {title}"));
    let row = section
        .rows
        .iter()
        .find(|r| r.label == label)
        .unwrap_or_else(|| panic!("no row {label} in {title}"));
    &row.value
}

fn has_section(t: &Table, title: &str) -> bool {
    t.sections.iter().any(|s| s.title == title)
}

#[test]
fn planning_lists_each_player_with_a_dial_to_plan() {
    let mut g = duel();
    let t = g.game.table(None);
    assert_eq!((t.round_name.as_str(), t.round), ("Round", 1));
    assert_eq!(phase(&t), Some((0, "Planning Phase")));
    assert_eq!(step(&t), None);
    assert_eq!(t.turn, None);
    assert_eq!(
        acting(&t),
        [
            (Owner(0), "to plan a dial for Luke Skywalker"),
            (Owner(1), "to plan a dial for Darth Vader"),
        ]
    );
    assert!(row(&t, "Ships", "Luke Skywalker").contains("dial not planned"));
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"red"}));
    let t = g.game.table(None);
    assert_eq!(acting(&t), [(Owner(1), "to plan a dial for Darth Vader")]);
}

#[test]
fn a_planned_dial_shows_only_in_its_owners_table_until_it_is_executed() {
    let mut g = duel();
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"red"}));
    let luke = |g: &G, seat| row(&g.game.table(seat), "Ships", "Luke Skywalker").to_owned();
    assert!(luke(&g, Some(Owner(0))).contains("dial red (hidden from the others), not executed"));
    for seat in [Some(Owner(1)), None] {
        let v = luke(&g, seat);
        assert!(v.contains("dial planned, not executed"), "{v}");
        assert!(!v.contains("red"), "{v}");
    }
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    for seat in [Some(Owner(0)), Some(Owner(1)), None] {
        assert!(luke(&g, seat).contains("dial red, executed"));
    }
    // A red maneuver gave a stress token; the dial stays public after the ship's turn.
    g.ok(0, json!({"type":"pass","ship":0}));
    assert!(luke(&g, None).contains("dial red, executed, stress 1"));
}

#[test]
fn the_system_phase_turn_goes_to_the_lowest_initiative_first() {
    let mut g = turn_at(
        Phase::System,
        (1, "System Phase"),
        Owner(0),
        "Luke Skywalker has its System Phase turn: abilities, then pass",
    );
    g.ok(0, json!({"type":"pass","ship":0}));
    assert_eq!(g.game.table(None).turn, Some(Owner(1)));
}

#[test]
fn the_activation_turn_reveals_then_acts() {
    let mut g = duel();
    g.advance_to(Phase::Activation);
    let t = g.game.table(Some(Owner(1)));
    assert_eq!(phase(&t), Some((2, "Activation Phase")));
    assert_eq!(
        acting(&t),
        [(
            Owner(0),
            "Luke Skywalker activates: reveal and execute its maneuver"
        )]
    );
    g.ok(0, json!({"type":"execute","ship":0}));
    assert_eq!(
        acting(&g.game.table(None)),
        [(
            Owner(0),
            "Luke Skywalker activates: perform an action, then pass"
        )]
    );
}

#[test]
fn the_engagement_turn_goes_to_the_highest_initiative_first() {
    turn_at(
        Phase::Engagement,
        (3, "Engagement Phase"),
        Owner(1),
        "Darth Vader engages: attack, or pass",
    );
}

/// C8: one Force changes one focus result at a dice step; the attack section follows the dice.
#[test]
fn c8_the_attack_section_follows_the_dice_steps() {
    let mut g = duel();
    g.advance_to(Phase::Engagement);
    g.ok(1, json!({"type":"attack","ship":1,"target":0,"weapon":1}));
    let t = g.game.table(None);
    assert_eq!(step(&t), Some((0, "Roll Attack Dice")));
    assert_eq!(t.turn, Some(Owner(1)));
    assert_eq!(row(&t, "Attack", "attacker"), "Darth Vader");
    assert_eq!(row(&t, "Attack", "defender"), "Luke Skywalker");
    assert_eq!(
        row(&t, "Attack", "weapon"),
        "Homing Missiles, 4 attack dice"
    );
    assert_eq!(row(&t, "Attack", "dice step"), "Roll Attack Dice");
    assert_eq!(row(&t, "Attack", "attack dice"), "4 dice, not entered yet");
    assert_eq!(
        acting(&t),
        [(Owner(1), "to enter the attack dice of Darth Vader")]
    );
    g.ok(
        1,
        json!({"type":"attack_dice","hits":1,"crits":1,"focus":2}),
    );
    let t = g.game.table(None);
    assert_eq!(step(&t), Some((1, "Modify Attack Dice")));
    assert_eq!(row(&t, "Attack", "attack dice"), "hits 1, crits 1, focus 2");
    g.ok(1, json!({"type":"spend_force"}));
    let t = g.game.table(None);
    assert_eq!(row(&t, "Attack", "attack dice"), "hits 2, crits 1, focus 1");
    g.ok(1, json!({"type":"done"}));
    let t = g.game.table(None);
    assert_eq!(step(&t), Some((2, "Roll Defence Dice")));
    assert_eq!(t.turn, Some(Owner(0)));
    assert_eq!(
        acting(&t),
        [(Owner(0), "to enter the defence dice of Luke Skywalker")]
    );
    assert_eq!(row(&t, "Attack", "defence dice"), "2 dice, not entered yet");
    g.ok(0, json!({"type":"defence_dice","evades":1,"focus":1}));
    let t = g.game.table(None);
    assert_eq!(step(&t), Some((3, "Modify Defence Dice")));
    assert_eq!(row(&t, "Attack", "defence dice"), "evades 1, focus 1");
    g.ok(0, json!({"type":"done"}));
    let t = g.game.table(None);
    assert_eq!(step(&t), None);
    assert!(!has_section(&t, "Attack"));
    // 2 hits and 1 crit, 1 evade: Luke's two shields take the hits' rest and the crit.
    assert!(row(&t, "Ships", "Luke Skywalker").contains("damage 0 of hull 4"));
}

/// C9: damage removes shields before any damage card is dealt.
#[test]
fn c9_ships_show_damage_cards_only_once_the_shields_are_gone() {
    let mut g = G::luke_vs_vader(NO);
    g.advance_to(Phase::System);
    g.ok(
        0,
        json!({"type":"suffer_damage","ship":0,"hits":2,"crits":0}),
    );
    let luke = row(&g.game.table(None), "Ships", "Luke Skywalker").to_owned();
    assert!(
        luke.ends_with("damage 0 of hull 4 (0 facedown, 0 faceup)"),
        "{luke}"
    );
    g.ok(
        0,
        json!({"type":"suffer_damage","ship":0,"hits":1,"crits":1}),
    );
    let luke = row(&g.game.table(None), "Ships", "Luke Skywalker").to_owned();
    assert!(
        luke.ends_with("damage 2 of hull 4 (1 facedown, 1 faceup)"),
        "{luke}"
    );
    g.ok(
        0,
        json!({"type":"deal_damage_card","ship":0,"faceup":false}),
    );
    g.ok(
        0,
        json!({"type":"deal_damage_card","ship":0,"faceup":false}),
    );
    let luke = row(&g.game.table(None), "Ships", "Luke Skywalker").to_owned();
    assert!(luke.starts_with("destroyed, initiative 5"), "{luke}");
}

/// C6: the End Phase: each player uses End-Phase abilities, then is done; the done are listed as passed.
#[test]
fn c6_the_end_phase_lists_the_done_players_as_passed() {
    let mut g = duel();
    g.advance_to(Phase::End);
    let t = g.game.table(None);
    assert_eq!(phase(&t), Some((4, "End Phase")));
    assert_eq!(t.turn, None);
    assert_eq!(t.acting.len(), 2);
    assert_eq!(row(&t, "End Phase", "p0"), "may use End Phase abilities");
    g.ok(0, json!({"type":"done"}));
    let t = g.game.table(None);
    assert_eq!(t.passed, [Owner(0)]);
    assert_eq!(
        acting(&t),
        [(Owner(1), "to use End Phase abilities, then done")]
    );
    assert_eq!(row(&t, "End Phase", "p0"), "done");
    g.ok(1, json!({"type":"done"}));
    let t = g.game.table(None);
    assert_eq!((t.round, phase(&t)), (2, Some((0, "Planning Phase"))));
    assert!(!has_section(&t, "End Phase"));
}

#[test]
fn the_result_names_the_winners() {
    let mut g = G::new(json!({"max_rounds": 1}));
    g.finish_round();
    let t = g.game.table(Some(Owner(1)));
    assert_eq!(
        (t.round, t.phase.as_ref(), t.step.as_ref()),
        (1, None, None)
    );
    assert!(t.acting.is_empty());
    // Both players keep their one ship: a shared win.
    let result = &t
        .sections
        .iter()
        .find(|s| s.title == "Result")
        .unwrap()
        .rows;
    let rows: Vec<(Owner, &str, &str)> = result
        .iter()
        .map(|r| (r.owner, &*r.label, &*r.value))
        .collect();
    assert_eq!(
        rows,
        [
            (Owner(0), "result", "wins, with 1 ship in play"),
            (Owner(1), "result", "wins, with 1 ship in play")
        ]
    );
    assert!(matches!(t.outcome, coffer_core::Outcome::Finished { .. }));
}

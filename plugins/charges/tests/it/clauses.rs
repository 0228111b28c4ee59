//! One test (or more) per clause C8–C20, named after it; each fails if its rule is broken (C1–C7, the
//! charge tracks, are in `charge_tracks.rs`).

use crate::common::{G, squad};
use coffer_charges::Phase;
use coffer_charges::state::kind;
use coffer_charges::turn::{Turn, turn};
use coffer_core::ActionError;
use serde_json::{Value, json};

/// No upgrades.
pub const NO: &[&str] = &[];

/// Inline content used where the sample set has no card with the needed numbers.
pub fn custom(
    pilots: Value,
    upgrades: Value,
    a: &[(&str, &[&str])],
    b: &[(&str, &[&str])],
    extra: Value,
) -> G {
    let mut config = json!({
        "squads": [squad(a), squad(b)],
        "content": {"pilots": pilots, "upgrades": upgrades},
    });
    if let Value::Object(m) = extra {
        for (k, v) in m {
            config[k] = v;
        }
    }
    G::new(config)
}

/// A game of the inline pilot `pilot` (id `id`, p0) against a plain TIE (p1), no upgrades.
pub fn against_a_tie(pilot: Value, id: &str) -> G {
    custom(
        json!([pilot, tie()]),
        json!([]),
        &[(id, NO)],
        &[("tie", NO)],
        json!({}),
    )
}

/// A plain TIE pilot for inline content.
pub fn tie() -> Value {
    json!({"id": "tie", "name": "Academy Pilot", "ship": "TIE/ln", "size": "small", "initiative": 1,
           "attack": 2, "agility": 3, "hull": 3, "actions": {"focus": "white"}})
}

// ----- C8 -----

fn force_squad(extra: Value) -> G {
    let jedi = json!({"id": "jedi", "name": "Jedi", "ship": "Delta-7", "size": "small", "initiative": 5,
        "attack": 3, "agility": 3, "hull": 3, "force": {"value": 2, "recurs": 1}, "actions": {"focus": "white"}});
    let holo = json!({"id": "holo", "name": "Holocron", "slot": "crew", "force": {"value": 2, "recurs": 2}});
    let adept = json!({"id": "adept", "name": "Adept", "slot": "talent", "force": {"value": 1, "recurs": 1}});
    custom(
        json!([jedi, tie()]),
        json!([holo, adept]),
        &[("jedi", &["holo", "adept"])],
        &[("tie", NO)],
        extra,
    )
}

fn drain_force(g: &mut G, n: usize) {
    g.advance_to(Phase::System);
    for _ in 0..n {
        // The TIE (initiative 1) has the first System Phase turn.
        g.ok(1, json!({"type":"lose","ship":0,"charges":"force"}));
    }
}

#[test]
fn c8_force_recovers_highest_recurrence() {
    let mut g = force_squad(json!({}));
    assert_eq!(g.force(0), (5, 5));
    drain_force(&mut g, 5);
    g.finish_round();
    assert_eq!(g.force(0), (2, 5), "highest of 1, 2, 1 — not their sum 4");
}

#[test]
fn c8_force_recovers_one_under_the_older_reading() {
    let mut g = force_squad(json!({"force_recovery": "one"}));
    drain_force(&mut g, 5);
    g.finish_round();
    assert_eq!(g.force(0), (1, 5));
}

#[test]
fn c8_spend_force_changes_one_focus_result_when_attacking() {
    let mut g = G::squads(&[("luke-skywalker", NO)], &[("academy-pilot", NO)]);
    g.advance_to(Phase::Engagement);
    g.attack(0, 0, 1, 0, [0, 0, 2]);
    g.ok(0, json!({"type":"spend_force"}));
    assert_eq!(g.force(0), (1, 2));
    let at = g.state().attack.unwrap();
    assert_eq!((at.hits, at.focus), (1, 1));
    g.ok(0, json!({"type":"done"}));
    g.refused(0, json!({"type":"spend_force"}));
    g.ok(1, json!({"type":"defence_dice","evades":0,"focus":0}));
    g.ok(1, json!({"type":"done"}));
    assert_eq!(g.tokens(1, kind::FACEDOWN), 1, "one hit landed");
}

#[test]
fn c8_spend_force_changes_one_focus_result_when_defending() {
    let mut g = G::squads(&[("academy-pilot", NO)], &[("darth-vader", NO)]);
    g.advance_to(Phase::Engagement);
    g.ok(1, json!({"type":"pass","ship":1}));
    g.attack(0, 0, 1, 0, [1, 0, 0]);
    g.ok(0, json!({"type":"done"}));
    g.ok(1, json!({"type":"defence_dice","evades":0,"focus":1}));
    g.ok(1, json!({"type":"spend_force"}));
    assert_eq!(g.force(1), (2, 3));
    g.ok(1, json!({"type":"done"}));
    assert_eq!(g.shields(1), (2, 2), "the evade cancelled the hit");
}

#[test]
fn c8_purple_action_costs_one_force_and_is_refused_without() {
    let mut g = G::squads(&[("anakin-skywalker", NO)], &[("darth-vader", NO)]);
    g.advance_to(Phase::System);
    for _ in 0..3 {
        g.ok(0, json!({"type":"lose","ship":0,"charges":"force"}));
    }
    g.ok(0, json!({"type":"recover","ship":0,"charges":"force"}));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.ok(0, json!({"type":"perform","ship":0,"action":"evade"}));
    assert_eq!(g.force(0), (0, 3));
    assert_eq!(g.tokens(0, kind::EVADE), 1);
    g.finish_round();
    assert_eq!(g.force(0), (1, 3));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"lose","ship":0,"charges":"force"}));
    g.ok(0, json!({"type":"execute","ship":0}));
    let e = g.refused(0, json!({"type":"perform","ship":0,"action":"evade"}));
    assert!(e.to_string().contains("Force"), "{e}");
}

#[test]
fn c8_purple_maneuver_costs_one_force_and_needs_one_to_plan() {
    let mut g = G::squads(&[("luke-skywalker", NO)], &[("academy-pilot", NO)]);
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"purple"}));
    g.refused(1, json!({"type":"plan","ship":1,"maneuver":"purple"}));
    g.ok(1, json!({"type":"plan","ship":1,"maneuver":"white"}));
    g.advance_to(Phase::Activation);
    ship_1_then_ship_0_execute(&mut g);
    assert_eq!(g.force(0), (1, 2));
}

// ----- C9 -----

#[test]
fn c9_shields_absorb_damage_before_damage_cards() {
    let mut g = G::luke_vs_vader(NO);
    g.advance_to(Phase::System);
    g.ok(
        0,
        json!({"type":"suffer_damage","ship":0,"hits":2,"crits":0}),
    );
    assert_eq!(g.shields(0), (0, 2));
    assert_eq!(g.tokens(0, kind::FACEDOWN), 0);
    g.ok(
        0,
        json!({"type":"suffer_damage","ship":0,"hits":1,"crits":0}),
    );
    assert_eq!(g.tokens(0, kind::FACEDOWN), 1);
}

#[test]
fn c9_hits_are_suffered_before_crits() {
    let mut g = G::luke_vs_vader(NO);
    g.advance_to(Phase::System);
    g.ok(
        0,
        json!({"type":"suffer_damage","ship":0,"hits":1,"crits":2}),
    );
    assert_eq!(g.shields(0), (0, 2));
    assert_eq!(
        (g.tokens(0, kind::FACEDOWN), g.tokens(0, kind::FACEUP)),
        (0, 1),
        "the last crit got through"
    );
}

#[test]
fn c9_evades_cancel_hits_before_crits() {
    let mut g = G::squads(&[("academy-pilot", NO)], &[("academy-pilot", NO)]);
    g.advance_to(Phase::Engagement);
    g.attack(0, 0, 1, 0, [1, 1, 0]);
    g.ok(0, json!({"type":"done"}));
    g.ok(1, json!({"type":"defence_dice","evades":1,"focus":0}));
    g.ok(1, json!({"type":"done"}));
    assert_eq!(
        (g.tokens(1, kind::FACEDOWN), g.tokens(1, kind::FACEUP)),
        (0, 1)
    );
}

#[test]
fn c9_deal_a_damage_card_ignores_shields() {
    let mut g = G::luke_vs_vader(NO);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"deal_damage_card","ship":0,"faceup":true}));
    assert_eq!(g.shields(0), (2, 2));
    assert_eq!(g.tokens(0, kind::FACEUP), 1);
}

#[test]
fn c9_only_huge_ships_have_recurring_shields() {
    let bad = json!({"id": "x", "name": "X", "ship": "T-65", "size": "small", "initiative": 1, "attack": 3,
        "agility": 2, "hull": 4, "shields": {"value": 2, "recurs": 1}});
    let err =
        coffer_charges::Content::from_json(&json!({"pilots": [bad], "upgrades": []}).to_string())
            .unwrap_err();
    assert!(
        err.to_string().contains("'x'") && err.to_string().contains("shields.recurs"),
        "{err}"
    );
    // A huge ship's shields recur; a small ship's do not.
    let mut g = G::squads(&[("alderaanian-guard", NO)], &[("luke-skywalker", NO)]);
    g.advance_to(Phase::System);
    // Luke (initiative 5) has the first System Phase turn: his player enters the effects.
    g.ok(
        1,
        json!({"type":"suffer_damage","ship":0,"hits":2,"crits":2}),
    );
    g.ok(
        1,
        json!({"type":"suffer_damage","ship":1,"hits":2,"crits":0}),
    );
    assert_eq!(g.shields(0), (3, 7));
    g.finish_round();
    assert_eq!(g.shields(0), (5, 7), "two recurring shields");
    assert_eq!(g.shields(1), (0, 2));
}

// ----- C10 -----

fn cr90() -> G {
    G::squads(
        &[("alderaanian-guard", &["quick-release-locks"])],
        &[("academy-pilot", NO)],
    )
}

/// A CR90 game where the CR90 (ship 0) plans a red maneuver and the academy pilot a white one.
fn cr90_planning_red() -> G {
    let mut g = cr90();
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"red"}));
    g.ok(1, json!({"type":"plan","ship":1,"maneuver":"white"}));
    g
}

/// Ship 1 executes and passes, then ship 0 executes.
fn ship_1_then_ship_0_execute(g: &mut G) {
    g.ok(1, json!({"type":"execute","ship":1}));
    g.ok(1, json!({"type":"pass","ship":1}));
    g.ok(0, json!({"type":"execute","ship":0}));
}

/// Ship 0 loses `times` energy charges, one at a time.
fn drain_energy(g: &mut G, times: usize) {
    for _ in 0..times {
        g.ok(1, json!({"type":"lose","ship":0,"charges":"energy"}));
    }
}

#[test]
fn c10_red_maneuver_with_energy_loses_energy_instead_of_stress() {
    let mut g = cr90_planning_red();
    g.advance_to(Phase::Activation);
    ship_1_then_ship_0_execute(&mut g);
    assert_eq!(g.energy(0), (6, 7));
    assert_eq!(g.tokens(0, kind::STRESS), 0);
}

#[test]
fn c10_red_maneuver_without_energy_gains_stress() {
    let mut g = cr90_planning_red();
    g.advance_to(Phase::Activation);
    drain_energy(&mut g, 7);
    ship_1_then_ship_0_execute(&mut g);
    assert_eq!(g.energy(0), (0, 7));
    assert_eq!(g.tokens(0, kind::STRESS), 1);
}

#[test]
fn c10_huge_ship_spends_energy_to_remove_gained_stress() {
    let mut g = cr90();
    g.advance_to(Phase::System);
    g.ok(1, json!({"type":"gain_stress","ship":0}));
    assert_eq!(g.tokens(0, kind::STRESS), 0);
    assert_eq!(g.energy(0), (6, 7));
    // A small ship keeps its stress.
    g.ok(1, json!({"type":"gain_stress","ship":1}));
    assert_eq!(g.tokens(1, kind::STRESS), 1);
    // Without energy the huge ship keeps it too.
    drain_energy(&mut g, 6);
    g.ok(1, json!({"type":"gain_stress","ship":0}));
    assert_eq!(g.tokens(0, kind::STRESS), 1);
}

#[test]
fn c12_a_stressed_ship_executes_a_white_2_straight_instead_of_red_and_gains_no_stress() {
    // Initiative 1 against 6: the academy pilot (ship 0) moves first in each phase.
    let mut g = G::squads(&[("academy-pilot", NO)], &[("darth-vader", NO)]);
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"red"}));
    g.ok(1, json!({"type":"plan","ship":1,"maneuver":"red"}));
    g.advance_to(Phase::System);
    // Ship 0 is stressed after planning; ship 1 is not.
    g.ok(0, json!({"type":"gain_stress","ship":0}));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    assert_eq!(
        g.tokens(0, kind::STRESS),
        1,
        "the stressed ship gained no second stress"
    );
    g.ok(0, json!({"type":"pass","ship":0}));
    g.ok(1, json!({"type":"execute","ship":1}));
    assert_eq!(
        g.tokens(1, kind::STRESS),
        1,
        "an unstressed ship's red maneuver gives a stress"
    );
}

#[test]
fn c12_a_stressed_huge_ship_executes_white_and_loses_no_energy() {
    let mut g = cr90_planning_red();
    g.advance_to(Phase::System);
    // Stressed with no energy to spend it away (Huge Ships, "Red Maneuvers": "If it has zero energy and
    // is stressed, it executes a white [2 straight] maneuver instead").
    drain_energy(&mut g, 7);
    g.ok(1, json!({"type":"gain_stress","ship":0}));
    g.ok(1, json!({"type":"gain_stress","ship":0}));
    // One energy recovered is spent at once on one of the two stress tokens (C18).
    g.ok(1, json!({"type":"recover","ship":0,"charges":"energy"}));
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((0, 7), 1));
    g.advance_to(Phase::Activation);
    ship_1_then_ship_0_execute(&mut g);
    assert_eq!(
        g.energy(0),
        (0, 7),
        "no energy lost on the red maneuver it did not execute"
    );
    assert_eq!(g.tokens(0, kind::STRESS), 1, "and no stress gained");
}

// ----- C18 -----

/// The CR90 (ship 0) in the System Phase with all 7 energy lost, then 3 stress tokens gained (kept: no
/// energy to spend on them).
fn cr90_without_energy_and_3_stress() -> G {
    let mut g = cr90();
    g.advance_to(Phase::System);
    drain_energy(&mut g, 7);
    for _ in 0..3 {
        g.ok(1, json!({"type":"gain_stress","ship":0}));
    }
    g
}

#[test]
fn c18_a_huge_ship_that_recovers_energy_spends_it_on_its_stress() {
    let mut g = cr90_without_energy_and_3_stress();
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((0, 7), 3));
    // A recovered energy goes on a stress token at once.
    g.ok(1, json!({"type":"recover","ship":0,"charges":"energy"}));
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((0, 7), 2));
    g.ok(1, json!({"type":"recover","ship":0,"charges":"energy"}));
    g.ok(1, json!({"type":"recover","ship":0,"charges":"energy"}));
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((0, 7), 0));
    // Without stress left, a recovered energy stays.
    g.ok(1, json!({"type":"recover","ship":0,"charges":"energy"}));
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((1, 7), 0));
    // A small ship is unaffected (it has no energy).
    g.ok(1, json!({"type":"gain_stress","ship":1}));
    assert_eq!(g.tokens(1, kind::STRESS), 1);
}

#[test]
fn c18_energy_recovered_in_the_end_phase_removes_stress_one_for_one() {
    let mut g = cr90_without_energy_and_3_stress();
    // The CR90's ship card recurs 2 energy: both are spent on stress in the End Phase.
    g.advance_to(Phase::Planning);
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((0, 7), 1));
    // Next round: 2 recovered, 1 spent on the last stress token.
    g.finish_round();
    assert_eq!((g.energy(0), g.tokens(0, kind::STRESS)), ((1, 7), 0));
}

// ----- C13 -----

/// Luke (initiative 5, Force 2) plans purple and loses `lost` Force in the System Phase; the academy pilot
/// (initiative 1) has activated, and Luke's turn to execute has come.
fn luke_planned_purple_then_lost(lost: usize) -> G {
    let mut g = G::squads(&[("luke-skywalker", NO)], &[("academy-pilot", NO)]);
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"purple"}));
    g.ok(1, json!({"type":"plan","ship":1,"maneuver":"white"}));
    g.advance_to(Phase::System);
    // Effects are entered by the owner of the ship whose turn it is: the academy pilot's.
    for _ in 0..lost {
        g.ok(1, json!({"type":"lose","ship":0,"charges":"force"}));
    }
    g.advance_to(Phase::Activation);
    g.ok(1, json!({"type":"execute","ship":1}));
    g.ok(1, json!({"type":"pass","ship":1}));
    g
}

#[test]
fn c13_a_purple_maneuver_without_an_active_force_executes_a_white_2_straight() {
    let mut g = luke_planned_purple_then_lost(2);
    assert_eq!(g.force(0), (0, 2));
    g.ok(0, json!({"type":"execute","ship":0}));
    assert_eq!(
        g.tokens(0, kind::STRESS),
        0,
        "a white maneuver: no stress, unlike the red it used to be executed as"
    );
    assert_eq!(g.force(0), (0, 2), "no Force to spend, none spent");
    assert!(
        g.said("executed a white [2 straight] instead of its purple maneuver"),
        "the log says what happened"
    );
}

#[test]
fn c13_a_purple_maneuver_with_an_active_force_spends_it() {
    let mut g = luke_planned_purple_then_lost(1);
    g.ok(0, json!({"type":"execute","ship":0}));
    assert_eq!(g.force(0), (0, 2), "the last active Force paid for it");
    assert_eq!(g.tokens(0, kind::STRESS), 0);
}

// ----- C14 -----

/// A Force user whose pilot ability is paid with the Force: "After you perform an action, you may spend 1
/// [Force] to perform an action" (Darth Vader's text), with an evade on the bar to make the second action
/// something else than the first.
fn force_ace(crew: Value) -> G {
    let ace = json!({"id": "ace", "name": "Force Ace", "ship": "TIE Advanced x1", "size": "small",
        "initiative": 6, "attack": 2, "agility": 3, "hull": 3, "force": {"value": 2, "recurs": 1},
        "actions": {"focus": "white", "evade": "red"},
        "ability": {"timing": "after_action", "cost": 1, "pays": "force", "effect": "another_action"}});
    custom(
        json!([ace, tie()]),
        json!([crew]),
        &[("ace", &["crew"])],
        &[("tie", NO)],
        json!({}),
    )
}

/// A crew card that adds one Force and whose System Phase ability spends one of the ship's Force.
fn force_crew() -> Value {
    json!({"id": "crew", "name": "Force Crew", "slot": "crew", "force": {"value": 1, "recurs": 1},
        "ability": {"timing": "system", "cost": 1, "pays": "force"}})
}

/// The force ace in its activation (the tie has moved): it has executed, focused, and used its ability for
/// another action.
fn ace_focused_then_granted_an_action() -> G {
    let mut g = force_ace(force_crew());
    g.advance_to(Phase::Activation);
    ship_1_then_ship_0_execute(&mut g);
    g.ok(0, json!({"type":"perform","ship":0,"action":"focus"}));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":0}));
    g
}

#[test]
fn c14_an_ability_paid_with_the_force_spends_the_ships_force_not_the_cards_charges() {
    let mut g = force_ace(force_crew());
    assert_eq!(g.force(0), (3, 3), "the crew adds to the ship's Force");
    g.advance_to(Phase::System);
    // The tie (initiative 1) has the System Phase turn first.
    g.ok(1, json!({"type":"pass","ship":1}));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.force(0), (2, 3));
}

#[test]
fn c14_another_action_keeps_its_colour_and_is_paid_with_the_force() {
    let mut g = ace_focused_then_granted_an_action();
    assert_eq!(g.force(0), (2, 3));
    assert!(g.said("may perform one more action: any action, at its own colour"));
    // The evade is red on the bar: performed as red (a stress), not refused as "only a white action".
    g.ok(0, json!({"type":"perform","ship":0,"action":"evade"}));
    assert_eq!(g.tokens(0, kind::EVADE), 1);
    assert_eq!(g.tokens(0, kind::STRESS), 1);
}

#[test]
fn c14_an_ability_paid_with_the_force_is_refused_without_enough_active_force() {
    let mut g = force_ace(force_crew());
    g.advance_to(Phase::System);
    g.ok(1, json!({"type":"pass","ship":1}));
    for _ in 0..3 {
        g.ok(0, json!({"type":"lose","ship":0,"charges":"force"}));
    }
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert!(e.to_string().contains("0 active Force"), "{e}");
}

#[test]
fn c14_a_ship_whose_force_capacity_cannot_pay_the_ability_is_refused_at_setup() {
    let err = tie_with_crew_ability_refused(2, "force");
    assert!(
        err.contains("costs 2 Force, and the ship's Force capacity is 0"),
        "{err}"
    );
}

/// The setup error of a game whose TIE carries a crew with a System ability costing `cost` paid with
/// `pays`.
fn tie_with_crew_ability_refused(cost: u8, pays: &str) -> String {
    let crew = json!({"id": "crew", "name": "Crew", "slot": "crew",
        "ability": {"timing": "system", "cost": cost, "pays": pays}});
    let config = json!({
        "squads": [squad(&[("tie", &["crew"])]), squad(&[("tie", NO)])],
        "content": {"pilots": [tie()], "upgrades": [crew]},
    });
    let rs = coffer_core::Adapter::shared(coffer_charges::Charges::new());
    rs.new_game(&coffer_core::Setup::new(2, 1).config(config))
        .err()
        .expect("refused")
        .to_string()
}

// ----- C15 -----

#[test]
fn c15_a_stressed_ship_performs_no_action_white_ones_included() {
    let mut g = G::squads(&[("academy-pilot", NO)], &[("darth-vader", NO)]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"gain_stress","ship":0}));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    let e = g.refused(0, json!({"type":"perform","ship":0,"action":"focus"}));
    assert!(e.to_string().contains("cannot perform actions"), "{e}");
    assert!(
        !g.legal(0).iter().any(|a| a.contains("perform")),
        "no action is listed for the stressed ship"
    );
    g.ok(0, json!({"type":"pass","ship":0}));
    // The unstressed ship may.
    g.ok(1, json!({"type":"execute","ship":1}));
    g.ok(1, json!({"type":"perform","ship":1,"action":"focus"}));
}

#[test]
fn c10_energy_recovers_only_per_the_ship_card() {
    let cr90 = json!({"id": "cr90", "name": "CR90", "ship": "CR90", "size": "huge", "initiative": 8, "attack": 4,
        "agility": 0, "hull": 18, "energy": {"value": 5, "recurs": 1}});
    let cells =
        json!({"id": "cells", "name": "Spare Cells", "slot": "cargo", "energy": {"value": 2}});
    let mut g = custom(
        json!([cr90, tie()]),
        json!([cells]),
        &[("cr90", &["cells"])],
        &[("tie", NO)],
        json!({}),
    );
    g.advance_to(Phase::System);
    drain_energy(&mut g, 7);
    g.finish_round();
    assert_eq!(g.energy(0), (1, 7));
}

#[test]
fn c10_an_upgrades_recurring_energy_symbols_add_nothing_to_the_ship_cards() {
    let cr90 = json!({"id": "cr90", "name": "CR90", "ship": "CR90", "size": "huge", "initiative": 8, "attack": 4,
        "agility": 0, "hull": 18, "energy": {"value": 5, "recurs": 1}});
    // Printed with two recurring symbols of its own: accepted, and ignored at the End Phase.
    let cells = json!({"id": "cells", "name": "Spare Cells", "slot": "cargo", "energy": {"value": 2, "recurs": 2}});
    let mut g = custom(
        json!([cr90, tie()]),
        json!([cells]),
        &[("cr90", &["cells"])],
        &[("tie", NO)],
        json!({}),
    );
    assert_eq!(g.energy(0), (7, 7), "the upgrade adds to the capacity");
    g.advance_to(Phase::System);
    drain_energy(&mut g, 7);
    g.finish_round();
    assert_eq!(
        g.energy(0),
        (1, 7),
        "one symbol on the ship card: one energy"
    );
}

#[test]
fn c10_energy_only_on_huge_ships() {
    let bad = json!({"id": "x", "name": "X", "ship": "T-65", "size": "large", "initiative": 1, "attack": 3,
        "agility": 2, "hull": 4, "energy": {"value": 2}});
    let err =
        coffer_charges::Content::from_json(&json!({"pilots": [bad], "upgrades": []}).to_string())
            .unwrap_err();
    assert!(err.to_string().contains("energy"), "{err}");
    let rs = coffer_core::Adapter::shared(coffer_charges::Charges::new());
    let config = json!({"squads": [squad(&[("luke-skywalker", &["quick-release-locks"])]), squad(&[("academy-pilot", NO)])]});
    let err = rs
        .new_game(&coffer_core::Setup::new(2, 1).config(config))
        .err()
        .unwrap();
    assert!(err.to_string().contains("quick-release-locks"), "{err}");
}

// ----- C16 -----

#[test]
fn c16_a_ship_places_one_device_per_system_phase() {
    let mut g = bomber(&["proton-bombs", "seismic-charges"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.card(0, 1), (1, 2), "the first device's charge is spent");
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":2}));
    assert!(e.to_string().contains("one per System Phase"), "{e}");
    assert!(
        !g.legal(0).iter().any(|a| a.contains("use_ability")),
        "the second device is not listed"
    );
    assert_eq!(g.card(0, 2), (2, 2));
    // The next round's System Phase allows one again.
    g.finish_round();
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":2}));
    assert_eq!(g.card(0, 2), (1, 2));
}

#[test]
fn c16_a_device_that_cannot_be_placed_is_reversed_its_charge_and_placement_restored() {
    let mut g = bomber(&["proton-bombs", "seismic-charges"]);
    g.advance_to(Phase::System);
    let before = g.game.state_hash();
    let (bombs, charges) = (g.card(0, 1), g.card(0, 2));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(
        g.card(0, 1),
        (bombs.0 - 1, bombs.1),
        "the drop spends a charge"
    );
    assert!(
        g.legal(0)
            .contains(&r#"{"type":"device_not_placed","ship":0,"card":1}"#.to_owned()),
        "the reversal is listed right after the drop: {:?}",
        g.legal(0)
    );
    // The table finds the bombs cannot be placed: play is reversed.
    g.ok(0, json!({"type":"device_not_placed","ship":0,"card":1}));
    assert!(g.said("could not be placed: play is reversed"));
    assert!(
        g.said("Proton Bombs charges"),
        "the charge's recovery is told"
    );
    assert_eq!(g.card(0, 1), bombs, "the charge is back");
    assert_eq!(
        g.game.state_hash(),
        before,
        "play is back to before the device was placed"
    );
    // The ship may place a device this System Phase again: the seismic charges.
    g.ok(0, json!({"type":"use_ability","ship":0,"card":2}));
    assert_eq!(g.card(0, 2), (charges.0 - 1, charges.1));
}

#[test]
fn c16_a_charge_that_cannot_be_recovered_comes_back_when_its_drop_is_reversed() {
    // Conner Nets: "this card's charge cannot be recovered"; reversing play is not recovering it.
    let mut g = bomber(&["conner-nets"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.card(0, 1), (0, 1));
    g.ok(0, json!({"type":"device_not_placed","ship":0,"card":1}));
    assert_eq!(g.card(0, 1), (1, 1));
}

#[test]
fn c16_reversing_a_drop_after_anything_else_happened_is_refused_as_too_late() {
    let mut g = bomber(&["proton-bombs", "seismic-charges"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    // Something else happens: an effect input on the dropping ship.
    g.ok(0, json!({"type":"gain_stress","ship":0}));
    let e = g.refused(0, json!({"type":"device_not_placed","ship":0,"card":1}));
    assert!(
        e.to_string()
            .contains("only right after the device is dropped"),
        "{e}"
    );
    assert!(!g.legal(0).iter().any(|a| a.contains("device_not_placed")));
    assert_eq!(g.card(0, 1), (1, 2), "the charge stays spent");
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":2}));
    assert!(e.to_string().contains("one per System Phase"), "{e}");
}

#[test]
fn c16_reversing_with_no_device_just_placed_is_refused() {
    let mut g = bomber(&["proton-bombs", "seismic-charges"]);
    g.advance_to(Phase::System);
    let e = g.refused(0, json!({"type":"device_not_placed","ship":0,"card":1}));
    assert!(e.to_string().contains("there is no drop to reverse"), "{e}");
    assert!(!g.legal(0).iter().any(|a| a.contains("device_not_placed")));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    // Not the device just placed, and not a device at all.
    let e = g.refused(0, json!({"type":"device_not_placed","ship":0,"card":2}));
    assert!(
        e.to_string()
            .contains("not the device the ship just placed"),
        "{e}"
    );
    let e = g.refused(0, json!({"type":"device_not_placed","ship":0,"card":0}));
    assert!(e.to_string().contains("not a device upgrade"), "{e}");
    let e = g.refused(0, json!({"type":"device_not_placed","ship":0,"card":9}));
    assert!(!e.to_string().is_empty());
    // Reversed once: a second report finds no drop.
    g.ok(0, json!({"type":"device_not_placed","ship":0,"card":1}));
    let e = g.refused(0, json!({"type":"device_not_placed","ship":0,"card":1}));
    assert!(e.to_string().contains("there is no drop to reverse"), "{e}");
}

#[test]
fn c16_another_seats_device_cannot_be_reported_unplaced_by_this_seat() {
    let mut g = bomber(&["proton-bombs"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    let e = g.refused(1, json!({"type":"device_not_placed","ship":0,"card":1}));
    assert!(e.to_string().contains("is not p1's ship"), "{e}");
    assert!(!g.legal(1).iter().any(|a| a.contains("device_not_placed")));
    // Its owner still may.
    g.ok(0, json!({"type":"device_not_placed","ship":0,"card":1}));
}

#[test]
fn c16_the_window_for_a_reversal_survives_a_snapshot_in_both_formats() {
    use coffer_core::Format;
    let mut g = bomber(&["proton-bombs"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    // The window for the reversal is part of the state: a restored game still offers it.
    let rs = coffer_core::Adapter::shared(coffer_charges::Charges::new());
    for format in [Format::Binary, Format::Json] {
        let bytes = g.game.snapshot(format).unwrap();
        let mut restored = rs.restore(format, &bytes).unwrap();
        assert_eq!(restored.state_hash(), g.game.state_hash());
        restored
            .apply_json(
                coffer_core::Owner(0),
                r#"{"type":"device_not_placed","ship":0,"card":1}"#,
            )
            .unwrap();
    }
}

// ----- C17 -----

#[test]
fn c17_a_ship_performs_each_action_once_per_round() {
    // The force ace of C14: focus (white), then its ability grants another action; focus again is
    // refused and not listed, the evade is the action left.
    let mut g = ace_focused_then_granted_an_action();
    let e = g.refused(0, json!({"type":"perform","ship":0,"action":"focus"}));
    assert!(
        e.to_string()
            .contains("already performed the focus action this round"),
        "{e}"
    );
    let legal = g.legal(0);
    assert!(!legal.iter().any(|a| a.contains("\"focus\"")), "{legal:?}");
    assert!(legal.iter().any(|a| a.contains("\"evade\"")), "{legal:?}");
    // The next round, the focus is allowed again (a blue maneuver clears the red evade's stress).
    g.ok(0, json!({"type":"perform","ship":0,"action":"evade"}));
    g.finish_round();
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"blue"}));
    g.advance_to(Phase::Activation);
    ship_1_then_ship_0_execute(&mut g);
    g.ok(0, json!({"type":"perform","ship":0,"action":"focus"}));
}

#[test]
fn c17_an_extra_action_with_no_action_left_to_take_cannot_be_paid() {
    // Poe Dameron's bar holds only the focus: once he has focused, his ability has no white action left
    // to grant, so its charge is not spent (C3).
    let mut g = G::squads(&[("poe-dameron", NO)], &[("darth-vader", NO)]);
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.ok(0, json!({"type":"perform","ship":0,"action":"focus"}));
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":0}));
    assert!(e.to_string().contains("no white action left"), "{e}");
    assert_eq!(g.card(0, 0), (1, 1));
}

// ----- C11 -----

/// A Scimitar bomber with `upgrades` (p0) against a bare Darth Vader (p1).
pub fn bomber(upgrades: &[&str]) -> G {
    G::squads(
        &[("scimitar-squadron-pilot", upgrades)],
        &[("darth-vader", NO)],
    )
}

#[test]
fn c11_reload_recovers_one_charge_and_gains_a_disarm_token() {
    let mut g = bomber(&["proton-bombs"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    assert_eq!(g.card(0, 1), (0, 2));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.ok(0, json!({"type":"reload","ship":0,"card":1}));
    assert_eq!(g.card(0, 1), (1, 2), "one charge, not all");
    assert_eq!(g.tokens(0, kind::DISARM), 1);
    g.refused(0, json!({"type":"reload","ship":0,"card":1}));
    g.ok(0, json!({"type":"pass","ship":0}));
    g.advance_to(Phase::Engagement);
    g.ok(1, json!({"type":"pass","ship":1}));
    let e = g.refused(0, json!({"type":"attack","ship":0,"target":1,"weapon":0}));
    assert!(e.to_string().contains("disarmed"), "{e}");
}

#[test]
fn c11_reload_refused_at_the_limit() {
    let mut g = bomber(&["proton-bombs"]);
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    let e = g.refused(0, json!({"type":"reload","ship":0,"card":1}));
    assert!(e.to_string().contains("limit"), "{e}");
}

#[test]
fn c11_reload_only_torpedo_missile_or_device() {
    let mut g = bomber(&["r5-astromech", "concussion-missiles", "proton-torpedoes"]);
    g.advance_to(Phase::System);
    for card in 1..=3 {
        g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":card}}));
    }
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.refused(0, json!({"type":"reload","ship":0,"card":1}));
    g.ok(0, json!({"type":"reload","ship":0,"card":2}));
    assert_eq!(g.card(0, 2), (3, 3));
}

#[test]
fn c11_reload_refused_for_a_ship_without_reload() {
    let mut g = G::luke_vs_vader(&["proton-torpedoes"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.refused(0, json!({"type":"reload","ship":0,"card":1}));
}

#[test]
fn c11_unrecoverable_charge_is_never_recovered() {
    let mut g = bomber(&["conner-nets"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.card(0, 1), (0, 1));
    g.refused(0, json!({"type":"recover","ship":0,"charges":{"card":1}}));
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    let e = g.refused(0, json!({"type":"reload","ship":0,"card":1}));
    assert!(e.to_string().contains("cannot be recovered"), "{e}");
}

#[test]
fn c11_unrecoverable_card_ignores_its_recurring_symbols() {
    let odd = json!({"id": "odd", "name": "Odd", "slot": "device", "charges": {"value": 2, "recurs": 1},
        "unrecoverable": true});
    let mut g = custom(
        json!([tie()]),
        json!([odd]),
        &[("tie", &["odd"])],
        &[("tie", NO)],
        json!({}),
    );
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.finish_round();
    assert_eq!(g.card(0, 1), (1, 2));
}

#[test]
fn refusals_name_the_action_and_the_reason() {
    let mut g = G::luke_vs_vader(NO);
    let e = g.refused(1, json!({"type":"plan","ship":0,"maneuver":"white"}));
    assert!(matches!(e, ActionError::NotYourTurn { .. }), "{e}");
    let e = g.refused(0, json!({"type":"plan","ship":9,"maneuver":"white"}));
    assert!(
        e.to_string()
            .contains("ship 9 does not exist: this game has ships 0-1"),
        "{e}"
    );
    g.refused(0, json!({"type":"plan","ship":0,"maneuver":"green"}));
    g.refused(0, json!({"type":"plan","ship":-1,"maneuver":"white"}));
    g.refused(
        0,
        json!({"type":"plan","ship":0,"maneuver":"white","extra":1}),
    );
}

// ----- C19 -----

/// Luke (ship 0, initiative 5, Force 2) and the academy pilot (ship 1, initiative 1), both planned white;
/// in the System Phase the academy pilot's owner, whose ship has the turn, places Luke in reserve.
fn luke_in_reserve() -> G {
    let mut g = G::squads(&[("luke-skywalker", NO)], &[("academy-pilot", NO)]);
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"white"}));
    g.ok(1, json!({"type":"plan","ship":1,"maneuver":"white"}));
    g.advance_to(Phase::System);
    g.ok(1, json!({"type":"lose","ship":0,"charges":"force"}));
    g.ok(1, json!({"type":"place_in_reserve","ship":0}));
    assert!(g.said("is placed in reserve"));
    assert!(g.state().ships[0].reserve);
    g
}

#[test]
fn c19_a_ship_in_reserve_has_no_dial_no_turn_and_cannot_be_attacked() {
    let mut g = luke_in_reserve();
    // Its dial is set aside, it never gets a turn, and nothing can attack it.
    assert_eq!(g.state().ships[0].planned, None);
    for _ in 0..40 {
        if g.phase() == Phase::End {
            break;
        }
        let s = g.state();
        assert!(
            !matches!(turn(&s), Turn::Ship(0)),
            "a ship in reserve had a turn"
        );
        let legal = g.legal(1);
        assert!(
            legal.iter().all(|a| !a.contains("\"attack\"")),
            "an attack on a ship in reserve was offered: {legal:?}"
        );
        if turn(&s) == Turn::Ship(1) && g.phase() == Phase::Engagement {
            let e = g.refused(1, json!({"type":"attack","ship":1,"target":0,"weapon":0}));
            assert!(e.to_string().contains("in reserve"), "{e}");
        }
        g.step_default_now();
    }
    assert_eq!(g.phase(), Phase::End);
}

#[test]
fn c19_a_ship_in_reserve_still_recovers_recurring_charges_in_the_end_phase() {
    let mut g = luke_in_reserve();
    assert_eq!(g.force(0), (1, 2));
    g.finish_round();
    // "During the End Phase, a ship that is in reserve still removes all circular tokens and recovers
    // charges on all of its cards with recurring charge icons."
    assert_eq!(g.force(0), (2, 2));
    // Still in the game: no win for the other player, and no dial to plan while in reserve.
    assert_eq!(g.phase(), Phase::Planning);
    let e = g.refused(0, json!({"type":"plan","ship":0,"maneuver":"white"}));
    assert!(e.to_string().contains("not assigned a dial"), "{e}");
}

#[test]
fn c19_a_deployed_ship_plans_again_from_the_next_round() {
    let mut g = luke_in_reserve();
    g.ok(1, json!({"type":"deploy","ship":0}));
    assert!(!g.state().ships[0].reserve);
    g.advance_to(Phase::Activation);
    // No dial this round: the deployed ship has no Activation turn, from first to last.
    while g.phase() == Phase::Activation {
        assert!(
            !matches!(turn(&g.state()), Turn::Ship(0)),
            "a turn without a dial"
        );
        g.step_default_now();
    }
    // In the Engagement Phase it is in the play area and has its turn (it may attack).
    let mut engaged = false;
    while g.phase() == Phase::Engagement {
        engaged |= turn(&g.state()) == Turn::Ship(0);
        g.step_default_now();
    }
    assert!(engaged, "the deployed ship had no Engagement turn");
    g.finish_round();
    g.ok(0, json!({"type":"plan","ship":0,"maneuver":"white"}));
}

// ----- C20 -----

/// A CR90 (energy 5, recurring 1) with a cargo upgrade adding 2 energy whose System ability spends 2
/// energy to recover a shield; the other side flies a TIE.
fn cr90_with_energy_upgrade() -> G {
    let cr90 = json!({"id": "cr90", "name": "CR90", "ship": "CR90", "size": "huge", "initiative": 8,
        "attack": 4, "agility": 0, "hull": 18, "shields": {"value": 5, "recurs": 1},
        "energy": {"value": 5, "recurs": 1}, "actions": {"focus": "white"}});
    let battery = json!({"id": "battery", "name": "Shield Battery", "slot": "cargo",
        "energy": {"value": 2}, "huge_only": true,
        "ability": {"timing": "system", "cost": 2, "pays": "energy", "effect": "recover_shield"}});
    let mut g = custom(
        json!([cr90, tie()]),
        json!([battery]),
        &[("cr90", &["battery"])],
        &[("tie", NO)],
        Value::Null,
    );
    g.advance_to(Phase::System);
    g
}

/// In the System Phase the TIE (initiative 1) has the turn first: its owner enters the effects, then it
/// passes and the CR90's turn comes.
fn cr90s_turn_after(g: &mut G, effects: &[Value]) {
    for e in effects {
        g.ok(1, e.clone());
    }
    g.ok(1, json!({"type":"pass","ship":1}));
}

#[test]
fn c20_an_ability_paid_with_energy_spends_it_from_the_ship_card() {
    let mut g = cr90_with_energy_upgrade();
    // The upgrade's energy adds to the ship's one track (C5): 7 of 7.
    assert_eq!(g.energy(0), (7, 7));
    // Nothing to recover: the cost cannot be paid (C3).
    cr90s_turn_after(&mut g, &[]);
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert!(e.to_string().contains("has every shield active"), "{e}");
    g.ok(0, json!({"type":"lose","ship":0,"charges":"shield"}));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.energy(0), (5, 7), "spent from the ship's track");
    assert_eq!(g.track(g.state().ships[0].shields), (5, 5));
}

#[test]
fn c20_too_little_energy_refuses_the_ability_and_a_ship_without_energy_cannot_carry_it() {
    let mut g = cr90_with_energy_upgrade();
    let mut effects = vec![json!({"type":"lose","ship":0,"charges":"shield"})];
    effects.extend((0..6).map(|_| json!({"type":"lose","ship":0,"charges":"energy"})));
    cr90s_turn_after(&mut g, &effects);
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert!(
        e.to_string()
            .contains("has 1 active energy; the ability of"),
        "{e}"
    );
    assert!(
        e.to_string()
            .contains("costs 2 energy, spent from the ship card"),
        "{e}"
    );
    // An energy cost on a card of a ship with no energy capacity is refused at setup.
    let err = tie_with_crew_ability_refused(1, "energy");
    assert!(
        err.contains("costs 1 energy, and the ship's energy capacity is 0"),
        "{err}"
    );
}

//! The charge tracks, clauses C1–C7: each card's charges, spending and losing them, recovering, shared
//! tracks from upgrades, recurring and negative recurring charges at the End Phase; one test (or more) per
//! clause, named after it.

use crate::clauses::{NO, against_a_tie, bomber, custom, tie};
use crate::common::G;
use coffer_charges::Phase;
use coffer_charges::state::kind;
use coffer_core::{Outcome, Owner};
use serde_json::json;

// ----- C1 -----

#[test]
fn c1_every_card_starts_with_its_limit_active() {
    let g = G::squads(
        &[(
            "luke-skywalker",
            &[
                "proton-torpedoes",
                "r2-astromech",
                "kanan-jarrus",
                "shield-upgrade",
            ],
        )],
        &[("poe-dameron", &["intercept-booster", "concussion-missiles"])],
    );
    assert_eq!(g.card(0, 1), (2, 2));
    assert_eq!(g.card(0, 2), (2, 2));
    assert_eq!(g.force(0), (3, 3));
    assert_eq!(g.shields(0), (3, 3));
    assert_eq!(g.card(1, 0), (1, 1), "ship card charges");
    assert_eq!(
        g.card(1, 1),
        (3, 3),
        "negative recurring card starts full too"
    );
    assert_eq!(g.card(1, 2), (3, 3));
}

// ----- C2 -----

#[test]
fn c2_lose_flips_one_charge_of_that_card_only() {
    let mut g = G::luke_vs_vader(&["proton-torpedoes", "r2-astromech"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    assert_eq!(g.card(0, 1), (1, 2));
    assert_eq!(g.card(0, 2), (2, 2), "another card's charges are untouched");
    assert_eq!(g.force(0), (2, 2), "the Force track is untouched");
}

#[test]
fn c2_spending_an_ability_flips_one_of_its_own_charges() {
    let mut g = bomber(&["proton-bombs", "seismic-charges"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.card(0, 1), (1, 2));
    assert_eq!(g.card(0, 2), (2, 2));
}

#[test]
fn c2_losing_with_no_active_charge_changes_nothing() {
    let mut g = G::luke_vs_vader(&["adv-proton-torpedoes"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    assert_eq!(g.card(0, 1), (0, 1));
    assert!(
        g.game
            .events()
            .iter()
            .all(|e| !matches!(e.change, coffer_core::Change::Charges { .. }))
    );
}

// ----- C3 -----

#[test]
fn c3_spend_refused_when_every_charge_of_that_effect_is_inactive() {
    let mut g = G::squads(
        &[("scimitar-squadron-pilot", &["proton-bombs"])],
        &[("darth-vader", NO)],
    );
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert!(e.to_string().contains("C3"), "{e}");
}

#[test]
fn c3_recover_shield_cost_refused_while_all_shields_active() {
    let mut g = G::luke_vs_vader(&["r2-astromech"]);
    g.advance_to(Phase::Activation);
    let e = g.refused(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert!(e.to_string().contains("shield"), "{e}");
    assert_eq!(g.card(0, 1), (2, 2), "the charge was not spent");
    // With a shield down the cost is payable: charge spent, shield recovered, disarm gained.
    g.ok(
        0,
        json!({"type":"suffer_damage","ship":0,"hits":1,"crits":0}),
    );
    assert_eq!(g.shields(0), (1, 2));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":1}));
    assert_eq!(g.shields(0), (2, 2));
    assert_eq!(g.card(0, 1), (1, 2));
    assert_eq!(g.tokens(0, kind::DISARM), 1);
}

#[test]
fn c3_force_not_spent_without_a_focus_result_to_change() {
    let mut g = G::luke_vs_vader(NO);
    g.advance_to(Phase::Engagement);
    // Vader (initiative 6) engages first.
    g.attack(1, 1, 0, 0, [2, 0, 0]);
    g.refused(1, json!({"type":"spend_force"}));
    assert_eq!(g.force(1), (3, 3));
}

#[test]
fn c3_ordnance_attack_refused_without_an_active_charge() {
    let mut g = G::squads(
        &[("luke-skywalker", &["adv-proton-torpedoes"])],
        &[("academy-pilot", NO)],
    );
    g.advance_to(Phase::System);
    // The Academy Pilot (initiative 1) has the first System Phase turn: its player enters the effect.
    g.ok(1, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.advance_to(Phase::Engagement);
    g.refused(0, json!({"type":"attack","ship":0,"target":1,"weapon":1}));
    g.ok(0, json!({"type":"attack","ship":0,"target":1,"weapon":0}));
}

// ----- C4 -----

#[test]
fn c4_full_card_cannot_recover() {
    let mut g = G::luke_vs_vader(&["proton-torpedoes"]);
    g.advance_to(Phase::System);
    let e = g.refused(0, json!({"type":"recover","ship":0,"charges":{"card":1}}));
    assert!(e.to_string().contains("C4"), "{e}");
    g.refused(0, json!({"type":"recover","ship":0,"charges":"force"}));
    g.refused(0, json!({"type":"recover","ship":0,"charges":"shield"}));
}

#[test]
fn c4_recover_flips_one_inactive_charge_and_never_exceeds_the_limit() {
    let mut g = G::luke_vs_vader(&["proton-torpedoes", "r2-astromech"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":2}}));
    g.ok(0, json!({"type":"recover","ship":0,"charges":{"card":1}}));
    assert_eq!(g.card(0, 1), (1, 2));
    assert_eq!(g.card(0, 2), (1, 2), "only the named card recovers");
    g.ok(0, json!({"type":"recover","ship":0,"charges":{"card":1}}));
    assert_eq!(g.card(0, 1), (2, 2));
    g.refused(0, json!({"type":"recover","ship":0,"charges":{"card":1}}));
    assert_eq!(g.card(0, 1), (2, 2));
}

#[test]
fn c4_recover_refused_for_a_card_without_charges() {
    let mut g = G::luke_vs_vader(&["shield-upgrade"]);
    g.advance_to(Phase::System);
    g.refused(0, json!({"type":"recover","ship":0,"charges":{"card":1}}));
    g.refused(0, json!({"type":"recover","ship":0,"charges":"energy"}));
}

// ----- C5 -----

#[test]
fn c5_upgrade_charges_are_spent_from_the_upgrade_not_the_ship_card() {
    let mut g = G::squads(
        &[("poe-dameron", &["proton-torpedoes"])],
        &[("academy-pilot", NO)],
    );
    g.advance_to(Phase::Engagement);
    g.ok(0, json!({"type":"attack","ship":0,"target":1,"weapon":1}));
    assert_eq!(g.card(0, 1), (1, 2), "the torpedo's own charge");
    assert_eq!(g.card(0, 0), (1, 1), "the ship card's charge is untouched");
    let s = g.state();
    assert_eq!(s.attack.unwrap().dice, 4, "the torpedo rolls its own dice");
}

#[test]
fn c5_force_and_shield_capacity_from_upgrades_raise_one_shared_track() {
    let g = G::squads(
        &[(
            "luke-skywalker",
            &["kanan-jarrus", "shield-upgrade", "maul"],
        )],
        &[("academy-pilot", &["shield-upgrade"])],
    );
    let s = g.state();
    let force_tracks = s
        .ledger
        .tracks()
        .iter()
        .filter(|t| t.key().kind == kind::FORCE && t.key().owner == Owner(0))
        .count();
    let shield_tracks = s
        .ledger
        .tracks()
        .iter()
        .filter(|t| t.key().kind == kind::SHIELD && t.key().owner == Owner(0))
        .count();
    assert_eq!((force_tracks, shield_tracks), (1, 1));
    assert_eq!(g.force(0), (4, 4));
    assert_eq!(g.shields(0), (3, 3));
    assert_eq!(
        s.ledger.contributions(s.ships[0].force.unwrap()).count(),
        3,
        "ship card + 2 upgrades"
    );
    assert_eq!(
        g.shields(1),
        (1, 1),
        "a shieldless ship gets a track from its upgrade"
    );
    assert!(s.ships[1].force.is_none());
}

#[test]
fn c5_energy_capacity_from_an_upgrade_raises_the_huge_ships_track() {
    let cr90 = json!({"id": "cr90", "name": "CR90", "ship": "CR90", "size": "huge", "initiative": 8, "attack": 4,
        "agility": 0, "hull": 18, "shields": {"value": 7, "recurs": 2}, "energy": {"value": 5, "recurs": 1}});
    let cells =
        json!({"id": "cells", "name": "Spare Cells", "slot": "cargo", "energy": {"value": 2}});
    let g = custom(
        json!([cr90, tie()]),
        json!([cells]),
        &[("cr90", &["cells"])],
        &[("tie", NO)],
        json!({}),
    );
    assert_eq!(g.energy(0), (7, 7));
}

// ----- C6 -----

#[test]
fn c6_recurring_charge_recovers_one_per_symbol_at_end_phase() {
    // Poe Dameron's charge and ability, with a second white action on the bar to take as red (C17: not
    // the focus again).
    let poe = json!({"id": "poe", "name": "Poe Dameron", "ship": "T-70 X-wing", "size": "small",
        "initiative": 6, "attack": 3, "agility": 2, "hull": 4, "shields": {"value": 3},
        "charges": {"value": 1, "recurs": 1}, "actions": {"focus": "white", "evade": "white"},
        "ability": {"timing": "after_action", "cost": 1, "effect": "extra_action"}});
    let mut g = against_a_tie(poe, "poe");
    g.advance_to(Phase::Activation);
    g.ok(1, json!({"type":"execute","ship":1}));
    g.ok(1, json!({"type":"pass","ship":1}));
    g.ok(0, json!({"type":"execute","ship":0}));
    g.ok(0, json!({"type":"perform","ship":0,"action":"focus"}));
    g.ok(0, json!({"type":"use_ability","ship":0,"card":0}));
    assert_eq!(g.card(0, 0), (0, 1));
    g.ok(0, json!({"type":"perform","ship":0,"action":"evade"}));
    assert_eq!(
        g.tokens(0, kind::STRESS),
        1,
        "the extra action is treated as red"
    );
    g.advance_to(Phase::End);
    assert_eq!(
        g.card(0, 0),
        (0, 1),
        "nothing recovers before the End Phase upkeep"
    );
    g.finish_round();
    assert_eq!(g.card(0, 0), (1, 1));
}

#[test]
fn c6_non_recurring_charge_does_not_recover() {
    let mut g = G::luke_vs_vader(&["proton-torpedoes"]);
    g.advance_to(Phase::System);
    g.ok(0, json!({"type":"lose","ship":0,"charges":{"card":1}}));
    g.finish_round();
    assert_eq!(g.card(0, 1), (1, 2));
}

#[test]
fn c6_end_phase_order_abilities_then_tokens_then_recurrence_then_win_check() {
    // A ship card with one recurring charge and an End-Phase ability spending it.
    let pilot = json!({"id": "ender", "name": "Ender", "ship": "TIE/ln", "size": "small", "initiative": 1,
        "attack": 2, "agility": 3, "hull": 3, "charges": {"value": 1, "recurs": 1}, "actions": {"focus": "white"},
        "ability": {"timing": "end", "cost": 1, "effect": "none"}});
    let mut g = against_a_tie(pilot, "ender");
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.ok(0, json!({"type":"perform","ship":0,"action":"focus"}));
    g.ok(0, json!({"type":"pass","ship":0}));
    g.advance_to(Phase::Engagement);
    // Destroy the enemy during the round: the win check still waits for the End Phase.
    g.ok(
        0,
        json!({"type":"deal_damage_card","ship":1,"faceup":false}),
    );
    g.ok(
        0,
        json!({"type":"deal_damage_card","ship":1,"faceup":false}),
    );
    g.ok(
        0,
        json!({"type":"deal_damage_card","ship":1,"faceup":false}),
    );
    g.ok(0, json!({"type":"pass","ship":0}));
    assert_eq!(g.phase(), Phase::End);
    assert_eq!(
        g.game.outcome(),
        Outcome::Ongoing,
        "no win check before the End Phase upkeep"
    );
    // 1. End-Phase abilities: the focus token is still there, the charge can be spent.
    assert_eq!(g.tokens(0, kind::FOCUS), 1);
    g.ok(0, json!({"type":"use_ability","ship":0,"card":0}));
    assert_eq!(g.card(0, 0), (0, 1));
    g.ok(0, json!({"type":"done"}));
    // 2. tokens removed, 3. the charge spent during the End Phase recurs, 4. the win check.
    let events: Vec<_> = g.game.events().to_vec();
    let expire = events
        .iter()
        .position(|e| matches!(e.change, coffer_core::Change::Expire { .. }))
        .unwrap();
    let recur = events
        .iter()
        .position(|e| {
            matches!(
                e.change,
                coffer_core::Change::Charges {
                    op: coffer_core::ChargeOp::Recur,
                    ..
                }
            )
        })
        .unwrap();
    assert!(
        expire < recur,
        "circular tokens are removed before charges recur"
    );
    assert_eq!(g.tokens(0, kind::FOCUS), 0);
    assert_eq!(g.card(0, 0), (1, 1));
    assert_eq!(
        g.game.outcome(),
        Outcome::Finished {
            winners: vec![Owner(0)],
            scores: vec![1, 0]
        }
    );
}

#[test]
fn c6_circular_tokens_removed_stress_kept() {
    let mut g = G::squads(&[("academy-pilot", NO)], &[("darth-vader", NO)]);
    g.advance_to(Phase::Activation);
    g.ok(0, json!({"type":"execute","ship":0}));
    g.ok(0, json!({"type":"perform","ship":0,"action":"evade"}));
    g.ok(0, json!({"type":"gain_stress","ship":0}));
    g.ok(0, json!({"type":"pass","ship":0}));
    g.advance_to(Phase::End);
    assert_eq!(g.tokens(0, kind::EVADE), 1);
    g.finish_round();
    assert_eq!(g.tokens(0, kind::EVADE), 0);
    assert_eq!(
        g.tokens(0, kind::STRESS),
        1,
        "stress is not a circular token"
    );
}

// ----- C7 -----

#[test]
fn c7_negative_recurring_loses_one_per_symbol() {
    let mut g = G::squads(
        &[("academy-pilot", &["intercept-booster"])],
        &[("darth-vader", NO)],
    );
    assert_eq!(g.card(0, 1), (3, 3));
    g.finish_round();
    assert_eq!(g.card(0, 1), (2, 3));
    g.finish_round();
    g.finish_round();
    assert_eq!(g.card(0, 1), (0, 3));
    g.finish_round();
    assert_eq!(g.card(0, 1), (0, 3), "never below zero");
}

#[test]
fn c7_two_negative_symbols_lose_two() {
    let booster = json!({"id": "b2", "name": "Booster", "slot": "configuration", "charges": {"value": 3, "recurs": -2}});
    let mut g = custom(
        json!([tie()]),
        json!([booster]),
        &[("tie", &["b2"])],
        &[("tie", NO)],
        json!({}),
    );
    g.finish_round();
    assert_eq!(g.card(0, 1), (1, 3));
}

//! S1 Currency / Treasury, S2 income, S3 deploy costs.

use crate::common::*;
use coffer_core::{ActionError, Change, Owner, Refusal};
use coffer_story_acts::{Band, CardType, Zone};

fn last_gain(s: &coffer_story_acts::State, id: coffer_core::AmountId) -> Option<(i64, i64, u64)> {
    s.ledger.events().iter().rev().find_map(|e| match e.change {
        Change::Gain {
            amount,
            before,
            after,
            lost,
        } if amount == id => Some((before, after, lost)),
        _ => None,
    })
}

/// p0's Treasury after it deploys its `card` from a Treasury of `treasury`.
fn treasury_after_deploying(mut s: coffer_story_acts::State, card: &str, treasury: i64) -> i64 {
    let card = find(&s, 0, card);
    set_treasury(&mut s, 0, treasury);
    ok(&mut s, 0, deploy(card));
    s.treasury(Owner(0))
}

#[test]
fn s1_gain_above_twenty_is_lost() {
    let mut s = game(&["windfall"]);
    let card = find(&s, 0, "windfall");
    assert_eq!(s.cards[usize::from(card)].zone, Zone::Hand);
    set_treasury(&mut s, 0, 18);
    ok(&mut s, 0, deploy(card));
    assert_eq!(s.treasury(Owner(0)), 20);
    assert_eq!(
        last_gain(&s, s.seats[0].treasury),
        Some((18, 20, 2)),
        "2 of the 4 are lost and reported"
    );
}

#[test]
fn s1_gain_to_exactly_twenty_loses_nothing() {
    let mut s = game(&["windfall"]);
    let card = find(&s, 0, "windfall");
    set_treasury(&mut s, 0, 16);
    ok(&mut s, 0, deploy(card));
    assert_eq!(last_gain(&s, s.seats[0].treasury), Some((16, 20, 0)));
}

#[test]
fn s1_income_above_cap_is_lost() {
    let mut s = game(&["militia"]);
    set_treasury(&mut s, 1, 19);
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(s.active, 1);
    assert_eq!(
        s.treasury(Owner(1)),
        20,
        "Korriban's income of 3 stops at the cap"
    );
    assert_eq!(last_gain(&s, s.seats[1].treasury), Some((19, 20, 2)));
}

#[test]
fn s1_treasury_cap_is_the_configured_cap() {
    let s = game_with(2, &["windfall"], |c| c.treasury_cap = 10);
    assert_eq!(treasury_after_deploying(s, "windfall", 9), 10);
}

#[test]
fn s1_voluntary_spend_above_treasury_is_refused() {
    let mut s = game(&["orbital_shipyard"]);
    let card = find(&s, 0, "orbital_shipyard");
    set_treasury(&mut s, 0, 3);
    let a = deploy(card);
    assert!(
        !legal(&s, 0).contains(&a),
        "an unaffordable deploy is not listed"
    );
    let e = refused(&mut s, 0, a);
    assert!(
        matches!(
            e,
            ActionError::Refused(Refusal::Insufficient {
                need: 4,
                have: 3,
                ..
            })
        ),
        "{e}"
    );
    assert_eq!(s.treasury(Owner(0)), 3);
    assert_eq!(s.cards[usize::from(card)].zone, Zone::Hand);
}

#[test]
fn s1_spending_exactly_the_treasury_is_allowed() {
    let s = game(&["orbital_shipyard"]);
    assert_eq!(treasury_after_deploying(s, "orbital_shipyard", 4), 0);
}

#[test]
fn s1_required_cost_above_treasury_drains_to_zero() {
    let mut s = game(&["tax_levy"]);
    let card = find(&s, 0, "tax_levy");
    set_treasury(&mut s, 1, 2);
    // Coruscant's 2 Votes against Korriban's 1: p0 has political control.
    ok(&mut s, 0, deploy(card));
    assert_eq!(s.treasury(Owner(1)), 0);
    let paid = s.ledger.events().iter().find_map(|e| match e.change {
        Change::Pay {
            before,
            after,
            shortfall,
            ..
        } => Some((before, after, shortfall)),
        _ => None,
    });
    assert_eq!(paid, Some((2, 0, 1)), "pays 2 of 3, 1 short");
}

#[test]
fn s2_income_from_homeworld_planetary_and_surface_locations() {
    let mut s = game(&["militia", "militia", "militia"]);
    to_play(&mut s, 0, "senate_district"); // planetary, 1
    to_play(&mut s, 0, "mining_outpost"); // surface, 2
    to_play(&mut s, 0, "holocron"); // a device: no income
    to_play(&mut s, 1, "trade_spire"); // p1's planetary: not p0's income
    assert_eq!(s.income(Owner(0)), 3 + 1 + 2);
    set_treasury(&mut s, 0, 0);
    set_treasury(&mut s, 1, 0);
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(s.treasury(Owner(1)), 3 + 1, "p1: Korriban and Trade Spire");
    assert_eq!(s.treasury(Owner(0)), 0, "no income on the opponent's turn");
    ok(&mut s, 1, A::EndTurn {});
    assert_eq!(s.treasury(Owner(0)), 6);
}

#[test]
fn s3_deploy_pays_the_currency_cost_of_every_card_type() {
    let cases = [
        (
            "senate_district",
            CardType::Location,
            Some(Band::Planetary(0)),
        ),
        ("jedi_temple", CardType::Location, Some(Band::Surface(0))),
        ("star_destroyer", CardType::Spacecraft, Some(Band::Space)),
        ("holocron", CardType::Device, None),
        (
            "clone_squad",
            CardType::GroundUnit,
            Some(Band::Planetary(0)),
        ),
        ("senator", CardType::Character, Some(Band::Planetary(0))),
        ("windfall", CardType::Maneuver, None),
        ("tax_levy", CardType::Maneuver, None),
        ("trade_war", CardType::Storyline, None),
    ];
    for (id, t, band) in cases {
        let mut s = game(&["militia"]);
        let card = to_hand(&mut s, 0, id);
        let d = s.def(card).clone();
        assert_eq!(d.card_type, t, "{id}");
        set_treasury(&mut s, 0, 10);
        ok(&mut s, 0, deploy(card));
        let gained = match d.effect {
            Some(coffer_story_acts::Effect::GainCurrency(n)) => i64::from(n),
            _ => 0,
        };
        assert_eq!(
            s.treasury(Owner(0)),
            10 - i64::from(d.cost) + gained,
            "{id} costs {}",
            d.cost
        );
        let c = &s.cards[usize::from(card)];
        if t == CardType::Maneuver {
            assert_eq!(c.zone, Zone::Discard, "{id}");
        } else {
            assert_eq!((c.zone, c.band), (Zone::Play, band), "{id}");
        }
    }
}

#[test]
fn s3_deploy_is_slow_outside_fast_maneuvers() {
    let mut s = game(&["militia"]);
    let card = to_hand(&mut s, 1, "senate_district");
    let e = refused(&mut s, 1, deploy(card));
    assert!(matches!(e, ActionError::NotYourTurn { .. }), "{e}");
}

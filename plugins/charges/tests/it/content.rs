//! The card data: the built-in set loads, has what the issue asks for, and bad entries are named.

use coffer_charges::content::{Content, Size};
use serde_json::json;

#[test]
fn builtin_set_loads_and_covers_the_required_cards() {
    let c = Content::builtin().unwrap();
    assert!(c.pilots.len() + c.upgrades.len() >= 20);
    assert!(
        c.upgrades.iter().any(|u| u.charges.recurs < 0),
        "a negative-recurring card"
    );
    assert!(
        c.upgrades.iter().any(|u| u.unrecoverable),
        "an unrecoverable card"
    );
    assert!(
        c.pilots
            .iter()
            .any(|p| p.size == Size::Huge && p.energy.value > 0),
        "a huge ship"
    );
    assert!(
        c.pilots.iter().any(|p| p.force.value > 0) && c.upgrades.iter().any(|u| u.force.value > 0)
    );
    assert!(
        c.pilots.iter().any(|p| p.charges.value > 0),
        "a ship card with standard charges"
    );
}

fn err(content: serde_json::Value) -> String {
    Content::from_json(&content.to_string())
        .unwrap_err()
        .to_string()
}

#[test]
fn bad_entries_are_named_with_their_field() {
    let e = err(
        json!({"pilots": [], "upgrades": [{"id": "t", "name": "T", "slot": "torpedo",
        "charges": {"value": 1, "recurs": 2}}]}),
    );
    assert!(e.contains("'t'") && e.contains("charges"), "{e}");
    let e = err(
        json!({"pilots": [], "upgrades": [{"id": "t", "name": "T", "slot": "torpedo", "attack": 9}]}),
    );
    assert!(e.contains("attack") && e.contains('9'), "{e}");
    let e = err(
        json!({"pilots": [], "upgrades": [{"id": "t", "name": "T", "slot": "torpedo",
        "ability": {"timing": "system", "cost": 1}}]}),
    );
    assert!(e.contains("ability.cost"), "{e}");
    let e = err(json!({"pilots": [], "upgrades": [{"id": "t", "name": "T", "slot": "warp"}]}));
    assert!(e.contains("warp"), "{e}");
    let u = json!({"id": "t", "name": "T", "slot": "torpedo"});
    let e = err(json!({"pilots": [], "upgrades": [u, u]}));
    assert!(e.contains("twice"), "{e}");
    let e = err(
        json!({"pilots": [{"id": "p", "name": "P", "ship": "S", "size": "small", "initiative": 1,
        "attack": 2, "agility": 2, "hull": 0}], "upgrades": []}),
    );
    assert!(e.contains("'p'") && e.contains("hull"), "{e}");
}

#[test]
fn squads_name_unknown_ids() {
    let rs = coffer_core::Adapter::shared(coffer_charges::Charges::new());
    let config = json!({"squads": [[{"pilot": "nobody"}], [{"pilot": "darth-vader"}]]});
    let e = rs
        .new_game(&coffer_core::Setup::new(2, 1).config(config))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("nobody"), "{e}");
    let config = json!({"squads": [[{"pilot": "darth-vader", "upgrades": ["flux"]}], [{"pilot": "darth-vader"}]]});
    let e = rs
        .new_game(&coffer_core::Setup::new(2, 1).config(config))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("flux"), "{e}");
    let config = json!({"squads": [[{"pilot": "darth-vader"}], [{"pilot": "darth-vader"}]]});
    let e = rs
        .new_game(&coffer_core::Setup::new(3, 1).config(config))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("squads") && e.contains("3 players"), "{e}");
}

#[test]
fn default_squads_serve_two_to_four_players() {
    let rs = coffer_core::Adapter::shared(coffer_charges::Charges::new());
    for players in 2..=4u16 {
        let mut game = rs.new_game(&coffer_core::Setup::new(players, 1)).unwrap();
        for p in 0..players {
            // Four maneuver colours; purple only for the Force users (Luke, Vader).
            let expected = [4, 4, 3, 3][usize::from(p)];
            let n = game.legal_actions(coffer_core::Owner(p));
            assert_eq!(n, expected, "player {p} plans one ship");
        }
    }
}

fn setup_error(config: serde_json::Value) -> String {
    let rs = coffer_core::Adapter::shared(coffer_charges::Charges::new());
    rs.new_game(&coffer_core::Setup::new(2, 1).config(config))
        .err()
        .unwrap()
        .to_string()
}

#[test]
fn absurd_numbers_are_refused_with_their_bound() {
    for rounds in [0, 1001, 4_000_000_000u32] {
        let e = setup_error(json!({ "max_rounds": rounds }));
        assert!(
            e.contains(&format!("`max_rounds` is {rounds}: give 1-1000 rounds")),
            "{e}"
        );
    }
    let pilot = |field: &str, value: serde_json::Value| {
        let mut p = json!({"id": "p", "name": "P", "ship": "S", "size": "small", "initiative": 1,
            "attack": 2, "agility": 2, "hull": 3});
        p[field] = value;
        err(json!({"pilots": [p], "upgrades": []}))
    };
    let e = pilot("hull", json!(41));
    assert!(
        e.contains("'p'") && e.contains("'hull'") && e.contains("1-40"),
        "{e}"
    );
    let e = pilot("initiative", json!(9));
    assert!(e.contains("'initiative'") && e.contains("0-8"), "{e}");
    let e = pilot("shields", json!({"value": 21}));
    assert!(e.contains("'shields'") && e.contains("0-20"), "{e}");
    let e = pilot("name", json!(""));
    assert!(e.contains("'name'"), "{e}");
    // A field of the wrong type is named by its entry.
    let e = pilot("hull", json!(-1));
    assert!(e.contains("pilot 'p'"), "{e}");
}

#[test]
fn squad_errors_name_the_player_the_ship_and_the_range() {
    let five = json!([{"pilot": "academy-pilot"}, {"pilot": "academy-pilot"}, {"pilot": "academy-pilot"},
        {"pilot": "academy-pilot"}, {"pilot": "academy-pilot"}]);
    let e = setup_error(json!({"squads": [[{"pilot": "darth-vader"}], five]}));
    assert!(
        e.contains("`squads`: p1's squad has 5 ships; a squad has 1-4"),
        "{e}"
    );
    let e = setup_error(json!({"squads": [[{"pilot": "nobody"}], [{"pilot": "darth-vader"}]]}));
    assert!(
        e.contains("`squads`: p0's ship 0: unknown pilot 'nobody'; known: luke-skywalker"),
        "{e}"
    );
    let e = setup_error(
        json!({"squads": [[{"pilot": "luke-skywalker", "upgrades": ["quick-release-locks"]}], [{"pilot": "darth-vader"}]]}),
    );
    assert!(
        e.contains("goes only on a huge ship, and 'luke-skywalker' is a small ship"),
        "{e}"
    );
}

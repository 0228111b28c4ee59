//! T19: war suns (locked ship classes, combat dice per ship, a faction's own move values) and the Embers of
//! Muaat's Star Forge.

use crate::support::*;
use coffer_command_tokens::{Action, Config, Content, Pool, State, Step};

/// Muaat (p0), Hacan (p1) and Jol-Nar (p2) on the line galaxy with `ships`, at p0's first turn.
fn muaat(ships: &[(u16, u16, u8, u32)]) -> State {
    start(battlefield_config(["muaat", "hacan", "jolnar"], &[], ships))
}

fn forge(system: u16, class: u8) -> Action {
    Action::StarForge { system, class }
}

fn ships(s: &State, p: u8, system: u16, class: u8) -> u32 {
    s.ships(owner(p), usize::from(system), usize::from(class))
}

#[test]
fn t19_star_forge_spends_a_strategy_token_to_place_two_fighters_or_a_destroyer_by_a_war_sun() {
    let mut s = muaat(&[(A, 0, WAR_SUN, 1), (D, 1, CRUISER, 1)]);
    let l = legal(&s, 0);
    assert!(l.contains(&forge(A, FIGHTER)));
    assert!(l.contains(&forge(A, DESTROYER)));
    assert_eq!(
        l.iter()
            .filter(|a| matches!(a, Action::StarForge { .. }))
            .count(),
        2,
        "only the war sun's system, only the two choices"
    );
    let before = sheet(&s, 0);
    ok(&mut s, 0, forge(A, FIGHTER));
    assert_eq!(ships(&s, 0, A, FIGHTER), 2);
    // The strategy token is spent: it goes to reinforcements.
    assert_eq!(
        sheet(&s, 0),
        [before[0], before[1], before[2] - 1, before[3] + 1]
    );
    // A component action is the turn's action.
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    let mut s = muaat(&[(A, 0, WAR_SUN, 1)]);
    ok(&mut s, 0, forge(A, DESTROYER));
    assert_eq!(ships(&s, 0, A, DESTROYER), 1);
    assert_eq!(ships(&s, 0, A, FIGHTER), 0);
}

#[test]
fn t19_star_forge_needs_a_war_sun_there_a_strategy_token_and_one_of_its_choices() {
    let mut s = muaat(&[(A, 0, WAR_SUN, 1), (B, 0, CRUISER, 1)]);
    let e = refused(&mut s, 0, forge(B, FIGHTER));
    assert_eq!(
        e.to_string(),
        "illegal action: system b holds no War Sun of p0's: Star Forge places ships only where one is"
    );
    let e = refused(&mut s, 0, forge(A, CRUISER));
    assert_eq!(
        e.to_string(),
        "illegal action: Star Forge places Fighter (up to 2) or Destroyer (up to 1), not Cruiser"
    );
    shift_reserve(&mut s, 0, Pool::Strategy, -2);
    assert!(
        !legal(&s, 0)
            .iter()
            .any(|a| matches!(a, Action::StarForge { .. }))
    );
    let e = refused(&mut s, 0, forge(A, FIGHTER));
    assert_eq!(
        e.to_string(),
        "illegal action: Star Forge spends 1 token from the strategy pool, but p0 has 0"
    );
}

#[test]
fn t19_a_faction_without_star_forge_cannot_use_it() {
    let mut s = start(battlefield_config(
        ["sol", "muaat", "jolnar"],
        &[],
        &[(A, 0, WAR_SUN, 1)],
    ));
    let e = refused(&mut s, 0, forge(A, FIGHTER));
    assert_eq!(
        e.to_string(),
        "illegal action: p0's faction, The Federation of Sol, has no Star Forge"
    );
}

#[test]
fn t19_star_forge_places_what_reinforcements_hold() {
    // Nine of Muaat's ten fighters are on the board: one is left to place.
    let mut s = muaat(&[(A, 0, WAR_SUN, 1), (B, 0, FIGHTER, 9)]);
    ok(&mut s, 0, forge(A, FIGHTER));
    assert_eq!(ships(&s, 0, A, FIGHTER), 1);
    assert_eq!(s.ship_reserve(owner(0), usize::from(FIGHTER)), 0);
    // None left: the choice is no longer offered.
    until_turn_of(&mut s, 0);
    assert!(!legal(&s, 0).contains(&forge(A, FIGHTER)));
    assert_eq!(
        refused(&mut s, 0, forge(A, FIGHTER)).to_string(),
        "illegal action: p0 has no Fighter left in reinforcements"
    );
}

#[test]
fn t19_a_destroyer_placed_by_star_forge_is_held_to_the_fleet_limit() {
    // Three fleet tokens; the war sun and two destroyers fill the limit.
    let mut s = muaat(&[(A, 0, WAR_SUN, 1), (A, 0, DESTROYER, 2)]);
    ok(&mut s, 0, forge(A, DESTROYER));
    assert_eq!(
        actor(&s),
        0,
        "the excess is removed before anything else (T7)"
    );
    assert_eq!(
        legal(&s, 0),
        [
            Action::RemoveShip {
                system: A,
                class: DESTROYER
            },
            Action::RemoveShip {
                system: A,
                class: WAR_SUN
            }
        ]
    );
}

#[test]
fn t19_a_war_sun_rolls_three_dice() {
    // Muaat's Prototype War Sun I moves 1: from b into c.
    let mut s = muaat(&[(B, 0, WAR_SUN, 1), (C, 1, CRUISER, 1)]);
    advance(&mut s, 0, C, &[(B, WAR_SUN, 0)]);
    assert_eq!(s.flow.step, Step::Roll);
    let rolls: Vec<Action> = (0..=3).map(|hits| Action::Roll { hits }).collect();
    assert_eq!(legal(&s, 0), rolls);
    assert_eq!(
        refused(&mut s, 0, Action::Roll { hits: 4 }).to_string(),
        "illegal action: p0 rolls 3 dice for their ships in the combat: at most 3 hits"
    );
    ok(&mut s, 0, Action::Roll { hits: 3 });
    // Hits beyond the one cruiser there are lost.
    ok(&mut s, 1, Action::Roll { hits: 0 });
    ok(&mut s, 1, Action::Destroy { class: CRUISER });
    assert_eq!(s.flow.step, Step::Produce);
}

#[test]
fn t19_each_factions_war_sun_moves_its_own_value() {
    // Muaat's war sun (move 1) cannot reach c from a; another player's generic war sun (move 2) can.
    let mut s = muaat(&[(A, 0, WAR_SUN, 1)]);
    ok(&mut s, 0, Action::Tactical { system: C });
    let e = refused(
        &mut s,
        0,
        Action::Move {
            from: A,
            class: WAR_SUN,
            fighters: 0,
        },
    );
    assert_eq!(
        e.to_string(),
        "illegal action: a War Sun moves 1 system, but system a is 2 systems away from system c"
    );
    let mut s = start(battlefield_config(
        ["sol", "muaat", "jolnar"],
        &[],
        &[(A, 0, WAR_SUN, 1)],
    ));
    ok(&mut s, 0, Action::Tactical { system: C });
    ok(
        &mut s,
        0,
        Action::Move {
            from: A,
            class: WAR_SUN,
            fighters: 0,
        },
    );
    assert_eq!(ships(&s, 0, C, WAR_SUN), 1);
}

#[test]
fn t19_only_a_player_whose_faction_or_technology_unlocks_it_produces_a_war_sun() {
    let mut config = battlefield_config(["muaat", "hacan", "jolnar"], &[], &[]);
    config.technologies = vec![vec![], vec!["war-sun".into()], vec![]];
    let mut s = start(config);
    ok(&mut s, 0, Action::Tactical { system: A });
    ok(&mut s, 0, Action::EndMovement);
    assert!(legal(&s, 0).contains(&Action::Produce { class: WAR_SUN }));
    ok(&mut s, 0, Action::Produce { class: WAR_SUN });
    ok(&mut s, 0, Action::Done);
    // Hacan owns the War Sun technology.
    ok(&mut s, 1, Action::Tactical { system: B });
    ok(&mut s, 1, Action::EndMovement);
    ok(&mut s, 1, Action::Produce { class: WAR_SUN });
    ok(&mut s, 1, Action::Done);
    // Jol-Nar does not.
    ok(&mut s, 2, Action::Tactical { system: D });
    ok(&mut s, 2, Action::EndMovement);
    assert!(!legal(&s, 2).contains(&Action::Produce { class: WAR_SUN }));
    assert_eq!(
        refused(&mut s, 2, Action::Produce { class: WAR_SUN }).to_string(),
        "illegal action: p2 cannot produce a War Sun: neither their faction nor a technology they own unlocks it"
    );
}

#[test]
fn t19_war_suns_are_in_a_game_only_when_a_player_has_them_unlocked() {
    let plain = default_game(3);
    assert_eq!(plain.rules.class_count(), 5);
    assert!(plain.rules.classes.iter().all(|c| c.id != "war_sun"));
    let with = game(
        3,
        Config {
            factions: vec!["sol".into(), "muaat".into(), "hacan".into()],
            ..Config::default()
        },
    );
    assert_eq!(with.rules.classes[usize::from(WAR_SUN)].id, "war_sun");
    // The default galaxy gives Muaat its starting war sun and two fighters.
    let home = system(&with, "home-muaat");
    assert_eq!(ships(&with, 1, home, WAR_SUN), 1);
    assert_eq!(ships(&with, 1, home, FIGHTER), 2);
    assert!(with.check_invariants().is_ok());
}

#[test]
fn t19_content_lists_locked_classes_last_and_unlocks_only_locked_ones() {
    let locked_first = r#"[
        { "id": "war_sun", "name": "War Sun", "fleet": true, "reinforcements": 2, "move": 2, "locked": true },
        { "id": "fighter", "name": "Fighter", "fleet": false, "reinforcements": 10 }
    ]"#;
    assert_eq!(
        Content::with_file("ships.json", locked_first)
            .unwrap_err()
            .to_string(),
        "ships.json: entry 'fighter', field 'locked': 'war_sun' is locked and listed before it: locked classes come after every class that is not, so that a game without them keeps the other classes' indices"
    );
    let unlocks_cruiser = r#"[{ "id": "x", "name": "X", "unlocks": ["cruiser"] }]"#;
    assert_eq!(
        Content::with_file("technologies.json", unlocks_cruiser)
            .unwrap_err()
            .to_string(),
        "technologies.json: entry 'x', field 'unlocks': 'cruiser' is not locked: every player may produce it already"
    );
    let no_dice = r#"[{ "id": "fighter", "name": "Fighter", "fleet": false, "reinforcements": 10, "dice": 0 }]"#;
    assert_eq!(
        Content::with_file("ships.json", no_dice)
            .unwrap_err()
            .to_string(),
        "ships.json: entry 'fighter', field 'dice': 0 is out of range: 1 to 10"
    );
}

#[test]
fn t19_random_playouts_with_muaat_keep_every_invariant() {
    let config = playout_config(
        &["muaat", "sol", "hacan", "letnev", "mahact"],
        &[&[], &["war-sun"], &[], &[], &["war-sun"]],
        4,
    );
    let mut forged = 0;
    playouts_keep_invariants(5, &config, 25, |_, a| {
        forged += usize::from(matches!(a, Action::StarForge { .. }));
    });
    assert!(forged > 0, "random play uses Star Forge");
}

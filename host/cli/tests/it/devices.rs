//! C16 through the `coffer` command, as a table plays it: a device dropped, then reported unplaceable.

use crate::support::{coffer, ok};

#[test]
fn c16_a_device_reported_unplaceable_through_the_cli_gets_its_charge_back() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("squads.json");
    std::fs::write(
        &config,
        r#"{"squads":[[{"pilot":"scimitar-squadron-pilot","upgrades":["proton-bombs"]}],
                      [{"pilot":"darth-vader","upgrades":[]}]]}"#,
    )
    .unwrap();
    let game = dir.path().join("g.json");
    let g = game.to_str().unwrap();
    ok(coffer(&[
        "new",
        "charges",
        "--players",
        "2",
        "--seed",
        "5",
        "--config",
        config.to_str().unwrap(),
        "-o",
        g,
    ]));
    let act = |player: &str, action: &str| coffer(&["act", g, "--player", player, action]);
    ok(act("0", r#"{"type":"plan","ship":0,"maneuver":"white"}"#));
    ok(act("1", r#"{"type":"plan","ship":1,"maneuver":"white"}"#));
    let dropped = ok(act("0", r#"{"type":"use_ability","ship":0,"card":1}"#));
    assert!(
        dropped.stdout.contains("2 -> 1 active"),
        "{}",
        dropped.stdout
    );
    let legal = ok(coffer(&["legal", g, "--player", "0"]));
    assert!(
        legal
            .stdout
            .lines()
            .any(|l| l == r#"{"type":"device_not_placed","ship":0,"card":1}"#),
        "{}",
        legal.stdout
    );
    // The other seat cannot report p0's device; the refusal changes nothing.
    let refused = act("1", r#"{"type":"device_not_placed","ship":0,"card":1}"#);
    assert_eq!(refused.code, 1, "{}", refused.stdout);
    assert!(
        refused.stderr.contains("is not p1's ship"),
        "{}",
        refused.stderr
    );
    let reversed = ok(act(
        "0",
        r#"{"type":"device_not_placed","ship":0,"card":1}"#,
    ));
    assert!(
        reversed.stdout.contains("1 -> 2 active"),
        "{}",
        reversed.stdout
    );
    assert!(
        reversed
            .stdout
            .contains("could not be placed: play is reversed"),
        "{}",
        reversed.stdout
    );
    // Too late once anything else happened: a pass, and the ship's System Phase turn is over.
    let dropped = ok(act("0", r#"{"type":"use_ability","ship":0,"card":1}"#));
    assert!(
        dropped.stdout.contains("2 -> 1 active"),
        "{}",
        dropped.stdout
    );
    ok(act("0", r#"{"type":"gain_stress","ship":1}"#));
    let late = act("0", r#"{"type":"device_not_placed","ship":0,"card":1}"#);
    assert_eq!(late.code, 1, "{}", late.stdout);
    assert!(late.stderr.contains("only right after"), "{}", late.stderr);
}

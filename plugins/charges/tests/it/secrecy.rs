//! A planned dial is hidden from everyone but its owner until it is revealed: two games that differ only
//! in one ship's planned maneuver give every other seat and a spectator byte-identical tables, resources
//! and events, action after action, until that ship executes its maneuver; its owner's differ.

use crate::common::audiences;
use coffer_charges::turn::{Turn, turn};
use coffer_charges::{Charges, Phase, State};
use coffer_core::{Adapter, DynGame, Format, Owner, Setup};
use serde_json::{Value, json};

/// What `seat` is shown of a game: its table, its resources and the events of the last action, written
/// out as bytes.
fn shown(game: &mut Box<dyn DynGame>, seat: Option<Owner>) -> [Vec<u8>; 3] {
    [
        serde_json::to_vec(&game.table(seat)).unwrap(),
        serde_json::to_vec(&game.resources(seat)).unwrap(),
        serde_json::to_vec(&game.events_for(seat)).unwrap(),
    ]
}

fn state(game: &dyn DynGame) -> State {
    serde_json::from_slice(&game.snapshot(Format::Json).unwrap()).unwrap()
}

/// The next action of a plain round: every ship plans white (ship `secret` plans `colour`), passes the
/// System Phase, executes and passes, passes the Engagement Phase; players are done with the End Phase.
/// `None` once ship `secret` is about to execute.
fn next(s: &State, secret: usize, colour: &str) -> Option<(u16, Value)> {
    Some(match turn(s) {
        Turn::Planning => {
            let i = (0..s.ships.len())
                .find(|&i| s.alive(i) && s.ships[i].planned.is_none())
                .unwrap();
            let m = if i == secret { colour } else { "white" };
            (
                s.ships[i].owner.0,
                json!({"type":"plan","ship":i,"maneuver":m}),
            )
        }
        Turn::Ship(i) => {
            let sh = &s.ships[i];
            if s.phase() == Phase::Activation && !sh.stage.executed {
                if i == secret {
                    return None;
                }
                (sh.owner.0, json!({"type":"execute","ship":i}))
            } else {
                (sh.owner.0, json!({"type":"pass","ship":i}))
            }
        }
        Turn::End => {
            let p = (0..s.done.len())
                .find(|&p| !s.ledger.is_exhausted(s.done[p]))
                .unwrap();
            (p as u16, json!({"type":"done"}))
        }
        t => panic!("no plain step for {t:?}"),
    })
}

/// Plays the two games side by side and compares what each audience is shown after every action.
fn compare(players: u16, config: Value, secret: usize) {
    let rs = Adapter::shared(Charges::new());
    let setup = Setup::new(players, 5).config(config);
    let mut games = [rs.new_game(&setup).unwrap(), rs.new_game(&setup).unwrap()];
    let owner = state(&*games[0]).ships[secret].owner;
    let mut owner_differed = false;
    let mut steps = 0;
    loop {
        let moves: Vec<Option<(u16, Value)>> = [("white", 0), ("blue", 1)]
            .iter()
            .map(|&(colour, g)| next(&state(&*games[g]), secret, colour))
            .collect();
        let Some((p, action)) = moves[0].clone() else {
            assert!(moves[1].is_none(), "the games went apart");
            break;
        };
        if action["type"] != "plan" {
            assert_eq!(moves[0], moves[1], "the games went apart");
        }
        for (g, m) in moves.iter().enumerate() {
            let (p, a) = m.clone().unwrap();
            games[g]
                .apply_json(Owner(p), &a.to_string())
                .unwrap_or_else(|e| panic!("p{p} {a}: {e}"));
        }
        steps += 1;
        for seat in audiences(players) {
            let [a, b] = &mut games;
            let (left, right) = (shown(a, seat), shown(b, seat));
            if seat == Some(owner) {
                owner_differed |= left != right;
            } else {
                assert!(
                    left == right,
                    "after p{p}'s {action}, {seat:?} can tell the planned maneuver of ship {secret}"
                );
            }
        }
    }
    assert!(
        steps > 2,
        "the round was played up to the secret ship's execution"
    );
    assert!(
        owner_differed,
        "the owner sees the maneuver they planned for ship {secret}"
    );
    // Once the ship executes, its maneuver is public.
    for g in &mut games {
        let i = secret as u8;
        g.apply_json(owner, &json!({"type":"execute","ship":i}).to_string())
            .unwrap();
    }
    let spectator: Vec<String> = games
        .iter()
        .map(|g| serde_json::to_string(&g.table(None)).unwrap())
        .collect();
    assert_ne!(spectator[0], spectator[1], "the revealed dial is public");
}

#[test]
fn a_planned_dial_is_hidden_from_the_other_seats_and_spectators_until_executed() {
    // Luke Skywalker (p0, initiative 5) activates before Darth Vader (p1, initiative 6).
    compare(2, Value::Null, 0);
    compare(2, Value::Null, 1);
}

#[test]
fn each_seat_of_a_larger_game_keeps_its_dials_from_all_the_others() {
    let squads = json!({"squads": [
        [{"pilot": "academy-pilot"}, {"pilot": "wedge-antilles", "upgrades": ["r2-astromech"]}],
        [{"pilot": "darth-vader", "upgrades": ["homing-missiles"]}],
        [{"pilot": "poe-dameron", "upgrades": ["r5-astromech"]}, {"pilot": "academy-pilot"}]
    ]});
    for secret in 0..5 {
        compare(3, squads.clone(), secret);
    }
    for secret in 0..4 {
        compare(4, Value::Null, secret);
    }
}

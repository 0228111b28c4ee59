//! Random playouts: every listed action applies (through `DynGame::apply_legal`), and random actions that
//! are not listed are refused with the state hash unchanged (enumeration complete and sound).

use coffer_charges::content::Color;
use coffer_charges::validate::validate;
use coffer_charges::{Action, ChargeRef, Charges, Config, ShipAction, State};
use coffer_core::{Adapter, DynGame, Format, Owner, Ruleset, Setup};
use proptest::prelude::*;
use serde_json::{Value, json};

fn configs() -> Vec<(u16, Value)> {
    vec![
        (2, Value::Null),
        (4, Value::Null),
        (
            2,
            json!({"squads": [
            [{"pilot": "alderaanian-guard", "upgrades": ["quick-release-locks", "shield-upgrade"]}],
            [{"pilot": "scimitar-squadron-pilot", "upgrades": ["proton-bombs", "conner-nets", "cluster-missiles"]},
             {"pilot": "anakin-skywalker", "upgrades": ["maul"]}]
        ], "max_rounds": 4}),
        ),
        (
            2,
            json!({"squads": [
            [{"pilot": "poe-dameron", "upgrades": ["r5-astromech", "ion-torpedoes"]},
             {"pilot": "academy-pilot", "upgrades": ["intercept-booster"]}],
            [{"pilot": "darth-vader", "upgrades": ["discord-missiles"]},
             {"pilot": "luke-skywalker", "upgrades": ["r2-d2", "kanan-jarrus"]}]
        ], "force_recovery": "one", "max_rounds": 3}),
        ),
    ]
}

fn arb_action() -> impl Strategy<Value = Action> {
    (0u8..18, 0u8..5, 0u8..5, 0u8..4, 0u8..4).prop_map(|(v, a, b, c, d)| {
        let color = [Color::Blue, Color::White, Color::Red, Color::Purple][usize::from(c)];
        let r = [
            ChargeRef::Force,
            ChargeRef::Shield,
            ChargeRef::Energy,
            ChargeRef::Card(b),
        ][usize::from(d)];
        match v {
            0 => Action::Plan {
                ship: a,
                maneuver: color,
            },
            1 => Action::UseAbility { ship: a, card: b },
            2 => Action::Execute { ship: a },
            3 => Action::Perform {
                ship: a,
                action: if c % 2 == 0 {
                    ShipAction::Focus
                } else {
                    ShipAction::Evade
                },
            },
            4 => Action::Reload { ship: a, card: b },
            5 => Action::Pass { ship: a },
            6 => Action::Attack {
                ship: a,
                target: b,
                weapon: c,
            },
            7 => Action::AttackDice {
                hits: a,
                crits: b,
                focus: c,
            },
            8 => Action::DefenceDice {
                evades: a,
                focus: b,
            },
            9 => Action::SpendForce,
            10 => Action::SpendFocus,
            11 => Action::SpendEvade,
            12 => Action::Done,
            13 => Action::SufferDamage {
                ship: a,
                hits: b,
                crits: c,
            },
            14 => Action::DealDamageCard {
                ship: a,
                faceup: c % 2 == 0,
            },
            15 => Action::GainStress { ship: a },
            16 => Action::Lose {
                ship: a,
                charges: r,
            },
            _ => Action::Recover {
                ship: a,
                charges: r,
            },
        }
    })
}

fn listed(game: &mut Box<dyn DynGame>, p: Owner) -> Vec<Action> {
    let n = game.legal_actions(p);
    (0..n)
        .map(|i| serde_json::from_str(&game.legal_action_json(i).unwrap()).unwrap())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn playouts_listed_actions_apply_and_unlisted_are_refused(
        config in 0usize..4,
        seed in any::<u64>(),
        picks in prop::collection::vec((any::<u16>(), any::<u16>(), arb_action(), any::<bool>()), 1..400),
    ) {
        let rs = Adapter::shared(Charges::new());
        let (players, config) = configs()[config].clone();
        let mut game = rs.new_game(&Setup::new(players, seed).config(config)).unwrap();
        for (pp, pick, random, try_random) in picks {
            let actors: Vec<Owner> = (0..players).map(Owner).filter(|&p| game.legal_actions(p) > 0).collect();
            // `to_act` names exactly the players with a legal action.
            prop_assert_eq!(game.to_act().to_vec(), actors.clone());
            if actors.is_empty() {
                prop_assert!(game.outcome() != coffer_core::Outcome::Ongoing, "nobody can act in an ongoing game");
                break;
            }
            let p = actors[usize::from(pp) % actors.len()];
            if try_random {
                let legal = listed(&mut game, p);
                let before = game.state_hash();
                let result = game.apply_json(p, &serde_json::to_string(&random).unwrap());
                if legal.contains(&random) {
                    prop_assert!(result.is_ok(), "listed {:?} refused: {:?}", random, result);
                } else {
                    prop_assert!(result.is_err(), "unlisted {:?} applied", random);
                    prop_assert_eq!(before, game.state_hash());
                    continue;
                }
            } else {
                let n = game.legal_actions(p);
                // Half the time favour the first listed actions (abilities, execute, pass: progress),
                // otherwise uniform (effect inputs and dice dominate the list).
                let i = if pick % 2 == 0 { usize::from(pick / 2) % n.min(6) } else { usize::from(pick / 2) % n };
                let json = game.legal_action_json(i).unwrap();
                let result = game.apply_legal(p, i);
                prop_assert!(result.is_ok(), "listed {} refused: {:?}", json, result);
            }
            prop_assert!(game.check_invariants().is_ok(), "{:?}", game.check_invariants());
            if pick % 5 == 0 {
                // Exhaustive over a bounded universe: an action passes validation exactly when it is listed.
                let s: State = serde_json::from_slice(&game.snapshot(Format::Json).unwrap()).unwrap();
                for p in (0..players).map(Owner) {
                    let legal = listed(&mut game, p);
                    for a in universe() {
                        let ok = validate(&s, p, &a).is_ok();
                        prop_assert_eq!(ok, legal.contains(&a), "{:?} by {}: valid {} listed {}", a, p, ok, !ok);
                    }
                }
            }
        }
    }
}

/// Every action with small arguments (ships and cards 0..=5, dice 0..=6).
pub fn universe() -> Vec<Action> {
    let mut out = Vec::new();
    let colors = [Color::Blue, Color::White, Color::Red, Color::Purple];
    for ship in 0..=5u8 {
        for m in colors {
            out.push(Action::Plan { ship, maneuver: m });
        }
        out.push(Action::Execute { ship });
        out.push(Action::Pass { ship });
        out.push(Action::GainStress { ship });
        out.push(Action::Perform {
            ship,
            action: ShipAction::Focus,
        });
        out.push(Action::Perform {
            ship,
            action: ShipAction::Evade,
        });
        for faceup in [false, true] {
            out.push(Action::DealDamageCard { ship, faceup });
        }
        for card in 0..=5u8 {
            out.push(Action::UseAbility { ship, card });
            out.push(Action::Reload { ship, card });
            for target in 0..=5u8 {
                out.push(Action::Attack {
                    ship,
                    target,
                    weapon: card,
                });
            }
        }
        for r in [ChargeRef::Force, ChargeRef::Shield, ChargeRef::Energy]
            .into_iter()
            .chain((0..=5).map(ChargeRef::Card))
        {
            out.push(Action::Lose { ship, charges: r });
            out.push(Action::Recover { ship, charges: r });
        }
        for hits in 0..=3u8 {
            for crits in 0..=3u8 {
                out.push(Action::SufferDamage { ship, hits, crits });
            }
        }
    }
    for hits in 0..=6u8 {
        for crits in 0..=6u8 {
            for focus in 0..=6u8 {
                out.push(Action::AttackDice { hits, crits, focus });
            }
            out.push(Action::DefenceDice {
                evades: hits,
                focus: crits,
            });
        }
    }
    out.extend([
        Action::SpendForce,
        Action::SpendFocus,
        Action::SpendEvade,
        Action::Done,
    ]);
    out
}

#[test]
fn a_random_playout_finishes_within_max_rounds() {
    let rs = Adapter::shared(Charges::new());
    let mut game = rs
        .new_game(&Setup::new(2, 3).config(json!({"max_rounds": 2})))
        .unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for _ in 0..100_000 {
        let players: Vec<Owner> = (0..2)
            .map(Owner)
            .filter(|&p| game.legal_actions(p) > 0)
            .collect();
        let Some(&p) = players.get((x % 2) as usize % players.len().max(1)) else {
            break;
        };
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let n = game.legal_actions(p);
        game.apply_legal(p, (x % n as u64) as usize).unwrap();
    }
    assert!(matches!(
        game.outcome(),
        coffer_core::Outcome::Finished { .. }
    ));
}

/// The stored ship to act is checked against its derivation: a state that names another ship is a
/// violation, the same state with the derived ship is not.
#[test]
fn a_stored_ship_to_act_that_is_not_the_derived_one_is_a_violation() {
    let rs = Charges::new();
    let mut s = rs.new_game(2, 1, &Config::default()).unwrap();
    for (p, ship) in [(0, 0), (1, 1)] {
        let plan = Action::Plan {
            ship,
            maneuver: Color::White,
        };
        rs.apply(&mut s, Owner(p), &plan).unwrap();
    }
    // System Phase: the lower initiative (Luke Skywalker 5, ship 0, against Darth Vader 6) goes first.
    assert_eq!(s.phase(), coffer_charges::Phase::System);
    assert_eq!(s.current, Some(0));
    assert!(rs.check_invariants(&s).is_ok());
    s.current = Some(1);
    assert!(rs.check_invariants(&s).is_err());
    s.current = None;
    assert!(rs.check_invariants(&s).is_err());
}

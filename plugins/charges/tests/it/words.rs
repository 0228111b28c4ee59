//! Everything a host shows is in the game's words: the example script and random playouts render every
//! table, resource, event (for every seat and a spectator) and refusal with the ruleset's vocabulary, and
//! none of it falls back to a Rust rendering or an undeclared name; every applied action says what it did.

use crate::common::{audiences, names_for, refusal_text, resources_text, table_text, vocabulary};
use crate::playouts::universe;
use coffer_charges::Charges;
use coffer_core::{ActionError, Adapter, DynGame, Names, Outcome, Owner, Setup, Vocabulary};
use serde::Deserialize;
use serde_json::{Value, json};

fn assert_words(text: &str, context: &str) {
    if let Some(bad) = coffer_core::unreadable(text) {
        panic!("{context}: '{bad}' in:\n{text}");
    }
}

/// Actions that cannot be read: each must be refused in words.
fn malformed() -> Vec<String> {
    [
        json!({"type":"plan","ship":-1,"maneuver":"white"}),
        json!({"type":"plan","ship":0,"maneuver":"green"}),
        json!({"type":"fly","ship":0}),
        json!({"type":"done","extra":1}),
        json!({"type":"attack","ship":0,"target":1,"weapon":300}),
        json!("done"),
    ]
    .iter()
    .map(Value::to_string)
    .collect()
}

/// Checks one game's texts for every audience, applies actions and checks their events and refusals.
struct Reader {
    vocabulary: Vocabulary,
    players: u16,
    /// Candidates for refusals, and a tiny generator to pick among them.
    universe: Vec<String>,
    malformed: Vec<String>,
    x: u64,
}

impl Reader {
    fn new(players: u16) -> Reader {
        let universe: Vec<String> = universe()
            .iter()
            .map(|a| serde_json::to_string(a).unwrap())
            .collect();
        Reader {
            vocabulary: vocabulary(),
            players,
            universe,
            malformed: malformed(),
            x: 0x2545_f491_4f6c_dd1d,
        }
    }

    fn next(&mut self) -> u64 {
        self.x ^= self.x << 13;
        self.x ^= self.x >> 7;
        self.x ^= self.x << 17;
        self.x
    }

    /// The table and resources of every audience.
    fn look(&self, game: &dyn DynGame, context: &str) {
        for seat in audiences(self.players) {
            let names = names_for(&self.vocabulary, game, seat);
            assert_words(&table_text(game, seat), context);
            assert_words(&resources_text(game, &names, seat), context);
        }
    }

    /// After an applied action: its events say what happened, in words, to every audience.
    fn events(&self, game: &mut Box<dyn DynGame>, context: &str) -> Vec<Vec<String>> {
        assert!(
            !game.events().is_empty(),
            "{context}: an applied action left no event"
        );
        let mut out = Vec::new();
        for seat in audiences(self.players) {
            let names = names_for(&self.vocabulary, &**game, seat);
            let lines: Vec<String> = game
                .events_for(seat)
                .iter()
                .filter_map(|e| names.event(e, seat))
                .collect();
            assert!(
                !lines.is_empty(),
                "{context}: the action says nothing to {seat:?}"
            );
            for line in &lines {
                assert_words(line, context);
            }
            out.push(lines);
        }
        out
    }

    /// A few random actions and a malformed one, tried on a copy: each refusal is in words.
    fn refusals(&mut self, game: &dyn DynGame, context: &str) {
        let mut picks: Vec<(String, u16)> = (0..3)
            .map(|_| {
                let a = (self.next() % self.universe.len() as u64) as usize;
                let p = (self.next() % u64::from(self.players)) as u16;
                (self.universe[a].clone(), p)
            })
            .collect();
        let m = (self.next() % self.malformed.len() as u64) as usize;
        picks.push((self.malformed[m].clone(), 0));
        let names = names_for(&self.vocabulary, game, None);
        for (json, player) in &picks {
            let player = *player;
            let mut copy = game.clone_game();
            if let Err(e) = copy.apply_json(Owner(player), json) {
                let text = refusal_text(&names, &e);
                assert_words(&text, &format!("{context}: refusal of {json}"));
                // The ruleset's own refusals never echo the action (reading JSON is the adapter's).
                if !matches!(e, ActionError::Malformed(_)) {
                    assert!(!text.contains("{\""), "{context}: {text} echoes the action");
                }
            }
        }
    }
}

#[derive(Deserialize)]
struct Line {
    player: u16,
    action: Value,
}

/// The example script, with what a seat, the other seat and a spectator read of it.
fn script_transcript() -> (Vec<Vec<Vec<String>>>, Box<dyn DynGame>) {
    let rs = Adapter::shared(Charges::new());
    let mut game = rs.new_game(&Setup::new(2, 1)).unwrap();
    let mut reader = Reader::new(2);
    reader.look(&*game, "setup");
    let mut transcript = Vec::new();
    let script = include_str!("../../examples/skirmish.jsonl");
    for (n, line) in script.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let line: Line = serde_json::from_str(line).unwrap();
        let context = format!("script line {}", n + 1);
        reader.refusals(&*game, &context);
        game.apply_json(Owner(line.player), &line.action.to_string())
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        transcript.push(reader.events(&mut game, &context));
        reader.look(&*game, &context);
    }
    (transcript, game)
}

#[test]
fn the_example_script_reads_in_words_for_every_seat_and_spectator() {
    let (transcript, game) = script_transcript();
    // The first line: p0 plans Luke Skywalker's dial in secret.
    let first = &transcript[0];
    assert_eq!(
        first[0],
        ["p0 planned a white maneuver for Luke Skywalker, by p0's Plan"]
    );
    assert_eq!(
        first[1],
        ["p0 planned a dial for Luke Skywalker, by p0's Plan"]
    );
    assert_eq!(first[2], first[1], "a spectator reads what p1 reads");
    // Every seat reads the same public events (the two secret plans aside).
    for audiences in &transcript {
        // The planner alone reads the maneuver; everyone else reads what the spectator reads.
        let spectator = &audiences[2];
        let planner = audiences[..2]
            .iter()
            .position(|lines| lines.iter().any(|l| l.contains(" maneuver for ")));
        for (seat, lines) in audiences[..2].iter().enumerate() {
            if Some(seat) == planner {
                assert_ne!(lines, spectator);
            } else {
                assert_eq!(lines, spectator);
            }
        }
    }
    if std::env::var_os("CHARGES_TRANSCRIPT").is_some() {
        for audiences in &transcript {
            for line in &audiences[1] {
                println!("{line}");
            }
        }
        println!("{}", crate::common::table_text(&*game, Some(Owner(0))));
    }
    let everything: Vec<&String> = transcript.iter().flatten().flatten().collect();
    let has = |text: &str| everything.iter().any(|l| l.contains(text));
    assert!(has(
        "p1's Darth Vader revealed its dial and executed a purple maneuver, by p1's Execute"
    ));
    assert!(has(
        "p1's Darth Vader attacks with an ordnance upgrade: 4 attack dice, by p1's Attack"
    ));
    assert!(has("p0's Luke Skywalker defends, by p1's Attack"));
    assert!(has(
        "p1's Darth Vader rolled hits: 1, crits: 1, focus: 2, by p1's Attack Dice"
    ));
    assert!(has("p1's Darth Vader Homing Missiles charges: spent 1"));
    assert!(has("p0's Luke Skywalker shields: lost 1"));
    assert!(has("p1's Darth Vader is destroyed"));
    assert!(has("p0 wins, with ships in play: 1"));
    assert!(matches!(game.outcome(), Outcome::Finished { .. }));
}

fn configs() -> Vec<(u16, Value)> {
    vec![
        (2, Value::Null),
        (3, Value::Null),
        (4, json!({"max_rounds": 3})),
        (
            2,
            json!({"squads": [
                [{"pilot": "alderaanian-guard", "upgrades": ["quick-release-locks", "shield-upgrade"]}],
                [{"pilot": "scimitar-squadron-pilot", "upgrades": ["proton-bombs", "conner-nets", "cluster-missiles"]},
                 {"pilot": "anakin-skywalker", "upgrades": ["maul"]}]
            ], "max_rounds": 3}),
        ),
        (
            2,
            json!({"squads": [
                [{"pilot": "poe-dameron", "upgrades": ["r5-astromech", "ion-torpedoes"]},
                 {"pilot": "academy-pilot", "upgrades": ["intercept-booster"]},
                 {"pilot": "academy-pilot"}],
                [{"pilot": "darth-vader", "upgrades": ["discord-missiles"]},
                 {"pilot": "luke-skywalker", "upgrades": ["r2-d2", "kanan-jarrus"]}]
            ], "force_recovery": "one", "max_rounds": 3}),
        ),
    ]
}

#[test]
fn random_playouts_read_in_words_for_every_seat_and_spectator() {
    let rs = Adapter::shared(Charges::new());
    for (c, (players, config)) in configs().into_iter().enumerate() {
        for seed in 0..6u64 {
            let mut game = rs
                .new_game(&Setup::new(players, seed).config(config.clone()))
                .unwrap();
            let mut reader = Reader::new(players);
            reader.x ^= seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
            reader.look(&*game, "setup");
            for step in 0..300 {
                let context = format!("config {c}, seed {seed}, action {step}");
                reader.refusals(&*game, &context);
                let acting: Vec<(Owner, usize)> = game
                    .acting()
                    .iter()
                    .map(|a| (a.owner(), a.legal))
                    .filter(|&(_, n)| n > 0)
                    .collect();
                if acting.is_empty() {
                    break;
                }
                let (p, n) = acting[(reader.next() % acting.len() as u64) as usize];
                // Favour the first listed actions (progress) half the time.
                let pick = reader.next();
                let i = if pick.is_multiple_of(2) {
                    (pick / 2) as usize % n.min(6)
                } else {
                    (pick / 2) as usize % n
                };
                game.apply_legal(p, i).unwrap();
                reader.events(&mut game, &context);
                reader.look(&*game, &context);
            }
        }
    }
}

#[test]
fn ships_of_one_player_with_the_same_pilot_are_numbered() {
    let rs = Adapter::shared(Charges::new());
    let config = json!({"squads": [
        [{"pilot": "academy-pilot"}, {"pilot": "academy-pilot"}],
        [{"pilot": "academy-pilot"}]
    ]});
    let game = rs.new_game(&Setup::new(2, 1).config(config)).unwrap();
    let vocabulary = vocabulary();
    let names: Names = names_for(&vocabulary, &*game, None);
    let text = resources_text(&*game, &names, None);
    assert!(
        text.contains("p0's Academy Pilot stress tokens\n"),
        "{text}"
    );
    assert!(
        text.contains("p0's Academy Pilot #2 stress tokens\n"),
        "{text}"
    );
    assert!(
        text.contains("p1's Academy Pilot stress tokens\n"),
        "{text}"
    );
}

//! The scripted three-round game under `examples/`, played as `coffer play` would, line by line.

use coffer_charges::{Charges, State};
use coffer_core::{Adapter, Format, Outcome, Owner, Setup};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    player: u16,
    action: serde_json::Value,
}

#[test]
fn skirmish_script_plays_to_the_expected_end() {
    let script = include_str!("../../examples/skirmish.jsonl");
    let rs = Adapter::shared(Charges::new());
    let mut game = rs.new_game(&Setup::new(2, 1)).unwrap();
    for (n, line) in script
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let line: Line =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("line {}: {e}", n + 1));
        if let Err(e) = game.apply_json(Owner(line.player), &line.action.to_string()) {
            panic!("line {} refused: {e}", n + 1);
        }
    }
    assert_eq!(
        game.outcome(),
        Outcome::Finished {
            winners: vec![Owner(0)],
            scores: vec![1, 0]
        }
    );
    let s: State = serde_json::from_slice(&game.snapshot(Format::Json).unwrap()).unwrap();
    assert_eq!(s.rounds(), 3);
    let track = |t: Option<coffer_core::TrackId>| {
        let t = s.ledger.track(t.unwrap()).unwrap();
        (t.active(), t.limit())
    };
    let luke = &s.ships[0];
    assert_eq!(
        track(luke.cards[1].track),
        (0, 2),
        "both proton torpedoes fired"
    );
    assert_eq!(track(luke.cards[2].track), (1, 2), "R2 Astromech used once");
    assert_eq!(track(luke.force), (2, 2));
    assert_eq!(track(luke.shields), (0, 2));
    assert_eq!(
        (s.ledger.value(luke.facedown), s.ledger.value(luke.faceup)),
        (2, 0)
    );
    let vader = &s.ships[1];
    assert_eq!(
        track(vader.cards[1].track),
        (1, 2),
        "one homing missile fired"
    );
    assert_eq!(
        track(vader.force),
        (2, 3),
        "one Force recovered each End Phase"
    );
    assert!(!s.alive(1));
}

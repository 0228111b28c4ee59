//! Every text a person reads is in the game's words: the example script and random playouts render every
//! table, resource, event (for every seat and a spectator) and refusal with the ruleset's vocabulary, and
//! none of it shows an undeclared name, a Rust rendering, or an action that left nothing to read.

use coffer_core::{
    ActionError, Adapter, DynGame, Names, Outcome, Owner, Ruleset, Setup, Table, Vocabulary,
};
use coffer_story_acts::{Action, Band, CpSplit, StoryActs};

const SCRIPT: &str = include_str!("../../examples/three_acts.jsonl");

#[track_caller]
fn check(text: &str, context: &str) {
    if let Some(why) = coffer_core::unreadable(text) {
        panic!("{context}: `{why}` is not in the game's words: {text}");
    }
}

/// A table in words, as a host would print it.
fn table_text(table: &Table, names: &Names<'_>) -> String {
    let mut out = format!("{} {}", table.round_name, table.round);
    if let Some(phase) = &table.phase {
        out.push_str(&format!(", {}", phase.name));
    }
    if let Some(step) = &table.step {
        out.push_str(&format!(", {}", step.name));
    }
    if let Some(turn) = table.turn {
        out.push_str(&format!("; {}'s turn", names.owner(turn)));
    }
    for m in &table.acting {
        out.push_str(&format!("\n{} may act {}", names.owner(m.seat), m.why));
    }
    for p in &table.pending {
        out.push_str(&format!("\n{}", p.text));
    }
    for s in &table.sections {
        out.push_str(&format!("\n[{}]", s.title));
        for r in &s.rows {
            out.push_str(&format!(
                "\n{} {}: {}",
                names.owner(r.owner),
                r.label,
                r.value
            ));
        }
    }
    out
}

/// A refusal in words, as a host would print it.
fn refusal_text(e: &ActionError, names: &Names<'_>) -> String {
    match e {
        ActionError::Refused(r) => names.refusal(r),
        other => other.to_string(),
    }
}

fn seats(players: u16) -> Vec<Option<Owner>> {
    (0..players).map(|p| Some(Owner(p))).chain([None]).collect()
}

/// Renders everything every audience sees now; `acted`: the last call applied an action, whose events
/// must say something to everyone.
fn render(game: &mut Box<dyn DynGame>, vocabulary: &Vocabulary, acted: bool, context: &str) {
    for seat in seats(game.players()) {
        let resources = game.resources(seat);
        let names = Names::with_resources(vocabulary, &resources);
        let table = game.table(seat);
        check(&table_text(&table, &names), context);
        for r in &resources {
            check(&names.key(r.key()), context);
        }
        let events = game.events_for(seat);
        let lines: Vec<String> = events.iter().filter_map(|e| names.event(e, seat)).collect();
        for line in &lines {
            check(line, context);
        }
        if acted {
            assert!(
                !lines.is_empty(),
                "{context}: the action says nothing to {seat:?}"
            );
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// An action of any kind with numbers around the real range: mostly illegal.
fn any_action(rng: &mut Rng, cards: u16) -> Action {
    let card = (rng.below(u64::from(cards) + 3)) as u16;
    let other = (rng.below(u64::from(cards) + 3)) as u16;
    let band = match rng.below(3) {
        0 => Band::Space,
        1 => Band::Surface(rng.below(5) as u16),
        _ => Band::Planetary(rng.below(5) as u16),
    };
    match rng.below(12) {
        0 => Action::Deploy {
            card,
            target: (rng.below(2) == 0).then_some(other),
            cp: CpSplit::try_from(vec![(other, rng.below(3) as u16)]).expect("one part"),
        },
        1 => Action::CommitVotes { card },
        2 => Action::AddEv { card },
        3 => Action::PushFactor {
            factor: rng.below(5) as u8,
            up: rng.below(2) == 0,
            steps: rng.below(8) as u8,
        },
        4 => Action::UseAbility { card },
        5 => Action::Move { card, to: band },
        6 => Action::Capture {
            location: card,
            unit: other,
        },
        7 => Action::Restore { location: card },
        8 => Action::AdvanceStoryline { card },
        9 => Action::CompleteStoryline { card },
        10 => Action::Discard { card },
        _ => Action::EndTurn {},
    }
}

const MALFORMED: [&str; 6] = [
    r#"{"type":"teleport"}"#,
    r#"{"type":"deploy","card":-1}"#,
    r#"{"type":"deploy","card":70000}"#,
    r#"{"type":"deploy","card":3,"cp":[[1,1],[2,1],[3,1],[4,1],[5,1]]}"#,
    r#"{"type":"move","card":3,"to":"hyperspace"}"#,
    "not json",
];

/// Tries illegal and malformed actions for a random seat and renders each refusal for that seat.
fn refusals(game: &mut Box<dyn DynGame>, vocabulary: &Vocabulary, rng: &mut Rng, context: &str) {
    let players = game.players();
    let p = Owner(rng.below(u64::from(players)) as u16);
    let resources = game.resources(Some(p));
    let names = Names::with_resources(vocabulary, &resources);
    let n = game.legal_actions(p);
    let listed: Vec<String> = (0..n).filter_map(|i| game.legal_action_json(i)).collect();
    for _ in 0..4 {
        let action = any_action(rng, 160);
        let json = serde_json::to_string(&action).expect("json");
        if listed.contains(&json) {
            continue;
        }
        let before = game.state_hash();
        let e = game
            .apply_json(p, &json)
            .expect_err("an unlisted action is refused");
        assert_eq!(game.state_hash(), before);
        check(&refusal_text(&e, &names), &format!("{context}: {json}"));
    }
    let json = MALFORMED[rng.below(MALFORMED.len() as u64) as usize];
    let e = game.apply_json(p, json).expect_err("malformed");
    assert!(matches!(e, ActionError::Malformed(_)), "{json}: {e}");
    check(&refusal_text(&e, &names), &format!("{context}: {json}"));
}

#[test]
fn the_example_script_is_told_in_the_games_words_to_every_seat() {
    let vocabulary = StoryActs::new().describe().vocabulary;
    let ruleset = Adapter::shared(StoryActs::new());
    let mut game = ruleset.new_game(&Setup::new(2, 1)).expect("setup");
    let mut rng = Rng(7);
    render(&mut game, &vocabulary, false, "setup");
    for (n, line) in SCRIPT.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let player = Owner(v["player"].as_u64().expect("player") as u16);
        let context = format!("line {}", n + 1);
        if game.outcome() == Outcome::Ongoing {
            refusals(&mut game, &vocabulary, &mut rng, &context);
        }
        game.apply_json(player, &v["action"].to_string())
            .expect("the script applies");
        render(&mut game, &vocabulary, true, &context);
    }
    assert!(matches!(game.outcome(), Outcome::Finished { .. }));
    let e = game
        .apply_json(Owner(0), r#"{"type":"end_turn"}"#)
        .expect_err("over");
    assert_eq!(e, ActionError::GameOver);
}

#[test]
fn random_playouts_are_told_in_the_games_words_to_every_seat() {
    let vocabulary = StoryActs::new().describe().vocabulary;
    let ruleset = Adapter::shared(StoryActs::new());
    for seed in 0..9u64 {
        let players = 2 + (seed % 3) as u16;
        let mut game = ruleset.new_game(&Setup::new(players, seed)).expect("setup");
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        for step in 0..300 {
            if game.outcome() != Outcome::Ongoing {
                break;
            }
            let context = format!("seed {seed}, {players} players, step {step}");
            if step % 3 == 0 {
                refusals(&mut game, &vocabulary, &mut rng, &context);
            }
            let acting = game.acting().to_vec();
            let movers: Vec<_> = acting.iter().filter(|a| a.legal > 0).collect();
            let mover = movers[rng.below(movers.len() as u64) as usize];
            let p = Owner(mover.player);
            let n = game.legal_actions(p);
            game.apply_legal(p, rng.below(n as u64) as usize)
                .expect("a listed action applies");
            render(&mut game, &vocabulary, true, &context);
        }
    }
}

#[test]
fn the_vocabulary_names_every_number_the_ruleset_uses() {
    use coffer_story_acts::state::{effect, kind, note};
    let v = StoryActs::new().describe().vocabulary;
    assert_eq!(v.round, "Act");
    for k in [
        kind::TREASURY,
        kind::VOTES,
        kind::EV,
        kind::SP,
        kind::CP,
        kind::ACT_WINS,
        kind::FACTOR,
        kind::CARD,
        kind::ABILITY,
        kind::HAND,
    ] {
        assert!(!v.kinds[usize::from(k.0)].name.is_empty(), "kind {k:?}");
    }
    assert_eq!(v.kinds[usize::from(kind::HAND.0)].choice, "discard");
    assert_eq!(v.phases.len(), 5);
    assert!(v.steps.is_empty(), "the game has no steps");
    assert_eq!(v.actions.len(), 12, "one name per action code");
    assert!(v.actions.iter().all(|a| !a.is_empty()));
    assert_eq!(v.effects.len(), effect::COUNT);
    assert!(v.effects.iter().all(|e| !e.is_empty()));
    assert_eq!(v.notes.len(), note::COUNT);
    for (code, n) in v.notes.iter().enumerate() {
        assert!(
            !n.text.is_empty() || !n.redacted.is_empty(),
            "note {code} says nothing"
        );
    }
}

/// The events of the last action as `seat` reads them.
fn lines(game: &mut Box<dyn DynGame>, vocabulary: &Vocabulary, seat: Option<Owner>) -> Vec<String> {
    let names = Names::with_resources(vocabulary, &game.resources(seat));
    game.events_for(seat)
        .iter()
        .filter_map(|e| names.event(e, seat))
        .collect()
}

#[test]
fn notes_say_what_a_player_did_and_a_draw_names_its_card_to_its_owner_alone() {
    let vocabulary = StoryActs::new().describe().vocabulary;
    let ruleset = Adapter::shared(StoryActs::new());
    let config = serde_json::json!({"shuffle_decks": false, "starting_hand": 0,
        "deck": ["militia", "senator", "walker"]});
    let mut game = ruleset
        .new_game(&Setup::new(2, 1).config(config))
        .expect("setup");
    // p0 drew Planetary Militia (#1) in its first Draw Phase.
    game.apply_json(Owner(0), r#"{"type":"deploy","card":1}"#)
        .expect("deploy");
    let all = [Some(Owner(0)), Some(Owner(1)), None];
    for seat in all {
        assert_eq!(
            lines(&mut game, &vocabulary, seat),
            [
                "p0 deploys Planetary Militia (#1), by p0's Deploy",
                "p0's Treasury: spent 1, 7 -> 6, by p0's Deploy",
            ],
            "{seat:?}"
        );
    }
    game.apply_json(Owner(0), r#"{"type":"move","card":1,"to":"space"}"#)
        .expect("move");
    assert!(
        lines(&mut game, &vocabulary, None).contains(
            &"p0's Planetary Militia (#1) moves to the Space Band, by p0's Move".to_owned()
        )
    );
    game.apply_json(Owner(0), r#"{"type":"end_turn"}"#)
        .expect("end turn");
    // p1 drew its Planetary Militia (#5): p1 reads which card, the others that a card was drawn.
    let drew = |lines: &[String]| {
        lines
            .iter()
            .filter(|l| l.contains("draws"))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(
        drew(&lines(&mut game, &vocabulary, Some(Owner(1)))),
        ["p1 draws Planetary Militia (#5), by the Draw Phase"]
    );
    for seat in [Some(Owner(0)), None] {
        assert_eq!(
            drew(&lines(&mut game, &vocabulary, seat)),
            ["p1 draws a card, by the Draw Phase"],
            "{seat:?}"
        );
    }
    let turn = lines(&mut game, &vocabulary, None);
    assert!(
        turn.contains(&"p1's turn begins, by the end of the turn".to_owned()),
        "{turn:?}"
    );
}

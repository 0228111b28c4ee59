//! Readable games: the example script and random playouts rendered for every seat and spectators (tables,
//! resources, events and refusals) with the ruleset's vocabulary, with no undeclared name and no Rust
//! `Debug` text anywhere, and an event that says what happened after every action.

use crate::support::{Rng, random_action};
use coffer_command_tokens::{CommandTokens, vocabulary};
use coffer_core::{
    ActionError, Adapter, DynGame, Event, Names, Outcome, Owner, Ruleset, Seat, Setup, Table,
    Vocabulary,
};

/// Fails if `text` holds a Rust rendering or a name the vocabulary does not declare.
#[track_caller]
pub fn assert_words(context: &str, text: &str) {
    if let Some(bad) = coffer_core::unreadable(text) {
        panic!("{context}: '{bad}' in: {text}");
    }
}

/// Every text of a table, one line each.
pub fn table_text(table: &Table) -> String {
    let mut out = format!("{} {}", table.round_name, table.round);
    for named in [&table.phase, &table.step].into_iter().flatten() {
        out.push('\n');
        out.push_str(&named.name);
    }
    for m in &table.acting {
        out.push_str(&format!("\n{} acts {}", m.seat, m.why));
    }
    for p in &table.pending {
        out.push('\n');
        out.push_str(&p.text);
    }
    for s in &table.sections {
        out.push('\n');
        out.push_str(&s.title);
        for r in &s.rows {
            out.push_str(&format!("\n  {}: {}: {}", r.owner, r.label, r.value));
        }
    }
    out
}

/// A refusal in words, as a host writes it.
pub fn refusal_text(names: &Names, e: &ActionError) -> String {
    match e {
        ActionError::Refused(r) => names.refusal(r),
        other => other.to_string(),
    }
}

/// The audiences: every seat, then a spectator.
fn audiences(game: &dyn DynGame) -> Vec<Seat> {
    (0..game.players())
        .map(|p| Some(Owner(p)))
        .chain([None])
        .collect()
}

/// Renders everything `game` shows after an action, for every audience, and checks the words. Returns
/// the spectator's event lines.
fn render(game: &mut dyn DynGame, vocabulary: &Vocabulary, context: &str) -> Vec<String> {
    let mut spectator = Vec::new();
    for seat in audiences(game) {
        let resources = game.resources(seat);
        let names = Names::with_resources(vocabulary, &resources);
        for r in &resources {
            assert_words(context, r.label());
            assert!(!r.label().is_empty(), "{context}: an empty label");
        }
        let table = game.table(seat);
        let text = table_text(&table);
        assert_words(context, &text);
        assert!(!text.contains('{'), "{context}: a placeholder in {text}");
        let events: Vec<Event> = game.events_for(seat);
        assert!(!events.is_empty(), "{context}: no event for {seat:?}");
        let lines: Vec<String> = events.iter().filter_map(|e| names.event(e, seat)).collect();
        assert!(!lines.is_empty(), "{context}: no event line for {seat:?}");
        for line in &lines {
            assert_words(context, line);
            assert!(!line.contains('{'), "{context}: a placeholder in {line}");
        }
        if seat.is_none() {
            spectator = lines;
        }
    }
    spectator
}

/// Tries a few actions that must be refused (random ones, by the acting player and others, and malformed
/// JSON) and checks their texts.
fn try_refusals(
    game: &mut dyn DynGame,
    vocabulary: &Vocabulary,
    rng: &mut Rng,
    tries: usize,
    context: &str,
) {
    let resources = game.resources(None);
    let names = Names::with_resources(vocabulary, &resources);
    let players = usize::from(game.players());
    for k in 0..tries {
        let who = Owner(rng.below(players) as u16);
        let json = if k % 5 == 4 {
            [
                r#"{"type":"teleport"}"#,
                r#"{"type":"pick"}"#,
                r#"{"type":"pick","card":-1}"#,
                r#""pass""#,
                "[]",
            ][rng.below(5)]
            .to_owned()
        } else {
            serde_json::to_string(&random_action(rng)).unwrap()
        };
        let before = game.state_hash();
        let mut copy = game.clone_game();
        match copy.apply_json(who, &json) {
            Ok(()) => {}
            Err(e) => {
                assert_eq!(copy.state_hash(), before);
                let text = refusal_text(&names, &e);
                if !matches!(e, ActionError::Malformed(_)) {
                    assert_words(&format!("{context}, {who} {json}"), &text);
                }
                assert!(!text.is_empty());
            }
        }
    }
}

#[test]
fn the_example_script_reads_in_words_for_every_seat_and_spectators() {
    let vocabulary = vocabulary();
    let ruleset = Adapter::shared(CommandTokens::new());
    let mut game = ruleset.new_game(&Setup::new(6, 0)).unwrap();
    let mut rng = Rng(6);
    let mut log = Vec::new();
    let script = include_str!("../../examples/six_players.jsonl");
    for (n, line) in script.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let context = format!("line {}", n + 1);
        try_refusals(&mut *game, &vocabulary, &mut rng, 3, &context);
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let player = Owner(v["player"].as_u64().unwrap() as u16);
        game.apply_json(player, &v["action"].to_string())
            .unwrap_or_else(|e| panic!("{context}: {e}"));
        log.extend(render(&mut *game, &vocabulary, &context));
    }
    assert!(matches!(game.outcome(), Outcome::Finished { .. }));
    // Three rounds: the last ends the game, and no fourth begins.
    assert!(log.iter().any(|l| l == "Round 3 begins"));
    assert!(!log.iter().any(|l| l.starts_with("Round 4")));
    assert_eq!(game.table(None).round, 3);
    // A few lines as a reader sees them.
    for expected in [
        "p0 picks Leadership, by p0's strategy card pick",
        "the action phase begins: p0 takes the first turn, by p5's strategy card pick",
        "p0 resolves the primary ability of Leadership, by p0's strategic action",
        "the status phase begins: every command token on the board returns to reinforcements, by p5's pass",
        "the game is over: each player scores the tokens on their command sheet, by p5's redistribution",
    ] {
        assert!(
            log.iter().any(|l| l == expected),
            "no line '{expected}' in:\n{}",
            log.join("\n")
        );
    }
    for fragment in [
        "p2 declines the secondary ability of Diplomacy",
        "redistributes the command sheet: ",
        "moved 1 token from system ",
        "to reinforcements, by the status phase",
        "must remove 1 of ",
        "'s fleet in system #",
        "p0 spends 4 influence to buy 1 command token",
    ] {
        assert!(
            log.iter().any(|l| l.contains(fragment)),
            "no line with '{fragment}' in:\n{}",
            log.join("\n")
        );
    }
}

#[test]
fn random_playouts_read_in_words_for_every_seat_and_spectators() {
    let vocabulary = vocabulary();
    let ruleset = Adapter::shared(CommandTokens::new());
    for (players, seed) in [(3u16, 1u64), (4, 2), (5, 3), (6, 4), (7, 5), (8, 6)] {
        let config = serde_json::json!({ "rounds": 2, "production": 3 });
        let mut game = ruleset
            .new_game(&Setup::new(players, seed).config(config))
            .unwrap();
        let mut rng = Rng(seed);
        let mut steps = 0;
        while game.outcome() == Outcome::Ongoing {
            let context = format!("{players} players, seed {seed}, step {steps}");
            try_refusals(&mut *game, &vocabulary, &mut rng, 2, &context);
            let acting = game.acting().to_vec();
            assert_eq!(acting.len(), 1, "{context}");
            let (p, n) = (Owner(acting[0].player), acting[0].legal);
            game.apply_legal(p, rng.below(n)).unwrap();
            render(&mut *game, &vocabulary, &context);
            steps += 1;
            assert!(steps < 20_000, "the playout does not end");
        }
    }
}

#[test]
fn the_vocabulary_names_every_kind_phase_step_action_effect_and_note() {
    use coffer_command_tokens::{Phase, Step, effect, kind, note};
    let v = vocabulary();
    assert_eq!(v.kinds.len(), usize::from(kind::FRAGMENTS.0) + 1);
    assert_eq!(v.kinds[usize::from(kind::FLEET_LIMIT.0)].choice, "remove");
    for phase in [Phase::Strategy, Phase::Action, Phase::Status, Phase::Agenda] {
        assert!(usize::from(phase.number().unwrap()) < v.phases.len());
    }
    assert_eq!(Phase::Over.number(), None);
    assert_eq!(v.steps.len(), Step::Prerequisites as usize + 1);
    assert_eq!(v.actions.len(), 43, "one name per action code");
    assert_eq!(v.effects.len(), usize::from(effect::STATUS_RETURN) + 1);
    assert_eq!(v.notes.len(), usize::from(note::PREREQUISITES) + 1);
    assert!(v.notes.iter().all(|n| !n.secret), "nothing is hidden");
    assert_eq!(CommandTokens::new().describe().vocabulary, v);
}

#[test]
fn refusals_say_what_was_tried_and_what_is_possible_in_words() {
    let ruleset = Adapter::shared(CommandTokens::new());
    let mut game = ruleset.new_game(&Setup::new(6, 0)).unwrap();
    let refuse = |game: &mut dyn DynGame, p: u16, json: &str| {
        game.apply_json(Owner(p), json).unwrap_err().to_string()
    };
    assert_eq!(
        refuse(&mut *game, 0, r#"{"type":"tactical","system":1}"#),
        "illegal action: a tactical action in system home-letnev is not possible while strategy cards are being picked"
    );
    assert_eq!(
        refuse(&mut *game, 1, r#"{"type":"pick","card":0}"#),
        "it is not p1's turn to act: p0 has to pick a strategy card"
    );
    assert_eq!(
        refuse(&mut *game, 0, r#"{"type":"pick","card":8}"#),
        "illegal action: strategy card #8 does not exist: this game has cards #0 to #7"
    );
    game.apply_json(Owner(0), r#"{"type":"pick","card":0}"#)
        .unwrap();
    assert_eq!(
        refuse(&mut *game, 1, r#"{"type":"pick","card":0}"#),
        "illegal action: Leadership is already held by p0"
    );
    assert_eq!(
        refuse(
            &mut *game,
            1,
            r#"{"type":"redistribute","tactic":1,"fleet":2,"strategy":3}"#
        ),
        "illegal action: redistributing the command sheet as 1 tactic, 2 fleet and 3 strategy is not possible while strategy cards are being picked"
    );
}

//! L-undo: a seat takes back its own last actions with `"~undo"` ([`coffer_core::UNDO`]), applied and
//! logged like any action. In every form (static, native, WebAssembly) and every ruleset: an undo returns
//! the state hash from before the action it takes back; it is refused in words, the game unchanged, for
//! another seat's action, after a draw, after anything hidden was shown, after the game ended; a log
//! with undos replays to the same hashes; and no audience sees a resource through an undone action that
//! it could not see before it (differential, through the host's API alone). Also the host's other two
//! actions: `"~default"` (the ruleset's default move for a seat out of time) and `"~forfeit"`.

use coffer_core::{
    Acting, ActionError, DEFAULT, DynGame, DynRuleset, FORFEIT, Format, Key, Outcome, Owner,
    ResourceView, Setup, UNDO,
};
use coffer_host::wasm::WasmOptions;
use coffer_tests::{BUILTIN, Chooser, builtin_library, static_ruleset, wasm_modules};
use std::collections::BTreeSet;
use std::sync::Arc;

use crate::wasm::{module_of, ruleset_in};

/// The rulesets' forms to compare: static always, native and WebAssembly where built.
pub(crate) fn forms(id: &str, crate_name: &str) -> Vec<(&'static str, Arc<dyn DynRuleset>)> {
    let mut forms = vec![("static", static_ruleset(id).expect("linked"))];
    forms.push((
        "native",
        coffer_tests::runtime_ruleset(&builtin_library(crate_name), id),
    ));
    if let Some(dir) = wasm_modules() {
        forms.push((
            "wasm",
            ruleset_in(&module_of(&dir, crate_name), id, WasmOptions::default()),
        ));
    }
    forms
}

/// The keys of the resources `seat` sees.
fn seen(game: &dyn DynGame, seat: Option<Owner>) -> BTreeSet<Key> {
    game.resources(seat).iter().map(ResourceView::key).collect()
}

/// One of the seats with a legal action now, chosen by `chooser`.
fn random_mover(game: &mut dyn DynGame, chooser: &mut Chooser) -> Option<Acting> {
    let acting: Vec<Acting> = game
        .acting()
        .iter()
        .filter(|a| a.legal > 0)
        .copied()
        .collect();
    acting.get(chooser.below(acting.len().max(1))).copied()
}

/// What one game of random person's actions (applied from JSON) with undos did.
#[derive(Debug, Default, PartialEq)]
struct Played {
    /// Every action applied, as (seat, JSON), undos included: the log a host keeps.
    log: Vec<(Owner, String)>,
    /// The hash after each.
    hashes: Vec<u64>,
    undos: usize,
    refused: usize,
}

/// Plays up to `actions` random legal actions as JSON; after each, the seat that acted tries `"~undo"`
/// one time in three (and re-applies the action when it was taken back), and another seat tries it too.
fn play(ruleset: &dyn DynRuleset, setup: &Setup, actions: usize) -> Played {
    let mut game = ruleset.new_game(setup).unwrap();
    let audiences: Vec<Option<Owner>> = (0..setup.players)
        .map(|p| Some(Owner(p)))
        .chain([None])
        .collect();
    let mut chooser = Chooser::new(setup.seed ^ 0x5eed);
    let mut played = Played::default();
    for step in 0..actions {
        let Some(a) = random_mover(&mut *game, &mut chooser) else {
            break;
        };
        let seat = a.owner();
        let index = chooser.below(a.legal);
        game.legal_actions(seat);
        let json = game.legal_action_json(index).expect("listed");
        let before_hash = game.state_hash();
        let seen_before: Vec<_> = audiences.iter().map(|&s| seen(&*game, s)).collect();
        game.apply_json(seat, &json)
            .unwrap_or_else(|e| panic!("step {step}: {json}: {e}"));
        played.log.push((seat, json.clone()));
        played.hashes.push(game.state_hash().0);
        let after_hash = game.state_hash();
        let table = game.table(None);

        // Another seat may never take it back.
        let other = Owner((seat.0 + 1) % setup.players);
        match game.apply_json(other, UNDO) {
            Err(ActionError::CannotUndo { player, reason }) => {
                assert_eq!(player, other);
                assert!(!reason.is_empty() && !reason.contains("Owner("), "{reason}");
                played.refused += 1;
            }
            other_result => panic!("step {step}: another seat's undo: {other_result:?}"),
        }
        assert_eq!(
            game.state_hash(),
            after_hash,
            "a refused undo changed the game"
        );

        let Some(undo) = table.undo else {
            // Nothing to take back: the seat's own undo is refused too, the game unchanged.
            assert!(matches!(
                game.apply_json(seat, UNDO),
                Err(ActionError::CannotUndo { .. })
            ));
            assert_eq!(game.state_hash(), after_hash);
            played.refused += 1;
            continue;
        };
        assert_eq!(undo.seat, seat, "step {step}: the window is the actor's");
        assert!(game.outcome() == coffer_core::Outcome::Ongoing);
        // Differential: what the action let any audience see, it could see before.
        for (audience, before) in audiences.iter().zip(&seen_before) {
            let after = seen(&*game, *audience);
            assert!(
                after.is_subset(before),
                "step {step}: {json} is undoable but showed {audience:?} {:?}",
                after.difference(before).collect::<Vec<_>>()
            );
        }
        if chooser.below(3) == 0 {
            game.apply_json(seat, UNDO).unwrap();
            played.log.push((seat, UNDO.to_owned()));
            played.hashes.push(game.state_hash().0);
            assert_eq!(game.state_hash(), before_hash, "step {step}: undo");
            assert!(game.events().is_empty(), "an undo answers no events");
            for (audience, before) in audiences.iter().zip(&seen_before) {
                assert_eq!(&seen(&*game, *audience), before);
            }
            played.undos += 1;
            // The same action again, so the game goes on as chosen.
            game.apply_json(seat, &json).unwrap();
            played.log.push((seat, json));
            played.hashes.push(game.state_hash().0);
            assert_eq!(game.state_hash(), after_hash, "step {step}: redo");
        }
    }
    played
}

/// Replays `log` in a new game: the same hash after every entry.
fn replay(ruleset: &dyn DynRuleset, setup: &Setup, played: &Played) {
    let mut game = ruleset.new_game(setup).unwrap();
    for (i, ((seat, json), hash)) in played.log.iter().zip(&played.hashes).enumerate() {
        game.apply_json(*seat, json)
            .unwrap_or_else(|e| panic!("entry {i}: {json}: {e}"));
        assert_eq!(game.state_hash().0, *hash, "entry {i}: {json}");
    }
}

#[test]
fn l_undo_takes_back_a_seats_own_actions_in_every_form_and_replays_exactly() {
    for (id, crate_name) in BUILTIN {
        let forms = forms(id, crate_name);
        let mut undos = 0;
        for seed in 0..4u64 {
            let players =
                static_ruleset(id).unwrap().description().min_players.max(2) + (seed % 2) as u16;
            let setup = Setup::new(players, 1000 + seed);
            let (first, ruleset) = &forms[0];
            let played = play(&**ruleset, &setup, 120);
            undos += played.undos;
            for (name, other) in &forms[1..] {
                assert_eq!(
                    play(&**other, &setup, 120),
                    played,
                    "{id} seed {seed}: {first} and {name} differ"
                );
            }
            for (_, form) in &forms {
                replay(&**form, &setup, &played);
            }
        }
        // Command-tokens places without drawing; story-acts has moves that show nothing. Charges rolls
        // and draws in most actions, so few or none of its actions can be taken back.
        if id != "charges" {
            assert!(undos > 0, "{id}: no action was ever taken back");
        }
    }
}

#[test]
fn l_undo_is_not_kept_by_snapshots_or_clones() {
    let ruleset = static_ruleset("command-tokens").unwrap();
    let setup = Setup::new(3, 7);
    let mut game = ruleset.new_game(&setup).unwrap();
    // The first action that can be taken back.
    let seat = loop {
        let a = game.acting()[0];
        game.legal_actions(a.owner());
        let json = game.legal_action_json(0).unwrap();
        game.apply_json(a.owner(), &json).unwrap();
        if game.table(None).undo.is_some() {
            break a.owner();
        }
    };
    for copy in [
        game.clone_game(),
        ruleset
            .restore(Format::Binary, &game.snapshot(Format::Binary).unwrap())
            .unwrap(),
    ] {
        let mut copy = copy;
        assert_eq!(copy.state_hash(), game.state_hash());
        assert_eq!(copy.table(None).undo, None);
        assert!(matches!(
            copy.apply_json(seat, UNDO),
            Err(ActionError::CannotUndo { .. })
        ));
    }
    // An action applied by index (a playout's) closes the window as well.
    let a = game.acting()[0];
    game.apply_legal(a.owner(), 0).unwrap();
    assert_eq!(game.table(None).undo, None);
}

#[test]
fn l_undo_is_refused_after_a_hidden_card_is_shown() {
    // Story-acts: a card deployed from a hand is shown to everyone; it cannot be taken back.
    let ruleset = static_ruleset("story-acts").unwrap();
    let mut shown = 0;
    for seed in 0..6 {
        let mut game = ruleset.new_game(&Setup::new(2, seed)).unwrap();
        for _ in 0..200 {
            let Some(a) = game.acting().iter().find(|a| a.legal > 0).copied() else {
                break;
            };
            let seat = a.owner();
            let n = game.legal_actions(seat);
            let index = (seed as usize * 31 + shown) % n;
            let json = game.legal_action_json(index).unwrap();
            let before: Vec<_> = [None, Some(Owner(0)), Some(Owner(1))]
                .iter()
                .map(|&s| seen(&*game, s))
                .collect();
            game.apply_json(seat, &json).unwrap();
            let showed = [None, Some(Owner(0)), Some(Owner(1))]
                .iter()
                .zip(&before)
                .any(|(&s, b)| !seen(&*game, s).is_subset(b));
            if showed {
                shown += 1;
                assert_eq!(game.table(None).undo, None, "{json} showed a card");
                let hash = game.state_hash();
                assert!(matches!(
                    game.apply_json(seat, UNDO),
                    Err(ActionError::CannotUndo { .. })
                ));
                assert_eq!(game.state_hash(), hash);
            }
        }
    }
    assert!(shown > 0, "no game showed a card");
}

/// L-timeout: `"~default"` plays the ruleset's own default action (pass, end the turn), one of the seat's
/// legal actions, the same in every form; refused, the game unchanged, where the ruleset has none.
#[test]
fn l_default_plays_one_of_the_seats_legal_actions_in_every_form() {
    for (id, crate_name) in BUILTIN {
        let forms = forms(id, crate_name);
        let players = static_ruleset(id).unwrap().description().min_players.max(2);
        let setup = Setup::new(players, 77);
        let mut patterns = Vec::new();
        for (name, ruleset) in &forms {
            let mut game = ruleset.new_game(&setup).unwrap();
            let mut chooser = Chooser::new(5);
            let mut pattern = Vec::new();
            for step in 0..150 {
                let Some(a) = random_mover(&mut *game, &mut chooser) else {
                    break;
                };
                let seat = a.owner();
                let mut probe = game.clone_game();
                match probe.apply_json(seat, DEFAULT) {
                    Ok(()) => {
                        // The default is one of the seat's legal actions.
                        let hash = probe.state_hash();
                        let legal = (0..a.legal).any(|i| {
                            let mut copy = game.clone_game();
                            copy.apply_legal(seat, i).is_ok() && copy.state_hash() == hash
                        });
                        assert!(legal, "{id} ({name}) step {step}: the default is not legal");
                        pattern.push((step, hash.0));
                    }
                    Err(ActionError::Illegal(reason)) => {
                        assert!(reason.contains("no default action"), "{reason}");
                        assert_eq!(probe.state_hash(), game.state_hash());
                    }
                    Err(other) => panic!("{id} ({name}) step {step}: {other}"),
                }
                game.apply_legal(seat, chooser.below(a.legal)).unwrap();
            }
            assert!(!pattern.is_empty(), "{id} ({name}): no default action ever");
            patterns.push(pattern);
        }
        assert!(
            patterns.windows(2).all(|w| w[0] == w[1]),
            "{id}: forms differ"
        );
    }
}

/// L-forfeit: `"~forfeit"` takes a seat out: in a two-player game of charges or story-acts the other seat
/// wins at once, in every form; with more seats, and in command-tokens, it is refused in words with the
/// game unchanged (hosts then give the seat to a bot).
#[test]
fn l_forfeit_ends_a_two_player_game_for_the_other_seat_and_is_refused_elsewhere() {
    for (id, crate_name) in BUILTIN {
        for (name, ruleset) in forms(id, crate_name) {
            let d = ruleset.description();
            for players in [d.min_players, d.min_players + 1] {
                let mut game = ruleset.new_game(&Setup::new(players, 3)).unwrap();
                let hash = game.state_hash();
                let result = game.apply_json(Owner(1), FORFEIT);
                if players == 2 && id != "command-tokens" {
                    result.unwrap_or_else(|e| panic!("{id} ({name}): {e}"));
                    assert_eq!(
                        game.outcome(),
                        Outcome::Finished {
                            winners: vec![Owner(0)],
                            scores: match game.outcome() {
                                Outcome::Finished { scores, .. } => scores,
                                Outcome::Ongoing => unreachable!(),
                            },
                        },
                        "{id} ({name})"
                    );
                    game.check_invariants().unwrap();
                    assert!(matches!(
                        game.apply_json(Owner(0), FORFEIT),
                        Err(ActionError::GameOver)
                    ));
                } else {
                    let Err(ActionError::Illegal(reason)) = result else {
                        panic!("{id} ({name}) {players} players: {result:?}");
                    };
                    assert!(!reason.contains("Owner("), "{reason}");
                    assert_eq!(game.state_hash(), hash);
                    assert_eq!(game.outcome(), Outcome::Ongoing);
                }
            }
        }
    }
}

//! `DynGame::reset`: a game set up again from a setup, reusing its allocations, is the game `new_game`
//! sets up from that setup, in every form (static, native, WebAssembly) and every ruleset: the same state
//! hash and snapshot, the same players to act, no events, nothing to take back, and the same random
//! playout after it. A refused reset (a player count or configuration `new_game` refuses) answers
//! `new_game`'s error and leaves the game as it was.

use coffer_core::{DynGame, Format, GameRng, Outcome, Setup, SetupError};
use coffer_host::simulate;
use coffer_tests::BUILTIN;

use crate::undo::forms;

/// What a freshly set-up game answers, to compare a reset one with.
fn fingerprint(game: &mut dyn DynGame) -> (u64, Vec<u8>, Vec<(u16, usize)>, usize, Outcome) {
    let acting = game.acting().iter().map(|a| (a.player, a.legal)).collect();
    (
        game.state_hash().0,
        game.snapshot(Format::Binary).expect("a snapshot"),
        acting,
        game.events().len(),
        game.outcome(),
    )
}

/// Plays a random playout of at most `max` actions on `game`: how many it applied and the hash it left.
fn play(game: &mut dyn DynGame, seed: u64, max: u64) -> (u64, u64) {
    let mut rng = GameRng::new(seed);
    let applied = simulate::playout(game, &mut rng, max).expect("listed actions apply");
    (applied, game.state_hash().0)
}

#[test]
fn a_reset_game_is_the_game_new_game_sets_up_in_every_form_and_ruleset() {
    for (id, crate_name) in BUILTIN {
        for (form, ruleset) in forms(id, crate_name) {
            let d = ruleset.description();
            let (min, max) = (d.min_players, d.max_players);
            let mut game = ruleset.new_game(&Setup::new(min, 1)).expect("a game");
            // Played partway, its legal lists and events filled, then set up again: each player count
            // the ruleset supports, several seeds, and a second reset in a row.
            for (round, players) in (min..=max).chain([max, min]).enumerate() {
                let label = format!("{id} ({form}), {players} players, round {round}");
                play(&mut *game, round as u64, 40);
                game.legal_actions(coffer_core::Owner(0));
                let setup = Setup::new(players, 100 + round as u64);
                game.reset(&setup)
                    .unwrap_or_else(|e| panic!("{label}: {e}"));
                let mut fresh = ruleset.new_game(&setup).expect("a game");
                assert_eq!(game.players(), players, "{label}");
                assert_eq!(
                    fingerprint(&mut *game),
                    fingerprint(&mut *fresh),
                    "{label}: the reset game differs from a new one"
                );
                assert!(
                    game.table(Some(coffer_core::Owner(0))).undo.is_none(),
                    "{label}"
                );
                assert_eq!(
                    play(&mut *game, round as u64 ^ 0xabc, 120),
                    play(&mut *fresh, round as u64 ^ 0xabc, 120),
                    "{label}: a playout after the reset went otherwise"
                );
            }
        }
    }
}

#[test]
fn a_refused_reset_answers_new_games_error_and_leaves_the_game_as_it_was() {
    for (id, crate_name) in BUILTIN {
        for (form, ruleset) in forms(id, crate_name) {
            let (min, max) = (
                ruleset.description().min_players,
                ruleset.description().max_players,
            );
            let mut game = ruleset.new_game(&Setup::new(min, 7)).expect("a game");
            play(&mut *game, 7, 25);
            let before = fingerprint(&mut *game);
            let too_many = Setup::new(max + 1, 8);
            let refused = game.reset(&too_many);
            let expected = ruleset.new_game(&too_many).err().expect("refused");
            assert!(
                matches!(refused, Err(SetupError::Players { got, .. }) if got == max + 1),
                "{id} ({form}): {refused:?}"
            );
            assert_eq!(
                refused.err().map(|e| e.to_string()),
                Some(expected.to_string())
            );
            let bad_config = Setup::new(min, 8).config(serde_json::json!({"no such option": 1}));
            let refused = game.reset(&bad_config);
            assert!(
                matches!(refused, Err(SetupError::Config(_))),
                "{id} ({form}): {refused:?}"
            );
            assert_eq!(
                fingerprint(&mut *game),
                before,
                "{id} ({form}): a refused reset changed the game"
            );
            // And it plays on as the same game would.
            let mut twin = ruleset.new_game(&Setup::new(min, 7)).expect("a game");
            play(&mut *twin, 7, 25);
            assert_eq!(
                play(&mut *game, 9, 100),
                play(&mut *twin, 9, 100),
                "{id} ({form})"
            );
        }
    }
}

#[test]
fn a_restored_or_copied_game_resets_like_a_new_one() {
    for (id, crate_name) in BUILTIN {
        for (form, ruleset) in forms(id, crate_name) {
            let min = ruleset.description().min_players;
            let mut played = ruleset.new_game(&Setup::new(min, 3)).expect("a game");
            play(&mut *played, 3, 30);
            let bytes = played.snapshot(Format::Binary).expect("a snapshot");
            let restored = ruleset.restore(Format::Binary, &bytes).expect("restores");
            let copied = played.clone_game();
            let setup = Setup::new(min, 44);
            let mut fresh = ruleset.new_game(&setup).expect("a game");
            let expected = fingerprint(&mut *fresh);
            for (how, mut game) in [("restored", restored), ("copied", copied)] {
                game.reset(&setup)
                    .unwrap_or_else(|e| panic!("{id} ({form}), {how}: {e}"));
                assert_eq!(fingerprint(&mut *game), expected, "{id} ({form}), {how}");
                assert_eq!(
                    play(&mut *game, 5, 60),
                    play(&mut *ruleset.new_game(&setup).expect("a game"), 5, 60),
                    "{id} ({form}), {how}"
                );
            }
        }
    }
}

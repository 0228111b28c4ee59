//! The ruleset over the kernel and the hand-written plain version play the identical game: for the same
//! seed, the same sequence of legal-action counts, the same moves at every step, and the same final
//! scores, for many seeds, every player count and several board sizes; statically linked and loaded from
//! the cdylib. The plain version is reset in place between games, as the bench plays it.

use coffer_core::abi::Acting;
use coffer_core::{Adapter, DynGame, DynRuleset, GameRng, Outcome, Owner, Setup};
use coffer_guide_board::plain::{self, Move};
use coffer_guide_board::{Config, Outposts, TOKENS};
use coffer_host::{Registry, simulate};
use std::path::PathBuf;
use std::sync::Arc;

/// The players at each step and their legal-action counts, and the final scores.
#[derive(Debug, PartialEq)]
struct Trace {
    counts: Vec<(u16, usize)>,
    scores: Vec<i64>,
}

/// A random playout of `game` drawing as `simulate::playout` does, recording each step.
fn kernel_trace(game: &mut dyn DynGame, rng: &mut GameRng) -> Trace {
    let mut counts = Vec::new();
    let mut acting: Vec<Acting> = game.acting().to_vec();
    while let Some(&Acting { player, legal }) = acting.first() {
        assert_eq!(acting.len(), 1, "only the player to act is listed");
        counts.push((player, legal));
        rng.below(1);
        let i = rng.below(legal as u64) as usize;
        acting = game
            .apply_legal_then_acting(Owner(player), i)
            .unwrap_or_else(|e| panic!("listed action {i} of p{player}: {e}"))
            .to_vec();
    }
    let Outcome::Finished { scores, .. } = game.outcome() else {
        panic!("nobody may act but the game is not over")
    };
    Trace { counts, scores }
}

fn plain_trace(game: &mut plain::Game, rng: &mut GameRng) -> Trace {
    let mut counts = Vec::new();
    let mut moves = Vec::new();
    while let Some(player) = game.active() {
        moves.clear();
        game.legal(&mut moves);
        counts.push((player, moves.len()));
        rng.below(1);
        let i = rng.below(moves.len() as u64) as usize;
        game.apply(moves[i]);
    }
    Trace {
        counts,
        scores: game.scores().to_vec(),
    }
}

fn config(sites: u16, rounds: u16) -> Config {
    Config { sites, rounds }
}

fn setup(players: u16, seed: u64, c: &Config) -> Setup {
    Setup::new(players, seed).config(serde_json::to_value(c).unwrap())
}

/// The JSON the ruleset writes for a plain move.
fn json(m: Move) -> String {
    match m {
        Move::Place(site) => format!(r#"{{"type":"place","site":{site}}}"#),
        Move::Shift(from, to) => format!(r#"{{"type":"shift","from":{from},"to":{to}}}"#),
        Move::Harvest => r#"{"type":"harvest"}"#.to_owned(),
        Move::Pass => r#"{"type":"pass"}"#.to_owned(),
    }
}

fn static_ruleset() -> Arc<dyn DynRuleset> {
    Adapter::shared(Outposts)
}

/// The ruleset loaded from this crate's cdylib, which cargo builds beside the test binary
/// (`target/<profile>/deps`).
fn loaded_ruleset() -> Arc<dyn DynRuleset> {
    let exe = std::env::current_exe().unwrap();
    let lib: PathBuf = exe.parent().unwrap().join(format!(
        "{}coffer_guide_board{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(lib.is_file(), "{} was not built", lib.display());
    let mut registry = Registry::new();
    let report = registry.load_file(&lib, None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let entry = registry.get("guide-board").unwrap();
    assert!(matches!(entry.origin, coffer_host::Origin::Library(_)));
    Arc::clone(&entry.ruleset)
}

/// Plays `seed` on both; `hand` is a plain game of the same players and configuration, reset here.
fn assert_agree(
    ruleset: &dyn DynRuleset,
    hand: &mut plain::Game,
    players: u16,
    seed: u64,
    c: &Config,
) {
    let mut game = ruleset.new_game(&setup(players, seed, c)).unwrap();
    let kernel = kernel_trace(&mut *game, &mut GameRng::new(seed));
    hand.reset();
    let plain = plain_trace(hand, &mut GameRng::new(seed));
    assert!(kernel.counts.len() >= usize::from(players) * usize::from(c.rounds));
    assert_eq!(kernel, plain, "{players} players, seed {seed}, {c:?}");
}

#[test]
fn the_kernel_ruleset_and_the_plain_version_list_the_same_counts_and_score_the_same() {
    let ruleset = static_ruleset();
    for players in 2..=6 {
        let c = Config::default();
        let mut hand = plain::Game::new(players, &c);
        for seed in 0..60 {
            assert_agree(&*ruleset, &mut hand, players, seed, &c);
        }
    }
    // Tiny rings (one site has no neighbour, two sites one each), crowded and wide boards, long games
    // that run the score into its cap and tokens out of reinforcements.
    for (sites, rounds) in [(1, 3), (2, 12), (3, 20), (5, 40), (12, 30), (200, 3)] {
        let c = config(sites, rounds);
        for seed in 0..40 {
            let players = 2 + (seed % 5) as u16;
            let mut hand = plain::Game::new(players, &c);
            assert_agree(&*ruleset, &mut hand, players, seed, &c);
        }
    }
}

#[test]
fn the_runtime_loaded_ruleset_plays_the_same_game_as_the_plain_version() {
    let ruleset = loaded_ruleset();
    for players in [2, 4, 6] {
        let c = Config::default();
        let mut hand = plain::Game::new(players, &c);
        for seed in 0..20 {
            assert_agree(&*ruleset, &mut hand, players, seed, &c);
        }
    }
    let c = config(3, 20);
    let mut hand = plain::Game::new(3, &c);
    for seed in 0..10 {
        assert_agree(&*ruleset, &mut hand, 3, seed, &c);
    }
}

#[test]
fn every_listed_action_is_the_plain_versions_move_at_the_same_index() {
    let ruleset = static_ruleset();
    for (seed, c) in (0..12).zip(
        [Config::default(), config(4, 20), config(2, 10)]
            .iter()
            .cycle(),
    ) {
        let mut game = ruleset.new_game(&setup(6, seed, c)).unwrap();
        let mut p = plain::Game::new(6, c);
        let mut rng = GameRng::new(seed);
        let mut moves = Vec::new();
        while let Some(player) = p.active() {
            moves.clear();
            p.legal(&mut moves);
            assert_eq!(game.legal_actions(Owner(player)), moves.len());
            for (i, m) in moves.iter().enumerate() {
                assert_eq!(
                    game.legal_action_json(i),
                    Some(json(*m)),
                    "seed {seed}, move {i}"
                );
            }
            let i = rng.below(moves.len() as u64) as usize;
            game.apply_legal(Owner(player), i).unwrap();
            p.apply(moves[i]);
            assert!(game.check_invariants().is_ok());
            let (reinforcements, on_board, _) = p.tokens(player);
            assert_eq!(reinforcements + on_board, TOKENS);
        }
        assert!(game.acting().is_empty());
    }
}

#[test]
fn the_hosts_playout_and_the_plain_playout_apply_as_many_actions_and_score_the_same() {
    for ruleset in [static_ruleset(), loaded_ruleset()] {
        let c = Config::default();
        let mut p = plain::Game::new(6, &c);
        for seed in 0..30 {
            let mut game = ruleset.new_game(&setup(6, seed, &c)).unwrap();
            let kernel = simulate::playout(&mut *game, &mut GameRng::new(seed), u64::MAX).unwrap();
            p.reset();
            let applied =
                plain::playout(&mut p, &mut GameRng::new(seed), &mut Vec::new(), u64::MAX);
            assert_eq!(kernel, applied, "seed {seed}");
            let Outcome::Finished { scores, .. } = game.outcome() else {
                panic!("seed {seed}: not over")
            };
            assert_eq!(scores, p.scores(), "seed {seed}");
            // Stopped early, both stop at the same step.
            let mut game = ruleset.new_game(&setup(6, seed, &c)).unwrap();
            p.reset();
            let cut = applied / 2;
            assert_eq!(
                simulate::playout(&mut *game, &mut GameRng::new(seed), cut).unwrap(),
                cut
            );
            assert_eq!(
                plain::playout(&mut p, &mut GameRng::new(seed), &mut Vec::new(), cut),
                cut
            );
            assert_eq!(game.acting()[0].legal, {
                let mut m = Vec::new();
                p.legal(&mut m);
                m.len()
            });
        }
    }
}

#[test]
fn a_plain_game_reset_in_place_plays_as_a_new_one() {
    let c = Config::default();
    let mut reused = plain::Game::new(6, &c);
    for seed in 0..10 {
        reused.reset();
        let a = plain_trace(&mut reused, &mut GameRng::new(seed));
        let b = plain_trace(&mut plain::Game::new(6, &c), &mut GameRng::new(seed));
        assert_eq!(a, b, "seed {seed}");
    }
}

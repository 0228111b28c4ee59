//! T20: the agenda phase, the agendas that touch command tokens (Fleet Regulations, Shared Research,
//! Clandestine Operations, Armed Forces Standardization) and the Xxcha Kingdom's Quash.

use crate::support::*;
use coffer_command_tokens::{Action, Config, Phase, Pool, State, Step, Vote};
use coffer_core::Table;

// Agendas of data/agendas.json.
const FLEET_REGULATIONS: u8 = 0;
const SHARED_RESEARCH: u8 = 1;
const CLANDESTINE: u8 = 2;
const STANDARDIZATION: u8 = 3;

/// A game of `factions` with an agenda phase from round 1.
fn agenda_game(factions: &[&str], laws: &[&str]) -> State {
    game(
        factions.len() as u16,
        Config {
            factions: factions.iter().map(|f| f.to_string()).collect(),
            laws: laws.iter().map(|l| l.to_string()).collect(),
            agenda_phase_from: 1,
            ..Config::default()
        },
    )
}

/// Plays the round to its agenda phase: strategic actions with every secondary declined, then passes; in
/// the status phase each gained token goes to the tactic pool and the sheet keeps its counts.
fn to_agenda_phase(s: &mut State) {
    play_to_agenda_phase(s);
    assert_eq!(
        (s.flow.step, actor(s)),
        (Step::Reveal, 0),
        "the speaker reveals"
    );
}

fn reveal(agenda: u8) -> Action {
    Action::RevealAgenda {
        agenda: Some(agenda),
    }
}

fn vote(vote: Vote) -> Action {
    Action::Outcome {
        vote,
        voted_against: coffer_command_tokens::Players(0),
    }
}

/// Reveals an agenda that does nothing to command tokens.
const OTHER: Action = Action::RevealAgenda { agenda: None };

#[test]
fn t20_without_the_option_the_status_phase_ends_the_round() {
    let mut s = default_game(3);
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    finish_action_phase(&mut s);
    while s.flow.phase == Phase::Status {
        let p = actor(&s);
        let a = legal(&s, p)[0];
        ok(&mut s, p, a);
    }
    assert_eq!(s.flow.phase, Phase::Strategy);
    assert!(s.h.agendas.is_empty(), "no agenda cards in play");
}

#[test]
fn t20_the_agenda_phase_follows_the_status_phase_from_the_configured_round() {
    let mut s = game(
        3,
        Config {
            agenda_phase_from: 2,
            ..Config::default()
        },
    );
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    finish_action_phase(&mut s);
    while s.flow.phase == Phase::Status {
        let p = actor(&s);
        let a = legal(&s, p)[0];
        ok(&mut s, p, a);
    }
    assert_eq!(s.flow.phase, Phase::Strategy, "no agenda phase in round 1");
    assert_eq!(s.round(), 2);
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    to_agenda_phase(&mut s);
    assert_eq!(s.round(), 2);
    // Two agendas, then the next round.
    ok(&mut s, 0, OTHER);
    assert_eq!(s.flow.step, Step::Reveal);
    ok(&mut s, 0, OTHER);
    assert_eq!((s.flow.phase, s.round()), (Phase::Strategy, 3));
}

#[test]
fn t20_each_agenda_is_revealed_once_a_game() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    ok(&mut s, 0, reveal(SHARED_RESEARCH));
    assert_eq!(s.flow.step, Step::Outcome);
    assert_eq!(
        legal(&s, 0),
        [vote(Vote::For), vote(Vote::Against)],
        "For or Against, as the table voted"
    );
    ok(&mut s, 0, vote(Vote::For));
    assert_eq!(s.flow.step, Step::Reveal);
    assert!(!legal(&s, 0).contains(&reveal(SHARED_RESEARCH)));
    assert_eq!(
        refused(&mut s, 0, reveal(SHARED_RESEARCH)).to_string(),
        "illegal action: Shared Research has already been revealed this game"
    );
    assert_eq!(
        refused(&mut s, 0, reveal(9)).to_string(),
        "illegal action: agenda #9 does not exist: this game has agendas #0 to #8"
    );
    let mut table = Table::new(None);
    s.fill_table(&mut table);
    let section = |title: &str| {
        table
            .sections
            .iter()
            .find(|s| s.title == title)
            .map(|s| {
                s.rows
                    .iter()
                    .map(|r| format!("{}: {}", r.label, r.value))
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
    };
    assert_eq!(section("Laws in play"), ["Shared Research: in play"]);
    assert_eq!(
        section("Agendas"),
        [
            "Fleet Regulations: in the agenda deck",
            "Shared Research: revealed",
            "Clandestine Operations: in the agenda deck",
            "Armed Forces Standardization: in the agenda deck",
            "Minister of War: in the agenda deck",
            "Galactic Crisis Pact: in the agenda deck",
            "Wormhole Research: in the agenda deck",
            "Wormhole Reconstruction: in the agenda deck",
            "Research Grant Reallocation: in the agenda deck"
        ]
    );
}

#[test]
fn t20_fleet_regulations_for_caps_every_fleet_pool_at_four_from_then_on() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    // p1 holds 6 fleet tokens: 2 return to reinforcements when the law comes into play.
    shift_reserve(&mut s, 1, Pool::Fleet, 3);
    let before = sheet(&s, 1);
    assert_eq!(before[1], 6);
    ok(&mut s, 0, reveal(FLEET_REGULATIONS));
    ok(&mut s, 0, vote(Vote::For));
    assert_eq!(s.fleet_pool_max(), Some(4));
    assert_eq!(sheet(&s, 1), [before[0], 4, before[2], before[3] + 2]);
    assert_eq!(sheet(&s, 0)[1], 3, "under the maximum: nothing changes");
    // From then on no fleet pool takes a fifth token.
    let e = s.own_fleet_max(owner(1));
    assert_eq!(e, Some(4));
}

#[test]
fn t20_fleet_regulations_against_places_a_token_from_reinforcements_in_each_fleet_pool() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    // p2's reinforcements are empty: nothing is placed for them (T3).
    let rest = sheet(&s, 2)[3] as i32;
    shift_reserve(&mut s, 2, Pool::Strategy, rest);
    let before = [0, 1, 2].map(|p| sheet(&s, p));
    ok(&mut s, 0, reveal(FLEET_REGULATIONS));
    ok(&mut s, 0, vote(Vote::Against));
    for p in [0, 1] {
        let b = before[usize::from(p)];
        assert_eq!(sheet(&s, p), [b[0], b[1] + 1, b[2], b[3] - 1]);
    }
    assert_eq!(sheet(&s, 2), before[2]);
    assert_eq!(s.fleet_pool_max(), None, "Against puts no law in play");
}

#[test]
fn t20_clandestine_operations_for_each_player_returns_two_tokens_of_their_choice() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    let before = [0, 1, 2].map(|p| sheet(&s, p));
    ok(&mut s, 0, reveal(CLANDESTINE));
    ok(&mut s, 0, vote(Vote::For));
    // From the speaker clockwise, each chooses the pools.
    for p in [0u8, 1, 2] {
        assert_eq!((s.flow.step, actor(&s)), (Step::ReturnTokens, p));
        ok(&mut s, p, Action::ReturnToken { pool: Pool::Tactic });
        ok(
            &mut s,
            p,
            Action::ReturnToken {
                pool: Pool::Strategy,
            },
        );
        let b = before[usize::from(p)];
        assert_eq!(sheet(&s, p), [b[0] - 1, b[1], b[2] - 1, b[3] + 2]);
    }
    assert_eq!(s.flow.step, Step::Reveal, "the second agenda");
}

#[test]
fn t20_clandestine_operations_against_returns_a_fleet_token_each_and_the_fleet_limit_applies() {
    // Letnev's home holds a dreadnought, a carrier and a destroyer: with 2 fleet tokens (and Armada's
    // +2) still within the limit; Sol's two carriers and a destroyer exceed 2.
    let mut s = agenda_game(&["letnev", "sol", "hacan"], &[]);
    to_agenda_phase(&mut s);
    let before = [0, 1, 2].map(|p| sheet(&s, p));
    ok(&mut s, 0, reveal(CLANDESTINE));
    ok(&mut s, 0, vote(Vote::Against));
    for p in [0, 1, 2] {
        let b = before[usize::from(p)];
        assert_eq!(sheet(&s, p), [b[0], b[1] - 1, b[2], b[3] + 1]);
    }
    // T7: Sol must remove a ship before anything else.
    assert_eq!(actor(&s), 1);
    assert!(matches!(legal(&s, 1)[0], Action::RemoveShip { .. }));
}

#[test]
fn t20_shared_research_against_places_a_token_in_each_home_system_if_able() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    let homes = ["home-sol", "home-hacan", "home-jolnar"].map(|id| usize::from(system(&s, id)));
    let rest = sheet(&s, 2)[3] as i32;
    shift_reserve(&mut s, 2, Pool::Strategy, rest);
    ok(&mut s, 0, reveal(SHARED_RESEARCH));
    ok(&mut s, 0, vote(Vote::Against));
    assert!(s.has_token(owner(0), homes[0]));
    assert!(s.has_token(owner(1), homes[1]));
    assert!(
        !s.has_token(owner(2), homes[2]),
        "no token in reinforcements: none placed"
    );
}

#[test]
fn t20_armed_forces_standardization_brings_the_elected_players_pools_to_3_3_2() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    // p2: 6 tactic, 1 fleet, 0 strategy.
    shift_reserve(&mut s, 2, Pool::Fleet, -2);
    let strategy = sheet(&s, 2)[2] as i32;
    shift_reserve(&mut s, 2, Pool::Strategy, -strategy);
    let tactic = sheet(&s, 2)[0] as i32;
    shift_reserve(&mut s, 2, Pool::Tactic, 6 - tactic);
    ok(&mut s, 0, reveal(STANDARDIZATION));
    let electable: Vec<Action> = (0..3).map(|player| Action::Elect { player }).collect();
    assert_eq!(legal(&s, 0), electable);
    assert_eq!(
        refused(&mut s, 0, vote(Vote::For)).to_string(),
        "illegal action: Armed Forces Standardization elects a player: its outcome is not For or Against"
    );
    ok(&mut s, 0, Action::Elect { player: 2 });
    assert_eq!(&sheet(&s, 2)[..3], [3, 3, 2]);
    assert_eq!(
        sheet(&s, 2).iter().sum::<u32>(),
        16 - s.board_tokens(owner(2))
    );
}

#[test]
fn t20_quash_spends_a_strategy_token_to_discard_the_agenda_and_another_is_revealed() {
    let mut s = agenda_game(&["sol", "xxcha", "hacan"], &[]);
    to_agenda_phase(&mut s);
    let before = sheet(&s, 1);
    ok(&mut s, 0, reveal(FLEET_REGULATIONS));
    assert_eq!((s.flow.step, actor(&s)), (Step::Quash, 1));
    assert_eq!(legal(&s, 1), [Action::Quash, Action::NoQuash]);
    ok(&mut s, 1, Action::Quash);
    assert_eq!(
        sheet(&s, 1),
        [before[0], before[1], before[2] - 1, before[3] + 1]
    );
    // Discarded: the speaker reveals another, which may be quashed in turn.
    assert_eq!((s.flow.step, actor(&s)), (Step::Reveal, 0));
    assert!(!legal(&s, 0).contains(&reveal(FLEET_REGULATIONS)));
    ok(&mut s, 0, reveal(SHARED_RESEARCH));
    ok(&mut s, 1, Action::NoQuash);
    assert_eq!(s.flow.step, Step::Outcome);
    assert_eq!(
        s.fleet_pool_max(),
        None,
        "the quashed law never came into play"
    );
}

#[test]
fn t20_quash_is_offered_only_with_a_strategy_token() {
    let mut s = agenda_game(&["sol", "xxcha", "hacan"], &[]);
    to_agenda_phase(&mut s);
    let strategy = sheet(&s, 1)[2] as i32;
    shift_reserve(&mut s, 1, Pool::Strategy, -strategy);
    ok(&mut s, 0, reveal(FLEET_REGULATIONS));
    assert_eq!(s.flow.step, Step::Outcome);
}

#[test]
fn t20_a_law_over_captured_tokens_lets_the_mahact_player_choose_each_token_that_leaves() {
    let mut s = agenda_game(&["mahact", "sol", "hacan"], &[]);
    to_agenda_phase(&mut s);
    // Test set-up: Mahact holds one token of each other player and 3 of its own in the fleet pool, and
    // one more of its own: 6 tokens, 2 over Fleet Regulations' 4.
    let zone = s.h.captured[0].expect("Mahact's zone");
    for q in [1, 2] {
        s.ledger
            .move_tokens(
                owner(q),
                s.h.reinforcements,
                zone,
                1,
                coffer_core::Cause::Setup,
            )
            .unwrap();
    }
    shift_reserve(&mut s, 0, Pool::Fleet, 1);
    assert_eq!(s.fleet_tokens(owner(0)), 6);
    ok(&mut s, 0, reveal(FLEET_REGULATIONS));
    ok(&mut s, 0, vote(Vote::For));
    assert_eq!((s.flow.step, actor(&s)), (Step::Release, 0));
    ok(&mut s, 0, Action::Release { player: 2 });
    assert_eq!(s.flow.step, Step::Release, "still one over");
    ok(&mut s, 0, Action::Release { player: 0 });
    assert_eq!(s.fleet_tokens(owner(0)), 4);
    assert_eq!(s.flow.step, Step::Reveal);
    assert!(s.holds_token_of(owner(0), owner(1)));
    assert!(!s.holds_token_of(owner(0), owner(2)));
}

#[test]
fn t20_random_playouts_with_agendas_keep_every_invariant() {
    let config = Config {
        factions: strings(&["xxcha", "mahact", "sol", "muaat", "letnev"]),
        agenda_phase_from: 1,
        rounds: 4,
        ..Config::default()
    };
    let (mut revealed, mut quashed) = (0, 0);
    playouts_keep_invariants(5, &config, 30, |_, a| {
        revealed += usize::from(matches!(a, Action::RevealAgenda { agenda: Some(_) }));
        quashed += usize::from(a == Action::Quash);
    });
    assert!(
        revealed > 0 && quashed > 0,
        "random play reaches the agendas"
    );
}

// ----- T24 -----

const MINISTER_OF_WAR: u8 = 4;
const CRISIS_PACT: u8 = 5;
const WORMHOLE_RESEARCH: u8 = 6;

#[test]
fn t24_minister_of_war_lets_its_holder_return_a_board_token_and_act_again() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    ok(&mut s, 0, reveal(MINISTER_OF_WAR));
    ok(&mut s, 0, Action::Elect { player: 1 });
    assert_eq!(s.flow.minister, 1);
    ok(&mut s, 0, OTHER);
    // Round 2: p1 activates a system; at the end of that turn the card may be discarded.
    assert_eq!(s.flow.phase, Phase::Strategy);
    pick(&mut s, &[1, 0, 2, 3, 4, 5]);
    assert_eq!(actor(&s), 1, "p1 holds Leadership");
    let target = free_system(&s, 1);
    ok(&mut s, 1, Action::Tactical { system: target });
    ok(&mut s, 1, Action::Done);
    assert_eq!((s.flow.step, actor(&s)), (Step::EndOfTurn, 1));
    let again = Action::AdditionalAction { system: target };
    assert_eq!(legal(&s, 1), [again, Action::NoReaction]);
    let before = sheet(&s, 1);
    ok(&mut s, 1, again);
    assert!(!s.has_token(owner(1), usize::from(target)));
    assert_eq!(sheet(&s, 1)[3], before[3] + 1);
    // The same player acts again; the card is discarded.
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    assert_eq!(s.flow.minister, coffer_command_tokens::NOBODY);
    ok(&mut s, 1, Action::Strategic { card: 0 });
}

#[test]
fn t24_galactic_crisis_pact_lets_every_player_resolve_the_secondary_without_a_token() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    ok(&mut s, 0, reveal(CRISIS_PACT));
    let cards: Vec<Action> = (0..8).map(|card| Action::ElectCard { card }).collect();
    assert_eq!(legal(&s, 0), cards);
    // Construction (3): its secondary places a token from reinforcements in a system.
    ok(&mut s, 0, Action::ElectCard { card: 3 });
    let before = [0, 1, 2].map(|p| sheet(&s, p));
    // From the speaker: p0 resolves it, p1 declines, p2 resolves it; no strategy token is spent.
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 0));
    ok(&mut s, 0, Action::Secondary);
    ok(
        &mut s,
        0,
        Action::Place {
            system: 1,
            fallback: None,
        },
    );
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    ok(&mut s, 1, Action::Decline);
    ok(&mut s, 2, Action::Secondary);
    ok(
        &mut s,
        2,
        Action::Place {
            system: 2,
            fallback: None,
        },
    );
    assert_eq!(sheet(&s, 0)[2], before[0][2], "no strategy token spent");
    assert_eq!(sheet(&s, 0)[3], before[0][3] - 1, "the placed token");
    assert_eq!(sheet(&s, 1), before[1]);
    assert!(s.has_token(owner(2), 2));
    assert_eq!(s.flow.step, Step::Reveal, "the second agenda");
}

#[test]
fn t24_wormhole_research_against_the_players_who_voted_against_return_a_token_each() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    ok(&mut s, 0, reveal(WORMHOLE_RESEARCH));
    // For/Against, with every set of players who voted Against.
    assert_eq!(legal(&s, 0).len(), 1 + 8);
    let against = Action::Outcome {
        vote: Vote::Against,
        voted_against: coffer_command_tokens::Players(0b101),
    };
    let before = [0, 1, 2].map(|p| sheet(&s, p));
    ok(&mut s, 0, against);
    assert_eq!((s.flow.step, actor(&s)), (Step::ReturnTokens, 0));
    ok(&mut s, 0, Action::ReturnToken { pool: Pool::Tactic });
    assert_eq!((s.flow.step, actor(&s)), (Step::ReturnTokens, 2));
    ok(&mut s, 2, Action::ReturnToken { pool: Pool::Fleet });
    assert_eq!(sheet(&s, 0)[0], before[0][0] - 1);
    assert_eq!(sheet(&s, 1), before[1], "p1 voted For");
    assert_eq!(sheet(&s, 2)[1], before[2][1] - 1);
    assert_eq!(s.flow.step, Step::Reveal);
}

#[test]
fn t24_who_voted_against_is_entered_only_where_the_agenda_concerns_them() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    ok(&mut s, 0, reveal(FLEET_REGULATIONS));
    let e = refused(
        &mut s,
        0,
        Action::Outcome {
            vote: Vote::Against,
            voted_against: coffer_command_tokens::Players(0b1),
        },
    );
    assert_eq!(
        e.to_string(),
        "illegal action: who voted Against is entered only for an Against outcome that concerns them"
    );
}

// ----- T29 -----

const WORMHOLE_RECONSTRUCTION: u8 = 7;
const GRANT_REALLOCATION: u8 = 8;

/// The line galaxy with wormholes in a, d and f, an agenda phase from round 1, and `ships`, at the agenda
/// phase.
fn wormhole_game(ships: &[(u16, u16, u8, u32)]) -> State {
    let mut config = battlefield_config(["sol", "hacan", "jolnar"], &[], ships);
    config.agenda_phase_from = 1;
    config.wormholes = vec!["a".into(), "d".into(), "f".into()];
    let mut s = game(3, config);
    to_agenda_phase(&mut s);
    s
}

#[test]
fn t29_wormhole_reconstruction_against_places_a_token_in_each_wormhole_system_with_ships() {
    let mut s = wormhole_game(&[(A, 0, 2, 1), (D, 0, 2, 1), (F, 1, 1, 1), (B, 2, 2, 1)]);
    // p1's reinforcements are empty: they choose the pool (T3).
    let rest = sheet(&s, 1)[3] as i32;
    shift_reserve(&mut s, 1, Pool::Strategy, rest);
    ok(&mut s, 0, reveal(WORMHOLE_RECONSTRUCTION));
    ok(&mut s, 0, vote(Vote::Against));
    assert!(s.has_token(owner(0), usize::from(A)));
    assert!(s.has_token(owner(0), usize::from(D)));
    assert_eq!((s.flow.step, actor(&s)), (Step::WormholeFallback, 1));
    ok(&mut s, 1, Action::Fallback { pool: Pool::Tactic });
    assert!(s.has_token(owner(1), usize::from(F)));
    assert!(!s.has_token(owner(2), usize::from(B)), "b has no wormhole");
    assert_eq!(s.flow.step, Step::Reveal);
}

#[test]
fn t29_wormhole_reconstruction_for_makes_wormhole_systems_adjacent() {
    let mut s = wormhole_game(&[]);
    assert!(!s.is_adjacent(usize::from(A), D));
    ok(&mut s, 0, reveal(WORMHOLE_RECONSTRUCTION));
    ok(&mut s, 0, vote(Vote::For));
    assert!(s.wormholes_linked());
    assert!(s.is_adjacent(usize::from(A), D));
    assert!(s.is_adjacent(usize::from(D), A));
    assert!(!s.is_adjacent(usize::from(B), D));
}

#[test]
fn t29_research_grant_reallocation_returns_a_fleet_token_per_prerequisite() {
    let mut s = agenda_game(&["sol", "hacan", "jolnar"], &[]);
    to_agenda_phase(&mut s);
    ok(&mut s, 0, reveal(GRANT_REALLOCATION));
    ok(&mut s, 0, Action::Elect { player: 2 });
    assert_eq!((s.flow.step, actor(&s)), (Step::Prerequisites, 0));
    assert_eq!(legal(&s, 0).len(), 5, "0 to 4 prerequisites");
    let before = sheet(&s, 2);
    ok(&mut s, 0, Action::Prerequisites { count: 2 });
    assert_eq!(
        sheet(&s, 2),
        [before[0], before[1] - 2, before[2], before[3] + 2]
    );
    while !s.ledger.pending().is_empty() {
        let q = actor(&s);
        let a = legal(&s, q)[0];
        ok(&mut s, q, a);
    }
    assert_eq!(s.flow.step, Step::Reveal);
}

#[test]
fn t29_random_playouts_with_wormholes_keep_every_invariant() {
    let mut config = battlefield_config(
        ["sol", "hacan", "jolnar"],
        &[],
        &[(A, 0, 2, 1), (D, 1, 2, 1), (F, 2, 2, 1)],
    );
    config.agenda_phase_from = 1;
    config.wormholes = vec!["a".into(), "d".into(), "f".into()];
    config.rounds = 4;
    playouts_keep_invariants(3, &config, 30, |_, _| {});
}

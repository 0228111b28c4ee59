//! The rules of outposts, one test per rule and named after it, through `coffer_core::testing`
//! (`applies` an action that must be accepted; `refused` one that must be refused, checking that the
//! state hash is unchanged, no event was recorded and the legal list did not offer it).

use coffer_core::testing::{applies, refused};
use coffer_core::{
    ActionError, Adapter, Change, Event, Key, Names, Outcome, Owner, Ruleset, Setup, SetupError,
};
use coffer_guide_board::state::ENERGY_POOL;
use coffer_guide_board::{Action, Config, MAX_SCORE, Outposts, State, TOKENS};

fn game(players: u16, config: Config) -> State {
    Outposts.new_game(players, 1, &config).unwrap()
}

fn config(sites: u16, rounds: u16) -> Config {
    Config { sites, rounds }
}

fn legal(s: &State, p: u16) -> Vec<Action> {
    let mut out = Vec::new();
    Outposts.legal_actions(s, Owner(p), &mut out);
    out
}

/// The refusal in the game's words, as hosts write it.
fn words(e: &ActionError) -> String {
    match e {
        ActionError::Refused(r) => Names::new(&Outposts.describe().vocabulary).refusal(r),
        other => other.to_string(),
    }
}

/// Plays a whole round for p0 in a two-player game: p1 passes on its turns, p0 plays `actions`, then
/// passes.
fn p0_plays_a_round(s: &mut State, actions: &[Action]) -> Vec<Event> {
    if s.active() == Some(Owner(1)) {
        applies(&Outposts, s, Owner(1), &Action::Pass);
    }
    for a in actions {
        applies(&Outposts, s, Owner(0), a);
        if s.active() == Some(Owner(1)) {
            applies(&Outposts, s, Owner(1), &Action::Pass);
        }
    }
    applies(&Outposts, s, Owner(0), &Action::Pass)
}

const fn place(site: u16) -> Action {
    Action::Place { site }
}

#[test]
fn place_moves_a_token_from_reinforcements_onto_an_empty_site_for_one_energy() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(3));
    assert_eq!(s.holder(3), Some(Owner(0)));
    assert_eq!(s.in_reinforcements(Owner(0)), TOKENS - 1);
    assert_eq!(s.energy(Owner(0)), 2);
}

#[test]
fn place_on_another_players_site_is_refused() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(3));
    let refusal = refused(&Outposts, &mut s, Owner(1), &place(3));
    assert_eq!(refusal.to_string(), "illegal action: site 3 is held by p0");
}

#[test]
fn place_on_your_own_site_adds_a_token_there() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(3));
    applies(&Outposts, &mut s, Owner(1), &place(9));
    applies(&Outposts, &mut s, Owner(0), &place(3));
    assert_eq!(s.tokens_on(3), 2);
    assert_eq!(s.sites_held(Owner(0)), 1);
}

#[test]
fn a_refused_action_leaves_the_state_hash_unchanged() {
    let ruleset = Adapter::shared(Outposts);
    let mut g = ruleset.new_game(&Setup::new(2, 1)).unwrap();
    g.apply_json(Owner(0), r#"{"type":"place","site":3}"#)
        .unwrap();
    let before = g.state_hash();
    for (player, json) in [
        (1, r#"{"type":"place","site":3}"#),
        (1, r#"{"type":"place","site":30}"#),
        (1, r#"{"type":"shift","from":3,"to":4}"#),
        (0, r#"{"type":"pass"}"#),
    ] {
        assert!(g.apply_json(Owner(player), json).is_err(), "{json}");
        assert_eq!(g.state_hash(), before, "{json}");
    }
}

#[test]
fn only_the_player_whose_turn_it_is_acts() {
    let mut s = game(3, Config::default());
    let refusal = refused(&Outposts, &mut s, Owner(1), &Action::Pass);
    assert!(
        matches!(refusal, ActionError::NotYourTurn { .. }),
        "{refusal}"
    );
    assert!(legal(&s, 1).is_empty());
}

#[test]
fn energy_empties_at_round_end() {
    let mut s = game(2, config(30, 2));
    // p1 never spends its energy; it empties when the round ends, then the next round refills it.
    let events = p0_plays_a_round(&mut s, &[place(0)]);
    let p1_energy = Key::new(Owner(1), ENERGY_POOL, 0);
    assert!(
        events.iter().any(|e| e.key == p1_energy
            && matches!(
                e.change,
                Change::Expire {
                    before: 3,
                    after: 0,
                    ..
                }
            )),
        "{events:?}"
    );
    // After the last round nothing refills it.
    p0_plays_a_round(&mut s, &[]);
    assert!(s.is_over());
    assert_eq!((s.energy(Owner(0)), s.energy(Owner(1))), (0, 0));
}

#[test]
fn a_new_round_refills_energy_to_three_and_starts_one_seat_on() {
    let mut s = game(3, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(0));
    for p in [1, 2, 0] {
        applies(&Outposts, &mut s, Owner(p), &Action::Pass);
    }
    assert_eq!(s.round(), 2);
    assert_eq!(s.active(), Some(Owner(1)));
    for p in 0..3 {
        assert_eq!(s.energy(Owner(p)), 3);
        assert!(!s.has_passed(Owner(p)));
    }
}

#[test]
fn players_who_passed_are_skipped_until_everyone_has_passed() {
    let mut s = game(3, Config::default());
    applies(&Outposts, &mut s, Owner(0), &Action::Pass);
    applies(&Outposts, &mut s, Owner(1), &place(5));
    applies(&Outposts, &mut s, Owner(2), &place(6));
    // p0 passed: p1 again.
    assert_eq!(s.active(), Some(Owner(1)));
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    assert_eq!(s.active(), Some(Owner(2)));
    applies(&Outposts, &mut s, Owner(2), &place(7));
    assert_eq!(s.active(), Some(Owner(2)));
    assert_eq!(s.round(), 1);
    applies(&Outposts, &mut s, Owner(2), &Action::Pass);
    assert_eq!(s.round(), 2);
}

#[test]
fn with_no_energy_only_harvest_and_pass_are_legal() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(0));
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    applies(&Outposts, &mut s, Owner(0), &place(1));
    applies(&Outposts, &mut s, Owner(0), &place(2));
    assert_eq!(s.energy(Owner(0)), 0);
    assert_eq!(legal(&s, 0), [Action::Harvest, Action::Pass]);
    let refusal = refused(&Outposts, &mut s, Owner(0), &place(5));
    assert_eq!(words(&refusal), "p0's energy holds 0; the cost is 1");
    refused(
        &Outposts,
        &mut s,
        Owner(0),
        &Action::Shift { from: 2, to: 3 },
    );
}

#[test]
fn place_with_empty_reinforcements_is_refused() {
    let mut s = game(2, Config::default());
    for round in 0..4 {
        p0_plays_a_round(&mut s, &[place(round), place(round), place(round)]);
    }
    assert_eq!(s.in_reinforcements(Owner(0)), 0);
    assert_eq!(s.tokens_on(3), 3);
    if s.active() == Some(Owner(1)) {
        applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    }
    let refusal = refused(&Outposts, &mut s, Owner(0), &place(9));
    assert_eq!(
        words(&refusal),
        "no tokens in p0's reinforcements; 1 needed"
    );
    // Shifts and harvest remain.
    assert!(legal(&s, 0).contains(&Action::Shift { from: 0, to: 29 }));
}

#[test]
fn shift_moves_one_token_to_a_neighbouring_site_round_the_ring() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(0));
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    let refusal = refused(
        &Outposts,
        &mut s,
        Owner(0),
        &Action::Shift { from: 0, to: 2 },
    );
    assert_eq!(
        refusal.to_string(),
        "illegal action: site 2 is not a neighbour of site 0: a shift moves one site round the ring"
    );
    // Site 0's neighbours are 1 and 29.
    applies(
        &Outposts,
        &mut s,
        Owner(0),
        &Action::Shift { from: 0, to: 29 },
    );
    assert_eq!((s.holder(0), s.holder(29)), (None, Some(Owner(0))));
    assert_eq!(s.energy(Owner(0)), 1);
}

#[test]
fn shift_onto_another_players_site_is_refused() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &place(4));
    applies(&Outposts, &mut s, Owner(1), &place(5));
    let refusal = refused(
        &Outposts,
        &mut s,
        Owner(0),
        &Action::Shift { from: 4, to: 5 },
    );
    assert_eq!(refusal.to_string(), "illegal action: site 5 is held by p1");
    // Nor from a site the player does not hold.
    let refusal = refused(
        &Outposts,
        &mut s,
        Owner(0),
        &Action::Shift { from: 5, to: 6 },
    );
    assert_eq!(
        refusal.to_string(),
        "illegal action: p0 holds no token on site 5"
    );
}

#[test]
fn a_ring_of_one_site_has_no_shift_and_of_two_sites_one() {
    let mut s = game(2, config(1, 1));
    applies(&Outposts, &mut s, Owner(0), &place(0));
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    assert_eq!(legal(&s, 0), [place(0), Action::Harvest, Action::Pass]);
    let mut s = game(2, config(2, 1));
    applies(&Outposts, &mut s, Owner(0), &place(1));
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    assert_eq!(
        legal(&s, 0),
        [
            place(0),
            place(1),
            Action::Shift { from: 1, to: 0 },
            Action::Harvest,
            Action::Pass
        ]
    );
}

#[test]
fn harvest_is_once_a_round_and_ready_again_next_round() {
    let mut s = game(2, Config::default());
    applies(&Outposts, &mut s, Owner(0), &Action::Harvest);
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    let refusal = refused(&Outposts, &mut s, Owner(0), &Action::Harvest);
    assert_eq!(words(&refusal), "p0's harvest is used up this round");
    applies(&Outposts, &mut s, Owner(0), &Action::Pass);
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    assert!(legal(&s, 0).contains(&Action::Harvest));
}

#[test]
fn harvest_scores_a_point_per_site_held_and_the_score_stops_at_twenty() {
    let mut s = game(2, config(30, 10));
    // Three new sites a round: 3, then 3 + 6, then 9 + 9, then 18 + 12 stops at 20.
    let mut site = 0;
    let mut expected = 0;
    for _ in 0..4 {
        let places: Vec<Action> = (0..3).map(|k| place(site + k)).collect();
        site += 3;
        let mut actions = places;
        actions.push(Action::Harvest);
        p0_plays_a_round(&mut s, &actions);
        expected = (expected + i64::from(site)).min(MAX_SCORE);
        assert_eq!(s.score(Owner(0)), expected);
    }
    assert_eq!(s.score(Owner(0)), MAX_SCORE);
}

#[test]
fn the_highest_score_wins_and_ties_share() {
    let mut s = game(3, config(30, 1));
    applies(&Outposts, &mut s, Owner(0), &place(0));
    applies(&Outposts, &mut s, Owner(1), &place(10));
    applies(&Outposts, &mut s, Owner(2), &Action::Pass);
    applies(&Outposts, &mut s, Owner(0), &Action::Harvest);
    applies(&Outposts, &mut s, Owner(1), &Action::Harvest);
    assert_eq!(Outposts.outcome(&s), Outcome::Ongoing);
    applies(&Outposts, &mut s, Owner(0), &Action::Pass);
    applies(&Outposts, &mut s, Owner(1), &Action::Pass);
    assert_eq!(
        Outposts.outcome(&s),
        Outcome::Finished {
            winners: vec![Owner(0), Owner(1)],
            scores: vec![1, 1, 0]
        }
    );
    refused(&Outposts, &mut s, Owner(2), &Action::Pass);
}

#[test]
fn a_configuration_or_player_count_out_of_range_is_refused_in_words() {
    for (c, words) in [
        (config(0, 8), "0 sites: choose 1 to 200"),
        (config(201, 8), "201 sites: choose 1 to 200"),
        (config(30, 0), "0 rounds: choose 1 to 100"),
    ] {
        match Outposts.new_game(2, 1, &c) {
            Err(SetupError::Config(e)) => assert_eq!(e, words),
            other => panic!("{c:?}: {other:?}"),
        }
    }
    assert!(matches!(
        Outposts.new_game(7, 1, &Config::default()),
        Err(SetupError::Players { .. })
    ));
}

/// The list is complete and sound at every step of random games: for every player and every candidate
/// action (every place, every shift between any two sites, harvest, pass), it is listed exactly when
/// `validate` accepts it (what `apply` checks first).
#[test]
fn the_legal_list_is_every_action_validate_accepts() {
    for (players, sites) in [(2, 1), (2, 2), (3, 5), (6, 30)] {
        let mut s = game(players, config(sites, 3));
        let mut rng = coffer_core::GameRng::new(u64::from(sites));
        let mut candidates = vec![Action::Harvest, Action::Pass];
        for a in 0..sites {
            candidates.push(Action::Place { site: a });
            for b in 0..sites {
                candidates.push(Action::Shift { from: a, to: b });
            }
        }
        while let Some(active) = s.active() {
            for p in 0..players {
                let listed = legal(&s, p);
                let accepted: Vec<Action> = candidates
                    .iter()
                    .filter(|a| coffer_guide_board::validate::validate(&s, Owner(p), a).is_ok())
                    .cloned()
                    .collect();
                let mut sorted = listed.clone();
                sorted.sort_by_key(|a| format!("{a:?}"));
                let mut expected = accepted;
                expected.sort_by_key(|a| format!("{a:?}"));
                assert_eq!(sorted, expected, "{players} players, {sites} sites, p{p}");
            }
            let listed = legal(&s, active.0);
            let pick = listed[rng.below(listed.len() as u64) as usize];
            applies(&Outposts, &mut s, active, &pick);
        }
    }
}

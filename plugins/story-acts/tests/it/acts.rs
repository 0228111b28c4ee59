//! S11 Story Points and awards, S12 Acts, S13 scoring, S14 Contested, S15 Bands, S16 catch-up, S17 Factors.

use crate::common::*;
use coffer_core::{ActionError, Cause, Change, Owner};
use coffer_story_acts::scoring::score_lines;
use coffer_story_acts::{
    AwardTo, Band, Config, FactorDef, Phase, State, StoryActs, Zone, act_winner,
};

/// A Storyline of `p` in play with every step done.
fn done_storyline(s: &mut State, p: u16, id: &str) -> u16 {
    let c = to_play(s, p, id);
    s.cards[usize::from(c)].progress = s.def(c).steps as u16;
    c
}

fn gain_sp(s: &mut State, p: u16, n: u64) {
    let id = s.seats[usize::from(p)].sp;
    s.ledger.gain(id, n, Cause::Setup).expect("sp");
}

#[test]
fn s11_an_empty_treasury_awards_each_opponent_one_sp() {
    let mut s = game_with(3, &["orbital_shipyard"], |_| {});
    let card = find(&s, 0, "orbital_shipyard");
    set_treasury(&mut s, 0, 4);
    ok(&mut s, 0, deploy(card));
    assert_eq!(s.treasury(Owner(0)), 0);
    assert_eq!((s.sp(Owner(0)), s.sp(Owner(1)), s.sp(Owner(2))), (0, 1, 1));
}

#[test]
fn s11_a_treasury_drained_by_a_required_cost_also_awards() {
    let mut s = game(&["tax_levy"]);
    let card = find(&s, 0, "tax_levy");
    set_treasury(&mut s, 1, 3);
    ok(&mut s, 0, deploy(card));
    assert_eq!(
        (s.treasury(Owner(1)), s.sp(Owner(0)), s.sp(Owner(1))),
        (0, 1, 0)
    );
}

#[test]
fn s11_an_already_empty_treasury_paying_again_awards_nothing() {
    let mut s = game(&["tax_levy"]);
    let card = find(&s, 0, "tax_levy");
    set_treasury(&mut s, 1, 0);
    ok(&mut s, 0, deploy(card));
    assert_eq!(
        s.sp(Owner(0)),
        0,
        "the Treasury did not become empty: it was empty"
    );
}

#[test]
fn s11_award_amount_and_recipient_are_configurable() {
    for (to, sp, want) in [
        (AwardTo::Nobody, 1, [0, 0, 0]),
        (AwardTo::NextPlayer, 2, [0, 2, 0]),
        (AwardTo::EachOpponent, 3, [0, 3, 3]),
    ] {
        let mut s = game_with(3, &["orbital_shipyard"], |c| {
            c.award_to = to;
            c.award_sp = sp;
        });
        let card = find(&s, 0, "orbital_shipyard");
        set_treasury(&mut s, 0, 4);
        ok(&mut s, 0, deploy(card));
        assert_eq!(
            [s.sp(Owner(0)), s.sp(Owner(1)), s.sp(Owner(2))],
            want,
            "{to:?}"
        );
    }
}

#[test]
fn s11_causing_your_own_character_to_fall_or_be_destroyed_awards_opponents() {
    let mut s = game(&["militia"]);
    let apprentice = to_play(&mut s, 0, "dark_apprentice");
    ok(&mut s, 0, A::CommitVotes { card: apprentice }); // Falls
    assert_eq!(s.sp(Owner(1)), 1);
    let smuggler = to_play(&mut s, 0, "smuggler");
    ok(&mut s, 0, A::UseAbility { card: smuggler });
    round(&mut s);
    ok(&mut s, 0, A::UseAbility { card: smuggler }); // paid to 0: destroyed
    assert_eq!(s.cards[usize::from(smuggler)].zone, Zone::Discard);
    assert_eq!(s.sp(Owner(1)), 2);
}

#[test]
fn s11_an_opponent_destroying_your_character_awards_nothing() {
    let mut s = game(&["militia"]);
    let knight = to_play(&mut s, 0, "jedi_knight");
    ok(&mut s, 0, A::EndTurn {});
    let temptation = to_hand(&mut s, 1, "temptation");
    ok(
        &mut s,
        1,
        A::Deploy {
            card: temptation,
            target: Some(knight),
            cp: Default::default(),
        },
    );
    assert_eq!(s.cards[usize::from(knight)].zone, Zone::Discard);
    assert_eq!((s.sp(Owner(0)), s.sp(Owner(1))), (0, 0));
}

#[test]
fn s11_awards_are_held_until_the_acts_count() {
    let mut s = game(&["militia"]);
    gain_sp(&mut s, 1, 2); // two awards earlier in the Act
    let story = done_storyline(&mut s, 0, "trade_war");
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    let r = &s.results[0];
    // p0: reward 1 + Prime face 1; p1: awards 2 + Prime face 1.
    assert_eq!(r.scores, vec![2, 3]);
    assert_eq!(r.winner, 1);
}

#[test]
fn s12_completing_a_storyline_ends_the_act_at_once() {
    let mut s = game(&["trade_war"]);
    let story = find(&s, 0, "trade_war");
    ok(&mut s, 0, deploy(story));
    refused(&mut s, 0, A::CompleteStoryline { card: story });
    let e = refused(&mut s, 0, A::AdvanceStoryline { card: story });
    assert!(
        matches!(
            e,
            ActionError::Refused(coffer_core::Refusal::Insufficient {
                need: 3,
                have: 0,
                ..
            })
        ),
        "EV short: {e}"
    );
    let freighter = to_play(&mut s, 0, "freighter"); // Add 2 EV
    let nav = to_play(&mut s, 0, "nav_computer"); // Add 1 EV
    ok(&mut s, 0, A::AddEv { card: freighter });
    ok(&mut s, 0, A::AddEv { card: nav });
    ok(&mut s, 0, A::AdvanceStoryline { card: story });
    assert_eq!(s.pool_ev(Owner(0)), 0);
    refused(&mut s, 0, A::AdvanceStoryline { card: story });
    assert!(legal(&s, 0).contains(&A::CompleteStoryline { card: story }));
    assert_eq!(s.act, 1);
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!(s.act, 2, "the next Act begins");
    assert_eq!(s.results.len(), 1);
    assert_eq!(s.cards[usize::from(story)].zone, Zone::Discard);
    assert_eq!(
        (s.active, s.phase),
        (1, Phase::Main),
        "the next player's turn starts the new Act"
    );
    assert_eq!(s.ledger.clock().act, 1, "the kernel clock ended Scope::Act");
}

#[test]
fn s12_the_completer_chooses_the_moment() {
    let mut s = game(&["militia"]);
    let story = done_storyline(&mut s, 0, "trade_war");
    // Completing is an action of its own, never automatic: the Act goes on until p0 chooses.
    ok(&mut s, 0, A::EndTurn {});
    ok(&mut s, 1, A::EndTurn {});
    assert_eq!(s.act, 1);
    assert!(s.results.is_empty());
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!(s.act, 2);
}

#[test]
fn s12_most_sp_wins_the_act() {
    let mut s = game(&["militia"]);
    gain_sp(&mut s, 1, 5);
    let story = done_storyline(&mut s, 0, "rise_of_the_empire");
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!(s.results[0].scores, vec![3, 6]);
    assert_eq!(s.results[0].winner, 1);
    assert_eq!((s.act_wins(Owner(0)), s.act_wins(Owner(1))), (0, 1));
}

#[test]
fn s12_tie_goes_to_active_player() {
    let mut s = game(&["militia"]);
    gain_sp(&mut s, 1, 1);
    let story = done_storyline(&mut s, 0, "trade_war"); // p0: 1 + Prime 1 = 2; p1: 1 + Prime 1 = 2
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!(s.results[0].scores, vec![2, 2]);
    assert_eq!(s.results[0].winner, 0, "p0 was active");
    // The same tie on p1's turn goes to p1.
    let mut s = game(&["militia"]);
    ok(&mut s, 0, A::EndTurn {});
    gain_sp(&mut s, 0, 1);
    let story = done_storyline(&mut s, 1, "trade_war");
    ok(&mut s, 1, A::CompleteStoryline { card: story });
    assert_eq!(s.results[0].scores, vec![2, 2]);
    assert_eq!(s.results[0].winner, 1);
}

#[test]
fn s12_tie_without_the_active_player_goes_to_the_next_tied_player_in_turn_order() {
    assert_eq!(act_winner(&[1, 3, 3], Owner(0)), Owner(1));
    assert_eq!(act_winner(&[3, 1, 3], Owner(1)), Owner(2));
    assert_eq!(act_winner(&[3, 3, 1], Owner(2)), Owner(0));
    assert_eq!(act_winner(&[3, 3, 3], Owner(2)), Owner(2));
}

#[test]
fn s12_sp_reset_after_the_act() {
    let mut s = game(&["militia"]);
    gain_sp(&mut s, 1, 4);
    let story = done_storyline(&mut s, 0, "trade_war");
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!((s.sp(Owner(0)), s.sp(Owner(1))), (0, 0));
}

#[test]
fn s12_act_transitions_are_irreversible() {
    let mut s = game(&["militia"]);
    let story = done_storyline(&mut s, 0, "trade_war");
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    let after = (s.act, s.results.clone(), s.ledger.clock().act);
    // Nothing brings Act 1 back: the completed Storyline is gone and every later action keeps the Act.
    refused(&mut s, 1, A::CompleteStoryline { card: story });
    for _ in 0..3 {
        round(&mut s);
        assert_eq!((s.act, s.results.clone(), s.ledger.clock().act), after);
    }
}

#[test]
fn s12_two_act_wins_win_the_game() {
    let mut s = game(&["militia"]);
    let a = done_storyline(&mut s, 0, "trade_war");
    ok(&mut s, 0, A::CompleteStoryline { card: a });
    ok(&mut s, 1, A::EndTurn {});
    let b = done_storyline(&mut s, 0, "rise_of_the_empire");
    ok(&mut s, 0, A::CompleteStoryline { card: b });
    assert_eq!(s.winners, Some(vec![0]));
    assert_eq!(s.act, 2, "a game of two Acts");
    let out = coffer_core::Ruleset::outcome(&StoryActs::new(), &s);
    assert_eq!(
        out,
        coffer_core::Outcome::Finished {
            winners: vec![coffer_core::Owner(0)],
            scores: vec![2, 0]
        }
    );
    let e = refused(&mut s, 1, A::EndTurn {});
    assert!(matches!(e, ActionError::GameOver), "{e}");
    assert!(legal(&s, 0).is_empty() && legal(&s, 1).is_empty());
}

fn three_player_acts(cfg: impl FnOnce(&mut Config)) -> State {
    let mut s = game_with(3, &["militia"], cfg);
    for (act, winner) in [(1u8, 0u16), (2, 1), (3, 2)] {
        assert_eq!(s.act, act);
        gain_sp(&mut s, winner, 10);
        let p = s.active;
        let story = done_storyline(
            &mut s,
            p,
            ["trade_war", "peace_accord", "rise_of_the_empire"][usize::from(act - 1)],
        );
        ok(&mut s, p, A::CompleteStoryline { card: story });
        assert_eq!(s.results.last().map(|r| r.winner), Some(winner));
    }
    s
}

#[test]
fn s12_with_three_players_the_act_3_winner_wins() {
    let s = three_player_acts(|_| {});
    assert_eq!(s.winners, Some(vec![2]));
    assert_eq!(s.results.len(), 3, "never more than three Acts");
}

#[test]
fn s12_act_3_rule_is_configurable() {
    let s = three_player_acts(|c| c.act3_winner_wins = false);
    assert_eq!(
        s.winners,
        Some(vec![0, 1, 2]),
        "one Act win each: a shared win"
    );
}

#[test]
fn s13_each_line_is_rounded_down_on_its_own() {
    let mut s = game(&["militia"]);
    to_play(&mut s, 0, "mining_outpost"); // one uncontested Surface Location: half a point
    to_band(&mut s, 0, "walker", Band::Space); // not in an opponent's Band
    to_band(&mut s, 0, "militia", Band::Surface(1)); // one unit in an opponent's Surface Band: half a point
    let lines = score_lines(&s, Owner(0), None);
    assert_eq!(
        (lines.surface, lines.units),
        (0, 0),
        "two odd halves do not combine"
    );
    assert_eq!(lines.total(), 1, "only the Prime face");
    to_play(&mut s, 0, "spaceport");
    to_band(&mut s, 0, "clone_squad", Band::Surface(1));
    let lines = score_lines(&s, Owner(0), None);
    assert_eq!((lines.surface, lines.units), (1, 1));
    to_play(&mut s, 0, "jedi_temple");
    to_band(&mut s, 0, "honor_guard", Band::Surface(1));
    let lines = score_lines(&s, Owner(0), None);
    assert_eq!(
        (lines.surface, lines.units),
        (1, 1),
        "three is one pair, rounded down"
    );
}

#[test]
fn s13_factors_at_the_homeworlds_preferred_value_score_one_each() {
    let mut s = game(&["militia"]);
    assert_eq!(score_lines(&s, Owner(0), None).factors, 0);
    let (order, prosperity) = (s.factors[0], s.factors[1]);
    s.ledger.set(order, 2, Cause::Setup).expect("set");
    assert_eq!(score_lines(&s, Owner(0), None).factors, 1);
    s.ledger.set(prosperity, 1, Cause::Setup).expect("set");
    assert_eq!(score_lines(&s, Owner(0), None).factors, 2);
    assert_eq!(
        score_lines(&s, Owner(1), None).factors,
        0,
        "Korriban prefers order -2 and war 2"
    );
    s.ledger.set(order, 3, Cause::Setup).expect("set");
    assert_eq!(
        score_lines(&s, Owner(0), None).factors,
        1,
        "only the exact value"
    );
}

#[test]
fn s13_a_unit_in_an_opponents_planetary_band_counts_two() {
    let mut s = game(&["militia"]);
    to_band(&mut s, 0, "militia", Band::Planetary(1));
    assert_eq!(score_lines(&s, Owner(0), None).units, 1);
}

#[test]
fn s13_only_characters_ground_units_and_non_capital_spacecraft_count() {
    let mut s = game(&["militia"]);
    to_band(&mut s, 0, "star_destroyer", Band::Planetary(1)); // Capital: no
    assert_eq!(score_lines(&s, Owner(0), None).units, 0);
    to_band(&mut s, 0, "gunship", Band::Planetary(1)); // non-Capital Spacecraft
    assert_eq!(score_lines(&s, Owner(0), None).units, 1);
    to_band(&mut s, 0, "senator", Band::Surface(1)); // Character
    to_band(&mut s, 0, "walker", Band::Surface(1)); // Ground Unit
    assert_eq!(score_lines(&s, Owner(0), None).units, 2);
    to_band(&mut s, 0, "scholar", Band::Planetary(0)); // own Band: no
    assert_eq!(score_lines(&s, Owner(0), None).units, 2);
}

#[test]
fn s13_the_storyline_reward_goes_to_the_player_it_names() {
    let mut s = game(&["militia"]);
    let a = done_storyline(&mut s, 0, "rise_of_the_empire");
    assert_eq!(score_lines(&s, Owner(0), Some((Owner(0), a))).storyline, 2);
    assert_eq!(score_lines(&s, Owner(1), Some((Owner(0), a))).storyline, 0);
    let b = done_storyline(&mut s, 0, "peace_accord"); // rewards each opponent
    assert_eq!(score_lines(&s, Owner(0), Some((Owner(0), b))).storyline, 0);
    assert_eq!(score_lines(&s, Owner(1), Some((Owner(0), b))).storyline, 1);
    assert_eq!(score_lines(&s, Owner(1), None).storyline, 0);
}

#[test]
fn s13_homeworld_on_its_prime_face_scores_one() {
    let mut s = game(&["militia"]);
    assert_eq!(score_lines(&s, Owner(0), None).prime, 1);
    s.seats[0].prime_face = false;
    assert_eq!(score_lines(&s, Owner(0), None).prime, 0);
}

#[test]
fn s14_a_captured_surface_location_is_contested_and_scores_nothing_until_restored() {
    let mut s = game(&["militia"]);
    let outpost = to_play(&mut s, 1, "mining_outpost");
    let port = to_play(&mut s, 1, "spaceport");
    to_play(&mut s, 0, "jedi_temple"); // p0's own Surface Location
    assert_eq!(score_lines(&s, Owner(1), None).surface, 1);
    let walker = to_band(&mut s, 0, "walker", Band::Surface(1));
    ok(
        &mut s,
        0,
        A::Capture {
            location: outpost,
            unit: walker,
        },
    );
    let c = s.cards[usize::from(outpost)];
    assert_eq!((c.controller, c.contested, c.owner), (0, true, 1));
    assert_eq!(score_lines(&s, Owner(1), None).surface, 0, "p1 keeps one");
    assert_eq!(
        score_lines(&s, Owner(0), None).surface,
        0,
        "the Contested one does not count for p0"
    );
    set_treasury(&mut s, 0, 2);
    ok(&mut s, 0, A::Restore { location: outpost });
    assert_eq!(s.treasury(Owner(0)), 0, "Restore costs 2");
    assert!(!s.cards[usize::from(outpost)].contested);
    assert_eq!(score_lines(&s, Owner(0), None).surface, 1);
    let _ = port;
}

#[test]
fn s14_a_defended_location_cannot_be_captured_and_restore_needs_a_contested_one() {
    let mut s = game(&["militia"]);
    let outpost = to_play(&mut s, 1, "mining_outpost");
    to_band(&mut s, 1, "clone_squad", Band::Surface(1));
    let walker = to_band(&mut s, 0, "walker", Band::Surface(1));
    let e = refused(
        &mut s,
        0,
        A::Capture {
            location: outpost,
            unit: walker,
        },
    );
    assert!(e.to_string().contains("has a unit"), "{e}");
    let mine = to_play(&mut s, 0, "spaceport");
    refused(&mut s, 0, A::Restore { location: mine });
}

#[test]
fn s15_adjacency_runs_space_surface_planetary() {
    let mut s = game(&["militia"]);
    to_play(&mut s, 1, "spaceport");
    assert!(s.is_adjacent(Band::Space, Band::Surface(1)));
    assert!(s.is_adjacent(Band::Surface(1), Band::Planetary(1)));
    assert!(!s.is_adjacent(Band::Space, Band::Planetary(1)));
    assert!(!s.is_adjacent(Band::Planetary(1), Band::Space));
    let ship = to_band(&mut s, 0, "gunship", Band::Space);
    let moves: Vec<Band> = legal(&s, 0)
        .into_iter()
        .filter_map(|a| match a {
            A::Move { card, to } if card == ship => Some(to),
            _ => None,
        })
        .collect();
    assert_eq!(
        moves,
        vec![Band::Planetary(0), Band::Surface(1)],
        "p0 has no Surface Location; p1 has one"
    );
    let e = refused(
        &mut s,
        0,
        A::Move {
            card: ship,
            to: Band::Planetary(1),
        },
    );
    assert!(e.to_string().contains("not adjacent"), "{e}");
    ok(
        &mut s,
        0,
        A::Move {
            card: ship,
            to: Band::Surface(1),
        },
    );
}

#[test]
fn s15_an_empty_surface_band_is_skipped() {
    let mut s = game(&["militia"]);
    assert!(s.is_adjacent(Band::Space, Band::Planetary(1)));
    assert!(s.is_adjacent(Band::Planetary(1), Band::Space));
    let ship = to_band(&mut s, 0, "gunship", Band::Space);
    ok(
        &mut s,
        0,
        A::Move {
            card: ship,
            to: Band::Planetary(1),
        },
    );
    assert_eq!(
        score_lines(&s, Owner(0), None).units,
        1,
        "deep in p1's Planetary Band: counts two"
    );
}

#[test]
fn s16_catch_up_gives_each_player_who_did_not_win_three_currency_capped() {
    let mut s = game_with(3, &["militia"], |_| {});
    gain_sp(&mut s, 0, 5);
    set_treasury(&mut s, 0, 10);
    set_treasury(&mut s, 1, 19);
    set_treasury(&mut s, 2, 4);
    let story = done_storyline(&mut s, 0, "trade_war");
    s.ledger.take_events();
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!(s.results[0].winner, 0);
    // Then p1's turn began with its income of 3 (Korriban) — take it out to see the catch-up.
    let p1_catch_up = s.ledger.events().iter().find_map(|e| match e.change {
        Change::Gain {
            amount,
            before,
            after,
            lost,
        } if amount == s.seats[1].treasury && e.cause == Cause::Effect(5) => {
            Some((before, after, lost))
        }
        _ => None,
    });
    assert_eq!(p1_catch_up, Some((19, 20, 2)), "capped by S1");
    assert_eq!(s.treasury(Owner(2)), 7);
    assert_eq!(s.treasury(Owner(0)), 10, "the winner gains nothing");
}

#[test]
fn s16_catch_up_is_configurable() {
    let mut s = game_with(2, &["militia"], |c| c.catch_up_currency = 0);
    gain_sp(&mut s, 0, 5);
    set_treasury(&mut s, 1, 4);
    let story = done_storyline(&mut s, 0, "trade_war");
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    assert_eq!(s.treasury(Owner(1)), 4 + 3, "only p1's income");
}

#[test]
fn s17_galactic_factors_are_configurable_bounded_tracks() {
    let mut s = game_with(2, &["militia"], |c| {
        c.factors = vec![
            FactorDef {
                name: "order".into(),
                min: -2,
                max: 2,
                start: 1,
            },
            FactorDef {
                name: "prosperity".into(),
                min: 0,
                max: 1,
                start: 0,
            },
            FactorDef {
                name: "war".into(),
                min: 0,
                max: 5,
                start: 5,
            },
        ];
    });
    assert_eq!((s.factor(0), s.factor(1), s.factor(2)), (1, 0, 5));
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw });
    let e = refused(&mut s, 0, push(0, true, 2));
    assert!(e.to_string().contains("no room"), "{e}");
    refused(&mut s, 0, push(2, true, 1));
    refused(&mut s, 0, push(3, true, 1));
    ok(&mut s, 0, push(0, true, 1));
    assert_eq!(
        score_lines(&s, Owner(0), None).factors,
        1,
        "Coruscant prefers order 2"
    );
}

#[test]
fn s17_a_preferred_value_must_name_a_configured_factor() {
    let cfg = Config {
        factors: vec![FactorDef {
            name: "order".into(),
            min: -3,
            max: 3,
            start: 0,
        }],
        ..Config::default()
    };
    let e = coffer_core::Ruleset::new_game(&StoryActs::new(), 2, 1, &cfg)
        .expect_err("prosperity is unknown");
    let msg = e.to_string();
    assert!(
        msg.contains("coruscant") && msg.contains("preferred") && msg.contains("prosperity"),
        "{msg}"
    );
    let cfg = Config {
        factors: vec![
            FactorDef {
                name: "order".into(),
                min: -1,
                max: 1,
                start: 0,
            },
            FactorDef {
                name: "prosperity".into(),
                min: 0,
                max: 3,
                start: 0,
            },
            FactorDef {
                name: "war".into(),
                min: 0,
                max: 3,
                start: 0,
            },
        ],
        ..Config::default()
    };
    let e = coffer_core::Ruleset::new_game(&StoryActs::new(), 2, 1, &cfg)
        .expect_err("order 2 is off the track");
    assert!(e.to_string().contains("outside"), "{e}");
}

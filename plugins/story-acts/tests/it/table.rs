//! The table: the clock (the Act and the turn's phase), whose turn it is, who may act and why, and the
//! game's own state in sections, in the rules situations that shape them.

use crate::common::*;
use coffer_core::{Outcome, Owner};
use coffer_story_acts::Band;

fn row(t: &coffer_core::Table, title: &str, owner: Owner, label: &str) -> String {
    rows(t, title)
        .into_iter()
        .find(|(o, l, _)| *o == owner && l == label)
        .unwrap_or_else(|| panic!("no row {owner} {label} in {title}: {:?}", rows(t, title)))
        .2
}

#[test]
fn s12_the_clock_counts_acts_and_the_turns_phases() {
    let mut s = game(&["militia"]);
    let t = table(&s, None);
    assert_eq!((t.round, t.round_name.as_str()), (1, "Act"));
    let phase = t.phase.as_ref().expect("a phase");
    assert_eq!((phase.number, phase.name.as_str()), (3, "main phase"));
    assert_eq!(t.step, None, "the game has no steps");
    assert_eq!(t.turn, Some(Owner(0)));
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(table(&s, None).turn, Some(Owner(1)));
    // Completing a Storyline ends the Act: the next begins with the next player's turn.
    let story = to_play(&mut s, 1, "trade_war");
    s.cards[usize::from(story)].progress = s.def(story).steps as u16;
    ok(&mut s, 1, A::CompleteStoryline { card: story });
    let t = table(&s, None);
    assert_eq!((t.round, t.turn), (2, Some(Owner(0))));
    let acts = rows(&t, "Acts");
    assert_eq!(acts.len(), 2);
    assert!(acts[0].2.starts_with("won by p"), "{acts:?}");
    assert_eq!(acts[1].1, "Act 2");
    assert_eq!(acts[1].2, "in progress");
}

#[test]
fn s12_a_finished_game_shows_its_winner_and_nobody_to_act() {
    let mut s = game(&["militia"]);
    let wins = s.seats[0].act_wins;
    s.ledger
        .gain(wins, 1, coffer_core::Cause::Setup)
        .expect("an Act won");
    s.results.push(coffer_story_acts::ActResult {
        act: 1,
        scores: vec![3, 1],
        winner: 0,
        active: 0,
    });
    s.act = 2;
    let story = to_play(&mut s, 0, "trade_war");
    s.cards[usize::from(story)].progress = s.def(story).steps as u16;
    ok(&mut s, 0, A::CompleteStoryline { card: story });
    let t = table(&s, Some(0));
    assert!(matches!(t.outcome, Outcome::Finished { .. }));
    assert_eq!(t.turn, None);
    assert!(t.acting.is_empty(), "{:?}", t.acting);
    let acts = rows(&t, "Acts");
    assert_eq!(
        acts.last().map(|r| (r.1.as_str(), r.2.as_str())),
        Some(("winner", "p0"))
    );
    assert_eq!(t.round, 2, "no Act follows the last");
}

#[test]
fn s10_a_pending_discard_is_the_only_thing_to_do() {
    let mut s = game(&["militia"]);
    for id in [
        "walker", "gunship", "holocron", "senator", "scholar", "rally", "windfall",
    ] {
        to_hand(&mut s, 0, id);
    }
    ok(&mut s, 0, A::EndTurn {});
    let t = table(&s, Some(1));
    assert_eq!(t.phase.as_ref().map(|p| p.name.as_str()), Some("End Phase"));
    assert_eq!(
        acting(&t),
        [(0, "to discard 1 card down to the hand limit of 7")]
    );
    assert_eq!(t.pending.len(), 1);
    assert_eq!(t.pending[0].text, "p0 must discard 1 of p0's hand");
    assert_eq!(row(&t, "Hands and decks", Owner(0), "hand"), "8 cards");
}

#[test]
fn s5_who_may_act_out_of_turn_is_what_each_audience_may_know() {
    let mut s = game(&["militia"]);
    let hw1 = s.seats[1].homeworld;
    let active = (0, "to take actions in the main phase, or end the turn");
    // p1's Homeworld prints a Vote and is ready: public, so everybody sees p1 may commit it.
    for seat in [Some(0), Some(1), None] {
        assert_eq!(
            acting(&table(&s, seat)),
            [active, (1, "to commit Votes out of turn (a Fast action)")],
            "{seat:?}"
        );
    }
    // p1 holds a Fast Maneuver: only p1's own table says so.
    to_hand(&mut s, 1, "rally");
    assert_eq!(
        acting(&table(&s, Some(1))),
        [
            active,
            (1, "to commit Votes or play a Fast Maneuver out of turn")
        ]
    );
    ok(&mut s, 1, A::CommitVotes { card: hw1 });
    assert_eq!(
        acting(&table(&s, Some(1))),
        [active, (1, "to play a Fast Maneuver out of turn")]
    );
    for seat in [Some(0), None] {
        assert_eq!(acting(&table(&s, seat)), [active], "{seat:?}");
    }
}

#[test]
fn s14_a_captured_location_is_shown_under_its_captor() {
    let mut s = game(&["militia"]);
    let outpost = to_play(&mut s, 1, "mining_outpost");
    let walker = to_band(&mut s, 0, "walker", Band::Surface(1));
    ok(
        &mut s,
        0,
        A::Capture {
            location: outpost,
            unit: walker,
        },
    );
    let t = table(&s, None);
    let label = format!("Mining Outpost (#{outpost})");
    assert_eq!(
        row(&t, "In play", Owner(0), &label),
        "Location in p1's Surface Band, owned by p1, ready, Contested"
    );
    assert!(
        rows(&t, "In play")
            .iter()
            .all(|(o, l, _)| !(*o == Owner(1) && *l == label)),
        "no longer under its owner"
    );
    assert_eq!(
        row(
            &t,
            "In play",
            Owner(0),
            &format!("Assault Walker (#{walker})")
        ),
        "Ground Unit in p1's Surface Band, activated"
    );
    // Its resources stay keyed by its owner; their label says who holds it now.
    let key = coffer_story_acts::state::card_key(Owner(1), outpost);
    assert_eq!(
        coffer_story_acts::words::label(&s, key).unwrap(),
        format!("Mining Outpost (#{outpost}, captured by p0)")
    );
}

#[test]
fn s8_a_destroyed_card_lies_in_its_owners_discard_pile_and_a_fallen_one_says_so() {
    let mut s = game(&["militia"]);
    let hunter = to_play(&mut s, 0, "bounty_hunter"); // cp 2, Penalties: move -1
    let apprentice = to_play(&mut s, 0, "dark_apprentice"); // Prime, Penalties: commit -1
    ok(
        &mut s,
        0,
        A::Move {
            card: hunter,
            to: Band::Space,
        },
    );
    ok(&mut s, 0, A::CommitVotes { card: apprentice });
    round(&mut s);
    ok(
        &mut s,
        0,
        A::Move {
            card: hunter,
            to: Band::Planetary(1),
        },
    );
    let t = table(&s, Some(1));
    assert_eq!(
        row(&t, "Discard piles", Owner(0), "discard pile"),
        format!("1 card: Bounty Hunter (#{hunter})")
    );
    assert!(
        rows(&t, "In play")
            .iter()
            .all(|(_, l, _)| !l.contains("Bounty Hunter")),
        "not in play any more"
    );
    let fallen = row(
        &t,
        "In play",
        Owner(0),
        &format!("Dark Apprentice (#{apprentice})"),
    );
    assert!(fallen.ends_with("1 CP, Fallen"), "{fallen}");
    let hw = s.seats[0].homeworld;
    let home = row(&t, "In play", Owner(0), &format!("Coruscant (#{hw})"));
    assert!(home.ends_with("off its Prime face"), "{home}");
    // The destroyed card's resources are drawn where it lies.
    let key = coffer_story_acts::state::card_key(Owner(0), hunter);
    assert_eq!(
        coffer_story_acts::words::label(&s, key).unwrap(),
        format!("Bounty Hunter (#{hunter}, in the discard pile)")
    );
}

#[test]
fn s17_galactic_factors_show_their_signed_positions_and_ranges() {
    let mut s = game(&["militia"]);
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw }); // Coruscant: 2 Votes
    ok(&mut s, 0, push(0, false, 1));
    ok(&mut s, 0, push(2, true, 1));
    let t = table(&s, None);
    assert_eq!(
        rows(&t, "Galactic Factors"),
        [
            (
                Owner::GAME,
                "order".to_owned(),
                "-1 (range -3..3); p0's Coruscant prefers +2; p1's Korriban prefers -2".to_owned()
            ),
            (
                Owner::GAME,
                "prosperity".to_owned(),
                "0 (range -3..3); p0's Coruscant prefers +1".to_owned()
            ),
            (
                Owner::GAME,
                "war".to_owned(),
                "+1 (range -3..3); p1's Korriban prefers +2".to_owned()
            ),
        ]
    );
}

#[test]
fn s4_standing_vote_and_political_control() {
    let mut s = game(&["militia"]);
    let t = table(&s, None);
    assert_eq!(row(&t, "Politics", Owner(0), "standing Vote"), "2");
    assert_eq!(row(&t, "Politics", Owner(1), "standing Vote"), "1");
    assert_eq!(row(&t, "Politics", Owner::GAME, "political control"), "p0");
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw });
    let t = table(&s, None);
    assert_eq!(row(&t, "Politics", Owner(0), "standing Vote"), "0");
    assert_eq!(row(&t, "Politics", Owner::GAME, "political control"), "p1");
    assert_eq!(
        row(&t, "In play", Owner(0), &format!("Coruscant (#{hw})")),
        "Homeworld in p0's Planetary Band, activated (Votes committed), Prime face up"
    );
}

#[test]
fn s8_s9_a_card_in_play_shows_its_cp_readiness_and_ability_use() {
    let mut s = game(&["militia"]);
    let smuggler = to_play(&mut s, 0, "smuggler"); // cp 2, -1 CP: add 2 EV
    ok(&mut s, 0, A::UseAbility { card: smuggler });
    let t = table(&s, None);
    assert_eq!(
        row(&t, "In play", Owner(0), &format!("Smuggler (#{smuggler})")),
        "Character in p0's Planetary Band, ready, 1 CP, ability used this turn"
    );
}

#[test]
fn a_storyline_in_play_shows_its_steps() {
    let mut s = game(&["trade_war"]);
    let story = find(&s, 0, "trade_war");
    ok(&mut s, 0, deploy(story));
    let t = table(&s, Some(0));
    assert_eq!(
        row(&t, "In play", Owner(0), &format!("Trade War (#{story})")),
        format!("Storyline, 0 of {} steps done", s.def(story).steps)
    );
}

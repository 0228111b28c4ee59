//! S4 standing Vote and political control, S5 committed Votes and Galactic Factors, S6 EV, S7 the Resource
//! Pool.

use crate::common::*;
use coffer_core::{ActionError, Cause, Change, Owner, Refusal, Scope};
use coffer_story_acts::{Band, PoliticalTie};

#[test]
fn s4_standing_vote_counts_ready_characters_and_ground_units_only() {
    let mut s = game(&["militia"]);
    let senator = to_play(&mut s, 0, "senator"); // Character, 2
    let squad = to_play(&mut s, 0, "clone_squad"); // Ground Unit, 1
    let array = to_play(&mut s, 0, "comm_array"); // Device, 1 Vote, Add 1 EV
    assert_eq!(
        s.standing_vote(Owner(0)),
        2 + 2 + 1 + 1,
        "Coruscant 2 + Senator 2 + Squad 1 + Comm Array 1"
    );
    ok(
        &mut s,
        0,
        A::Move {
            card: senator,
            to: Band::Space,
        },
    );
    assert_eq!(
        s.standing_vote(Owner(0)),
        4,
        "an activated Character does not count"
    );
    ok(
        &mut s,
        0,
        A::Move {
            card: squad,
            to: Band::Space,
        },
    );
    assert_eq!(
        s.standing_vote(Owner(0)),
        3,
        "an activated Ground Unit does not count"
    );
    ok(&mut s, 0, A::AddEv { card: array });
    assert!(s.exhausted(array));
    assert_eq!(
        s.standing_vote(Owner(0)),
        3,
        "other cards count while activated for something else"
    );
}

#[test]
fn s4_standing_vote_is_never_spent() {
    let mut s = game(&["militia"]);
    to_play(&mut s, 0, "senator");
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw });
    ok(&mut s, 0, push(0, true, 2));
    assert_eq!(s.pool_votes(Owner(0)), 0);
    assert_eq!(
        s.standing_vote(Owner(0)),
        2,
        "the Senator's standing Vote is untouched by spending committed Votes"
    );
}

#[test]
fn s4_most_standing_vote_has_political_control() {
    let mut s = game(&["militia"]);
    assert_eq!(
        s.political_control(),
        Some(Owner(0)),
        "Coruscant 2 against Korriban 1"
    );
    to_play(&mut s, 1, "honor_guard");
    assert_eq!(s.political_control(), Some(Owner(1)), "3 against 2");
}

#[test]
fn s4_tie_in_standing_vote_gives_nobody_control() {
    let mut s = game(&["tax_levy"]);
    to_play(&mut s, 1, "clone_squad");
    assert_eq!(
        (s.standing_vote(Owner(0)), s.standing_vote(Owner(1))),
        (2, 2)
    );
    assert_eq!(s.political_control(), None);
    let card = find(&s, 0, "tax_levy");
    let e = refused(&mut s, 0, deploy(card));
    assert!(e.to_string().contains("political control"), "{e}");
}

#[test]
fn s4_tie_rule_is_configurable() {
    let mut s = game_with(2, &["tax_levy"], |c| {
        c.political_tie = PoliticalTie::ActivePlayer
    });
    to_play(&mut s, 1, "clone_squad");
    assert_eq!(
        s.political_control(),
        Some(Owner(0)),
        "the active player among the tied"
    );
    let card = find(&s, 0, "tax_levy");
    ok(&mut s, 0, deploy(card));
}

#[test]
fn s5_commit_votes_activates_the_card_and_removes_its_standing_vote_until_it_readies() {
    let mut s = game(&["militia"]);
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw });
    assert_eq!(s.pool_votes(Owner(0)), 2);
    assert!(s.exhausted(hw));
    assert_eq!(
        s.standing_vote(Owner(0)),
        0,
        "a committed Location leaves standing Vote"
    );
    let e = refused(&mut s, 0, A::CommitVotes { card: hw });
    assert!(e.to_string().contains("is activated"), "{e}");
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(
        s.standing_vote(Owner(0)),
        0,
        "still activated on the opponent's turn"
    );
    ok(&mut s, 1, A::EndTurn {});
    assert!(!s.exhausted(hw), "readied in p0's Ready Phase");
    assert_eq!(s.standing_vote(Owner(0)), 2);
}

#[test]
fn s5_adding_votes_is_fast_also_on_an_opponents_turn() {
    let mut s = game(&["militia"]);
    let hw1 = s.seats[1].homeworld;
    let rally = to_hand(&mut s, 1, "rally");
    let listed = legal(&s, 1);
    assert!(listed.contains(&A::CommitVotes { card: hw1 }), "{listed:?}");
    assert!(listed.contains(&deploy(rally)));
    assert!(
        !listed.contains(&A::EndTurn {}),
        "p1 has no slow actions on p0's turn"
    );
    ok(&mut s, 1, A::CommitVotes { card: hw1 });
    ok(&mut s, 1, deploy(rally));
    assert_eq!(s.pool_votes(Owner(1)), 1 + 2);
    let e = refused(&mut s, 1, push(0, false, 1));
    assert!(
        matches!(e, ActionError::NotYourTurn { .. }),
        "pushing factors is slow: {e}"
    );
}

#[test]
fn s5_pushing_a_factor_costs_one_committed_vote_per_step() {
    let mut s = game(&["militia"]);
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw });
    let e = refused(&mut s, 0, push(1, false, 3));
    assert!(
        matches!(
            e,
            ActionError::Refused(Refusal::Insufficient {
                need: 3,
                have: 2,
                ..
            })
        ),
        "{e}"
    );
    ok(&mut s, 0, push(1, false, 2));
    assert_eq!((s.factor(1), s.pool_votes(Owner(0))), (-2, 0));
}

#[test]
fn s5_votes_per_factor_step_is_configurable() {
    let mut s = game_with(2, &["militia"], |c| c.votes_per_factor_step = 2);
    let hw = s.seats[0].homeworld;
    ok(&mut s, 0, A::CommitVotes { card: hw });
    refused(&mut s, 0, push(0, true, 2));
    ok(&mut s, 0, push(0, true, 1));
    assert_eq!((s.factor(0), s.pool_votes(Owner(0))), (1, 0));
}

#[test]
fn s6_activating_an_add_n_ev_permanent_adds_n_ev() {
    let mut s = game(&["militia"]);
    let holocron = to_play(&mut s, 0, "holocron");
    ok(&mut s, 0, A::AddEv { card: holocron });
    assert_eq!(s.pool_ev(Owner(0)), 2);
    refused(&mut s, 0, A::AddEv { card: holocron });
    let senate = to_play(&mut s, 0, "senate_district");
    let e = refused(&mut s, 0, A::AddEv { card: senate });
    assert!(e.to_string().contains("EV"), "{e}");
}

#[test]
fn s7_resource_pool_empties_at_the_end_of_every_phase() {
    let mut s = game(&["militia"]);
    let hw0 = s.seats[0].homeworld;
    let hw1 = s.seats[1].homeworld;
    let holocron = to_play(&mut s, 0, "holocron");
    ok(&mut s, 0, A::CommitVotes { card: hw0 });
    ok(&mut s, 0, A::AddEv { card: holocron });
    ok(&mut s, 1, A::CommitVotes { card: hw1 });
    assert_eq!(
        (
            s.pool_votes(Owner(0)),
            s.pool_ev(Owner(0)),
            s.pool_votes(Owner(1))
        ),
        (2, 2, 1)
    );
    s.ledger.take_events();
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(
        (
            s.pool_votes(Owner(0)),
            s.pool_ev(Owner(0)),
            s.pool_votes(Owner(1))
        ),
        (0, 0, 0)
    );
    let expired = s
        .ledger
        .events()
        .iter()
        .filter(|e| {
            matches!(e.change, Change::Expire { .. }) && e.cause == Cause::Upkeep(Scope::Phase)
        })
        .count();
    assert_eq!(
        expired, 3,
        "the kernel empties each pool amount at the main phase's end"
    );
    // The pool cannot be banked across the automatic phases either: Votes committed in the main phase are
    // gone before the next main phase.
    assert_eq!(s.pool_votes(Owner(1)), 0);
}

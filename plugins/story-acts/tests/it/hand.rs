//! S10: draw one card in the Draw Phase; discard down to seven at the End Phase, the player choosing (K6).

use crate::common::*;
use coffer_core::{ActionError, Refusal};
use coffer_story_acts::{Phase, Zone};

#[test]
fn s10_draw_one_card_in_the_draw_phase() {
    let mut s = game(&["militia", "walker", "gunship"]);
    assert_eq!(s.hands[0].len(), 1, "p0 drew in its first Draw Phase");
    assert_eq!(s.hands[1].len(), 0);
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(s.hands[1].len(), 1);
    ok(&mut s, 1, A::EndTurn {});
    assert_eq!(s.hands[0].len(), 2);
    let drawn: Vec<&str> = s.hands[0].iter().map(|&c| s.def(c).id.as_str()).collect();
    assert_eq!(drawn, ["militia", "walker"], "from the top of the deck");
}

fn over_limit(extra: usize) -> coffer_story_acts::State {
    let mut s = game(&["militia"]);
    for id in [
        "walker",
        "gunship",
        "holocron",
        "senator",
        "scholar",
        "rally",
        "windfall",
        "spaceport",
        "freighter",
    ]
    .into_iter()
    .take(6 + extra)
    {
        to_hand(&mut s, 0, id);
    }
    s
}

#[test]
fn s10_discard_down_to_seven_the_player_choosing() {
    let mut s = over_limit(2); // 1 drawn + 8 = 9 cards
    assert_eq!(s.hands[0].len(), 9);
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(
        (s.active, s.phase),
        (0, Phase::End),
        "the turn waits for the choice"
    );
    let pending = s.ledger.pending().to_vec();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].excess, 2);
    // The discard is the only legal action, for anybody.
    let listed = legal(&s, 0);
    assert_eq!(listed.len(), 9);
    assert!(listed.iter().all(|a| matches!(a, A::Discard { .. })));
    assert!(legal(&s, 1).is_empty());
    let hw1 = s.seats[1].homeworld;
    let e = refused(&mut s, 1, A::CommitVotes { card: hw1 });
    assert!(
        matches!(
            e,
            ActionError::Refused(Refusal::AwaitingChoice { excess: 2, .. })
        ),
        "{e}"
    );
    let rally = s.hands[0]
        .iter()
        .copied()
        .find(|&c| s.def(c).id == "rally")
        .expect("rally");
    refused(&mut s, 0, deploy(rally));
    refused(&mut s, 0, A::EndTurn {});
    // The player chooses which cards go.
    let walker = s.hands[0]
        .iter()
        .copied()
        .find(|&c| s.def(c).id == "walker")
        .expect("walker");
    ok(&mut s, 0, A::Discard { card: walker });
    assert_eq!(s.cards[usize::from(walker)].zone, Zone::Discard);
    assert_eq!(s.ledger.pending()[0].excess, 1);
    assert_eq!(s.active, 0);
    ok(&mut s, 0, A::Discard { card: rally });
    assert_eq!(s.hands[0].len(), 7);
    assert!(s.ledger.pending().is_empty());
    assert_eq!(
        (s.active, s.phase),
        (1, Phase::Main),
        "the turn passes once the limit is met"
    );
    let e = refused(&mut s, 1, A::Discard { card: rally });
    assert!(e.to_string().contains("nothing to discard"), "{e}");
}

#[test]
fn s10_exactly_seven_cards_need_no_discard() {
    let mut s = over_limit(0); // 7 cards
    assert_eq!(s.hands[0].len(), 7);
    ok(&mut s, 0, A::EndTurn {});
    assert!(s.ledger.pending().is_empty());
    assert_eq!(s.active, 1);
}

#[test]
fn s10_hand_limit_is_configurable() {
    let mut s = game_with(2, &["militia", "walker"], |c| c.hand_limit = 0);
    ok(&mut s, 0, A::EndTurn {});
    assert_eq!(s.ledger.pending()[0].excess, 1);
}

#[test]
fn s10_a_hand_shows_its_cards_in_its_owners_table_alone() {
    use coffer_core::{Owner, Ruleset, Table};
    let s = game(&["militia", "walker"]);
    let r = coffer_story_acts::StoryActs::new();
    let table = |seat: Option<Owner>| {
        let mut t = Table::new(seat);
        r.table(&s, seat, &mut t);
        t
    };
    let drawn = s.hands[0][0];
    let mine = table(Some(Owner(0)));
    let hand = mine
        .sections
        .iter()
        .find(|x| x.title == "Hand")
        .expect("p0's own hand");
    assert_eq!(hand.rows.len(), 1);
    assert_eq!(hand.rows[0].label, format!("Planetary Militia (#{drawn})"));
    assert!(
        hand.rows[0]
            .value
            .starts_with("Ground Unit, cost 1 Currency"),
        "{}",
        hand.rows[0].value
    );
    for seat in [Some(Owner(1)), None] {
        let theirs = table(seat);
        assert!(
            theirs
                .sections
                .iter()
                .filter(|x| x.title == "Hand")
                .all(|x| x.rows.is_empty()),
            "{seat:?} sees no card in a hand (p1's own is empty)"
        );
        let text = format!("{theirs:?}");
        assert!(!text.contains("Militia"), "{seat:?} must not see p0's card");
        let held = theirs
            .sections
            .iter()
            .find(|x| x.title == "Hands and decks")
            .expect("hand sizes");
        let p0: Vec<(&str, &str)> = held
            .rows
            .iter()
            .filter(|row| row.owner == Owner(0))
            .map(|row| (&*row.label, &*row.value))
            .collect();
        let deck = format!("{} cards", s.decks[0].len());
        assert_eq!(p0, [("hand", "1 card"), ("deck", deck.as_str())]);
    }
}

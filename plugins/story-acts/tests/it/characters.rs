//! S8 Character Points, S9 activation and readying.

use crate::common::*;
use coffer_core::{ActionError, Change, Owner};
use coffer_story_acts::{Band, CardType, CpSplit, Zone};

fn split(parts: &[(u16, u16)]) -> CpSplit {
    CpSplit::try_from(parts.to_vec()).expect("split")
}

#[test]
fn s8_cp_starts_at_the_printed_value() {
    let mut s = game(&["militia"]);
    let ch = to_play(&mut s, 0, "chancellor");
    let sc = to_play(&mut s, 0, "scholar");
    assert_eq!((s.cp(ch), s.cp(sc)), (3, 3));
}

#[test]
fn s8_aligned_actions_raise_cp_without_maximum() {
    let mut s = game_with(2, &["militia"], |c| c.hand_limit = 100);
    let senator = to_play(&mut s, 0, "senator");
    for turn in 0..25 {
        ok(&mut s, 0, A::CommitVotes { card: senator });
        assert_eq!(s.cp(senator), 2 + turn + 1);
        round(&mut s);
    }
    let cp = s.cp_id(senator).expect("cp");
    assert_eq!(
        s.ledger.amount(cp).expect("amount").cap(),
        None,
        "no maximum"
    );
}

#[test]
fn s8_penalties_lower_cp_and_zero_destroys_a_non_prime_character() {
    let mut s = game(&["militia"]);
    let hunter = to_play(&mut s, 0, "bounty_hunter"); // cp 2, Penalties: move -1
    ok(
        &mut s,
        0,
        A::Move {
            card: hunter,
            to: Band::Space,
        },
    );
    assert_eq!(s.cp(hunter), 1);
    round(&mut s);
    ok(
        &mut s,
        0,
        A::Move {
            card: hunter,
            to: Band::Planetary(1),
        },
    );
    assert_eq!(s.cp(hunter), 0, "never below 0");
    assert_eq!(
        s.cards[usize::from(hunter)].zone,
        Zone::Discard,
        "destroyed at 0"
    );
}

#[test]
fn s8_morality_penalties_to_zero_make_a_prime_character_fall() {
    let mut s = game(&["militia"]);
    let apprentice = to_play(&mut s, 0, "dark_apprentice"); // Prime, cp 1, Penalties: commit -1, fallen_cp 1
    assert!(s.seats[0].prime_face);
    ok(&mut s, 0, A::CommitVotes { card: apprentice });
    let c = s.cards[usize::from(apprentice)];
    assert_eq!(
        c.zone,
        Zone::Play,
        "a Prime Character Falls instead of being destroyed"
    );
    assert!(c.fallen);
    assert_eq!(s.cp(apprentice), 1, "its fallen CP");
    assert!(
        !s.seats[0].prime_face,
        "the Fall flips the Homeworld off its Prime face (assumption)"
    );
    assert!(
        s.ledger
            .events()
            .iter()
            .any(|e| matches!(e.change, Change::Floor { .. })),
        "the kernel's floor event (K1.5) drove the Fall"
    );
    // Fallen, it is destroyed the next time.
    round(&mut s);
    ok(&mut s, 0, A::CommitVotes { card: apprentice });
    assert_eq!(s.cards[usize::from(apprentice)].zone, Zone::Discard);
}

#[test]
fn s8_fall_flipping_the_homeworld_is_configurable() {
    let mut s = game_with(2, &["militia"], |c| c.fall_flips_homeworld = false);
    let apprentice = to_play(&mut s, 0, "dark_apprentice");
    ok(&mut s, 0, A::CommitVotes { card: apprentice });
    assert!(s.cards[usize::from(apprentice)].fallen);
    assert!(s.seats[0].prime_face);
}

#[test]
fn s8_a_prime_character_brought_to_zero_other_than_by_morality_is_destroyed() {
    let mut s = game(&["militia"]);
    let knight = to_play(&mut s, 0, "jedi_knight"); // Prime, cp 2
    ok(&mut s, 0, A::EndTurn {});
    let temptation = to_hand(&mut s, 1, "temptation"); // drain 2 CP of an opponent's card
    ok(
        &mut s,
        1,
        A::Deploy {
            card: temptation,
            target: Some(knight),
            cp: Default::default(),
        },
    );
    let c = s.cards[usize::from(knight)];
    assert_eq!((c.zone, c.fallen), (Zone::Discard, false));
}

#[test]
fn s8_cp_cost_may_be_split_across_permanents() {
    let mut s = game(&["militia"]);
    let senator = to_play(&mut s, 0, "senator"); // cp 2
    let scholar = to_play(&mut s, 0, "scholar"); // cp 3
    let card = to_hand(&mut s, 0, "sacrifice"); // cp_cost 2: gain 5
    let listed: Vec<CpSplit> = legal(&s, 0)
        .into_iter()
        .filter_map(|a| match a {
            A::Deploy { card: c, cp, .. } if c == card => Some(cp),
            _ => None,
        })
        .collect();
    let (a, b) = (senator.min(scholar), senator.max(scholar));
    for want in [split(&[(a, 2)]), split(&[(a, 1), (b, 1)]), split(&[(b, 2)])] {
        assert!(listed.contains(&want), "{want:?} not in {listed:?}");
    }
    assert_eq!(listed.len(), 3);
    ok(
        &mut s,
        0,
        A::Deploy {
            card,
            target: None,
            cp: split(&[(a, 1), (b, 1)]),
        },
    );
    assert_eq!((s.cp(senator), s.cp(scholar)), (1, 2), "1 CP from each");
}

#[test]
fn s8_cp_split_must_sum_to_the_cost_and_each_part_be_affordable() {
    let mut s = game(&["militia"]);
    let senator = to_play(&mut s, 0, "senator"); // cp 2
    let scholar = to_play(&mut s, 0, "scholar"); // cp 3
    let card = to_hand(&mut s, 0, "sacrifice");
    let (a, b) = (senator.min(scholar), senator.max(scholar));
    for bad in [
        split(&[(a, 1)]),
        split(&[(a, 1), (b, 2)]),
        split(&[(b, 1), (a, 1)]),
        split(&[(a, 1), (a, 1)]),
        split(&[(a, 0), (b, 2)]),
    ] {
        refused(
            &mut s,
            0,
            A::Deploy {
                card,
                target: None,
                cp: bad,
            },
        );
    }
    // A holder short of its part.
    let hw = s.seats[0].homeworld;
    refused(
        &mut s,
        0,
        A::Deploy {
            card,
            target: None,
            cp: split(&[(hw, 2)]),
        },
    );
    let apprentice = to_play(&mut s, 0, "dark_apprentice"); // cp 1
    let e = refused(
        &mut s,
        0,
        A::Deploy {
            card,
            target: None,
            cp: split(&[(apprentice, 2)]),
        },
    );
    assert!(matches!(e, ActionError::Refused(_)), "{e}");
}

#[test]
fn s8_cp_ability_is_paid_from_that_character_once_per_turn() {
    let mut s = game(&["militia"]);
    let smuggler = to_play(&mut s, 0, "smuggler"); // cp 2, -1 CP: add 2 EV
    ok(&mut s, 0, A::UseAbility { card: smuggler });
    assert_eq!((s.cp(smuggler), s.pool_ev(Owner(0))), (1, 2));
    let e = refused(&mut s, 0, A::UseAbility { card: smuggler });
    assert!(e.to_string().contains("already used"), "{e}");
    assert!(!legal(&s, 0).contains(&A::UseAbility { card: smuggler }));
    round(&mut s);
    ok(&mut s, 0, A::UseAbility { card: smuggler });
    assert_eq!(s.cp(smuggler), 0);
    assert_eq!(
        s.cards[usize::from(smuggler)].zone,
        Zone::Discard,
        "paid down to 0: destroyed"
    );
}

#[test]
fn s8_cp_ability_refused_when_that_character_is_short() {
    let mut s = game(&["militia"]);
    let chancellor = to_play(&mut s, 0, "chancellor"); // cp 3, -2 CP: gain 3
    let _senator = to_play(&mut s, 0, "senator"); // other CP does not help
    ok(&mut s, 0, A::UseAbility { card: chancellor });
    round(&mut s);
    let e = refused(&mut s, 0, A::UseAbility { card: chancellor });
    let want = coffer_core::Refusal::Insufficient {
        key: coffer_core::Key::new(
            coffer_core::Owner(0),
            coffer_story_acts::state::kind::CP,
            u32::from(chancellor),
        ),
        need: 2,
        have: 1,
    };
    assert_eq!(e, ActionError::Refused(want), "{e}");
}

#[test]
fn s8_cp_ability_is_slow_only() {
    let mut s = game(&["militia"]);
    let smuggler = to_play(&mut s, 0, "smuggler");
    ok(&mut s, 0, A::EndTurn {});
    assert!(!legal(&s, 0).contains(&A::UseAbility { card: smuggler }));
    let e = refused(&mut s, 0, A::UseAbility { card: smuggler });
    assert!(matches!(e, ActionError::NotYourTurn { .. }), "{e}");
}

#[test]
fn s9_activated_cards_ready_in_the_ready_phase_and_not_before() {
    let mut s = game(&["militia"]);
    let squad = to_play(&mut s, 0, "clone_squad");
    ok(&mut s, 0, A::CommitVotes { card: squad });
    assert!(s.exhausted(squad));
    let e = refused(
        &mut s,
        0,
        A::Move {
            card: squad,
            to: Band::Space,
        },
    );
    assert!(e.to_string().contains("is activated"), "{e}");
    ok(&mut s, 0, A::EndTurn {});
    assert!(
        s.exhausted(squad),
        "p1's Ready Phase readies only p1's cards"
    );
    ok(&mut s, 1, A::EndTurn {});
    assert!(!s.exhausted(squad));
    ok(
        &mut s,
        0,
        A::Move {
            card: squad,
            to: Band::Space,
        },
    );
}

#[test]
fn s9_a_captured_location_readies_with_its_new_controller() {
    let mut s = game(&["militia"]);
    let port = to_play(&mut s, 1, "spaceport");
    to_play(&mut s, 1, "senate_district");
    let walker = to_band(&mut s, 0, "walker", Band::Surface(1));
    ok(
        &mut s,
        0,
        A::Capture {
            location: port,
            unit: walker,
        },
    );
    let perm = s.perm_id(port).expect("permanent");
    s.ledger
        .activate(perm, coffer_core::Cause::Setup)
        .expect("activate");
    ok(&mut s, 0, A::EndTurn {});
    assert!(
        s.exhausted(port),
        "not in p1's Ready Phase: p1 no longer controls it"
    );
    ok(&mut s, 1, A::EndTurn {});
    assert!(!s.exhausted(port), "in p0's Ready Phase");
    assert!(!s.exhausted(walker));
}

#[test]
fn s8_any_permanent_with_printed_cp_can_share_a_cp_cost() {
    let mut s = game(&["militia"]);
    let guard = to_play(&mut s, 0, "honor_guard"); // a Ground Unit with CP 2
    let senator = to_play(&mut s, 0, "senator");
    let card = to_hand(&mut s, 0, "sacrifice");
    let (a, b) = (guard.min(senator), guard.max(senator));
    ok(
        &mut s,
        0,
        A::Deploy {
            card,
            target: None,
            cp: split(&[(a, 1), (b, 1)]),
        },
    );
    assert_eq!((s.cp(guard), s.cp(senator)), (1, 1));
}

#[test]
fn s8_s9_every_card_names_its_own_permanent_cp_and_ability() {
    let s = game(&[]);
    let (mut perms, mut cps, mut abilities) = (Vec::new(), Vec::new(), Vec::new());
    for (i, c) in s.cards.iter().enumerate() {
        let card = i as u16;
        let d = s.rules.db.get(c.def);
        let permanent = !matches!(d.card_type, CardType::Maneuver | CardType::Storyline);
        assert_eq!(s.perm_id(card).is_some(), permanent, "{}", d.id);
        assert_eq!(s.cp_id(card).is_some(), d.cp.is_some(), "{}", d.id);
        assert_eq!(
            s.ability_id(card).is_some(),
            d.ability.is_some(),
            "{}",
            d.id
        );
        if let Some(id) = s.perm_id(card) {
            let key = s.ledger.permanent(id).expect("permanent").key();
            assert_eq!((key.owner.0, key.subject), (c.owner, u32::from(card)));
            perms.push(id);
        }
        if let Some(id) = s.cp_id(card) {
            let a = s.ledger.amount(id).expect("amount");
            assert_eq!(
                (a.key().owner.0, a.key().subject),
                (c.owner, u32::from(card))
            );
            assert_eq!(a.value(), i64::from(d.cp.unwrap_or(0)), "printed CP");
            cps.push(id);
        }
        if let Some(id) = s.ability_id(card) {
            let t = s.ledger.track(id).expect("track");
            assert_eq!(
                (t.key().owner.0, t.key().subject),
                (c.owner, u32::from(card))
            );
            abilities.push(id);
        }
    }
    for ids in [
        perms.iter().map(|i| i.index()).collect::<Vec<_>>(),
        cps.iter().map(|i| i.index()).collect(),
        abilities.iter().map(|i| i.index()).collect(),
    ] {
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), ids.len(), "one handle per card");
    }
    assert_eq!(perms.len(), s.ledger.permanents().len());
    assert!(!abilities.is_empty() && !cps.is_empty());
}

#[test]
fn s9_a_snapshot_whose_card_names_a_missing_handle_is_refused() {
    let ruleset = coffer_core::Adapter::shared(coffer_story_acts::StoryActs::new());
    let game = ruleset
        .new_game(&coffer_core::Setup::new(2, 3))
        .expect("a game");
    let json = game.snapshot(coffer_core::Format::Json).expect("snapshot");
    let restored = ruleset
        .restore(coffer_core::Format::Json, &json)
        .expect("an intact snapshot restores");
    assert_eq!(restored.state_hash(), game.state_hash());
    let binary = game
        .snapshot(coffer_core::Format::Binary)
        .expect("snapshot");
    let restored = ruleset
        .restore(coffer_core::Format::Binary, &binary)
        .expect("an intact snapshot restores");
    assert_eq!(restored.state_hash(), game.state_hash());

    let mut v: serde_json::Value = serde_json::from_slice(&json).expect("json");
    assert_eq!(v["cards"][0]["perm"], serde_json::json!(0), "the Homeworld");
    v["cards"][0]["perm"] = serde_json::json!(9999);
    let bytes = serde_json::to_vec(&v).expect("json");
    let err = ruleset
        .restore(coffer_core::Format::Json, &bytes)
        .err()
        .expect("a slot past the table is refused");
    assert!(err.to_string().contains("card #0"), "{err}");
    v["cards"][0]["perm"] = serde_json::json!(u16::MAX);
    let bytes = serde_json::to_vec(&v).expect("json");
    let err = ruleset
        .restore(coffer_core::Format::Json, &bytes)
        .err()
        .expect("the reserved slot is refused");
    assert!(err.to_string().contains("65535"), "{err}");
}

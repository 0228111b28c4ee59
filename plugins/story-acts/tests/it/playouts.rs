//! Random playouts: every listed legal action applies, every unlisted action is refused with the state hash
//! unchanged (the legal-action list is complete and sound), and invariants hold throughout.

use coffer_core::{Adapter, DynGame, Outcome, Owner, Setup};
use coffer_story_acts::{Action, Band, CpSplit, StoryActs};
use proptest::prelude::*;

fn band() -> impl Strategy<Value = Band> {
    prop_oneof![
        Just(Band::Space),
        (0u16..4).prop_map(Band::Surface),
        (0u16..4).prop_map(Band::Planetary)
    ]
}

fn split() -> impl Strategy<Value = CpSplit> {
    proptest::collection::vec((0u16..80, 0u16..4), 0..3)
        .prop_map(|v| CpSplit::try_from(v).expect("at most 4 parts"))
}

/// Any value of the Action type, with card numbers around the real range.
fn action() -> impl Strategy<Value = Action> {
    let card = 0u16..80;
    prop_oneof![
        (card.clone(), proptest::option::of(0u16..80), split())
            .prop_map(|(card, target, cp)| Action::Deploy { card, target, cp }),
        card.clone().prop_map(|card| Action::CommitVotes { card }),
        card.clone().prop_map(|card| Action::AddEv { card }),
        (0u8..4, any::<bool>(), 0u8..5).prop_map(|(factor, up, steps)| Action::PushFactor {
            factor,
            up,
            steps
        }),
        card.clone().prop_map(|card| Action::UseAbility { card }),
        (card.clone(), band()).prop_map(|(card, to)| Action::Move { card, to }),
        (card.clone(), card.clone())
            .prop_map(|(location, unit)| Action::Capture { location, unit }),
        card.clone()
            .prop_map(|location| Action::Restore { location }),
        card.clone()
            .prop_map(|card| Action::AdvanceStoryline { card }),
        card.clone()
            .prop_map(|card| Action::CompleteStoryline { card }),
        card.prop_map(|card| Action::Discard { card }),
        Just(Action::EndTurn {}),
    ]
}

#[derive(Clone, Debug)]
enum Step {
    Legal {
        player: u16,
        pick: usize,
    },
    Random {
        player: u16,
        action: Action,
    },
    /// A listed action with one field nudged: the near misses a sloppy enumeration would get wrong.
    Nudge {
        pick: usize,
        how: u8,
    },
}

fn bump(n: u16, how: u8) -> u16 {
    if how & 1 == 0 {
        n.wrapping_add(1)
    } else {
        n.wrapping_sub(1)
    }
}

fn nudge(a: Action, how: u8) -> Action {
    match a {
        Action::Deploy { card, target, cp } => match how % 3 {
            0 => Action::Deploy {
                card: bump(card, how),
                target,
                cp,
            },
            1 => Action::Deploy {
                card,
                target: Some(target.map_or(0, |t| bump(t, how))),
                cp,
            },
            _ => {
                let mut parts = cp.parts().to_vec();
                match parts.first_mut() {
                    Some(p) => p.1 = bump(p.1, how),
                    None => parts.push((bump(card, how), 1)),
                }
                Action::Deploy {
                    card,
                    target,
                    cp: CpSplit::try_from(parts).expect("parts"),
                }
            }
        },
        Action::CommitVotes { card } => Action::CommitVotes {
            card: bump(card, how),
        },
        Action::AddEv { card } => Action::AddEv {
            card: bump(card, how),
        },
        Action::PushFactor { factor, up, steps } => match how % 3 {
            0 => Action::PushFactor {
                factor,
                up,
                steps: steps.wrapping_add(1),
            },
            1 => Action::PushFactor {
                factor,
                up: !up,
                steps,
            },
            _ => Action::PushFactor {
                factor: factor.wrapping_add(1),
                up,
                steps,
            },
        },
        Action::UseAbility { card } => Action::UseAbility {
            card: bump(card, how),
        },
        Action::Move { card, to } => match how % 2 {
            0 => Action::Move {
                card: bump(card, how),
                to,
            },
            _ => Action::Move {
                card,
                to: match to {
                    Band::Space => Band::Planetary(0),
                    Band::Surface(q) => Band::Planetary(q),
                    Band::Planetary(q) => Band::Surface(q),
                },
            },
        },
        Action::Capture { location, unit } => match how % 2 {
            0 => Action::Capture {
                location: bump(location, how),
                unit,
            },
            _ => Action::Capture {
                location,
                unit: bump(unit, how),
            },
        },
        Action::Restore { location } => Action::Restore {
            location: bump(location, how),
        },
        Action::AdvanceStoryline { card } => Action::CompleteStoryline { card },
        Action::CompleteStoryline { card } => Action::AdvanceStoryline { card },
        Action::Discard { card } => Action::Discard {
            card: bump(card, how),
        },
        Action::EndTurn {} => Action::Discard { card: 0 },
    }
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        4 => (0u16..4, any::<usize>()).prop_map(|(player, pick)| Step::Legal { player, pick }),
        1 => (0u16..4, action()).prop_map(|(player, action)| Step::Random { player, action }),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(pick, how)| Step::Nudge { pick, how }),
    ]
}

fn listed(game: &mut Box<dyn DynGame>, player: Owner) -> Vec<String> {
    let n = game.legal_actions(player);
    (0..n)
        .map(|i| game.legal_action_json(i).expect("listed"))
        .collect()
}

/// Applies `action`: it must apply if it is listed, and be refused with the state hash unchanged if not.
fn try_unlisted(
    game: &mut Box<dyn DynGame>,
    p: Owner,
    action: Action,
) -> Result<(), TestCaseError> {
    let json = serde_json::to_string(&action).expect("json");
    let is_listed = listed(game, p).contains(&json);
    let before = game.state_hash();
    let r = game.apply_json(p, &json);
    if is_listed {
        prop_assert!(r.is_ok(), "listed action {json} by {p} refused: {:?}", r);
    } else {
        prop_assert!(r.is_err(), "unlisted action {json} by {p} was applied");
        prop_assert_eq!(
            game.state_hash(),
            before,
            "refused {} changed the state",
            json
        );
    }
    Ok(())
}

fn run(players: u16, seed: u64, steps: &[Step]) -> Result<(), TestCaseError> {
    let ruleset = Adapter::shared(StoryActs::new());
    let mut game = ruleset.new_game(&Setup::new(players, seed)).expect("setup");
    for s in steps {
        if game.outcome() != Outcome::Ongoing {
            break;
        }
        match s {
            Step::Legal { player, pick } => {
                // Prefer whoever has something to do: the active player or a pending discard.
                let mut p = Owner(player % players);
                if game.legal_actions(p) == 0 {
                    p = (0..players)
                        .map(Owner)
                        .find(|&q| game.legal_actions(q) > 0)
                        .expect("someone can act");
                }
                let n = game.legal_actions(p);
                let json = game.legal_action_json(pick % n).expect("listed");
                let r = game.apply_legal(p, pick % n);
                prop_assert!(r.is_ok(), "listed action {json} by {p} refused: {:?}", r);
            }
            Step::Random { player, action } => {
                try_unlisted(&mut game, Owner(player % players), *action)?;
            }
            Step::Nudge { pick, how } => {
                let p = (0..players)
                    .map(Owner)
                    .find(|&q| game.legal_actions(q) > 0)
                    .expect("someone can act");
                let n = game.legal_actions(p);
                let json = game.legal_action_json(pick % n).expect("listed");
                let listed: Action = serde_json::from_str(&json).expect("listed action reads back");
                try_unlisted(&mut game, p, nudge(listed, *how))?;
            }
        }
        let inv = game.check_invariants();
        prop_assert!(inv.is_ok(), "{:?}", inv);
        // `to_act` lists every player who has a legal action.
        let acting = game.to_act().to_vec();
        for q in (0..players).map(Owner) {
            prop_assert!(
                acting.contains(&q) || game.legal_actions(q) == 0,
                "{q} has legal actions but to_act lists only {acting:?}"
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn legal_actions_are_complete_and_sound(players in 2u16..5, seed in any::<u64>(), steps in proptest::collection::vec(step(), 1..400)) {
        run(players, seed, &steps)?;
    }
}

/// Long uniform playouts reach the end of Acts: the enumeration also holds deep into a game.
#[test]
fn long_random_playouts_finish_acts_and_keep_invariants() {
    let ruleset = Adapter::shared(StoryActs::new());
    let mut acts_ended = 0;
    for seed in 0..6u64 {
        let mut game = ruleset.new_game(&Setup::new(2, seed)).expect("setup");
        let mut rng = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        for _ in 0..4000 {
            if game.outcome() != Outcome::Ongoing {
                break;
            }
            let p = (0..2)
                .map(Owner)
                .find(|&q| game.legal_actions(q) > 0)
                .expect("someone can act");
            let n = game.legal_actions(p);
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            // Prefer anything over ending the turn, so Storylines get completed.
            let pick = (rng as usize) % n;
            game.apply_legal(p, pick).expect("listed action applies");
            game.check_invariants().expect("invariants");
        }
        let table = game.table(None);
        acts_ended += table
            .sections
            .iter()
            .filter(|s| s.title == "Acts")
            .flat_map(|s| &s.rows)
            .filter(|r| r.value.starts_with("won by"))
            .count();
    }
    assert!(acts_ended > 0, "no Act ended in 6 random games");
}

#[test]
fn refused_actions_leave_the_state_hash_unchanged() {
    let ruleset = Adapter::shared(StoryActs::new());
    let mut game = ruleset.new_game(&Setup::new(2, 9)).expect("setup");
    game.apply_json(Owner(0), r#"{"type":"commit_votes","card":0}"#)
        .expect("commit");
    let before = game.state_hash();
    let bad = [
        (0, r#"{"type":"commit_votes","card":0}"#), // exhausted (K5)
        (0, r#"{"type":"deploy","card":70000}"#),   // out of u16 range
        (0, r#"{"type":"deploy","card":-1}"#),      // negative
        (0, r#"{"type":"deploy","card":999}"#),     // no such card
        (0, r#"{"type":"teleport"}"#),              // unknown action
        (0, r#"{"type":"end_turn","extra":1}"#),    // unknown field
        (
            0,
            r#"{"type":"push_factor","factor":0,"up":true,"steps":3}"#,
        ), // 2 Votes committed
        (1, r#"{"type":"end_turn"}"#),              // not p1's turn
        (1, r#"{"type":"add_ev","card":0}"#),       // another player's card
        (0, r#"{"type":"discard","card":1}"#),      // nothing to discard
        (0, r#"{"type":"move","card":0,"to":"space"}"#), // a Homeworld is no unit
        (0, "not json"),
    ];
    for (p, json) in bad {
        let r = game.apply_json(Owner(p), json);
        assert!(r.is_err(), "{json} by p{p} should be refused");
        assert_eq!(game.state_hash(), before, "{json} changed the state");
    }
    assert!(game.apply_json(Owner(7), r#"{"type":"end_turn"}"#).is_err());
    assert_eq!(game.state_hash(), before);
}

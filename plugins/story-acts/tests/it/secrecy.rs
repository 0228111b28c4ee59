//! Hidden information stays hidden: two games that differ only in which cards p0 holds (one card swapped
//! between p0's hand and p0's deck, by editing a snapshot) look byte-identical to p1 and to a spectator —
//! tables, resources, the events of the same public actions, and the refusals of actions naming those
//! cards — while p0's own table tells them apart. A deck's order shows to nobody, its owner included.

use coffer_core::{Adapter, DynGame, DynRuleset, Format, Owner, Setup};
use coffer_story_acts::StoryActs;
use serde_json::Value;
use std::sync::Arc;

fn ruleset() -> Arc<dyn DynRuleset> {
    Adapter::shared(StoryActs::new())
}

fn snapshot(game: &dyn DynGame) -> Value {
    serde_json::from_slice(&game.snapshot(Format::Json).expect("snapshot")).expect("json")
}

fn restore(ruleset: &Arc<dyn DynRuleset>, v: &Value) -> Box<dyn DynGame> {
    ruleset
        .restore(Format::Json, &serde_json::to_vec(v).expect("json"))
        .expect("an edited snapshot that keeps the invariants restores")
}

fn card(v: &Value, i: u64) -> (u64, String) {
    let c = &v["cards"][i as usize];
    (
        c["def"].as_u64().expect("def"),
        c["zone"].as_str().expect("zone").to_owned(),
    )
}

/// Swaps the card at `hand_at` of p0's hand with the card at `deck_at` of p0's deck (top is last).
fn swap(v: &mut Value, hand_at: usize, deck_at: usize) -> (u64, u64) {
    let h = v["hands"][0][hand_at].as_u64().expect("a hand card");
    let d = v["decks"][0][deck_at].as_u64().expect("a deck card");
    v["hands"][0][hand_at] = d.into();
    v["decks"][0][deck_at] = h.into();
    v["cards"][h as usize]["zone"] = "deck".into();
    v["cards"][d as usize]["zone"] = "hand".into();
    (h, d)
}

/// The serialized bytes of everything `seat` sees now.
fn seen(game: &mut Box<dyn DynGame>, seat: Option<Owner>) -> Vec<u8> {
    let mut out = serde_json::to_vec(&game.table(seat)).expect("table");
    out.extend(serde_json::to_vec(&game.resources(seat)).expect("resources"));
    out.extend(serde_json::to_vec(&game.events_for(seat)).expect("events"));
    out
}

const OTHERS: [Option<Owner>; 2] = [Some(Owner(1)), None];

/// The same public actions for both games: commit Votes, end turns, through two more Draw Phases of p0's.
const PUBLIC: [(u16, &str); 6] = [
    (0, r#"{"type":"commit_votes","card":0}"#),
    (0, r#"{"type":"end_turn"}"#),
    (1, r#"{"type":"commit_votes","card":37}"#),
    (1, r#"{"type":"end_turn"}"#),
    (0, r#"{"type":"end_turn"}"#),
    (1, r#"{"type":"end_turn"}"#),
];

#[test]
fn other_seats_and_spectators_cannot_tell_what_p0_holds() {
    let ruleset = ruleset();
    let a = ruleset.new_game(&Setup::new(2, 11)).expect("setup");
    let snap = snapshot(&*a);
    // The hand's first card with the deck's top card: p0 draws it next, in one game and not the other.
    let top = snap["decks"][0].as_array().expect("deck").len() - 1;
    let mut edited = snap.clone();
    let (h, d) = swap(&mut edited, 0, top);
    assert_ne!(card(&snap, h).0, card(&snap, d).0, "two different cards");
    let mut a = restore(&ruleset, &snap);
    let mut b = restore(&ruleset, &edited);
    for seat in OTHERS {
        assert_eq!(
            seen(&mut a, seat),
            seen(&mut b, seat),
            "{seat:?} at the start"
        );
    }
    assert_ne!(
        serde_json::to_vec(&a.table(Some(Owner(0)))).expect("table"),
        serde_json::to_vec(&b.table(Some(Owner(0)))).expect("table"),
        "p0 sees its own hand"
    );
    let mut p0_events_differed = false;
    for (n, (player, json)) in PUBLIC.iter().enumerate() {
        a.apply_json(Owner(*player), json).expect("applies in a");
        b.apply_json(Owner(*player), json).expect("applies in b");
        for seat in OTHERS {
            assert_eq!(
                seen(&mut a, seat),
                seen(&mut b, seat),
                "{seat:?} after action {n}: {json}"
            );
        }
        p0_events_differed |= a.events_for(Some(Owner(0))) != b.events_for(Some(Owner(0)));
    }
    assert!(
        p0_events_differed,
        "p0's own events name the card it drew: {h} in one game, {d} in the other"
    );
}

#[test]
fn refusals_of_actions_naming_hidden_cards_do_not_tell_where_they_are() {
    let ruleset = ruleset();
    let a = ruleset.new_game(&Setup::new(2, 12)).expect("setup");
    let snap = snapshot(&*a);
    let mut edited = snap.clone();
    let (h, d) = swap(&mut edited, 0, 0);
    let mut a = restore(&ruleset, &snap);
    let mut b = restore(&ruleset, &edited);
    // p1 names both cards, out of turn and (after p0's turn ends) in turn.
    for round in 0..2 {
        if round == 1 {
            for game in [&mut a, &mut b] {
                game.apply_json(Owner(0), r#"{"type":"end_turn"}"#)
                    .expect("end turn");
            }
        }
        for c in [h, d] {
            for json in [
                format!(r#"{{"type":"deploy","card":{c}}}"#),
                format!(r#"{{"type":"commit_votes","card":{c}}}"#),
                format!(r#"{{"type":"add_ev","card":{c}}}"#),
                format!(r#"{{"type":"discard","card":{c}}}"#),
                format!(r#"{{"type":"restore","location":{c}}}"#),
            ] {
                let ea = a.apply_json(Owner(1), &json).expect_err("refused");
                let eb = b.apply_json(Owner(1), &json).expect_err("refused");
                assert_eq!(ea.to_string(), eb.to_string(), "round {round}: {json}");
            }
        }
    }
}

#[test]
fn a_decks_order_shows_to_nobody() {
    let ruleset = ruleset();
    let a = ruleset.new_game(&Setup::new(3, 13)).expect("setup");
    let snap = snapshot(&*a);
    let mut edited = snap.clone();
    let deck = edited["decks"][0].as_array_mut().expect("deck");
    deck.swap(0, 1);
    let mut a = restore(&ruleset, &snap);
    let mut b = restore(&ruleset, &edited);
    assert_ne!(a.state_hash(), b.state_hash(), "the games differ");
    for seat in [Some(Owner(0)), Some(Owner(1)), Some(Owner(2)), None] {
        assert_eq!(seen(&mut a, seat), seen(&mut b, seat), "{seat:?}");
    }
}

#[test]
fn a_hand_card_shows_only_in_its_owners_table_and_resources() {
    use coffer_story_acts::state::kind;
    let ruleset = ruleset();
    let game = ruleset.new_game(&Setup::new(2, 14)).expect("setup");
    let snap = snapshot(&*game);
    let hidden: Vec<u32> = snap["hands"][0]
        .as_array()
        .expect("hand")
        .iter()
        .filter_map(|c| c.as_u64().map(|c| c as u32))
        .collect();
    let card_resource = |k: coffer_core::Kind| [kind::CARD, kind::CP, kind::ABILITY].contains(&k);
    for seat in OTHERS {
        for r in game.resources(seat) {
            let key = r.key();
            assert!(
                !(card_resource(key.kind) && hidden.contains(&key.subject)),
                "{seat:?} sees {}",
                r.label()
            );
        }
        let table = serde_json::to_string(&game.table(seat)).expect("table");
        for &c in &hidden {
            assert!(
                !table.contains(&format!("(#{c})")),
                "{seat:?}'s table names #{c}"
            );
        }
    }
    let mine = serde_json::to_string(&game.table(Some(Owner(0)))).expect("table");
    for &c in &hidden {
        assert!(mine.contains(&format!("(#{c})")), "p0 sees its card #{c}");
    }
    let own = game.resources(Some(Owner(0)));
    assert!(
        own.iter()
            .any(|r| card_resource(r.key().kind) && hidden.contains(&r.key().subject)),
        "p0 sees the resources of its permanents in hand"
    );
}

//! T22: the action cards whose text touches command tokens: Summit, Insubordination, Unexpected Action,
//! Signal Jamming, Skilled Retreat, and the Leadership and Diplomacy Riders.

use crate::support::*;
use coffer_command_tokens::{Action, CommandTokens, Config, Phase, Pool, State, Step, Vote};
use coffer_core::Ruleset;

fn hands(cards: [&[&str]; 3]) -> Vec<Vec<String>> {
    cards
        .iter()
        .map(|h| h.iter().map(|c| c.to_string()).collect())
        .collect()
}

fn play(card: u8) -> Action {
    Action::PlayCard {
        card,
        player: None,
        system: None,
        fallback: None,
        vote: None,
        elect: None,
    }
}

/// A card played on a player and/or in a system.
fn play_on(card: u8, player: Option<u16>, system: Option<u16>) -> Action {
    Action::PlayCard {
        card,
        player,
        system,
        fallback: None,
        vote: None,
        elect: None,
    }
}

/// A rider with a prediction.
fn rider(card: u8, vote: Option<Vote>, elect: Option<u16>) -> Action {
    Action::PlayCard {
        card,
        player: None,
        system: None,
        fallback: None,
        vote,
        elect,
    }
}

/// The line galaxy with Sol, Hacan and Jol-Nar, `ships` and these hands, at p0's first turn.
fn with_hands(cards: [&[&str]; 3], ships: &[(u16, u16, u8, u32)]) -> State {
    let mut config = battlefield_config(["sol", "hacan", "jolnar"], &[], ships);
    config.action_cards = hands(cards);
    start(config)
}

#[test]
fn t22_summit_gains_two_command_tokens_at_the_start_of_the_strategy_phase() {
    let config = Config {
        action_cards: hands([&[], &["summit"], &[]]),
        ..Config::default()
    };
    let mut s = game(3, config);
    // The first strategy phase too: p1 decides before anyone picks.
    assert_eq!((s.flow.step, actor(&s)), (Step::StrategyWindow, 1));
    assert_eq!(legal(&s, 1), [play(0), Action::NoCard]);
    let before = sheet(&s, 1);
    ok(&mut s, 1, play(0));
    assert_eq!((s.flow.step, actor(&s)), (Step::Gain, 1));
    ok(&mut s, 1, Action::Gain { pool: Pool::Tactic });
    ok(&mut s, 1, Action::Gain { pool: Pool::Fleet });
    assert_eq!(
        sheet(&s, 1),
        [before[0] + 1, before[1] + 1, before[2], before[3] - 2]
    );
    // Played once: the picks begin.
    assert_eq!((s.flow.step, actor(&s)), (Step::Pick, 0));
    assert!(s.ledger.is_exhausted(s.h.hand[0]));
}

#[test]
fn t22_a_card_kept_for_later_is_offered_again_at_the_next_strategy_phase() {
    let config = Config {
        action_cards: hands([&["summit"], &[], &[]]),
        ..Config::default()
    };
    let mut s = game(3, config);
    ok(&mut s, 0, Action::NoCard);
    assert_eq!(s.flow.step, Step::Pick);
    pick(&mut s, &[0, 1, 2, 3, 4, 5]);
    finish_action_phase(&mut s);
    while s.flow.phase == Phase::Status {
        let p = actor(&s);
        let a = legal(&s, p)[0];
        ok(&mut s, p, a);
    }
    assert_eq!((s.flow.step, actor(&s)), (Step::StrategyWindow, 0));
}

#[test]
fn t22_insubordination_returns_a_token_from_another_players_tactic_pool() {
    let mut s = with_hands([&["insubordination"], &[], &[]], &[]);
    let choices: Vec<Action> = [1, 2]
        .map(|q| play_on(0, Some(q), None))
        .into_iter()
        .collect();
    assert!(choices.iter().all(|a| legal(&s, 0).contains(a)));
    let before = sheet(&s, 2);
    ok(&mut s, 0, play_on(0, Some(2), None));
    assert_eq!(
        sheet(&s, 2),
        [before[0] - 1, before[1], before[2], before[3] + 1]
    );
    // An action card's ACTION is the turn's action.
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
}

#[test]
fn t22_unexpected_action_returns_one_of_your_board_tokens_to_reinforcements() {
    let mut s = with_hands([&["unexpected-action"], &[], &[]], &[]);
    assert!(
        !legal(&s, 0)
            .iter()
            .any(|a| matches!(a, Action::PlayCard { .. })),
        "no token on the board: nothing to remove"
    );
    ok(&mut s, 0, Action::Tactical { system: B });
    ok(&mut s, 0, Action::Done);
    until_turn_of(&mut s, 0);
    let before = sheet(&s, 0);
    ok(&mut s, 0, play_on(0, None, Some(B)));
    assert!(!s.has_token(owner(0), usize::from(B)));
    assert_eq!(sheet(&s, 0)[3], before[3] + 1);
}

#[test]
fn t22_signal_jamming_places_another_players_token_near_your_ships() {
    let mut s = with_hands([&["signal-jamming"], &[], &[]], &[(B, 0, CRUISER, 1)]);
    // b holds p0's cruiser; a and c are adjacent to it; d is not.
    let l = legal(&s, 0);
    for system in [A, B, C] {
        assert!(l.contains(&play_on(0, Some(1), Some(system))), "{system}");
    }
    assert!(!l.contains(&play_on(0, Some(1), Some(D))));
    let e = refused(&mut s, 0, play_on(0, Some(1), Some(D)));
    assert_eq!(
        e.to_string(),
        "illegal action: Signal Jamming chooses a system that is no home system and holds or is adjacent to one of p0's ships, not system d"
    );
    let before = sheet(&s, 1);
    ok(&mut s, 0, play_on(0, Some(1), Some(C)));
    assert!(s.has_token(owner(1), usize::from(C)));
    assert_eq!(sheet(&s, 1)[3], before[3] - 1);
}

#[test]
fn t22_skilled_retreat_moves_every_ship_ends_the_combat_in_a_draw_and_places_a_token() {
    // p0 attacks p1's destroyer in c from b; p1 holds Skilled Retreat. d and e are adjacent to c.
    let mut s = with_hands(
        [&[], &["skilled-retreat"], &[]],
        &[(B, 0, CRUISER, 2), (C, 1, DESTROYER, 2)],
    );
    advance(&mut s, 0, C, &[(B, CRUISER, 0)]);
    // At the start of the combat round, the defender (the attacker has no card) decides.
    assert_eq!((s.flow.step, actor(&s)), (Step::CombatWindow, 1));
    let retreat = play_on(0, None, Some(E));
    assert!(legal(&s, 1).contains(&retreat));
    assert!(
        !legal(&s, 1).contains(&play_on(0, None, Some(B))),
        "b holds p0's ships"
    );
    let before = sheet(&s, 1);
    ok(&mut s, 1, retreat);
    assert_eq!(s.ships(owner(1), usize::from(E), usize::from(DESTROYER)), 2);
    assert_eq!(s.ships(owner(1), usize::from(C), usize::from(DESTROYER)), 0);
    assert!(s.has_token(owner(1), usize::from(E)));
    assert_eq!(sheet(&s, 1)[3], before[3] - 1);
    // A draw: no combat round follows; p0 produces in c.
    assert_eq!((s.flow.step, actor(&s)), (Step::Produce, 0));
    assert!(legal(&s, 0).contains(&Action::Produce { class: CRUISER }));
}

#[test]
fn t22_a_combatant_who_plays_no_card_goes_on_to_the_announcements() {
    let mut s = with_hands(
        [&["skilled-retreat"], &[], &[]],
        &[(B, 0, CRUISER, 1), (C, 1, DESTROYER, 1)],
    );
    advance(&mut s, 0, C, &[(B, CRUISER, 0)]);
    assert_eq!((s.flow.step, actor(&s)), (Step::CombatWindow, 0));
    ok(&mut s, 0, Action::NoCard);
    assert!(matches!(s.flow.step, Step::Announce | Step::Roll));
}

/// A game with an agenda phase from round 1, these hands, at the agenda phase.
fn agenda_hands(cards: [&[&str]; 3]) -> State {
    let config = Config {
        factions: strings(&["sol", "hacan", "jolnar"]),
        agenda_phase_from: 1,
        action_cards: hands(cards),
        ..Config::default()
    };
    let mut s = game(3, config);
    play_to_agenda_phase(&mut s);
    s
}

#[test]
fn t22_a_leadership_rider_gains_three_tokens_when_its_prediction_is_right() {
    let mut s = agenda_hands([&[], &["leadership-rider"], &["diplomacy-rider"]]);
    // Fleet Regulations (agenda 0) is For/Against: a rider predicts one of them.
    ok(&mut s, 0, Action::RevealAgenda { agenda: Some(0) });
    assert_eq!((s.flow.step, actor(&s)), (Step::Riders, 1));
    assert_eq!(
        legal(&s, 1),
        [
            rider(0, Some(Vote::For), None),
            rider(0, Some(Vote::Against), None),
            Action::NoCard
        ]
    );
    ok(&mut s, 1, rider(0, Some(Vote::Against), None));
    assert_eq!(actor(&s), 1, "another rider may follow");
    ok(&mut s, 1, Action::NoCard);
    assert_eq!((s.flow.step, actor(&s)), (Step::Riders, 2));
    ok(&mut s, 2, rider(1, Some(Vote::For), None));
    ok(&mut s, 2, Action::NoCard);
    assert_eq!((s.flow.step, actor(&s)), (Step::Outcome, 0));
    let before = sheet(&s, 1);
    let jolnar = sheet(&s, 2);
    ok(
        &mut s,
        0,
        Action::Outcome {
            vote: Vote::Against,
            voted_against: coffer_command_tokens::Players(0),
        },
    );
    // Against: a fleet token each (the agenda), then the right rider's 3 tokens for p1.
    assert_eq!((s.flow.step, actor(&s)), (Step::Gain, 1));
    for _ in 0..3 {
        ok(&mut s, 1, Action::Gain { pool: Pool::Tactic });
    }
    assert_eq!(
        sheet(&s, 1),
        [before[0] + 3, before[1] + 1, before[2], before[3] - 4]
    );
    // p2 predicted For: wrong, nothing more than the agenda's token.
    assert_eq!(
        sheet(&s, 2),
        [jolnar[0], jolnar[1] + 1, jolnar[2], jolnar[3] - 1]
    );
    assert_eq!(s.flow.step, Step::Reveal, "the second agenda");
}

#[test]
fn t22_a_diplomacy_rider_has_each_other_player_place_a_token_in_the_chosen_system() {
    let mut s = agenda_hands([&[], &[], &["diplomacy-rider"]]);
    // Armed Forces Standardization (3) elects a player: the rider predicts one.
    ok(&mut s, 0, Action::RevealAgenda { agenda: Some(3) });
    let e = refused(&mut s, 2, rider(0, Some(Vote::For), None));
    assert_eq!(
        e.to_string(),
        "illegal action: Diplomacy Rider predicts an outcome of Armed Forces Standardization, which elects a player: `vote` (for or against) or `elect` (a player still in the game)"
    );
    ok(&mut s, 2, rider(0, None, Some(1)));
    ok(&mut s, 2, Action::NoCard);
    ok(&mut s, 0, Action::Elect { player: 1 });
    // Right: p2 chooses a system, any (planets are not modelled), Mecatol Rex included.
    assert_eq!((s.flow.step, actor(&s)), (Step::Target, 2));
    ok(&mut s, 2, Action::Diplomacy { system: 0 });
    assert!(s.has_token(owner(0), 0));
    assert!(s.has_token(owner(1), 0));
    assert!(!s.has_token(owner(2), 0));
    assert_eq!(s.flow.step, Step::Reveal);
}

#[test]
fn t22_riders_on_an_agenda_not_modelled_are_resolved_by_the_outcome_entered() {
    let mut s = agenda_hands([&["leadership-rider"], &[], &[]]);
    ok(&mut s, 0, Action::RevealAgenda { agenda: None });
    assert_eq!((s.flow.step, actor(&s)), (Step::Riders, 0));
    ok(&mut s, 0, rider(0, None, Some(2)));
    ok(&mut s, 0, Action::NoCard);
    // Any outcome may be entered for an agenda not modelled.
    assert_eq!(s.flow.step, Step::Outcome);
    assert!(legal(&s, 0).contains(&Action::Outcome {
        vote: Vote::For,
        voted_against: coffer_command_tokens::Players(0),
    }));
    assert!(legal(&s, 0).contains(&Action::Elect { player: 2 }));
    let before = sheet(&s, 0);
    ok(&mut s, 0, Action::Elect { player: 1 });
    assert_eq!(sheet(&s, 0), before, "a wrong prediction gains nothing");
    assert_eq!(s.flow.step, Step::Reveal);
    // Without a rider, an agenda not modelled asks for no outcome.
    ok(&mut s, 0, Action::RevealAgenda { agenda: None });
    assert_eq!(s.flow.phase, Phase::Strategy);
}

#[test]
fn t22_each_card_is_played_once_and_only_in_its_window() {
    let mut s = with_hands([&["insubordination", "skilled-retreat"], &[], &[]], &[]);
    let e = refused(&mut s, 0, play_on(1, None, Some(B)));
    assert_eq!(
        e.to_string(),
        "illegal action: Skilled Retreat is played at the start of a combat round, not as an action"
    );
    let e = refused(&mut s, 0, play(0));
    assert_eq!(
        e.to_string(),
        "illegal action: Insubordination needs a `player`"
    );
    ok(&mut s, 0, play_on(0, Some(1), None));
    until_turn_of(&mut s, 0);
    let e = refused(&mut s, 0, play_on(0, Some(1), None));
    assert_eq!(
        e.to_string(),
        "illegal action: p0 has already played Insubordination (#0)"
    );
    let e = refused(&mut s, 1, play_on(0, Some(2), None));
    assert_says(&e, "it is not p1's turn");
}

#[test]
fn t22_hands_are_dealt_within_the_decks_copies() {
    let ruleset = CommandTokens::new();
    let mut config = Config {
        action_cards: hands([&["summit"], &["summit"], &[]]),
        ..Config::default()
    };
    let e = ruleset.new_game(3, 1, &config).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: action_cards[1][0]: 'summit' is dealt 2 times, but the deck holds 1"
    );
    config.action_cards = hands([&["bluff"], &[], &[]]);
    let e = ruleset.new_game(3, 1, &config).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("invalid configuration: action_cards[0][0]: unknown action card 'bluff'; known: summit, "),
        "{e}"
    );
    config.action_cards = hands([
        &["skilled-retreat", "skilled-retreat"],
        &["skilled-retreat"],
        &[],
    ]);
    assert!(ruleset.new_game(3, 1, &config).is_ok(), "four copies exist");
}

#[test]
fn t22_random_playouts_with_action_cards_keep_every_invariant() {
    let config = Config {
        factions: strings(&["sol", "hacan", "jolnar", "mahact"]),
        agenda_phase_from: 1,
        rounds: 3,
        action_cards: four_hands(),
        ..Config::default()
    };
    let mut played = 0;
    playouts_keep_invariants(4, &config, 40, |_, a| {
        played += usize::from(matches!(a, Action::PlayCard { .. }));
    });
    assert!(played > 40, "random play plays the cards: {played}");
}

// ----- T26 -----

/// The line galaxy with Sol, the Xxcha (owning Instinct Training) and Jol-Nar, these hands, at p0's first
/// turn.
fn with_instinct(cards: [&[&str]; 3]) -> State {
    let mut config = battlefield_config(["sol", "xxcha", "jolnar"], &[], &[]);
    config.action_cards = hands(cards);
    config.technologies = vec![vec![], vec!["instinct-training".into()], vec![]];
    start(config)
}

#[test]
fn t26_instinct_training_cancels_an_action_card_for_a_strategy_token() {
    let mut s = with_instinct([&["insubordination"], &[], &[]]);
    let before = [0, 1, 2].map(|p| sheet(&s, p));
    ok(&mut s, 0, play_on(0, Some(2), None));
    // Sol's Orbital Drop is ability #0, Instinct Training #1.
    assert_eq!((s.flow.step, actor(&s)), (Step::Cancel, 1));
    // The card waiting is part of the state: both snapshot formats carry it.
    let adapter = coffer_core::Adapter::shared(CommandTokens::new());
    let hosted = adapter
        .restore(coffer_core::Format::Json, &serde_json::to_vec(&s).unwrap())
        .unwrap();
    for format in [coffer_core::Format::Json, coffer_core::Format::Binary] {
        let bytes = hosted.snapshot(format).unwrap();
        let back = adapter.restore(format, &bytes).unwrap();
        assert_eq!(back.state_hash(), hosted.state_hash(), "{format:?}");
    }
    let cancel = Action::UseAbility {
        ability: 1,
        system: None,
        pool: None,
    };
    assert_eq!(legal(&s, 1), [cancel, Action::NoReaction]);
    ok(&mut s, 1, cancel);
    assert_eq!(
        sheet(&s, 1),
        [
            before[1][0],
            before[1][1],
            before[1][2] - 1,
            before[1][3] + 1
        ]
    );
    // The card is played for nothing, and p0's turn is over.
    assert_eq!(sheet(&s, 2), before[2], "no tactic token removed");
    assert!(s.ledger.is_exhausted(s.h.hand[0]));
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
}

#[test]
fn t26_an_action_card_not_cancelled_resolves() {
    let mut s = with_instinct([&["insubordination"], &[], &[]]);
    let before = sheet(&s, 2);
    ok(&mut s, 0, play_on(0, Some(2), None));
    ok(&mut s, 1, Action::NoReaction);
    assert_eq!(
        sheet(&s, 2),
        [before[0] - 1, before[1], before[2], before[3] + 1]
    );
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
}

#[test]
fn t26_a_card_of_the_xxcha_or_one_played_when_its_card_is_exhausted_is_not_offered_to_cancel() {
    let mut s = with_instinct([&[], &["insubordination"], &[]]);
    let strategy = sheet(&s, 1)[2] as i32;
    shift_reserve(&mut s, 1, Pool::Strategy, 1 - strategy);
    until_turn_of(&mut s, 1);
    ok(&mut s, 1, play_on(0, Some(2), None));
    assert_eq!(
        s.flow.step,
        Step::Turn,
        "the Xxcha's own card is not cancelled"
    );
}

#[test]
fn t26_random_playouts_with_instinct_training_keep_every_invariant() {
    let config = Config {
        factions: strings(&["sol", "xxcha", "jolnar", "mahact"]),
        agenda_phase_from: 1,
        rounds: 3,
        technologies: vec![vec![], vec!["instinct-training".into()], vec![], vec![]],
        action_cards: four_hands(),
        ..Config::default()
    };
    let mut cancelled = 0;
    playouts_keep_invariants(4, &config, 40, |s, a| {
        cancelled +=
            usize::from(s.flow.step != Step::Cancel && matches!(a, Action::UseAbility { .. }));
    });
    assert!(cancelled > 0, "random play cancels cards");
}

/// Four players' hands holding a card of every window, for random playouts.
fn four_hands() -> Vec<Vec<String>> {
    vec![
        vec!["summit".into(), "skilled-retreat".into()],
        vec!["insubordination".into(), "leadership-rider".into()],
        vec![
            "signal-jamming".into(),
            "diplomacy-rider".into(),
            "skilled-retreat".into(),
        ],
        vec!["unexpected-action".into(), "unexpected-action".into()],
    ]
}

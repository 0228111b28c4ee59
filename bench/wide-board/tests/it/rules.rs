//! The rules, through the host-facing `DynGame`: what is listed, what is refused, what a round's end does.

use coffer_core::{ActionError, Adapter, DynGame, GameRng, Outcome, Owner, Setup, testing};
use coffer_wide_board::{Action, Config, Pool, State, WideBoard};

fn game(players: u16, config: Config) -> Box<dyn DynGame> {
    Adapter::shared(WideBoard)
        .new_game(&Setup::new(players, 1).config(serde_json::to_value(config).unwrap()))
        .unwrap()
}

/// A game of `players` on `systems` systems for `rounds` rounds.
fn board(players: u16, systems: u16, rounds: u16) -> Box<dyn DynGame> {
    game(players, Config { systems, rounds })
}

fn act(g: &mut dyn DynGame, player: u16, json: &str) {
    g.apply_json(Owner(player), json)
        .unwrap_or_else(|e| panic!("p{player} {json}: {e}"));
}

fn state(g: &dyn DynGame) -> State {
    serde_json::from_slice(&g.snapshot(coffer_core::Format::Json).unwrap()).unwrap()
}

fn legal(g: &mut dyn DynGame, player: u16) -> Vec<String> {
    let n = g.legal_actions(Owner(player));
    (0..n).map(|i| g.legal_action_json(i).unwrap()).collect()
}

#[test]
fn a_tactical_action_into_a_system_holding_the_players_token_is_refused_and_changes_nothing() {
    let mut g = game(2, Config::default());
    act(&mut *g, 0, r#"{"type":"tactical","system":4}"#);
    act(&mut *g, 1, r#"{"type":"tactical","system":4}"#); // another player's token does not block
    let before = g.state_hash();
    let refused = g.apply_json(Owner(0), r#"{"type":"tactical","system":4}"#);
    assert!(
        matches!(refused, Err(ActionError::Illegal(ref m)) if m.contains("system 4")),
        "{refused:?}"
    );
    assert_eq!(g.state_hash(), before);
    let listed = legal(&mut *g, 0);
    assert!(!listed.contains(&r#"{"type":"tactical","system":4}"#.to_owned()));
    assert_eq!(listed.len(), 29 + 2);
}

#[test]
fn legal_actions_are_open_systems_by_index_then_strategic_then_pass() {
    let mut g = board(3, 4, 2);
    act(&mut *g, 0, r#"{"type":"tactical","system":1}"#);
    act(&mut *g, 1, r#"{"type":"pass"}"#);
    act(&mut *g, 2, r#"{"type":"pass"}"#);
    assert_eq!(
        legal(&mut *g, 0),
        [
            r#"{"type":"tactical","system":0}"#,
            r#"{"type":"tactical","system":2}"#,
            r#"{"type":"tactical","system":3}"#,
            r#"{"type":"strategic"}"#,
            r#"{"type":"pass"}"#,
        ]
    );
    assert!(
        legal(&mut *g, 1).is_empty(),
        "only the player to act has actions"
    );
}

#[test]
fn the_strategic_action_gains_two_tactic_tokens_once_per_round() {
    let mut g = game(2, Config::default());
    act(&mut *g, 0, r#"{"type":"strategic"}"#);
    let s = state(&*g);
    assert_eq!(
        (
            s.pool(Owner(0), Pool::Tactic),
            s.pool(Owner(0), Pool::Strategy)
        ),
        (5, 1)
    );
    act(&mut *g, 1, r#"{"type":"pass"}"#);
    let before = g.state_hash();
    assert!(g.apply_json(Owner(0), r#"{"type":"strategic"}"#).is_err());
    assert_eq!(g.state_hash(), before);
    assert!(!legal(&mut *g, 0).contains(&r#"{"type":"strategic"}"#.to_owned()));
}

#[test]
fn a_player_with_an_empty_tactic_pool_has_no_tactical_action_and_one_is_refused() {
    let mut g = game(2, Config::default());
    act(&mut *g, 0, r#"{"type":"tactical","system":0}"#);
    act(&mut *g, 1, r#"{"type":"pass"}"#);
    act(&mut *g, 0, r#"{"type":"tactical","system":1}"#);
    act(&mut *g, 0, r#"{"type":"tactical","system":2}"#);
    assert_eq!(
        legal(&mut *g, 0),
        [r#"{"type":"strategic"}"#, r#"{"type":"pass"}"#]
    );
    let before = g.state_hash();
    assert!(
        g.apply_json(Owner(0), r#"{"type":"tactical","system":3}"#)
            .is_err()
    );
    assert_eq!(g.state_hash(), before);
}

#[test]
fn the_round_ends_when_everyone_passed_scoring_held_systems_and_returning_every_board_token() {
    let mut g = game(3, Config::default());
    act(&mut *g, 0, r#"{"type":"tactical","system":0}"#);
    act(&mut *g, 1, r#"{"type":"tactical","system":0}"#);
    act(&mut *g, 2, r#"{"type":"pass"}"#);
    act(&mut *g, 0, r#"{"type":"tactical","system":9}"#);
    act(&mut *g, 1, r#"{"type":"pass"}"#);
    act(&mut *g, 0, r#"{"type":"pass"}"#);
    let s = state(&*g);
    assert_eq!(s.round(), 1);
    assert_eq!(
        (0..3).map(|p| s.score(Owner(p))).collect::<Vec<_>>(),
        [2, 1, 0]
    );
    for p in (0..3).map(Owner) {
        assert_eq!(s.board_tokens(p), 0);
    }
    // p0 spent 2 tactic tokens (3 -> 1) and gains 1 back: 8 + 2 returned - 2 gained in reinforcements.
    assert_eq!(
        (
            s.pool(Owner(0), Pool::Tactic),
            s.pool(Owner(0), Pool::Strategy)
        ),
        (2, 3)
    );
    assert_eq!(s.active(), Some(Owner(1)), "round 2 starts with p1");
    assert!(g.check_invariants().is_ok());
}

#[test]
fn after_the_last_round_the_highest_score_wins_and_nobody_may_act() {
    let mut g = board(2, 3, 1);
    act(&mut *g, 0, r#"{"type":"tactical","system":2}"#);
    act(&mut *g, 1, r#"{"type":"pass"}"#);
    act(&mut *g, 0, r#"{"type":"pass"}"#);
    assert_eq!(
        g.outcome(),
        Outcome::Finished {
            winners: vec![Owner(0)],
            scores: vec![1, 0]
        }
    );
    assert!(g.acting().is_empty());
    assert_eq!(
        g.apply_json(Owner(1), r#"{"type":"pass"}"#),
        Err(ActionError::GameOver)
    );
}

#[test]
fn a_configuration_out_of_range_is_refused_naming_the_value() {
    let ruleset = Adapter::shared(WideBoard);
    for (config, word) in [
        (serde_json::json!({"systems": 0}), "systems 0"),
        (serde_json::json!({"rounds": 101}), "rounds 101"),
    ] {
        let refused = ruleset
            .new_game(&Setup::new(2, 1).config(config))
            .err()
            .unwrap();
        assert!(refused.to_string().contains(word), "{refused}");
    }
}

#[test]
fn events_answer_the_last_accepted_action_alone_after_a_refusal_and_in_a_copy() {
    // The adapter forgets older events in bulk, every few actions; what `events` and `events_for` answer
    // must still be exactly the last accepted action's events, round ends included.
    let ruleset = WideBoard;
    let mut g = game(6, Config::default());
    let mut s = State::new(6, 1, &Config::default()).unwrap();
    drop(s.ledger.take_events()); // setup's events, as the adapter drops them
    let mut rng = GameRng::new(7);
    let mut steps = 0;
    while let Some(first) = g.acting().first().copied() {
        let player = first.owner();
        let n = g.legal_actions(player);
        let json = g.legal_action_json(rng.below(n as u64) as usize).unwrap();
        let action: Action = serde_json::from_str(&json).unwrap();
        let expected = testing::applies(&ruleset, &mut s, player, &action);
        act(&mut *g, player.0, &json);
        assert_eq!(g.events(), &expected[..], "step {steps}: {json}");
        assert_eq!(g.events_for(None), expected, "step {steps}");
        // A refusal (rolled back by the kernel when the player holds a system) leaves them.
        if let Some(next) = s.active() {
            let held = (0..30).find(|&k| s.ledger.tokens(s.h.systems[k], next) > 0);
            let system = held.unwrap_or(999);
            let refused = format!(r#"{{"type":"tactical","system":{system}}}"#);
            assert!(g.apply_json(next, &refused).is_err(), "step {steps}");
            assert_eq!(g.events(), &expected[..], "step {steps}, after {refused}");
        }
        assert_eq!(g.clone_game().events(), &expected[..], "step {steps}");
        steps += 1;
    }
    assert!(steps > 100, "{steps} steps");
}

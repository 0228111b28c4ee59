//! `legal` over HTTP against a game played in this process: every seat's legal actions after each
//! action are the game's own, and the server answers them from the lists it kept at that action.

use serde_json::Value;

use crate::client::{Api, FAST, submit_body};
use crate::play::{Script, play_lines};
use crate::support::{Server, legal, metric};

const KEPT: &str = "coffer_legal_kept_total";

/// Plays `ruleset`'s script over HTTP, asking every seat's legal actions before each line: they must be
/// the in-process game's at that point, and only the very first request (before anything was kept)
/// may make a call into the game.
async fn every_seat_legal_along_the_script(ruleset: &'static str) {
    let script = Script::load(ruleset);
    let (mut reference, _) = script.first(0).reference();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&dir.path().join("games.db"), &FAST);
    let api = Api::new(&server.base);
    let client = reqwest::Client::new();
    let (game, tokens) = api.create(&script.create_body()).await;
    let kept_before = metric(&client, &server.base, KEPT).await;
    let mut asked = 0;
    for (i, line) in script.lines.iter().enumerate() {
        for seat in 0..script.players {
            let (seq, actions) =
                legal(&client, &server.base, game, &tokens[usize::from(seat)]).await;
            asked += 1;
            let expected: Vec<Value> = reference
                .legal_actions(seat)
                .iter()
                .map(|json| serde_json::from_str(json).expect("a legal action is JSON"))
                .collect();
            assert_eq!(
                seq, i as u64,
                "{ruleset}: the sequence number of p{seat}'s list"
            );
            assert_eq!(
                actions,
                expected,
                "{ruleset}: p{seat}'s legal actions before line {}",
                i + 1
            );
        }
        play_lines(&api, game, &tokens, &script, i..i + 1).await;
        reference
            .apply_json(line.player, &line.action)
            .expect("the script's line applies in process");
    }
    let kept = metric(&client, &server.base, KEPT).await - kept_before;
    assert_eq!(
        kept,
        f64::from(asked - 1),
        "{ruleset}: every legal request but the first was answered from the kept lists"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charges_legal_of_every_seat_after_each_action_is_the_games_own_and_needs_no_call() {
    every_seat_legal_along_the_script("charges").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_tokens_legal_of_every_seat_after_each_action_is_the_games_own_and_needs_no_call() {
    every_seat_legal_along_the_script("command-tokens").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_acts_legal_of_every_seat_after_each_action_is_the_games_own_and_needs_no_call() {
    every_seat_legal_along_the_script("story-acts").await;
}

/// Plays `ruleset`'s script over HTTP with an idempotency key per line, asking `then=legal`: each answer
/// carries the actor's own legal actions after its action exactly when it may act again, equal to the
/// in-process game's at the new sequence number; a retry of the same key answers the action as the
/// first answer did, without them, asked or not.
async fn each_answer_carries_the_actors_next_legal_actions(ruleset: &'static str) {
    let script = Script::load(ruleset);
    let (mut reference, _) = script.first(0).reference();
    let dir = tempfile::tempdir().expect("a temporary directory");
    let server = Server::start(&dir.path().join("games.db"), &FAST);
    let api = Api::new(&server.base);
    let (game, tokens) = api.create(&script.create_body()).await;
    let (mut with, mut without) = (0, 0);
    for (i, line) in script.lines.iter().enumerate() {
        let token = &tokens[usize::from(line.player)];
        let key = format!("line-{i}");
        let submit = |then: &'static str| {
            let path = format!("/api/games/{game}/actions{then}");
            let body = submit_body(&line.action, Some(i as u64), Some(&key));
            let api = &api;
            async move { api.post(&path, Some(token), body).await }
        };
        let reply = submit("?then=legal").await;
        assert_eq!(
            reply.status,
            reqwest::StatusCode::OK,
            "{ruleset} line {}: {}",
            i + 1,
            reply.body
        );
        reference
            .apply_json(line.player, &line.action)
            .expect("the script's line applies in process");
        let expected: Vec<Value> = reference
            .legal_actions(line.player)
            .iter()
            .map(|json| serde_json::from_str(json).expect("a legal action is JSON"))
            .collect();
        let answer = reply.json();
        if expected.is_empty() {
            without += 1;
            assert!(
                answer.get("legal").is_none(),
                "{ruleset} line {}: p{} may not act again, yet its answer lists {}",
                i + 1,
                line.player,
                answer["legal"]
            );
        } else {
            with += 1;
            assert_eq!(
                answer["legal"]["seq"],
                i as u64 + 1,
                "{ruleset} line {}",
                i + 1
            );
            assert_eq!(
                answer["legal"]["actions"].as_array(),
                Some(&expected),
                "{ruleset} line {}: p{}'s legal actions after its action",
                i + 1,
                line.player
            );
        }
        // Repeated, asked or not: the action as the first answer had it, nothing more.
        let mut action = answer.clone();
        if let Some(object) = action.as_object_mut() {
            object.remove("legal");
        }
        for then in ["?then=legal", ""] {
            let retry = submit(then).await;
            assert_eq!(
                retry.json(),
                action,
                "{ruleset} line {}: the repeated answer{then}",
                i + 1
            );
        }
    }
    // The scripts have both kinds of answer (a seat acting twice in a row, and the turn passing on).
    assert!(
        with > 0 && without > 0,
        "{ruleset}: {with} answers with legal actions, {without} without"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn charges_answer_to_an_action_lists_the_actors_next_legal_actions() {
    each_answer_carries_the_actors_next_legal_actions("charges").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_tokens_answer_to_an_action_lists_the_actors_next_legal_actions() {
    each_answer_carries_the_actors_next_legal_actions("command-tokens").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn story_acts_answer_to_an_action_lists_the_actors_next_legal_actions() {
    each_answer_carries_the_actors_next_legal_actions("story-acts").await;
}

//! `legal` over HTTP against a game played in this process: every seat's legal actions after each
//! action are the game's own, and the server answers them from the lists it kept at that action.

use serde_json::Value;

use crate::client::{Api, FAST};
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

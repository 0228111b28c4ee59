//! The server's bots (liveness): seats the server plays itself, through the path a client's action takes.
//! A game of bots plays itself to its end; a person plays against a bot that answers each move; bot
//! seats take no token and no joiner; a game recovered from the store with a bot to act goes on; and
//! every stored hash is what the same actions give when replayed in this process, without any bot.

use std::path::Path;
use std::time::Duration;

use coffer_core::Setup as CoreSetup;
use coffer_host::Registry;
use coffer_server::{GameId, NewGame, RulesetKey, Setup, SqliteConfig, SqliteStore, Store as _};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::client::{Api, FAST, play_first_legal, replay_log, until_finished};
use crate::support::Server;

/// [`replay_log`], answering how many actions each seat made.
fn assert_replays(db: &Path, game: u64, ruleset: &str, setup: CoreSetup) -> Vec<usize> {
    let mut per_seat = vec![0; usize::from(setup.players)];
    for action in replay_log(db, game, ruleset, setup) {
        per_seat[action.seat as usize] += 1;
    }
    per_seat
}

/// Creates a game from `body` on `api`'s server (201 or the test fails); answers the creation.
async fn create(api: &Api, body: Value) -> Value {
    let reply = api.post("/api/games", None, body.to_string()).await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    reply.json()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_of_bots_plays_itself_to_its_end_and_its_log_replays_to_every_stored_hash() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 4});
    let created = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 11, "config": config,
                   "bots": {"0": "random", "1": "search"}}),
    )
    .await;
    assert_eq!(
        created["tokens"],
        json!([null, null]),
        "a bot seat has no token"
    );
    let game = created["game"].as_u64().unwrap();
    let summary = until_finished(&api, game).await;
    assert_eq!(summary["bots"], json!({"0": "random", "1": "search"}));
    assert_eq!(summary["free_seats"], json!([]), "a bot seat is not free");
    let joined = api
        .post(&format!("/api/games/{game}/join"), None, "{}".into())
        .await;
    assert_eq!(joined.status, StatusCode::CONFLICT, "{}", joined.body);
    // The history says who chose each move: the server's bot.
    let history = api
        .get(&format!("/api/games/{game}/events?since=0"), None)
        .await
        .json();
    let messages = history.as_array().expect("a list of actions");
    assert!(!messages.is_empty());
    assert!(messages.iter().all(|m| m["by"] == "bot"), "{history}");
    assert!(server.terminate().success());
    let per_seat = assert_replays(&db, game, "charges", CoreSetup::new(2, 11).config(config));
    assert!(
        per_seat.iter().all(|&n| n > 0),
        "both bots played: {per_seat:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_plays_against_a_bot_that_answers_each_move_and_cannot_take_its_seat() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 3});
    let created = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 3, "config": config,
                   "bots": {"1": "random"}}),
    )
    .await;
    let game = created["game"].as_u64().unwrap();
    let token = created["tokens"][0]
        .as_str()
        .expect("seat 0 is a person's")
        .to_owned();
    assert!(created["tokens"][1].is_null());
    let taken = api
        .post(
            &format!("/api/games/{game}/join"),
            None,
            json!({"seat": 1}).to_string(),
        )
        .await;
    assert_eq!(taken.status, StatusCode::CONFLICT, "{}", taken.body);
    assert!(taken.body.contains("bot"), "{}", taken.body);
    // Seat 0 plays its first legal action whenever it has one; the bot plays seat 1 meanwhile.
    let mine = play_first_legal(&api, game, &token, usize::MAX).await;
    assert!(mine > 0);
    assert!(server.terminate().success());
    let per_seat = assert_replays(&db, game, "charges", CoreSetup::new(2, 3).config(config));
    assert_eq!(
        per_seat[0], mine,
        "every stored action of seat 0 is the person's"
    );
    assert!(per_seat[1] > 0, "the bot played: {per_seat:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_that_are_unknown_on_missing_seats_or_on_open_seats_are_refused_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(&dir.path().join("coffer.db"), &FAST);
    let api = Api::new(&server.base);
    for (bots, open, words) in [
        (
            json!({"1": "grandmaster"}),
            json!([]),
            "unknown bot 'grandmaster'",
        ),
        (
            json!({"2": "random"}),
            json!([]),
            "bot seat 2 does not exist",
        ),
        (
            json!({"1": "random"}),
            json!([1]),
            "both left open and played by a bot",
        ),
    ] {
        let reply = api
            .post(
                "/api/games",
                None,
                json!({"ruleset": "charges", "players": 2, "bots": bots, "open_seats": open})
                    .to_string(),
            )
            .await;
        assert_eq!(
            reply.status,
            StatusCode::BAD_REQUEST,
            "{bots}: {}",
            reply.body
        );
        assert!(reply.body.contains(words), "{bots}: {}", reply.body);
    }
    let listed = api.get("/api/games", None).await.json();
    assert_eq!(listed, json!([]), "nothing was created");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_game_recovered_from_the_store_with_bots_to_act_plays_on_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let registry = Registry::with_static().expect("the static rulesets register");
    let entry = registry.get("story-acts").expect("story-acts is linked");
    let config = json!({});
    {
        let store = SqliteStore::open(&db, SqliteConfig::default()).expect("the store opens");
        store
            .create_game(NewGame {
                id: GameId(41),
                ruleset: RulesetKey::new(&entry.key()).expect("a key"),
                setup: Setup {
                    players: 2,
                    seed: 8,
                    config: config.clone(),
                    bots: [(0, "random".to_owned()), (1, "random".to_owned())].into(),
                    clock: None,
                },
                created_unix_ms: 1_800_000_000_000,
                seats: vec![None, None],
            })
            .expect("stored");
    }
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let summary = until_finished(&api, 41).await;
    assert_eq!(summary["bots"], json!({"0": "random", "1": "random"}));
    assert!(server.terminate().success());
    assert_replays(&db, 41, "story-acts", CoreSetup::new(2, 8).config(config));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_that_resigns_is_played_by_the_bot_to_the_end_also_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("coffer.db");
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    let config = json!({"max_rounds": 3});
    let created = create(
        &api,
        json!({"ruleset": "charges", "players": 2, "seed": 12, "config": config}),
    )
    .await;
    let game = created["game"].as_u64().unwrap();
    let tokens: Vec<String> = serde_json::from_value(created["tokens"].clone()).unwrap();
    let resign = |token: String| {
        let api = &api;
        async move {
            api.post(
                &format!("/api/games/{game}/resign"),
                Some(&token),
                String::new(),
            )
            .await
        }
    };
    let resigned = resign(tokens[1].clone()).await;
    assert_eq!(resigned.status, StatusCode::OK, "{}", resigned.body);
    assert_eq!(
        resigned.json(),
        json!({"game": game, "seat": 1, "bot": "random"})
    );
    let again = resign(tokens[1].clone()).await;
    assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    assert_eq!(api.summary(game).await["bots"], json!({"1": "random"}));
    // The store keeps it: after a restart the bot still plays seat 1.
    assert!(server.terminate().success());
    let mut server = Server::start(&db, &FAST);
    let api = Api::new(&server.base);
    assert_eq!(api.summary(game).await["bots"], json!({"1": "random"}));
    let mine = play_first_legal(&api, game, &tokens[0], usize::MAX).await;
    until_finished(&api, game).await;
    assert!(server.terminate().success());
    let per_seat = assert_replays(&db, game, "charges", CoreSetup::new(2, 12).config(config));
    assert_eq!(per_seat[0], mine);
    assert!(per_seat[1] > 0, "the bot played seat 1: {per_seat:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bots_act_no_faster_than_a_persons_seat_may() {
    let dir = tempfile::tempdir().unwrap();
    // The default limits: 50 actions a second per seat.
    let server = Server::start(&dir.path().join("coffer.db"), &[]);
    let api = Api::new(&server.base);
    let reply = api
        .post(
            "/api/games",
            None,
            json!({"ruleset": "command-tokens", "players": 3, "seed": 1,
                   "bots": {"0": "random", "1": "random", "2": "random"}})
            .to_string(),
        )
        .await;
    assert_eq!(reply.status, StatusCode::CREATED, "{}", reply.body);
    let game = reply.json()["game"].as_u64().unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let summary = api.summary(game).await;
    let seq = summary["seq"].as_u64().unwrap();
    assert!(
        summary["finished"] == false,
        "a game of command-tokens outlasts a second: {summary}"
    );
    assert!(
        (10..=60).contains(&seq),
        "{seq} bot moves in a second (at most 50 a second)"
    );
}

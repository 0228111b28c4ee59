//! A node following another node's game applies its actions from the notices that announce them
//! (server2: followers do not re-read the store per action).

use super::*;

/// Actions played in the followed game.
const PLAYED: u64 = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_applies_each_action_from_its_notice_without_reading_the_store() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(3)).await else {
        return;
    };
    let (_, servers, _, client) = scenario.parts();
    let created: Value = client
        .post(format!("{}/api/games", servers[0].base))
        .json(&json!({"ruleset": "charges", "players": 2, "seed": 5}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let (game, tokens) = game_and_tokens(&created);
    // A spectator on node 1 follows the game from its start.
    let ws = servers[1].ws(&format!("/api/games/{game}/ws"));
    let (mut socket, _) = tokio_tungstenite::connect_async(ws).await.unwrap();
    let mut seen = 0;
    // Played on the owner, one commit after another: each announced by its own notice.
    let (base, mut played) = (servers[0].base.clone(), 0);
    while played < PLAYED {
        let mut acted = false;
        for token in &tokens {
            let legal: Value = client
                .get(format!("{base}/api/games/{game}/legal"))
                .bearer_auth(token)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let Some(action) = legal["actions"].as_array().and_then(|a| a.first()) else {
                continue;
            };
            let answer = client
                .post(format!("{base}/api/games/{game}/actions"))
                .bearer_auth(token)
                .json(&json!({"action": action, "expected_seq": legal["seq"]}))
                .send()
                .await
                .unwrap();
            assert_eq!(
                answer.status(),
                StatusCode::OK,
                "{}",
                answer.text().await.unwrap()
            );
            played += 1;
            acted = true;
            break;
        }
        assert!(acted, "someone may act in an unfinished game");
    }
    // The spectator on node 1 sees every action.
    while seen < PLAYED {
        let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("node 1 shows each action within 10 s")
            .unwrap()
            .unwrap();
        let Message::Text(text) = message else {
            continue;
        };
        let message: Value = serde_json::from_str(&text).unwrap();
        if message["type"] == "action" {
            seen = message["seq"].as_u64().unwrap();
        }
    }
    let from_notices = metric(client, &servers[1], "followed_from_notices").await;
    let from_store = metric(client, &servers[1], "followed_from_store").await;
    assert_eq!(
        (from_notices, from_store),
        (PLAYED, 0),
        "node 1 applied every action from its notice"
    );
    drop(socket);
    stop_all(servers);
}

//! A node that does not own a game: a seat acts through it (passed on to the owner), and it follows
//! the game from the notices that announce its actions, without re-reading the store (server2).

use super::*;

/// Actions played in the followed game.
const PLAYED: u64 = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_applies_each_action_from_its_notice_without_reading_the_store() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(3)).await else {
        return;
    };
    let (_, servers, _, client) = scenario.parts();
    let (game, tokens) = game_and_tokens(&create_on(client, &servers[0], &charges(5)).await);
    // A spectator on node 1 follows the game from its start.
    let ws = servers[1].ws(&format!("/api/games/{game}/ws"));
    let (mut socket, _) = tokio_tungstenite::connect_async(ws).await.unwrap();
    let mut seen = 0;
    // Node 1 keeps every seat's legal actions at action 0 once asked for one.
    let (seq, _) = legal(client, &servers[1].base, game, &tokens[1]).await;
    assert_eq!(seq, 0);
    // Played on the owner, one commit after another: each announced by its own notice.
    play(client, &servers[0].base, game, &tokens, PLAYED).await;
    // The spectator on node 1 sees every action.
    while seen < PLAYED {
        let Some(message) = next_json(&mut socket, "node 1 shows each action within 10 s").await
        else {
            continue;
        };
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
    // What node 1 kept at action 0 is not what it answers now: its legal actions are the owner's.
    for token in &tokens {
        assert_eq!(
            legal(client, &servers[1].base, game, token).await,
            legal(client, &servers[0].base, game, token).await,
            "a follower's legal actions after the owner's"
        );
    }
    drop(socket);
    stop_all(servers);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_where_nobody_watches_a_game_leaves_its_notices_and_catches_up_when_asked() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(3)).await else {
        return;
    };
    let (_, servers, _, client) = scenario.parts();
    let (game, tokens) = game_and_tokens(&create_on(client, &servers[0], &charges(7)).await);
    // Node 1 hosts the game (its lobby lists it) once the creation's notice reaches it.
    listed_at(client, &servers[1], game, 0).await;
    // Played on the owner; nobody asks node 1 for the game meanwhile.
    play(client, &servers[0].base, game, &tokens, PLAYED).await;
    let left = metric(client, &servers[1], "notices_left").await;
    assert!(
        left > 0,
        "node 1 left the announcements of a game nobody watches there"
    );
    assert_eq!(
        metric(client, &servers[1], "followed_from_notices").await,
        0,
        "node 1 applied no action from its notice"
    );
    // Asked for it, node 1 answers the game as the owner has it.
    let summary: Value = get_json(client, format!("{}/api/games/{game}", servers[1].base)).await;
    assert_eq!(summary["seq"], PLAYED, "{summary}");
    // Watched from then on: the next actions are applied from their notices.
    play(client, &servers[0].base, game, &tokens, 2).await;
    let followed = async {
        while metric(client, &servers[1], "followed_from_notices").await < 2 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(10), followed)
        .await
        .expect("node 1 follows the game it was asked for from the notices within 10 s");
    stop_all(servers);
}

/// Waits until `server`'s lobby lists `game` with `seq` actions played (within 15 s: one sweep of the
/// games nobody watches is at most `DORMANT_CATCH_UP_EVERY` away).
async fn listed_at(client: &Client, server: &Server, game: u64, seq: u64) {
    let lobby = format!("{}/api/games", server.base);
    let listed = async {
        loop {
            let games: Value = get_json(client, &lobby).await;
            if games
                .as_array()
                .is_some_and(|g| g.iter().any(|g| g["game"] == game && g["seq"] == seq))
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), listed)
        .await
        .unwrap_or_else(|_| panic!("the lobby lists game {game} at action {seq} within 15 s"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_nobody_asks_for_a_game_keeps_it_in_its_lobby_without_replaying_it() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(3)).await else {
        return;
    };
    let (_, servers, _, client) = scenario.parts();
    let (game, tokens) = game_and_tokens(&create_on(client, &servers[0], &charges(11)).await);
    listed_at(client, &servers[1], game, 0).await;
    // Played on the owner while nobody asks node 1 for the game.
    play(client, &servers[0].base, game, &tokens, PLAYED).await;
    // Node 1's lobby follows the game's record (after its sweep), but node 1 applied none of its
    // actions: it never built the game.
    listed_at(client, &servers[1], game, PLAYED).await;
    for name in [
        "followed_from_notices",
        "followed_from_store",
        "dormant_caught_up",
    ] {
        assert_eq!(metric(client, &servers[1], name).await, 0, "{name}");
    }
    // Asked for it, node 1 builds it from the store as the owner has it.
    let summary: Value = get_json(client, format!("{}/api/games/{game}", servers[1].base)).await;
    assert_eq!(summary["seq"], PLAYED, "{summary}");
    let (seq, actions) = legal(client, &servers[1].base, game, &tokens[0]).await;
    let (owner_seq, owner_actions) = legal(client, &servers[0].base, game, &tokens[0]).await;
    assert_eq!(
        (seq, actions),
        (owner_seq, owner_actions),
        "node 1 built the owner's game"
    );
    stop_all(servers);
}

/// Plays `n` actions of `game` on the node at `base`, each the first legal action of the first seat
/// with one, one commit after another.
async fn play(client: &Client, base: &str, game: u64, tokens: &[String], n: u64) {
    let mut played = 0;
    while played < n {
        let mut acted = false;
        for token in tokens {
            let (seq, actions) = legal(client, base, game, token).await;
            let Some(action) = actions.first() else {
                continue;
            };
            let answer = client
                .post(format!("{base}/api/games/{game}/actions"))
                .bearer_auth(token)
                .json(&json!({"action": action, "expected_seq": seq}))
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
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_passed_on_to_its_owner_answers_the_actors_next_legal_actions_when_asked() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(3)).await else {
        return;
    };
    let (_, servers, _, client) = scenario.parts();
    let (game, tokens) = game_and_tokens(&create_on(client, &servers[0], &charges(11)).await);
    let (owner, other) = (&servers[0].base, &servers[1].base);
    let (mut with, mut without) = (0, 0);
    for _ in 0..PLAYED {
        // The first seat with a legal action acts through node 1, which passes it on to node 0.
        let mut acting = None;
        for token in &tokens {
            let (seq, actions) = legal(client, owner, game, token).await;
            if let Some(action) = actions.first() {
                acting = Some((token, seq, action.clone()));
                break;
            }
        }
        let (token, seq, action) = acting.expect("someone may act in an unfinished game");
        let answer = json_of(
            client
                .post(format!("{other}/api/games/{game}/actions?then=legal"))
                .bearer_auth(token)
                .json(&json!({"action": action, "expected_seq": seq})),
        )
        .await;
        assert_eq!(answer["seq"], seq + 1, "{answer}");
        let (next, actions) = legal(client, owner, game, token).await;
        match answer.get("legal") {
            Some(legal) => {
                with += 1;
                assert_eq!(legal["seq"], next, "{answer}");
                assert_eq!(
                    legal["actions"],
                    json!(actions),
                    "the owner's list after the action"
                );
            }
            None => {
                without += 1;
                assert!(
                    actions.is_empty(),
                    "no list, yet the seat may act: {answer}"
                );
            }
        }
        // The answer is otherwise the action as the owner logged it.
        let logged: Vec<Value> = get_json(
            client,
            format!("{owner}/api/games/{game}/events?since={seq}&limit=1&token={token}"),
        )
        .await;
        let mut action = answer.clone();
        action.as_object_mut().unwrap().remove("legal");
        assert_eq!(logged, [action]);
    }
    assert!(
        with > 0 && without > 0,
        "{with} answers with a list, {without} without"
    );
    assert_eq!(metric(client, &servers[1], "forwarded").await, PLAYED);
    stop_all(servers);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_seat_acts_through_a_websocket_on_a_node_that_does_not_own_its_game() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(3)).await else {
        return;
    };
    let (url, servers, _, client) = scenario.parts();
    let created = create_on(client, &servers[0], &charges(9)).await;
    let game = created["game"].as_u64().unwrap();
    let token = created["tokens"][0].as_str().unwrap().to_owned();
    // Seat 0 on node 1, which did not create the game and does not own it.
    let ws = servers[1].ws(&format!("/api/games/{game}/ws?token={token}"));
    let (mut socket, _) = tokio_tungstenite::connect_async(ws).await.unwrap();
    for expected in ["hello", "view"] {
        let message = next_json(&mut socket, "a message within 10 s")
            .await
            .expect("a text message");
        assert_eq!(message["type"], expected, "{message}");
    }
    let act = json!({"type": "act", "action": {"type": "plan", "ship": 0, "maneuver": "blue"},
        "expected_seq": 0, "key": "over-the-socket"});
    socket
        .send(Message::Text(act.to_string().into()))
        .await
        .unwrap();
    let mut acted = None;
    let mut pushed = None;
    while acted.is_none() || pushed.is_none() {
        let Some(message) = next_json(&mut socket, "an answer within 10 s").await else {
            continue;
        };
        match message["type"].as_str() {
            Some("acted") => acted = Some(message),
            Some("action") => pushed = Some(message),
            other => panic!("unexpected {other:?}: {message}"),
        }
    }
    let acted = acted.unwrap();
    assert_eq!(acted["seq"], 1, "{acted}");
    assert_eq!(acted["key"], "over-the-socket");
    assert_eq!(acted["first"], true);
    // The seat's own feed on node 1 shows its action, as the owner committed it.
    let pushed = pushed.unwrap();
    assert_eq!(pushed["seq"], 1);
    assert_eq!(pushed["actor"], 0);
    assert_eq!(metric(client, &servers[1], "forwarded").await, 1);
    assert_eq!(
        metric(client, &servers[0], "actions").await,
        1,
        "the owner applied it"
    );
    let stored = tokio::task::block_in_place(|| {
        PgStore::open(url)
            .unwrap()
            .actions_after(GameId(game), 0)
            .unwrap()
    });
    assert_eq!(stored.len(), 1);
    assert_eq!(stored[0].key.as_deref(), Some("over-the-socket"));
    drop(socket);
    stop_all(servers);
}

/// The next message of `socket` as JSON (`None` for a frame that is not text), within 10 s or the test
/// fails saying `within`.
async fn next_json(
    socket: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
    within: &str,
) -> Option<Value> {
    let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
        .await
        .expect(within)
        .expect("the socket is open")
        .unwrap();
    let Message::Text(text) = message else {
        return None;
    };
    Some(serde_json::from_str(&text).unwrap())
}

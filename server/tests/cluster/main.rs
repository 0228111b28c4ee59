//! Several `coffer-server` nodes on one PostgreSQL database (`serve --cluster`), each a real process on a
//! loopback port with the three plugin libraries loaded at runtime.
//!
//! Clients play many games through any node, over HTTP, each submission keyed and retried with its key
//! until it is answered; the tests kill a node with SIGKILL, pause one past its lease with SIGSTOP, and
//! restart the database (which is the broker too: LISTEN/NOTIFY) under that load. Afterwards every
//! acknowledged action is in the store exactly once at its place, nothing unsubmitted is there, every
//! game replays in this process to its stored hashes, and viewers on other nodes saw every action once
//! and in order.
//!
//! A binary of its own, so that the timing bounds are measured without the `it` tests' load beside
//! them; its scenarios take turns. They need PostgreSQL: `COFFER_POSTGRES_URL` names a server where a
//! role may create databases (CI sets it). Unset, each scenario says how to run it and passes; set and
//! unreachable, it fails.

#[path = "../it/support.rs"]
#[allow(dead_code)]
mod support;

mod following;
mod pg;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use coffer_core::Setup;
use coffer_host::{HostedGame, Registry};
use coffer_server::cluster::{Cluster, Notice};
use coffer_server::{GameId, NodeConfig, PgStore, Store, StoreError};
use futures_util::{SinkExt as _, StreamExt as _};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};
use tokio_tungstenite::tungstenite::Message;

use support::{
    Database, FAST_ARGS, Server, game_and_tokens, get_json, json_of, legal, metrics_text,
};

// Linked so that `Registry::with_static` finds them: every stored log is replayed in this process.
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

/// The scenarios take turns: each runs three servers on two cores.
static TURN: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// How long one submission may keep being retried (with its key) before the test fails.
const SUBMIT_WAIT: Duration = Duration::from_secs(30);

/// The documented bound for a dead node's games to resume elsewhere, with the default 3 s lease.
const RESUME_BOUND: Duration = Duration::from_secs(5);

/// A scenario's nodes and what its clients use to reach them.
struct Nodes {
    /// Where the nodes' logs go; removed with it.
    dir: tempfile::TempDir,
    servers: Vec<Server>,
    net: Arc<Net>,
    client: Client,
}

impl Nodes {
    /// `n` nodes on the database at `url`, each with a lease of `lease`.
    fn start(url: &str, n: usize, lease: Duration) -> Nodes {
        let dir = tempfile::tempdir().unwrap();
        let lease = lease.as_secs_f64().to_string();
        let servers: Vec<Server> = (0..n)
            .map(|i| {
                let mut args = FAST_ARGS.to_vec();
                args.extend(["--cluster", "--lease", &lease]);
                Server::start_logged(
                    url.as_ref(),
                    dir.path().join(format!("node{i}.log")),
                    &args,
                    &[("COFFER_LOG", "info")],
                )
            })
            .collect();
        Nodes {
            net: Net::new(&servers),
            servers,
            dir,
            client: http(),
        }
    }
}

/// A scenario on a database of its own: the database, the scenario's turn, and its nodes, all held
/// until it ends.
struct Scenario {
    /// Dropped at the end of the scenario.
    _database: Database,
    /// The scenario's turn among the others.
    _turn: tokio::sync::MutexGuard<'static, ()>,
    /// The database's URL.
    url: String,
    nodes: Nodes,
}

impl Scenario {
    /// A database of the scenario's own, then its turn, then `n` nodes on that database, each with a
    /// lease of `lease`; `None` (after saying how to run these tests) without PostgreSQL.
    async fn start(n: usize, lease: Duration) -> Option<Scenario> {
        let (database, url) = database()?;
        let turn = TURN.lock().await;
        let nodes = Nodes::start(&url, n, lease);
        Some(Scenario {
            _database: database,
            _turn: turn,
            url,
            nodes,
        })
    }

    /// The database's URL, and the nodes' servers, network and client.
    fn parts(&mut self) -> (&str, &mut Vec<Server>, &Arc<Net>, &Client) {
        let Nodes {
            servers,
            net,
            client,
            ..
        } = &mut self.nodes;
        (&self.url, servers, net, client)
    }
}

/// A database of the scenario's own, or `None` (after saying how to run these tests).
fn database() -> Option<(Database, String)> {
    tokio::task::block_in_place(|| Database::new("the cluster tests"))
}

/// The games: every ruleset, long enough not to end during a test (most of them).
fn setups() -> Vec<Value> {
    let mut setups = Vec::new();
    for seed in 0..6u64 {
        setups.push(json!({"ruleset": "charges", "players": 2, "seed": seed,
            "config": {"max_rounds": 1000}}));
        setups.push(
            json!({"ruleset": "command-tokens", "players": 3, "seed": seed,
            "config": {"rounds": 1000}}),
        );
        setups.push(json!({"ruleset": "story-acts", "players": 2, "seed": seed}));
    }
    setups
}

fn http() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(10))
        .connect_timeout(Duration::from_secs(2))
        .build()
        .expect("an HTTP client")
}

/// Which nodes the clients may use.
struct Net {
    bases: Vec<String>,
    /// A node the clients stop using (killed).
    dead: Vec<AtomicBool>,
}

impl Net {
    fn new(nodes: &[Server]) -> Arc<Net> {
        Arc::new(Net {
            bases: nodes.iter().map(|n| n.base.clone()).collect(),
            dead: nodes.iter().map(|_| AtomicBool::new(false)).collect(),
        })
    }

    /// The node for attempt `n` of a client starting at `start`: the next live one.
    fn pick(&self, start: usize, n: usize) -> &str {
        let count = self.bases.len();
        (0..count)
            .map(|i| (start + n + i) % count)
            .find(|&i| !self.dead[i].load(Ordering::Relaxed))
            .map(|i| self.bases[i].as_str())
            .expect("a live node")
    }
}

/// One game and what its client saw.
#[derive(Debug, Default)]
struct Played {
    game: u64,
    tokens: Vec<String>,
    /// The node the game was created on, where its client starts.
    start: usize,
    /// Whether the client uses only its start node (a paused node's own clients), never another.
    homed: bool,
    /// Acknowledged actions: sequence number, key, when.
    acked: Vec<(u64, String, Instant)>,
    /// Every key submitted.
    sent: BTreeSet<String>,
    /// Whether the game ended.
    over: bool,
}

/// Creates the games, round robin over the nodes.
async fn create_games(client: &Client, net: &Net) -> Vec<Played> {
    let mut games = Vec::new();
    for (i, setup) in setups().into_iter().enumerate() {
        // Each node gets games of every ruleset.
        let start = (i + i / net.bases.len()) % net.bases.len();
        let response = client
            .post(format!("{}/api/games", net.bases[start]))
            .json(&setup)
            .send()
            .await
            .expect("create answers");
        assert_eq!(response.status(), StatusCode::CREATED);
        let created: Value = response.json().await.unwrap();
        let (game, tokens) = game_and_tokens(&created);
        games.push(Played {
            game,
            tokens,
            start,
            ..Played::default()
        });
    }
    games
}

/// What one request got.
enum Got {
    Answer(StatusCode, String),
    /// No answer (refused, cut, timed out): ask again, elsewhere unless homed.
    Nothing,
}

async fn send(request: reqwest::RequestBuilder) -> Got {
    match request.send().await {
        Ok(response) => {
            let status = response.status();
            match response.text().await {
                Ok(text) => Got::Answer(status, text),
                Err(_) => Got::Nothing,
            }
        }
        Err(_) => Got::Nothing,
    }
}

/// Plays one game until `stop`: each seat in turn asks its legal actions and submits one at random
/// with `expected_seq` and a key of its own, retrying the same submission (same key) on any node until
/// it is answered. Every answer must be one a correct cluster gives.
async fn play(client: Client, net: Arc<Net>, mut played: Played, stop: Arc<AtomicBool>) -> Played {
    let game = played.game;
    let mut chooser = game.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut attempt = 0usize;
    let mut n = 0u64;
    let node = |attempt: usize, homed: bool| -> String {
        if homed {
            net.bases[played.start].clone()
        } else {
            net.pick(played.start, attempt).to_owned()
        }
    };
    'play: while !stop.load(Ordering::Relaxed) {
        let mut anyone = false;
        for seat in 0..played.tokens.len() {
            let token = played.tokens[seat].clone();
            let base = node(attempt, played.homed);
            let legal = client
                .get(format!("{base}/api/games/{game}/legal"))
                .bearer_auth(&token);
            let (seq, actions) = match send(legal).await {
                Got::Answer(StatusCode::OK, text) => {
                    let legal: Value = serde_json::from_str(&text).unwrap();
                    (
                        legal["seq"].as_u64().unwrap(),
                        legal["actions"].as_array().unwrap().clone(),
                    )
                }
                Got::Answer(StatusCode::SERVICE_UNAVAILABLE, _) | Got::Nothing => {
                    attempt += 1;
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
                Got::Answer(status, text) => panic!("game {game}: legal answered {status}: {text}"),
            };
            if actions.is_empty() {
                continue;
            }
            anyone = true;
            chooser ^= chooser << 13;
            chooser ^= chooser >> 7;
            chooser ^= chooser << 17;
            let action = &actions[(chooser % actions.len() as u64) as usize];
            n += 1;
            let key = format!("g{game}-{n}");
            played.sent.insert(key.clone());
            let body = json!({"action": action, "expected_seq": seq, "key": key});
            let since = Instant::now();
            loop {
                let base = node(attempt, played.homed);
                let submit = client
                    .post(format!("{base}/api/games/{game}/actions"))
                    .bearer_auth(&token)
                    .json(&body);
                match send(submit).await {
                    Got::Answer(StatusCode::OK, text) => {
                        let answer: Value = serde_json::from_str(&text).unwrap();
                        let acked = answer["seq"].as_u64().unwrap();
                        assert_eq!(acked, seq + 1, "game {game}: {text}");
                        played.acked.push((acked, key, Instant::now()));
                        break;
                    }
                    // A node's copy lagged the owner's: the owner checked expected_seq.
                    Got::Answer(StatusCode::CONFLICT, text) if text.contains("\"stale\"") => break,
                    Got::Answer(StatusCode::CONFLICT, text) if text.contains("\"finished\"") => {
                        played.over = true;
                        break 'play;
                    }
                    Got::Answer(StatusCode::SERVICE_UNAVAILABLE, _) | Got::Nothing => {
                        assert!(
                            since.elapsed() < SUBMIT_WAIT,
                            "game {game}: submission {key} unanswered for {SUBMIT_WAIT:?}"
                        );
                        attempt += 1;
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                    Got::Answer(status, text) => {
                        panic!(
                            "game {game}: a legal action at its sequence answered {status}: {text}"
                        )
                    }
                }
            }
        }
        if !anyone {
            // Nobody may act: the game may be over (or this node's copy a moment behind).
            let base = node(attempt, played.homed);
            if let Got::Answer(StatusCode::OK, text) =
                send(client.get(format!("{base}/api/games/{game}"))).await
                && serde_json::from_str::<Value>(&text).unwrap()["finished"] == true
            {
                played.over = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    played
}

/// Starts a client per game.
fn start_play(
    client: &Client,
    net: &Arc<Net>,
    games: Vec<Played>,
    stop: &Arc<AtomicBool>,
) -> Vec<tokio::task::JoinHandle<Played>> {
    games
        .into_iter()
        .map(|played| {
            tokio::spawn(play(
                client.clone(),
                Arc::clone(net),
                played,
                Arc::clone(stop),
            ))
        })
        .collect()
}

async fn finish_play(
    stop: &AtomicBool,
    tasks: Vec<tokio::task::JoinHandle<Played>>,
) -> BTreeMap<u64, Played> {
    stop.store(true, Ordering::Relaxed);
    let mut played = BTreeMap::new();
    for task in tasks {
        let game = tokio::time::timeout(SUBMIT_WAIT * 2, task)
            .await
            .expect("every client ends")
            .expect("no client panicked");
        played.insert(game.game, game);
    }
    played
}

fn acks(played: &BTreeMap<u64, Played>) -> usize {
    played.values().map(|p| p.acked.len()).sum()
}

/// The store after the test: every log gapless, every acknowledged action at its place once, nothing
/// there that was not submitted, and every game replayed in this process to each stored hash.
fn check_store(url: &str, played: &BTreeMap<u64, Played>) {
    let store = PgStore::open(url).expect("the store opens");
    let registry = Registry::with_static().expect("the static rulesets register");
    for (game, played) in played {
        let log = store.actions_after(GameId(*game), 0).unwrap();
        let seqs: Vec<u64> = log.iter().map(|a| a.seq).collect();
        let gapless: Vec<u64> = (1..=log.len() as u64).collect();
        assert_eq!(seqs, gapless, "game {game}'s log is gapless");
        for (seq, key, _) in &played.acked {
            assert_eq!(
                log.get(*seq as usize - 1).and_then(|a| a.key.as_deref()),
                Some(key.as_str()),
                "game {game}: acknowledged action {seq} is stored at its place"
            );
        }
        let mut keys = BTreeSet::new();
        for action in &log {
            let key = action.key.clone().expect("every action was sent keyed");
            assert!(
                played.sent.contains(&key),
                "game {game}: stored {key} was never sent"
            );
            assert!(keys.insert(key.clone()), "game {game}: {key} stored twice");
        }
        let record = store.game(GameId(*game)).unwrap();
        let entry = registry
            .get(record.ruleset.as_str())
            .expect("the ruleset is linked");
        let setup = Setup::new(record.setup.players as u16, record.setup.seed)
            .config(record.setup.config.clone());
        let mut replay = HostedGame::start(entry.ruleset.clone(), setup).expect("the game starts");
        for action in &log {
            replay
                .apply_json(action.seat as u16, action.action.get())
                .unwrap_or_else(|e| panic!("game {game}: action {} refused: {e}", action.seq));
            assert_eq!(
                replay.state_hash().0,
                action.hash.0,
                "game {game}: the state after action {} is not the stored one",
                action.seq
            );
        }
    }
}

/// The lease rows: game, node, fencing number.
fn leases(url: &str) -> BTreeMap<u64, (String, i64)> {
    let mut client = postgres::Client::connect(url, postgres::NoTls).unwrap();
    client
        .query(
            "SELECT l.game, l.node, l.fence FROM leases l JOIN games g ON g.id = l.game
             WHERE NOT g.finished",
            &[],
        )
        .unwrap()
        .iter()
        .map(|row| (row.get::<_, i64>(0) as u64, (row.get(1), row.get(2))))
        .collect()
}

/// The node id a server's log names.
fn node_id(server: &Server) -> String {
    let log = server.log_text();
    let at = log.find("node=").expect("a node says who it is");
    log[at + 5..].split_whitespace().next().unwrap().to_owned()
}

/// A counter of a server's `/metrics`.
async fn metric(client: &Client, server: &Server, name: &str) -> u64 {
    let text = metrics_text(client, &server.base).await;
    text.lines()
        .find_map(|l| l.strip_prefix(&format!("coffer_{name}_total ")))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no metric {name}"))
}

#[test]
fn a_lease_taken_over_refuses_every_late_append_of_the_old_owner() {
    let Some((_database, url)) = Database::new("the cluster tests") else {
        return;
    };
    let node = |id: &str| NodeConfig {
        id: id.into(),
        addr: format!("http://{id}.invalid"),
        lease: Duration::from_millis(300),
    };
    let a = PgStore::open_node(&url, Some(node("a"))).unwrap();
    let a_leases = Cluster::open(&url, node("a")).unwrap();
    let b = PgStore::open_node(&url, Some(node("b"))).unwrap();
    let b_leases = Cluster::open(&url, node("b")).unwrap();
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let listener = Cluster::open(&url, node("c")).unwrap();
    listener
        .listen({
            let heard = Arc::clone(&heard);
            move |notice| heard.lock().unwrap().push(notice)
        })
        .unwrap();
    // The listener is listening before anything is written.
    std::thread::sleep(Duration::from_millis(300));

    let fenced = |store: &PgStore, seq: u64, fence: u64| {
        let (tx, rx) = std::sync::mpsc::channel();
        let action = support_action(seq);
        store.append_fenced_then(
            GameId(7),
            action,
            fence,
            Box::new(move |r| tx.send(r).unwrap()),
        );
        rx.recv().unwrap()
    };
    a.create_game(support_game(7)).unwrap();
    assert_eq!(
        b_leases.claim(GameId(7)).unwrap(),
        None,
        "a live lease is not taken"
    );
    fenced(&a, 1, 1).expect("the owner appends with its fencing number");
    assert_eq!(a_leases.renew().unwrap().get(&GameId(7)), Some(&1));

    // a stops renewing; once its lease has expired, b takes the game over with fencing number 2.
    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(
        b_leases.claim_expired(10).unwrap(),
        vec![(GameId(7), 2)],
        "the expired lease is taken with the next fencing number"
    );
    match fenced(&a, 2, 1) {
        Err(StoreError::Fenced { game, fence: 1 }) => assert_eq!(game, GameId(7)),
        other => panic!("a late append of the old owner: {other:?}"),
    }
    assert!(
        a_leases.renew().unwrap().is_empty(),
        "the old owner renews nothing"
    );
    assert_eq!(a.actions_after(GameId(7), 0).unwrap().len(), 1);
    // An append with a fencing number nobody holds is refused too, even by the lease's node.
    assert!(matches!(fenced(&b, 2, 1), Err(StoreError::Fenced { .. })));
    fenced(&b, 2, 2).expect("the new owner appends");
    assert_eq!(a.actions_after(GameId(7), 0).unwrap().len(), 2);
    assert_eq!(
        a_leases
            .lease(GameId(7))
            .unwrap()
            .map(|l| (l.node, l.fence)),
        Some(("b".into(), 2))
    );

    // The listener heard the game and the two committed appends, in order, and nothing refused.
    let started = Instant::now();
    while heard.lock().unwrap().len() < 3 && started.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let heard = heard.lock().unwrap().clone();
    assert_eq!(heard.len(), 3, "{heard:?}");
    assert_eq!(heard[0], Notice::Game(GameId(7)));
    // Each append's notice carries the action as committed: a follower needs no store read.
    let stored = a.actions_after(GameId(7), 0).unwrap();
    for (notice, action) in heard[1..].iter().zip(&stored) {
        let Notice::Action {
            game,
            seq,
            carried: Some(carried),
        } = notice
        else {
            panic!("an append's notice without its action: {notice:?}");
        };
        assert_eq!((*game, *seq), (GameId(7), action.seq));
        assert_eq!(
            **carried, *action,
            "the notice carries the committed action"
        );
    }
}

fn support_game(id: u64) -> coffer_server::NewGame {
    coffer_server::NewGame {
        id: GameId(id),
        ruleset: coffer_server::RulesetKey::new("charges@1").unwrap(),
        setup: coffer_server::Setup {
            players: 2,
            seed: id,
            config: json!({}),
            bots: Default::default(),
            clock: None,
        },
        created_unix_ms: 1_700_000_000_000,
        seats: vec![None, None],
    }
}

fn support_action(seq: u64) -> coffer_server::Action {
    coffer_server::Action {
        seq,
        seat: 0,
        action: serde_json::value::RawValue::from_string(format!(r#"{{"seq":{seq}}}"#)).unwrap(),
        hash: coffer_server::StateHash(seq),
        key: None,
        at_unix_ms: 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_node_s_games_resume_on_the_others_within_five_seconds() {
    // The default lease, whose bound the documentation gives.
    let Some(mut scenario) = Scenario::start(3, Duration::from_secs(3)).await else {
        return;
    };
    let (url, servers, net, client) = scenario.parts();
    let games = create_games(client, net).await;
    let stop = Arc::new(AtomicBool::new(false));
    let tasks = start_play(client, net, games, &stop);
    tokio::time::sleep(Duration::from_secs(3)).await;

    let victim = node_id(&servers[0]);
    let owned: BTreeSet<u64> = tokio::task::block_in_place(|| leases(url))
        .into_iter()
        .filter(|(_, (node, _))| *node == victim)
        .map(|(game, _)| game)
        .collect();
    assert!(!owned.is_empty(), "node 0 owns games before it is killed");
    net.dead[0].store(true, Ordering::Relaxed);
    servers[0].kill();
    let killed = Instant::now();
    // Play on until every game of the dead node has an action acknowledged after the kill.
    tokio::time::sleep(RESUME_BOUND + Duration::from_secs(2)).await;
    let played = finish_play(&stop, tasks).await;

    let mut resumed = Vec::new();
    for game in &owned {
        let played = &played[game];
        if played.over {
            continue;
        }
        let first = played
            .acked
            .iter()
            .map(|(_, _, at)| *at)
            .find(|at| *at > killed);
        let first = first.unwrap_or_else(|| {
            let logs: Vec<String> = servers.iter().map(Server::log_text).collect();
            panic!(
                "game {game} of the killed node never resumed ({} actions acknowledged before); \
                     the nodes' logs:\n{}",
                played.acked.len(),
                logs.join("\n-----\n")
            )
        });
        resumed.push(first - killed);
    }
    let worst = resumed.iter().max().copied().unwrap_or_default();
    println!(
        "{} games of the killed node resumed after {:?} at worst ({} actions acknowledged in all)",
        resumed.len(),
        worst,
        acks(&played)
    );
    assert!(
        worst < RESUME_BOUND,
        "a game of the killed node resumed only after {worst:?}"
    );
    let survivors = &servers[1..];
    let mut takeovers = 0;
    for server in survivors {
        takeovers += metric(client, server, "takeovers").await;
    }
    assert!(
        takeovers >= owned.len() as u64,
        "the survivors took the games over"
    );
    for (game, (node, fence)) in tokio::task::block_in_place(|| leases(url)) {
        assert_ne!(node, victim, "game {game} is still the dead node's");
        if owned.contains(&game) {
            assert!(
                fence >= 2,
                "game {game} was taken over with a new fencing number"
            );
        }
    }
    tokio::task::block_in_place(|| check_store(url, &played));
    none_stopped(client, &servers[1..], &played).await;
    stop_all(&mut servers[1..]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_node_cannot_append_after_its_lease_and_its_clients_move_on() {
    let lease = Duration::from_secs(2);
    let Some(mut scenario) = Scenario::start(3, lease).await else {
        return;
    };
    let (url, servers, net, client) = scenario.parts();
    let mut games = create_games(client, net).await;
    // The clients of node 0's games use node 0 only: they are its own clients.
    for played in &mut games {
        played.homed = played.start == 0;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let tasks = start_play(client, net, games, &stop);
    tokio::time::sleep(Duration::from_secs(2)).await;

    let paused = node_id(&servers[0]);
    let before: BTreeMap<u64, i64> = tokio::task::block_in_place(|| leases(url))
        .into_iter()
        .filter(|(_, (node, _))| *node == paused)
        .map(|(game, (_, fence))| (game, fence))
        .collect();
    assert!(!before.is_empty(), "node 0 owns games before it is paused");
    servers[0].signal("STOP");
    let stopped_at = Instant::now();
    tokio::time::sleep(lease * 3).await;
    // Its games were taken over while it slept.
    let during = tokio::task::block_in_place(|| leases(url));
    for game in before.keys() {
        if let Some((node, _)) = during.get(game) {
            assert_ne!(*node, paused, "game {game} was taken over");
        }
    }
    servers[0].signal("CONT");
    let resumed_at = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let played = finish_play(&stop, tasks).await;

    // Its own clients played on through it after it resumed (their actions passed on to the new
    // owners): moved on, not stuck.
    for played in played.values().filter(|p| p.homed && !p.over) {
        assert!(
            played.acked.iter().any(|(_, _, at)| *at > resumed_at),
            "game {}: node 0's client played on after it resumed",
            played.game
        );
    }
    // A resumed node learns of each lost lease when it next renews or writes that game: on a loaded
    // machine that may take longer than the play above, so wait for it (a node that never learns fails).
    let deadline = Instant::now() + Duration::from_secs(15);
    let mut lost = metric(client, &servers[0], "leases_lost").await;
    while lost < before.len() as u64 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(200)).await;
        lost = metric(client, &servers[0], "leases_lost").await;
    }
    let fenced = metric(client, &servers[0], "fenced").await;
    let forwarded = metric(client, &servers[0], "forwarded").await;
    println!(
        "paused {:?}: node 0 lost {lost} leases, {fenced} late appends refused by their fencing number, \
         {forwarded} actions passed on; {} acknowledged in all",
        resumed_at - stopped_at,
        acks(&played)
    );
    assert!(
        lost >= before.len() as u64,
        "node 0 knows it lost its leases"
    );
    assert!(forwarded > 0, "node 0 passed its clients' actions on");
    // No game is node 0's with its old fencing number: whatever it wrote late was refused.
    for (game, (node, fence)) in tokio::task::block_in_place(|| leases(url)) {
        if let Some(old) = before.get(&game) {
            assert!(
                node != paused || fence > *old,
                "game {game} is still node 0's under fencing number {old}"
            );
        }
    }
    tokio::task::block_in_place(|| check_store(url, &played));
    none_stopped(client, servers, &played).await;
    stop_all(servers);
}

/// What a viewer was shown: the sequence numbers of the actions, in order.
type Seen = Arc<std::sync::Mutex<Vec<u64>>>;

/// A spectator of one game on one node over its WebSocket, reconnecting with `since` when cut, until
/// `stop`: the sequence numbers of the actions it was shown, in the order shown, into `seen`.
async fn watch(ws: String, seen: Seen, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let since = seen.lock().unwrap().last().copied().unwrap_or(0);
        let url = format!("{ws}?since={since}");
        let Ok((mut socket, _)) = tokio_tungstenite::connect_async(url).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        while !stop.load(Ordering::Relaxed) {
            let message =
                match tokio::time::timeout(Duration::from_millis(200), socket.next()).await {
                    Err(_) => continue,
                    Ok(Some(Ok(message))) => message,
                    Ok(_) => break,
                };
            let Message::Text(text) = message else {
                continue;
            };
            let message: Value = serde_json::from_str(&text).unwrap();
            if message["type"] == "action" {
                seen.lock().unwrap().push(message["seq"].as_u64().unwrap());
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_and_broker_restart_loses_no_acknowledged_action_and_viewers_catch_up() {
    if std::env::var(support::POSTGRES_ENV).is_err() {
        println!(
            "the cluster tests: skipped: set {}=postgres://postgres@127.0.0.1:5432/postgres to run them",
            support::POSTGRES_ENV
        );
        return;
    }
    let _turn = TURN.lock().await;
    // A PostgreSQL server of this test's own (it is the broker too), so that restarting it disturbs
    // nothing else.
    let mut database = tokio::task::block_in_place(pg::Private::start);
    let url = database.url();
    let Nodes {
        dir: _dir,
        mut servers,
        net,
        client,
    } = Nodes::start(&url, 3, Duration::from_secs(2));
    let games = create_games(&client, &net).await;
    // A spectator of every game, on a node other than the one it was created on.
    let watching = Arc::new(AtomicBool::new(false));
    let viewers: Vec<(u64, Seen, tokio::task::JoinHandle<()>)> = games
        .iter()
        .map(|p| {
            let node = &servers[(p.start + 1) % servers.len()];
            let ws = node.ws(&format!("/api/games/{}/ws", p.game));
            let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
            let task = tokio::spawn(watch(ws, Arc::clone(&seen), Arc::clone(&watching)));
            (p.game, seen, task)
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let tasks = start_play(&client, &net, games, &stop);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = metric_sum(&client, &servers, "actions").await;
    assert!(before > 0, "play is under way before the restart");

    tokio::task::block_in_place(|| database.restart(Duration::from_secs(2)));
    let back = Instant::now();
    let mut after = before;
    while after < before + 50 {
        assert!(
            back.elapsed() < SUBMIT_WAIT,
            "play did not go on after the database restarted ({after} actions, {before} before)"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        after = metric_sum(&client, &servers, "actions").await;
    }
    let resumed = back.elapsed();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let played = finish_play(&stop, tasks).await;

    // The viewers catch up: each is shown every stored action once, in order.
    let finals: BTreeMap<u64, u64> = tokio::task::block_in_place(|| {
        let store = PgStore::open(&url).unwrap();
        played
            .keys()
            .map(|g| (*g, store.actions_after(GameId(*g), 0).unwrap().len() as u64))
            .collect()
    });
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10)
        && viewers
            .iter()
            .any(|(game, seen, _)| seen.lock().unwrap().last().copied().unwrap_or(0) < finals[game])
    {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let caught_up = started.elapsed();
    watching.store(true, Ordering::Relaxed);
    for (game, seen, task) in viewers {
        task.await.expect("no viewer panicked");
        let all: Vec<u64> = (1..=finals[&game]).collect();
        assert_eq!(
            *seen.lock().unwrap(),
            all,
            "game {game}: the viewer on another node was shown every action once, in order"
        );
    }
    println!(
        "database restarted: play went on {resumed:?} after it was back; the viewers had caught up \
         {caught_up:?} after play stopped; {} actions acknowledged in all",
        acks(&played)
    );
    tokio::task::block_in_place(|| check_store(&url, &played));
    none_stopped(&client, &servers, &played).await;
    stop_all(&mut servers);
}

/// No node stopped any game: every copy replayed the log to its stored hashes as it followed it.
async fn none_stopped(client: &Client, servers: &[Server], played: &BTreeMap<u64, Played>) {
    for server in servers {
        for game in played.keys() {
            let summary: Value =
                get_json(client, format!("{}/api/games/{game}", server.base)).await;
            assert!(
                summary.get("stopped").is_none(),
                "game {game} is stopped on {}: {summary}",
                server.base
            );
        }
    }
}

/// Stops every node with SIGTERM: each shuts down cleanly.
fn stop_all(servers: &mut [Server]) {
    for server in servers {
        let status = tokio::task::block_in_place(|| server.terminate());
        assert!(
            status.success(),
            "a node exited with {status} on SIGTERM; its log:\n{}",
            server.log_text()
        );
    }
}

/// Creates a game from `body` on `server`; answers the creation.
async fn create_on(client: &Client, server: &Server, body: &Value) -> Value {
    client
        .post(format!("{}/api/games", server.base))
        .json(body)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// What creates a two-player game of charges with `seed`.
fn charges(seed: u64) -> Value {
    json!({"ruleset": "charges", "players": 2, "seed": seed})
}

/// The sum of a counter over the nodes.
async fn metric_sum(client: &Client, servers: &[Server], name: &str) -> u64 {
    let mut sum = 0;
    for server in servers {
        sum += metric(client, server, name).await;
    }
    sum
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_shut_down_hands_its_games_over_without_waiting_for_its_leases() {
    // A long lease: a handover that waited for it would take 10 s.
    let lease = Duration::from_secs(10);
    let Some(mut scenario) = Scenario::start(3, lease).await else {
        return;
    };
    let (url, servers, net, client) = scenario.parts();
    let games = create_games(client, net).await;
    let stop = Arc::new(AtomicBool::new(false));
    let tasks = start_play(client, net, games, &stop);
    tokio::time::sleep(Duration::from_secs(2)).await;

    let leaving = node_id(&servers[0]);
    net.dead[0].store(true, Ordering::Relaxed);
    let status = tokio::task::block_in_place(|| servers[0].terminate());
    assert!(status.success(), "node 0 exits 0 on SIGTERM: {status}");
    let exited = Instant::now();
    // Its leases are released at exit; the others' next sweep (a quarter of a lease) takes them.
    loop {
        let still: Vec<u64> = tokio::task::block_in_place(|| leases(url))
            .into_iter()
            .filter(|(_, (node, _))| *node == leaving)
            .map(|(game, _)| game)
            .collect();
        if still.is_empty() {
            break;
        }
        assert!(
            exited.elapsed() < lease,
            "games {still:?} still node 0's {:?} after it shut down",
            exited.elapsed()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let handed_over = exited.elapsed();
    tokio::time::sleep(Duration::from_secs(1)).await;
    let played = finish_play(&stop, tasks).await;
    println!(
        "node 0's games were the others' {handed_over:?} after it exited (lease {lease:?}); {} actions \
         acknowledged in all",
        acks(&played)
    );
    assert!(
        handed_over < lease / 2,
        "the handover took {handed_over:?}, as if it waited for the lease"
    );
    tokio::task::block_in_place(|| check_store(url, &played));
    none_stopped(client, &servers[1..], &played).await;
    stop_all(&mut servers[1..]);
}

/// Liveness in a cluster: a game with a clock that nobody plays times out on its owner only; when the
/// owner is killed, the node that takes the game over runs its clocks, and the game goes on timing out
/// to its end. Every move is a timeout's, one per decision, and the log replays to its hashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clocked_game_times_out_on_its_owner_only_and_on_the_node_that_takes_it_over() {
    let Some(mut scenario) = Scenario::start(2, Duration::from_secs(1)).await else {
        return;
    };
    let (url, servers, _, client) = scenario.parts();
    let body = json!({"ruleset": "charges", "players": 2, "seed": 31, "config": {"max_rounds": 4},
                      "clock": {"per_action_ms": 300, "abandon_after": 0}});
    let created = create_on(client, &servers[0], &body).await;
    let game = created["game"].as_u64().expect("created on node 0");
    let summary = |base: String| {
        let client = client.clone();
        async move { get_json::<Value>(&client, format!("{base}/api/games/{game}")).await }
    };
    // A few timeouts on node 0, the owner; none on node 1.
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    let before = summary(servers[0].base.clone()).await["seq"]
        .as_u64()
        .unwrap();
    assert!(before >= 2, "node 0 played the timeouts: seq {before}");
    assert_eq!(
        metric(client, &servers[1], "timeouts").await,
        0,
        "node 1 fired none"
    );
    servers[0].kill();
    // Node 1 takes the game over when the lease expires and runs the clocks to the end.
    let started = Instant::now();
    loop {
        let now = summary(servers[1].base.clone()).await;
        if now["finished"] == true {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the game did not go on on node 1: {now}\n{}",
            servers[1].log_text()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(metric(client, &servers[1], "timeouts").await > 0);
    stop_all(&mut servers[1..]);
    let log = tokio::task::block_in_place(|| {
        let store = PgStore::open(url).expect("the store opens");
        store.actions_after(GameId(game), 0).unwrap()
    });
    for (i, action) in log.iter().enumerate() {
        assert_eq!(
            action.key.as_deref(),
            Some(format!("~timeout@{i}").as_str()),
            "action {} was the timeout's of its decision",
            action.seq
        );
    }
    support::replay_stored(
        "charges",
        Setup::new(2, 31).config(json!({"max_rounds": 4})),
        &log,
    );
}

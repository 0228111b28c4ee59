//! A game server run in this process on loopback, hosting misbehaving fixture plugins next to good
//! rulesets: a plugin call past the deadline stops ("quarantines") only its game, within about the
//! deadline, and every other game (of the same library too) goes on meanwhile; a panicking plugin
//! poisons its library, whose games stop saying why, while other libraries' games go on; a WebAssembly
//! ruleset that spins, aborts, exits, writes outside its memory, runs out of memory or overflows its
//! stack stops only the game whose call faulted, and every other game goes on.
//!
//! The server makes the loader leave overdue calls to it (`contain_overdue_calls`, process-wide) and
//! the deadline is set short for the process (`set_call_deadline`). Neither disturbs the loader tests of
//! this binary that expect the watchdog to end a process: those run in child processes
//! (`run_child_test`), where neither is set.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use coffer_host::Registry;
use coffer_server::Limits;
use coffer_server::serve::{ServeConfig, StoreChoice, serve};
use coffer_tests::{fixture_library, plugin_dir_with};
use reqwest::{Client, StatusCode};
use serde_json::{Value, json};

/// The plugin deadline of these servers.
const DEADLINE: Duration = Duration::from_secs(1);
/// Every other wait is bounded by this.
const WAIT: Duration = Duration::from_secs(10);

/// A server running on its own runtime in this process; stopped when dropped.
struct InProcess {
    runtime: Option<tokio::runtime::Runtime>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    base: String,
    _plugins: tempfile::TempDir,
}

impl InProcess {
    /// The static rulesets and fresh copies of the `faulty` and `panicky` fixture libraries (fresh, so
    /// poisoning here touches no other test's copy), served from memory with a 1 s plugin deadline.
    fn start() -> InProcess {
        let plugins = plugin_dir_with(&[&fixture_library("faulty"), &fixture_library("panicky")]);
        let mut registry = Registry::with_static().expect("the static rulesets");
        let report = registry.load_dirs(&[plugins.path()], None);
        assert!(report.errors.is_empty(), "{:?}", report.errors);
        InProcess::serving(registry, plugins)
    }

    /// A server of `registry`, whose plugins are in `plugins`.
    fn serving(registry: Registry, plugins: tempfile::TempDir) -> InProcess {
        // Contained first, so no call of another test passing the short deadline ends this process.
        coffer_host::loader::contain_overdue_calls();
        coffer_host::loader::set_call_deadline(DEADLINE);
        let mut limits = Limits::default();
        limits.plugin_deadline = DEADLINE;
        limits.shutdown_grace = Duration::from_secs(1);
        limits.actions_per_second = 100_000;
        limits.action_burst = 100_000;
        let config = ServeConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            store: StoreChoice::Memory,
            limits,
        };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a runtime");
        let (ready, bound) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel();
        runtime.spawn(async move {
            let result = serve(
                registry,
                config,
                move |addr, _| {
                    let _ = ready.send(addr);
                },
                Some(stopped),
            )
            .await;
            if let Err(e) = result {
                panic!("the server failed: {e}");
            }
        });
        let addr = bound.recv_timeout(WAIT).expect("the server listens");
        InProcess {
            runtime: Some(runtime),
            stop: Some(stop),
            base: format!("http://{addr}"),
            _plugins: plugins,
        }
    }

    fn block_on<F: std::future::Future>(&self, future: F) -> F::Output {
        self.runtime.as_ref().expect("running").block_on(future)
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(runtime) = self.runtime.take() {
            // A thread stuck in a spinning plugin call never returns: it is abandoned, not joined.
            runtime.shutdown_timeout(Duration::from_secs(3));
        }
    }
}

struct Api {
    client: Client,
    base: String,
}

struct Game {
    id: u64,
    tokens: Vec<String>,
}

/// An answer: status and JSON body.
type Reply = (StatusCode, Value);

impl Api {
    fn new(base: &str) -> Api {
        Api {
            client: Client::builder()
                .timeout(WAIT)
                .no_proxy()
                .build()
                .expect("a client"),
            base: base.to_owned(),
        }
    }

    async fn reply(response: reqwest::Response) -> Reply {
        let status = response.status();
        let text = response.text().await.expect("a body");
        let body = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{status} {e}: {text}"));
        (status, body)
    }

    async fn create(&self, ruleset: &str, config: Value) -> Game {
        let response = self
            .client
            .post(format!("{}/api/games", self.base))
            .json(&json!({"ruleset": ruleset, "players": 2, "seed": 1, "config": config}))
            .send()
            .await
            .expect("create answers");
        let (status, body) = Self::reply(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        Game {
            id: body["game"].as_u64().unwrap(),
            tokens: body["tokens"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_owned())
                .collect(),
        }
    }

    async fn act(&self, game: &Game, seat: usize, action: Value) -> Reply {
        let response = self
            .client
            .post(format!("{}/api/games/{}/actions", self.base, game.id))
            .bearer_auth(&game.tokens[seat])
            .json(&json!({ "action": action }))
            .send()
            .await
            .expect("act answers");
        Self::reply(response).await
    }

    async fn get(&self, game: &Game, path: &str, seat: Option<usize>) -> Reply {
        let mut request = self
            .client
            .get(format!("{}/api/games/{}{path}", self.base, game.id));
        if let Some(seat) = seat {
            request = request.bearer_auth(&game.tokens[seat]);
        }
        Self::reply(request.send().await.expect("answers")).await
    }

    /// `/healthz` answers 200.
    async fn assert_healthy(&self) {
        let health = self
            .client
            .get(format!("{}/healthz", self.base))
            .send()
            .await
            .expect("healthz answers");
        assert_eq!(health.status(), StatusCode::OK);
    }

    /// One legal action of whichever seat may act, applied: the game's new sequence number.
    async fn play_one(&self, game: &Game) -> u64 {
        for seat in 0..game.tokens.len() {
            let (status, legal) = self.get(game, "/legal", Some(seat)).await;
            assert_eq!(status, StatusCode::OK, "{legal}");
            let Some(action) = legal["actions"].as_array().and_then(|a| a.first()) else {
                continue;
            };
            let (status, acted) = self.act(game, seat, action.clone()).await;
            assert_eq!(status, StatusCode::OK, "{acted}");
            return acted["seq"].as_u64().unwrap();
        }
        panic!("nobody may act in game {}", game.id);
    }
}

/// Checks `reply` is 409 `stopped` with a message in words naming the game.
fn assert_stopped(reply: &Reply, game: &Game, what: &str) {
    let (status, body) = reply;
    assert_eq!(*status, StatusCode::CONFLICT, "{what}: {body}");
    assert_eq!(body["error"], "stopped", "{what}: {body}");
    let message = body["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("game {}", game.id)) && message.contains("stopped"),
        "{what}: {message}"
    );
}

const TAKE: fn() -> Value = || json!({"type": "take", "n": 1});

/// The deadline of the WebAssembly rulesets of [`a_wasm_ruleset_that_faults_stops_only_its_game`].
const WASM_DEADLINE: Duration = Duration::from_millis(500);

#[test]
fn a_wasm_ruleset_that_faults_stops_only_its_game_and_every_other_game_goes_on() {
    let (Some(faulty), Some(modules)) = (
        coffer_tests::wasm_fixture("faulty"),
        coffer_tests::wasm_modules(),
    ) else {
        return;
    };
    let plugins = plugin_dir_with(&[
        &faulty,
        &modules.join("coffer-charges.wasm"),
        &modules.join("coffer-story-acts.wasm"),
    ]);
    let mut registry = Registry::new();
    registry.set_wasm_options(coffer_host::wasm::WasmOptions {
        deadline: WASM_DEADLINE,
        memory_cap: 64 << 20,
        ..Default::default()
    });
    let report = registry.load_dirs(&[plugins.path()], None);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    let server = InProcess::serving(registry, plugins);
    let api = Api::new(&server.base);
    server.block_on(async {
        // Games of the same module as the faulty ones (one in each instance and more, so the faulty
        // games share theirs), and of others.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut same_module = Vec::new();
        for _ in 0..coffer_host::wasm::INSTANCES_PER_CORE * cores + 2 {
            let game = api.create("fixture-faulty", json!({})).await;
            assert_eq!(api.act(&game, 0, TAKE()).await.0, StatusCode::OK);
            same_module.push(game);
        }
        let charges = api.create("charges", json!({"max_rounds": 1000})).await;
        let story = api.create("story-acts", json!({})).await;
        for (fault, words) in [
            ("spin", "deadline"),
            ("abort", "aborted"),
            ("exit", "aborted"),
            ("segv", "outside its memory"),
            ("oom", "out of memory"),
            ("stack", "stack overflowed"),
        ] {
            let game = api
                .create("fixture-faulty", json!({ "fault": fault }))
                .await;
            assert_eq!(api.act(&game, 0, TAKE()).await.0, StatusCode::OK);
            let started = Instant::now();
            let reply = api.act(&game, 1, TAKE()).await;
            let took = started.elapsed();
            assert_stopped(&reply, &game, fault);
            let message = reply.1["message"].as_str().unwrap();
            assert!(
                message.contains(words) && message.contains("fixture-faulty"),
                "{fault}: {message}"
            );
            if fault == "spin" {
                assert!(
                    took >= WASM_DEADLINE && took < WASM_DEADLINE * 3,
                    "answered after {took:?}, the deadline being {WASM_DEADLINE:?}"
                );
            }
            assert_stopped(&api.act(&game, 1, TAKE()).await, &game, "after the fault");
            // Every other game goes on: the same module's, from its state before the fault.
            for (i, game) in same_module.iter().enumerate() {
                let (status, summary) = api.get(game, "", None).await;
                assert_eq!(status, StatusCode::OK, "{fault}: game {i}: {summary}");
                assert!(summary["stopped"].is_null(), "{fault}: {summary}");
                api.play_one(game).await;
            }
            api.play_one(&charges).await;
            api.play_one(&story).await;
        }
        api.assert_healthy().await;
    });
}

#[test]
fn a_plugin_call_past_the_deadline_stops_only_its_game_while_others_play() {
    let server = InProcess::start();
    let api = Api::new(&server.base);
    server.block_on(async {
        let spinning = api.create("fixture-faulty", json!({"fault": "spin"})).await;
        let same_library = api.create("fixture-faulty", json!({})).await;
        let good = api.create("charges", json!({"max_rounds": 1000})).await;
        // The fault fires from the second move on.
        assert_eq!(api.act(&spinning, 0, TAKE()).await.0, StatusCode::OK);

        let started = Instant::now();
        let stuck = {
            let api = Api::new(&api.base);
            let game = Game {
                id: spinning.id,
                tokens: spinning.tokens.clone(),
            };
            tokio::spawn(async move {
                let reply = api.act(&game, 1, TAKE()).await;
                (reply, started.elapsed())
            })
        };
        // While the call spins, the other games act and answer views.
        let mut good_actions = 0;
        let mut views = 0;
        while !stuck.is_finished() {
            assert!(
                started.elapsed() < WAIT,
                "the stuck call was answered within {WAIT:?}"
            );
            api.play_one(&good).await;
            good_actions += 1;
            let (status, view) = api.get(&good, "/view", None).await;
            assert_eq!(status, StatusCode::OK, "{view}");
            views += 1;
        }
        let (reply, took) = stuck.await.unwrap();
        assert_stopped(&reply, &spinning, "the spinning call");
        let message = reply.1["message"].as_str().unwrap();
        assert!(message.contains("did not answer within 1 s"), "{message}");
        assert!(
            took >= DEADLINE && took < DEADLINE * 3,
            "answered after {took:?}, the deadline being {DEADLINE:?}"
        );
        assert!(
            good_actions >= 2 && views >= 2,
            "the good game played {good_actions} actions and {views} views meanwhile"
        );

        // The stopped game answers 409 to everything that needs it, at once; the lobby says why.
        for (what, reply) in [
            ("act", api.act(&spinning, 0, TAKE()).await),
            ("view", api.get(&spinning, "/view", Some(0)).await),
            ("spectator view", api.get(&spinning, "/view", None).await),
            ("legal", api.get(&spinning, "/legal", Some(1)).await),
        ] {
            assert_stopped(&reply, &spinning, what);
        }
        let (status, summary) = api.get(&spinning, "", None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            summary["stopped"]
                .as_str()
                .is_some_and(|s| s.contains("deadline")),
            "{summary}"
        );
        // Another game of the same library goes on, and so does the good one.
        assert_eq!(api.act(&same_library, 0, TAKE()).await.0, StatusCode::OK);
        assert_eq!(api.act(&same_library, 1, TAKE()).await.0, StatusCode::OK);
        let (status, summary) = api.get(&same_library, "", None).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(summary["seq"], 2, "{summary}");
        api.play_one(&good).await;
        api.assert_healthy().await;
    });
}

#[test]
fn a_panicking_plugin_stops_the_games_of_its_library_only() {
    let server = InProcess::start();
    let api = Api::new(&server.base);
    server.block_on(async {
        let victim = api.create("fixture-panicky", json!({})).await;
        let bystander = api.create("fixture-panicky", json!({})).await;
        let other_library = api.create("fixture-faulty", json!({})).await;
        let good = api.create("story-acts", json!({})).await;
        // `boom` is legal after three moves.
        for seat in [0, 1, 0] {
            assert_eq!(api.act(&victim, seat, TAKE()).await.0, StatusCode::OK);
        }
        assert_eq!(api.act(&bystander, 0, TAKE()).await.0, StatusCode::OK);
        let (status, legal) = api.get(&victim, "/legal", Some(1)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(legal.to_string().contains("boom"), "{legal}");

        let boom = api.act(&victim, 1, json!({"type": "boom"})).await;
        assert_stopped(&boom, &victim, "boom");
        let message = boom.1["message"].as_str().unwrap();
        assert!(
            message.contains("panicked") || message.contains("plugin failed"),
            "{message}"
        );
        assert_stopped(&api.act(&victim, 1, TAKE()).await, &victim, "after boom");
        // The library is poisoned: its other game stops at its next call, saying so.
        let poisoned = api.act(&bystander, 1, TAKE()).await;
        assert_stopped(&poisoned, &bystander, "the bystander");
        let message = poisoned.1["message"].as_str().unwrap();
        assert!(message.contains("poisoned"), "{message}");
        assert_stopped(
            &api.get(&bystander, "/view", None).await,
            &bystander,
            "bystander view",
        );
        // Nothing the panic touched was committed: the victim stayed at its three moves.
        let (_, summary) = api.get(&victim, "", None).await;
        assert_eq!(summary["seq"], 3, "{summary}");
        // Other libraries and the static rulesets go on.
        assert_eq!(api.act(&other_library, 0, TAKE()).await.0, StatusCode::OK);
        for _ in 0..3 {
            api.play_one(&good).await;
        }
        let (status, view) = api.get(&good, "/view", Some(0)).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        // A new game of the poisoned library cannot start; one of another can.
        let response = api
            .client
            .post(format!("{}/api/games", api.base))
            .json(&json!({"ruleset": "fixture-panicky", "players": 2}))
            .send()
            .await
            .unwrap();
        let (status, body) = Api::reply(response).await;
        assert!(
            status.is_client_error() || status.is_server_error(),
            "{status} {body}"
        );
        assert!(
            body["message"]
                .as_str()
                .is_some_and(|m| m.contains("poisoned")),
            "{body}"
        );
        api.create("fixture-faulty", json!({})).await;
    });
}

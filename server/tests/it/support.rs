//! Real servers for the API tests: the `coffer-server` binary started on loopback with a real SQLite
//! file and the three plugin libraries loaded at runtime.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

#[path = "../shared/listen.rs"]
mod listen;

/// The bundled rulesets and the library file each one is built into.
pub const PLUGINS: [(&str, &str); 3] = [
    ("charges", "coffer_charges"),
    ("command-tokens", "coffer_command_tokens"),
    ("story-acts", "coffer_story_acts"),
];

/// The file name of a library for a crate name on this platform (`libcoffer_charges.so`).
pub fn library_file(name: &str) -> String {
    format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// A directory holding exactly the three plugin libraries, copied from `target/<profile>/deps` where
/// cargo builds the dev-dependencies' cdylibs. Fails loudly when one is missing: these tests never skip.
pub fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let deps = exe.parent().expect("target/<profile>/deps");
        let dir = deps
            .parent()
            .expect("target/<profile>")
            .join("coffer-server-it-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        for (_, name) in PLUGINS {
            let file = library_file(name);
            let from = deps.join(&file);
            assert!(
                from.is_file(),
                "plugin library {} is missing: coffer-server's dev-dependencies should have built it",
                from.display()
            );
            // Copy then rename, so that test processes running at once never load a half-written file.
            let tmp = dir.join(format!("{file}.{}.tmp", std::process::id()));
            std::fs::copy(&from, &tmp).unwrap();
            std::fs::rename(&tmp, dir.join(&file)).unwrap();
        }
        dir
    })
}

/// The library of a misbehaving fixture ruleset (`faulty`: its configuration's `fault` makes a call
/// spin, exit, abort...), built from the fixture workspace `tests/fixtures` (outside this workspace; the
/// cross-crate tests build it into the same directory, `target/fixtures`). Fails loudly if it cannot
/// be built: these tests never skip.
pub fn fixture_library(name: &str) -> PathBuf {
    static BUILT: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one_at_a_time = BUILT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let exe = std::env::current_exe().expect("the test binary's path");
    let target = exe
        .parent()
        .and_then(Path::parent)
        .and_then(Path::parent)
        .expect("target/<profile>/deps");
    let fixtures = target.join("fixtures");
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("server/ has a parent");
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(["build", "--quiet", "--manifest-path"])
        .arg(repo.join("tests/fixtures/Cargo.toml"))
        .args(["-p", &format!("coffer-fixture-{name}")])
        .env("CARGO_TARGET_DIR", &fixtures)
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cannot build the fixture {name}:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let library = fixtures
        .join("debug")
        .join(library_file(&format!("coffer_fixture_{name}")));
    assert!(library.is_file(), "{} was not built", library.display());
    library
}

/// `serve` options for clients that play as fast as the server answers: rate limits (actions and
/// reads) raised out of the way, and a snapshot every 8 actions so that recoveries load snapshot plus
/// tail.
pub const FAST_ARGS: [&str; 10] = [
    "--actions-per-second",
    "1000000",
    "--action-burst",
    "1000000",
    "--reads-per-second",
    "1000000",
    "--read-burst",
    "1000000",
    "--snapshot-every",
    "8",
];

/// A running `coffer-server serve`, killed when dropped.
pub struct Server {
    child: Option<Child>,
    /// The address it listens on.
    pub addr: SocketAddr,
    /// `http://<addr>`.
    pub base: String,
    /// Where its stderr goes.
    pub log: PathBuf,
}

impl Server {
    /// Starts a server on a free loopback port with the SQLite store `store`, plus `args` for `serve`
    /// (limits and the like), and waits until it listens.
    pub fn start(store: &Path, args: &[&str]) -> Server {
        Self::start_with_env(store, args, &[])
    }

    /// [`start`](Self::start) with environment variables set for the server.
    pub fn start_with_env(store: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let log = store.with_extension(format!(
            "{}.log",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        Self::start_logged(store.as_os_str(), log, args, env)
    }

    /// [`start_with_env`](Self::start_with_env) with the rulesets of the libraries in `plugins` instead
    /// of the three bundled ones.
    pub fn start_with_plugins(
        plugins: &Path,
        store: &Path,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let log = store.with_extension("log");
        Self::start_in(plugins, store.as_os_str(), log, args, env)
    }

    /// Starts a server on the store `store` (a SQLite path or a `postgres://` URL) writing its stderr
    /// to `log`, plus `args` for `serve`, and waits until it listens.
    pub fn start_logged(
        store: &std::ffi::OsStr,
        log: PathBuf,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        Self::start_in(plugin_dir(), store, log, args, env)
    }

    /// [`start_logged`](Self::start_logged) with the rulesets of the libraries in `plugins`.
    fn start_in(
        plugins: &Path,
        store: &std::ffi::OsStr,
        log: PathBuf,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_coffer-server"));
        command
            .arg("--plugin-dir")
            .arg(plugins)
            .arg("serve")
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--store")
            .arg(store);
        // A new SQLite store the first time; a restart opens the one the earlier run made.
        let sqlite = !store.to_string_lossy().starts_with("postgres");
        if sqlite && !Path::new(store).exists() {
            command.arg("--create");
        }
        command
            .args(args)
            .env("COFFER_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().expect("coffer-server starts");
        let addr = listen::listening(&mut child).unwrap_or_else(|why| {
            let _ = child.kill();
            panic!(
                "{why}; its log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            )
        });
        Server {
            child: Some(child),
            addr,
            base: format!("http://{addr}"),
            log,
        }
    }

    /// `ws://<addr><path>`.
    pub fn ws(&self, path: &str) -> String {
        format!("ws://{}{path}", self.addr)
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// Sends `signal` (`STOP`, `CONT`...) to it.
    pub fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.pid().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Kills it with SIGKILL and waits for it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends SIGTERM and waits (at most 30 s) for it to exit.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut child = self.child.take().expect("running");
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(child.id().to_string())
            .status()
            .expect("kill runs");
        assert!(status.success());
        for _ in 0..300 {
            if let Some(status) = child.try_wait().unwrap() {
                return status;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = child.kill();
        panic!(
            "the server did not exit within 30 s of SIGTERM; its log:\n{}",
            self.log_text()
        );
    }

    /// What it wrote on stderr so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The environment variable naming the PostgreSQL server the PostgreSQL store is tested against, as a
/// `postgres://user@host:port/database` URL of a role that may create databases.
pub const POSTGRES_ENV: &str = "COFFER_POSTGRES_URL";

/// A database made for one test, dropped after it.
pub struct Database {
    admin_url: String,
    name: String,
}

impl Database {
    /// A new database on the server `COFFER_POSTGRES_URL` names, and its URL; `None` (after saying once
    /// how to run `what`) when the variable is not set. Set but unreachable fails the test.
    pub fn new(what: &str) -> Option<(Database, String)> {
        static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let Ok(admin_url) = std::env::var(POSTGRES_ENV) else {
            static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
            let mut said = SAID
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !said.iter().any(|w| w == what) {
                println!(
                    "{what}: skipped: set {POSTGRES_ENV}=postgres://postgres@127.0.0.1:5432/postgres \
                     (a role that may create databases) to run it"
                );
                said.push(what.to_owned());
            }
            return None;
        };
        Some(Self::on(&admin_url, &COUNT))
    }

    /// A new database on the server at `admin_url`.
    pub fn on(admin_url: &str, count: &std::sync::atomic::AtomicU32) -> (Database, String) {
        let mut admin = postgres::Client::connect(admin_url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("{POSTGRES_ENV}={admin_url} is set but unreachable: {e}"));
        let name = format!(
            "coffer_test_{}_{}",
            std::process::id(),
            count.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        );
        admin
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap_or_else(|e| panic!("cannot create database {name}: {e}"));
        let url = with_database(admin_url, &name);
        (
            Database {
                admin_url: admin_url.to_owned(),
                name,
            },
            url,
        )
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        // On a thread of its own: the blocking client cannot run inside an async test's runtime.
        let admin_url = self.admin_url.clone();
        let drop = format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name);
        let _ = std::thread::spawn(move || {
            if let Ok(mut admin) = postgres::Client::connect(&admin_url, postgres::NoTls) {
                let _ = admin.batch_execute(&drop);
            }
        })
        .join();
    }
}

/// `url` with its database replaced by `name`.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, format!("?{query}")),
        None => (url, String::new()),
    };
    let scheme_end = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    format!("{}/{name}{query}", &base[..host_end])
}

/// The JSON body of a GET that must succeed (a `Value`, or any type it reads as).
pub async fn get_json<T: serde::de::DeserializeOwned>(
    client: &reqwest::Client,
    url: impl reqwest::IntoUrl,
) -> T {
    client
        .get(url)
        .send()
        .await
        .expect("the server answers")
        .json()
        .await
        .expect("a JSON body")
}

/// The text of the `/metrics` page of the server at `base` (`http://<addr>`).
pub async fn metrics_text(client: &reqwest::Client, base: &str) -> String {
    client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .expect("metrics answer")
        .text()
        .await
        .expect("a text body")
}

/// The value of the metric `name` (a counter or gauge without labels) in `GET /metrics`.
pub async fn metric(client: &reqwest::Client, base: &str, name: &str) -> f64 {
    let text = metrics_text(client, base).await;
    text.lines()
        .find_map(|line| {
            line.strip_prefix(name)
                .and_then(|rest| rest.strip_prefix(' '))
                .and_then(|value| value.trim().parse().ok())
        })
        .unwrap_or_else(|| panic!("no metric {name} in:\n{text}"))
}

/// A created game's number and its seats' tokens, from the creation's answer.
pub fn game_and_tokens(created: &serde_json::Value) -> (u64, Vec<String>) {
    let tokens = created["tokens"]
        .as_array()
        .expect("a creation answers tokens")
        .iter()
        .map(|t| t.as_str().expect("a token is a string").to_owned())
        .collect();
    (
        created["game"]
            .as_u64()
            .expect("a creation answers its game"),
        tokens,
    )
}

/// Replays a stored `log` in this process with the statically linked ruleset `ruleset` from `setup`:
/// every action applies as the seat it names and gives its stored hash, and the game ends. Answers the
/// replayed game.
pub fn replay_stored(
    ruleset: &str,
    setup: coffer_core::Setup,
    log: &[coffer_server::Action],
) -> coffer_host::HostedGame {
    let registry = coffer_host::Registry::with_static().expect("the static rulesets register");
    let entry = registry.get(ruleset).expect("the ruleset is linked");
    let mut replay =
        coffer_host::HostedGame::start(entry.ruleset.clone(), setup).expect("the game starts");
    for (i, action) in log.iter().enumerate() {
        assert_eq!(action.seq, i as u64 + 1, "the log is gapless");
        replay
            .apply_json(action.seat as u16, action.action.get())
            .unwrap_or_else(|e| panic!("action {} replays: {e}", action.seq));
        assert_eq!(
            replay.state_hash().0,
            action.hash.0,
            "the hash of action {}",
            action.seq
        );
    }
    assert_ne!(
        replay.outcome(),
        coffer_core::Outcome::Ongoing,
        "the replayed game is finished too"
    );
    replay
}

/// Sends `request` and reads its answer as JSON, whatever its status.
pub async fn json_of(request: reqwest::RequestBuilder) -> serde_json::Value {
    request.send().await.unwrap().json().await.unwrap()
}

/// The legal actions of a seat now: `(seq, actions)`.
pub async fn legal(
    client: &reqwest::Client,
    base: &str,
    game: u64,
    token: &str,
) -> (u64, Vec<serde_json::Value>) {
    let legal = json_of(
        client
            .get(format!("{base}/api/games/{game}/legal"))
            .bearer_auth(token),
    )
    .await;
    (
        legal["seq"].as_u64().unwrap(),
        legal["actions"].as_array().unwrap().clone(),
    )
}

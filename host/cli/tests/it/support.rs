//! What the `coffer` command tests share: the real plugins copied where the binary loads them, running
//! the binary, and games started and played through it.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The bundled rulesets and the library file each one is built into.
pub(crate) const PLUGINS: [(&str, &str); 3] = [
    ("charges", "coffer_charges"),
    ("command-tokens", "coffer_command_tokens"),
    ("story-acts", "coffer_story_acts"),
];

/// A directory holding exactly the three plugin libraries, copied from `target/<profile>/deps` where cargo
/// builds the dev-dependencies' cdylibs (that directory also holds proc-macro libraries, which are not
/// plugins). Fails loudly when a library is missing: these tests never skip.
pub(crate) fn plugin_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("the test binary's path");
        let deps = exe.parent().expect("target/<profile>/deps");
        let dir = deps
            .parent()
            .expect("target/<profile>")
            .join("coffer-it-plugins");
        std::fs::create_dir_all(&dir).unwrap();
        for (_, name) in PLUGINS {
            let file = library_file(name);
            let from = deps.join(&file);
            assert!(
                from.is_file(),
                "plugin library {} is missing: coffer-cli's dev-dependencies should have built it",
                from.display()
            );
            // Copy then rename, so that test processes running at once (cargo nextest) never load a
            // half-written library.
            let tmp = dir.join(format!("{file}.{}.tmp", std::process::id()));
            std::fs::copy(&from, &tmp).unwrap();
            std::fs::rename(&tmp, dir.join(&file)).unwrap();
        }
        dir
    })
}

/// The file name of a library for a crate name on this platform (`libcoffer_charges.so`).
pub(crate) fn library_file(name: &str) -> String {
    format!(
        "{}{name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

/// What a run printed and returned.
pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}
impl Run {
    /// Asserts that the run ended with `code` and that its stderr holds `text` (showing stderr otherwise).
    pub(crate) fn fails_with(&self, code: i32, text: &str) {
        assert_eq!(self.code, code, "stderr: {}", self.stderr);
        assert!(self.stderr.contains(text), "{}", self.stderr);
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.stdout))
    }
}

/// Runs `coffer` with no plugin directory.
pub(crate) fn bare(args: &[&str]) -> Run {
    let out = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .args(args)
        .env_remove("COFFER_PLUGIN_PATH")
        .env_remove("RUST_LOG")
        .output()
        .expect("coffer runs");
    Run {
        code: out.status.code().expect("an exit code"),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// Runs `coffer --plugin-dir <the plugins> ARGS`.
pub(crate) fn coffer(args: &[&str]) -> Run {
    let dir = plugin_dir().to_str().unwrap().to_owned();
    let mut all = vec!["--plugin-dir", &dir];
    all.extend_from_slice(args);
    bare(&all)
}

pub(crate) fn ok(run: Run) -> Run {
    assert_eq!(
        run.code, 0,
        "stdout: {}\nstderr: {}",
        run.stdout, run.stderr
    );
    run
}

pub(crate) fn players(id: &str) -> &'static str {
    if id == "command-tokens" { "3" } else { "2" }
}

/// Starts a game of `id` in `dir`.
pub(crate) fn new_game(dir: &Path, id: &str) -> PathBuf {
    let path = dir.join(format!("{id}.json"));
    ok(coffer(&[
        "new",
        id,
        "--players",
        players(id),
        "--seed",
        "5",
        "-o",
        path.to_str().unwrap(),
    ]));
    path
}

/// The first player with a legal action, and that action.
pub(crate) fn first_legal(game: &Path, players: u16) -> (u16, Value) {
    for p in 0..players {
        let run = ok(coffer(&[
            "--format",
            "json",
            "legal",
            game.to_str().unwrap(),
            "--player",
            &p.to_string(),
        ]));
        if let Some(action) = run.json().as_array().unwrap().first() {
            return (p, action.clone());
        }
    }
    panic!("no player has a legal action in {}", game.display());
}

/// Applies the first legal action of `game` (of `n` players) three times, each with
/// `coffer FRONT act GAME --player P ACTION`, and returns the runs (each checked to succeed).
pub(crate) fn act_three_times(game: &Path, n: u16, front: &[&str]) -> Vec<Run> {
    (0..3)
        .map(|_| {
            let (p, action) = first_legal(game, n);
            let (p, action) = (p.to_string(), action.to_string());
            let mut args = front.to_vec();
            args.extend(["act", game.to_str().unwrap(), "--player", &p, &action]);
            ok(coffer(&args))
        })
        .collect()
}

/// Writes a script of the first legal action of each turn, `n` actions long, by playing them.
pub(crate) fn script_of(dir: &Path, id: &str, n: usize) -> (PathBuf, String) {
    let game = dir.join(format!("script-{id}.json"));
    ok(coffer(&[
        "new",
        id,
        "--players",
        players(id),
        "--seed",
        "5",
        "--force",
        "-o",
        game.to_str().unwrap(),
    ]));
    let mut lines = String::new();
    for _ in 0..n {
        let (p, action) = first_legal(&game, players(id).parse().unwrap());
        ok(coffer(&[
            "act",
            game.to_str().unwrap(),
            "--player",
            &p.to_string(),
            &action.to_string(),
        ]));
        lines.push_str(&format!("{}\n\n", json!({"player": p, "action": action})));
    }
    let save: Value = serde_json::from_str(&std::fs::read_to_string(&game).unwrap()).unwrap();
    let script = dir.join(format!("{id}.jsonl"));
    std::fs::write(&script, lines).unwrap();
    (script, save["state_hash"].as_str().unwrap().to_owned())
}

/// Runs `coffer --plugin-dir <the plugins> ARGS`, reads one line of its output and closes the pipe, as
/// `coffer ARGS | head -1` does; returns the line and the exit status.
pub(crate) fn first_line_then_close(args: &[&str]) -> (String, std::process::ExitStatus, String) {
    use std::io::{BufRead as _, Read as _};
    let dir = plugin_dir().to_str().unwrap().to_owned();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coffer"))
        .arg("--plugin-dir")
        .arg(&dir)
        .args(args)
        .env_remove("COFFER_PLUGIN_PATH")
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("coffer runs");
    let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    drop(reader);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    (line, child.wait().unwrap(), stderr)
}

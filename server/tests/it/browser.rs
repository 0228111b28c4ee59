//! The web table in a real browser: headless Chromium (the distribution's package) driven by
//! playwright-core (`server/tests/web/table.mjs`) against a real server on loopback with a real SQLite
//! file. For each ruleset, one browser context per seat creates or joins the game from the lobby and plays
//! it to its end by clicking the page's controls while another context watches; a refused action shows
//! its reason and changes nothing; a reload mid-game resumes; the spectator's traffic holds no seat's
//! hidden state. The final stored state hash equals the same actions played in-process.
//!
//! Needs `COFFER_BROWSER` (the Chromium executable) and `npm ci` in `server/tests/web`; `.ci/run` sets up
//! both. Without `COFFER_BROWSER` the test says how to run it, in one line, and passes; with it set, any
//! missing piece fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use coffer_core::Setup;
use coffer_host::{HostedGame, Registry};
use coffer_server::{GameId, SqliteConfig, SqliteStore, Store};
use serde_json::{Value, json};

use crate::support::Server;

// Linked so that `Registry::with_static` finds them.
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// An example script of a ruleset: its steps and its setup.
fn example(ruleset: &str, file: &str) -> (Vec<Value>, Value) {
    let path = repo()
        .join("plugins")
        .join(ruleset)
        .join("examples")
        .join(file);
    let steps: Vec<Value> = std::fs::read_to_string(&path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sidecar = path.with_extension("setup.json");
    let setup = if sidecar.is_file() {
        serde_json::from_str(&std::fs::read_to_string(sidecar).unwrap()).unwrap()
    } else {
        json!({})
    };
    (steps, setup)
}

/// A short game played in-process: the first seat able to act plays its last legal action, until the
/// game ends.
fn last_legal_playout(registry: &Registry, ruleset: &str, setup: Setup) -> Vec<Value> {
    let entry = registry.get(ruleset).unwrap();
    let mut game = HostedGame::start(entry.ruleset.clone(), setup).unwrap();
    let mut steps = Vec::new();
    while game.outcome() == coffer_core::Outcome::Ongoing {
        assert!(steps.len() < 500, "{ruleset}: the playout does not end");
        let seat = game.table(None).acting[0].seat.0;
        let legal = game.legal_actions(seat);
        let action: Value = serde_json::from_str(legal.last().unwrap()).unwrap();
        game.apply_json(seat, &action.to_string()).unwrap();
        steps.push(json!({"player": seat, "action": action}));
    }
    steps
}

/// The state hash after `steps`, played in-process.
/// A seed of command-tokens with `config` whose first action is seat 0's and can be taken back when it
/// is the first one the web table offers (the first legal action).
fn undoable_seed(registry: &Registry, config: &Value) -> u64 {
    let entry = registry.get("command-tokens").unwrap();
    (1..100)
        .find(|&seed| {
            let setup = Setup::new(3, seed).config(config.clone());
            let mut game = entry.ruleset.new_game(&setup).unwrap();
            if game.legal_actions(coffer_core::Owner(0)) == 0
                || game.to_act() != [coffer_core::Owner(0)]
            {
                return false;
            }
            let first = game.legal_action_json(0).unwrap();
            game.apply_json(coffer_core::Owner(0), &first).is_ok()
                && game.table(None).undo.is_some()
        })
        .expect("a seed where seat 0 acts first and may take it back")
}

fn hash_in_process(registry: &Registry, ruleset: &str, setup: Setup, steps: &[Value]) -> u64 {
    let entry = registry.get(ruleset).unwrap();
    let mut game = HostedGame::start(entry.ruleset.clone(), setup).unwrap();
    for step in steps {
        let seat = u16::try_from(step["player"].as_u64().unwrap()).unwrap();
        game.apply_json(seat, &step["action"].to_string()).unwrap();
    }
    assert_ne!(game.outcome(), coffer_core::Outcome::Ongoing);
    game.state_hash().0
}

#[test]
fn web_table_plays_every_ruleset_to_its_end_in_a_real_browser() {
    let Some(browser) = std::env::var_os("COFFER_BROWSER") else {
        println!(
            "browser: skipped: install Chromium (apt-get install chromium), run `npm ci` in server/tests/web, \
             then COFFER_BROWSER=/usr/bin/chromium cargo test -p coffer-server --test it browser"
        );
        return;
    };
    let web = repo().join("server/tests/web");
    assert!(
        web.join("node_modules/playwright-core").is_dir(),
        "COFFER_BROWSER is set but playwright-core is not installed: run `npm ci` in {}",
        web.display()
    );
    assert!(
        Path::new(&browser).is_file(),
        "COFFER_BROWSER={} is not a file",
        Path::new(&browser).display()
    );
    let registry = Registry::with_static().unwrap();
    let key = |id: &str| registry.get(id).unwrap().key();

    let (charges, charges_setup) = example("charges", "skirmish.jsonl");
    let (story, story_setup) = example("story-acts", "three_acts.jsonl");
    let tokens_config = json!({"rounds": 1});
    let tokens = last_legal_playout(
        &registry,
        "command-tokens",
        Setup::new(3, 0).config(tokens_config.clone()),
    );
    let games = [
        (
            "charges",
            2u16,
            charges_setup["seed"].as_u64().unwrap_or(0),
            json!({}),
            charges,
            // A planned dial is secret until it is revealed.
            vec!["planned a (blue|white|red|purple) maneuver"],
        ),
        (
            "command-tokens",
            3,
            0,
            tokens_config,
            tokens,
            // Nothing in this ruleset is hidden.
            vec![],
        ),
        (
            "story-acts",
            u16::try_from(story_setup["players"].as_u64().unwrap_or(2)).unwrap(),
            story_setup["seed"].as_u64().unwrap_or(0),
            json!({}),
            story,
            // A seat's hand is its own.
            vec![r#""title":"Hand""#],
        ),
    ];

    let bots_config = json!({"rounds": 1});

    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("games.db");
    // A ruleset's own view, as a newcomer would add one: an ES module named after the ruleset.
    let views = dir.path().join("views");
    std::fs::create_dir(&views).unwrap();
    std::fs::write(
        views.join("charges.js"),
        "export function render(container, { view, seat }) {\n\
           const p = document.createElement('p');\n\
           p.dataset.customView = 'charges';\n\
           p.textContent = `Squadron view for ${seat === null ? 'a spectator' : 'p' + seat}: ${view.table.sections[0].rows.length} ships`;\n\
           container.replaceChildren(p);\n\
         }\n",
    )
    .unwrap();
    let mut server = Server::start(
        &store,
        &[
            "--actions-per-second",
            "100000",
            "--action-burst",
            "100000",
            "--web-views",
            views.to_str().unwrap(),
        ],
    );
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    let tokens_undo_config = json!({"rounds": 1});
    let undo_seed = undoable_seed(&registry, &tokens_undo_config);
    let plan = json!({
        "base": server.base,
        "browser": Path::new(&browser),
        "shots": shots,
        "games": games.iter().map(|(id, players, seed, config, script, hidden)| json!({
            "ruleset": key(id), "players": players, "seed": seed, "config": config,
            "script": script, "hidden": hidden, "custom_view": *id == "charges",
        })).collect::<Vec<_>>(),
        // One person takes an action back and plays it again.
        "undo": {"ruleset": key("command-tokens"), "players": 3, "seed": undo_seed,
                 "config": tokens_undo_config.clone()},
        // One person against two of the server's bots, with a clock, from the lobby to the game's end.
        "against_bots": {"ruleset": key("command-tokens"), "players": 3, "seed": 9,
                         "config": bots_config.clone(), "seconds_per_decision": 1.5},
    });
    let plan_file = dir.path().join("plan.json");
    std::fs::write(&plan_file, plan.to_string()).unwrap();
    let run = Command::new("node")
        .arg(web.join("table.mjs"))
        .arg(&plan_file)
        .current_dir(&web)
        .output()
        .expect("node runs (install Node.js 18 or newer)");
    let stderr = String::from_utf8_lossy(&run.stderr);
    eprintln!("{stderr}");
    assert!(
        run.status.success(),
        "the browser run failed: {stderr}\nserver log:\n{}",
        server.log_text()
    );
    let results: Vec<Value> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(results.len(), games.len() + 2);
    assert!(server.terminate().success());

    let stored = SqliteStore::open(&store, SqliteConfig::default()).unwrap();
    for ((id, players, seed, config, script, _), result) in games.iter().zip(&results) {
        assert_eq!(result["ruleset"], key(id));
        let game = GameId(result["game"].as_u64().unwrap());
        let log = stored.actions_after(game, 0).unwrap();
        assert_eq!(log.len(), script.len(), "{id}: every click is one action");
        let expected = hash_in_process(
            &registry,
            id,
            Setup::new(*players, *seed).config(config.clone()),
            script,
        );
        assert_eq!(
            log.last().unwrap().hash.0,
            expected,
            "{id}: the game clicked in the browser ends in the state the same actions reach in-process"
        );
    }
    // The game against bots: every stored action replays in process to its stored hash, seat 0's first
    // move was its timeout's, and the bots played the other two seats to the end.
    // The undo game: an action, its undo, the same action again; the hashes say the undo returned the
    // state before the action, and the log replays.
    let undone = &results[games.len()];
    let log = stored
        .actions_after(GameId(undone["game"].as_u64().unwrap()), 0)
        .unwrap();
    assert_eq!(log.len(), 3, "undo: an action, its undo, the action again");
    assert_eq!(log[1].action.get(), coffer_core::UNDO);
    assert_eq!(log[0].action.get(), log[2].action.get());
    assert_eq!(log[0].hash, log[2].hash);
    let mut replay = HostedGame::start(
        registry.get("command-tokens").unwrap().ruleset.clone(),
        Setup::new(3, undo_seed).config(tokens_undo_config),
    )
    .unwrap();
    let start = replay.state_hash().0;
    for action in &log {
        replay
            .apply_json(action.seat as u16, action.action.get())
            .unwrap();
        assert_eq!(replay.state_hash().0, action.hash.0);
    }
    assert_eq!(
        log[1].hash.0, start,
        "the undo returned the state before the action"
    );
    let against = &results[games.len() + 1];
    let log = stored
        .actions_after(GameId(against["game"].as_u64().unwrap()), 0)
        .unwrap();
    assert_eq!(log.len() as u64, against["seq"].as_u64().unwrap());
    let first_of_seat0 = log.iter().find(|a| a.seat == 0).expect("seat 0 acted");
    assert!(
        first_of_seat0
            .key
            .as_deref()
            .is_some_and(|k| k.starts_with("~timeout@")),
        "seat 0's first move was its timeout's: {:?}",
        first_of_seat0.key
    );
    // Seat 0 resigned after three clicks: its last move was the bot's.
    let last_of_seat0 = log
        .iter()
        .rev()
        .find(|a| a.seat == 0)
        .expect("seat 0 acted");
    assert!(
        last_of_seat0
            .key
            .as_deref()
            .is_some_and(|k| k.starts_with("~bot@")),
        "seat 0's last move was the bot's after it resigned: {:?}",
        last_of_seat0.key
    );
    crate::support::replay_stored("command-tokens", Setup::new(3, 9).config(bots_config), &log);
    for seat in 0..3 {
        assert!(
            log.iter().any(|a| a.seat == seat),
            "seat {seat} played in the game against bots"
        );
    }
    for shot in [
        "against-bots",
        "undo",
        "lobby",
        "charges-seat0",
        "command-tokens-spectator",
        "story-acts-seat0",
    ] {
        assert!(shots.join(format!("{shot}.png")).is_file(), "{shot}.png");
    }
}

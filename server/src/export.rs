//! `coffer-server export`: one game of a store written as a `coffer` save file, so that a finished
//! game's log outlives the retention policy (`serve --keep-finished-days`) and any game can be read
//! with `coffer show`, `coffer log` or `coffer replay`.
//!
//! The game is replayed from its first action on the loaded ruleset, each action's state hash checked
//! against the stored one: what is written is what was played, or nothing is written.

use std::path::PathBuf;
use std::process::ExitCode;

use coffer_cli::{Global, load_registry};
use coffer_core::Setup as CoreSetup;
use coffer_host::HostedGame;

use crate::{GameId, SqliteConfig, SqliteStore, Store};

/// What `export` takes.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The store: a SQLite database file (it must exist), or a `postgres://` URL.
    #[arg(long, default_value = "coffer.db", value_name = "PATH")]
    pub store: PathBuf,
    /// The game's id, as the API shows it.
    #[arg(long, value_name = "ID")]
    pub game: u64,
    /// The save file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite the save file if it exists.
    #[arg(long)]
    pub force: bool,
}

/// Runs `export`: 0 written, 1 the game could not be exported, 2 a usage error (no store, no ruleset).
pub fn run(global: &Global, args: Args) -> ExitCode {
    match export(global, &args) {
        Ok(actions) => {
            println!(
                "game {} ({actions} actions) written to {}",
                args.game,
                args.output.display()
            );
            ExitCode::SUCCESS
        }
        Err(Failure::Usage(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
        Err(Failure::Game(message)) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

enum Failure {
    Usage(String),
    Game(String),
}

fn open(store: &std::path::Path) -> Result<Box<dyn Store>, Failure> {
    let text = store.to_string_lossy();
    if text.starts_with("postgres://") || text.starts_with("postgresql://") {
        return crate::PgStore::open(&text)
            .map(|s| Box::new(s) as Box<dyn Store>)
            .map_err(|e| Failure::Usage(format!("cannot open the store {text}: {e}")));
    }
    // Opening a SQLite path that does not exist would create an empty store: say so instead.
    if !store.is_file() {
        return Err(Failure::Usage(format!(
            "no store at {}: give the server's --store file",
            store.display()
        )));
    }
    SqliteStore::open(store, SqliteConfig::default())
        .map(|s| Box::new(s) as Box<dyn Store>)
        .map_err(|e| Failure::Usage(format!("cannot open the store {}: {e}", store.display())))
}

fn export(global: &Global, args: &Args) -> Result<usize, Failure> {
    coffer_host::save::check_new(&args.output, args.force)
        .map_err(|e| Failure::Usage(e.to_string()))?;
    let registry = load_registry(global).map_err(|e| Failure::Usage(format!("{e:#}")))?;
    let store = open(&args.store)?;
    let id = GameId(args.game);
    let record = store.game(id).map_err(|e| Failure::Game(e.to_string()))?;
    let actions = store
        .actions_after(id, 0)
        .map_err(|e| Failure::Game(e.to_string()))?;
    let entry = registry.get(record.ruleset.as_str()).map_err(|e| {
        Failure::Usage(format!(
            "game {id} plays {}, which is not loaded: {e}",
            record.ruleset
        ))
    })?;
    let players = u16::try_from(record.setup.players)
        .map_err(|_| Failure::Game(format!("game {id} has {} players", record.setup.players)))?;
    let setup = CoreSetup::new(players, record.setup.seed).config(record.setup.config.clone());
    let mut game = HostedGame::start(std::sync::Arc::clone(&entry.ruleset), setup)
        .map_err(|e| Failure::Game(format!("game {id} does not start again: {e}")))?;
    for (expected, action) in (1..).zip(&actions) {
        if action.seq != expected {
            return Err(Failure::Game(format!(
                "game {id}'s log has no action {expected} (the next stored one is {}): nothing written",
                action.seq
            )));
        }
        let seat = u16::try_from(action.seat).unwrap_or(u16::MAX);
        game.apply_json(seat, action.action.get()).map_err(|e| {
            Failure::Game(format!(
                "game {id}'s action {} does not replay ({e}): nothing written",
                action.seq
            ))
        })?;
        if game.state_hash().0 != action.hash.0 {
            return Err(Failure::Game(format!(
                "game {id}'s action {} replays to another state than was played (a different ruleset \
                 build?): nothing written",
                action.seq
            )));
        }
    }
    if record.seq != actions.len() as u64 {
        return Err(Failure::Game(format!(
            "game {id} is at action {} but its log holds {}: nothing written",
            record.seq,
            actions.len()
        )));
    }
    coffer_host::save::create(&game, &args.output, args.force)
        .map_err(|e| Failure::Game(e.to_string()))?;
    Ok(actions.len())
}

//! A hosted game and its save file: loading, saving, creating and updating one under its lock.

use crate::game::HostedGame;
use crate::registry::Registry;
use crate::save::checks::RulesetRef;
use crate::save::config::check_config;
use crate::save::error::SaveError;
use crate::save::file::SaveFile;
use crate::save::format::FORMAT_VERSION;
use crate::save::limits::Limits;
use crate::save::read::{SAVE_FILE, as_text};
use crate::save::view::{LogSummary, Parts, RawSave, View, write_json};
use crate::save::write::{
    LockedSave, check_size, parent_of, sweep_stale_temporaries, sync_dir, write_replacing,
    write_temporary,
};
use coffer_core::{Format, SetupError};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::path::Path;

/// Reads a save file with the checks every command applies ([`SaveFile::read`] then
/// [`SaveFile::restore`]): the log is not replayed, so this costs the same for any length of log.
///
/// # Errors
/// Any [`SaveError`]; a file that fails a check is never accepted.
pub fn load(path: &Path, registry: &Registry) -> Result<HostedGame, SaveError> {
    load_with(path, registry, &Limits::from_env()?)
}

/// [`load`] with explicit limits.
///
/// # Errors
/// As [`load`].
pub fn load_with(
    path: &Path,
    registry: &Registry,
    limits: &Limits,
) -> Result<HostedGame, SaveError> {
    SaveFile::read_with(path, limits)?.into_game(registry)
}

/// Reads a save file and checks all of it, replaying the log ([`SaveFile::read`] then
/// [`SaveFile::replay`]): what `coffer replay` does. Refuses everything [`load`] refuses.
///
/// # Errors
/// Any [`SaveError`].
pub fn load_verified(path: &Path, registry: &Registry) -> Result<HostedGame, SaveError> {
    SaveFile::read(path)?.replay(registry)
}

/// Saves a hosted game to `path` atomically, replacing the file if there is one (under its lock, through
/// a symlink to its target, keeping its permissions; see [`update`] for what is refused). A new file is
/// created with mode 0600.
///
/// # Errors
/// [`SaveError::Snapshot`], [`SaveError::Io`], [`SaveError::Config`], [`SaveError::TooLargeToWrite`], and
/// for an existing file those of [`update`]'s locking.
pub fn save(game: &HostedGame, path: &Path) -> Result<(), SaveError> {
    write_replacing(path, game_json(game)?.as_bytes(), &Limits::from_env()?)
}

/// Checks that a new save may be written to `path`: it does not exist yet, or `force` is set. For the
/// commands that write a new game (`new`, `play -o`), before any work; [`create`] checks again when
/// writing.
///
/// # Errors
/// [`SaveError::Exists`].
pub fn check_new(path: &Path, force: bool) -> Result<(), SaveError> {
    if !force && std::fs::symlink_metadata(path).is_ok() {
        return Err(SaveError::Exists {
            path: path.to_owned(),
        });
    }
    Ok(())
}

/// Writes a new game's save to `path`. Without `force` the file must not exist, and this is checked
/// atomically with the write (a file created meanwhile is not replaced); with `force` it is [`save`].
///
/// # Errors
/// [`SaveError::Exists`], and those of [`save`].
pub fn create(game: &HostedGame, path: &Path, force: bool) -> Result<(), SaveError> {
    if force {
        return save(game, path);
    }
    check_new(path, false)?;
    let bytes = game_json(game)?;
    check_size(path, bytes.as_bytes(), &Limits::from_env()?)?;
    let io = |action, source| SaveError::Io {
        action,
        what: SAVE_FILE,
        path: path.to_owned(),
        source,
    };
    let dir = parent_of(path);
    let tmp = write_temporary(dir, bytes.as_bytes(), None).map_err(|e| io("write", e))?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {}
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => {
            return Err(SaveError::Exists {
                path: path.to_owned(),
            });
        }
        Err(e) => return Err(io("write", e.error)),
    }
    sync_dir(dir).map_err(|e| io("write", e))?;
    sweep_stale_temporaries(dir);
    Ok(())
}

/// Applies `change` to the game saved at `path` and writes the result back, as one update that no other
/// [`update`] interleaves with: the file is locked (`flock`, exclusive) from before it is read until
/// after the new file replaces it.
///
/// `change` gets the game as [`load`] reads it (the same checks), except for its log: the saved actions
/// are not read into memory, so [`HostedGame::log`] starts empty and holds only the actions `change`
/// applies, which are appended to the file's log. That keeps an update's cost from growing with the game
/// (apart from copying the file's text). When `change` returns `Err`, nothing is written and the error is
/// handed back inside `Ok`; when it returns `Ok`, the new save replaces the old one atomically and the game
/// and `change`'s value are handed back (the lock is released on return).
///
/// Waiting: a held lock is retried for up to [`Limits::lock_wait`] (default 10 s, [`LOCK_WAIT_ENV`]),
/// then [`SaveError::Locked`]. The path may be a symlink: its target is rewritten (a temporary file in
/// the target's directory renamed over it) and the link stays a link; the target's permission bits are
/// kept. Refused: a read-only save ([`SaveError::ReadOnly`]), one with several hard links
/// ([`SaveError::HardLinked`]), and one that changed under the lock ([`SaveError::Changed`]), in each
/// case with the file left as it was.
///
/// # Errors
/// Those of [`load`], those named above, and [`SaveError::TooLargeToWrite`] when the updated save would
/// be larger than the read limit (nothing is written).
pub fn update<T, E>(
    path: &Path,
    registry: &Registry,
    change: impl FnOnce(&mut HostedGame) -> Result<T, E>,
) -> Result<Result<(HostedGame, T), E>, SaveError> {
    update_with(path, registry, &Limits::from_env()?, change)
}

/// [`update`] with explicit limits.
///
/// # Errors
/// As [`update`].
pub fn update_with<T, E>(
    path: &Path,
    registry: &Registry,
    limits: &Limits,
    change: impl FnOnce(&mut HostedGame) -> Result<T, E>,
) -> Result<Result<(HostedGame, T), E>, SaveError> {
    update_read(path, limits, change, |_, view| {
        let (ruleset, restored) = view.checked(registry)?;
        Ok(HostedGame::from_parts(
            ruleset,
            view.into_setup(),
            Vec::new(),
            restored,
        ))
    })
}

/// [`update`] for a change that needs the game as its log made it rather than as its snapshot restores
/// it: taking back actions (`"~undo"`, [`coffer_core::UNDO`]), since what a seat may take back is kept
/// by the game but not by its snapshot. The whole log is replayed from the setup and checked, as
/// [`SaveFile::replay`] does (its cost grows with the log); the rest is as [`update`].
///
/// # Errors
/// As [`update`], and those of [`SaveFile::replay`].
pub fn update_replaying<T, E>(
    path: &Path,
    registry: &Registry,
    change: impl FnOnce(&mut HostedGame) -> Result<T, E>,
) -> Result<Result<(HostedGame, T), E>, SaveError> {
    update_read(path, &Limits::from_env()?, change, |text, _| {
        Ok(SaveFile::parse(text)?.replay(registry)?.without_log())
    })
}

/// The locked read-modify-write of both updates: `game` makes the game (with an empty log) from the
/// save's text and its view; the saved actions stay in the file as text.
fn update_read<T, E>(
    path: &Path,
    limits: &Limits,
    change: impl FnOnce(&mut HostedGame) -> Result<T, E>,
    game: impl FnOnce(&str, View<'_>) -> Result<HostedGame, SaveError>,
) -> Result<Result<(HostedGame, T), E>, SaveError> {
    let locked = LockedSave::acquire(path, limits)?;
    let bytes = locked.read(limits)?;
    let text = as_text(&bytes, path, SAVE_FILE)?;
    let ReadForUpdate { view, log_text } = ReadForUpdate::parse(text)?;
    let mut game = game(text, view)?;
    let value = match change(&mut game) {
        Ok(value) => value,
        Err(e) => return Ok(Err(e)),
    };
    let text = game_json_after(&game, &log_text)?;
    drop(log_text);
    drop(bytes);
    check_size(path, text.as_bytes(), limits)?;
    locked.replace(text.as_bytes())?;
    Ok(Ok((game, value)))
}

/// A save's text read for an update: the log's entries as text, and what the checks need.
pub(crate) struct ReadForUpdate<'a> {
    pub(crate) view: View<'a>,
    /// The log's entries as they are in the file, without the brackets (empty for an empty log).
    pub(crate) log_text: Cow<'a, str>,
}

impl<'a> ReadForUpdate<'a> {
    /// Reads `text` without materializing the log; a text that does not read so is read as
    /// [`SaveFile::parse`] reads it, which names what is wrong (or, for the odd file only it reads, such
    /// as a hash written with escapes, is used instead).
    pub(crate) fn parse(text: &'a str) -> Result<ReadForUpdate<'a>, SaveError> {
        if let Ok(raw) = serde_json::from_str::<RawSave<'a>>(text)
            && (1..=FORMAT_VERSION).contains(&raw.format)
            && let Ok(log) = serde_json::from_str::<LogSummary>(raw.log.get())
        {
            let inner = raw.log.get().trim();
            let inner = inner
                .strip_prefix('[')
                .and_then(|t| t.strip_suffix(']'))
                .unwrap_or_default()
                .trim();
            return Ok(ReadForUpdate {
                view: View {
                    ruleset: raw.ruleset,
                    players: raw.players,
                    seed: raw.seed,
                    config: Cow::Owned(raw.config),
                    snapshot: Cow::Borrowed(raw.snapshot.get()),
                    state_hash: raw.state_hash,
                    log,
                },
                log_text: Cow::Borrowed(inner),
            });
        }
        let file = SaveFile::parse(text)?;
        let log_text = file
            .log
            .iter()
            .map(|e| serde_json::to_string(e).unwrap_or_default())
            .collect::<Vec<_>>()
            .join(",\n    ");
        let view = file.view();
        Ok(ReadForUpdate {
            view: View {
                config: Cow::Owned(view.config.into_owned()),
                snapshot: Cow::Owned(view.snapshot.into_owned()),
                ..view
            },
            log_text: Cow::Owned(log_text),
        })
    }
}

/// The save of `game` as text, without copying its log.
pub(crate) fn game_json(game: &HostedGame) -> Result<String, SaveError> {
    game_json_after(game, "")
}

/// The save of `game` whose log follows `earlier` (entries as text, without brackets).
pub(crate) fn game_json_after(game: &HostedGame, earlier: &str) -> Result<String, SaveError> {
    let description = game.ruleset().description();
    let bytes = game
        .game()
        .snapshot(Format::Json)
        .map_err(SaveError::Snapshot)?;
    let snapshot: &RawValue = serde_json::from_slice(&bytes).map_err(|e| {
        SaveError::Snapshot(SetupError::Snapshot(format!(
            "the ruleset wrote invalid JSON: {e}"
        )))
    })?;
    let setup = game.setup();
    let config = check_config(&setup.config).map_err(SaveError::Config)?;
    Ok(write_json(&Parts {
        ruleset: &RulesetRef {
            id: description.id.clone(),
            version: description.version.clone(),
        },
        players: setup.players,
        seed: setup.seed,
        config: &config,
        log: (earlier, game.log()),
        snapshot,
        state_hash: game.state_hash(),
    }))
}

//! Writing saves: locked updates that lose nothing, refused changes that write nothing, symlinks, hard
//! links, permissions, devices, size limits, stale temporaries, and updates that read through the same
//! checks as load.

use crate::fixture::registry;
use crate::save::saved_game;
use coffer_host::save::{self, Limits, SaveError, SaveFile};
use coffer_host::{HostError, HostedGame, Registry};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// Limits for tests: the default size limit, a short lock wait.
fn limits(max_file_bytes: u64, lock_wait_ms: u64) -> Limits {
    Limits::new(max_file_bytes, Duration::from_millis(lock_wait_ms)).unwrap()
}

/// Passes for the player whose turn it is (tally never ends on passes), as `coffer act` would.
fn pass_in_turn(game: &mut HostedGame) -> Result<u16, HostError> {
    let p = (0..game.setup().players)
        .find(|p| game.legal_count(*p) > 0)
        .expect("someone's turn");
    game.apply_json(p, r#"{"type":"pass"}"#)?;
    Ok(p)
}

#[test]
fn two_writers_racing_on_one_save_lose_no_action() {
    // The finding: two `coffer act` on one save both exited 0 and one action was gone (read, read, write,
    // write). Each update now holds the save's lock from its read to its rename.
    let (_dir, path, game) = saved_game();
    let before = game.log().len();
    let registry = registry();
    let rounds = 200;
    let wait = limits(Limits::DEFAULT_MAX_FILE_BYTES, 60_000);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| {
                for _ in 0..rounds {
                    save::update_with(&path, &registry, &wait, pass_in_turn)
                        .expect("the save reads and writes")
                        .expect("a pass is always legal for the player in turn");
                }
            });
        }
    });
    let after = save::load_verified(&path, &registry).unwrap();
    assert_eq!(
        after.log().len(),
        before + 2 * rounds,
        "every one of the {} updates is in the log",
        2 * rounds
    );
}

#[test]
fn a_refused_change_under_the_lock_writes_nothing() {
    let (_dir, path, _) = saved_game();
    let bytes = std::fs::read(&path).unwrap();
    let result = save::update(&path, &registry(), |g| {
        g.apply_json(0, r#"{"type":"earn","n":9}"#).map(|_| ())
    })
    .unwrap();
    assert!(matches!(result, Err(HostError::Action { .. })));
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
}

#[test]
fn a_held_lock_makes_a_writer_wait_then_give_up_with_a_message() {
    let (_dir, path, _) = saved_game();
    let bytes = std::fs::read(&path).unwrap();
    let holder = std::fs::File::open(&path).unwrap();
    rustix::fs::flock(&holder, rustix::fs::FlockOperation::LockExclusive).unwrap();
    let err = save::update_with(&path, &registry(), &limits(1 << 20, 100), pass_in_turn)
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(err, SaveError::Locked { waited_ms, .. } if waited_ms >= 100),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.starts_with(&format!(
            "save file {} is locked by another coffer command",
            path.display()
        )) && text.contains("set COFFER_LOCK_WAIT_MS to wait longer"),
        "{text}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    // Released, the same update goes through.
    drop(holder);
    save::update_with(&path, &registry(), &limits(1 << 20, 100), pass_in_turn)
        .unwrap()
        .unwrap();
}

#[test]
fn a_file_written_without_the_lock_during_an_update_is_not_overwritten() {
    // A program that ignores the lock rewrites the save while an update holds it: the update notices
    // (same inode, new size or time, or a new inode) and writes nothing.
    let (_dir, path, _) = saved_game();
    let err = save::update(&path, &registry(), |g| {
        let p = pass_in_turn(g)?;
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push('\n');
        std::fs::write(&path, &text).unwrap();
        Ok::<u16, HostError>(p)
    })
    .map(|_| ())
    .unwrap_err();
    assert!(matches!(err, SaveError::Changed { .. }), "{err}");
    assert!(err.to_string().contains("nothing was written"), "{err}");
}

#[test]
fn an_update_through_a_symlink_rewrites_the_target_and_keeps_the_link() {
    let (dir, path, _) = saved_game();
    let elsewhere = tempfile::tempdir().unwrap();
    let link = elsewhere.path().join("link.json");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    let (game, _) = save::update(&link, &registry(), pass_in_turn)
        .unwrap()
        .unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link is still a link"
    );
    assert_eq!(
        save::load(&path, &registry()).unwrap().state_hash(),
        game.state_hash(),
        "the target holds the new game"
    );
    // The temporary file was made beside the target, and nothing is left anywhere.
    assert_eq!(names(dir.path()), ["game.json"]);
    assert_eq!(names(elsewhere.path()), ["link.json"]);
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn an_update_keeps_the_save_permissions_and_refuses_a_read_only_save() {
    let (_dir, path, _) = saved_game();
    set_mode(&path, 0o640);
    save::update(&path, &registry(), pass_in_turn)
        .unwrap()
        .unwrap();
    assert_eq!(mode(&path), 0o640);
    set_mode(&path, 0o444);
    let bytes = std::fs::read(&path).unwrap();
    let err = save::update(&path, &registry(), pass_in_turn)
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(err, SaveError::ReadOnly { mode: 0o444, .. }),
        "{err}"
    );
    assert!(
        err.to_string().contains("is read-only (mode 0444)"),
        "{err}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(mode(&path), 0o444);
    // Saving a game over it is refused the same way.
    let game = save::load(&path, &registry()).unwrap();
    assert!(matches!(
        save::save(&game, &path).unwrap_err(),
        SaveError::ReadOnly { .. }
    ));
}

#[test]
fn an_update_refuses_a_save_with_several_hard_links() {
    let (dir, path, _) = saved_game();
    let other = dir.path().join("other-name.json");
    std::fs::hard_link(&path, &other).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    let err = save::update(&path, &registry(), pass_in_turn)
        .map(|_| ())
        .unwrap_err();
    assert!(
        matches!(err, SaveError::HardLinked { links: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("has 2 hard links"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    assert_eq!(std::fs::read(&other).unwrap(), bytes);
}

#[test]
fn a_fifo_a_directory_and_a_device_are_refused_without_reading() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    rustix::fs::mkfifoat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
    )
    .unwrap();
    // Before the fix, opening a FIFO with no writer hung for ever: read it on a thread so that a hang is a
    // failure of this test, not of the whole run.
    let (tx, rx) = std::sync::mpsc::channel();
    let reading = fifo.clone();
    std::thread::spawn(move || {
        let _ = tx.send(save::load(&reading, &registry()).map(|_| ()));
    });
    let err = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("reading a FIFO save returns instead of hanging")
        .unwrap_err();
    assert!(
        matches!(
            err,
            SaveError::NotRegular {
                kind: "a FIFO (named pipe)",
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read save file {}: it is a FIFO (named pipe), not a regular file",
            fifo.display()
        )
    );
    let err = save::load(dir.path(), &registry()).unwrap_err();
    assert!(
        matches!(
            err,
            SaveError::NotRegular {
                kind: "a directory",
                ..
            }
        ),
        "{err}"
    );
    // `simulate --check-script /dev/zero` grew without bound.
    let err = save::read_capped(Path::new("/dev/zero")).unwrap_err();
    assert!(
        matches!(
            err,
            SaveError::NotRegular {
                kind: "a character device",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_file_over_the_size_limit_is_refused_before_it_is_read() {
    // A sparse file just over the default limit: it would be read whole (and a 3 GiB one took 3 GiB).
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.json");
    let file = std::fs::File::create(&big).unwrap();
    file.set_len(Limits::DEFAULT_MAX_FILE_BYTES + 1).unwrap();
    let err = save::load(&big, &registry()).unwrap_err();
    assert!(
        matches!(err, SaveError::TooLarge { size, limit, .. }
            if size == Limits::DEFAULT_MAX_FILE_BYTES + 1 && limit == Limits::DEFAULT_MAX_FILE_BYTES),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!(
            "cannot read save file {}: it is 67108865 bytes, more than the limit of 67108864 bytes (set COFFER_MAX_FILE_BYTES to raise it)",
            big.display()
        )
    );
    file.set_len(3 << 30).unwrap();
    assert!(matches!(
        save::read_capped(&big).unwrap_err(),
        SaveError::TooLarge { .. }
    ));
    // A limit given in code applies the same way, to a valid save too.
    let (_dir, path, _) = saved_game();
    let len = std::fs::metadata(&path).unwrap().len();
    assert!(save::load_with(&path, &registry(), &limits(len, 0)).is_ok());
    assert!(matches!(
        save::load_with(&path, &registry(), &limits(len - 1, 0)).unwrap_err(),
        SaveError::TooLarge { .. }
    ));
    assert!(matches!(
        save::read_capped_with(&path, &limits(len - 1, 0)).unwrap_err(),
        SaveError::TooLarge { .. }
    ));
}

#[test]
fn limits_out_of_range_are_refused_with_the_range() {
    let err = Limits::new(0, Duration::ZERO).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the file size limit is 0: expected a number of bytes from 1 to 1099511627776"
    );
    assert!(Limits::new(1, Duration::from_secs(7200)).is_err());
    assert_eq!(Limits::default().max_file_bytes(), 64 << 20);
    assert_eq!(Limits::default().lock_wait(), Duration::from_secs(10));
}

#[test]
fn stale_temporary_files_of_dead_writers_are_swept_by_the_next_write() {
    let (dir, path, game) = saved_game();
    // A pid that is gone: a child that has exited and been reaped.
    let mut child = std::process::Command::new("true").spawn().unwrap();
    let dead = child.id();
    child.wait().unwrap();
    let old = std::time::SystemTime::now() - Duration::from_secs(3 * 3600);
    let make = |name: &str, modified: std::time::SystemTime| {
        let f = std::fs::File::create(dir.path().join(name)).unwrap();
        f.set_modified(modified).unwrap();
    };
    make(&format!(".coffer-save-{dead}-aB3xYz.tmp"), old);
    make(".coffer-save-Qw3rTy.tmp", old); // written by an older coffer, without a pid
    make(
        &format!(".coffer-save-{dead}-fresh1.tmp"),
        std::time::SystemTime::now(),
    ); // too recent to be sure
    make(
        &format!(".coffer-save-{}-mine12.tmp", std::process::id()),
        old,
    ); // a live writer's
    make(".coffer-save-notes.txt", old); // not a temporary file
    save::save(&game, &path).unwrap();
    let mut kept = vec![
        format!(".coffer-save-{dead}-fresh1.tmp"),
        format!(".coffer-save-{}-mine12.tmp", std::process::id()),
        ".coffer-save-notes.txt".to_owned(),
        "game.json".to_owned(),
    ];
    kept.sort();
    assert_eq!(names(dir.path()), kept);
}

#[test]
fn a_new_save_never_replaces_an_existing_file_without_force() {
    let (dir, path, game) = saved_game();
    let bytes = std::fs::read(&path).unwrap();
    let err = save::check_new(&path, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "save file {} already exists; pass --force to replace it",
            path.display()
        )
    );
    assert!(save::check_new(&path, true).is_ok());
    assert!(matches!(
        save::create(&game, &path, false).unwrap_err(),
        SaveError::Exists { .. }
    ));
    assert_eq!(std::fs::read(&path).unwrap(), bytes);
    save::create(&game, &path, true).unwrap();
    let new = dir.path().join("new.json");
    save::check_new(&new, false).unwrap();
    save::create(&game, &new, false).unwrap();
    assert_eq!(std::fs::read(&new).unwrap(), bytes);
    assert_eq!(names(dir.path()), ["game.json", "new.json"]);
}

/// Whether [`save::update`] accepts the save at `path` (without writing: the change is refused).
fn update_accepts(path: &Path, registry: &Registry) -> Result<(), SaveError> {
    save::update(path, registry, |_| Err::<(), ()>(())).map(|_| ())
}

#[test]
fn an_update_reads_a_save_through_the_same_checks_as_load() {
    // `act` reads the log as text (it is not replayed nor kept in memory): it must still refuse exactly
    // what `show` refuses, with the same message.
    let (_dir, path, _) = saved_game();
    let full = std::fs::read(&path).unwrap();
    let registry = registry();
    let mut tried = 0;
    for i in 0..full.len() {
        let changed = match full[i] {
            b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => full[i] + 1,
            b'9' => b'0',
            b'"' => b'\'',
            b'{' | b'[' | b',' | b':' => b' ',
            _ => continue,
        };
        let mut damaged = full.clone();
        damaged[i] = changed;
        std::fs::write(&path, &damaged).unwrap();
        let loaded = save::load(&path, &registry).map(|_| ());
        let updated = update_accepts(&path, &registry);
        assert_eq!(
            loaded.as_ref().map_err(ToString::to_string),
            updated.as_ref().map_err(ToString::to_string),
            "byte {i} changed to '{}'",
            changed as char
        );
        assert_eq!(std::fs::read(&path).unwrap(), damaged, "nothing written");
        tried += 1;
    }
    assert!(tried > 800, "only {tried} edits tried");
    // A hash written with an escape is still a hash: both read it.
    std::fs::write(&path, &full).unwrap();
    let text = String::from_utf8(full).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let last = v["log"][3]["hash"].as_str().unwrap();
    let escaped = format!("\\u00{:x}{}", last.as_bytes()[0], &last[1..]);
    std::fs::write(&path, text.replacen(last, &escaped, 1)).unwrap();
    save::load(&path, &registry).unwrap();
    update_accepts(&path, &registry).unwrap();
    let (game, _) = save::update(&path, &registry, pass_in_turn)
        .unwrap()
        .unwrap();
    let verified = save::load_verified(&path, &registry).unwrap();
    assert_eq!(verified.state_hash(), game.state_hash());
    assert_eq!(verified.log().len(), 5);
}

#[test]
fn an_update_appends_to_the_log_without_reading_it_into_the_game() {
    let (_dir, path, before) = saved_game();
    let (game, player) = save::update(&path, &registry(), pass_in_turn)
        .unwrap()
        .unwrap();
    assert_eq!(
        game.log().len(),
        1,
        "the game holds this update's action only"
    );
    assert_eq!(game.log()[0].player, player);
    let after = save::load_verified(&path, &registry()).unwrap();
    assert_eq!(&after.log()[..4], before.log());
    assert_eq!(after.log()[4], game.log()[0]);
    // The file is the same as a save of the whole game written at once.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text, SaveFile::from_game(&after).unwrap().to_json());
    assert_eq!(
        text.lines().filter(|l| l.contains("\"hash\":")).count(),
        5,
        "one line per logged action"
    );
}

#[test]
fn an_action_that_load_cannot_read_is_refused_by_update_too() {
    // The update reads log entries without building them; it must not accept what `load` cannot read:
    // a number out of range, nesting deeper than the JSON reader allows.
    let registry = registry();
    let nested = |depth: usize| format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
    for action in [
        "1e400".to_owned(),
        nested(124),
        nested(125),
        nested(126),
        nested(127),
    ] {
        let (_dir, path, _) = saved_game();
        let text = std::fs::read_to_string(&path).unwrap();
        let first = text.find(r#""action":{"type":"earn","n":2}"#).unwrap();
        let damaged = text.replacen(
            r#""action":{"type":"earn","n":2}"#,
            &format!(r#""action":{action}"#),
            1,
        );
        assert!(first > 0);
        std::fs::write(&path, &damaged).unwrap();
        let accepted = save::fuzzing::read_every_way(&damaged, &registry);
        assert_eq!(
            accepted,
            save::load(&path, &registry).is_ok(),
            "{}",
            cut(&action)
        );
        assert_eq!(
            update_accepts(&path, &registry).map_err(|e| e.to_string()),
            save::load(&path, &registry)
                .map(|_| ())
                .map_err(|e| e.to_string())
        );
    }
}

fn cut(text: &str) -> &str {
    &text[..text.len().min(40)]
}

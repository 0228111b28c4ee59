//! Save files: round trip, atomic writes, precise refusal of every kind of damage, one set of checks for
//! every reader, locked updates that lose nothing, hostile files, symlinks and permissions.

use crate::fixture::{registry, tally_v};
use coffer_core::Setup;
use coffer_host::save::{self, FORMAT_VERSION, Limits, SaveError, SaveFile};
use coffer_host::{Host, HostError, HostedGame, Origin, Registry};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A tally game with a few actions, saved in a fresh directory.
fn saved_game() -> (tempfile::TempDir, PathBuf, HostedGame) {
    let host = Host::new(registry());
    let id = host
        .start("tally", Setup::new(2, 11).config(json!({"target": 9})))
        .unwrap();
    for (p, a) in [
        (0, r#"{"type":"earn","n":2}"#),
        (0, r#"{"type":"place"}"#),
        (0, r#"{"type":"pass"}"#),
        (1, r#"{"type":"work"}"#),
    ] {
        host.apply_json(id, p, a).unwrap();
    }
    let game = Host::remove(&host, id).unwrap();
    let game = std::sync::Arc::try_unwrap(game)
        .unwrap()
        .into_inner()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("game.json");
    save::save(&game, &path).unwrap();
    (dir, path, game)
}

/// Edits a save file as JSON. The snapshot is kept verbatim (it holds a 128-bit RNG state that a JSON
/// `Value` would round) unless `f` replaces it.
fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
    const PLACEHOLDER: &str = "\"__snapshot__\"";
    let text = std::fs::read_to_string(path).unwrap();
    let raw: std::collections::BTreeMap<String, Box<serde_json::value::RawValue>> =
        serde_json::from_str(&text).unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    v["snapshot"] = json!("__snapshot__");
    f(&mut v);
    let out = serde_json::to_string_pretty(&v)
        .unwrap()
        .replace(PLACEHOLDER, raw["snapshot"].get());
    std::fs::write(path, out).unwrap();
}

/// Replaces the first occurrence of `from` in the file, which must be there.
fn replace(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.contains(from), "{from} is not in {text}");
    std::fs::write(path, text.replacen(from, to, 1)).unwrap();
}

#[test]
fn a_saved_game_loads_back_with_the_same_state_log_and_setup() {
    let (_dir, path, game) = saved_game();
    let loaded = save::load(&path, &registry()).unwrap();
    assert_eq!(loaded.state_hash(), game.state_hash());
    assert_eq!(loaded.log(), game.log());
    assert_eq!(loaded.setup(), game.setup());
    assert_eq!(loaded.key(), "tally@0.1.0");
    let text = std::fs::read_to_string(&path).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["format"], json!(FORMAT_VERSION));
    assert_eq!(v["ruleset"], json!({"id": "tally", "version": "0.1.0"}));
    assert_eq!(v["log"][0]["action"], json!({"type": "earn", "n": 2}));
    assert_eq!(v["state_hash"], json!(game.state_hash().to_string()));
    assert!(
        v["snapshot"].is_object(),
        "the snapshot is embedded as JSON"
    );
}

#[test]
fn writing_is_atomic_and_leaves_no_temporary_file() {
    let (dir, path, game) = saved_game();
    let before = std::fs::read(&path).unwrap();
    save::save(&game, &path).unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "saving the same game writes the same bytes"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["game.json"]);
    // A directory that does not exist: an error, no panic.
    let err = save::save(&game, &dir.path().join("missing/game.json")).unwrap_err();
    assert!(
        matches!(
            err,
            SaveError::Io {
                action: "write",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn a_truncated_file_is_refused_at_every_length() {
    let (_dir, path, _) = saved_game();
    let full = std::fs::read(&path).unwrap();
    let registry = registry();
    for len in (0..full.len() - 2).step_by(7) {
        std::fs::write(&path, &full[..len]).unwrap();
        let err =
            save::load(&path, &registry).expect_err(&format!("accepted a file cut at {len} bytes"));
        assert!(
            matches!(
                err,
                SaveError::Json {
                    truncated: true,
                    ..
                }
            ),
            "cut at {len}: {err}"
        );
    }
    std::fs::write(&path, &full[..full.len() / 2]).unwrap();
    let err = save::load(&path, &registry).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("save file is truncated: EOF while parsing"),
        "{err}"
    );
}

#[test]
fn an_edited_state_hash_is_refused_with_both_hashes() {
    let (_dir, path, game) = saved_game();
    edit(&path, |v| v["state_hash"] = json!("0123456789abcdef"));
    let err = save::load(&path, &registry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "save file field 'state_hash': expected {} (the hash of the snapshot), found 0123456789abcdef",
            game.state_hash()
        )
    );
    edit(&path, |v| v["state_hash"] = json!("not hex"));
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::Field { field, .. } if field == "state_hash"),
        "{err}"
    );
    assert!(err.to_string().contains("found 'not hex'"), "{err}");
}

#[test]
fn an_edited_snapshot_is_refused() {
    let (_dir, path, _) = saved_game();
    // Change one coin value deep in the kernel state (player 0's coins, an amount row: owner, kind,
    // subject, value, floor, cap...): the snapshot still restores but no longer matches.
    replace(&path, r#"[0,0,0,2,0,10,"#, r#"[0,0,0,3,0,10,"#);
    let err = save::load(&path, &registry()).unwrap_err();
    assert_mismatch(&err, "state_hash");
    // A snapshot that is not a state of the ruleset at all.
    edit(&path, |v| v["snapshot"] = json!({"ledger": 3}));
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(matches!(err, SaveError::Snapshot(_)), "{err}");
    assert!(
        format!("{:#}", anyhow::Error::new(err))
            .starts_with("save file field 'snapshot' does not restore: invalid snapshot")
    );
}

#[test]
fn a_log_that_does_not_replay_to_the_saved_hash_is_refused() {
    let (_dir, path, _) = saved_game();
    edit(&path, |v| {
        v["log"][0]["action"] = json!({"type": "earn", "n": 3})
    });
    let err = save::load_verified(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::ReplayHash { field, .. } if field == "log[0].hash"),
        "{err}"
    );
    assert!(
        err.to_string()
            .starts_with("replay diverges at log[0].hash: expected state hash"),
        "{err}"
    );

    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["log"][2]["player"] = json!(1));
    let err = save::load_verified(&path, &registry()).unwrap_err();
    assert!(
        matches!(
            err,
            SaveError::ReplayRefused {
                index: 2,
                player: 1,
                ..
            }
        ),
        "{err}"
    );

    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["seed"] = json!(12));
    let err = save::load_verified(&path, &registry()).unwrap_err();
    assert!(
        matches!(err, SaveError::ReplayHash { .. }),
        "an edited seed must not replay: {err}"
    );

    let (_dir, path, _) = saved_game();
    edit(&path, |v| {
        v["log"].as_array_mut().unwrap().pop().unwrap();
    });
    let err = save::load_verified(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::ReplayHash { field, .. } if field == "state_hash"),
        "{err}"
    );
}

#[test]
fn a_save_of_a_ruleset_not_loaded_names_it_and_what_is_loaded() {
    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["ruleset"]["id"] = json!("chess"));
    let err = save::load(&path, &registry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "save file field 'ruleset': ruleset 'chess@0.1.0' is not loaded; loaded: other@0.2.0, tally@0.1.0"
    );
    edit(&path, |v| {
        v["ruleset"] = json!({"id": "tally", "version": "0.9.0"})
    });
    let err = save::load(&path, &registry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "save file field 'ruleset.version': expected 'tally@0.9.0', found only tally@0.1.0"
    );
    // With that version loaded too, the exact version is used: its hashes match the ones saved.
    let mut both = registry();
    both.add(tally_v("0.9.0"), Origin::Static).unwrap();
    let loaded = save::load(&path, &both).unwrap();
    assert_eq!(loaded.key(), "tally@0.9.0");
    // A game of another ruleset whose actions are different: the snapshot does not restore.
    edit(&path, |v| {
        v["ruleset"] = json!({"id": "other", "version": "0.2.0"})
    });
    assert!(
        save::load(&path, &registry()).is_ok(),
        "other@0.2.0 shares tally's state layout"
    );
    assert!(save::load(&path, &Registry::new()).is_err());
}

#[test]
fn a_future_format_version_is_refused_before_anything_else() {
    let (_dir, path, _) = saved_game();
    edit(&path, |v| {
        v["format"] = json!(FORMAT_VERSION + 1);
        v["something_new"] = json!(true);
    });
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(
        matches!(
            err,
            SaveError::FutureFormat {
                found: 2,
                supported: 1
            }
        ),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "save file field 'format': expected format version 1 or older, found 2 (written by a newer coffer)"
    );
    edit(&path, |v| v["format"] = json!("one"));
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::Field { field, .. } if field == "format"),
        "{err}"
    );
}

#[test]
fn missing_unknown_and_mistyped_fields_are_named() {
    let (_dir, path, _) = saved_game();
    edit(&path, |v| {
        v.as_object_mut().unwrap().remove("seed");
    });
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(err.to_string().contains("missing field `seed`"), "{err}");

    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["log"][1]["player"] = json!("zero"));
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::Field { field, .. } if field == "log[1].player"),
        "{err}"
    );
    assert!(err.to_string().contains("expected u16"), "{err}");

    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["players"] = json!(70000));
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::Field { field, .. } if field == "players"),
        "{err}"
    );

    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["players"] = json!(3));
    let err = save::load(&path, &registry()).unwrap_err();
    assert_mismatch(&err, "players");

    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["extra"] = json!(1));
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(err.to_string().contains("unknown field `extra`"), "{err}");

    std::fs::write(&path, "[]").unwrap();
    let err = save::load(&path, &registry()).unwrap_err();
    assert!(
        matches!(&err, SaveError::Field { field, .. } if field == "format"),
        "{err}"
    );
}

#[test]
fn from_game_and_parse_round_trip() {
    let (_dir, _path, game) = saved_game();
    let file = SaveFile::from_game(&game).unwrap();
    assert_eq!(
        SaveFile::parse(&file.to_json()).unwrap().to_json(),
        file.to_json()
    );
    assert_eq!(
        file.replay(&registry()).unwrap().state_hash(),
        game.state_hash()
    );
}

#[test]
fn every_single_character_edit_is_refused_without_panic() {
    let (_dir, path, _) = saved_game();
    let full = std::fs::read(&path).unwrap();
    let registry = registry();
    let mut edits = 0;
    for i in 0..full.len() {
        let b = full[i];
        let changed = match b {
            b'0'..=b'8' | b'a'..=b'y' | b'A'..=b'Y' => b + 1,
            b'9' => b'0',
            b'z' => b'a',
            b'Z' => b'A',
            _ => continue,
        };
        let mut damaged = full.clone();
        damaged[i] = changed;
        std::fs::write(&path, &damaged).unwrap();
        if let Ok(game) = save::load_verified(&path, &registry) {
            panic!(
                "accepted a save with byte {i} changed to '{}' (hash {})",
                changed as char,
                game.state_hash()
            );
        }
        edits += 1;
    }
    assert!(edits > 600, "only {edits} edits tried");
}

#[test]
fn games_of_the_bundled_rulesets_save_and_load_back() {
    use coffer_core::GameRng;
    let registry = Registry::with_static().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for entry in registry.iter() {
        let d = entry.ruleset.description();
        let players = d.min_players.max(2);
        let mut game = HostedGame::start(entry.ruleset.clone(), Setup::new(players, 3)).unwrap();
        let mut rng = GameRng::new(3);
        for _ in 0..60 {
            let Some(p) = (0..players).find(|p| game.legal_count(*p) > 0) else {
                break;
            };
            let count = game.legal_count(p) as u64;
            game.apply_legal(p, rng.below(count) as usize).unwrap();
        }
        assert!(!game.log().is_empty(), "{}", d.key());
        let path = dir.path().join(format!("{}.json", d.id));
        save::save(&game, &path).unwrap();
        let loaded = save::load(&path, &registry).unwrap();
        assert_eq!(loaded.state_hash(), game.state_hash(), "{}", d.key());
        assert_eq!(loaded.log(), game.log(), "{}", d.key());
    }
}

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
fn replay_refuses_every_save_that_load_refuses() {
    // The finding: `coffer replay` (SaveFile::replay) said ok for saves that show and act refused, because
    // it never looked at the snapshot.
    let (_dir, path, _) = saved_game();
    replace(&path, r#"[0,0,0,2,0,10,"#, r#"[0,0,0,3,0,10,"#);
    let registry = registry();
    assert!(save::load(&path, &registry).is_err());
    let err = SaveFile::read(&path)
        .unwrap()
        .replay(&registry)
        .unwrap_err();
    assert_mismatch(&err, "state_hash");
    // Every single-character edit: whatever load refuses, replay refuses.
    let (_dir, path, _) = saved_game();
    let full = std::fs::read(&path).unwrap();
    let mut refused = 0;
    for i in 0..full.len() {
        let changed = match full[i] {
            b'0'..=b'8' => full[i] + 1,
            b'9' => b'0',
            b'a'..=b'e' => full[i] + 1,
            _ => continue,
        };
        let mut damaged = full.clone();
        damaged[i] = changed;
        std::fs::write(&path, &damaged).unwrap();
        if save::load(&path, &registry).is_err() {
            refused += 1;
            let replayed = SaveFile::read(&path).and_then(|f| f.replay(&registry));
            assert!(
                replayed.is_err(),
                "load refuses byte {i} changed to '{}' but replay accepts it",
                changed as char
            );
        }
    }
    assert!(refused > 300, "only {refused} edits refused by load");
}

#[test]
fn load_trusts_the_snapshot_after_checking_its_hash_and_the_last_entry_without_replaying() {
    // The finding: every `act` replayed the whole log (quadratic games). `load` now checks the snapshot,
    // its hash and the last log entry's hash; the replay is `load_verified`'s.
    let (_dir, path, game) = saved_game();
    edit(&path, |v| {
        v["log"][0]["action"] = json!({"type": "earn", "n": 3})
    });
    let loaded = save::load(&path, &registry()).expect("load does not replay the log");
    assert_eq!(loaded.state_hash(), game.state_hash());
    assert!(matches!(
        save::load_verified(&path, &registry()).unwrap_err(),
        SaveError::ReplayHash { .. }
    ));

    // The last entry must lead to the snapshot.
    let (_dir, path, game) = saved_game();
    edit(&path, |v| v["log"][3]["hash"] = json!("0123456789abcdef"));
    let err = save::load(&path, &registry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "replay diverges at log[3].hash: expected state hash 0123456789abcdef (saved), found {} (the snapshot's)",
            game.state_hash()
        )
    );

    // With no action yet, the snapshot must be the new game of players, seed and config.
    let host = Host::new(registry());
    let id = host.start("tally", Setup::new(2, 11)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.json");
    host.save(id, &fresh).unwrap();
    save::load(&fresh, &registry()).unwrap();
    edit(&fresh, |v| v["seed"] = json!(12));
    let err = save::load(&fresh, &registry()).unwrap_err();
    assert_mismatch(&err, "state_hash");

    // A logged player who is not in the game.
    let (_dir, path, _) = saved_game();
    edit(&path, |v| v["log"][0]["player"] = json!(5));
    let err = save::load(&path, &registry()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "save file field 'log[0].player': expected a player from 0 to 1, found 5"
    );
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
            crate::save::cut(&action)
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

/// Asserts that `err` is a [`SaveError::Mismatch`] of `field`, showing the error otherwise.
fn assert_mismatch(err: &SaveError, field: &str) {
    assert!(
        matches!(err, SaveError::Mismatch { field: f, .. } if *f == field),
        "{err}"
    );
}

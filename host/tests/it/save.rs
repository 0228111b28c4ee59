//! Reading save files: round trip, atomic writes, precise refusal of every kind of damage, and one set of
//! checks for every reader (writing is `save_writes`).

use crate::fixture::{registry, tally_v};
use coffer_core::Setup;
use coffer_host::save::{self, FORMAT_VERSION, SaveError, SaveFile};
use coffer_host::{Host, HostedGame, Origin, Registry};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A tally game with a few actions, saved in a fresh directory.
pub(crate) fn saved_game() -> (tempfile::TempDir, PathBuf, HostedGame) {
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
pub(crate) fn edit(path: &Path, f: impl FnOnce(&mut Value)) {
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

/// Asserts that `err` is a [`SaveError::Mismatch`] of `field`, showing the error otherwise.
fn assert_mismatch(err: &SaveError, field: &str) {
    assert!(
        matches!(err, SaveError::Mismatch { field: f, .. } if *f == field),
        "{err}"
    );
}

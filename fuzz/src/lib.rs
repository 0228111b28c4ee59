//! The fuzz targets' bodies, shared by the libFuzzer binaries (`fuzz_targets/`, `cargo +nightly fuzz run`)
//! and by a stable harness (this crate's tests, `cargo test`) that runs the same functions over valid
//! inputs, seeded mutations of them and seeded random bytes.
//!
//! - [`save_file`]: any bytes as a save file. A save is read the ways the commands read it (`load`, the
//!   locked `update`, `replay`); nothing may panic, `load` and `update` must agree, and `replay` must
//!   refuse whatever `load` refuses.
//! - [`actions`]: any bytes as a game of a bundled ruleset (chosen by the first byte) and a list of
//!   actions as JSON, one per line (each line's first byte is the acting player). Nothing may panic, a
//!   refused action must leave the state hash unchanged, invariants must hold, and the final state must
//!   survive a JSON snapshot and restore with its hash.

use coffer_core::{DynRuleset, Format, Owner, Setup};
use coffer_host::Registry;
use std::sync::{Arc, OnceLock};

use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

/// The bundled rulesets, statically linked.
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry::with_static().expect("no duplicate bundled ruleset"))
}

/// The bundled rulesets in a fixed order (by key).
fn rulesets() -> &'static [Arc<dyn DynRuleset>] {
    static LIST: OnceLock<Vec<Arc<dyn DynRuleset>>> = OnceLock::new();
    LIST.get_or_init(|| {
        let mut list: Vec<_> = registry().iter().map(|e| Arc::clone(&e.ruleset)).collect();
        list.sort_by_key(|r| r.description().key());
        list
    })
}

/// Fuzz target: `data` as a save file.
///
/// # Panics
/// On a finding: see the [crate docs](crate).
pub fn save_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    coffer_host::save::fuzzing::read_every_way(text, registry());
}

/// Fuzz target: `data` as a game and its actions.
///
/// # Panics
/// On a finding: see the [crate docs](crate).
pub fn actions(data: &[u8]) {
    let [which, players, seed, rest @ ..] = data else {
        return;
    };
    let list = rulesets();
    let ruleset = &list[usize::from(*which) % list.len()];
    let d = ruleset.description();
    let span = u16::from(*players) % (d.max_players - d.min_players + 1);
    let setup = Setup::new(d.min_players + span, u64::from(*seed));
    let Ok(mut game) = ruleset.new_game(&setup) else {
        return;
    };
    for line in rest.split(|b| *b == b'\n') {
        let [player, json @ ..] = line else { continue };
        let Ok(json) = std::str::from_utf8(json) else {
            continue;
        };
        let before = game.state_hash();
        let player = Owner(u16::from(*player) % (setup.players + 1));
        if game.apply_json(player, json).is_err() {
            assert_eq!(
                game.state_hash(),
                before,
                "{}: a refused action changed the state",
                d.key()
            );
        }
        if let Err(v) = game.check_invariants() {
            panic!("{}: invariant broken after {json}: {v}", d.key());
        }
    }
    let bytes = game.snapshot(Format::Json).expect("a JSON snapshot");
    let restored = ruleset
        .restore(Format::Json, &bytes)
        .expect("a snapshot restores");
    assert_eq!(restored.state_hash(), game.state_hash(), "{}", d.key());
}

#[cfg(test)]
mod tests {
    //! The stable harness: the targets over valid inputs, their seeded mutations, and random bytes.

    use super::*;
    use coffer_host::HostedGame;

    /// SplitMix64: a seeded source of bytes and choices.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Bytes JSON is made of, and some that break it.
    const TOKENS: &[&[u8]] = &[
        b"{",
        b"}",
        b"[",
        b"]",
        b",",
        b":",
        b"\"",
        b"\\",
        b"0",
        b"-1",
        b"1e400",
        b"18446744073709551616",
        b"null",
        b"true",
        b"\"type\"",
        b"\"hash\"",
        b"\"player\"",
        b"\"log\"",
        b"\xff",
        b"\\u0000",
        b"\\ud800",
        b" ",
        b"\n",
    ];

    /// `input` changed in one to four places: a byte flipped, a JSON token inserted or substituted, a
    /// span removed or duplicated.
    fn mutate(input: &[u8], rng: &mut Rng) -> Vec<u8> {
        let mut out = input.to_vec();
        for _ in 0..=rng.below(4) {
            let at = rng.below(out.len() + 1);
            match rng.below(5) {
                0 if at < out.len() => out[at] ^= 1 << rng.below(8),
                1 => {
                    let token = TOKENS[rng.below(TOKENS.len())];
                    out.splice(at..at, token.iter().copied());
                }
                2 if at < out.len() => {
                    let token = TOKENS[rng.below(TOKENS.len())];
                    let end = (at + 1 + rng.below(8)).min(out.len());
                    out.splice(at..end, token.iter().copied());
                }
                3 => {
                    let end = (at + rng.below(64)).min(out.len());
                    out.drain(at..end);
                }
                _ => {
                    let end = (at + rng.below(64)).min(out.len());
                    let span = out[at..end].to_vec();
                    out.splice(at..at, span);
                }
            }
        }
        out
    }

    /// A game of each bundled ruleset after some random legal actions, as a save file's text.
    fn saves() -> Vec<Vec<u8>> {
        let dir = std::env::temp_dir().join(format!("coffer-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut rng = Rng(7);
        let mut out = Vec::new();
        for ruleset in rulesets() {
            let d = ruleset.description();
            for actions in [0, 3, 25] {
                let players = d.min_players.max(2).min(d.max_players);
                let mut game =
                    HostedGame::start(Arc::clone(ruleset), Setup::new(players, 3)).unwrap();
                for _ in 0..actions {
                    let Some(p) = (0..players).find(|p| game.legal_count(*p) > 0) else {
                        break;
                    };
                    let n = game.legal_count(p);
                    game.apply_legal(p, rng.below(n)).unwrap();
                }
                let path = dir.join("save.json");
                coffer_host::save::save(&game, &path).unwrap();
                out.push(std::fs::read(&path).unwrap());
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
        out
    }

    #[test]
    fn the_save_file_target_accepts_valid_saves_and_survives_their_mutations() {
        let saves = saves();
        for save in &saves {
            assert!(
                coffer_host::save::fuzzing::read_every_way(
                    std::str::from_utf8(save).unwrap(),
                    registry()
                ),
                "a valid save is refused"
            );
        }
        let mut rng = Rng(12);
        for _ in 0..3_000 {
            let save = &saves[rng.below(saves.len())];
            save_file(&mutate(save, &mut rng));
        }
        for _ in 0..500 {
            let bytes: Vec<u8> = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
            save_file(&bytes);
        }
    }

    #[test]
    fn the_actions_target_survives_legal_actions_their_mutations_and_noise() {
        let mut rng = Rng(5);
        for (which, ruleset) in rulesets().iter().enumerate() {
            // The legal actions of a few positions, as the target's lines.
            let d = ruleset.description();
            let players = d.min_players.max(2).min(d.max_players);
            let mut game = ruleset.new_game(&Setup::new(players, 9)).unwrap();
            let mut lines: Vec<Vec<u8>> = Vec::new();
            for _ in 0..30 {
                let Some(p) = (0..players).find(|p| game.legal_actions(Owner(*p)) > 0) else {
                    break;
                };
                let n = game.legal_actions(Owner(p));
                let i = rng.below(n);
                let json = game.legal_action_json(i).unwrap();
                let mut line = vec![p as u8];
                line.extend_from_slice(json.as_bytes());
                lines.push(line);
                game.apply_legal(Owner(p), i).unwrap();
            }
            let header = [which as u8, (players - d.min_players) as u8, 9];
            let script = |lines: &[Vec<u8>]| {
                let mut data = header.to_vec();
                data.extend(lines.join(&b'\n'));
                data
            };
            actions(&script(&lines));
            for _ in 0..300 {
                let mut changed = lines.clone();
                let k = rng.below(changed.len());
                changed[k] = mutate(&changed[k], &mut rng);
                actions(&script(&changed));
            }
            for _ in 0..100 {
                let mut data = header.to_vec();
                data.extend((0..rng.below(200)).map(|_| rng.next() as u8));
                actions(&data);
            }
        }
    }
}

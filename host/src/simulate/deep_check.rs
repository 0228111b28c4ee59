//! The expensive checks of a checked game: a replica rebuilt from the snapshot and the log must agree
//! with the game.

use crate::simulate::report::{Step, ViolationKind, setup_failed};
use coffer_core::{DynGame, DynRuleset, Format, Owner, Setup};

/// A game started fresh from the same setup, fed the log as JSON: its hash must match the game's.
pub(crate) struct Replica {
    pub(crate) game: Box<dyn DynGame>,
    pub(crate) fed: usize,
}

impl Replica {
    pub(crate) fn new(ruleset: &dyn DynRuleset, setup: &Setup) -> Result<Replica, ViolationKind> {
        let game = ruleset
            .new_game(setup)
            .map_err(|e| setup_failed(setup, e))?;
        Ok(Replica { game, fed: 0 })
    }

    /// Applies the log's entries it has not seen yet.
    pub(crate) fn catch_up(&mut self, log: &[Step]) -> Result<(), ViolationKind> {
        for step in &log[self.fed..] {
            let (player, text) = (Owner(step.player), &step.text);
            self.game
                .apply_json(player, text)
                .map_err(|e| ViolationKind::Replay(format!("{player} {text} was refused: {e}")))?;
        }
        self.fed = log.len();
        Ok(())
    }
}

/// Clone, JSON and binary snapshots, and replay of the log all give the game's hash.
pub(crate) fn deep_check(
    ruleset: &dyn DynRuleset,
    game: &mut dyn DynGame,
    replica: &mut Replica,
    log: &[Step],
) -> Result<(), ViolationKind> {
    let listed = game.to_act().to_vec();
    for player in (0..game.players()).map(Owner) {
        let count = game.legal_actions(player);
        if count > 0 && !listed.contains(&player) {
            return Err(ViolationKind::ToActIncomplete {
                player,
                count,
                listed,
            });
        }
    }
    let original = game.state_hash();
    let clone = game.clone_game().state_hash();
    if clone != original {
        return Err(ViolationKind::CloneDiffers { original, clone });
    }
    for format in [Format::Json, Format::Binary] {
        let problem = |p: String| ViolationKind::Snapshot { format, problem: p };
        let bytes = game
            .snapshot(format)
            .map_err(|e| problem(format!("writing: {e}")))?;
        let restored = ruleset
            .restore(format, &bytes)
            .map_err(|e| problem(format!("restoring: {e}")))?;
        let hash = restored.state_hash();
        if hash != original {
            return Err(problem(format!(
                "restored hash {hash}, the game {original}"
            )));
        }
    }
    replica.catch_up(log)?;
    let replayed = replica.game.state_hash();
    if replayed != original {
        return Err(ViolationKind::Replay(format!(
            "after {} log entries the replica has hash {replayed}, the game {original}",
            log.len()
        )));
    }
    Ok(())
}

//! `MemoryStore`: the reference behaviour of a [`Store`], kept in memory under one lock.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use crate::store::{
    Action, GameId, GameRecord, NewGame, Passage, Recovery, Snapshot, Store, StoreError, TokenHash,
};

/// A [`Store`] in memory: for tests, and the reference the SQLite store is tested against.
///
/// # Durability
/// None: everything is lost with the process. Calls return once the change is visible to every
/// other call.
#[derive(Debug, Default)]
pub struct MemoryStore {
    games: Mutex<BTreeMap<GameId, Entry>>,
}

#[derive(Debug)]
struct Entry {
    record: GameRecord,
    /// When it finished, in ms since the Unix epoch.
    finished_unix_ms: Option<u64>,
    seats: Vec<Option<TokenHash>>,
    actions: Vec<Action>,
    snapshots: BTreeMap<u64, Snapshot>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, BTreeMap<GameId, Entry>> {
        // A panic while holding the lock leaves no half-made change: every method checks first and
        // changes last, so the map is usable.
        self.games
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

fn entry(games: &mut BTreeMap<GameId, Entry>, game: GameId) -> Result<&mut Entry, StoreError> {
    games.get_mut(&game).ok_or(StoreError::NoSuchGame(game))
}

impl Store for MemoryStore {
    fn create_game(&self, game: NewGame) -> Result<(), StoreError> {
        if game.seats.len() != game.setup.players as usize {
            return Err(StoreError::SeatCount {
                game: game.id,
                players: game.setup.players,
                seats: game.seats.len(),
            });
        }
        let mut games = self.lock();
        if games.contains_key(&game.id) {
            return Err(StoreError::GameExists(game.id));
        }
        let record = GameRecord {
            id: game.id,
            ruleset: game.ruleset,
            setup: game.setup,
            created_unix_ms: game.created_unix_ms,
            finished: false,
            seq: 0,
        };
        let entry = Entry {
            record,
            finished_unix_ms: None,
            seats: game.seats,
            actions: Vec::new(),
            snapshots: BTreeMap::new(),
        };
        games.insert(game.id, entry);
        Ok(())
    }

    fn claim_seat(&self, game: GameId, seat: u32, token: TokenHash) -> Result<(), StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        let seats = entry.record.setup.players;
        let slot = entry
            .seats
            .get_mut(seat as usize)
            .ok_or(StoreError::NoSuchSeat { game, seat, seats })?;
        if slot.is_some() {
            return Err(StoreError::SeatTaken { game, seat });
        }
        *slot = Some(token);
        Ok(())
    }

    fn seats(&self, game: GameId) -> Result<Vec<Option<TokenHash>>, StoreError> {
        Ok(entry(&mut self.lock(), game)?.seats.clone())
    }

    fn append(&self, game: GameId, action: Action) -> Result<(), StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        if entry.record.finished {
            return Err(StoreError::GameFinished(game));
        }
        let current = entry.record.seq;
        if action.seq != current + 1 {
            return Err(StoreError::SequenceConflict {
                game,
                given: action.seq,
                current,
            });
        }
        let seats = entry.record.setup.players;
        if action.seat >= seats {
            return Err(StoreError::NoSuchSeat {
                game,
                seat: action.seat,
                seats,
            });
        }
        if let Some(key) = &action.key
            && let Some(first) = entry
                .actions
                .iter()
                .find(|a| a.seat == action.seat && a.key.as_ref() == Some(key))
        {
            return Err(StoreError::Duplicate {
                game,
                seat: action.seat,
                seq: first.seq,
            });
        }
        entry.record.seq = action.seq;
        entry.actions.push(action);
        Ok(())
    }

    fn keyed_action(&self, game: GameId, seat: u32, key: &str) -> Result<Option<u64>, StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        Ok(entry
            .actions
            .iter()
            .find(|a| a.seat == seat && a.key.as_deref() == Some(key))
            .map(|a| a.seq))
    }

    fn put_snapshot(&self, game: GameId, snapshot: Snapshot) -> Result<(), StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        let current = entry.record.seq;
        if snapshot.seq > current {
            return Err(StoreError::SnapshotAhead {
                game,
                seq: snapshot.seq,
                current,
            });
        }
        entry.snapshots.insert(snapshot.seq, snapshot);
        Ok(())
    }

    fn set_bots(
        &self,
        game: GameId,
        bots: std::collections::BTreeMap<u32, String>,
    ) -> Result<(), StoreError> {
        entry(&mut self.lock(), game)?.record.setup.bots = bots;
        Ok(())
    }

    fn finish(&self, game: GameId) -> Result<(), StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        if !entry.record.finished {
            entry.record.finished = true;
            entry.finished_unix_ms = Some(crate::store::now_unix_ms());
        }
        Ok(())
    }

    fn finished_before(
        &self,
        before_unix_ms: u64,
        limit: usize,
    ) -> Result<Vec<GameId>, StoreError> {
        let games = self.lock();
        let mut finished: Vec<(u64, GameId)> = games
            .values()
            .filter_map(|entry| {
                entry
                    .finished_unix_ms
                    .filter(|&at| at < before_unix_ms)
                    .map(|at| (at, entry.record.id))
            })
            .collect();
        finished.sort_unstable();
        Ok(finished.into_iter().take(limit).map(|(_, id)| id).collect())
    }

    fn forget(&self, game: GameId) -> Result<(), StoreError> {
        let mut games = self.lock();
        if !entry(&mut games, game)?.record.finished {
            return Err(StoreError::NotFinished(game));
        }
        games.remove(&game);
        Ok(())
    }

    fn game(&self, game: GameId) -> Result<GameRecord, StoreError> {
        Ok(entry(&mut self.lock(), game)?.record.clone())
    }

    fn actions_after(&self, game: GameId, after: u64) -> Result<Vec<Action>, StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        Ok(tail(&entry.actions, after))
    }

    fn unfinished_games(&self) -> Result<Vec<GameId>, StoreError> {
        Ok(self
            .lock()
            .values()
            .filter(|entry| !entry.record.finished)
            .map(|entry| entry.record.id)
            .collect())
    }

    fn recover(&self, game: GameId) -> Result<Recovery, StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        let snapshot = entry.snapshots.values().next_back().cloned();
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        Ok(Recovery {
            game: entry.record.clone(),
            snapshot,
            tail: tail(&entry.actions, after),
        })
    }

    fn passage(&self, game: GameId, since: u64, until: u64) -> Result<Passage, StoreError> {
        let mut games = self.lock();
        let entry = entry(&mut games, game)?;
        let snapshot = entry
            .snapshots
            .range(..=since)
            .next_back()
            .map(|(_, s)| s.clone());
        let after = snapshot.as_ref().map_or(0, |snapshot| snapshot.seq);
        let start = usize::try_from(after)
            .unwrap_or(usize::MAX)
            .min(entry.actions.len());
        let end = usize::try_from(until)
            .unwrap_or(usize::MAX)
            .clamp(start, entry.actions.len());
        Ok(Passage {
            snapshot,
            actions: entry.actions[start..end].to_vec(),
        })
    }
}

/// The actions after sequence `after`; the log holds action `n` at index `n - 1`.
fn tail(actions: &[Action], after: u64) -> Vec<Action> {
    let start = usize::try_from(after)
        .unwrap_or(usize::MAX)
        .min(actions.len());
    actions[start..].to_vec()
}

//! The [`Host`]: many games of different rulesets in one process, each locked on its own.

use crate::registry::Registry;
use crate::save::games::{load, save};
use coffer_core::{Event, Setup};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};

pub use crate::game::{GameId, HostError, HostedGame, LoggedAction, names_for, refusal_reason};

/// Many games of different rulesets at once. `Send + Sync`: share it between threads (`Arc<Host>` or a
/// scoped borrow); each game has its own lock, so games advance in parallel.
///
/// ```
/// use coffer_host::{Host, Registry};
/// let host = Host::new(Registry::new());
/// assert!(host.start("chess", coffer_core::Setup::new(2, 1)).is_err());
/// assert!(host.ids().is_empty());
/// ```
pub struct Host {
    registry: Registry,
    games: RwLock<BTreeMap<GameId, Arc<Mutex<HostedGame>>>>,
    next: AtomicU64,
}

impl fmt::Debug for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Host")
            .field("registry", &self.registry)
            .field("games", &self.ids())
            .finish()
    }
}

impl Host {
    /// A host with no game, serving the rulesets of `registry`.
    pub fn new(registry: Registry) -> Host {
        Host {
            registry,
            games: RwLock::new(BTreeMap::new()),
            next: AtomicU64::new(1),
        }
    }

    /// The rulesets this host serves.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// Starts a game of `ruleset` (`id` or `id@version`).
    ///
    /// # Errors
    /// [`HostError::Registry`] for an unknown or ambiguous ruleset, [`HostError::Setup`] when it refuses.
    pub fn start(&self, ruleset: &str, setup: Setup) -> Result<GameId, HostError> {
        let entry = self.registry.get(ruleset)?;
        let game = HostedGame::start(Arc::clone(&entry.ruleset), setup)?;
        Ok(self.insert(game))
    }

    /// Adds a game (for example one loaded from a save file) and returns its id.
    pub fn insert(&self, game: HostedGame) -> GameId {
        let id = GameId(self.next.fetch_add(1, Ordering::Relaxed));
        self.write().insert(id, Arc::new(Mutex::new(game)));
        id
    }

    /// Removes a game and returns its handle (threads holding it may finish with it).
    ///
    /// # Errors
    /// [`HostError::NoSuchGame`].
    pub fn remove(&self, id: GameId) -> Result<Arc<Mutex<HostedGame>>, HostError> {
        self.write().remove(&id).ok_or(HostError::NoSuchGame(id))
    }

    /// The ids of every game, in order.
    pub fn ids(&self) -> Vec<GameId> {
        self.read().keys().copied().collect()
    }

    /// The shared handle of a game; lock it to use it.
    ///
    /// # Errors
    /// [`HostError::NoSuchGame`].
    pub fn game(&self, id: GameId) -> Result<Arc<Mutex<HostedGame>>, HostError> {
        self.read()
            .get(&id)
            .cloned()
            .ok_or(HostError::NoSuchGame(id))
    }

    /// Runs `f` with game `id` locked. Other games stay available to other threads meanwhile.
    ///
    /// # Errors
    /// [`HostError::NoSuchGame`], or [`HostError::Poisoned`] when a thread panicked holding it.
    pub fn with_game<T>(
        &self,
        id: GameId,
        f: impl FnOnce(&mut HostedGame) -> T,
    ) -> Result<T, HostError> {
        let game = self.game(id)?;
        let mut guard: MutexGuard<'_, HostedGame> =
            game.lock().map_err(|_| HostError::Poisoned(id))?;
        Ok(f(&mut guard))
    }

    /// Loads a save file (checking all of it, see [`crate::save::load`]) and adds the game.
    ///
    /// # Errors
    /// [`HostError::Save`] naming what is wrong with the file.
    pub fn load(&self, path: &std::path::Path) -> Result<GameId, HostError> {
        let game = load(path, &self.registry)?;
        Ok(self.insert(game))
    }

    /// Saves game `id` to `path` atomically. Other games keep running meanwhile.
    ///
    /// # Errors
    /// As [`with_game`](Self::with_game), and [`HostError::Save`].
    pub fn save(&self, id: GameId, path: &std::path::Path) -> Result<(), HostError> {
        self.with_game(id, |g| save(g, path))?
            .map_err(HostError::from)
    }

    /// Applies an action given as JSON to game `id` and returns its events.
    ///
    /// # Errors
    /// As [`with_game`](Self::with_game) and [`HostedGame::apply_json`].
    pub fn apply_json(&self, id: GameId, player: u16, json: &str) -> Result<Vec<Event>, HostError> {
        self.with_game(id, |g| g.apply_json(player, json).map(<[Event]>::to_vec))?
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<GameId, Arc<Mutex<HostedGame>>>> {
        // The map is only ever changed by a single insert or remove, which cannot leave it half-done.
        self.games.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<GameId, Arc<Mutex<HostedGame>>>> {
        self.games.write().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_is_send_and_sync() {
        fn check<T: Send + Sync>() {}
        fn send<T: Send>() {}
        check::<Host>();
        send::<HostedGame>();
    }
}

//! The galaxy: the default one or the configured one checked, homes, wormholes and adjacency; distances and
//! where ships may retreat.

use crate::config::{Config, MAX_ROUNDS, MAX_SYSTEMS, ShipsConfig, SystemConfig, cfg, ids};
use crate::content::{Content, MAX_MOVE};
use crate::state::State;
use coffer_core::{Owner, SetupError};

/// The default galaxy: Mecatol Rex (`18`, not a Diplomacy target), each player's home system with their
/// faction's starting fleet, and one empty system per player (`19`, `20`, ...). They lie in a ring around
/// Mecatol Rex, home and empty systems taking turns: each empty system touches Mecatol Rex, the home
/// system before it and the one after it.
pub fn default_galaxy(factions: &[String], content: &Content) -> Vec<SystemConfig> {
    let mut galaxy = vec![SystemConfig {
        id: "18".into(),
        ships: Vec::new(),
        no_diplomacy: true,
        adjacent: Vec::new(),
    }];
    for (p, f) in factions.iter().enumerate() {
        let ships = content
            .faction(f)
            .map(|fa| {
                fa.starting_fleet
                    .iter()
                    .map(|(class, &count)| ShipsConfig {
                        player: p as u16,
                        class: class.clone(),
                        count,
                    })
                    .collect()
            })
            .unwrap_or_default();
        galaxy.push(SystemConfig {
            id: format!("home-{f}"),
            ships,
            no_diplomacy: false,
            adjacent: Vec::new(),
        });
    }
    let n = factions.len();
    for i in 0..n {
        let homes = [&factions[i], &factions[(i + 1) % n]];
        galaxy.push(SystemConfig {
            id: (19 + i).to_string(),
            ships: Vec::new(),
            no_diplomacy: false,
            adjacent: std::iter::once("18".to_string())
                .chain(homes.map(|f| format!("home-{f}")))
                .collect(),
        });
    }
    galaxy
}

impl State {
    /// T14 (LRR 58.4b, f): for each system, the fewest systems a ship of `player` enters to reach the
    /// activated system from it along adjacent systems, never through a system holding another player's
    /// ships (`u8::MAX`: unreachable within [`MAX_MOVE`]). A breadth-first search outward
    /// from the activated system.
    pub fn distances(&self, player: Owner) -> [u8; MAX_SYSTEMS] {
        let active = usize::from(self.flow.system);
        let blocked = self.ships_of_others(player);
        let mut dist = [u8::MAX; MAX_SYSTEMS];
        // A queue of systems in order of distance: each system enters it once.
        let mut queue = [0u8; MAX_SYSTEMS];
        let (mut head, mut tail) = (0, 1);
        queue[0] = active as u8;
        dist[active] = 0;
        while head < tail {
            let u = usize::from(queue[head]);
            head += 1;
            // A ship may start in a system next to a blocked one but not pass through it; the activated
            // system itself is where every path ends.
            if dist[u] >= MAX_MOVE || u != active && blocked[u] {
                continue;
            }
            for v in self.adjacent_to(u) {
                let v = usize::from(v);
                if dist[v] == u8::MAX {
                    dist[v] = dist[u] + 1;
                    queue[tail] = v as u8;
                    tail += 1;
                }
            }
        }
        dist
    }

    /// Whether the laws in play make every wormhole system adjacent to every other (Wormhole
    /// Reconstruction, T29).
    pub fn wormholes_linked(&self) -> bool {
        self.rules
            .wormhole_law
            .is_some_and(|l| (self.rules.starting_laws | self.flow.enacted) & (1 << l) != 0)
    }

    /// The systems adjacent to `system` (LRR 6): the galaxy's, and, with Wormhole Reconstruction in play,
    /// every other wormhole system for a wormhole system (T29).
    pub fn adjacent_to(&self, system: usize) -> impl Iterator<Item = u16> + '_ {
        let linked = self.wormholes_linked() && self.rules.wormholes.contains(&(system as u16));
        let own = &self.rules.adjacent[system];
        let others = self
            .rules
            .wormholes
            .iter()
            .copied()
            .filter(move |&w| linked && usize::from(w) != system && !own.contains(&w));
        own.iter().copied().chain(others)
    }

    /// Whether systems `a` and `b` are adjacent ([`State::adjacent_to`]).
    pub fn is_adjacent(&self, a: usize, b: u16) -> bool {
        self.adjacent_to(a).any(|s| s == b)
    }

    /// T16 (LRR 78.7c): whether `player`'s ships may retreat from the activated system to `system`: it is
    /// adjacent, holds ships of the player's and no other player's ships.
    pub fn may_retreat_to(&self, player: Owner, system: usize) -> bool {
        let active = usize::from(self.flow.system);
        self.is_adjacent(active, system as u16) && self.ship_owners(system) == 1 << player.0
    }

    /// T15 (LRR 78.4c): whether `player` has a system to retreat to.
    pub fn can_retreat(&self, player: Owner) -> bool {
        let active = usize::from(self.flow.system);
        self.adjacent_to(active)
            .any(|s| self.may_retreat_to(player, usize::from(s)))
    }
}

/// The galaxy: the configuration's (ids unique, ships of players in the game and known classes) or the
/// default one.
pub(crate) fn resolve_galaxy(
    n: usize,
    config: &Config,
    content: &Content,
    factions: &[String],
) -> Result<Vec<SystemConfig>, SetupError> {
    let galaxy = if config.galaxy.is_empty() {
        default_galaxy(factions, content)
    } else {
        config.galaxy.clone()
    };
    if galaxy.len() > MAX_SYSTEMS {
        return Err(cfg(format!(
            "galaxy: {} systems, but a galaxy holds 1 to {MAX_SYSTEMS}",
            galaxy.len()
        )));
    }
    for (i, s) in galaxy.iter().enumerate() {
        if s.id.trim().is_empty() {
            return Err(cfg(format!("galaxy[{i}].id: must not be empty")));
        }
        if galaxy[..i].iter().any(|o| o.id == s.id) {
            return Err(cfg(format!("galaxy[{i}].id: '{}' appears twice", s.id)));
        }
        for (j, sh) in s.ships.iter().enumerate() {
            if usize::from(sh.player) >= n {
                return Err(cfg(format!(
                    "galaxy[{i}].ships[{j}].player: player {} is not in this game: players are 0 to {}",
                    sh.player,
                    n - 1
                )));
            }
            if content.class(&sh.class).is_none() {
                return Err(cfg(format!(
                    "galaxy[{i}].ships[{j}].class: unknown ship class '{}'; known: {}",
                    sh.class,
                    ids(content.ships.iter().map(|c| c.id.as_str()))
                )));
            }
        }
    }
    Ok(galaxy)
}

/// The round the agenda phase starts in, in range, and each player's home system, if any (T24).
pub(crate) fn homes(
    n: usize,
    config: &Config,
    factions: &[String],
    galaxy: &[SystemConfig],
) -> Result<Vec<Option<u16>>, SetupError> {
    if config.agenda_phase_from > MAX_ROUNDS {
        return Err(cfg(format!(
            "agenda_phase_from: {} is out of range: 0 (no agenda phase) to {MAX_ROUNDS}",
            config.agenda_phase_from
        )));
    }
    if !config.homes.is_empty() && config.homes.len() != n {
        return Err(cfg(format!(
            "homes: {} given, but {n} players need {n} (or none, for the systems home-<faction>)",
            config.homes.len()
        )));
    }
    let mut homes = Vec::with_capacity(n);
    for (p, f) in factions.iter().enumerate() {
        let home = match config.homes.get(p) {
            Some(id) => match galaxy.iter().position(|s| &s.id == id) {
                Some(i) => Some(i as u16),
                None => {
                    return Err(cfg(format!("homes[{p}]: no system '{id}' in the galaxy")));
                }
            },
            None => galaxy
                .iter()
                .position(|s| s.id == format!("home-{f}"))
                .map(|i| i as u16),
        };
        if home.is_some() && homes.contains(&home) {
            return Err(cfg(format!(
                "homes[{p}]: '{}' is another player's home system",
                config.homes.get(p).map_or("", String::as_str)
            )));
        }
        homes.push(home);
    }
    Ok(homes)
}

/// The wormhole systems (T29), in the galaxy and each once, in index order.
pub(crate) fn resolve_wormholes(
    config: &Config,
    galaxy: &[SystemConfig],
) -> Result<Vec<u16>, SetupError> {
    let mut wormholes = Vec::with_capacity(config.wormholes.len());
    for (i, id) in config.wormholes.iter().enumerate() {
        let Some(w) = galaxy.iter().position(|s| &s.id == id) else {
            return Err(cfg(format!(
                "wormholes[{i}]: no system '{id}' in the galaxy"
            )));
        };
        if wormholes.contains(&(w as u16)) {
            return Err(cfg(format!("wormholes[{i}]: '{id}' appears twice")));
        }
        wormholes.push(w as u16);
    }
    wormholes.sort_unstable();
    Ok(wormholes)
}

/// Each system's adjacent systems, both ways, sorted (a system is not adjacent to itself); one player's
/// ships per system.
pub(crate) fn adjacency(galaxy: &[SystemConfig]) -> Result<Vec<Vec<u16>>, SetupError> {
    let mut adjacent = vec![Vec::<u16>::new(); galaxy.len()];
    for (i, s) in galaxy.iter().enumerate() {
        for (j, a) in s.adjacent.iter().enumerate() {
            let Some(k) = galaxy.iter().position(|o| &o.id == a) else {
                return Err(cfg(format!(
                    "galaxy[{i}].adjacent[{j}]: no system '{a}' in the galaxy"
                )));
            };
            if k == i {
                return Err(cfg(format!(
                    "galaxy[{i}].adjacent[{j}]: a system is not adjacent to itself (LRR 6.2a)"
                )));
            }
            adjacent[i].push(k as u16);
            adjacent[k].push(i as u16);
        }
        let mut owners = s.ships.iter().filter(|sh| sh.count > 0).map(|sh| sh.player);
        if let Some(first) = owners.next()
            && let Some(other) = owners.find(|&o| o != first)
        {
            return Err(cfg(format!(
                "galaxy[{i}].ships: players {first} and {other} both have ships in '{}'; a system holds one player's ships outside a space combat",
                s.id
            )));
        }
    }
    for a in &mut adjacent {
        a.sort_unstable();
        a.dedup();
    }
    Ok(adjacent)
}

//! [`Rules::resolve`]: a configuration and the content checked and resolved into a game's rules.

mod cards;

use crate::config::{
    Ability, Config, Forge, MAX_INFLUENCE, MAX_PLAYERS, MAX_PRODUCTION, MAX_ROUNDS, MIN_PLAYERS,
    Rules, SystemConfig, SystemInfo, cfg, ids,
};
use crate::content::{Card, Content, Effect, ShipClass};
use crate::galaxy::{adjacency, homes, resolve_galaxy, resolve_wormholes};
use coffer_core::{ContentTable, SetupError, SharedContent};

impl SharedContent for Rules {
    /// The player count and the configuration (with its inline content, if any).
    type Key = (u16, Config);

    fn build((players, config): &(u16, Config)) -> Result<Rules, SetupError> {
        let content =
            Content::of(config.content.as_ref()).map_err(|e| SetupError::Content(e.to_string()))?;
        Rules::resolve(*players, config, &content).map(|(rules, _)| rules)
    }

    fn table() -> &'static ContentTable<Rules> {
        static TABLE: ContentTable<Rules> = ContentTable::new();
        &TABLE
    }
}

impl Rules {
    /// Resolves the rules of a game from its configuration and content.
    ///
    /// # Errors
    /// [`SetupError::Config`] or [`SetupError::Content`] naming the offending entry.
    pub fn resolve(
        players: u16,
        config: &Config,
        content: &Content,
    ) -> Result<(Rules, Vec<SystemConfig>), SetupError> {
        let n = usize::from(players);
        let cards_per_player = cards_per_player(players, config, content)?;
        let factions = factions(n, config, content)?;
        let fleet_pool_max = fleet_pool_max(config, content)?;
        let (tech_tokens, unlocks) = technologies(n, config, content, &factions)?;
        check_influence(n, config)?;
        let galaxy = resolve_galaxy(n, config, content, &factions)?;
        let Fleets {
            classes,
            producible,
            moves,
            excess_fighters,
            star_forge,
        } = fleets(n, config, content, &factions, &unlocks, &galaxy);
        let homes = homes(n, config, &factions, &galaxy)?;
        let (law_list, agendas) = cards::agendas(config, content)?;
        let Powers {
            quash,
            fleet_loss,
            free_secondaries,
            abilities,
        } = powers(n, config, content, &factions);
        let hands = cards::hands(n, config, content)?;
        let wormholes = resolve_wormholes(config, &galaxy)?;
        cards::check_relics_and_hands(n, config, &hands)?;
        let adjacent = adjacency(&galaxy)?;
        let rules = Rules {
            rounds: config.rounds,
            production: config.production,
            cards_per_player,
            fleet_classes: (0..classes.len())
                .filter(|&c| classes[c].fleet)
                .map(|c| c as u8)
                .collect(),
            cards: content.strategy_cards.iter().map(Card::from).collect(),
            systems: galaxy
                .iter()
                .map(|s| SystemInfo {
                    id: s.id.clone(),
                    no_diplomacy: s.no_diplomacy,
                })
                .collect(),
            fleet_bonus: factions
                .iter()
                .map(|f| content.faction(f).map_or(0, |f| f.fleet_limit_bonus))
                .collect(),
            status_tokens: factions
                .iter()
                .zip(&tech_tokens)
                .map(|(f, &t)| {
                    (2 + content.faction(f).map_or(0, |f| f.status_phase_tokens)).saturating_add(t)
                })
                .collect(),
            research_tokens: factions
                .iter()
                .map(|f| content.faction(f).map_or(0, |f| f.research_tokens))
                .collect(),
            faction_names: factions
                .iter()
                .map(|f| {
                    content
                        .faction(f)
                        .map_or_else(|| f.clone(), |f| f.name.clone())
                })
                .collect(),
            system_labels: galaxy.iter().map(|s| format!("system {}", s.id)).collect(),
            capture: factions
                .iter()
                .map(|f| content.faction(f).is_some_and(|f| f.combat_capture))
                .collect(),
            factions,
            fleet_pool_max,
            laws: config.laws.clone(),
            adjacent,
            transported: classes
                .iter()
                .position(|c| c.movement.is_none())
                .map(|c| c as u8),
            elimination: config.elimination,
            producible,
            moves,
            star_forge,
            classes,
            agenda_from: config.agenda_phase_from,
            agendas,
            law_list,
            homes,
            quash,
            fleet_loss,
            free_secondaries,
            abilities,
            hands,
            excess_fighters,
            fragments: config.relic_fragments.clone(),
            wormholes,
            wormhole_law: content
                .laws
                .iter()
                .position(|l| l.wormholes_adjacent)
                .map(|i| i as u8),
            starting_laws: config
                .laws
                .iter()
                .filter_map(|l| content.laws.iter().position(|k| &k.id == l))
                .fold(0, |bits, i| bits | 1 << i),
        };
        Ok((rules, galaxy))
    }

    /// Number of systems.
    #[inline]
    pub fn system_count(&self) -> usize {
        self.systems.len()
    }

    /// Number of ship classes.
    #[inline]
    pub fn class_count(&self) -> usize {
        self.classes.len()
    }

    /// The effects of the card being resolved.
    #[inline]
    pub fn effects(&self, card: u8, secondary: bool) -> &[Effect] {
        let c = &self.cards[usize::from(card)];
        if secondary { &c.secondary } else { &c.primary }
    }
}

/// The ship classes in play and what each player's ships do, resolved together.
struct Fleets {
    classes: Vec<ShipClass>,
    producible: Vec<u8>,
    moves: Vec<u8>,
    excess_fighters: Vec<u8>,
    star_forge: Vec<Option<Forge>>,
}

/// What each player's faction and technologies do beyond ships and tokens (T21).
struct Powers {
    quash: Vec<u8>,
    fleet_loss: Vec<u8>,
    free_secondaries: Vec<u16>,
    abilities: Vec<Ability>,
}

/// The players, rounds and production in range, and the strategy cards each player picks (0: by the
/// player count).
fn cards_per_player(players: u16, config: &Config, content: &Content) -> Result<u8, SetupError> {
    let n = usize::from(players);
    if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
        return Err(SetupError::Players {
            got: players,
            min: MIN_PLAYERS as u16,
            max: MAX_PLAYERS as u16,
        });
    }
    if config.rounds == 0 || config.rounds > MAX_ROUNDS {
        return Err(cfg(format!(
            "rounds: {} is out of range: 1 to {MAX_ROUNDS}",
            config.rounds
        )));
    }
    if config.production > MAX_PRODUCTION {
        return Err(cfg(format!(
            "production: {} is out of range: 0 to {MAX_PRODUCTION}",
            config.production
        )));
    }
    let cards_per_player = match config.cards_per_player {
        0 if n <= 4 => 2,
        0 => 1,
        c => c,
    };
    if usize::from(cards_per_player) * n > content.strategy_cards.len() {
        let cards = content.strategy_cards.len();
        return Err(cfg(format!(
            "cards_per_player: {cards_per_player} cards for each of {n} players needs {}, but there are {cards} strategy cards: 0 (the default) or 1 to {} with {n} players",
            usize::from(cards_per_player) * n,
            cards / n
        )));
    }
    Ok(cards_per_player)
}

/// Each player's faction: the configuration's, each known and taken once, or the content's first ones.
fn factions(n: usize, config: &Config, content: &Content) -> Result<Vec<String>, SetupError> {
    let factions: Vec<String> = if config.factions.is_empty() {
        if content.factions.len() < n {
            return Err(cfg(format!(
                "factions: {n} players need {n} factions, but the content has only {}",
                content.factions.len()
            )));
        }
        content.factions[..n].iter().map(|f| f.id.clone()).collect()
    } else {
        if config.factions.len() != n {
            return Err(cfg(format!(
                "factions: {} given, but {n} players need {n} (or none, for the default)",
                config.factions.len()
            )));
        }
        for (i, f) in config.factions.iter().enumerate() {
            if content.faction(f).is_none() {
                return Err(cfg(format!(
                    "factions[{i}]: unknown faction '{f}'; known: {}",
                    ids(content.factions.iter().map(|f| f.id.as_str()))
                )));
            }
            if config.factions[..i].contains(f) {
                return Err(cfg(format!("factions[{i}]: '{f}' is taken twice")));
            }
        }
        config.factions.clone()
    };
    Ok(factions)
}

/// The laws in play from the start are known; the lowest fleet-pool maximum among them, if any.
fn fleet_pool_max(config: &Config, content: &Content) -> Result<Option<u8>, SetupError> {
    let mut fleet_pool_max: Option<u8> = None;
    for (i, l) in config.laws.iter().enumerate() {
        let Some(law) = content.law(l) else {
            return Err(cfg(format!(
                "laws[{i}]: unknown law '{l}'; known: {}",
                ids(content.laws.iter().map(|l| l.id.as_str()))
            )));
        };
        if let Some(m) = law.fleet_pool_max {
            if m < 3 {
                return Err(cfg(format!(
                    "laws[{i}]: '{l}' caps the fleet pool at {m}, below the starting 3"
                )));
            }
            fleet_pool_max = Some(fleet_pool_max.map_or(m, |x| x.min(m)));
        }
    }
    Ok(fleet_pool_max)
}

/// Each player's technologies, known, owned once and of their faction if a faction technology: the
/// command tokens they add in the status phase, and the ship classes they and the faction unlock.
fn technologies<'a>(
    n: usize,
    config: &'a Config,
    content: &'a Content,
    factions: &[String],
) -> Result<(Vec<u8>, Vec<Vec<&'a str>>), SetupError> {
    if !config.technologies.is_empty() && config.technologies.len() != n {
        return Err(cfg(format!(
            "technologies: {} lists given, but {n} players need {n} (or none)",
            config.technologies.len()
        )));
    }
    let mut tech_tokens = vec![0u8; n];
    let mut unlocks: Vec<Vec<&str>> = vec![Vec::new(); n];
    for (p, owned) in config.technologies.iter().enumerate() {
        for (j, t) in owned.iter().enumerate() {
            let Some(tech) = content.technology(t) else {
                return Err(cfg(format!(
                    "technologies[{p}][{j}]: unknown technology '{t}'; known: {}",
                    ids(content.technologies.iter().map(|t| t.id.as_str()))
                )));
            };
            if owned[..j].contains(t) {
                return Err(cfg(format!("technologies[{p}][{j}]: '{t}' is owned twice")));
            }
            if let Some(f) = tech.faction.as_deref().filter(|&f| f != factions[p]) {
                return Err(cfg(format!(
                    "technologies[{p}][{j}]: '{t}' is a faction technology of '{f}', but player {p} plays '{}'",
                    factions[p]
                )));
            }
            tech_tokens[p] = tech_tokens[p].saturating_add(tech.status_phase_tokens);
            unlocks[p].extend(tech.unlocks.iter().map(String::as_str));
        }
    }
    for (p, f) in factions.iter().enumerate() {
        if let Some(f) = content.faction(f) {
            unlocks[p].extend(f.unlocks.iter().map(String::as_str));
        }
    }
    Ok((tech_tokens, unlocks))
}

/// Influence, per player or for all, in range.
fn check_influence(n: usize, config: &Config) -> Result<(), SetupError> {
    if !config.influence_per_player.is_empty() && config.influence_per_player.len() != n {
        return Err(cfg(format!(
            "influence_per_player: {} values given, but {n} players need {n} (or none, to use `influence`)",
            config.influence_per_player.len()
        )));
    }
    if config.influence > MAX_INFLUENCE {
        return Err(cfg(format!(
            "influence: {} is out of range: 0 to {MAX_INFLUENCE}",
            config.influence
        )));
    }
    if let Some((i, v)) = config
        .influence_per_player
        .iter()
        .enumerate()
        .find(|&(_, &v)| v > MAX_INFLUENCE)
    {
        return Err(cfg(format!(
            "influence_per_player[{i}]: {v} is out of range: 0 to {MAX_INFLUENCE}"
        )));
    }
    Ok(())
}

/// The ship classes in play and what each player's ships do: which they may produce, how far they move,
/// the fighters beyond capacity they keep, their Star Forge.
fn fleets(
    n: usize,
    config: &Config,
    content: &Content,
    factions: &[String],
    unlocks: &[Vec<&str>],
    galaxy: &[SystemConfig],
) -> Fleets {
    // T19: a locked class is in the game only when a player has it unlocked or the galaxy holds pieces of
    // it; content lists locked classes last, so the classes in play are a prefix of the content's.
    let needed = |c: usize| {
        let id = content.ships[c].id.as_str();
        !content.ships[c].locked
            || unlocks.iter().any(|u| u.contains(&id))
            || galaxy
                .iter()
                .any(|s| s.ships.iter().any(|sh| sh.class == id && sh.count > 0))
    };
    let class_count = (0..content.ships.len())
        .rev()
        .find(|&c| needed(c))
        .map_or(0, |c| c + 1);
    let classes = content.ships[..class_count].to_vec();
    let producible = unlocks
        .iter()
        .map(|u| {
            classes
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.locked || u.contains(&c.id.as_str()))
                .fold(0u8, |bits, (i, _)| bits | 1 << i)
        })
        .collect();
    // A player's ships move as their faction's own units do, or as a technology they own says (T19,
    // T25), else as their class.
    let tech_moves = |p: usize, id: &str| {
        config
            .technologies
            .get(p)
            .into_iter()
            .flatten()
            .filter_map(|t| content.technology(t))
            .filter_map(|t| t.moves.get(id).copied())
            .max()
    };
    let mut moves = Vec::with_capacity(n * classes.len());
    for (p, f) in factions.iter().enumerate() {
        let faction = content.faction(f);
        for c in &classes {
            let own = faction.and_then(|f| f.moves.get(&c.id).copied());
            let value = tech_moves(p, &c.id).max(own).or(c.movement);
            moves.push(value.unwrap_or(0));
        }
    }
    let excess_fighters = (0..n)
        .map(|p| {
            config
                .technologies
                .get(p)
                .into_iter()
                .flatten()
                .filter_map(|t| content.technology(t))
                .map(|t| t.excess_fighters)
                .max()
                .unwrap_or(0)
        })
        .collect();
    let class_of = |id: &str| classes.iter().position(|c| c.id == id).map(|c| c as u8);
    let mut star_forge = Vec::with_capacity(n);
    for f in factions {
        let forge = content.faction(f).and_then(|f| f.star_forge.as_ref());
        star_forge.push(match forge {
            None => None,
            // A Star Forge whose classes are not in this game places nothing: it is not offered.
            Some(forge) => class_of(&forge.with).map(|with| Forge {
                cost: forge.strategy_tokens,
                with,
                place: forge
                    .place
                    .iter()
                    .filter_map(|p| class_of(&p.class).map(|c| (c, p.count)))
                    .collect(),
            }),
        });
    }
    Fleets {
        classes,
        producible,
        moves,
        excess_fighters,
        star_forge,
    }
}

/// T21: what each player's faction and technologies do beyond the above: Quash, fleet-pool tokens lost on
/// activation, secondaries for free, abilities.
fn powers(n: usize, config: &Config, content: &Content, factions: &[String]) -> Powers {
    let quash = factions
        .iter()
        .map(|f| content.faction(f).map_or(0, |f| f.quash))
        .collect();
    // T21: what each player's faction and technologies do beyond the above.
    let owned = |p: usize| {
        config
            .technologies
            .get(p)
            .into_iter()
            .flatten()
            .filter_map(|t| content.technology(t))
    };
    let fleet_loss = (0..n)
        .map(|p| owned(p).map(|t| t.activation_fleet_loss).max().unwrap_or(0))
        .collect();
    let free_secondaries = factions
        .iter()
        .map(|f| {
            let free = content.faction(f).map(|f| f.free_secondaries.as_slice());
            content
                .strategy_cards
                .iter()
                .enumerate()
                .filter(|(_, c)| free.is_some_and(|free| free.contains(&c.id)))
                .fold(0u16, |bits, (i, _)| bits | 1 << i)
        })
        .collect();
    let mut abilities = Vec::new();
    for (p, f) in factions.iter().enumerate() {
        let of_faction = content
            .faction(f)
            .into_iter()
            .flat_map(|f| f.abilities.iter());
        for a in of_faction.chain(owned(p).filter_map(|t| t.ability.as_ref())) {
            abilities.push(Ability {
                kind: a.kind,
                name: a.name.clone(),
                cost: a.strategy_tokens,
                exhausts: a.exhausts,
                player: p as u8,
            });
        }
    }
    Powers {
        quash,
        fleet_loss,
        free_secondaries,
        abilities,
    }
}

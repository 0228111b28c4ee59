//! [`Rules::resolve`]: a configuration and the content checked and resolved into a game's rules.

use crate::config::{
    Ability, AgendaOp, AgendaRule, Config, Forge, HandCard, MAX_HAND_CARDS, MAX_INFLUENCE,
    MAX_PLAYERS, MAX_PRODUCTION, MAX_RIDERS, MAX_ROUNDS, MAX_SYSTEMS, MIN_PLAYERS, Rules,
    SystemConfig, SystemInfo, cfg, ids,
};
use crate::content::{AgendaEffect, Card, Content, Effect, Window};
use crate::galaxy::default_galaxy;
use coffer_core::SetupError;
use coffer_core::{ContentTable, SharedContent};

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
        let galaxy = if config.galaxy.is_empty() {
            default_galaxy(&factions, content)
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
        for f in &factions {
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
        let law_list: Vec<(String, Option<u8>)> = content
            .laws
            .iter()
            .map(|l| (l.name.clone(), l.fleet_pool_max))
            .collect();
        let law_index = |id: &str| {
            content
                .laws
                .iter()
                .position(|l| l.id == id)
                .map(|i| i as u8)
        };
        let mut agendas = Vec::new();
        if config.agenda_phase_from > 0 {
            for a in &content.agendas {
                let ops = |list: &[AgendaEffect]| -> Result<Vec<AgendaOp>, SetupError> {
                    list.iter()
                        .map(|e| {
                            Ok(match e {
                                AgendaEffect::Enact { law } => {
                                    let Some(i) = law_index(law) else {
                                        return Err(cfg(format!(
                                            "agenda_phase_from: the agenda '{}' enacts the unknown law '{law}'; known: {}",
                                            a.id,
                                            ids(content.laws.iter().map(|l| l.id.as_str()))
                                        )));
                                    };
                                    if let Some(m) = law_list[usize::from(i)].1.filter(|&m| m < 3) {
                                        return Err(cfg(format!(
                                            "agenda_phase_from: the agenda '{}' enacts '{law}', which caps the fleet pool at {m}, below the starting 3",
                                            a.id
                                        )));
                                    }
                                    AgendaOp::Enact(i)
                                }
                                AgendaEffect::EachGains { pool, tokens } => {
                                    AgendaOp::EachGains(*pool, *tokens)
                                }
                                AgendaEffect::EachReturns { tokens, pool } => {
                                    AgendaOp::EachReturns(*tokens, *pool)
                                }
                                AgendaEffect::EachPlacesHome => AgendaOp::EachPlacesHome,
                                AgendaEffect::AgainstVotersReturn { tokens } => {
                                    AgendaOp::AgainstVotersReturn(*tokens)
                                }
                                AgendaEffect::AdditionalAction => AgendaOp::AdditionalAction,
                                AgendaEffect::SecondaryForAll => AgendaOp::SecondaryForAll,
                                AgendaEffect::EachPlacesAtWormholes => AgendaOp::EachPlacesAtWormholes,
                                AgendaEffect::ReturnPerPrerequisite => AgendaOp::ReturnPerPrerequisite,
                                AgendaEffect::Standardize {
                                    tactic,
                                    fleet,
                                    strategy,
                                } => AgendaOp::Standardize([*tactic, *fleet, *strategy]),
                            })
                        })
                        .collect()
                };
                agendas.push(AgendaRule {
                    name: a.name.clone(),
                    elect_player: a.elect_player,
                    elect_card: a.elect_strategy_card,
                    voters: a
                        .against
                        .iter()
                        .any(|e| matches!(e, AgendaEffect::AgainstVotersReturn { .. })),
                    outcomes: [ops(&a.for_)?, ops(&a.against)?, ops(&a.elected)?],
                });
            }
        }
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
        if !config.action_cards.is_empty() && config.action_cards.len() != n {
            return Err(cfg(format!(
                "action_cards: {} hands given, but {n} players need {n} (or none)",
                config.action_cards.len()
            )));
        }
        let mut hands = Vec::new();
        for (p, hand) in config.action_cards.iter().enumerate() {
            for (j, id) in hand.iter().enumerate() {
                let Some(card) = content.action_card(id) else {
                    return Err(cfg(format!(
                        "action_cards[{p}][{j}]: unknown action card '{id}'; known: {}",
                        ids(content.action_cards.iter().map(|c| c.id.as_str()))
                    )));
                };
                let dealt = config.action_cards[..p]
                    .iter()
                    .flatten()
                    .chain(&hand[..=j])
                    .filter(|&c| c == id)
                    .count();
                if dealt > usize::from(card.copies) {
                    return Err(cfg(format!(
                        "action_cards[{p}][{j}]: '{id}' is dealt {dealt} times, but the deck holds {}",
                        card.copies
                    )));
                }
                hands.push(HandCard {
                    player: p as u8,
                    name: card.name.clone(),
                    window: card.window,
                    effect: card.effect,
                });
            }
        }
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
        if !config.relic_fragments.is_empty() && config.relic_fragments.len() != n {
            return Err(cfg(format!(
                "relic_fragments: {} counts given, but {n} players need {n} (or none)",
                config.relic_fragments.len()
            )));
        }
        if let Some((i, v)) = config
            .relic_fragments
            .iter()
            .enumerate()
            .find(|&(_, &v)| v > 16)
        {
            return Err(cfg(format!(
                "relic_fragments[{i}]: {v} is out of range: 0 to 16"
            )));
        }
        if hands.len() > MAX_HAND_CARDS {
            return Err(cfg(format!(
                "action_cards: {} cards dealt, but a game deals 0 to {MAX_HAND_CARDS}",
                hands.len()
            )));
        }
        let riders = hands
            .iter()
            .filter(|c| c.window == Window::AfterAgendaRevealed)
            .count();
        if riders > MAX_RIDERS {
            return Err(cfg(format!(
                "action_cards: {riders} riders dealt, but a game deals 0 to {MAX_RIDERS}"
            )));
        }
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
            if let Some(first) = owners.next() {
                if let Some(other) = owners.find(|&o| o != first) {
                    return Err(cfg(format!(
                        "galaxy[{i}].ships: players {first} and {other} both have ships in '{}'; a system holds one player's ships outside a space combat",
                        s.id
                    )));
                }
            }
        }
        for a in &mut adjacent {
            a.sort_unstable();
            a.dedup();
        }
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

//! The content's checks on load: list sizes, unique ids, names, values in range and references between
//! lists, each error naming the file, the entry and the field.

use crate::content::{
    AbilitySpec, ActionCard, Agenda, AgendaEffect, CardEffect, Content, ContentError, EffectSpec,
    Faction, Law, MAX_ACTION_CARDS, MAX_AGENDAS, MAX_CAPACITY, MAX_CARDS, MAX_CLASSES, MAX_DICE,
    MAX_LAWS, MAX_MOVE, ShipClass, StrategyCard, Technology, Window,
};
use coffer_core::check_content_id;
use std::collections::BTreeMap;

/// A count a card or sheet prints (a cost, a bonus, a number of tokens): 0 to 16, the tokens a player owns.
fn at_most_16(
    file: &'static str,
    id: &str,
    field: &'static str,
    value: u8,
) -> Result<(), ContentError> {
    if value > 16 {
        return Err(ContentError::invalid(
            file,
            id,
            field,
            format!("{value} is out of range: 0 to 16"),
        ));
    }
    Ok(())
}

/// A content list holds `min` to `max` entries.
fn list_size<T>(
    file: &'static str,
    field: &'static str,
    noun: &str,
    list: &[T],
    [min, max]: [usize; 2],
) -> Result<(), ContentError> {
    let len = list.len();
    if len < min || len > max {
        return Err(ContentError::invalid(
            file,
            "-",
            field,
            format!("{len} {noun}, but content holds {min} to {max}"),
        ));
    }
    Ok(())
}

/// An entry of a content list: an id and a display name.
trait Entry {
    /// Its stable id.
    fn id(&self) -> &str;
    /// Its display name.
    fn name(&self) -> &str;
}

/// [`Entry`] for content types with `id` and `name` fields.
macro_rules! entries {
    ($($t:ty),*) => {$(
        impl Entry for $t {
            fn id(&self) -> &str {
                &self.id
            }
            fn name(&self) -> &str {
                &self.name
            }
        }
    )*};
}

entries!(
    ShipClass,
    StrategyCard,
    Faction,
    Law,
    Technology,
    Agenda,
    ActionCard
);

/// The ids of a content list, comma-separated.
fn ids<T: Entry>(list: &[T]) -> String {
    list.iter().map(Entry::id).collect::<Vec<_>>().join(", ")
}

/// Each entry of a content list, in order: its id well-formed and unique, its name not empty, then
/// `each`'s checks of it.
fn check_entries<T: Entry>(
    file: &'static str,
    list: &[T],
    mut each: impl FnMut(usize, &T) -> Result<(), ContentError>,
) -> Result<(), ContentError> {
    let mut seen = Vec::new();
    for (i, entry) in list.iter().enumerate() {
        let (id, name) = (entry.id(), entry.name());
        check_content_id(file, i, id, &mut seen)?;
        check_name(file, id, name)?;
        each(i, entry)?;
    }
    Ok(())
}

/// An ability names itself and spends 0 to 16 strategy tokens.
fn check_ability(file: &'static str, id: &str, action: &AbilitySpec) -> Result<(), ContentError> {
    if action.name.trim().is_empty() {
        return Err(ContentError::invalid(
            file,
            id,
            "ability.name",
            "must not be empty",
        ));
    }
    at_most_16(file, id, "ability.strategy_tokens", action.strategy_tokens)
}

/// A display name must say something: tables and events show it.
fn check_name(file: &'static str, id: &str, name: &str) -> Result<(), ContentError> {
    if name.trim().is_empty() {
        return Err(ContentError::invalid(file, id, "name", "must not be empty"));
    }
    Ok(())
}

impl Content {
    /// Every list of the content checked: sizes, ids, names, values and references between lists.
    pub(super) fn validate(&self) -> Result<(), ContentError> {
        self.check_ships()?;
        self.check_strategy_cards()?;
        self.check_factions()?;
        self.check_laws_and_technologies()?;
        self.check_agendas()?;
        self.check_action_cards()?;
        Ok(())
    }

    /// The ship classes: their count, ids, names, values and the one transported class.
    fn check_ships(&self) -> Result<(), ContentError> {
        const F: &str = "ships.json";
        list_size(F, "ships", "classes", &self.ships, [1, MAX_CLASSES])?;
        check_entries(F, &self.ships, |i, s| {
            if s.reinforcements > 1000 {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "reinforcements",
                    format!("{} is out of range: 0 to 1000", s.reinforcements),
                ));
            }
            if let Some(m) = s.movement.filter(|&m| m == 0 || m > MAX_MOVE) {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "move",
                    format!(
                        "{m} is out of range: 1 to {MAX_MOVE} (a class that cannot move has no `move`)"
                    ),
                ));
            }
            if s.capacity > MAX_CAPACITY {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "capacity",
                    format!("{} is out of range: 0 to {MAX_CAPACITY}", s.capacity),
                ));
            }
            if s.dice == 0 || s.dice > MAX_DICE {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "dice",
                    format!("{} is out of range: 1 to {MAX_DICE}", s.dice),
                ));
            }
            if !s.locked && i > 0 && self.ships[i - 1].locked {
                return Err(ContentError::invalid(
                    F,
                    &s.id,
                    "locked",
                    format!(
                        "'{}' is locked and listed before it: locked classes come after every class that is not, so that a game without them keeps the other classes' indices",
                        self.ships[i - 1].id
                    ),
                ));
            }
            Ok(())
        })?;
        let carried: Vec<&str> = self
            .ships
            .iter()
            .filter(|s| s.movement.is_none())
            .map(|s| s.id.as_str())
            .collect();
        if carried.len() > 1 {
            return Err(ContentError::invalid(
                F,
                carried[1],
                "move",
                format!(
                    "missing, but only one class may lack a move value (it is transported within capacity, LRR 95); classes without one: {}",
                    carried.join(", ")
                ),
            ));
        }
        Ok(())
    }

    /// The strategy cards: their count, ids, initiatives and effects.
    fn check_strategy_cards(&self) -> Result<(), ContentError> {
        const C: &str = "strategy_cards.json";
        let cards = &self.strategy_cards;
        list_size(C, "strategy_cards", "cards", cards, [1, MAX_CARDS])?;
        let mut initiatives = Vec::new();
        check_entries(C, cards, |_, c| {
            if initiatives.contains(&c.initiative) {
                return Err(ContentError::invalid(
                    C,
                    &c.id,
                    "initiative",
                    format!("{} is used by another card", c.initiative),
                ));
            }
            initiatives.push(c.initiative);
            at_most_16(C, &c.id, "secondary_cost", c.secondary_cost)?;
            for (field, list) in [("primary", &c.primary), ("secondary", &c.secondary)] {
                if list.len() > 8 {
                    return Err(ContentError::invalid(
                        C,
                        &c.id,
                        field,
                        format!("{} effects, but an ability has 0 to 8", list.len()),
                    ));
                }
                for e in list {
                    match *e {
                        EffectSpec::Gain { tokens } if tokens == 0 || tokens > 16 => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                format!("a gain of {tokens} tokens is out of range: 1 to 16"),
                            ));
                        }
                        EffectSpec::Buy {
                            influence_per_token,
                        } if influence_per_token == 0 || influence_per_token > 100 => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                format!(
                                    "a buy's influence_per_token of {influence_per_token} is out of range: 1 to 100"
                                ),
                            ));
                        }
                        EffectSpec::FreeSecondaries if field == "secondary" => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                "free_secondaries chooses who resolves the secondary: only a primary has it",
                            ));
                        }
                        EffectSpec::Structures { count } if count > 100 => {
                            return Err(ContentError::invalid(
                                C,
                                &c.id,
                                field,
                                format!("{count} structures is out of range: 0 to 100"),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// The factions: ids, names, starting fleets, abilities and their classes.
    fn check_factions(&self) -> Result<(), ContentError> {
        const FA: &str = "factions.json";
        check_entries(FA, &self.factions, |_, f| {
            at_most_16(FA, &f.id, "fleet_limit_bonus", f.fleet_limit_bonus)?;
            at_most_16(FA, &f.id, "research_tokens", f.research_tokens)?;
            at_most_16(FA, &f.id, "status_phase_tokens", f.status_phase_tokens)?;
            at_most_16(FA, &f.id, "quash", f.quash)?;
            for card in &f.free_secondaries {
                if !self.strategy_cards.iter().any(|c| &c.id == card) {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "free_secondaries",
                        format!(
                            "unknown strategy card '{card}'; known: {}",
                            ids(&self.strategy_cards)
                        ),
                    ));
                }
            }
            if f.abilities.len() > 4 {
                return Err(ContentError::invalid(
                    FA,
                    &f.id,
                    "abilities",
                    format!("{} abilities, but a faction has 0 to 4", f.abilities.len()),
                ));
            }
            for c in &f.abilities {
                check_ability(FA, &f.id, c)?;
            }
            for (class, &n) in &f.starting_fleet {
                let Some(s) = self.ships.iter().find(|s| &s.id == class) else {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "starting_fleet",
                        format!("unknown ship class '{class}'; known: {}", ids(&self.ships)),
                    ));
                };
                if n > s.reinforcements {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "starting_fleet",
                        format!(
                            "{n} {class} but only {} exist (0 to {} allowed)",
                            s.reinforcements, s.reinforcements
                        ),
                    ));
                }
            }
            self.check_unlocks(FA, &f.id, &f.unlocks)?;
            self.check_moves(FA, &f.id, &f.moves)?;
            if let Some(forge) = &f.star_forge {
                at_most_16(
                    FA,
                    &f.id,
                    "star_forge.strategy_tokens",
                    forge.strategy_tokens,
                )?;
                self.check_class(FA, &f.id, "star_forge.with", &forge.with)?;
                if forge.place.is_empty() || forge.place.len() > MAX_CLASSES {
                    return Err(ContentError::invalid(
                        FA,
                        &f.id,
                        "star_forge.place",
                        format!(
                            "{} choices, but a Star Forge has 1 to {MAX_CLASSES}",
                            forge.place.len()
                        ),
                    ));
                }
                for placed in &forge.place {
                    self.check_class(FA, &f.id, "star_forge.place", &placed.class)?;
                    if placed.count == 0 || placed.count > 16 {
                        return Err(ContentError::invalid(
                            FA,
                            &f.id,
                            "star_forge.place",
                            format!("{} {} is out of range: 1 to 16", placed.count, placed.class),
                        ));
                    }
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// The laws and the technologies: counts, ids, names and what technologies unlock.
    fn check_laws_and_technologies(&self) -> Result<(), ContentError> {
        const L: &str = "laws.json";
        list_size(L, "laws", "laws", &self.laws, [0, MAX_LAWS])?;
        check_entries(L, &self.laws, |_, l| {
            if let Some(m) = l.fleet_pool_max {
                at_most_16(L, &l.id, "fleet_pool_max", m)?;
            }
            Ok(())
        })?;
        const T: &str = "technologies.json";
        check_entries(T, &self.technologies, |_, t| {
            at_most_16(T, &t.id, "status_phase_tokens", t.status_phase_tokens)?;
            self.check_unlocks(T, &t.id, &t.unlocks)?;
            at_most_16(T, &t.id, "activation_fleet_loss", t.activation_fleet_loss)?;
            if let Some(c) = &t.ability {
                check_ability(T, &t.id, c)?;
            }
            if t.excess_fighters > 2 {
                return Err(ContentError::invalid(
                    T,
                    &t.id,
                    "excess_fighters",
                    format!(
                        "{} is out of range: 0 to 2 (halves of a ship)",
                        t.excess_fighters
                    ),
                ));
            }
            self.check_moves(T, &t.id, &t.moves)?;
            Ok(())
        })?;
        Ok(())
    }

    /// The agendas: their count, ids, names and effects.
    fn check_agendas(&self) -> Result<(), ContentError> {
        const A: &str = "agendas.json";
        list_size(A, "agendas", "agendas", &self.agendas, [0, MAX_AGENDAS])?;
        check_entries(A, &self.agendas, |_, a| {
            if a.elect_player && a.elect_strategy_card {
                return Err(ContentError::invalid(
                    A,
                    &a.id,
                    "elect_strategy_card",
                    "an agenda elects a player or a strategy card, not both",
                ));
            }
            let elects = a.elect_player || a.elect_strategy_card;
            let unused: &[(&str, &Vec<AgendaEffect>)] = if elects {
                &[("for", &a.for_), ("against", &a.against)]
            } else {
                &[("elected", &a.elected)]
            };
            if let Some((field, _)) = unused.iter().find(|(_, list)| !list.is_empty()) {
                return Err(ContentError::invalid(
                    A,
                    &a.id,
                    field,
                    if elects {
                        "an Elect agenda has only `elected` effects"
                    } else {
                        "a For/Against agenda has no `elected` effects"
                    },
                ));
            }
            for (field, list) in [
                ("for", &a.for_),
                ("against", &a.against),
                ("elected", &a.elected),
            ] {
                if list.len() > 8 {
                    return Err(ContentError::invalid(
                        A,
                        &a.id,
                        field,
                        format!("{} effects, but an outcome has 0 to 8", list.len()),
                    ));
                }
                for e in list {
                    self.check_agenda_effect(a, field, e)?;
                }
            }
            Ok(())
        })?;
        Ok(())
    }

    /// The action cards: their count, ids, names, copies and windows.
    fn check_action_cards(&self) -> Result<(), ContentError> {
        const AC: &str = "action_cards.json";
        list_size(
            AC,
            "action_cards",
            "action cards",
            &self.action_cards,
            [0, MAX_ACTION_CARDS],
        )?;
        check_entries(AC, &self.action_cards, |_, c| {
            if c.copies == 0 || c.copies > 16 {
                return Err(ContentError::invalid(
                    AC,
                    &c.id,
                    "copies",
                    format!("{} is out of range: 1 to 16", c.copies),
                ));
            }
            let fits = match c.effect {
                CardEffect::Gain { tokens } => {
                    if tokens == 0 || tokens > 16 {
                        return Err(ContentError::invalid(
                            AC,
                            &c.id,
                            "effect",
                            format!("a gain of {tokens} tokens is out of range: 1 to 16"),
                        ));
                    }
                    c.window != Window::StartOfCombatRound
                }
                CardEffect::RemoveTacticToken
                | CardEffect::RemoveBoardToken
                | CardEffect::PlaceOthersToken => c.window == Window::Action,
                CardEffect::SkilledRetreat => c.window == Window::StartOfCombatRound,
                CardEffect::OthersPlaceToken => c.window == Window::AfterAgendaRevealed,
            };
            if !fits {
                return Err(ContentError::invalid(
                    AC,
                    &c.id,
                    "window",
                    "this effect cannot be played in that window",
                ));
            }
            Ok(())
        })?;
        Ok(())
    }

    /// One agenda effect's values are in range and its law exists.
    fn check_agenda_effect(
        &self,
        agenda: &Agenda,
        field: &'static str,
        effect: &AgendaEffect,
    ) -> Result<(), ContentError> {
        const A: &str = "agendas.json";
        let bad = |why: String| Err(ContentError::invalid(A, &agenda.id, field, why));
        let elect_player = agenda.elect_player;
        match effect {
            AgendaEffect::EachGains { tokens, .. }
            | AgendaEffect::EachReturns { tokens, .. }
            | AgendaEffect::AgainstVotersReturn { tokens }
                if *tokens == 0 || *tokens > 16 =>
            {
                bad(format!("{tokens} tokens is out of range: 1 to 16"))
            }
            AgendaEffect::Standardize {
                tactic,
                fleet,
                strategy,
            } if u32::from(*tactic) + u32::from(*fleet) + u32::from(*strategy) > 16 => bad(
                format!("{tactic} + {fleet} + {strategy} tokens is more than the 16 a player owns"),
            ),
            AgendaEffect::AgainstVotersReturn { .. } if field != "against" => bad(
                "against_voters_return applies to those who voted Against: only `against` has it".into(),
            ),
            AgendaEffect::ReturnPerPrerequisite if !elect_player => bad(
                "return_per_prerequisite applies to the elected player: only an Elect Player agenda has it"
                    .into(),
            ),
            AgendaEffect::AdditionalAction if !elect_player => bad(
                "additional_action goes to the elected player: only an Elect Player agenda has it".into(),
            ),
            AgendaEffect::SecondaryForAll if !agenda.elect_strategy_card => bad(
                "secondary_for_all needs an elected strategy card: only an Elect Strategy Card agenda has it"
                    .into(),
            ),
            AgendaEffect::Standardize { .. } if !elect_player => bad(
                "standardize applies to the elected player: only an Elect Player agenda has it"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// `class` names a ship class.
    fn check_class(
        &self,
        file: &'static str,
        id: &str,
        field: &'static str,
        class: &str,
    ) -> Result<(), ContentError> {
        if self.class(class).is_none() {
            return Err(ContentError::invalid(
                file,
                id,
                field,
                format!("unknown ship class '{class}'; known: {}", ids(&self.ships)),
            ));
        }
        Ok(())
    }

    /// A `moves` table names ship classes and gives each a move value of 1 to [`MAX_MOVE`].
    fn check_moves(
        &self,
        file: &'static str,
        id: &str,
        moves: &BTreeMap<String, u8>,
    ) -> Result<(), ContentError> {
        for (class, &m) in moves {
            self.check_class(file, id, "moves", class)?;
            if m == 0 || m > MAX_MOVE {
                return Err(ContentError::invalid(
                    file,
                    id,
                    "moves",
                    format!("{class}: {m} is out of range: 1 to {MAX_MOVE}"),
                ));
            }
        }
        Ok(())
    }

    /// Every class an `unlocks` list names is a locked ship class.
    fn check_unlocks(
        &self,
        file: &'static str,
        id: &str,
        unlocks: &[String],
    ) -> Result<(), ContentError> {
        for class in unlocks {
            self.check_class(file, id, "unlocks", class)?;
            if !self.ships.iter().any(|s| &s.id == class && s.locked) {
                return Err(ContentError::invalid(
                    file,
                    id,
                    "unlocks",
                    format!("'{class}' is not locked: every player may produce it already"),
                ));
            }
        }
        Ok(())
    }
}

//! Ship (pilot) and upgrade cards as data: the JSON format, its validation, and the built-in sample set.

use coffer_core::check_content_id;
use serde::{Deserialize, Serialize};

pub use coffer_core::ContentError;

/// The built-in sample set (`data/ships.json`), embedded at build time.
pub const BUILTIN: &str = include_str!("../data/ships.json");

/// Most attack dice a weapon may roll.
pub const MAX_ATTACK_DICE: u8 = 6;
/// Most defence dice (agility) a ship may roll.
pub const MAX_AGILITY: u8 = 4;
/// Most upgrades one ship may carry.
pub const MAX_UPGRADES: usize = 7;
/// Most ships one player may field.
pub const MAX_SHIPS_PER_PLAYER: usize = 4;
/// Highest initiative a pilot may print (huge ships reach 8).
pub const MAX_INITIATIVE: u8 = 8;
/// Most hull a pilot may print.
pub const MAX_HULL: u8 = 40;
/// Most charges, Force, shields or energy one card may print.
pub const MAX_CHARGE: u8 = 20;

/// A printed charge value with its recurring symbols (negative: negative recurring, C7).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Charge {
    /// The printed limit.
    pub value: u8,
    /// Recurring symbols: positive recovers that many per End Phase, negative loses that many.
    #[serde(default)]
    pub recurs: i8,
}

/// Ship base size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// Small base.
    Small,
    /// Medium base.
    Medium,
    /// Large base.
    Large,
    /// Huge ship (epic): energy, recurring shields.
    Huge,
}

impl Size {
    /// In words: "a small ship".
    pub fn name(self) -> &'static str {
        match self {
            Size::Small => "a small ship",
            Size::Medium => "a medium ship",
            Size::Large => "a large ship",
            Size::Huge => "a huge ship",
        }
    }
}

/// Difficulty colour of a maneuver or an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Color {
    /// Blue: removes one stress (maneuvers only).
    Blue,
    /// White: no cost.
    White,
    /// Red: the ship gains a stress token (a huge ship with energy loses one energy instead, C10).
    Red,
    /// Purple: costs one Force (C8).
    Purple,
}

impl Color {
    /// In words: "white".
    pub fn name(self) -> &'static str {
        match self {
            Color::Blue => "blue",
            Color::White => "white",
            Color::Red => "red",
            Color::Purple => "purple",
        }
    }
}

/// Upgrade slot type; torpedo, missile and device upgrades can be reloaded (C11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slot {
    /// Torpedo (reloadable).
    Torpedo,
    /// Missile (reloadable).
    Missile,
    /// Device (reloadable).
    Device,
    /// Astromech.
    Astromech,
    /// Crew.
    Crew,
    /// Gunner.
    Gunner,
    /// Modification.
    Modification,
    /// Configuration.
    Configuration,
    /// Illicit.
    Illicit,
    /// Title.
    Title,
    /// Talent.
    Talent,
    /// Force power.
    ForcePower,
    /// Cargo (huge ships).
    Cargo,
}

impl Slot {
    /// Whether Reload can recover this upgrade's charges (C11).
    pub fn reloadable(self) -> bool {
        matches!(self, Slot::Torpedo | Slot::Missile | Slot::Device)
    }
}

/// When a card ability may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// During the System Phase, on the ship's turn.
    System,
    /// After the ship reveals its dial, before it executes the maneuver (Activation Phase).
    Reveal,
    /// As the ship's action (Activation Phase).
    Action,
    /// After the ship performs an action (Activation Phase).
    AfterAction,
    /// During the End Phase, before circular tokens are removed.
    End,
}

/// What an ability's cost is paid with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pays {
    /// The card's own standard charges (C3).
    #[default]
    Charges,
    /// The ship's Force, shared by the ship card and every upgrade (C8, C14): a crew's or a pilot's
    /// "spend 1 \[Force\]".
    Force,
    /// A huge ship's energy, spent from the ship card whichever card instructs it (C20): "spend \[energy\]".
    Energy,
}

/// What a card ability does once its cost is paid.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Nothing further is modelled (dropping a bomb...): the charge spent is the point.
    #[default]
    None,
    /// Recover one shield; payable only when a shield is inactive (C3).
    RecoverShield,
    /// Repair one facedown damage card; payable only with a facedown damage card.
    RepairFacedown,
    /// Perform one more action: a white one, treated as red (Poe Dameron's "perform a white action,
    /// treating it as red").
    ExtraAction,
    /// Perform one more action at its own colour (Darth Vader's "After you perform an action, you may
    /// spend 1 \[Force\] to perform an action", C14).
    AnotherAction,
}

impl Effect {
    /// Whether it grants one more action (and so goes with timing `after_action`).
    pub fn grants_action(self) -> bool {
        matches!(self, Effect::ExtraAction | Effect::AnotherAction)
    }
}

/// A card ability: its timing, its cost (the card's own standard charges, or the ship's Force) and its effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ability {
    /// When it may be used.
    pub timing: Timing,
    /// How many charges it spends, of the kind `pays` names.
    #[serde(default = "one")]
    pub cost: u8,
    /// What the cost is paid with: this card's standard charges (the default), or the ship's Force (C14).
    #[serde(default)]
    pub pays: Pays,
    /// What it does.
    #[serde(default)]
    pub effect: Effect,
    /// The ship also gains a disarm token (R2 Astromech).
    #[serde(default)]
    pub disarm: bool,
}

fn one() -> u8 {
    1
}

/// The action bar, reduced to the actions this ruleset models, each with its colour (absent: not on the bar).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ActionBar {
    /// Focus action.
    #[serde(default)]
    pub focus: Option<Color>,
    /// Evade action.
    #[serde(default)]
    pub evade: Option<Color>,
    /// Reload action (C11).
    #[serde(default)]
    pub reload: Option<Color>,
}

/// A pilot: a ship card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pilot {
    /// Unique id used by squads.
    pub id: String,
    /// Printed name.
    pub name: String,
    /// Ship type.
    pub ship: String,
    /// Base size.
    pub size: Size,
    /// Initiative (activation ascending, engagement descending).
    pub initiative: u8,
    /// Primary attack dice.
    pub attack: u8,
    /// Defence dice.
    pub agility: u8,
    /// Hull: damage cards that destroy it.
    pub hull: u8,
    /// Shields (blue); recurring only on huge ships (C9).
    #[serde(default)]
    pub shields: Charge,
    /// Force (purple).
    #[serde(default)]
    pub force: Charge,
    /// Energy (pink), huge ships only (C10).
    #[serde(default)]
    pub energy: Charge,
    /// Standard charges (gold) on the ship card.
    #[serde(default)]
    pub charges: Charge,
    /// "This card's charge cannot be recovered" (C11, K3.6).
    #[serde(default)]
    pub unrecoverable: bool,
    /// Action bar.
    #[serde(default)]
    pub actions: ActionBar,
    /// The pilot ability paid with the ship card's charges.
    #[serde(default)]
    pub ability: Option<Ability>,
}

/// An upgrade card.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Upgrade {
    /// Unique id used by squads.
    pub id: String,
    /// Printed name.
    pub name: String,
    /// Slot type.
    pub slot: Slot,
    /// Standard charges (gold), kept on this upgrade card (C5).
    #[serde(default)]
    pub charges: Charge,
    /// "This card's charge cannot be recovered".
    #[serde(default)]
    pub unrecoverable: bool,
    /// Shield capacity it adds to the ship's shield track (C5).
    #[serde(default)]
    pub shields: Charge,
    /// Force capacity it adds to the ship's Force track (C5, C8).
    #[serde(default)]
    pub force: Charge,
    /// Energy capacity it adds to a huge ship's energy track (C5, C10).
    #[serde(default)]
    pub energy: Charge,
    /// Attack dice of its ordnance attack (spends one of its charges when it has charges).
    #[serde(default)]
    pub attack: Option<u8>,
    /// Ability paid with its charges.
    #[serde(default)]
    pub ability: Option<Ability>,
    /// May only be equipped on a huge ship.
    #[serde(default)]
    pub huge_only: bool,
}

/// A set of cards: every pilot and upgrade a squad may name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Content {
    /// Pilots.
    pub pilots: Vec<Pilot>,
    /// Upgrades.
    pub upgrades: Vec<Upgrade>,
}

/// The list every content error names: the card content (the embedded `data/ships.json`, or a
/// configuration's `content`).
const LIST: &str = "card content";

fn bad(entry: &str, field: &'static str, reason: impl Into<String>) -> ContentError {
    ContentError::invalid(LIST, entry, field, reason)
}

fn check_charge(
    entry: &str,
    field: &'static str,
    c: Charge,
    signed: bool,
) -> Result<(), ContentError> {
    if c.value > MAX_CHARGE {
        return Err(bad(
            entry,
            field,
            format!("a limit of {}; a card prints 0-{MAX_CHARGE}", c.value),
        ));
    }
    if c.recurs.unsigned_abs() > c.value {
        return Err(bad(
            entry,
            field,
            format!(
                "{} recurring symbols on a limit of {}: at most as many symbols as the limit",
                c.recurs, c.value
            ),
        ));
    }
    if !signed && c.recurs < 0 {
        return Err(bad(
            entry,
            field,
            format!(
                "negative recurrence {}: only standard charges recur negatively",
                c.recurs
            ),
        ));
    }
    Ok(())
}

fn check_ability(entry: &str, a: Option<Ability>, charges: Charge) -> Result<(), ContentError> {
    let Some(a) = a else { return Ok(()) };
    if matches!(a.pays, Pays::Force | Pays::Energy) {
        // The ship's Force or energy is known only once a squad is built: `state` checks the ship has
        // enough.
        let what = if a.pays == Pays::Force {
            "Force"
        } else {
            "energy"
        };
        if a.cost == 0 || a.cost > MAX_CHARGE {
            return Err(bad(
                entry,
                "ability.cost",
                format!("a cost of {} {what}: a card prints 1-{MAX_CHARGE}", a.cost),
            ));
        }
    } else if a.cost == 0 || a.cost > charges.value {
        return Err(bad(
            entry,
            "ability.cost",
            format!(
                "a cost of {}: the card's {} charges allow 1-{}",
                a.cost, charges.value, charges.value
            ),
        ));
    }
    if a.effect.grants_action() != (a.timing == Timing::AfterAction) {
        return Err(bad(
            entry,
            "ability.effect",
            "extra_action and another_action go with timing after_action, and only they",
        ));
    }
    Ok(())
}

/// The first pilot or upgrade entry that cannot be read, named by its id (or its position).
fn name_the_entry(value: &serde_json::Value) -> Option<ContentError> {
    fn first<T: serde::de::DeserializeOwned>(
        value: &serde_json::Value,
        list: &str,
        what: &str,
    ) -> Option<ContentError> {
        let entries = value.get(list)?.as_array()?;
        entries.iter().enumerate().find_map(|(n, entry)| {
            let e = serde_json::from_value::<T>(entry.clone()).err()?;
            let id = entry.get("id").and_then(|id| id.as_str());
            let entry = id.map_or_else(|| format!("{what} {n}"), |id| format!("{what} '{id}'"));
            Some(ContentError::parse(LIST, format!("{entry}: {e}")))
        })
    }
    first::<Pilot>(value, "pilots", "pilot")
        .or_else(|| first::<Upgrade>(value, "upgrades", "upgrade"))
}

impl Content {
    /// The built-in sample set, parsed and validated once per process.
    ///
    /// # Errors
    /// Only if the embedded file is broken (a test guards it).
    pub fn builtin() -> Result<&'static Content, ContentError> {
        static BUILT: std::sync::OnceLock<Result<Content, ContentError>> =
            std::sync::OnceLock::new();
        BUILT
            .get_or_init(|| Content::from_json(BUILTIN))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Parses and validates content.
    ///
    /// # Errors
    /// [`ContentError`] naming the entry and field.
    pub fn from_json(json: &str) -> Result<Content, ContentError> {
        let parse = |e: serde_json::Error| ContentError::parse(LIST, e);
        let value: serde_json::Value = serde_json::from_str(json).map_err(parse)?;
        let content = match serde_json::from_value::<Content>(value.clone()) {
            Ok(content) => content,
            Err(e) => return Err(name_the_entry(&value).unwrap_or_else(|| parse(e))),
        };
        content.validate()?;
        Ok(content)
    }

    /// Checks every entry.
    ///
    /// # Errors
    /// The first [`ContentError`].
    pub fn validate(&self) -> Result<(), ContentError> {
        // Pilots and upgrades are two lists, each with its own ids.
        let mut ids = Vec::new();
        for (i, p) in self.pilots.iter().enumerate() {
            check_content_id(LIST, i, &p.id, &mut ids)?;
            let e = p.id.as_str();
            if p.name.is_empty() {
                return Err(bad(e, "name", "empty name"));
            }
            if p.hull == 0 || p.hull > MAX_HULL {
                return Err(bad(
                    e,
                    "hull",
                    format!("hull {}; a pilot prints 1-{MAX_HULL}", p.hull),
                ));
            }
            if p.initiative > MAX_INITIATIVE {
                return Err(bad(
                    e,
                    "initiative",
                    format!(
                        "initiative {}; a pilot prints 0-{MAX_INITIATIVE}",
                        p.initiative
                    ),
                ));
            }
            if p.attack > MAX_ATTACK_DICE {
                return Err(bad(
                    e,
                    "attack",
                    format!("{} dice; a pilot prints 0-{MAX_ATTACK_DICE}", p.attack),
                ));
            }
            if p.agility > MAX_AGILITY {
                return Err(bad(
                    e,
                    "agility",
                    format!("{} dice; a pilot prints 0-{MAX_AGILITY}", p.agility),
                ));
            }
            check_charge(e, "shields", p.shields, false)?;
            check_charge(e, "force", p.force, false)?;
            check_charge(e, "energy", p.energy, false)?;
            check_charge(e, "charges", p.charges, true)?;
            let huge = p.size == Size::Huge;
            if p.shields.recurs != 0 && !huge {
                return Err(bad(
                    e,
                    "shields.recurs",
                    "only huge ships have recurring shields (C9)",
                ));
            }
            if p.energy.value != 0 && !huge {
                return Err(bad(e, "energy", "only huge ships have energy (C10)"));
            }
            if p.unrecoverable && p.charges.value == 0 {
                return Err(bad(e, "unrecoverable", "the card has no standard charge"));
            }
            check_ability(e, p.ability, p.charges)?;
        }
        ids.clear();
        for (i, u) in self.upgrades.iter().enumerate() {
            check_content_id(LIST, i, &u.id, &mut ids)?;
            let e = u.id.as_str();
            if u.name.is_empty() {
                return Err(bad(e, "name", "empty name"));
            }
            check_charge(e, "charges", u.charges, true)?;
            check_charge(e, "force", u.force, false)?;
            if u.shields.recurs != 0 {
                return Err(bad(
                    e,
                    "shields.recurs",
                    "only a huge ship's card has recurring shields (C9)",
                ));
            }
            // An upgrade's recurring energy symbols are printed but do nothing: energy recovers only per the
            // ship card (C10), which `state` reads alone.
            check_charge(e, "shields", u.shields, false)?;
            check_charge(e, "energy", u.energy, false)?;
            if u.unrecoverable && u.charges.value == 0 {
                return Err(bad(e, "unrecoverable", "the card has no standard charge"));
            }
            if let Some(d) = u.attack
                && (d == 0 || d > MAX_ATTACK_DICE)
            {
                return Err(bad(
                    e,
                    "attack",
                    format!("{d} dice; a weapon rolls 1-{MAX_ATTACK_DICE}"),
                ));
            }
            check_ability(e, u.ability, u.charges)?;
        }
        Ok(())
    }

    /// The pilot with this id.
    pub fn pilot(&self, id: &str) -> Option<&Pilot> {
        self.pilots.iter().find(|p| p.id == id)
    }

    /// The upgrade with this id.
    pub fn upgrade(&self, id: &str) -> Option<&Upgrade> {
        self.upgrades.iter().find(|u| u.id == id)
    }
}

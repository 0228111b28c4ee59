//! The state of a `charges` game: ships with their cards and kernel handles, the attack in progress, the
//! configuration, and how a squad is set up on the kernel's ledger.

use crate::content::{
    Ability, ActionBar, Color, Content, ContentError, MAX_SHIPS_PER_PLAYER, MAX_UPGRADES, Pays,
    Size, Slot,
};
use coffer_core::{
    AmountId, AmountSpec, Cause, Key, Kind, Ledger, Owner, PermanentId, Recurrence, Scope,
    SetupError, TrackId, TrackSpec,
};
use serde::{Deserialize, Serialize};

/// Kernel kinds used by this ruleset.
pub mod kind {
    use coffer_core::Kind;
    /// Shield track (blue), one per ship.
    pub const SHIELD: Kind = Kind(1);
    /// Force track (purple), one per ship.
    pub const FORCE: Kind = Kind(2);
    /// Energy track (pink), huge ships.
    pub const ENERGY: Kind = Kind(3);
    /// Standard charges (gold) of one card; subject `ship * 16 + card`.
    pub const CHARGE: Kind = Kind(4);
    /// Focus tokens (circular, removed at the End Phase).
    pub const FOCUS: Kind = Kind(5);
    /// Evade tokens (circular).
    pub const EVADE: Kind = Kind(6);
    /// Disarm tokens (circular).
    pub const DISARM: Kind = Kind(7);
    /// Stress tokens (not circular: kept at the End Phase).
    pub const STRESS: Kind = Kind(8);
    /// Facedown damage cards.
    pub const FACEDOWN: Kind = Kind(9);
    /// Faceup damage cards.
    pub const FACEUP: Kind = Kind(10);
    /// A ship's turn in the current phase (exhausted once it has had it; readies at every phase end).
    pub const TURN: Kind = Kind(11);
    /// A card's ability (exhausted once used; readies at the end of the round).
    pub const USED: Kind = Kind(12);
    /// A player's End Phase (exhausted once the player is done; readies at the end of the round).
    pub const DONE: Kind = Kind(13);
}

/// The phases of a round, in order; the kernel clock's phase number is the discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Phase {
    /// Each player plans a maneuver for each of their ships.
    Planning = 0,
    /// Ships in ascending initiative use System abilities.
    System = 1,
    /// Ships in ascending initiative reveal, execute their maneuver and perform an action.
    Activation = 2,
    /// Ships in descending initiative attack.
    Engagement = 3,
    /// End-Phase abilities, then the round's upkeep and the win check.
    End = 4,
}

impl Phase {
    /// Every phase, in order.
    pub const ALL: [Phase; 5] = [
        Phase::Planning,
        Phase::System,
        Phase::Activation,
        Phase::Engagement,
        Phase::End,
    ];

    /// The phase of a kernel clock phase number (the End Phase for anything past it).
    #[inline]
    pub fn from_number(n: u32) -> Phase {
        match n {
            0 => Phase::Planning,
            1 => Phase::System,
            2 => Phase::Activation,
            3 => Phase::Engagement,
            _ => Phase::End,
        }
    }

    /// Its number on the kernel clock and in the vocabulary.
    #[inline]
    pub fn number(self) -> u16 {
        self as u16
    }

    /// Its name, as the rulebook writes it ("Activation Phase").
    pub fn name(self) -> &'static str {
        match self {
            Phase::Planning => "Planning Phase",
            Phase::System => "System Phase",
            Phase::Activation => "Activation Phase",
            Phase::Engagement => "Engagement Phase",
            Phase::End => "End Phase",
        }
    }

    /// Whether ships take turns in it one by one (System, Activation, Engagement).
    #[inline]
    pub fn has_ship_turns(self) -> bool {
        matches!(self, Phase::System | Phase::Activation | Phase::Engagement)
    }
}

/// Most rounds `max_rounds` may ask for.
pub const MAX_ROUNDS: u32 = 1000;

/// The subject of a card's resources: `ship * 16 + card`.
pub fn card_subject(ship: usize, card: usize) -> u32 {
    (ship * 16 + card) as u32
}

/// How Force recovers in the End Phase (C8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ForceRecovery {
    /// Current rules: the highest recurring count among the cards granting Force.
    #[default]
    Highest,
    /// Older reading: recover exactly one Force.
    One,
}

/// One ship of a squad: a pilot and its upgrades, by id.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShipChoice {
    /// Pilot id.
    pub pilot: String,
    /// Upgrade ids, in order (card 1, 2, ...).
    #[serde(default)]
    pub upgrades: Vec<String>,
}

impl ShipChoice {
    /// A ship from ids.
    pub fn new(pilot: &str, upgrades: &[&str]) -> ShipChoice {
        ShipChoice {
            pilot: pilot.to_owned(),
            upgrades: upgrades.iter().map(|u| (*u).to_owned()).collect(),
        }
    }
}

/// The game configuration. `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// One squad per player; empty: the built-in squads ([`default_squads`]) for the first players.
    pub squads: Vec<Vec<ShipChoice>>,
    /// Force recovery reading (C8).
    pub force_recovery: ForceRecovery,
    /// The game ends after this many rounds if no player has been eliminated.
    pub max_rounds: u32,
    /// Replaces the built-in cards with inline content.
    pub content: Option<Content>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            squads: Vec::new(),
            force_recovery: ForceRecovery::Highest,
            max_rounds: 12,
            content: None,
        }
    }
}

/// The built-in squads used when `squads` is empty: player 0 Luke Skywalker (Proton Torpedoes, R2
/// Astromech), player 1 Darth Vader (Homing Missiles), player 2 Poe Dameron (Ion Torpedoes, R5 Astromech),
/// player 3 Maarek Stele (Cluster Missiles).
pub fn default_squads() -> Vec<Vec<ShipChoice>> {
    vec![
        vec![ShipChoice::new(
            "luke-skywalker",
            &["proton-torpedoes", "r2-astromech"],
        )],
        vec![ShipChoice::new("darth-vader", &["homing-missiles"])],
        vec![ShipChoice::new(
            "poe-dameron",
            &["ion-torpedoes", "r5-astromech"],
        )],
        vec![ShipChoice::new("maarek-stele", &["cluster-missiles"])],
    ]
}

/// What a card on a ship is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum CardKind {
    /// The ship (pilot) card: card 0.
    Ship,
    /// An upgrade in this slot.
    Upgrade(Slot),
}

/// A card on a ship, with its kernel handles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Card {
    /// Ship card or upgrade.
    pub kind: CardKind,
    /// Its own standard charges (C5), if it has any.
    pub track: Option<TrackId>,
    /// Exhausted once its ability was used this round.
    pub used: PermanentId,
    /// Its ability.
    pub ability: Option<Ability>,
    /// Ordnance attack dice (0: no attack).
    pub attack: u8,
}

/// The planned maneuver's colour (no geometry is modelled).
pub type Maneuver = Color;

/// Where the ship whose turn it is stands in its activation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    /// The maneuver was executed.
    pub executed: bool,
    /// An action was performed.
    pub acted: bool,
    /// One more action is allowed (treated as red, unless `bonus_at_colour`).
    pub bonus: bool,
    /// The extra action keeps its own colour (C14), instead of being a white action treated as red.
    #[serde(default)]
    pub bonus_at_colour: bool,
    /// Whether a device upgrade's ability was used in this turn of the System Phase: one device per
    /// ship (C16), and whether the table may still report that it could not be placed. Written under
    /// the name of the `bool` it replaced.
    #[serde(default, rename = "device_placed")]
    pub device: Device,
    /// The action-bar actions performed in this activation, one bit each (focus 1, evade 2, reload 4): a
    /// ship performs each action once per round (C17).
    #[serde(default)]
    pub performed: u8,
}

/// A ship's one device of its System Phase turn (C16).
///
/// Written as the `bool` it replaced (`false`, `true`) in both formats, so states and hashes of games
/// with no reversed drop are what they were; only [`Device::JustPlaced`] is new (`"just_placed"` in
/// JSON, 2 in the binary form).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// No device placed yet: the ship may place one.
    #[default]
    Free,
    /// A device placed; the ship places no other this System Phase.
    Placed,
    /// A device placed by the game's last action: until anything else happens, the table may report
    /// that it could not be placed, which reverses the drop.
    JustPlaced,
}

impl Device {
    /// Whether the ship has placed its device.
    pub fn placed(self) -> bool {
        self != Device::Free
    }

    const NAMES: [&'static str; 3] = ["free", "placed", "just_placed"];
}

impl Serialize for Device {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let index = *self as u32;
        if serializer.is_human_readable() {
            match self {
                Device::Free => serializer.serialize_bool(false),
                Device::Placed => serializer.serialize_bool(true),
                Device::JustPlaced => serializer.serialize_str(Device::NAMES[2]),
            }
        } else {
            // A unit variant is its index: the bytes `false` and `true` were.
            serializer.serialize_unit_variant("Device", index, Device::NAMES[index as usize])
        }
    }
}

impl<'de> Deserialize<'de> for Device {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Device;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("false, true or \"just_placed\"")
            }
            fn visit_bool<E: serde::de::Error>(self, placed: bool) -> Result<Device, E> {
                Ok(if placed { Device::Placed } else { Device::Free })
            }
            fn visit_str<E: serde::de::Error>(self, name: &str) -> Result<Device, E> {
                match name {
                    "free" => Ok(Device::Free),
                    "placed" => Ok(Device::Placed),
                    "just_placed" => Ok(Device::JustPlaced),
                    other => Err(E::unknown_variant(other, &Device::NAMES)),
                }
            }
            fn visit_u32<E: serde::de::Error>(self, index: u32) -> Result<Device, E> {
                match index {
                    0 => Ok(Device::Free),
                    1 => Ok(Device::Placed),
                    2 => Ok(Device::JustPlaced),
                    other => Err(E::invalid_value(
                        serde::de::Unexpected::Unsigned(u64::from(other)),
                        &self,
                    )),
                }
            }
            fn visit_u64<E: serde::de::Error>(self, index: u64) -> Result<Device, E> {
                self.visit_u32(u32::try_from(index).unwrap_or(u32::MAX))
            }
            fn visit_enum<A: serde::de::EnumAccess<'de>>(
                self,
                data: A,
            ) -> Result<Device, A::Error> {
                use serde::de::VariantAccess as _;
                let (index, variant): (u32, _) = data.variant()?;
                variant.unit_variant()?;
                self.visit_u32(index)
            }
        }
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(Visit)
        } else {
            deserializer.deserialize_enum("Device", &Device::NAMES, Visit)
        }
    }
}

/// A ship in play.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ship {
    /// Owner.
    pub owner: Owner,
    /// Pilot id.
    pub pilot: String,
    /// Its name in labels and texts: the pilot's printed name, numbered ("Academy Pilot #2") when the
    /// same player fields that pilot more than once.
    pub name: String,
    /// The printed name of each card, as `cards` (card 0: the pilot).
    pub card_names: Vec<String>,
    /// Initiative.
    pub initiative: u8,
    /// Primary attack dice.
    pub attack: u8,
    /// Defence dice.
    pub agility: u8,
    /// Hull.
    pub hull: u8,
    /// Huge ship.
    pub huge: bool,
    /// Action bar.
    pub actions: ActionBar,
    /// Card 0 is the ship card, then upgrades.
    pub cards: Vec<Card>,
    /// Shared shield track (C5), if any capacity.
    pub shields: Option<TrackId>,
    /// Shared Force track.
    pub force: Option<TrackId>,
    /// Shared energy track.
    pub energy: Option<TrackId>,
    /// Focus tokens.
    pub focus: AmountId,
    /// Evade tokens.
    pub evade: AmountId,
    /// Disarm tokens.
    pub disarm: AmountId,
    /// Stress tokens.
    pub stress: AmountId,
    /// Facedown damage cards.
    pub facedown: AmountId,
    /// Faceup damage cards.
    pub faceup: AmountId,
    /// Its turn in the current phase.
    pub turn: PermanentId,
    /// Planned maneuver for this round: hidden from everyone but the owner until it is revealed.
    pub planned: Option<Maneuver>,
    /// The dial was revealed and executed this round: the planned maneuver is public.
    pub revealed: bool,
    /// Activation progress.
    pub stage: Stage,
    /// In reserve (C19): on its ship card, out of the play area, with no dial, actions, attacks or active
    /// abilities; still in the game.
    #[serde(default)]
    pub reserve: bool,
}

/// Which dice step an attack is at; its number is the table's step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttackStep {
    /// The attacker enters the attack dice.
    Roll,
    /// The attacker modifies them.
    Modify,
    /// The defender enters the defence dice.
    DefenceRoll,
    /// The defender modifies them.
    DefenceModify,
}

impl AttackStep {
    /// Its number among the steps of the vocabulary.
    #[inline]
    pub fn number(self) -> u16 {
        match self {
            AttackStep::Roll => 0,
            AttackStep::Modify => 1,
            AttackStep::DefenceRoll => 2,
            AttackStep::DefenceModify => 3,
        }
    }

    /// Its name, as the rulebook writes it.
    pub fn name(self) -> &'static str {
        match self {
            AttackStep::Roll => "Roll Attack Dice",
            AttackStep::Modify => "Modify Attack Dice",
            AttackStep::DefenceRoll => "Roll Defence Dice",
            AttackStep::DefenceModify => "Modify Defence Dice",
        }
    }
}

/// The attack in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attack {
    /// Attacking ship.
    pub attacker: u8,
    /// Defending ship.
    pub defender: u8,
    /// 0: the primary weapon; n: the ordnance upgrade card n.
    pub weapon: u8,
    /// Attack dice rolled.
    pub dice: u8,
    /// Step.
    pub step: AttackStep,
    /// Hit results.
    pub hits: u8,
    /// Critical hit results.
    pub crits: u8,
    /// Attack focus results.
    pub focus: u8,
    /// Evade results.
    pub evades: u8,
    /// Defence focus results.
    pub defence_focus: u8,
}

/// The whole state of one game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// Every resource.
    pub ledger: Ledger,
    /// Ships, by index.
    pub ships: Vec<Ship>,
    /// Each player's End Phase permanent.
    pub done: Vec<PermanentId>,
    /// The attack in progress.
    pub attack: Option<Attack>,
    /// Rounds after which the game ends.
    pub max_rounds: u32,
    /// Set once the game is over: the winners (empty: a draw).
    pub winners: Option<Vec<Owner>>,
    /// The ship whose turn it is in the System, Activation or Engagement Phase: what
    /// [`current_ship`](crate::actions::current_ship) derives from the turns, initiatives and damage,
    /// worked out once per applied action instead of at every query. `None` in the other phases and once
    /// the game is over; `check_invariants` checks it against the derivation.
    pub current: Option<u8>,
}

impl State {
    /// Damage cards a ship holds.
    #[inline]
    pub fn damage(&self, ship: usize) -> i64 {
        let s = &self.ships[ship];
        self.ledger.value(s.facedown) + self.ledger.value(s.faceup)
    }

    /// Whether a ship is still in the game (fewer damage cards than hull), in the play area or in reserve.
    #[inline]
    pub fn alive(&self, ship: usize) -> bool {
        self.damage(ship) < i64::from(self.ships[ship].hull)
    }

    /// Whether a ship is in the play area: in the game and not in reserve (C19).
    #[inline]
    pub fn in_play(&self, ship: usize) -> bool {
        !self.ships[ship].reserve && self.alive(ship)
    }

    /// Active charges of an optional track (0 without one).
    #[inline]
    pub fn active(&self, track: Option<TrackId>) -> u32 {
        track.map_or(0, |t| self.ledger.active(t))
    }

    /// Inactive charges of an optional track.
    #[inline]
    pub fn inactive(&self, track: Option<TrackId>) -> u32 {
        track
            .and_then(|t| self.ledger.tracks().get(t.index()))
            .map_or(0, |t| t.inactive())
    }

    /// The current phase.
    #[inline]
    pub fn phase(&self) -> Phase {
        Phase::from_number(self.ledger.clock().phase)
    }

    /// Rounds completed.
    pub fn rounds(&self) -> u32 {
        self.ledger.clock().act
    }
}

fn config_error(e: impl std::fmt::Display) -> SetupError {
    SetupError::Config(e.to_string())
}

fn content_error(e: ContentError) -> SetupError {
    SetupError::Content(e.to_string())
}

/// Ids for an error message: "a, b, c".
fn known<'a>(ids: impl Iterator<Item = &'a str>) -> String {
    ids.collect::<Vec<_>>().join(", ")
}

/// Builds a game: every ship's tracks, tokens and permanents on a new ledger.
///
/// # Errors
/// [`SetupError`] for bad content, an unknown id, a squad that does not fit, or a player count without squad.
pub fn setup(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
    let content = match &config.content {
        Some(c) => {
            c.validate().map_err(content_error)?;
            c
        }
        None => Content::builtin().map_err(content_error)?,
    };
    let defaults;
    let squads = if config.squads.is_empty() {
        defaults = default_squads();
        &defaults[..usize::from(players).min(defaults.len())]
    } else {
        &config.squads[..]
    };
    if squads.len() != usize::from(players) {
        return Err(config_error(format!(
            "`squads`: {} {} given for {players} players; give one squad per player",
            squads.len(),
            if squads.len() == 1 { "squad" } else { "squads" }
        )));
    }
    if config.max_rounds == 0 || config.max_rounds > MAX_ROUNDS {
        return Err(config_error(format!(
            "`max_rounds` is {}: give 1-{MAX_ROUNDS} rounds",
            config.max_rounds
        )));
    }
    let mut ledger = Ledger::new(players, seed);
    let mut ships: Vec<Ship> = Vec::new();
    let policy = match config.force_recovery {
        ForceRecovery::Highest => Recurrence::Max,
        ForceRecovery::One => Recurrence::Fixed(1),
    };
    for (p, squad) in squads.iter().enumerate() {
        let owner = Owner(p as u16);
        if squad.is_empty() || squad.len() > MAX_SHIPS_PER_PLAYER {
            return Err(config_error(format!(
                "`squads`: {owner}'s squad has {} ships; a squad has 1-{MAX_SHIPS_PER_PLAYER}",
                squad.len()
            )));
        }
        for (n, choice) in squad.iter().enumerate() {
            let i = ships.len();
            let pilot = content.pilot(&choice.pilot).ok_or_else(|| {
                config_error(format!(
                    "`squads`: {owner}'s ship {n}: unknown pilot '{}'; known: {}",
                    choice.pilot,
                    known(content.pilots.iter().map(|p| p.id.as_str()))
                ))
            })?;
            if choice.upgrades.len() > MAX_UPGRADES {
                return Err(config_error(format!(
                    "`squads`: {owner}'s ship {n} ('{}') has {} upgrades; a ship carries 0-{MAX_UPGRADES}",
                    choice.pilot,
                    choice.upgrades.len()
                )));
            }
            let huge = pilot.size == Size::Huge;
            let mut upgrades = Vec::new();
            for id in &choice.upgrades {
                let u = content.upgrade(id).ok_or_else(|| {
                    config_error(format!(
                        "`squads`: {owner}'s ship {n} ('{}'): unknown upgrade '{id}'; known: {}",
                        choice.pilot,
                        known(content.upgrades.iter().map(|u| u.id.as_str()))
                    ))
                })?;
                if (u.huge_only || u.energy.value > 0) && !huge {
                    return Err(config_error(format!(
                        "`squads`: {owner}'s ship {n}: upgrade '{id}' goes only on a huge ship, and '{}' is {}",
                        choice.pilot,
                        pilot.size.name()
                    )));
                }
                upgrades.push(u);
            }
            // C14, C20: an ability paid with the Force (or energy) needs a ship whose Force (or energy)
            // capacity can ever pay it.
            let force_capacity = u32::from(pilot.force.value)
                + upgrades
                    .iter()
                    .map(|u| u32::from(u.force.value))
                    .sum::<u32>();
            let energy_capacity = u32::from(pilot.energy.value)
                + upgrades
                    .iter()
                    .map(|u| u32::from(u.energy.value))
                    .sum::<u32>();
            let abilities = std::iter::once((pilot.id.as_str(), pilot.ability))
                .chain(upgrades.iter().map(|u| (u.id.as_str(), u.ability)));
            for (card, ability) in abilities {
                let Some(a) = ability else { continue };
                let (what, capacity) = match a.pays {
                    Pays::Force => ("Force", force_capacity),
                    Pays::Energy => ("energy", energy_capacity),
                    Pays::Charges => continue,
                };
                if u32::from(a.cost) > capacity {
                    return Err(config_error(format!(
                        "`squads`: {owner}'s ship {n} ('{}'): the ability of '{card}' costs {} {what}, and the ship's {what} capacity is {capacity}",
                        choice.pilot, a.cost
                    )));
                }
            }
            let ship_key = |k: Kind| Key::new(owner, k, i as u32);
            // Shared tracks (C5, K3.7): the ship card's printed value, then each upgrade's capacity.
            let shared = |ledger: &mut Ledger,
                          k: Kind,
                          printed: crate::content::Charge,
                          policy: Recurrence,
                          part: fn(&crate::content::Upgrade) -> crate::content::Charge|
             -> Result<Option<TrackId>, SetupError> {
                let total: u32 = u32::from(printed.value)
                    + upgrades
                        .iter()
                        .map(|u| u32::from(part(u).value))
                        .sum::<u32>();
                if total == 0 {
                    return Ok(None);
                }
                let spec = TrackSpec::new(ship_key(k), u32::from(printed.value))
                    .recurring(i32::from(printed.recurs), Scope::Act)
                    .policy(policy);
                let t = ledger.add_track(spec)?;
                for (c, u) in upgrades.iter().enumerate() {
                    let add = part(u);
                    if add.value > 0 {
                        ledger.add_capacity(
                            t,
                            card_subject(i, c + 1),
                            u32::from(add.value),
                            i32::from(add.recurs),
                            Cause::Setup,
                        )?;
                    }
                }
                Ok(Some(t))
            };
            let shields = shared(
                &mut ledger,
                kind::SHIELD,
                pilot.shields,
                Recurrence::Sum,
                |u| u.shields,
            )?;
            let force = shared(&mut ledger, kind::FORCE, pilot.force, policy, |u| u.force)?;
            // C10: energy recovers only per the ship card's recurring symbols.
            let energy = shared(
                &mut ledger,
                kind::ENERGY,
                pilot.energy,
                Recurrence::Fixed(i32::from(pilot.energy.recurs)),
                |u| u.energy,
            )?;
            let mut cards = Vec::new();
            let own = |ledger: &mut Ledger,
                       c: usize,
                       charge: crate::content::Charge,
                       unrecoverable: bool|
             -> Result<Option<TrackId>, SetupError> {
                if charge.value == 0 {
                    return Ok(None);
                }
                let mut spec = TrackSpec::new(
                    Key::new(owner, kind::CHARGE, card_subject(i, c)),
                    u32::from(charge.value),
                )
                .recurring(i32::from(charge.recurs), Scope::Act);
                if unrecoverable {
                    spec = spec.unrecoverable();
                }
                Ok(Some(ledger.add_track(spec)?))
            };
            let track = own(&mut ledger, 0, pilot.charges, pilot.unrecoverable)?;
            let used = ledger.add_permanent(
                Key::new(owner, kind::USED, card_subject(i, 0)),
                Some(Scope::Act),
            )?;
            cards.push(Card {
                kind: CardKind::Ship,
                track,
                used,
                ability: pilot.ability,
                attack: 0,
            });
            for (c, u) in upgrades.iter().enumerate() {
                let track = own(&mut ledger, c + 1, u.charges, u.unrecoverable)?;
                let used = ledger.add_permanent(
                    Key::new(owner, kind::USED, card_subject(i, c + 1)),
                    Some(Scope::Act),
                )?;
                cards.push(Card {
                    kind: CardKind::Upgrade(u.slot),
                    track,
                    used,
                    ability: u.ability,
                    attack: u.attack.unwrap_or(0),
                });
            }
            let circular = |ledger: &mut Ledger, k: Kind| {
                ledger.add_amount(AmountSpec::new(ship_key(k)).lasts(Scope::Act))
            };
            let focus = circular(&mut ledger, kind::FOCUS)?;
            let evade = circular(&mut ledger, kind::EVADE)?;
            let disarm = circular(&mut ledger, kind::DISARM)?;
            let stress = ledger.add_amount(AmountSpec::new(ship_key(kind::STRESS)))?;
            let facedown = ledger.add_amount(AmountSpec::new(ship_key(kind::FACEDOWN)))?;
            let faceup = ledger.add_amount(AmountSpec::new(ship_key(kind::FACEUP)))?;
            let turn = ledger.add_permanent(ship_key(kind::TURN), Some(Scope::Phase))?;
            // Two ships of one player with the same pilot are told apart by a number.
            let same = ships
                .iter()
                .filter(|s| s.owner == owner && s.card_names[0] == pilot.name)
                .count();
            let name = if same == 0 {
                pilot.name.clone()
            } else {
                format!("{} #{}", pilot.name, same + 1)
            };
            let mut card_names = Vec::with_capacity(1 + upgrades.len());
            card_names.push(pilot.name.clone());
            card_names.extend(upgrades.iter().map(|u| u.name.clone()));
            ships.push(Ship {
                reserve: false,
                owner,
                pilot: pilot.id.clone(),
                name,
                card_names,
                initiative: pilot.initiative,
                attack: pilot.attack,
                agility: pilot.agility,
                hull: pilot.hull,
                huge,
                actions: pilot.actions,
                cards,
                shields,
                force,
                energy,
                focus,
                evade,
                disarm,
                stress,
                facedown,
                faceup,
                turn,
                planned: None,
                revealed: false,
                stage: Stage::default(),
            });
        }
    }
    let done = (0..players)
        .map(|p| ledger.add_permanent(Key::new(Owner(p), kind::DONE, 0), Some(Scope::Act)))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(State {
        ledger,
        ships,
        done,
        attack: None,
        max_rounds: config.max_rounds,
        winners: None,
        current: None,
    })
}

#[cfg(test)]
mod tests {
    use super::Device;

    #[test]
    fn a_device_is_written_as_the_bool_it_replaced_so_earlier_states_and_hashes_hold() {
        for (device, placed) in [(Device::Free, false), (Device::Placed, true)] {
            assert_eq!(
                postcard::to_stdvec(&device).unwrap(),
                postcard::to_stdvec(&placed).unwrap()
            );
            assert_eq!(
                serde_json::to_string(&device).unwrap(),
                serde_json::to_string(&placed).unwrap()
            );
            let bytes = postcard::to_stdvec(&placed).unwrap();
            assert_eq!(postcard::from_bytes::<Device>(&bytes).unwrap(), device);
            let text = serde_json::to_string(&placed).unwrap();
            assert_eq!(serde_json::from_str::<Device>(&text).unwrap(), device);
        }
        let just = Device::JustPlaced;
        let bytes = postcard::to_stdvec(&just).unwrap();
        assert_eq!(postcard::from_bytes::<Device>(&bytes).unwrap(), just);
        let text = serde_json::to_string(&just).unwrap();
        assert_eq!(text, "\"just_placed\"");
        assert_eq!(serde_json::from_str::<Device>(&text).unwrap(), just);
        assert!(postcard::from_bytes::<Device>(&[3]).is_err());
        assert!(serde_json::from_str::<Device>("\"dropped\"").is_err());
    }
}

//! The state of a `charges` game: ships with their cards and kernel handles, the attack in progress, and
//! the configuration ([`setup`](crate::setup) sets a game up from it).

use crate::content::{Ability, ActionBar, Color, Content, Slot};
use coffer_core::{AmountId, Ledger, Outcome, Owner, PermanentId, TrackId};
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
    /// [`current_ship`](crate::turn::current_ship) derives from the turns, initiatives and damage,
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

impl State {
    /// The outcome: ongoing, or the winners with each player's surviving ships as their score.
    pub fn outcome(&self) -> Outcome {
        match &self.winners {
            None => Outcome::Ongoing,
            Some(w) => Outcome::Finished {
                winners: w.clone(),
                scores: (0..self.done.len())
                    .map(|p| {
                        (0..self.ships.len())
                            .filter(|&i| self.ships[i].owner.index() == p && self.alive(i))
                            .count() as i64
                    })
                    .collect(),
            },
        }
    }
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

//! Card definitions: the JSON card format and the embedded starter set ([`CardDb`](crate::card_db::CardDb)
//! reads and checks a list of them).

use serde::{Deserialize, Serialize};
use std::fmt;

/// The starter set, embedded at build time.
pub const STARTER_JSON: &str = include_str!("../data/cards.json");

/// Most CP a card's CP cost may ask (each part of a split is at least 1, so a split has at most this many
/// parts).
pub const MAX_CP_COST: u32 = 4;

/// What kind of card it is (S3).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CardType {
    /// A player's Homeworld: in play from the start, in its owner's Planetary Band.
    Homeworld,
    /// A Planetary or Surface Location.
    Location,
    /// A Character: a unit with Character Points.
    Character,
    /// A Ground Unit.
    GroundUnit,
    /// A Spacecraft (Capital or not); deployed to the Space Band.
    Spacecraft,
    /// A Device: a permanent outside the Bands.
    Device,
    /// A Maneuver: played for its effect, then discarded.
    Maneuver,
    /// A Storyline: completing it ends the Act (S12).
    Storyline,
}

impl CardType {
    /// Its name, as the rules write it ("Ground Unit").
    pub fn name(self) -> &'static str {
        match self {
            CardType::Homeworld => "Homeworld",
            CardType::Location => "Location",
            CardType::Character => "Character",
            CardType::GroundUnit => "Ground Unit",
            CardType::Spacecraft => "Spacecraft",
            CardType::Device => "Device",
            CardType::Maneuver => "Maneuver",
            CardType::Storyline => "Storyline",
        }
    }

    /// Whether cards of this type occupy a Position in a Band (and count for S13 (c) when not Capital).
    pub fn is_unit(self) -> bool {
        matches!(
            self,
            CardType::Character | CardType::GroundUnit | CardType::Spacecraft
        )
    }
}

/// Which Band a Location lies in.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LocationKind {
    /// In its owner's Planetary Band.
    Planetary,
    /// In its owner's Surface Band.
    Surface,
}

/// A kind of action a card can perform, to which its aligned ability or its Penalties react (S8).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Deed {
    /// The card was activated to commit its Votes.
    CommitVotes,
    /// The card was activated to add EV.
    AddEv,
    /// The card moved to another Band.
    Move,
    /// The card captured a Surface Location.
    Capture,
}

impl fmt::Display for CardType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Deed {
    /// What the card does, as a verb phrase ("commit Votes").
    pub fn name(self) -> &'static str {
        match self {
            Deed::CommitVotes => "commit Votes",
            Deed::AddEv => "add EV",
            Deed::Move => "move",
            Deed::Capture => "capture",
        }
    }
}

/// A triggered CP change: when the card performs `on`, its CP changes by `cp` (S8).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trigger {
    /// The deed that triggers it.
    pub on: Deed,
    /// How many CP are gained (aligned) or lost (Penalties).
    pub cp: u32,
}

/// What a Maneuver or a "-X CP:" ability does.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Effect {
    /// The player gains N Currency (capped, S1).
    GainCurrency(u32),
    /// Each opponent must pay N Currency: a required cost that drains to 0 (S1).
    OpponentsPay(u32),
    /// N Votes into the player's Resource Pool (S5).
    AddVotes(u32),
    /// N EV into the player's Resource Pool (S6).
    AddEv(u32),
    /// The player draws N cards.
    DrawCards(u32),
    /// A target permanent with CP that an opponent controls loses N CP (not a Morality Penalty).
    DrainCp(u32),
    /// A target permanent with CP that the player controls gains N CP (an aligned effect).
    GainCp(u32),
}

impl Effect {
    /// Whether the effect needs a target card, and whose: `Some(true)` an own card, `Some(false)` an
    /// opponent's card.
    pub fn target(self) -> Option<bool> {
        match self {
            Effect::DrainCp(_) => Some(false),
            Effect::GainCp(_) => Some(true),
            _ => None,
        }
    }

    /// Its name in the card JSON (`gain_currency`).
    pub fn id(self) -> &'static str {
        match self {
            Effect::GainCurrency(_) => "gain_currency",
            Effect::OpponentsPay(_) => "opponents_pay",
            Effect::AddVotes(_) => "add_votes",
            Effect::AddEv(_) => "add_ev",
            Effect::DrawCards(_) => "draw_cards",
            Effect::DrainCp(_) => "drain_cp",
            Effect::GainCp(_) => "gain_cp",
        }
    }
}

impl fmt::Display for Effect {
    /// What it does, in words: "gain 4 Currency", "each opponent pays 2 Currency".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Effect::GainCurrency(n) => write!(f, "gain {n} Currency"),
            Effect::OpponentsPay(n) => write!(f, "each opponent pays {n} Currency"),
            Effect::AddVotes(n) => write!(f, "add {n} Votes"),
            Effect::AddEv(n) => write!(f, "add {n} EV"),
            Effect::DrawCards(1) => f.write_str("draw 1 card"),
            Effect::DrawCards(n) => write!(f, "draw {n} cards"),
            Effect::DrainCp(n) => write!(f, "a card an opponent controls loses {n} CP"),
            Effect::GainCp(n) => write!(f, "a card you control gains {n} CP"),
        }
    }
}

/// A "-X CP: effect" ability printed on a Character (S8).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpAbility {
    /// X: the CP the Character itself pays.
    pub cp: u32,
    /// What it does (untargeted).
    pub effect: Effect,
}

/// A Homeworld's preferred value for one Galactic Factor (S13 (a), S17).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preference {
    /// The factor's name, as in the configuration's factor list.
    pub factor: String,
    /// The preferred value.
    pub value: i64,
}

/// Who receives a Storyline's printed reward (S13 (d)).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RewardTo {
    /// The player who completed it.
    #[default]
    Completer,
    /// Each opponent of the completer.
    EachOpponent,
}

/// One card definition, as written in the card JSON. Fields a type does not use must stay at their
/// defaults; [`CardDb::new`](crate::card_db::CardDb::new) checks that.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardDef {
    /// Unique id, e.g. `"senate_chamber"`.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Card type.
    #[serde(rename = "type")]
    pub card_type: CardType,
    /// Deploy cost in Currency (S3).
    #[serde(default)]
    pub cost: u32,
    /// Printed Votes (S4, S5).
    #[serde(default)]
    pub votes: u32,
    /// Printed income per turn (Homeworld, Locations: S2).
    #[serde(default)]
    pub income: u32,
    /// "Add N EV" (S6).
    #[serde(default)]
    pub ev: u32,
    /// Printed starting CP (S8); `null` for cards without CP.
    #[serde(default)]
    pub cp: Option<u32>,
    /// A Prime Character (Falls instead of being destroyed when Morality Penalties take it to 0).
    #[serde(default)]
    pub prime: bool,
    /// CP a Prime Character has after it Falls (at least 1).
    #[serde(default)]
    pub fallen_cp: u32,
    /// Aligned ability: CP gained when the card performs a deed.
    #[serde(default)]
    pub aligned: Option<Trigger>,
    /// Penalties: CP lost when the card performs a deed (Morality Penalties).
    #[serde(default)]
    pub penalty: Option<Trigger>,
    /// A "-X CP:" ability.
    #[serde(default)]
    pub ability: Option<CpAbility>,
    /// Which Band a Location lies in.
    #[serde(default)]
    pub location: Option<LocationKind>,
    /// A Capital Spacecraft (does not count for S13 (c)).
    #[serde(default)]
    pub capital: bool,
    /// A Fast Maneuver (any player, any main phase).
    #[serde(default)]
    pub fast: bool,
    /// Committed Votes a Maneuver costs (S5).
    #[serde(default)]
    pub vote_cost: u32,
    /// CP a Maneuver costs, split over the player's permanents (S8, K7).
    #[serde(default)]
    pub cp_cost: u32,
    /// A Maneuver only the player in political control may play (S4).
    #[serde(default)]
    pub requires_control: bool,
    /// What a Maneuver does.
    #[serde(default)]
    pub effect: Option<Effect>,
    /// Steps a Storyline needs before it can be completed.
    #[serde(default)]
    pub steps: u32,
    /// EV each Storyline step costs.
    #[serde(default)]
    pub ev_per_step: u32,
    /// SP a Storyline awards when it ends the Act (S13 (d)).
    #[serde(default)]
    pub reward: u32,
    /// Who receives the Storyline's reward.
    #[serde(default)]
    pub reward_to: RewardTo,
    /// A Homeworld's preferred Galactic Factor values (S13 (a)).
    #[serde(default)]
    pub preferred: Vec<Preference>,
}

impl CardDef {
    /// A fast Maneuver: any player may deploy it in any main phase, not only on their own turn.
    pub fn fast_maneuver(&self) -> bool {
        self.card_type == CardType::Maneuver && self.fast
    }
}

pub use coffer_core::ContentError;

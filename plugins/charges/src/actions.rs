//! The actions of a `charges` game: their JSON form and their codes in [`Cause::Action`](coffer_core::Cause).
//! Who may take them is in [`validate`](crate::validate), what they do in [`apply`](crate::apply).

use crate::content::Color;
use serde::{Deserialize, Serialize};

/// Most hits (and, separately, crits) one `suffer_damage` input may carry.
pub const MAX_EFFECT_DAMAGE: u8 = 2;

/// Which charges of a ship an effect names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ChargeRef {
    /// The ship's shared Force track.
    Force,
    /// The ship's shared shield track.
    Shield,
    /// The ship's shared energy track.
    Energy,
    /// The standard charges of card `n` (0: the ship card, 1..: upgrades in squad order).
    Card(u8),
}

/// An action of the ship action bar modelled here (Reload has its own action).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShipAction {
    /// Gain a focus token.
    Focus,
    /// Gain an evade token.
    Evade,
}

/// A player action. JSON: `{"type":"plan","ship":0,"maneuver":"white"}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Planning: set a ship's dial to a maneuver of this colour (purple needs an active Force).
    Plan {
        /// Ship index.
        ship: u8,
        /// Maneuver colour.
        maneuver: Color,
    },
    /// Use card `card`'s ability, paying its standard charges (C2, C3).
    UseAbility {
        /// Ship index.
        ship: u8,
        /// Card index (0: ship card).
        card: u8,
    },
    /// Activation: reveal and execute the planned maneuver.
    Execute {
        /// Ship index.
        ship: u8,
    },
    /// Activation: perform a focus or evade action (purple costs one Force, red gives stress).
    Perform {
        /// Ship index.
        ship: u8,
        /// Which action.
        action: ShipAction,
    },
    /// Activation: the Reload action (C11).
    Reload {
        /// Ship index.
        ship: u8,
        /// The torpedo, missile or device upgrade to reload.
        card: u8,
    },
    /// Ends the ship's turn in the System, Activation or Engagement Phase.
    Pass {
        /// Ship index.
        ship: u8,
    },
    /// Engagement: attack an enemy ship with the primary weapon (0) or an ordnance upgrade.
    Attack {
        /// Attacking ship.
        ship: u8,
        /// Defending ship.
        target: u8,
        /// 0: primary weapon; n: upgrade card n (spends one of its charges).
        weapon: u8,
    },
    /// The attacker's dice results (an input: no dice physics).
    AttackDice {
        /// Hit results.
        hits: u8,
        /// Critical hit results.
        crits: u8,
        /// Focus results.
        focus: u8,
    },
    /// The defender's dice results.
    DefenceDice {
        /// Evade results.
        evades: u8,
        /// Focus results.
        focus: u8,
    },
    /// At a dice step: spend one Force to change one focus result to a hit (attack) or evade (defence).
    SpendForce,
    /// At a dice step: spend a focus token to change every focus result.
    SpendFocus,
    /// At the defence dice step: spend an evade token to add an evade result.
    SpendEvade,
    /// Ends the current dice step, or the player's End Phase.
    Done,
    /// An effect: the ship suffers damage (shields first, hits before crits, C9).
    SufferDamage {
        /// Ship index.
        ship: u8,
        /// Hit damage.
        hits: u8,
        /// Critical damage.
        crits: u8,
    },
    /// An effect: deal the ship a damage card, ignoring shields (C9).
    DealDamageCard {
        /// Ship index.
        ship: u8,
        /// Faceup (critical) or facedown.
        faceup: bool,
    },
    /// An effect: the ship gains a stress token (a huge ship then spends an energy to remove it, C10).
    GainStress {
        /// Ship index.
        ship: u8,
    },
    /// An effect: the ship loses one charge of these (C2).
    Lose {
        /// Ship index.
        ship: u8,
        /// Which charges.
        charges: ChargeRef,
    },
    /// An effect: the ship recovers one charge of these (C4).
    Recover {
        /// Ship index.
        ship: u8,
        /// Which charges.
        charges: ChargeRef,
    },
    /// An effect: a ship in the play area is placed in reserve (C19).
    PlaceInReserve {
        /// Ship index.
        ship: u8,
    },
    /// An effect: a ship in reserve is placed in the play area (C19), with no dial this round.
    Deploy {
        /// Ship index.
        ship: u8,
    },
    /// The device the ship just dropped with card `card` could not be placed (positions are the
    /// table's): play is reversed to before it was placed, its charge and the ship's device placement
    /// of this System Phase restored (C16). Only right after the drop.
    DeviceNotPlaced {
        /// Ship index.
        ship: u8,
        /// The device upgrade.
        card: u8,
    },
}

coffer_core::action_codes!(Action {
    Plan => "Plan",
    UseAbility => "Use Ability",
    Execute => "Execute",
    Perform => "Perform",
    Reload => "Reload",
    Pass => "Pass",
    Attack => "Attack",
    AttackDice => "Attack Dice",
    DefenceDice => "Defence Dice",
    SpendForce => "Spend Force",
    SpendFocus => "Spend Focus",
    SpendEvade => "Spend Evade",
    Done => "Done",
    SufferDamage => "Suffer Damage",
    DealDamageCard => "Deal Damage Card",
    GainStress => "Gain Stress",
    Lose => "Lose",
    Recover => "Recover",
    PlaceInReserve => "Place in Reserve",
    Deploy => "Deploy",
    DeviceNotPlaced => "Device Not Placed",
});

//! The actions of a `charges` game: their JSON form, who may take them when (one validation shared by
//! `apply` and legal-action enumeration), and what they do on the ledger.

use crate::content::{
    Ability, Color, Effect, MAX_AGILITY, MAX_ATTACK_DICE, MAX_UPGRADES, Pays, Slot, Timing,
};
use crate::state::{Attack, AttackStep, Card, CardKind, Device, Phase, Ship, Stage, State, kind};
use crate::words::note;
use coffer_core::{ActionError, Cause, Key, Owner, Part, Refusal, Scope, TrackId};
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

/// The name of each action, by its code in [`Cause::Action`]: the vocabulary's `actions`.
pub const ACTION_NAMES: [&str; 21] = [
    "Plan",
    "Use Ability",
    "Execute",
    "Perform",
    "Reload",
    "Pass",
    "Attack",
    "Attack Dice",
    "Defence Dice",
    "Spend Force",
    "Spend Focus",
    "Spend Evade",
    "Done",
    "Suffer Damage",
    "Deal Damage Card",
    "Gain Stress",
    "Lose",
    "Recover",
    "Place in Reserve",
    "Deploy",
    "Device Not Placed",
];

impl Action {
    /// Its code in [`Cause::Action`] (its name: [`ACTION_NAMES`]).
    pub fn code(&self) -> u16 {
        match self {
            Action::Plan { .. } => 0,
            Action::UseAbility { .. } => 1,
            Action::Execute { .. } => 2,
            Action::Perform { .. } => 3,
            Action::Reload { .. } => 4,
            Action::Pass { .. } => 5,
            Action::Attack { .. } => 6,
            Action::AttackDice { .. } => 7,
            Action::DefenceDice { .. } => 8,
            Action::SpendForce => 9,
            Action::SpendFocus => 10,
            Action::SpendEvade => 11,
            Action::Done => 12,
            Action::SufferDamage { .. } => 13,
            Action::DealDamageCard { .. } => 14,
            Action::GainStress { .. } => 15,
            Action::Lose { .. } => 16,
            Action::Recover { .. } => 17,
            Action::PlaceInReserve { .. } => 18,
            Action::Deploy { .. } => 19,
            Action::DeviceNotPlaced { .. } => 20,
        }
    }
}

/// Who is to act now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Turn {
    /// The game is over.
    Over,
    /// Planning: every player with unplanned ships.
    Planning,
    /// The ship whose turn it is in the System, Activation or Engagement Phase.
    Ship(usize),
    /// The attacker of the attack in progress.
    Attacker(usize),
    /// The defender of the attack in progress.
    Defender(usize),
    /// End Phase: every player not yet done.
    End,
}

/// Why an action is refused: the reason and the values it names, without formatting, so that
/// validation (also run for every candidate of a legal-action list) allocates nothing.
/// [`Why::error`] writes it in words when an action is actually refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Why {
    /// The rules forbid it now, for this reason.
    Illegal(&'static str),
    /// It is another player's to take, for this reason.
    NotYours(&'static str),
    /// The player is not in the game.
    NoSuchPlayer,
    /// No ship with this number.
    NoSuchShip(u8),
    /// The ship is destroyed.
    Destroyed(u8),
    /// The ship belongs to another player.
    NotYourShip(u8),
    /// The ship does not have the turn.
    NotItsTurn(u8),
    /// It is done only in `phase`; `what` says what ("maneuvers are executed").
    WrongPhase {
        /// What is done then.
        what: &'static str,
        /// When.
        phase: Phase,
    },
    /// Something about the ship: "{ship} {what}".
    Ship(u8, &'static str),
    /// No card with this number on the ship.
    NoSuchCard {
        /// The ship.
        ship: u8,
        /// The card asked for.
        card: u8,
    },
    /// Something about a card on a ship: "{card} on {ship} {what}".
    Card {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// What is wrong.
        what: &'static str,
    },
    /// A card with too few active charges for its ability (C3).
    CardCharges {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// Its active charges.
        active: u32,
        /// The ability's cost.
        cost: u8,
    },
    /// A ship with too little active Force for a card's ability paid with the Force (C14).
    ForceCost {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// The ship's active Force.
        active: u32,
        /// The ability's cost.
        cost: u8,
    },
    /// A huge ship with too little active energy for a card's ability paid with energy (C20).
    EnergyCost {
        /// The ship.
        ship: u8,
        /// The card.
        card: u8,
        /// The ship's active energy.
        active: u32,
        /// The ability's cost.
        cost: u8,
    },
    /// The ship has none of these charges.
    NoCharges(u8, ChargeRef),
    /// Something about a ship's charges: "{charges} {what}".
    Charges(u8, ChargeRef, &'static str),
    /// A friendly ship as the target of an attack.
    FriendlyTarget(u8),
    /// More dice results than dice.
    TooManyResults {
        /// Results given.
        results: u16,
        /// Dice rolled.
        dice: u8,
        /// Defence dice rather than attack dice.
        defence: bool,
    },
    /// An effect's damage out of its range.
    EffectDamage {
        /// Hits given.
        hits: u8,
        /// Crits given.
        crits: u8,
    },
}

impl Why {
    /// Whether the action is another player's to take (rather than forbidden to everyone now).
    pub fn theirs(self) -> bool {
        matches!(
            self,
            Why::NotYours(_) | Why::NoSuchPlayer | Why::NotYourShip(_) | Why::NotItsTurn(_)
        )
    }

    /// The refusal of `p`'s action in `s`, in words.
    pub fn error(self, s: &State, p: Owner) -> ActionError {
        let reason = self.text(s, p);
        if self.theirs() {
            ActionError::NotYourTurn { player: p, reason }
        } else {
            ActionError::Illegal(reason)
        }
    }

    /// The reason in words, naming ships and cards as the rulebook does.
    pub fn text(self, s: &State, p: Owner) -> String {
        let ship = |i: u8| ship_name(s, usize::from(i));
        match self {
            Why::Illegal(why) | Why::NotYours(why) => why.to_owned(),
            Why::NoSuchPlayer => format!(
                "{p} is not in this game: it has players p0-p{}",
                s.done.len().saturating_sub(1)
            ),
            Why::NoSuchShip(i) => format!(
                "ship {i} does not exist: this game has ships 0-{}",
                s.ships.len().saturating_sub(1)
            ),
            Why::Destroyed(i) => format!("{} is destroyed", ship(i)),
            Why::NotYourShip(i) => format!("{} is not {p}'s ship", ship(i)),
            Why::NotItsTurn(i) => match turn(s) {
                Turn::Ship(j) => {
                    format!("it is the turn of {}, not of {}", ship_name(s, j), ship(i))
                }
                Turn::Attacker(_) | Turn::Defender(_) => match s.attack {
                    Some(at) => format!(
                        "{} must wait: the attack of {} on {} is being resolved",
                        ship(i),
                        ship(at.attacker),
                        ship(at.defender)
                    ),
                    None => format!("{} does not have the turn", ship(i)),
                },
                _ => format!("{} does not have the turn", ship(i)),
            },
            Why::WrongPhase { what, phase } => format!(
                "{what} in the {}; this is the {}",
                phase.name(),
                s.phase().name()
            ),
            Why::Ship(i, what) => format!("{} {what}", ship(i)),
            Why::NoSuchCard { ship: i, card } => {
                let cards = s.ships.get(usize::from(i)).map_or(1, |sh| sh.cards.len());
                if cards <= 1 {
                    format!(
                        "{} has no card {card}: its only card is 0, the pilot card",
                        ship(i)
                    )
                } else {
                    format!(
                        "{} has no card {card}: its cards are 0-{} (0 is the pilot card)",
                        ship(i),
                        cards - 1
                    )
                }
            }
            Why::Card {
                ship: i,
                card,
                what,
            } => format!("{} {what}", card_on(s, i, card)),
            Why::CardCharges {
                ship: i,
                card,
                active,
                cost,
            } => format!(
                "{} has {active} active {}; its ability costs {cost} (C3)",
                card_on(s, i, card),
                plural(active, "charge", "charges")
            ),
            Why::ForceCost {
                ship: i,
                card,
                active,
                cost,
            } => format!(
                "{} has {active} active Force; the ability of {} costs {cost} Force (C14)",
                ship(i),
                card_on(s, i, card)
            ),
            Why::EnergyCost {
                ship: i,
                card,
                active,
                cost,
            } => format!(
                "{} has {active} active energy; the ability of {} costs {cost} energy, spent from the ship card (C20)",
                ship(i),
                card_on(s, i, card)
            ),
            Why::NoCharges(i, r) => match r {
                ChargeRef::Force => format!("{} has no Force", ship(i)),
                ChargeRef::Shield => format!("{} has no shields", ship(i)),
                ChargeRef::Energy => format!("{} has no energy", ship(i)),
                ChargeRef::Card(c) => {
                    let cards = s.ships.get(usize::from(i)).map_or(0, |sh| sh.cards.len());
                    if usize::from(c) < cards {
                        format!("{} has no charges", card_on(s, i, c))
                    } else {
                        Why::NoSuchCard { ship: i, card: c }.text(s, p)
                    }
                }
            },
            Why::Charges(i, r, what) => {
                let charges = match r {
                    ChargeRef::Force => "Force".to_owned(),
                    ChargeRef::Shield => "shields".to_owned(),
                    ChargeRef::Energy => "energy".to_owned(),
                    ChargeRef::Card(0) => "charges".to_owned(),
                    ChargeRef::Card(c) => format!("{} charges", card_name(s, i, c)),
                };
                format!("{} {charges} {what}", ship(i))
            }
            Why::FriendlyTarget(i) => {
                format!("{} is friendly: an attack targets an enemy ship", ship(i))
            }
            Why::TooManyResults {
                results,
                dice,
                defence,
            } => format!(
                "{results} results for {dice} {} dice: give at most {dice}",
                if defence { "defence" } else { "attack" }
            ),
            Why::EffectDamage { hits, crits } => format!(
                "{hits} {} and {crits} {}: an effect deals 0-{MAX_EFFECT_DAMAGE} hits and 0-{MAX_EFFECT_DAMAGE} crits, at least one in all",
                plural(u32::from(hits), "hit", "hits"),
                plural(u32::from(crits), "crit", "crits")
            ),
        }
    }
}

/// A ship with its owner, for texts: "p0's Luke Skywalker" (or "ship 7" for a number past the ships).
pub fn ship_name(s: &State, i: usize) -> String {
    match s.ships.get(i) {
        Some(sh) => format!("{}'s {}", sh.owner, sh.name),
        None => format!("ship {i}"),
    }
}

/// A card's printed name ("card 3" past the ship's cards).
fn card_name(s: &State, ship: u8, card: u8) -> String {
    s.ships
        .get(usize::from(ship))
        .and_then(|sh| sh.card_names.get(usize::from(card)))
        .map_or_else(|| format!("card {card}"), Clone::clone)
}

/// A card with its ship, for texts: "Proton Torpedoes on p0's Luke Skywalker", "the pilot card of p0's
/// Luke Skywalker".
fn card_on(s: &State, ship: u8, card: u8) -> String {
    if card == 0 {
        format!("the pilot card of {}", ship_name(s, usize::from(ship)))
    } else {
        format!(
            "{} on {}",
            card_name(s, ship, card),
            ship_name(s, usize::from(ship))
        )
    }
}

/// `one` or `many` after a count of `n`.
fn plural(n: u32, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

fn illegal(reason: &'static str) -> Why {
    Why::Illegal(reason)
}

fn not_yours(reason: &'static str) -> Why {
    Why::NotYours(reason)
}

/// The ship whose turn it is in `phase`: lowest initiative first (System, Activation), highest first
/// (Engagement); ties go to the lower player, then the lower ship index.
pub fn current_ship(s: &State) -> Option<usize> {
    let engagement = s.phase() == Phase::Engagement;
    let mut best: Option<(usize, (i16, u16))> = None;
    for (i, ship) in s.ships.iter().enumerate() {
        let init = i16::from(ship.initiative);
        let key = (if engagement { -init } else { init }, ship.owner.0);
        // The lowest key among the ships still to act, the lower index on a tie: a ship that cannot
        // beat the best so far need not be looked at further.
        if best.is_some_and(|(_, k)| key >= k) {
            continue;
        }
        if s.ledger.is_exhausted(ship.turn) || !s.in_play(i) {
            continue;
        }
        // C19: a ship deployed from reserve after planning has no dial, so no Activation turn.
        if ship.planned.is_none() && s.phase() == Phase::Activation {
            continue;
        }
        best = Some((i, key));
    }
    best.map(|(i, _)| i)
}

/// What [`State::current`] holds: the [`current_ship`] in the System, Activation and Engagement Phases
/// of a game not over, `None` otherwise.
pub fn ship_to_act(s: &State) -> Option<u8> {
    if s.winners.is_none() && s.phase().has_ship_turns() {
        current_ship(s).map(|i| i as u8)
    } else {
        None
    }
}

/// Who is to act.
pub fn turn(s: &State) -> Turn {
    if s.winners.is_some() {
        return Turn::Over;
    }
    match s.phase() {
        Phase::Planning => Turn::Planning,
        Phase::System | Phase::Activation | Phase::Engagement => match s.attack {
            Some(a) if matches!(a.step, AttackStep::Roll | AttackStep::Modify) => {
                Turn::Attacker(usize::from(a.attacker))
            }
            Some(a) => Turn::Defender(usize::from(a.defender)),
            None => s.current.map_or(Turn::Over, |i| Turn::Ship(usize::from(i))),
        },
        Phase::End => Turn::End,
    }
}

fn track_of(s: &State, ship: usize, r: ChargeRef) -> Option<TrackId> {
    let sh = &s.ships[ship];
    match r {
        ChargeRef::Force => sh.force,
        ChargeRef::Shield => sh.shields,
        ChargeRef::Energy => sh.energy,
        ChargeRef::Card(c) => sh.cards.get(usize::from(c)).and_then(|c| c.track),
    }
}

fn ship_ok(s: &State, ship: u8) -> Result<usize, Why> {
    let i = usize::from(ship);
    if i >= s.ships.len() {
        return Err(Why::NoSuchShip(ship));
    }
    if !s.alive(i) {
        return Err(Why::Destroyed(ship));
    }
    Ok(i)
}

/// The ship exists and is in play, `phase` is the current phase (`what` is done in it), the ship has the
/// turn, and `p` owns it.
fn my_ship_turn(
    s: &State,
    t: Turn,
    p: Owner,
    ship: u8,
    phase: Phase,
    what: &'static str,
) -> Result<usize, Why> {
    let i = ship_ok(s, ship)?;
    if s.phase() != phase {
        return Err(Why::WrongPhase { what, phase });
    }
    if t != Turn::Ship(i) {
        return Err(Why::NotItsTurn(ship));
    }
    if s.ships[i].owner != p {
        return Err(Why::NotYourShip(ship));
    }
    Ok(i)
}

/// Whether ship `i` may perform an action now (its action step, or an extra action an ability gave it).
fn action_available(s: &State, i: usize) -> Result<(), Why> {
    let (ship, stage) = (i as u8, s.ships[i].stage);
    if !stage.executed {
        return Err(Why::Ship(
            ship,
            "has not executed its maneuver yet: actions come after it",
        ));
    }
    if stage.acted && !stage.bonus {
        return Err(Why::Ship(ship, "has already performed its action"));
    }
    // C15: a stressed ship performs no action at all, white, blue or purple ones included.
    if stressed(s, i) {
        return Err(Why::Ship(
            ship,
            "is stressed: a stressed ship cannot perform actions (C15)",
        ));
    }
    Ok(())
}

/// The bit of [`Stage::performed`] for an action-bar action: `Some` focus or evade, `None` reload.
fn bar_bit(action: Option<ShipAction>) -> u8 {
    match action {
        Some(ShipAction::Focus) => 1,
        Some(ShipAction::Evade) => 2,
        None => 4,
    }
}

/// Whether ship `sh` has an action on its bar, of a colour `fits` accepts, that it has not performed this
/// round (C17).
fn left_to_perform(sh: &Ship, fits: impl Fn(Color) -> bool) -> bool {
    let bar = sh.actions;
    [
        (bar.focus, bar_bit(Some(ShipAction::Focus))),
        (bar.evade, bar_bit(Some(ShipAction::Evade))),
        (bar.reload, bar_bit(None)),
    ]
    .into_iter()
    .any(|(colour, bit)| colour.is_some_and(&fits) && sh.stage.performed & bit == 0)
}

/// C17: ship `i` has not performed this action-bar action (`Some` focus or evade, `None` reload) this round.
fn not_performed(s: &State, i: usize, action: Option<ShipAction>) -> Result<(), Why> {
    if s.ships[i].stage.performed & bar_bit(action) == 0 {
        return Ok(());
    }
    let what = match action {
        Some(ShipAction::Focus) => {
            "has already performed the focus action this round: each action once per round (C17)"
        }
        Some(ShipAction::Evade) => {
            "has already performed the evade action this round: each action once per round (C17)"
        }
        None => {
            "has already performed the Reload action this round: each action once per round (C17)"
        }
    };
    Err(Why::Ship(i as u8, what))
}

fn stressed(s: &State, ship: usize) -> bool {
    s.ledger.value(s.ships[ship].stress) > 0
}

/// Checks an action without changing anything: the one rule book for both `apply` and `legal_actions`.
///
/// # Errors
/// [`Why`] the action is refused.
pub fn validate(s: &State, p: Owner, a: &Action) -> Result<(), Why> {
    validate_in(s, turn(s), p, a)
}

/// [`validate`] with `t = turn(s)` already worked out (legal-action enumeration computes it once).
fn validate_in(s: &State, t: Turn, p: Owner, a: &Action) -> Result<(), Why> {
    if s.winners.is_some() {
        return Err(illegal("the game is over"));
    }
    if p.index() >= s.done.len() {
        return Err(Why::NoSuchPlayer);
    }
    match *a {
        Action::Plan { ship, maneuver } => {
            let i = ship_ok(s, ship)?;
            if t != Turn::Planning {
                return Err(Why::WrongPhase {
                    what: "dials are planned",
                    phase: Phase::Planning,
                });
            }
            let sh = &s.ships[i];
            if sh.owner != p {
                return Err(Why::NotYourShip(ship));
            }
            if sh.planned.is_some() {
                return Err(Why::Ship(ship, "already has a dial planned this round"));
            }
            if sh.reserve {
                return Err(Why::Ship(
                    ship,
                    "is in reserve: a ship in reserve is not assigned a dial (C19)",
                ));
            }
            plan_maneuver(s, i, maneuver)
        }
        Action::UseAbility { ship, card } => {
            let i = ship_ok(s, ship)?;
            let sh = &s.ships[i];
            if sh.reserve {
                return Err(Why::Ship(
                    ship,
                    "is in reserve: the abilities of a ship in reserve are inactive (C19)",
                ));
            }
            let c = sh
                .cards
                .get(usize::from(card))
                .ok_or(Why::NoSuchCard { ship, card })?;
            let ab = c.ability.ok_or(Why::Card {
                ship,
                card,
                what: "has no ability",
            })?;
            match ab.timing {
                Timing::System => {
                    my_ship_turn(s, t, p, ship, Phase::System, "System abilities are used")?;
                }
                Timing::Reveal | Timing::Action | Timing::AfterAction => {
                    my_ship_turn(s, t, p, ship, Phase::Activation, "this ability is used")?;
                }
                Timing::End => {
                    if t != Turn::End {
                        return Err(Why::WrongPhase {
                            what: "End Phase abilities are used",
                            phase: Phase::End,
                        });
                    }
                    if sh.owner != p {
                        return Err(Why::NotYourShip(ship));
                    }
                    if s.ledger.is_exhausted(s.done[p.index()]) {
                        return Err(illegal("you are already done with this End Phase"));
                    }
                }
            }
            ability_usable(s, i, card, c, ab)
        }
        Action::Execute { ship } => {
            let i = my_ship_turn(s, t, p, ship, Phase::Activation, "maneuvers are executed")?;
            if s.ships[i].stage.executed {
                return Err(Why::Ship(ship, "has already executed its maneuver"));
            }
            Ok(())
        }
        Action::Perform { ship, action } => {
            let i = my_ship_turn(s, t, p, ship, Phase::Activation, "actions are performed")?;
            action_available(s, i)?;
            not_performed(s, i, Some(action))?;
            perform_color(s, i, action)
        }
        Action::Reload { ship, card } => {
            let i = my_ship_turn(s, t, p, ship, Phase::Activation, "actions are performed")?;
            action_available(s, i)?;
            not_performed(s, i, None)?;
            reload_color(s, i)?;
            reload_card(s, i, card)
        }
        Action::Pass { ship } => {
            let phase = s.phase();
            if !phase.has_ship_turns() {
                return Err(illegal(
                    "a ship passes only on its turn in the System, Activation or Engagement Phase",
                ));
            }
            let i = my_ship_turn(s, t, p, ship, phase, "ships pass")?;
            if phase == Phase::Activation && !s.ships[i].stage.executed {
                return Err(Why::Ship(
                    ship,
                    "must execute its maneuver before it passes",
                ));
            }
            Ok(())
        }
        Action::Attack {
            ship,
            target,
            weapon,
        } => {
            let i = my_ship_turn(s, t, p, ship, Phase::Engagement, "attacks are made")?;
            let sh = &s.ships[i];
            if s.ledger.value(sh.disarm) > 0 {
                return Err(Why::Ship(
                    ship,
                    "is disarmed: a disarmed ship cannot attack",
                ));
            }
            attack_target(s, p, target)?;
            attack_weapon(s, i, weapon)
        }
        Action::AttackDice { hits, crits, focus } => {
            let Turn::Attacker(i) = t else {
                return Err(illegal("no attack awaits its attack dice"));
            };
            let at = s
                .attack
                .ok_or(illegal("no attack awaits its attack dice"))?;
            if at.step != AttackStep::Roll {
                return Err(illegal("the attack dice are already rolled"));
            }
            if s.ships[i].owner != p {
                return Err(not_yours(
                    "the attacking ship's owner enters the attack dice",
                ));
            }
            let results = u16::from(hits) + u16::from(crits) + u16::from(focus);
            if results > u16::from(at.dice) {
                return Err(Why::TooManyResults {
                    results,
                    dice: at.dice,
                    defence: false,
                });
            }
            Ok(())
        }
        Action::DefenceDice { evades, focus } => {
            let Turn::Defender(i) = t else {
                return Err(illegal("no defence awaits its defence dice"));
            };
            let at = s
                .attack
                .ok_or(illegal("no defence awaits its defence dice"))?;
            if at.step != AttackStep::DefenceRoll {
                return Err(illegal("the defence dice are already rolled"));
            }
            if s.ships[i].owner != p {
                return Err(not_yours(
                    "the defending ship's owner enters the defence dice",
                ));
            }
            let results = u16::from(evades) + u16::from(focus);
            let dice = s.ships[i].agility;
            if results > u16::from(dice) {
                return Err(Why::TooManyResults {
                    results,
                    dice,
                    defence: true,
                });
            }
            Ok(())
        }
        Action::SpendForce | Action::SpendFocus | Action::SpendEvade => {
            let (i, at) = modify_step(s, p)?;
            let sh = &s.ships[i];
            let ship = i as u8;
            let attacking = at.step == AttackStep::Modify;
            let focus_results = if attacking {
                at.focus
            } else {
                at.defence_focus
            };
            match a {
                Action::SpendForce => {
                    if focus_results == 0 {
                        return Err(illegal(
                            "no focus result to change: the Force cannot be spent (C3)",
                        ));
                    }
                    if s.active(sh.force) == 0 {
                        return Err(Why::Ship(ship, "has no active Force (C3)"));
                    }
                }
                Action::SpendFocus => {
                    if focus_results == 0 {
                        return Err(illegal(
                            "no focus result to change: a focus token cannot be spent",
                        ));
                    }
                    if s.ledger.value(sh.focus) == 0 {
                        return Err(Why::Ship(ship, "has no focus token"));
                    }
                }
                _ => {
                    if attacking {
                        return Err(illegal(
                            "evade tokens are spent while defending, not while attacking",
                        ));
                    }
                    if s.ledger.value(sh.evade) == 0 {
                        return Err(Why::Ship(ship, "has no evade token"));
                    }
                }
            }
            Ok(())
        }
        Action::Done => match t {
            Turn::End => {
                if s.ledger.is_exhausted(s.done[p.index()]) {
                    return Err(illegal("you are already done with this End Phase"));
                }
                Ok(())
            }
            _ if s.attack.is_none() => Err(illegal(
                "there is nothing to be done with: no dice step is open and this is not the End Phase",
            )),
            _ => modify_step(s, p).map(|_| ()),
        },
        Action::SufferDamage { ship, hits, crits } => {
            effect_turn(s, t, p)?;
            ship_ok(s, ship)?;
            if hits > MAX_EFFECT_DAMAGE || crits > MAX_EFFECT_DAMAGE || hits + crits == 0 {
                return Err(Why::EffectDamage { hits, crits });
            }
            Ok(())
        }
        Action::DealDamageCard { ship, .. } | Action::GainStress { ship } => {
            effect_turn(s, t, p)?;
            ship_ok(s, ship).map(|_| ())
        }
        Action::Lose { ship, charges } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            track_of(s, i, charges).ok_or(Why::NoCharges(ship, charges))?;
            Ok(())
        }
        Action::PlaceInReserve { ship } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            if s.ships[i].reserve {
                return Err(Why::Ship(ship, "is already in reserve"));
            }
            Ok(())
        }
        Action::Deploy { ship } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            if !s.ships[i].reserve {
                return Err(Why::Ship(ship, "is not in reserve: it is in the play area"));
            }
            Ok(())
        }
        Action::DeviceNotPlaced { ship, card } => device_not_placed(s, p, ship, card),
        Action::Recover { ship, charges } => {
            effect_turn(s, t, p)?;
            let i = ship_ok(s, ship)?;
            let t = track_of(s, i, charges).ok_or(Why::NoCharges(ship, charges))?;
            // K8.2: the kernel's own check of the recovery.
            match s.ledger.can_recover(t, 1) {
                Ok(()) => Ok(()),
                Err(Refusal::Unrecoverable { .. }) => Err(Why::Charges(
                    ship,
                    charges,
                    "cannot be recovered: the card says so (C11)",
                )),
                Err(Refusal::NothingToRecover { .. }) => Err(Why::Charges(
                    ship,
                    charges,
                    "are all active: nothing to recover (C4)",
                )),
                Err(_) => Err(Why::NoCharges(ship, charges)),
            }
        }
    }
}

/// [`validate`] of [`Action::DeviceNotPlaced`]: `p`'s ship just placed the device of `card`, and
/// nothing else happened since (C16).
fn device_not_placed(s: &State, p: Owner, ship: u8, card: u8) -> Result<(), Why> {
    let i = ship_ok(s, ship)?;
    let sh = &s.ships[i];
    if sh.owner != p {
        return Err(Why::NotYourShip(ship));
    }
    let c = sh
        .cards
        .get(usize::from(card))
        .ok_or(Why::NoSuchCard { ship, card })?;
    if c.kind != CardKind::Upgrade(Slot::Device) {
        return Err(Why::Card {
            ship,
            card,
            what: "is not a device upgrade: only a device that could not be placed is reversed (C16)",
        });
    }
    let dropped = s.ledger.is_exhausted(c.used);
    match sh.stage.device {
        Device::JustPlaced if dropped => {}
        Device::JustPlaced => {
            return Err(Why::Card {
                ship,
                card,
                what: "is not the device the ship just placed (C16)",
            });
        }
        Device::Placed if dropped => {
            return Err(Why::Card {
                ship,
                card,
                what: "was placed before the last action: play is reversed only right after the device is dropped, before anything else happens (C16)",
            });
        }
        Device::Placed | Device::Free => {
            return Err(Why::Card {
                ship,
                card,
                what: "was not just placed: there is no drop to reverse (C16)",
            });
        }
    }
    match c.ability {
        Some(ab) if ab.timing == Timing::System && ab.effect == Effect::None => Ok(()),
        _ => Err(Why::Card {
            ship,
            card,
            what: "has an effect beyond placing its device: only a plain drop is reversed (C16)",
        }),
    }
}

/// The part of [`validate`] for using ability `ab` of card `card` (`c`) of ship `i` once the timing's
/// turn and phase hold: the ship's progress in its activation, the ability unused this round, its cost
/// payable (C3) and its effect able to resolve.
fn ability_usable(s: &State, i: usize, card: u8, c: &Card, ab: Ability) -> Result<(), Why> {
    let sh = &s.ships[i];
    let ship = i as u8;
    if c.kind == CardKind::Upgrade(Slot::Device) && sh.stage.device.placed() {
        return Err(Why::Ship(
            ship,
            "has already placed a device this System Phase: a ship places one per System Phase (C16)",
        ));
    }
    match ab.timing {
        Timing::Reveal if sh.stage.executed => {
            return Err(Why::Ship(
                ship,
                "has already revealed its dial: this ability comes before the maneuver",
            ));
        }
        Timing::Action => action_available(s, i)?,
        Timing::AfterAction if !sh.stage.acted || sh.stage.bonus => {
            return Err(Why::Card {
                ship,
                card,
                what: "is used only right after the ship performs its action",
            });
        }
        _ => {}
    }
    // K8.2: the cost `apply` pays, checked by the kernel: the card unused this round, its charges (C3),
    // and a shield to recover when that is the effect.
    let (parts, n) = ability_cost(c, ab, sh);
    if let Err(refused) = s.ledger.check_cost(&parts[..n]) {
        return Err(match refused {
            Refusal::InsufficientCharges { active, .. } if ab.pays == Pays::Force => {
                Why::ForceCost {
                    ship,
                    card,
                    active,
                    cost: ab.cost,
                }
            }
            Refusal::InsufficientCharges { active, .. } if ab.pays == Pays::Energy => {
                Why::EnergyCost {
                    ship,
                    card,
                    active,
                    cost: ab.cost,
                }
            }
            Refusal::InsufficientCharges { active, .. } => Why::CardCharges {
                ship,
                card,
                active,
                cost: ab.cost,
            },
            Refusal::Unrecoverable { .. } => Why::Ship(ship, "cannot recover its shields"),
            Refusal::NothingToRecover { .. } => Why::Ship(
                ship,
                "has every shield active: the ability cannot resolve, so its cost cannot be paid (C3)",
            ),
            _ => Why::Card {
                ship,
                card,
                what: "was already used this round",
            },
        });
    }
    match ab.effect {
        Effect::RecoverShield if sh.shields.is_none() => Err(Why::Ship(
            ship,
            "has every shield active: the ability cannot resolve, so its cost cannot be paid (C3)",
        )),
        Effect::RepairFacedown if s.ledger.value(sh.facedown) == 0 => Err(Why::Ship(
            ship,
            "has no facedown damage card to repair: the ability's cost cannot be paid (C3)",
        )),
        Effect::AnotherAction if stressed(s, i) => Err(Why::Ship(
            ship,
            "is stressed: a stressed ship cannot perform actions, so the ability cannot resolve (C15)",
        )),
        Effect::AnotherAction if !left_to_perform(sh, |_| true) => Err(Why::Ship(
            ship,
            "has performed every action of its bar this round: the ability cannot resolve (C17)",
        )),
        Effect::ExtraAction if stressed(s, i) || !left_to_perform(sh, |c| c == Color::White) => {
            Err(Why::Ship(
                ship,
                "has no white action left to perform as red: it is stressed, or its bar has none it has not performed this round (C17)",
            ))
        }
        _ => Ok(()),
    }
}

/// The cost of using ability `ab` of card `c` on ship `sh`, as kernel parts (the first `n`): the card
/// exhausted for the round, its charges or the ship's Force (C14), and a shield recovered when that is the
/// effect. [`validate`] checks it with `check_cost`; `apply` pays it with `pay_cost`, so both read the same
/// parts.
fn ability_cost(c: &Card, ab: Ability, sh: &Ship) -> ([Part<'static>; 3], usize) {
    let mut parts = [Part::Exhaust(c.used); 3];
    let mut n = 1;
    let paid_from = match ab.pays {
        Pays::Charges => c.track,
        Pays::Force => sh.force,
        Pays::Energy => sh.energy,
    };
    if let Some(t) = paid_from {
        parts[n] = Part::Charges(t, u32::from(ab.cost));
        n += 1;
    }
    if let (Effect::RecoverShield, Some(t)) = (ab.effect, sh.shields) {
        parts[n] = Part::Recover(t, 1);
        n += 1;
    }
    (parts, n)
}

/// The maneuver part of [`validate`] for planning ship `i`: purple needs an active Force (C8).
fn plan_maneuver(s: &State, i: usize, maneuver: Color) -> Result<(), Why> {
    if maneuver == Color::Purple && s.active(s.ships[i].force) == 0 {
        return Err(Why::Ship(
            i as u8,
            "has no active Force: a purple maneuver needs one (C8)",
        ));
    }
    Ok(())
}

/// The action-bar part of [`validate`] for ship `i` performing `action`: on the bar, and its colour payable.
fn perform_color(s: &State, i: usize, action: ShipAction) -> Result<(), Why> {
    let bar = s.ships[i].actions;
    let color = match action {
        ShipAction::Focus => bar
            .focus
            .ok_or(Why::Ship(i as u8, "has no focus action on its action bar"))?,
        ShipAction::Evade => bar
            .evade
            .ok_or(Why::Ship(i as u8, "has no evade action on its action bar"))?,
    };
    check_action_color(s, i, color)
}

/// The action-bar part of [`validate`] for ship `i` reloading: Reload on the bar, its colour payable.
fn reload_color(s: &State, i: usize) -> Result<(), Why> {
    let color = s.ships[i]
        .actions
        .reload
        .ok_or(Why::Ship(i as u8, "has no Reload action on its action bar"))?;
    check_action_color(s, i, color)
}

/// The card part of [`validate`] for ship `i` reloading `card` (C11): a torpedo, missile or device
/// upgrade whose recoverable charge is below its limit.
fn reload_card(s: &State, i: usize, card: u8) -> Result<(), Why> {
    let ship = i as u8;
    let c = s.ships[i]
        .cards
        .get(usize::from(card))
        .ok_or(Why::NoSuchCard { ship, card })?;
    let why = |what| Why::Card { ship, card, what };
    if !matches!(c.kind, CardKind::Upgrade(slot) if slot.reloadable()) {
        return Err(why(
            "cannot be reloaded: only torpedo, missile and device upgrades can (C11)",
        ));
    }
    let t = c.track.ok_or(why("has no charge to reload"))?;
    let t = s
        .ledger
        .track(t)
        .map_err(|_| why("has no charge to reload"))?;
    if t.unrecoverable() {
        return Err(why("has a charge that cannot be recovered (C11)"));
    }
    if t.inactive() == 0 {
        return Err(why(
            "has every charge active: it is at its limit, nothing to reload (C11)",
        ));
    }
    Ok(())
}

/// The target part of [`validate`] for an attack by `p`'s ship: an enemy ship in play.
fn attack_target(s: &State, p: Owner, target: u8) -> Result<(), Why> {
    let t = ship_ok(s, target)?;
    if s.ships[t].owner == p {
        return Err(Why::FriendlyTarget(target));
    }
    if s.ships[t].reserve {
        return Err(Why::Ship(
            target,
            "is in reserve, out of the play area: it cannot be attacked (C19)",
        ));
    }
    Ok(())
}

/// The weapon part of [`validate`] for an attack by ship `i`: the primary weapon (0) or an ordnance card
/// with an active charge.
fn attack_weapon(s: &State, i: usize, weapon: u8) -> Result<(), Why> {
    let sh = &s.ships[i];
    let ship = i as u8;
    if weapon == 0 {
        if sh.attack == 0 {
            return Err(Why::Ship(ship, "has no primary weapon"));
        }
    } else {
        let c = sh
            .cards
            .get(usize::from(weapon))
            .ok_or(Why::NoSuchCard { ship, card: weapon })?;
        if c.attack == 0 {
            return Err(Why::Card {
                ship,
                card: weapon,
                what: "is not a weapon",
            });
        }
        if c.track.is_some() && s.active(c.track) == 0 {
            return Err(Why::Card {
                ship,
                card: weapon,
                what: "has no active charge to attack with (C3)",
            });
        }
    }
    Ok(())
}

fn check_action_color(s: &State, i: usize, color: Color) -> Result<(), Why> {
    let sh = &s.ships[i];
    let ship = i as u8;
    // An extra action is a white one treated as red, unless it keeps its colour (C14).
    let bonus = sh.stage.acted && !sh.stage.bonus_at_colour;
    if bonus && color != Color::White {
        return Err(Why::Ship(
            ship,
            "may take only a white action as its extra action (it is treated as red)",
        ));
    }
    let effective = if bonus { Color::Red } else { color };
    match effective {
        Color::Purple if s.active(sh.force) == 0 => Err(Why::Ship(
            ship,
            "has no active Force: a purple action costs one (C8)",
        )),
        Color::Red if stressed(s, i) => Err(Why::Ship(
            ship,
            "is stressed: a stressed ship cannot perform a red action",
        )),
        _ => Ok(()),
    }
}

fn modify_step(s: &State, p: Owner) -> Result<(usize, Attack), Why> {
    let at = s.attack.ok_or(illegal("no attack is in progress"))?;
    let i = match at.step {
        AttackStep::Modify => usize::from(at.attacker),
        AttackStep::DefenceModify => usize::from(at.defender),
        AttackStep::Roll => return Err(illegal("the attack dice are not entered yet")),
        AttackStep::DefenceRoll => return Err(illegal("the defence dice are not entered yet")),
    };
    if s.ships[i].owner != p {
        return Err(not_yours("the other player modifies these dice"));
    }
    Ok((i, at))
}

fn effect_turn(s: &State, t: Turn, p: Owner) -> Result<(), Why> {
    match t {
        Turn::Ship(i) if s.ships[i].owner == p => Ok(()),
        Turn::Ship(_) => Err(not_yours(
            "effects are entered by the owner of the ship whose turn it is",
        )),
        _ => Err(illegal(
            "effects are entered on a ship's turn in the System, Activation or Engagement Phase, outside an attack",
        )),
    }
}

fn cause(p: Owner, a: &Action) -> Cause {
    Cause::Action {
        player: p,
        code: a.code(),
    }
}

/// C9: one point of damage: an active shield first, else a damage card (faceup for a crit).
fn damage_point(s: &mut State, i: usize, crit: bool, c: Cause) -> Result<(), Refusal> {
    let sh = &s.ships[i];
    if s.active(sh.shields) > 0 {
        if let Some(t) = sh.shields {
            s.ledger.lose_charges(t, 1, c)?;
        }
        return Ok(());
    }
    let card = if crit { sh.faceup } else { sh.facedown };
    s.ledger.gain(card, 1, c)?;
    destroyed_note(s, i, c);
    Ok(())
}

/// The key ship notes are about: the ship's turn permanent, labelled with the ship's name.
#[inline]
fn ship_key(s: &State, i: usize) -> Key {
    Key::new(s.ships[i].owner, kind::TURN, i as u32)
}

/// Notes that ship `i` is destroyed, when a damage card just brought its damage up to its hull.
fn destroyed_note(s: &mut State, i: usize, c: Cause) {
    if s.damage(i) == i64::from(s.ships[i].hull) {
        let key = ship_key(s, i);
        s.ledger.note(key, note::DESTROYED, [0; 3], c);
    }
}

/// C9: suffer damage: hits before crits, each against shields first.
///
/// # Errors
/// A kernel [`Refusal`] (none in a validated action).
pub fn suffer(s: &mut State, i: usize, hits: u8, crits: u8, c: Cause) -> Result<(), Refusal> {
    let key = ship_key(s, i);
    s.ledger.note(
        key,
        note::SUFFERS,
        [i32::from(hits), i32::from(crits), 0],
        c,
    );
    for _ in 0..hits {
        damage_point(s, i, false, c)?;
    }
    for _ in 0..crits {
        damage_point(s, i, true, c)?;
    }
    Ok(())
}

/// Gains one stress; C10: a huge ship then must spend one energy to remove it, if able (automatic).
///
/// # Errors
/// A kernel [`Refusal`] (none in a validated action).
pub fn gain_stress(s: &mut State, i: usize, c: Cause) -> Result<(), Refusal> {
    let sh = &s.ships[i];
    s.ledger.gain(sh.stress, 1, c)?;
    if sh.huge && s.active(sh.energy) > 0 {
        if let Some(e) = sh.energy {
            s.ledger
                .pay_cost(&[Part::Charges(e, 1), Part::Spend(sh.stress, 1)], c)?;
        }
    }
    Ok(())
}

/// C18: after a huge ship recovers energy it must spend one energy for each stress token it has, then
/// removes one stress token for each energy spent (automatic, as C10's).
///
/// # Errors
/// A kernel [`Refusal`] (none in a validated state).
pub fn spend_recovered_energy(s: &mut State, i: usize, c: Cause) -> Result<(), Refusal> {
    let sh = &s.ships[i];
    let (Some(e), true) = (sh.energy, sh.huge) else {
        return Ok(());
    };
    let stress = s.ledger.value(sh.stress);
    let k = u32::try_from(stress.max(0))
        .unwrap_or(0)
        .min(s.active(sh.energy));
    if k > 0 {
        s.ledger.pay_cost(
            &[Part::Charges(e, k), Part::Spend(sh.stress, u64::from(k))],
            c,
        )?;
    }
    Ok(())
}

/// Pays an action's colour: purple spends one Force, red (or an extra action) gains stress.
fn pay_action_color(s: &mut State, i: usize, color: Color, c: Cause) -> Result<(), Refusal> {
    let stage = s.ships[i].stage;
    let effective = if stage.acted && !stage.bonus_at_colour {
        Color::Red
    } else {
        color
    };
    match effective {
        Color::Purple => {
            if let Some(f) = s.ships[i].force {
                s.ledger.spend_charges(f, 1, c)?;
            }
            Ok(())
        }
        Color::Red => gain_stress(s, i, c),
        _ => Ok(()),
    }
}

/// Ship `ship`'s card `card` and its ability, for an action [`validate`] accepted.
fn card_ability(
    s: &State,
    p: Owner,
    ship: u8,
    card: u8,
) -> Result<(usize, Card, Ability), ActionError> {
    let i = usize::from(ship);
    let cd = s.ships[i].cards[usize::from(card)];
    match cd.ability {
        Some(ab) => Ok((i, cd, ab)),
        None => Err(Why::Card {
            ship,
            card,
            what: "has no ability",
        }
        .error(s, p)),
    }
}

fn after_action(stage: &mut Stage) {
    if stage.acted {
        stage.bonus = false;
        stage.bonus_at_colour = false;
    } else {
        stage.acted = true;
    }
}

/// The number of a maneuver colour in notes: the vocabulary's colour values.
fn colour_number(c: Color) -> i32 {
    match c {
        Color::Blue => 0,
        Color::White => 1,
        Color::Red => 2,
        Color::Purple => 3,
    }
}

/// Applies a validated action. Ledger changes first; the ruleset's own fields change last, so a kernel
/// refusal (rolled back by the adapter) leaves everything as it was. Every applied action leaves at least
/// one event that says what happened: the ledger's, or the ruleset's own note.
///
/// # Errors
/// [`ActionError`] in words when the rules refuse it.
pub fn apply(s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
    validate(s, p, a).map_err(|why| why.error(s, p))?;
    let c = cause(p, a);
    // C16: a device just placed can be reported unplaceable only until anything else happens.
    let just_placed = s
        .ships
        .iter()
        .position(|sh| sh.stage.device == Device::JustPlaced);
    match *a {
        Action::Plan { ship, maneuver } => {
            let i = usize::from(ship);
            let key = ship_key(s, i);
            s.ledger
                .note(key, note::PLANNED, [colour_number(maneuver), 0, 0], c);
            s.ships[i].planned = Some(maneuver);
        }
        Action::UseAbility { ship, card } => {
            let (i, cd, ab) = card_ability(s, p, ship, card)?;
            let sh = &s.ships[i];
            let (parts, n) = ability_cost(&cd, ab, sh);
            // K8: the charge, the exhaustion and the recovery are paid whole or not at all.
            s.ledger.pay_cost(&parts[..n], c)?;
            let (facedown, disarm) = (sh.facedown, sh.disarm);
            if ab.effect == Effect::RepairFacedown {
                s.ledger.spend(facedown, 1, c)?;
            }
            if ab.disarm {
                s.ledger.gain(disarm, 1, c)?;
            }
            if ab.effect.grants_action() {
                // The vocabulary's values: 0 a white action treated as red, 1 any action at its colour.
                let at_colour = i32::from(ab.effect == Effect::AnotherAction);
                let key = ship_key(s, i);
                s.ledger.note(key, note::EXTRA_ACTION, [at_colour, 0, 0], c);
            }
            let stage = &mut s.ships[i].stage;
            // C16: using a device upgrade's ability places its device; until anything else happens,
            // the table may report that it could not be placed.
            if cd.kind == CardKind::Upgrade(Slot::Device) {
                stage.device = Device::JustPlaced;
            }
            match (ab.timing, ab.effect) {
                (_, Effect::ExtraAction) => stage.bonus = true,
                (_, Effect::AnotherAction) => {
                    stage.bonus = true;
                    stage.bonus_at_colour = true;
                }
                (Timing::Action, _) => after_action(stage),
                _ => {}
            }
        }
        Action::Execute { ship } => {
            let i = usize::from(ship);
            let sh = &s.ships[i];
            let (stress, force, energy, huge) = (sh.stress, sh.force, sh.energy, sh.huge);
            let planned = sh.planned.unwrap_or(Color::White);
            // C13: a purple maneuver costs one Force; a ship whose Force is gone by now cannot pay it and
            // executes a white [2 straight] instead, as a stressed ship does for a red one (C12).
            let unpaid_purple = planned == Color::Purple && s.active(force) == 0;
            // C12: a stressed ship that would execute a red maneuver executes a white [2 straight]
            // instead, so it gains no stress (and a huge ship spends no energy).
            let stressed_red = planned == Color::Red && stressed(s, i);
            let color = if unpaid_purple || stressed_red {
                Color::White
            } else {
                planned
            };
            // The vocabulary's values: 4 "a white [2 straight] instead of its purple maneuver", 5 "... of
            // its red maneuver".
            let shown = if unpaid_purple {
                4
            } else if stressed_red {
                5
            } else {
                colour_number(planned)
            };
            let key = ship_key(s, i);
            s.ledger.note(key, note::EXECUTED, [shown, 0, 0], c);
            match color {
                Color::Blue => {
                    if s.ledger.value(stress) > 0 {
                        s.ledger.spend(stress, 1, c)?;
                    }
                }
                Color::White => {}
                Color::Purple => {
                    if let Some(f) = force {
                        s.ledger.spend_charges(f, 1, c)?;
                    }
                }
                Color::Red => {
                    // C10: a huge ship with energy loses one energy instead of gaining stress.
                    match energy {
                        Some(e) if huge && s.ledger.active(e) > 0 => {
                            s.ledger.lose_charges(e, 1, c)?;
                        }
                        _ => gain_stress(s, i, c)?,
                    }
                }
            }
            s.ships[i].stage.executed = true;
            s.ships[i].revealed = true;
        }
        Action::Perform { ship, action } => {
            let i = usize::from(ship);
            let sh = &s.ships[i];
            let (color, token) = match action {
                ShipAction::Focus => (sh.actions.focus, sh.focus),
                ShipAction::Evade => (sh.actions.evade, sh.evade),
            };
            pay_action_color(s, i, color.unwrap_or(Color::White), c)?;
            s.ledger.gain(token, 1, c)?;
            s.ships[i].stage.performed |= bar_bit(Some(action));
            after_action(&mut s.ships[i].stage);
        }
        Action::Reload { ship, card } => {
            let i = usize::from(ship);
            let sh = &s.ships[i];
            let color = sh.actions.reload.unwrap_or(Color::White);
            let (track, disarm) = (sh.cards[usize::from(card)].track, sh.disarm);
            pay_action_color(s, i, color, c)?;
            if let Some(t) = track {
                s.ledger.recover_exactly(t, 1, c)?;
            }
            s.ledger.gain(disarm, 1, c)?;
            s.ships[i].stage.performed |= bar_bit(None);
            after_action(&mut s.ships[i].stage);
        }
        Action::Pass { ship } => {
            let i = usize::from(ship);
            let key = ship_key(s, i);
            s.ledger.note(key, note::PASSED, [0; 3], c);
            s.ledger.activate(s.ships[i].turn, c)?;
            s.ships[i].stage = Stage::default();
        }
        Action::Attack {
            ship,
            target,
            weapon,
        } => {
            let i = usize::from(ship);
            let sh = &s.ships[i];
            let card = (weapon != 0).then(|| sh.cards[usize::from(weapon)]);
            let dice = card.map_or(sh.attack, |cd| cd.attack).min(MAX_ATTACK_DICE);
            let (attacker, defender) = (ship_key(s, i), ship_key(s, usize::from(target)));
            let weapon_kind = i32::from(weapon != 0);
            s.ledger.note(
                attacker,
                note::ATTACKS,
                [weapon_kind, i32::from(dice), 0],
                c,
            );
            s.ledger.note(defender, note::DEFENDS, [0; 3], c);
            if let Some(t) = card.and_then(|cd| cd.track) {
                s.ledger.spend_charges(t, 1, c)?;
            }
            s.attack = Some(Attack {
                attacker: ship,
                defender: target,
                weapon,
                dice,
                step: AttackStep::Roll,
                hits: 0,
                crits: 0,
                focus: 0,
                evades: 0,
                defence_focus: 0,
            });
        }
        Action::AttackDice { hits, crits, focus } => {
            if let Some(at) = s.attack {
                let key = ship_key(s, usize::from(at.attacker));
                let args = [i32::from(hits), i32::from(crits), i32::from(focus)];
                s.ledger.note(key, note::ATTACK_DICE, args, c);
            }
            if let Some(at) = s.attack.as_mut() {
                at.hits = hits;
                at.crits = crits;
                at.focus = focus;
                at.step = AttackStep::Modify;
            }
        }
        Action::DefenceDice { evades, focus } => {
            if let Some(at) = s.attack {
                let key = ship_key(s, usize::from(at.defender));
                let args = [i32::from(evades), i32::from(focus), 0];
                s.ledger.note(key, note::DEFENCE_DICE, args, c);
            }
            if let Some(at) = s.attack.as_mut() {
                at.evades = evades.min(MAX_AGILITY);
                at.defence_focus = focus;
                at.step = AttackStep::DefenceModify;
            }
        }
        Action::SpendForce | Action::SpendFocus | Action::SpendEvade => {
            let Some(mut at) = s.attack else {
                return Err(Why::Illegal("no attack is in progress").error(s, p));
            };
            let attacking = at.step == AttackStep::Modify;
            let i = usize::from(if attacking { at.attacker } else { at.defender });
            let key = ship_key(s, i);
            let into = i32::from(!attacking);
            let sh = &s.ships[i];
            match a {
                Action::SpendForce => {
                    let force = sh.force;
                    s.ledger.note(key, note::FORCE_CHANGE, [into, 0, 0], c);
                    if let Some(f) = force {
                        s.ledger.spend_charges(f, 1, c)?;
                    }
                    if attacking {
                        at.focus -= 1;
                        at.hits += 1;
                    } else {
                        at.defence_focus -= 1;
                        at.evades += 1;
                    }
                }
                Action::SpendFocus => {
                    let focus = sh.focus;
                    let n = if attacking {
                        at.focus
                    } else {
                        at.defence_focus
                    };
                    s.ledger
                        .note(key, note::FOCUS_CHANGE, [into, i32::from(n), 0], c);
                    s.ledger.spend(focus, 1, c)?;
                    if attacking {
                        at.hits += at.focus;
                        at.focus = 0;
                    } else {
                        at.evades += at.defence_focus;
                        at.defence_focus = 0;
                    }
                }
                _ => {
                    let evade = sh.evade;
                    s.ledger.note(key, note::EVADE_ADDED, [0; 3], c);
                    s.ledger.spend(evade, 1, c)?;
                    at.evades += 1;
                }
            }
            s.attack = Some(at);
        }
        Action::Done => match s.attack {
            Some(mut at) if at.step == AttackStep::Modify => {
                let key = ship_key(s, usize::from(at.attacker));
                s.ledger.note(key, note::ATTACK_MODIFIED, [0; 3], c);
                at.step = AttackStep::DefenceRoll;
                s.attack = Some(at);
            }
            Some(at) => {
                // Evade results cancel hits first, then crits; the rest is suffered (C9).
                let cancel_hits = at.evades.min(at.hits);
                let cancel_crits = (at.evades - cancel_hits).min(at.crits);
                let (hits, crits) = (at.hits - cancel_hits, at.crits - cancel_crits);
                suffer(s, usize::from(at.defender), hits, crits, c)?;
                let attacker = usize::from(at.attacker);
                s.ledger.activate(s.ships[attacker].turn, c)?;
                s.attack = None;
            }
            None => {
                let key = Key::new(p, kind::DONE, 0);
                s.ledger.note(key, note::END_DONE, [0; 3], c);
                s.ledger.activate(s.done[p.index()], c)?;
            }
        },
        Action::SufferDamage { ship, hits, crits } => suffer(s, usize::from(ship), hits, crits, c)?,
        Action::DealDamageCard { ship, faceup } => {
            let i = usize::from(ship);
            let sh = &s.ships[i];
            s.ledger
                .gain(if faceup { sh.faceup } else { sh.facedown }, 1, c)?;
            destroyed_note(s, i, c);
        }
        Action::GainStress { ship } => gain_stress(s, usize::from(ship), c)?,
        Action::Lose { ship, charges } => {
            if let Some(t) = track_of(s, usize::from(ship), charges) {
                if s.ledger.lose_charges(t, 1, c)? == 0 {
                    let key = s.ledger.track(t)?.key();
                    s.ledger.note(key, note::NOTHING_LOST, [0; 3], c);
                }
            }
        }
        Action::Recover { ship, charges } => {
            if let Some(t) = track_of(s, usize::from(ship), charges) {
                s.ledger.recover_exactly(t, 1, c)?;
                if charges == ChargeRef::Energy {
                    spend_recovered_energy(s, usize::from(ship), c)?;
                }
            }
        }
        Action::PlaceInReserve { ship } => {
            let sh = &mut s.ships[usize::from(ship)];
            sh.reserve = true;
            // Not assigned a dial while in reserve: a planned one is set aside.
            sh.planned = None;
            sh.revealed = false;
            let key = ship_key(s, usize::from(ship));
            s.ledger.note(key, note::TO_RESERVE, [0; 3], c);
        }
        Action::Deploy { ship } => {
            s.ships[usize::from(ship)].reserve = false;
            let key = ship_key(s, usize::from(ship));
            s.ledger.note(key, note::DEPLOYED, [0; 3], c);
        }
        Action::DeviceNotPlaced { ship, card } => {
            let (i, cd, ab) = card_ability(s, p, ship, card)?;
            let sh = &s.ships[i];
            // "Play is reversed to before the device was placed: the device is not placed, any charges
            // spent and other costs paid are recovered" (C16): the kernel gives the cost back whole.
            let (parts, n) = ability_cost(&cd, ab, sh);
            let disarm = sh.disarm;
            s.ledger.refund_cost(&parts[..n], c)?;
            if ab.disarm {
                s.ledger.spend(disarm, 1, c)?;
            }
            let key = ship_key(s, i);
            s.ledger
                .note(key, note::DEVICE_NOT_PLACED, [i32::from(card), 0, 0], c);
            s.ships[i].stage.device = Device::Free;
        }
    }
    if let Some(i) = just_placed {
        let stage = &mut s.ships[i].stage;
        if stage.device == Device::JustPlaced {
            stage.device = Device::Placed;
        }
    }
    if keeps_settled(a) {
        debug_assert!(
            s.current == ship_to_act(s) && settled(s),
            "{a:?} changed whose turn it is"
        );
    } else {
        advance(s);
    }
    Ok(())
}

/// Moves the clock on while nobody has anything to do: ends phases, and ends the round with the End
/// Phase's upkeep (C6/C7 order) and the win check.
pub fn advance(s: &mut State) {
    loop {
        s.current = ship_to_act(s);
        if settled(s) {
            return;
        }
        if s.phase() < Phase::End {
            s.ledger.end_scope(Scope::Phase);
        } else {
            end_round(s);
        }
    }
}

/// Whether the clock stays where it is: the game is over, or somebody has something to do in this phase
/// (`s.current` up to date).
fn settled(s: &State) -> bool {
    if s.winners.is_some() {
        return true;
    }
    match s.phase() {
        Phase::Planning => (0..s.ships.len()).any(|i| s.in_play(i) && s.ships[i].planned.is_none()),
        Phase::System | Phase::Activation | Phase::Engagement => {
            s.attack.is_some() || s.current.is_some()
        }
        Phase::End => (0..s.done.len()).any(|p| {
            !s.ledger.is_exhausted(s.done[p])
                && (0..s.ships.len()).any(|i| s.ships[i].owner.index() == p && s.alive(i))
        }),
    }
}

/// Whether an applied action leaves every input of [`settled`] as it was: the winners, the phase, the
/// plans, which ships are in play, the attack's presence, the ships' turns and the players' End Phases.
/// These actions only move tokens and charges (none deals damage; a repair keeps a ship in play) or an
/// attack's dice, so after one of them from a settled state the clock need not be asked to move.
fn keeps_settled(a: &Action) -> bool {
    matches!(
        a,
        Action::UseAbility { .. }
            | Action::DeviceNotPlaced { .. }
            | Action::Execute { .. }
            | Action::Perform { .. }
            | Action::Reload { .. }
            | Action::GainStress { .. }
            | Action::Lose { .. }
            | Action::Recover { .. }
            | Action::AttackDice { .. }
            | Action::DefenceDice { .. }
            | Action::SpendForce
            | Action::SpendFocus
            | Action::SpendEvade
    )
}

/// The End Phase after every End-Phase ability: the kernel's upkeep at the end of the round removes the
/// circular tokens (focus, evade, disarm) and then applies recurring and negative recurring charges
/// (C6, C7, C8, C9, C10), readies the per-round permanents; then the win check.
fn end_round(s: &mut State) {
    // Each ship's energy before the upkeep, to see which recovered some (at most 4 players of 4 ships).
    let mut energy = [0u32; 4 * crate::content::MAX_SHIPS_PER_PLAYER];
    for (e, sh) in energy.iter_mut().zip(&s.ships) {
        *e = s.active(sh.energy);
    }
    s.ledger.end_scope(Scope::Act);
    for (i, &before) in energy.iter().enumerate().take(s.ships.len()) {
        if s.alive(i) && s.active(s.ships[i].energy) > before {
            // Cannot fail: the ship has the stress and the energy it pays with.
            let _ = spend_recovered_energy(s, i, Cause::Upkeep(Scope::Act));
        }
    }
    for sh in &mut s.ships {
        sh.planned = None;
        sh.revealed = false;
        sh.stage = Stage::default();
    }
    let players = s.done.len();
    let mut alive = [0u32; 8];
    for i in 0..s.ships.len() {
        if s.alive(i) {
            alive[s.ships[i].owner.index().min(7)] += 1;
        }
    }
    let standing = alive[..players.min(8)].iter().filter(|&&n| n > 0).count();
    if standing <= 1 || s.rounds() >= s.max_rounds {
        let best = alive.iter().copied().max().unwrap_or(0);
        let winners: Vec<Owner> = (0..players)
            .filter(|&p| best > 0 && alive[p.min(7)] == best)
            .map(|p| Owner(p as u16))
            .collect();
        let c = Cause::Upkeep(Scope::Act);
        for &w in &winners {
            let key = Key::new(w, kind::DONE, 0);
            s.ledger.note(key, note::WINS, [best as i32, 0, 0], c);
        }
        if winners.is_empty() {
            s.ledger
                .note(Key::new(Owner::GAME, kind::DONE, 0), note::DRAW, [0; 3], c);
        }
        s.winners = Some(winners);
    }
}

const MANEUVERS: [Color; 4] = [Color::Blue, Color::White, Color::Red, Color::Purple];

/// Room reserved in a legal-action list: a two-ship ship turn lists about 40 actions.
const LIST_CAPACITY: usize = 64;

/// The effect inputs on a ship in play that need nothing but the ship (every `suffer_damage` with 0..=2
/// hits and 0..=2 crits, at least one in all, hits outer; both damage cards; a stress), in listing order.
fn unconditional_effects(ship: u8) -> [Action; 11] {
    // The list below spells out the damage inputs for this bound.
    const _: () = assert!(MAX_EFFECT_DAMAGE == 2);
    let d = |hits, crits| Action::SufferDamage { ship, hits, crits };
    [
        d(0, 1),
        d(0, 2),
        d(1, 0),
        d(1, 1),
        d(1, 2),
        d(2, 0),
        d(2, 1),
        d(2, 2),
        Action::DealDamageCard {
            ship,
            faceup: false,
        },
        Action::DealDamageCard { ship, faceup: true },
        Action::GainStress { ship },
    ]
}

/// The players who have a legal action now, exactly: the owner of the ship whose turn, attack or defence
/// it is; during Planning, the players with a ship in play still to plan (blue is always a legal
/// maneuver); in the End Phase, the players not yet done (`done` is always legal for them).
pub fn to_act(s: &State, out: &mut Vec<Owner>) {
    out.reserve(s.done.len());
    match turn(s) {
        Turn::Over => {}
        Turn::Ship(i) | Turn::Attacker(i) | Turn::Defender(i) => out.push(s.ships[i].owner),
        Turn::Planning => {
            for p in 0..s.done.len() {
                let owner = Owner(p as u16);
                let planning = s
                    .ships
                    .iter()
                    .enumerate()
                    .any(|(i, sh)| sh.owner == owner && sh.planned.is_none() && s.in_play(i));
                if planning {
                    out.push(owner);
                }
            }
        }
        Turn::End => {
            for (p, &done) in s.done.iter().enumerate() {
                if !s.ledger.is_exhausted(done) {
                    out.push(Owner(p as u16));
                }
            }
        }
    }
}

/// Every action `p` may take now. Complete and sound: choices with context-dependent conditions are
/// checked by [`validate`]; the effect inputs and dice results, valid by construction in the state that
/// lists them, are pushed directly (the playout property test checks both against `validate`).
pub fn legal_actions(s: &State, p: Owner, out: &mut Vec<Action>) {
    // One allocation for a fresh list instead of growing it step by step (games are short).
    out.reserve(LIST_CAPACITY);
    let t = turn(s);
    let keep = |a: Action, out: &mut Vec<Action>| {
        if validate_in(s, t, p, &a).is_ok() {
            out.push(a);
        }
    };
    if p.index() >= s.done.len() {
        return;
    }
    match t {
        Turn::Over => {}
        Turn::Planning => {
            // `validate` of a plan: the ship exists and is in play, Planning, `p`'s, not yet planned,
            // then `plan_maneuver`.
            for (i, sh) in s.ships.iter().enumerate() {
                if sh.owner == p && sh.planned.is_none() && s.in_play(i) {
                    for m in MANEUVERS {
                        if plan_maneuver(s, i, m).is_ok() {
                            out.push(Action::Plan {
                                ship: i as u8,
                                maneuver: m,
                            });
                        }
                    }
                }
            }
        }
        Turn::Ship(i) => {
            let sh = &s.ships[i];
            if sh.owner != p {
                return;
            }
            let ship = i as u8;
            let cards = sh.cards.len() as u8;
            let phase = s.phase();
            // `validate` of an ability: the timing's `my_ship_turn` (here: the phase, the rest holds;
            // End-Phase abilities wait for the End Phase), then `ability_usable`.
            for (c, card) in sh.cards.iter().enumerate() {
                let Some(ab) = card.ability else { continue };
                let in_phase = match ab.timing {
                    Timing::System => phase == Phase::System,
                    Timing::Reveal | Timing::Action | Timing::AfterAction => {
                        phase == Phase::Activation
                    }
                    Timing::End => false,
                };
                if in_phase && ability_usable(s, i, c as u8, card, ab).is_ok() {
                    out.push(Action::UseAbility {
                        ship,
                        card: c as u8,
                    });
                }
            }
            // C16: right after a drop, the table may report that the device could not be placed.
            if sh.stage.device == Device::JustPlaced {
                for c in 0..cards {
                    keep(Action::DeviceNotPlaced { ship, card: c }, out);
                }
            }
            match phase {
                Phase::Activation => {
                    if sh.stage.executed {
                        // `validate` of perform and reload: the ship's turn (true here, as for
                        // attacks below), `action_available`, then the parts checked here.
                        debug_assert!(my_ship_turn(s, t, p, ship, Phase::Activation, "").is_ok());
                        if action_available(s, i).is_ok() {
                            for action in [ShipAction::Focus, ShipAction::Evade] {
                                if not_performed(s, i, Some(action)).is_ok()
                                    && perform_color(s, i, action).is_ok()
                                {
                                    out.push(Action::Perform { ship, action });
                                }
                            }
                            // Card 0 is the ship card, which is never reloadable.
                            if not_performed(s, i, None).is_ok() && reload_color(s, i).is_ok() {
                                for c in 1..cards {
                                    if reload_card(s, i, c).is_ok() {
                                        out.push(Action::Reload { ship, card: c });
                                    }
                                }
                            }
                        }
                        out.push(Action::Pass { ship });
                    } else {
                        out.push(Action::Execute { ship });
                    }
                }
                Phase::Engagement => {
                    // `validate` of an attack is: the ship's turn (true here: `t` is this ship's turn,
                    // its owner is `p`, the phase is 3), not disarmed, then `attack_target` and
                    // `attack_weapon`, which do not depend on each other: each is checked once.
                    // A ship has at most 16 cards, so one bit per weapon fits.
                    const _: () = assert!(MAX_UPGRADES < 16);
                    debug_assert!(my_ship_turn(s, t, p, ship, Phase::Engagement, "").is_ok());
                    if s.ledger.value(sh.disarm) == 0 {
                        let mut ready = 0u16;
                        for w in 0..cards.min(16) {
                            if attack_weapon(s, i, w).is_ok() {
                                ready |= 1 << w;
                            }
                        }
                        if ready != 0 {
                            for target in 0..s.ships.len() as u8 {
                                if attack_target(s, p, target).is_err() {
                                    continue;
                                }
                                for w in 0..cards.min(16) {
                                    if ready & (1 << w) != 0 {
                                        out.push(Action::Attack {
                                            ship,
                                            target,
                                            weapon: w,
                                        });
                                    }
                                }
                            }
                        }
                    }
                    out.push(Action::Pass { ship });
                }
                _ => out.push(Action::Pass { ship }),
            }
            // Effect inputs: the ship's owner, on any ship in play.
            let tracks = s.ledger.tracks();
            for (j, target) in s.ships.iter().enumerate() {
                if !s.alive(j) {
                    continue;
                }
                let ship = j as u8;
                out.extend_from_slice(&unconditional_effects(ship));
                out.push(if target.reserve {
                    Action::Deploy { ship }
                } else {
                    Action::PlaceInReserve { ship }
                });
                let mut charges = |r: ChargeRef, track: Option<TrackId>| {
                    if let Some(track) = track.and_then(|id| tracks.get(id.index())) {
                        out.push(Action::Lose { ship, charges: r });
                        if !track.unrecoverable() && track.inactive() > 0 {
                            out.push(Action::Recover { ship, charges: r });
                        }
                    }
                };
                charges(ChargeRef::Force, target.force);
                charges(ChargeRef::Shield, target.shields);
                charges(ChargeRef::Energy, target.energy);
                for (c, card) in target.cards.iter().enumerate() {
                    charges(ChargeRef::Card(c as u8), card.track);
                }
            }
        }
        Turn::Attacker(a) | Turn::Defender(a) => {
            let Some(at) = s.attack else { return };
            if s.ships[a].owner != p {
                return;
            }
            match at.step {
                AttackStep::Roll => {
                    for hits in 0..=at.dice {
                        for crits in 0..=at.dice - hits {
                            for focus in 0..=at.dice - hits - crits {
                                out.push(Action::AttackDice { hits, crits, focus });
                            }
                        }
                    }
                }
                AttackStep::DefenceRoll => {
                    let dice = s.ships[usize::from(at.defender)].agility;
                    for evades in 0..=dice {
                        for focus in 0..=dice - evades {
                            out.push(Action::DefenceDice { evades, focus });
                        }
                    }
                }
                _ => {
                    keep(Action::SpendForce, out);
                    keep(Action::SpendFocus, out);
                    keep(Action::SpendEvade, out);
                    out.push(Action::Done);
                }
            }
        }
        Turn::End => {
            if s.ledger.is_exhausted(s.done[p.index()]) {
                return;
            }
            for (i, sh) in s.ships.iter().enumerate() {
                if sh.owner == p && s.alive(i) {
                    for c in 0..sh.cards.len() as u8 {
                        if sh.cards[usize::from(c)].ability.is_some() {
                            keep(
                                Action::UseAbility {
                                    ship: i as u8,
                                    card: c,
                                },
                                out,
                            );
                        }
                    }
                }
            }
            out.push(Action::Done);
        }
    }
}

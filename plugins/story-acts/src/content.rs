//! Card definitions: the JSON card format, its validation, and the embedded starter set.

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
/// defaults; [`CardDb::new`] checks that.
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

/// The list every content error names: the card list (the embedded starter set, or a configuration's
/// `cards`).
const LIST: &str = "cards";

/// A validated list of card definitions; a card's index is its definition number.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct CardDb {
    cards: Vec<CardDef>,
}

impl CardDb {
    /// The embedded starter set.
    ///
    /// # Errors
    /// [`ContentError`] if the embedded file is broken (a build defect, caught by tests).
    pub fn starter(factors: &[String]) -> Result<CardDb, ContentError> {
        CardDb::from_json(STARTER_JSON, factors)
    }

    /// Reads and validates a JSON list of cards.
    ///
    /// # Errors
    /// [`ContentError::Parse`] for unreadable JSON, [`ContentError::Invalid`] for an invalid card.
    pub fn from_json(json: &str, factors: &[String]) -> Result<CardDb, ContentError> {
        let cards: Vec<CardDef> =
            serde_json::from_str(json).map_err(|e| ContentError::parse(LIST, e))?;
        CardDb::new(cards, factors)
    }

    /// Validates a list of cards against the configured Galactic Factor names.
    ///
    /// # Errors
    /// [`ContentError::Invalid`] naming the first invalid card and field.
    pub fn new(cards: Vec<CardDef>, factors: &[String]) -> Result<CardDb, ContentError> {
        if cards.len() > usize::from(u16::MAX) {
            return Err(bad(
                "#all",
                "id",
                format!("{} cards: a card list holds at most 65535", cards.len()),
            ));
        }
        let mut seen = Vec::with_capacity(cards.len());
        for (i, c) in cards.iter().enumerate() {
            coffer_core::check_content_id(LIST, i, &c.id, &mut seen)?;
            validate(c, factors)?;
        }
        Ok(CardDb { cards })
    }

    /// Every card, by definition number.
    pub fn cards(&self) -> &[CardDef] {
        &self.cards
    }

    /// A definition by number.
    #[inline]
    pub fn get(&self, def: u16) -> &CardDef {
        &self.cards[usize::from(def)]
    }

    /// The definition number of a card id.
    pub fn find(&self, id: &str) -> Option<u16> {
        self.cards.iter().position(|c| c.id == id).map(|i| i as u16)
    }
}

fn bad(card: &str, field: &'static str, reason: impl Into<String>) -> ContentError {
    ContentError::invalid(LIST, card, field, reason)
}

/// Checks one card whose id was checked already (`check_content_id`), in a fixed order (the first
/// fault is the one reported).
fn validate(c: &CardDef, factors: &[String]) -> Result<(), ContentError> {
    check_numbers(c)?;
    check_kind(c)?;
    check_abilities(c)?;
    check_maneuver(c)?;
    check_storyline(c, factors)
}

/// A field `set` on a card whose type is not `allowed` to have it, `why`.
fn only(
    c: &CardDef,
    field: &'static str,
    set: bool,
    allowed: bool,
    why: &str,
) -> Result<(), ContentError> {
    if set && !allowed {
        Err(bad(
            c.id.as_str(),
            field,
            format!("not allowed on a {}: {why}", c.card_type),
        ))
    } else {
        Ok(())
    }
}

/// The name, and every printed number within 0 to 1000.
fn check_numbers(c: &CardDef) -> Result<(), ContentError> {
    let n = c.id.as_str();
    if c.name.trim().is_empty() {
        return Err(bad(n, "name", "empty name"));
    }
    let small = |field: &'static str, v: u32| {
        if v > 1000 {
            Err(bad(
                n,
                field,
                format!("{v} is too large: it must be 0 to 1000"),
            ))
        } else {
            Ok(())
        }
    };
    for (field, v) in [
        ("cost", c.cost),
        ("votes", c.votes),
        ("income", c.income),
        ("ev", c.ev),
        ("fallen_cp", c.fallen_cp),
        ("vote_cost", c.vote_cost),
        ("steps", c.steps),
        ("ev_per_step", c.ev_per_step),
        ("reward", c.reward),
    ] {
        small(field, v)?;
    }
    if let Some(cp) = c.cp {
        small("cp", cp)?;
    }
    Ok(())
}

/// The fields only some card types have (income, Votes, EV, CP, Prime, cost), a Character's CP and a
/// Prime Character's Fall.
fn check_kind(c: &CardDef) -> Result<(), ContentError> {
    let n = c.id.as_str();
    let t = c.card_type;
    let permanent = !matches!(t, CardType::Maneuver | CardType::Storyline);
    only(
        c,
        "income",
        c.income > 0,
        matches!(t, CardType::Homeworld | CardType::Location),
        "only Homeworlds and Locations have income",
    )?;
    only(
        c,
        "votes",
        c.votes > 0,
        permanent,
        "only permanents print Votes",
    )?;
    only(
        c,
        "ev",
        c.ev > 0,
        permanent,
        "only permanents print \"Add N EV\"",
    )?;
    only(
        c,
        "cp",
        c.cp.is_some(),
        permanent && t != CardType::Homeworld,
        "only permanents other than Homeworlds have CP",
    )?;
    only(
        c,
        "prime",
        c.prime,
        t == CardType::Character,
        "only Characters are Prime",
    )?;
    only(
        c,
        "cost",
        c.cost > 0,
        t != CardType::Homeworld,
        "Homeworlds are not deployed",
    )?;
    if t == CardType::Character && c.cp.is_none() {
        return Err(bad(n, "cp", "a Character needs a printed starting CP"));
    }
    if c.cp == Some(0) {
        return Err(bad(
            n,
            "cp",
            "a starting CP of 0 would destroy the card at once",
        ));
    }
    if c.prime {
        if c.fallen_cp == 0 {
            return Err(bad(
                n,
                "fallen_cp",
                "a Prime Character needs a fallen_cp of at least 1",
            ));
        }
    } else if c.fallen_cp > 0 {
        return Err(bad(n, "fallen_cp", "only Prime Characters Fall"));
    }
    Ok(())
}

/// Aligned abilities and Morality Penalties (each on a deed the card can do), and a "-X CP:" ability.
fn check_abilities(c: &CardDef) -> Result<(), ContentError> {
    let n = c.id.as_str();
    let t = c.card_type;
    for (field, trig) in [("aligned", c.aligned), ("penalty", c.penalty)] {
        if let Some(tr) = trig {
            if c.cp.is_none() {
                return Err(bad(n, field, "needs a printed cp"));
            }
            if tr.cp == 0 || tr.cp > 1000 {
                return Err(bad(
                    n,
                    field,
                    format!("cp is {}: it must be 1 to 1000", tr.cp),
                ));
            }
            let possible = match tr.on {
                Deed::CommitVotes => c.votes > 0,
                Deed::AddEv => c.ev > 0,
                Deed::Move | Deed::Capture => t.is_unit(),
            };
            if !possible {
                return Err(bad(
                    n,
                    field,
                    format!("the card can never {}", tr.on.name()),
                ));
            }
        }
    }
    if let Some(a) = c.ability {
        if c.cp.is_none() {
            return Err(bad(n, "ability", "a \"-X CP:\" ability needs a printed cp"));
        }
        if a.cp == 0 || a.cp > 1000 {
            return Err(bad(
                n,
                "ability",
                format!("cp is {}: it must be 1 to 1000", a.cp),
            ));
        }
        if a.effect.target().is_some() {
            return Err(bad(
                n,
                "ability",
                "an ability's effect cannot need a target",
            ));
        }
        check_effect(n, "ability", a.effect)?;
    }
    Ok(())
}

/// A Location's Band, Capital Spacecraft, and what only Maneuvers have (Fast, costs, control, effect).
fn check_maneuver(c: &CardDef) -> Result<(), ContentError> {
    let n = c.id.as_str();
    let t = c.card_type;
    match (t, c.location) {
        (CardType::Location, None) => {
            return Err(bad(
                n,
                "location",
                "a Location needs \"planetary\" or \"surface\"",
            ));
        }
        (CardType::Location, Some(_)) | (_, None) => {}
        (_, Some(_)) => return Err(bad(n, "location", "only Locations lie in a Band")),
    }
    only(
        c,
        "capital",
        c.capital,
        t == CardType::Spacecraft,
        "only Spacecraft are Capital",
    )?;
    let maneuver = t == CardType::Maneuver;
    only(c, "fast", c.fast, maneuver, "only Maneuvers are Fast")?;
    only(
        c,
        "vote_cost",
        c.vote_cost > 0,
        maneuver,
        "only Maneuvers have a Vote cost",
    )?;
    only(
        c,
        "cp_cost",
        c.cp_cost > 0,
        maneuver,
        "only Maneuvers have a CP cost",
    )?;
    only(
        c,
        "requires_control",
        c.requires_control,
        maneuver,
        "only Maneuvers require control",
    )?;
    only(
        c,
        "effect",
        c.effect.is_some(),
        maneuver,
        "only Maneuvers have an effect",
    )?;
    if maneuver {
        let Some(e) = c.effect else {
            return Err(bad(n, "effect", "a Maneuver needs an effect"));
        };
        check_effect(n, "effect", e)?;
        if c.cp_cost > MAX_CP_COST {
            return Err(bad(
                n,
                "cp_cost",
                format!("{} is too large: it must be 0 to {MAX_CP_COST}", c.cp_cost),
            ));
        }
    }
    Ok(())
}

/// What only Storylines have (steps, reward), and a Homeworld's preferred factor values.
fn check_storyline(c: &CardDef, factors: &[String]) -> Result<(), ContentError> {
    let n = c.id.as_str();
    let t = c.card_type;
    let story = t == CardType::Storyline;
    only(c, "steps", c.steps > 0, story, "only Storylines have steps")?;
    only(
        c,
        "ev_per_step",
        c.ev_per_step > 0,
        story,
        "only Storylines have steps",
    )?;
    only(c, "reward", c.reward > 0, story, "only Storylines award SP")?;
    only(
        c,
        "reward_to",
        c.reward_to != RewardTo::Completer,
        story,
        "only Storylines award SP",
    )?;
    if story && c.steps == 0 {
        return Err(bad(n, "steps", "a Storyline needs at least 1 step"));
    }
    only(
        c,
        "preferred",
        !c.preferred.is_empty(),
        t == CardType::Homeworld,
        "only Homeworlds prefer factor values",
    )?;
    for (i, p) in c.preferred.iter().enumerate() {
        if !factors.contains(&p.factor) {
            return Err(bad(
                n,
                "preferred",
                format!(
                    "unknown factor '{}'; known: {}",
                    p.factor,
                    factors.join(", ")
                ),
            ));
        }
        if c.preferred[..i].iter().any(|q| q.factor == p.factor) {
            return Err(bad(
                n,
                "preferred",
                format!("factor '{}' listed twice", p.factor),
            ));
        }
    }
    Ok(())
}

fn check_effect(card: &str, field: &'static str, e: Effect) -> Result<(), ContentError> {
    let v = match e {
        Effect::GainCurrency(v)
        | Effect::OpponentsPay(v)
        | Effect::AddVotes(v)
        | Effect::AddEv(v)
        | Effect::DrawCards(v)
        | Effect::DrainCp(v)
        | Effect::GainCp(v) => v,
    };
    if v == 0 || v > 1000 {
        return Err(bad(
            card,
            field,
            format!("{} {v}: the amount must be 1 to 1000", e.id()),
        ));
    }
    Ok(())
}

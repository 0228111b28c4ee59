//! The card list: the starter set or a configuration's cards, read and checked card by card ([`CardDb`]).

use crate::content::{CardDef, CardType, Deed, Effect, MAX_CP_COST, RewardTo, STARTER_JSON};
use coffer_core::ContentError;
use serde::{Deserialize, Serialize};

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

//! Why an action is refused: [`Why`], cheap to build while the legal-action list tests candidates, and
//! [`State::explain`], which writes it in the rulebook's words for the player who tried.
//!
//! A refusal names a card only when the player who tried may see it (in play, in a discard pile, or in their
//! own hand); any other card is "card #N", and where it is stays unsaid: card numbers follow the public deck
//! lists, so a hidden card's place would tell what another player holds.

use crate::cards::{Band, Zone};
use crate::content::{CardType, Effect};
use crate::state::State;
use coffer_core::{ActionError, Key, Owner, Refusal};
use std::fmt::Write as _;

/// Why an action is not legal now; no text, so that testing a candidate action costs nothing.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Why {
    /// The game is over.
    Over,
    /// The player is not in the game.
    NoPlayer(u16),
    /// A slow action outside the player's own main phase.
    Slow,
    /// An action outside a main phase.
    NotMain,
    /// Another player must first discard down to the hand limit.
    OtherDiscards(Owner),
    /// A hand-limit discard is pending (K6).
    Pending(PendingChoice),
    /// A rule forbids it.
    Rule(Rule),
    /// A cost cannot be paid: `(what, need, have)`.
    Short(Key, u64, u64),
}

impl Why {
    /// The refusal of `p`'s action in `s`, in words (as [`State::explain`] writes it).
    pub fn error(self, s: &State, p: Owner) -> ActionError {
        s.explain(p, self)
    }
}

/// The pending demand's data (a `Refusal` is not `Copy`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PendingChoice {
    /// Who must discard.
    pub owner: Owner,
    /// Their hand.
    pub key: Key,
    /// How many cards must go.
    pub excess: u32,
}

/// The rule an action breaks, with the offending input. Card numbers are card instances.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Rule {
    /// A discard with no discard pending.
    NothingToDiscard,
    /// No card has this number.
    NoSuchCard(u16),
    /// The card is not in the player's hand.
    NotInHand(u16),
    /// The card is not in play.
    NotInPlay(u16),
    /// The card is in play under another player's control.
    NotYours(u16),
    /// A Maneuver whose effect needs a target was given none.
    NeedsTarget(u16),
    /// The target is not a card with CP in play.
    BadTarget {
        /// The Maneuver.
        card: u16,
        /// The target given.
        target: u16,
    },
    /// The target has the wrong controller for the effect.
    WrongController {
        /// The Maneuver.
        card: u16,
        /// The target given.
        target: u16,
    },
    /// A target was given to a card that takes none.
    TakesNoTarget {
        /// The card.
        card: u16,
        /// The target given.
        target: u16,
    },
    /// A Maneuver that needs political control (S4).
    NeedsControl(u16),
    /// The CP split does not add up to the card's CP cost.
    SplitSum {
        /// The card.
        card: u16,
        /// What the split adds up to.
        total: u32,
    },
    /// A part of a CP split of 0 CP.
    SplitZero(u16),
    /// A CP split whose cards are not distinct and ascending.
    SplitOrder {
        /// The card named.
        card: u16,
        /// The card named before it.
        after: u16,
    },
    /// A card without CP named to pay CP.
    NoCp(u16),
    /// Committing the Votes of a card that prints none.
    NoVotes(u16),
    /// Adding EV with a card that prints no "Add N EV".
    NoEv(u16),
    /// Activating a card that is not a permanent.
    NotPermanent(u16),
    /// Activating a card already activated (exhausted, K5; S9).
    Exhausted(u16),
    /// No Galactic Factor has this number.
    NoSuchFactor(u8),
    /// A push of 0 steps.
    ZeroSteps,
    /// A push past the end of a Galactic Factor's track.
    NoRoom {
        /// The factor.
        factor: u8,
        /// Up or down.
        up: bool,
        /// Steps asked.
        steps: u8,
    },
    /// A card without a "-X CP:" ability.
    NoAbility(u16),
    /// A "-X CP:" ability already used this turn.
    AbilityUsed(u16),
    /// Moving or capturing with a card that is not a unit.
    NotUnit(u16),
    /// A Band of a player not in the game.
    NoSuchBand(Band),
    /// A card in no Band.
    NoBand(u16),
    /// A move to a Band that is not adjacent.
    NotAdjacent {
        /// The unit.
        card: u16,
        /// Where to.
        to: Band,
    },
    /// A capture by a unit outside a Surface Band.
    NotInSurface(u16),
    /// A capture of a card that is not a Location in play.
    NotLocation(u16),
    /// A capture of a Location outside the unit's Band.
    LocationElsewhere {
        /// The Location.
        location: u16,
        /// The unit.
        unit: u16,
    },
    /// A capture of a Location the player already controls.
    AlreadyYours(u16),
    /// A capture of a Location its controller defends.
    Defended(u16),
    /// A Restore of a Location that is not Contested.
    NotContested(u16),
    /// A Storyline action on a card that is not a Storyline.
    NotStoryline(u16),
    /// Advancing a Storyline with every step done.
    StepsDone(u16),
    /// Completing a Storyline with steps left.
    StepsLeft(u16),
    /// The ruleset's own tables disagree (never expected).
    Inconsistent,
}

impl State {
    /// `card` as player `p` may name it: "Jedi Knight (#12)" when `p` may see it, else "card #12".
    pub fn card_name(&self, p: Owner, card: u16) -> String {
        match self.cards.get(usize::from(card)) {
            Some(c) if self.sees_card(Some(p), card) => {
                format!("{} (#{card})", self.rules.db.get(c.def).name)
            }
            _ => format!("card #{card}"),
        }
    }

    /// Whether `seat` (`None`: a spectator) may see which card `card` is: cards in play and in discard
    /// piles are public, a hand only its owner's, a deck nobody's.
    pub fn sees_card(&self, seat: Option<Owner>, card: u16) -> bool {
        match self.cards.get(usize::from(card)) {
            Some(c) => match c.zone {
                Zone::Play | Zone::Discard => true,
                Zone::Hand => seat == Some(Owner(c.owner)),
                Zone::Deck => false,
            },
            None => false,
        }
    }

    /// Where a card `p` may see is, as a clause: "it is in play under p1's control".
    fn place(&self, p: Owner, card: u16) -> String {
        let Some(c) = self.cards.get(usize::from(card)) else {
            return String::new();
        };
        match c.zone {
            Zone::Play if c.controller == p.0 => "it is in play under your control".to_owned(),
            Zone::Play => format!("it is in play under p{}'s control", c.controller),
            Zone::Discard => format!("it is in p{}'s discard pile", c.owner),
            Zone::Hand if c.owner == p.0 => "it is in your hand".to_owned(),
            _ => String::new(),
        }
    }

    /// A refusal in the rulebook's words, for player `p` who tried the action.
    pub fn explain(&self, p: Owner, why: Why) -> ActionError {
        match why {
            Why::Over => ActionError::GameOver,
            Why::NoPlayer(player) => ActionError::NoSuchPlayer {
                player,
                players: self.players(),
            },
            Why::Slow => ActionError::NotYourTurn {
                player: p,
                reason: format!(
                    "it is p{}'s turn, and this is a slow action; out of turn only Commit Votes and Fast \
                     Maneuvers may be played",
                    self.active
                ),
            },
            Why::NotMain => ActionError::NotYourTurn {
                player: p,
                reason: format!(
                    "actions wait for the main phase; p{}'s turn is in its {}",
                    self.active,
                    self.phase.name()
                ),
            },
            Why::OtherDiscards(owner) => ActionError::NotYourTurn {
                player: p,
                reason: format!("{owner} must first discard down to the hand limit"),
            },
            Why::Pending(r) => ActionError::Refused(Refusal::AwaitingChoice {
                owner: r.owner,
                key: r.key,
                excess: r.excess,
            }),
            Why::Short(key, need, have) => {
                ActionError::Refused(Refusal::Insufficient { key, need, have })
            }
            Why::Rule(rule) => ActionError::Illegal(self.rule_text(p, rule)),
        }
    }

    /// The rule `rule` broken by `p`, in words.
    fn rule_text(&self, p: Owner, rule: Rule) -> String {
        self.card_text(p, rule)
            .or_else(|| self.cost_text(p, rule))
            .or_else(|| self.factor_text(rule))
            .or_else(|| self.board_text(p, rule))
            .unwrap_or_default()
    }

    /// The words of a rule about which card, in which hand or zone, and targets.
    fn card_text(&self, p: Owner, rule: Rule) -> Option<String> {
        let name = |card: u16| self.card_name(p, card);
        let with_place = |card: u16, text: String| self.with_place(p, card, text);
        Some(match rule {
            Rule::NothingToDiscard => format!(
                "nothing to discard: p{p} holds {} cards, within the hand limit of {}, and discards happen \
                 only at the End Phase",
                self.hands.get(p.index()).map_or(0, Vec::len),
                self.config().hand_limit
            ),
            Rule::NoSuchCard(card) => format!(
                "card #{card} does not exist: this game has cards #0 to #{}",
                self.cards.len().saturating_sub(1)
            ),
            Rule::NotInHand(card) => {
                with_place(card, format!("{} is not in your hand", name(card)))
            }
            Rule::NotInPlay(card) => with_place(card, format!("{} is not in play", name(card))),
            Rule::NotYours(card) => format!(
                "{} is controlled by p{}: you may use only cards you control",
                name(card),
                self.cards[usize::from(card)].controller
            ),
            Rule::NeedsTarget(card) => format!(
                "{} needs a target: a card with CP in play that {}",
                name(card),
                self.target_whose(card)
            ),
            Rule::BadTarget { card, target } => with_place(
                target,
                format!(
                    "{} is no target for {}: it needs a card with CP in play that {}",
                    name(target),
                    name(card),
                    self.target_whose(card)
                ),
            ),
            Rule::WrongController { card, target } => format!(
                "{} is no target for {}: it needs a card with CP that {}, and p{} controls it",
                name(target),
                name(card),
                self.target_whose(card),
                self.cards[usize::from(target)].controller
            ),
            Rule::TakesNoTarget { card, target } => format!(
                "{} takes no target, but card #{target} was given as one",
                name(card)
            ),
            _ => return None,
        })
    }

    /// The words of a rule about costs, political control, card abilities and Storylines.
    fn cost_text(&self, p: Owner, rule: Rule) -> Option<String> {
        let name = |card: u16| self.card_name(p, card);
        Some(match rule {
            Rule::NeedsControl(card) => {
                let mut text = format!("{} needs political control (S4), and ", name(card));
                match self.political_control() {
                    Some(q) => {
                        let _ = write!(text, "p{q} holds it");
                    }
                    None => text.push_str("nobody holds it"),
                }
                text.push_str("; standing Vote: ");
                for q in 0..self.players() {
                    if q > 0 {
                        text.push_str(", ");
                    }
                    let _ = write!(text, "p{q} {}", self.standing_vote(Owner(q)));
                }
                text
            }
            Rule::SplitSum { card, total } => format!(
                "the CP split pays {total} CP, but {} costs {} CP",
                name(card),
                self.cards
                    .get(usize::from(card))
                    .map_or(0, |c| self.rules.db.get(c.def).cp_cost)
            ),
            Rule::SplitZero(card) => {
                format!("the CP split pays 0 CP from card #{card}: each part must be at least 1")
            }
            Rule::SplitOrder { card, after } => format!(
                "the CP split names card #{card} after card #{after}: name each card once, in ascending order"
            ),
            Rule::NoCp(card) => format!("{} has no CP to pay with", name(card)),
            Rule::NoVotes(card) => format!("{} prints no Votes to commit", name(card)),
            Rule::NoEv(card) => format!("{} prints no \"Add N EV\"", name(card)),
            Rule::NotPermanent(card) => {
                format!("{} is not a permanent: it cannot be activated", name(card))
            }
            Rule::Exhausted(card) => format!(
                "{} is activated: it readies in p{}'s next Ready Phase (S9)",
                name(card),
                self.cards[usize::from(card)].controller
            ),
            Rule::NoAbility(card) => format!("{} has no \"-X CP:\" ability", name(card)),
            Rule::AbilityUsed(card) => format!(
                "the ability of {} was already used this turn: once per turn (S8)",
                name(card)
            ),
            Rule::NotStoryline(card) => {
                let kind = self
                    .cards
                    .get(usize::from(card))
                    .map_or(CardType::Storyline, |c| self.rules.db.get(c.def).card_type);
                format!("{} is a {kind}, not a Storyline", name(card))
            }
            Rule::StepsDone(card) => format!(
                "{} has all {} steps done: complete it instead",
                name(card),
                self.def(card).steps
            ),
            Rule::StepsLeft(card) => format!(
                "{} has {} of {} steps done: advance it first",
                name(card),
                self.cards[usize::from(card)].progress,
                self.def(card).steps
            ),
            Rule::Inconsistent => {
                "the game's own records disagree; the action cannot be checked".to_owned()
            }

            _ => return None,
        })
    }

    /// The words of a rule about Galactic Factors.
    fn factor_text(&self, rule: Rule) -> Option<String> {
        Some(match rule {
            Rule::NoSuchFactor(f) => {
                let factors = &self.config().factors;
                if factors.is_empty() {
                    format!("Galactic Factor {f} does not exist: this game has no Galactic Factors")
                } else {
                    let mut text = format!(
                        "Galactic Factor {f} does not exist: this game has factors 0 to {} (",
                        factors.len() - 1
                    );
                    for (i, def) in factors.iter().enumerate() {
                        if i > 0 {
                            text.push_str(", ");
                        }
                        let _ = write!(text, "{i} {}", def.name);
                    }
                    text.push(')');
                    text
                }
            }
            Rule::ZeroSteps => "a push of 0 steps moves nothing: push at least 1 step".to_owned(),
            Rule::NoRoom { factor, up, steps } => {
                let f = usize::from(factor);
                let def = &self.config().factors[f];
                let v = self.factor(f);
                let room = if up { def.max - v } else { v - def.min };
                format!(
                    "Galactic Factor {} is at {v} on a track from {} to {}: no room for {steps} {} {}, at most {room}",
                    def.name,
                    def.min,
                    def.max,
                    if steps == 1 { "step" } else { "steps" },
                    if up { "up" } else { "down" }
                )
            }
            _ => return None,
        })
    }

    /// The words of a rule about units, Bands and Locations.
    fn board_text(&self, p: Owner, rule: Rule) -> Option<String> {
        let name = |card: u16| self.card_name(p, card);
        let with_place = |card: u16, text: String| self.with_place(p, card, text);
        Some(match rule {
            Rule::NotUnit(card) => {
                let kind = self
                    .cards
                    .get(usize::from(card))
                    .map_or("card", |c| self.rules.db.get(c.def).card_type.name());
                format!(
                    "{} is a {kind}: only Characters, Ground Units and Spacecraft move and capture",
                    name(card)
                )
            }
            Rule::NoSuchBand(band) => format!(
                "{band} does not exist: this game has players p0 to p{}",
                self.players().saturating_sub(1)
            ),
            Rule::NoBand(card) => format!("{} is in no Band", name(card)),
            Rule::NotAdjacent { card, to } => {
                let from = self.cards[usize::from(card)].band;
                let mut text = format!("{to} is not adjacent to {}", name(card));
                if let Some(from) = from {
                    let _ = write!(text, " in {from} (S15); it can move to ");
                    let mut first = true;
                    self.adjacent(from, |b| {
                        if !first {
                            text.push_str(", ");
                        }
                        first = false;
                        let _ = write!(text, "{b}");
                    });
                }
                text
            }
            Rule::NotInSurface(card) => match self.cards[usize::from(card)].band {
                Some(band) => format!(
                    "{} is in {band}: a capture needs a unit in a Surface Band",
                    name(card)
                ),
                None => format!("{} is in no Band", name(card)),
            },
            Rule::NotLocation(card) => {
                with_place(card, format!("{} is not a Location in play", name(card)))
            }
            Rule::LocationElsewhere { location, unit } => {
                let band = |c: u16| {
                    self.cards[usize::from(c)]
                        .band
                        .map_or_else(|| "no Band".to_owned(), |b| b.to_string())
                };
                format!(
                    "{} lies in {}, and {} is in {}: a unit captures only in its own Band",
                    name(location),
                    band(location),
                    name(unit),
                    band(unit)
                )
            }
            Rule::AlreadyYours(card) => format!("you already control {}", name(card)),
            Rule::Defended(card) => {
                let c = &self.cards[usize::from(card)];
                let band = c
                    .band
                    .map_or_else(|| "its Band".to_owned(), |b| b.to_string());
                format!(
                    "p{} has a unit in {band} defending {} (S14)",
                    c.controller,
                    name(card)
                )
            }
            Rule::NotContested(card) => format!(
                "{} is not Contested: only a captured Surface Location is Restored (S14)",
                name(card)
            ),
            _ => return None,
        })
    }

    /// `text` about `card`, followed by where it is when `p` may know that: "...: in p1's discard pile".
    fn with_place(&self, p: Owner, card: u16, text: String) -> String {
        let place = self.place(p, card);
        if place.is_empty() {
            text
        } else {
            format!("{text}: {place}")
        }
    }

    /// Whose card a targeted Maneuver needs, as a clause: "an opponent controls".
    fn target_whose(&self, card: u16) -> &'static str {
        let own = self
            .cards
            .get(usize::from(card))
            .and_then(|c| self.rules.db.get(c.def).effect)
            .and_then(Effect::target);
        match own {
            Some(true) => "you control",
            _ => "an opponent controls",
        }
    }
}

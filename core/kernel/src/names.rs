//! [`Names`]: a ruleset's vocabulary and one game's resource labels, writing the kernel's [`Refusal`]s,
//! [`Event`]s and [`Cause`]s in words. The kernel's own `Display` of these types is the words of
//! [`Names::plain`], so it lives here too.
//!
//! ```
//! use coffer_kernel::{Key, Kind, Names, Owner, Refusal, Term, Vocabulary};
//!
//! let mut vocabulary = Vocabulary::default();
//! vocabulary.kinds = vec![Term::new("Gold")];
//! let names = Names::new(&vocabulary);
//! let refusal = Refusal::Insufficient { key: Key::new(Owner(0), Kind(0), 0), need: 5, have: 4 };
//! assert_eq!(names.refusal(&refusal), "p0's Gold holds 4; the cost is 5");
//! ```
//!
//! A ruleset that declares nothing still gets plain names ("resource 3", "action 2").

use crate::clock::Scope;
use crate::error::Refusal;
use crate::event::{Cause, Change, ChargeOp, Event, TokenOp};
use crate::id::{Key, Kind, Owner};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use crate::vocab::Vocabulary;
/// Who reads a text: one seat, or a spectator who sees only public information.
pub type Seat = Option<Owner>;

/// A vocabulary and one game's resource labels: writes refusals, events and causes in words.
///
/// Labels name a resource without its owner ("Gold", "strength of the Ranger"); [`Names::key`] adds the
/// owner ("p0's Gold"). A key without a label is named from the vocabulary alone.
#[derive(Clone, Debug)]
pub struct Names<'v> {
    vocabulary: &'v Vocabulary,
    labels: BTreeMap<Key, String>,
    /// The key of each zone, by index, for token events (which name their zones by handle).
    zones: Vec<Option<Key>>,
}

/// The vocabulary of plain names, for [`Names::plain`].
static PLAIN: Vocabulary = Vocabulary::EMPTY;

impl Names<'static> {
    /// Plain names, from no vocabulary: what the kernel's own `Display` writes.
    pub fn plain() -> Names<'static> {
        Names::new(&PLAIN)
    }
}

/// A resource as a game shows it, with the label it goes by: what [`Names::with_resources`] names things
/// after (the SDK's `ResourceView` is one).
pub trait Labelled {
    /// The resource.
    fn key(&self) -> Key;
    /// What it is called in this game ("p0's Gold").
    fn label(&self) -> &str;
    /// Its token zone's number, if it is a token zone (events name zones by number).
    fn zone_index(&self) -> Option<u32>;
}

impl<'v> Names<'v> {
    /// Names from a vocabulary alone.
    pub fn new(vocabulary: &'v Vocabulary) -> Names<'v> {
        Names {
            vocabulary,
            labels: BTreeMap::new(),
            zones: Vec::new(),
        }
    }

    /// Names with one game's resources (as the SDK's `DynGame::resources` lists them): each resource's
    /// label, and each token zone named after its resource.
    pub fn with_resources<R: Labelled>(vocabulary: &'v Vocabulary, resources: &[R]) -> Names<'v> {
        let mut names = Names::new(vocabulary);
        for r in resources {
            if let Some(index) = r.zone_index() {
                names.name_zone(index, r.key());
            }
            names.label_key(r.key(), r.label().to_owned());
        }
        names
    }

    /// Names token zone number `index` (as events number zones) after the resource `key`, so events about
    /// the zone name it like the resource.
    pub fn name_zone(&mut self, index: u32, key: Key) {
        let i = index as usize;
        if self.zones.len() <= i {
            self.zones.resize(i + 1, None);
        }
        self.zones[i] = Some(key);
    }

    /// Adds or replaces one label.
    pub fn label_key(&mut self, key: Key, label: impl Into<String>) {
        self.labels.insert(key, label.into());
    }

    /// The vocabulary.
    pub fn vocabulary(&self) -> &'v Vocabulary {
        self.vocabulary
    }

    /// A seat or the game: `p0`, `the game`.
    pub fn owner(&self, owner: Owner) -> String {
        if owner.is_player() {
            owner.to_string()
        } else {
            "the game".to_owned()
        }
    }

    /// A resource's label without its owner: declared, or the kind's name (with the subject's number
    /// when it is not 0).
    pub fn label(&self, key: Key) -> Cow<'_, str> {
        if let Some(label) = self.labels.get(&key) {
            return Cow::Borrowed(label);
        }
        let kind = self.vocabulary.kind(key.kind);
        if key.subject == 0 {
            kind
        } else {
            Cow::Owned(format!("{kind} #{}", key.subject))
        }
    }

    /// A resource with its owner: "p0's Gold"; a resource of the game is its label alone.
    pub fn key(&self, key: Key) -> String {
        let label = self.label(key);
        if key.owner.is_player() {
            format!("{}'s {label}", key.owner)
        } else {
            label.into_owned()
        }
    }

    /// A zone as the events of `owner`'s tokens name it: its label, with the zone's owner in front when
    /// that is a player other than `owner` ("the game gained 2 tokens from bank into p2's ore in hand";
    /// "p1 moved 1 token from reserve to system 4").
    fn zone(&self, index: usize, owner: Owner) -> String {
        match self.zones.get(index).copied().flatten() {
            Some(key) if key.owner.is_player() && key.owner != owner => self.key(key),
            Some(key) => self.label(key).into_owned(),
            None => format!("place {index}"),
        }
    }

    /// Why something happened, in words: "p0's Build", "Harvest", "the end of the phase", "setup".
    pub fn cause(&self, cause: &Cause) -> String {
        match *cause {
            Cause::Setup => "setup".to_owned(),
            Cause::Action { player, code } => {
                format!("{}'s {}", self.owner(player), self.vocabulary.action(code))
            }
            Cause::Effect(code) => self.vocabulary.effect(code).into_owned(),
            Cause::Upkeep(scope) => format!("the end of the {}", self.scope(scope)),
            Cause::StateCheck => "a state check".to_owned(),
        }
    }

    /// A scope of the clock in the ruleset's words where it has them ("round", "step").
    pub fn scope(&self, scope: Scope) -> String {
        self.vocabulary.scope(scope).into_owned()
    }

    /// A refusal in words: "p0's Gold holds 4; the cost is 5".
    pub fn refusal(&self, refusal: &Refusal) -> String {
        match refusal {
            Refusal::NoSuchResource { what, index } => {
                format!("this game has no {what} number {index}")
            }
            Refusal::Insufficient { key, need, have } => {
                format!("{} holds {have}; the cost is {need}", self.key(*key))
            }
            Refusal::InsufficientCharges { key, need, active } => format!(
                "{} has {active} active {}; {need} needed",
                self.key(*key),
                plural(u64::from(*active), "charge", "charges")
            ),
            Refusal::NothingToRecover { key, limit } => format!(
                "{} has nothing to recover: all {limit} {} are active",
                self.key(*key),
                plural(u64::from(*limit), "charge", "charges")
            ),
            Refusal::Unrecoverable { key } => format!("{} cannot be recovered", self.key(*key)),
            Refusal::NotEnoughTokens {
                owner,
                zone,
                need,
                have,
            } => {
                // No verb to agree with the zone's name, singular or plural, and the owner named once: a
                // zone of the owner's own names them already ("p0's pool").
                let whose = if zone.owner == *owner {
                    String::new()
                } else {
                    format!("{}'s ", self.owner(*owner))
                };
                let short = match (*have, whose.is_empty()) {
                    (0, true) => "no tokens".to_owned(),
                    (0, false) => format!("none of {whose}tokens"),
                    (n, true) => format!("only {n} {}", plural(u64::from(n), "token", "tokens")),
                    (n, false) => format!("only {n} of {whose}tokens"),
                };
                format!("{short} in {}; {need} needed", self.key(*zone))
            }
            // In the ruleset's words for its state where it has them ("has harvested this round").
            Refusal::Exhausted { key } => {
                format!("{} {}", self.key(*key), self.readiness(key.kind, true))
            }
            Refusal::AwaitingChoice { owner, key, excess } => format!(
                "{} must first {} {excess} of {}",
                self.owner(*owner),
                self.choice(key.kind),
                self.key(*key)
            ),
            Refusal::BadAllocation { sum, need } => {
                format!("the payment adds up to {sum}, but the cost is {need}")
            }
            Refusal::Overflow { op, n, key } => {
                format!("{} cannot take a {op} of {n}: too large", self.key(*key))
            }
            Refusal::Invalid(why) => why.clone(),
        }
    }

    fn choice(&self, kind: Kind) -> &str {
        match self.vocabulary.kinds.get(usize::from(kind.0)) {
            Some(t) if !t.choice.is_empty() => &t.choice,
            _ => "give up",
        }
    }

    /// What a permanent of `kind` is when exhausted (`true`) or ready, in the ruleset's words.
    pub fn readiness(&self, kind: Kind, exhausted: bool) -> &str {
        let term = self.vocabulary.kinds.get(usize::from(kind.0));
        match (term, exhausted) {
            (Some(t), true) if !t.exhausted.is_empty() => &t.exhausted,
            (Some(t), false) if !t.ready.is_empty() => &t.ready,
            (_, true) => "is exhausted",
            (_, false) => "is ready",
        }
    }

    /// A pending choice in words: "p0 must return 2 of p0's stash".
    pub fn demand(&self, demand: &crate::Demand) -> String {
        format!(
            "{} must {} {} of {}",
            self.owner(demand.key.owner),
            self.choice(demand.key.kind),
            demand.excess,
            self.key(demand.key)
        )
    }

    /// An event in words, as `seat` may read it, with its cause: "p0's Gold: +5, 4 -> 9 (2 lost to the
    /// cap), by Harvest". `None` for an event that is not for `seat` (another seat's secret note) or
    /// not worth a line (draws from the random generator, an amount reaching its floor, the end of an
    /// unnamed phase or step).
    ///
    /// `seat` decides only secret notes: which resource events a seat may see is the game's business
    /// (`DynGame::events_for` (coffer-sdk)).
    pub fn event(&self, event: &Event, seat: Seat) -> Option<String> {
        Some(self.with_cause(event, self.change(event, seat)?))
    }

    /// `what` changed in `event`, followed by its cause.
    fn with_cause(&self, event: &Event, what: String) -> String {
        if matches!(event.change, Change::Scope { .. }) {
            // "the phase ends" says its cause already.
            return what;
        }
        format!("{what}, by {}", self.cause(&event.cause))
    }

    /// Event `i` of `events` (one action's, in order) in words, as [`event`](Self::event), reading it
    /// with its neighbours: see [`change_at`](Self::change_at).
    pub fn event_at(&self, events: &[Event], i: usize, seat: Seat) -> Option<String> {
        Some(self.with_cause(events.get(i)?, self.change_at(events, i, seat)?))
    }

    /// Event `i` of `events` (one action's, in order) in words without its cause, as
    /// [`change`](Self::change), except for a pending choice that changed without being met: the kernel
    /// records that as two events (the old demand satisfied, the new one raised, so that either can be
    /// undone), which read as one, "p2 must still give up 3 of p2's hand", not as "back within its
    /// limit" followed by a new demand.
    pub fn change_at(&self, events: &[Event], i: usize, seat: Seat) -> Option<String> {
        let event = events.get(i)?;
        let demand_at = |j: Option<usize>| match j.and_then(|j| events.get(j))?.change {
            Change::Demand {
                demand,
                index,
                raised,
            } => Some((demand, index, raised)),
            _ => None,
        };
        if let Some((demand, index, raised)) = demand_at(Some(i)) {
            // The satisfied half of an update is the next event's to tell; the raised half tells both.
            let partner = if raised {
                i.checked_sub(1)
            } else {
                Some(i + 1)
            };
            if let Some((other, at, other_raised)) = demand_at(partner)
                && other_raised != raised
                && other.key == demand.key
                && at == index
            {
                if !raised {
                    return None;
                }
                let still = if demand.excess <= other.excess {
                    "still"
                } else {
                    "now"
                };
                return Some(format!(
                    "{} must {still} {} {} of {}",
                    self.owner(demand.key.owner),
                    self.choice(demand.key.kind),
                    demand.excess,
                    self.key(demand.key)
                ));
            }
        }
        self.change(event, seat)
    }

    /// An event's change in words, without its cause.
    pub fn change(&self, event: &Event, seat: Seat) -> Option<String> {
        let key = event.key;
        let k = || self.key(key);
        let text = match event.change {
            Change::Gain {
                before,
                after,
                lost,
                ..
            } => {
                let mut s = format!("{}: +{}, {before} -> {after}", k(), after.abs_diff(before));
                if lost > 0 {
                    let _ = write!(s, " ({lost} lost to the cap)");
                }
                s
            }
            Change::Spend { before, after, .. } => {
                format!(
                    "{}: spent {}, {before} -> {after}",
                    k(),
                    before.abs_diff(after)
                )
            }
            Change::Pay {
                before,
                after,
                shortfall,
                ..
            } => {
                let mut s = format!(
                    "{}: paid {}, {before} -> {after}",
                    k(),
                    before.abs_diff(after)
                );
                if shortfall > 0 {
                    let _ = write!(s, " ({shortfall} could not be paid)");
                }
                s
            }
            Change::Set { before, after, .. } => format!("{}: set to {after} (was {before})", k()),
            Change::Expire { before, after, .. } => {
                format!("{}: {before} -> {after} as it expires", k())
            }
            Change::Cap {
                before,
                after,
                value_before,
                value_after,
                ..
            } => {
                let cap = |c: Option<i64>| c.map_or_else(|| "none".to_owned(), |c| c.to_string());
                let mut s = format!("{}: cap {} -> {}", k(), cap(before), cap(after));
                if value_before != value_after {
                    let _ = write!(s, ", value {value_before} -> {value_after}");
                }
                s
            }
            // Reaching the floor (K1.5) is for rulesets to react to; the spend that got there says it.
            Change::Floor { .. } => return None,
            Change::Charges {
                op, before, after, ..
            } => {
                let n = u64::from(before.abs_diff(after));
                let verb = match op {
                    ChargeOp::Spend => "spent",
                    ChargeOp::Lose => "lost",
                    ChargeOp::Recover => "recovered",
                    ChargeOp::Recur if after >= before => "recovered",
                    ChargeOp::Recur => "lost",
                };
                format!(
                    "{}: {verb} {n} {}, {before} -> {after} active",
                    k(),
                    plural(n, "charge", "charges")
                )
            }
            Change::Capacity {
                source,
                added,
                active_before,
                active_after,
                ..
            } => format!(
                "{}: {} {} of capacity, {active_before} -> {active_after} active",
                k(),
                if added { "gained" } else { "lost" },
                source.capacity
            ),
            Change::Tokens {
                owner,
                op,
                from,
                to,
                n,
            } => {
                let who = self.owner(owner);
                let tokens = plural(u64::from(n), "token", "tokens");
                let (from, to) = (self.zone(from.index(), owner), self.zone(to.index(), owner));
                match op {
                    TokenOp::Stock => format!("{who} starts with {n} {tokens} in {to}"),
                    TokenOp::Move => format!("{who} moved {n} {tokens} from {from} to {to}"),
                    TokenOp::Gain => format!("{who} gained {n} {tokens} from {from} into {to}"),
                    TokenOp::Bounce => format!(
                        "{who}'s token for {} stays in {from}: it already holds one",
                        self.label(key)
                    ),
                    TokenOp::Fallback => format!(
                        "{who}'s reserve is empty: {n} {tokens} taken from {from} into {to}"
                    ),
                    TokenOp::Place => format!("{who} starts with {n} {tokens} on {to}"),
                    TokenOp::Return if n == 1 => format!("{who}'s token in {from} returns to {to}"),
                    TokenOp::Return => format!("{who}'s {n} tokens in {from} return to {to}"),
                }
            }
            Change::Short { owner, lost, .. } => format!(
                "{} could not gain {lost} {} into {}: not enough left",
                self.owner(owner),
                plural(u64::from(lost), "token", "tokens"),
                self.label(key)
            ),
            Change::Withheld {
                owner, owed, held, ..
            } => format!(
                "{} cannot pay all {owed} of {}'s {} owed ({held} left): nobody receives any",
                self.label(key),
                self.owner(owner),
                plural(u64::from(owed), "token", "tokens"),
            ),
            Change::Exhaust { exhausted, .. } => {
                format!("{} {}", k(), self.readiness(key.kind, exhausted))
            }
            Change::Demand { demand, raised, .. } => {
                if raised {
                    self.demand(&demand)
                } else {
                    format!("{} is back within its limit", self.key(demand.key))
                }
            }
            Change::Scope { scope, after, .. } => match scope {
                Scope::Act => format!("{} {} begins", self.vocabulary.round(), after.act + 1),
                Scope::Turn | Scope::Game => format!("the {} ends", self.scope(scope)),
                // The kernel's clock does not know which phase or step of the ruleset ended: a bare
                // "the phase ends" tells nothing; rulesets note the phases they name.
                Scope::Phase | Scope::Step => return None,
            },
            Change::Random { .. } => return None,
            Change::Note { code, args } => return self.note(event, code, args, seat),
        };
        Some(text)
    }

    fn note(&self, event: &Event, code: u16, args: [i32; 3], seat: Seat) -> Option<String> {
        let key = event.key;
        let Some(term) = self.vocabulary.notes.get(usize::from(code)) else {
            return Some(format!("{}: event {code}", self.key(key)));
        };
        let full = !term.secret || seat == Some(key.owner);
        let template = if full { &term.text } else { &term.redacted };
        if template.is_empty() {
            return None;
        }
        let mut out = String::with_capacity(template.len() + 16);
        let mut rest = template.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let Some(close) = rest[open..].find('}') else {
                break;
            };
            let name = &rest[open + 1..open + close];
            let arg = |i: usize| {
                if full {
                    args[i].to_string()
                } else {
                    "?".to_owned()
                }
            };
            match name {
                "who" => out.push_str(&self.owner(key.owner)),
                "player" => {
                    let player = match event.cause {
                        Cause::Action { player, .. } => player,
                        _ => key.owner,
                    };
                    out.push_str(&self.owner(player));
                }
                "subject" => out.push_str(&self.key(key)),
                "name" => out.push_str(&self.label(key)),
                "0" => out.push_str(&arg(0)),
                "1" => out.push_str(&arg(1)),
                "2" => out.push_str(&arg(2)),
                "value" if full => match usize::try_from(args[0])
                    .ok()
                    .and_then(|i| term.values.get(i))
                {
                    Some(v) => out.push_str(v),
                    None => out.push_str(&args[0].to_string()),
                },
                "value" => out.push('?'),
                other => {
                    out.push('{');
                    out.push_str(other);
                    out.push('}');
                }
            }
            rest = &rest[open + close + 1..];
        }
        out.push_str(rest);
        Some(out)
    }
}

/// Pieces of a Rust `Debug` rendering of a kernel type, or of an old renderer: never in a text a person
/// reads.
const DEBUG_PIECES: [&str; 11] = [
    "Key {",
    "Kind(",
    "Some(",
    "None",
    "Action {",
    "Upkeep(",
    "Effect(",
    "Owner(",
    "Refused(",
    "(got ",
    "(no change)",
];

/// The plain names [`Names`] falls back to for a number the vocabulary does not declare, and the raw
/// kind numbers of an old renderer ("kind 65535").
const PLAIN_NAMES: [&str; 8] = [
    "resource ",
    "kind ",
    "action ",
    "effect ",
    "phase ",
    "step ",
    "event ",
    "place ",
];

/// The first piece of `text` that is not in a game's words, if any: a Rust `Debug` rendering of a kernel
/// type (`Key {`, `Some(`...) or a plain name for a number the vocabulary did not declare ("resource 3",
/// "action 2"). For the tests of rulesets and hosts: every text a person reads should pass.
///
/// ```
/// assert_eq!(coffer_kernel::unreadable("p0's Gold holds 4; the cost is 5"), None);
/// assert_eq!(coffer_kernel::unreadable("p0's resource 3 holds 4").as_deref(), Some("resource 3"));
/// assert_eq!(coffer_kernel::unreadable("Key { owner: p0 }").as_deref(), Some("Key {"));
/// ```
pub fn unreadable(text: &str) -> Option<String> {
    if let Some(piece) = DEBUG_PIECES.iter().find(|p| text.contains(*p)) {
        return Some((*piece).to_owned());
    }
    let lower = text.to_lowercase();
    for word in PLAIN_NAMES {
        for (at, _) in lower.match_indices(word) {
            let rest = &lower[at + word.len()..];
            if rest.starts_with(|c: char| c.is_ascii_digit()) {
                let digits = rest.chars().take_while(char::is_ascii_digit).count();
                return Some(lower[at..at + word.len() + digits].to_owned());
            }
        }
    }
    None
}

/// `one` or `many` after a count.
pub fn plural<'a>(n: u64, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

// The kernel's types in plain words, without a ruleset's vocabulary: their `Display` is the words of
// `Names::plain()`, so it lives beside the words.

impl fmt::Display for Refusal {
    /// The refusal in plain words, without a ruleset's vocabulary (see
    /// [`Names::refusal`](Names::refusal) for a game's own words).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Names::plain().refusal(self))
    }
}

impl fmt::Display for Event {
    /// The event in plain words, without a ruleset's vocabulary (see [`Names::event`](Names::event)
    /// for a game's own words).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = Names::plain();
        match names.event(self, None) {
            Some(text) => f.write_str(&text),
            None => write!(
                f,
                "the game drew at random, by {}",
                names.cause(&self.cause)
            ),
        }
    }
}

impl fmt::Display for Cause {
    /// The cause in plain words, without a ruleset's vocabulary.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Names::plain().cause(self))
    }
}

impl fmt::Display for Key {
    /// The key in plain words, without a ruleset's vocabulary: `p0's resource 3 #2`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&Names::plain().key(*self))
    }
}

//! The game state: seats, cards, hands, decks and the kernel handles, the phase, the Act's results, and
//! the questions the rules ask of them; the kernel kinds, effect and note codes.

use crate::cards::{Band, Card, Handles, Zone};
use crate::config::{Config, PoliticalTie, Rules};
use crate::content::{CardDef, CardType, LocationKind};
use coffer_core::{AmountId, Kind, Ledger, Owner, PermanentId, Shared, TrackId};
use serde::{Deserialize, Serialize};

/// Ledger kinds of this ruleset's resources.
pub mod kind {
    use coffer_core::Kind;
    /// A player's Treasury (S1).
    pub const TREASURY: Kind = Kind(0);
    /// Committed Votes in the Resource Pool (S5, S7).
    pub const VOTES: Kind = Kind(1);
    /// EV in the Resource Pool (S6, S7).
    pub const EV: Kind = Kind(2);
    /// Story Points (S11, S12).
    pub const SP: Kind = Kind(3);
    /// A card's Character Points (S8); subject = card instance.
    pub const CP: Kind = Kind(4);
    /// Acts won (S12).
    pub const ACT_WINS: Kind = Kind(5);
    /// A Galactic Factor (S17); owner = game, subject = factor index.
    pub const FACTOR: Kind = Kind(6);
    /// A card's readiness (K5); subject = card instance.
    pub const CARD: Kind = Kind(7);
    /// A "-X CP:" ability's once-per-turn use (S8); subject = card instance.
    pub const ABILITY: Kind = Kind(8);
    /// The hand-size limit (S10, K6); subject 0.
    pub const HAND: Kind = Kind(9);
}

/// Effect codes used as `Cause::Effect(code)`, named in the vocabulary's `effects`.
pub mod effect {
    coffer_core::numbered_codes! {
        /// The Draw Phase's draw (S10).
        DRAW,
        /// Morality Penalties (S8).
        MORALITY,
        /// An aligned ability (S8).
        ALIGNED,
        /// Income (S2).
        INCOME,
        /// End-of-Act scoring (S13).
        SCORING,
        /// End-of-Act catch-up (S16).
        CATCH_UP,
        /// A self-inflicted award (S11).
        AWARD,
        /// A Fall resetting a Character's CP (S8).
        FALL,
        /// An Act won (S12).
        ACT_WON,
        /// The Ready Phase readying the active player's cards (S9).
        READY,
    }
}

/// Codes of the ruleset's own events (`Change::Note`), named in the vocabulary's `notes`. The note's key
/// names what it is about; its numbers are listed with each code.
pub mod note {
    coffer_core::numbered_codes! {
        /// A permanent or Storyline deployed from hand; key: the card.
        DEPLOY,
        /// A Maneuver played from hand; key: the card.
        PLAY,
        /// Secret: the card a player drew; key: the card. Only its owner reads it.
        DREW,
        /// Secret: a player drew a card; key: the player's hand. Everyone but its owner reads it.
        DRAW,
        /// A player's deck is empty: nothing drawn; key: the player's hand.
        DECK_EMPTY,
        /// A unit moved to the Space Band; key: the unit.
        MOVE_SPACE,
        /// A unit moved to a Surface Band; key: the unit; 0: whose Band.
        MOVE_SURFACE,
        /// A unit moved to a Planetary Band; key: the unit; 0: whose Band.
        MOVE_PLANETARY,
        /// A Surface Location captured (S14); key: the Location; 0: the capturer.
        CAPTURE,
        /// A Contested Surface Location Restored (S14); key: the Location.
        RESTORE,
        /// A Storyline advanced; key: the Storyline; 0: steps done, 1: steps it has.
        ADVANCE,
        /// A Storyline completed (S12); key: the Storyline.
        COMPLETE,
        /// A card discarded from hand (S10); key: the card.
        DISCARD,
        /// A card destroyed at 0 CP (S8); key: the card.
        DESTROYED,
        /// A Prime Character Falls (S8); key: the card; 0: its CP after.
        FALLS,
        /// A Homeworld flipped off its Prime face; key: the Homeworld.
        PRIME_LOST,
        /// An Act won (S12); key: the winner's Acts won; 0: the Act, 1: the winner's SP.
        ACT_WON,
        /// The game won (S12); key: the winner's Acts won.
        GAME_WON,
        /// A player's turn begins; key: that player's Treasury.
        TURN,
        /// A player ends their turn (End Turn); key: that player's Treasury.
        END_TURN,
    }
}

/// The phase a turn is in. Ready, Income and Draw run on their own at the start of a turn.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Ready Phase (S9).
    Ready,
    /// Income Phase (S2).
    Income,
    /// Draw Phase (S10).
    Draw,
    /// The main phase: the active player acts; anybody may play Fast actions.
    Main,
    /// End Phase (S10): waiting for a discard down to the hand limit.
    End,
}

impl Phase {
    /// Its number in the vocabulary's `phases` (the order of a turn).
    pub fn number(self) -> u16 {
        match self {
            Phase::Ready => 0,
            Phase::Income => 1,
            Phase::Draw => 2,
            Phase::Main => 3,
            Phase::End => 4,
        }
    }

    /// Its name, as the rules write it.
    pub fn name(self) -> &'static str {
        PHASES[usize::from(self.number())]
    }
}

/// The phases' names, in the order of a turn ([`Phase::number`]).
pub const PHASES: [&str; 5] = [
    "Ready Phase",
    "Income Phase",
    "Draw Phase",
    "main phase",
    "End Phase",
];

/// Per-player kernel handles.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Seat {
    /// Treasury (S1).
    pub treasury: AmountId,
    /// Resource Pool Votes (S5, S7).
    pub votes: AmountId,
    /// Resource Pool EV (S6, S7).
    pub ev: AmountId,
    /// Story Points (S11), lifetime one Act.
    pub sp: AmountId,
    /// Acts won (S12).
    pub act_wins: AmountId,
    /// The Homeworld's card instance.
    pub homeworld: u16,
    /// Whether the Homeworld shows its Prime face.
    pub prime_face: bool,
}

/// Result of one Act.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct ActResult {
    /// Act number, from 1.
    pub act: u8,
    /// Each player's SP at the count.
    pub scores: Vec<i64>,
    /// Who won it.
    pub winner: u16,
    /// Who was active when it ended.
    pub active: u16,
}

/// The whole state of a game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    /// Configuration and cards, shared by every game of the configuration (a snapshot carries the
    /// configuration only).
    pub rules: Shared<Rules>,
    /// Every resource.
    pub ledger: Ledger,
    /// Per-player handles.
    pub seats: Vec<Seat>,
    /// Galactic Factors (S17), in configuration order.
    pub factors: Vec<AmountId>,
    /// Every card instance.
    pub cards: Vec<Card>,
    /// The kernel handles of the cards' resources.
    pub handles: Handles,
    /// Each player's deck, top last.
    pub decks: Vec<Vec<u16>>,
    /// Each player's hand, in draw order.
    pub hands: Vec<Vec<u16>>,
    /// Whose turn it is.
    pub active: u16,
    /// The turn's phase.
    pub phase: Phase,
    /// The current Act (1, 2, 3).
    pub act: u8,
    /// Results of ended Acts.
    pub results: Vec<ActResult>,
    /// The cards in play, ascending (an index kept by [`State::put_in_play`] and [`State::leave_play`]).
    pub in_play: Vec<u16>,
    /// Winners, once the game is over.
    pub winners: Option<Vec<u16>>,
}

impl State {
    /// A card's definition.
    #[inline]
    pub fn def(&self, card: u16) -> &CardDef {
        self.rules.db.get(self.cards[usize::from(card)].def)
    }

    /// The configuration.
    #[inline]
    pub fn config(&self) -> &Config {
        &self.rules.config
    }

    /// A player's Treasury.
    pub fn treasury(&self, p: Owner) -> i64 {
        self.ledger.value(self.seats[p.index()].treasury)
    }

    /// A player's Story Points this Act.
    pub fn sp(&self, p: Owner) -> i64 {
        self.ledger.value(self.seats[p.index()].sp)
    }

    /// A player's Acts won.
    pub fn act_wins(&self, p: Owner) -> i64 {
        self.ledger.value(self.seats[p.index()].act_wins)
    }

    /// A player's committed Votes in the Resource Pool.
    pub fn pool_votes(&self, p: Owner) -> i64 {
        self.ledger.value(self.seats[p.index()].votes)
    }

    /// A player's EV in the Resource Pool.
    pub fn pool_ev(&self, p: Owner) -> i64 {
        self.ledger.value(self.seats[p.index()].ev)
    }

    /// A card's CP (0 for cards without).
    pub fn cp(&self, card: u16) -> i64 {
        self.cp_id(card).map_or(0, |a| self.ledger.value(a))
    }

    /// A card's readiness permanent (K5), if it is a permanent.
    #[inline]
    pub fn perm_id(&self, card: u16) -> Option<PermanentId> {
        self.handles.perm(&self.cards[usize::from(card)])
    }

    /// A card's CP amount (S8), if it prints CP.
    #[inline]
    pub fn cp_id(&self, card: u16) -> Option<AmountId> {
        self.handles.cp(&self.cards[usize::from(card)])
    }

    /// A card's "-X CP:" ability track (S8), if it prints one.
    #[inline]
    pub fn ability_id(&self, card: u16) -> Option<TrackId> {
        self.handles.ability(&self.cards[usize::from(card)])
    }

    /// A Galactic Factor's value.
    pub fn factor(&self, f: usize) -> i64 {
        self.ledger.value(self.factors[f])
    }

    /// Whether a card is exhausted (activated).
    pub fn exhausted(&self, card: u16) -> bool {
        self.perm_id(card)
            .is_some_and(|p| self.ledger.is_exhausted(p))
    }

    /// Number of players.
    pub fn players(&self) -> u16 {
        self.seats.len() as u16
    }

    /// The player whose turn it is.
    #[inline]
    pub fn active(&self) -> Owner {
        Owner(self.active)
    }

    /// The cards in play, ascending, with their instance numbers.
    #[inline]
    pub fn play(&self) -> impl Iterator<Item = (u16, &Card)> + '_ {
        self.in_play
            .iter()
            .map(|&i| (i, &self.cards[usize::from(i)]))
    }

    /// Puts a card into play in `band` under its owner's control, taking it out of the deck or hand (how a
    /// deploy ends; also for setting up scenarios).
    pub fn put_in_play(&mut self, card: u16, band: Option<Band>) {
        let c = &mut self.cards[usize::from(card)];
        let owner = usize::from(c.owner);
        c.zone = Zone::Play;
        c.band = band;
        self.decks[owner].retain(|&x| x != card);
        self.hands[owner].retain(|&x| x != card);
        if let Err(at) = self.in_play.binary_search(&card) {
            self.in_play.insert(at, card);
        }
    }

    /// Takes a card out of play into `zone` (a destroyed card, a completed Storyline).
    pub fn leave_play(&mut self, card: u16, zone: Zone) {
        leave_play(&mut self.cards, &mut self.in_play, card, zone);
    }

    /// Whether a Band holds a Surface Location (in play, whoever controls it).
    pub fn surface_occupied(&self, p: Owner) -> bool {
        self.play().any(|(_, c)| {
            c.band == Some(Band::Surface(p.0))
                && self.rules.db.get(c.def).card_type == CardType::Location
        })
    }

    /// S15: the Bands adjacent to `band`, skipping an empty Surface Band; calls `f` for each.
    pub fn adjacent(&self, band: Band, f: impl FnMut(Band)) {
        self.adjacent_in(self.occupied_surfaces(), band, f);
    }

    /// Which players' Surface Bands hold a Surface Location: bit `p` for player `p`.
    pub fn occupied_surfaces(&self) -> u32 {
        let mut bits = 0u32;
        for (_, c) in self.play() {
            if let Some(Band::Surface(q)) = c.band
                && self.rules.db.get(c.def).card_type == CardType::Location
            {
                bits |= 1 << q;
            }
        }
        bits
    }

    /// [`State::adjacent`] with the Surface Bands' occupancy already known ([`State::occupied_surfaces`]).
    pub fn adjacent_in(&self, occupied: u32, band: Band, mut f: impl FnMut(Band)) {
        let occ = |q: u16| occupied & (1 << q) != 0;
        match band {
            Band::Space => {
                for q in 0..self.players() {
                    f(if occ(q) {
                        Band::Surface(q)
                    } else {
                        Band::Planetary(q)
                    });
                }
            }
            Band::Surface(q) => {
                f(Band::Space);
                f(Band::Planetary(q));
            }
            Band::Planetary(q) => {
                f(if occ(q) {
                    Band::Surface(q)
                } else {
                    Band::Space
                });
            }
        }
    }

    /// Whether `a` and `b` are adjacent (S15).
    pub fn is_adjacent(&self, a: Band, b: Band) -> bool {
        self.is_adjacent_in(self.occupied_surfaces(), a, b)
    }

    /// [`State::is_adjacent`] with the Surface Bands' occupancy already known.
    pub fn is_adjacent_in(&self, occupied: u32, a: Band, b: Band) -> bool {
        let mut found = false;
        self.adjacent_in(occupied, a, |x| found |= x == b);
        found
    }

    /// S4: a player's standing Vote: printed Votes of cards they control in play; Characters and Ground
    /// Units only while ready; any card whose Votes are committed (S5) not until it readies.
    pub fn standing_vote(&self, p: Owner) -> u64 {
        let mut sum = 0u64;
        for (_, c) in self.play() {
            if c.controller != p.0 {
                continue;
            }
            let d = self.rules.db.get(c.def);
            if d.votes == 0 {
                continue;
            }
            let exhausted = self
                .handles
                .perm(c)
                .is_some_and(|id| self.ledger.is_exhausted(id));
            let counts = if matches!(d.card_type, CardType::Character | CardType::GroundUnit) {
                !exhausted
            } else {
                !(exhausted && c.committed)
            };
            if counts {
                sum += u64::from(d.votes);
            }
        }
        sum
    }

    /// S4: the player in political control: most standing Vote; a tie per [`Config::political_tie`].
    pub fn political_control(&self) -> Option<Owner> {
        self.control_by(|p| self.standing_vote(p))
    }

    /// [`State::political_control`] with each player's standing Vote given by `vote` (already counted).
    pub fn control_by(&self, vote: impl Fn(Owner) -> u64) -> Option<Owner> {
        let mut best = 0u64;
        let mut who: Option<Owner> = None;
        let mut tied = false;
        let mut active_tops = false;
        for p in (0..self.players()).map(Owner) {
            let v = vote(p);
            if who.is_none() || v > best {
                best = v;
                who = Some(p);
                tied = false;
            } else if v == best {
                tied = true;
            }
        }
        if tied {
            if self.config().political_tie == PoliticalTie::ActivePlayer {
                active_tops = vote(self.active()) == best;
            }
            return active_tops.then_some(self.active());
        }
        who
    }

    /// Income a player gains in their Income Phase (S2): their Homeworld, Planetary and Surface Locations.
    pub fn income(&self, p: Owner) -> u64 {
        self.play()
            .filter(|(_, c)| c.controller == p.0)
            .map(|(_, c)| self.rules.db.get(c.def))
            .filter(|d| matches!(d.card_type, CardType::Homeworld | CardType::Location))
            .map(|d| u64::from(d.income))
            .sum()
    }

    /// The Band a card deploys to.
    pub fn deploy_band(&self, def: &CardDef, p: Owner) -> Option<Band> {
        let p = p.0;
        match def.card_type {
            CardType::Location => match def.location {
                Some(LocationKind::Surface) => Some(Band::Surface(p)),
                _ => Some(Band::Planetary(p)),
            },
            CardType::Homeworld | CardType::Character | CardType::GroundUnit => {
                Some(Band::Planetary(p))
            }
            CardType::Spacecraft => Some(Band::Space),
            _ => None,
        }
    }
}

/// Takes `card` out of play (the field-level form, for code that holds the state's parts separately).
pub fn leave_play(cards: &mut [Card], in_play: &mut Vec<u16>, card: u16, zone: Zone) {
    let c = &mut cards[usize::from(card)];
    c.zone = zone;
    c.band = None;
    if let Ok(at) = in_play.binary_search(&card) {
        in_play.remove(at);
    }
}

/// A kernel key for a player's resource.
pub fn key(p: Owner, k: Kind, subject: u32) -> coffer_core::Key {
    coffer_core::Key::new(p, k, subject)
}

/// The kernel key naming card instance `card` of `owner` (its readiness permanent, when it has one; the
/// subject of the ruleset's notes about it).
pub fn card_key(owner: Owner, card: u16) -> coffer_core::Key {
    key(owner, kind::CARD, u32::from(card))
}

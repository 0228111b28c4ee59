//! The JSON-readable [`Action`] enum, its codes and names, and [`Players`], a set of players an action
//! names.

use crate::config::{MAX_PLAYERS, Vote};
use crate::ids::Pool;
use coffer_core::Owner;
use serde::{Deserialize, Serialize};

/// One player action. JSON reads `{"type":"tactical","system":3}`. Systems, ship classes and strategy
/// cards are indices into the galaxy, `data/ships.json` and `data/strategy_cards.json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Strategy phase: take a strategy card nobody holds.
    Pick {
        /// Card index.
        card: u8,
    },
    /// Tactical action (T4): spend a tactic token and place it in a system without one of your tokens.
    Tactical {
        /// System index.
        system: u16,
    },
    /// Production in the activated system: one ship of a class from your ship reinforcements.
    Produce {
        /// Ship-class index.
        class: u8,
    },
    /// Ends production (and the tactical action).
    Done,
    /// Strategic action: resolve the primary of a strategy card you hold and have not used.
    Strategic {
        /// Card index.
        card: u8,
    },
    /// Pass for the rest of the action phase (only once every card you hold is used).
    Pass,
    /// Put one gained token into a pool (T2).
    Gain {
        /// The pool.
        pool: Pool,
    },
    /// Spend influence for tokens, one per 3 (T9); the excess is wasted.
    Buy {
        /// Influence spent.
        influence: u32,
    },
    /// Resolve the secondary of the card just played, paying its cost in strategy tokens (T5).
    Secondary,
    /// Decline the secondary.
    Decline,
    /// Diplomacy: the system where each other player places a token.
    Diplomacy {
        /// System index.
        system: u16,
    },
    /// The pool a token placed "from reinforcements" comes from when reinforcements are empty (T3).
    Fallback {
        /// The pool.
        pool: Pool,
    },
    /// Warfare: remove one of your tokens from the board.
    RemoveToken {
        /// System index.
        system: u16,
    },
    /// Construction secondary: place a token from reinforcements in a system (T3, T6).
    Place {
        /// System index.
        system: u16,
        /// The pool it comes from if reinforcements are empty (T3); omitted otherwise.
        #[serde(default)]
        fallback: Option<Pool>,
    },
    /// Redistribute every command-sheet token among the three pools (status phase, Warfare).
    Redistribute {
        /// Tactic pool.
        tactic: u8,
        /// Fleet pool.
        fleet: u8,
        /// Strategy pool.
        strategy: u8,
    },
    /// T7/K6: remove one ship over the fleet limit to reinforcements (the only legal action while pending).
    RemoveShip {
        /// System index.
        system: u16,
        /// Ship-class index.
        class: u8,
    },
    /// Trade's primary (T11): the other players who resolve the secondary without spending a command
    /// token, any number of them: `{"type":"free_secondaries","players":[1,3]}`.
    FreeSecondaries {
        /// Player indices, each at most once; not the active player.
        players: Players,
    },
    /// Tactical action, movement (T14): one ship of a class moves from a system into the activated system,
    /// transporting up to its capacity of fighters from the system it starts in.
    /// `{"type":"move","from":4,"class":3,"fighters":2}`
    Move {
        /// System index the ship starts in.
        from: u16,
        /// Ship-class index (a class with a move value).
        class: u8,
        /// Fighters it transports (omitted: none).
        #[serde(default)]
        fighters: u8,
    },
    /// Ends movement: a space combat follows if another player has ships in the activated system (T15),
    /// else production.
    EndMovement,
    /// Space combat (T15): announce a retreat this combat round.
    AnnounceRetreat,
    /// Space combat (T15): announce no retreat this combat round.
    NoRetreat,
    /// Space combat (T15): the hits your combat roll produced (dice are rolled at the table).
    Roll {
        /// Hits, at most one per ship of yours in the combat.
        hits: u8,
    },
    /// Space combat (T15): destroy one of your ships in the combat for a hit against you.
    Destroy {
        /// Ship-class index.
        class: u8,
    },
    /// Edict (T17): over a law's fleet-pool maximum, return a token from your fleet pool to its owner's
    /// reinforcements: one of yours (`player` is you) or another player's.
    Release {
        /// Whose token.
        player: u16,
    },
    /// Elimination (T18, LRR 33): after the invasion step, the active player records that the table found
    /// a player (another, or themselves) meeting LRR 33.1's three conditions; their command tokens and
    /// units leave play. `{"type":"eliminate","player":2}`
    Eliminate {
        /// The eliminated player.
        player: u16,
    },
    /// Star Forge (T19), a component action taking the turn: spend the Star Forge's strategy tokens to
    /// place ships of a class from your reinforcements in a system holding one of your ships of the Star
    /// Forge's class (the Embers of Muaat: 1 token; 2 fighters or 1 destroyer; a war sun's system).
    /// `{"type":"star_forge","system":4,"class":1}`
    StarForge {
        /// System index.
        system: u16,
        /// Ship-class index of the ships placed.
        class: u8,
    },
    /// Play an action card of your hand (T22), by its slot in the game's list of dealt cards, in its
    /// window, with what its effect needs: `player` (Insubordination, Signal Jamming), `system` (Unexpected
    /// Action, Signal Jamming, Skilled Retreat) and `fallback` (Skilled Retreat: the pool of the token when
    /// reinforcements are empty); a rider's prediction, `vote` or `elect`.
    /// `{"type":"play_card","card":0}`, `{"type":"play_card","card":2,"player":1}`
    PlayCard {
        /// Slot of the card in the game's list of dealt cards.
        card: u8,
        /// The player the card targets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        player: Option<u16>,
        /// The system the card targets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system: Option<u16>,
        /// The pool a placed token comes from when reinforcements are empty (T3).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fallback: Option<Pool>,
        /// A rider's prediction of For or Against.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        vote: Option<Vote>,
        /// A rider's prediction of the player elected.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        elect: Option<u16>,
    },
    /// Play no (more) action card in this window (T22).
    NoCard,
    /// Use an ability that reacts to another player (T23), by its index in the game's list: Nullification
    /// Field after a system holding your ships is activated; Foresight, with the adjacent `system`, after
    /// ships move into a system holding yours. `{"type":"use_ability","ability":1,"system":4}`
    UseAbility {
        /// Index into the game's abilities.
        ability: u8,
        /// Foresight's system.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system: Option<u16>,
        /// Fabrication's pool for the command token gained (T28).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pool: Option<Pool>,
    },
    /// Do not use the ability the game waits on (T23).
    NoReaction,
    /// Quantum Datahub Node (T27): at the end of the strategy phase, give your strategy card `give` to its
    /// other player... and take their card `take`. `{"type":"swap_cards","give":1,"take":4}`
    SwapCards {
        /// Your card given.
        give: u8,
        /// The other player's card taken.
        take: u8,
    },
    /// Research Grant Reallocation (T29): the speaker enters how many prerequisites the technology the
    /// elected player gains has (0 to 4). `{"type":"prerequisites","count":2}`
    Prerequisites {
        /// The number of prerequisites.
        count: u8,
    },
    /// Genetic Recombination (T27): before votes are cast, name the player who must vote as you choose or
    /// return a fleet-pool token. `{"type":"recombine","player":2}`
    Recombine {
        /// The player named.
        player: u16,
    },
    /// A component action that spends strategy tokens and takes the turn (T21: Orbital Drop, Production
    /// Biomes): its index in the game's list of them (`coffer describe` and the table name them).
    /// `{"type":"component_action","ability":0}`
    ComponentAction {
        /// Index into the game's component actions.
        ability: u8,
    },
    /// Agenda phase (T20): the speaker enters the agenda revealed from the deck: its index in
    /// `data/agendas.json`, or none for an agenda that does nothing to command tokens.
    /// `{"type":"reveal_agenda","agenda":0}`, `{"type":"reveal_agenda"}`
    RevealAgenda {
        /// Agenda index; omitted: an agenda without a command-token effect.
        #[serde(default)]
        agenda: Option<u8>,
    },
    /// Quash (T20, the Xxcha Kingdom): spend a strategy token to discard the revealed agenda; the speaker
    /// reveals another.
    Quash,
    /// Quash (T20): let the revealed agenda stand.
    NoQuash,
    /// Agenda phase (T20): the outcome the table voted for a For/Against agenda.
    /// `{"type":"outcome","vote":"against"}`
    Outcome {
        /// For or Against.
        vote: Vote,
        /// The players who voted Against, when the agenda's Against concerns them (Wormhole Research;
        /// T24): `{"type":"outcome","vote":"against","voted_against":[0,2]}`.
        #[serde(default, skip_serializing_if = "Players::is_empty")]
        voted_against: Players,
    },
    /// Agenda phase (T24): the strategy card an Elect Strategy Card agenda elects.
    /// `{"type":"elect_card","card":3}`
    ElectCard {
        /// Card index.
        card: u8,
    },
    /// Minister of War (T24): at the end of your turn, discard it to return your command token in
    /// `system` to reinforcements and take one more action. `{"type":"additional_action","system":3}`
    AdditionalAction {
        /// System index.
        system: u16,
    },
    /// Agenda phase (T20): the player an Elect Player agenda elects. `{"type":"elect","player":2}`
    Elect {
        /// The elected player.
        player: u16,
    },
    /// Agenda phase (T20): return a command token from a pool of your command sheet to reinforcements.
    /// `{"type":"return_token","pool":"tactic"}`
    ReturnToken {
        /// The pool.
        pool: Pool,
    },
    /// Space combat (T16): retreat every ship to an adjacent system and place a command token there.
    Retreat {
        /// System index.
        system: u16,
        /// The pool the token comes from if reinforcements are empty (T3); omitted otherwise.
        #[serde(default)]
        fallback: Option<Pool>,
    },
}

/// A set of players, written as the list of their indices in ascending order (`[1, 3]`), at most
/// [`MAX_PLAYERS`]: one written form per set, so an action has one JSON text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Players(pub u8);

impl Players {
    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0 == 0
    }

    /// Whether player `p` is in the set.
    pub fn contains(self, p: Owner) -> bool {
        p.index() < MAX_PLAYERS && self.0 & (1 << p.0) != 0
    }

    /// The players in ascending order.
    pub fn iter(self) -> impl Iterator<Item = Owner> {
        (0..MAX_PLAYERS as u16)
            .map(Owner)
            .filter(move |&p| self.contains(p))
    }

    /// "p1 and p3", "p1, p2 and p3"; empty for none.
    pub fn names(self) -> String {
        let names: Vec<String> = self.iter().map(|p| p.to_string()).collect();
        match names.split_last() {
            None => String::new(),
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} and {last}", rest.join(", ")),
        }
    }
}

impl Serialize for Players {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(|p| p.0))
    }
}

impl<'de> Deserialize<'de> for Players {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Players, D::Error> {
        let list = Vec::<u8>::deserialize(d)?;
        let mut set = 0u8;
        for p in list {
            if usize::from(p) >= MAX_PLAYERS {
                return Err(serde::de::Error::custom(format!(
                    "player {p}: players are numbered 0 to {}",
                    MAX_PLAYERS - 1
                )));
            }
            if set & (1 << p) != 0 {
                return Err(serde::de::Error::custom(format!(
                    "player {p} is listed twice"
                )));
            }
            // One written form per set, as listed: a player below one already given is out of order.
            if set >> p != 0 {
                return Err(serde::de::Error::custom(format!(
                    "player {p} comes after a higher one: list the players in ascending order"
                )));
            }
            set |= 1 << p;
        }
        Ok(Players(set))
    }
}

// Codes are the number in events' `Cause::Action`, part of saved games and event logs: in this order,
// new actions at the end. The names are nouns, as causes read "p0's tactical action".
coffer_core::action_codes!(Action {
    Pick => "strategy card pick",
    Tactical => "tactical action",
    Produce => "production",
    Done => "end of production",
    Strategic => "strategic action",
    Pass => "pass",
    Gain => "choice of a pool for a gained token",
    Buy => "purchase of command tokens",
    Secondary => "secondary ability",
    Decline => "declined secondary ability",
    Diplomacy => "choice of a system for the other players' tokens",
    Fallback => "choice of the pool a placed token comes from",
    RemoveToken => "removal of a command token from the board",
    Place => "placement of a command token",
    Redistribute => "redistribution",
    RemoveShip => "removal of a ship over the fleet limit",
    FreeSecondaries => "choice of the players who resolve the secondary ability for free",
    Move => "movement of a ship",
    EndMovement => "end of movement",
    AnnounceRetreat => "announcement of a retreat",
    NoRetreat => "decision not to retreat",
    Roll => "combat roll",
    Destroy => "destruction of a ship for a hit",
    Retreat => "retreat",
    Release => "return of a command token over the fleet pool's maximum",
    Eliminate => "elimination of a player",
    StarForge => "Star Forge",
    RevealAgenda => "revelation of an agenda",
    Quash => "Quash",
    NoQuash => "decision to let the agenda stand",
    Outcome => "outcome of an agenda",
    Elect => "election of a player",
    ReturnToken => "return of a command token to reinforcements",
    ComponentAction => "component action",
    PlayCard => "play of an action card",
    NoCard => "decision to play no action card",
    UseAbility => "use of an ability",
    NoReaction => "decision to use no ability",
    ElectCard => "election of a strategy card",
    AdditionalAction => "additional action",
    SwapCards => "swap of strategy cards",
    Recombine => "naming of a voter",
    Prerequisites => "prerequisites of a technology",
});

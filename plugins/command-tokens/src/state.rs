//! The game state: the kernel ledger with its token zones (command tokens and ships), the zone handles, the
//! rules and the flow; what a player holds and where their ships are.

use crate::config::{MAX_PLAYERS, MAX_SYSTEMS, Rules};
use crate::content::Window;
use crate::ids::{Pool, kind, owner};
use crate::phase::{Flow, Step};
use coffer_core::{
    AmountId, Cause, Key, LaidOut, Layout, Ledger, Owner, PermanentId, Shared, Unlaid, Violation,
    ZoneId,
};
use serde::{Deserialize, Serialize};

/// Handles into the ledger, and the ledger's layout they index. Setup creates every resource in the same
/// order for every game of one player count and configuration, so games share them (a snapshot carries
/// only that key).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Handles {
    /// The ledger's zones, supply totals and reserves, which setup fixes: every game of the setup shares
    /// them, and its snapshots leave them out ([`Ledger::laid_out`]).
    pub layout: Layout,
    /// Command-token reinforcements (one zone, counts per player).
    pub reinforcements: ZoneId,
    /// The tactic, fleet and strategy pools.
    pub pools: [ZoneId; 3],
    /// One one-per-owner zone per system.
    pub systems: Vec<ZoneId>,
    /// Ship reinforcements per class.
    pub ship_reserve: Vec<ZoneId>,
    /// Ships per system and class: `system * classes + class`.
    pub ships: Vec<ZoneId>,
    /// Influence per player.
    pub influence: Vec<AmountId>,
    /// Structures per player.
    pub structures: Vec<AmountId>,
    /// Strategy cards.
    pub cards: Vec<PermanentId>,
    /// Per player, the zone of other players' tokens in their fleet pool, for a player with Edict (T17).
    pub captured: Vec<Option<ZoneId>>,
    /// The game box, per kernel supply: where an eliminated player's components go (T18, LRR 33.2).
    pub boxed: Vec<ZoneId>,
    /// The agenda cards, exhausted once revealed (T20); empty without an agenda phase.
    pub agendas: Vec<PermanentId>,
    /// The component actions of [`Rules::abilities`], exhausted when used if their card exhausts (T21).
    pub abilities: Vec<PermanentId>,
    /// The action cards of [`Rules::hands`], exhausted once played (T22).
    pub hand: Vec<PermanentId>,
    /// Per player, their relic fragments (T28); empty when the game has none.
    pub fragments: Vec<AmountId>,
}

/// The whole state of one game. A snapshot carries the ledger without its layout, which the handles'
/// setup gives back ([`Unlaid::lay`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(try_from = "StateData")]
pub struct State {
    /// The kernel ledger: every token, ship, amount and card.
    pub ledger: Ledger,
    /// The rules of this game, shared by every game of the same player count and configuration (a
    /// snapshot carries only those).
    pub rules: Shared<Rules>,
    /// Handles into the ledger.
    pub h: Shared<Handles>,
    /// Where the round stands.
    pub flow: Flow,
}

/// A [`State`] as it is written: the ledger on its setup's layout.
#[derive(Serialize)]
struct StateOut<'a> {
    ledger: LaidOut<'a>,
    rules: &'a Shared<Rules>,
    h: &'a Shared<Handles>,
    flow: &'a Flow,
}

impl Serialize for State {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        StateOut {
            ledger: self.ledger.laid_out(&self.h.layout),
            rules: &self.rules,
            h: &self.h,
            flow: &self.flow,
        }
        .serialize(s)
    }
}

/// A [`State`] as it is read: the ledger is laid on the layout of the setup its handles name, and checked.
#[derive(Deserialize)]
struct StateData {
    ledger: Unlaid,
    rules: Shared<Rules>,
    h: Shared<Handles>,
    flow: Flow,
}

impl TryFrom<StateData> for State {
    type Error = Violation;
    fn try_from(d: StateData) -> Result<State, Violation> {
        Ok(State {
            ledger: d.ledger.lay(&d.h.layout)?,
            rules: d.rules,
            h: d.h,
            flow: d.flow,
        })
    }
}

impl State {
    /// Number of players.
    #[inline]
    pub fn players(&self) -> u8 {
        self.ledger.owners() as u8
    }

    /// The players, in seat order.
    #[inline]
    pub fn owners(&self) -> impl Iterator<Item = Owner> + use<> {
        (0..self.ledger.owners()).map(Owner)
    }

    /// Whether `player` has been eliminated (T18).
    #[inline]
    pub fn is_eliminated(&self, player: Owner) -> bool {
        player.0 < 8 && self.flow.out & (1 << player.0) != 0
    }

    /// The players still in the game (T18).
    #[inline]
    pub fn live_players(&self) -> u8 {
        self.players() - self.flow.out.count_ones() as u8
    }

    /// The `k`-th player still in the game, counting from seat `from` (itself first if still in) to the
    /// left, in seat order: picks and the status phase go round the table this way, skipping the
    /// eliminated (T18).
    pub fn live_seat(&self, from: u8, k: u8) -> Owner {
        let n = self.players();
        let mut left = k;
        for i in 0..n {
            let q = (from + i) % n;
            if self.flow.out & (1 << q) == 0 {
                if left == 0 {
                    return owner(q);
                }
                left -= 1;
            }
        }
        owner(from)
    }

    /// The player whose pick the strategy phase waits for: from the speaker round the table, skipping the
    /// eliminated (T18).
    #[inline]
    pub fn picker(&self) -> Owner {
        self.live_seat(
            self.flow.speaker,
            self.flow.picks % self.live_players().max(1),
        )
    }

    /// `player`'s tokens in a pool.
    #[inline]
    pub fn pool(&self, player: Owner, pool: Pool) -> u32 {
        self.ledger.tokens(self.h.pools[pool.index()], player)
    }

    /// The tokens in `player`'s fleet pool: their own and, with Edict, other players' (T17).
    #[inline]
    pub fn fleet_tokens(&self, player: Owner) -> u32 {
        self.pool(player, Pool::Fleet) + self.captured(player)
    }

    /// Other players' tokens in `player`'s fleet pool (Edict, T17).
    #[inline]
    pub fn captured(&self, player: Owner) -> u32 {
        match self.h.captured.get(player.index()) {
            Some(Some(zone)) => self.ledger.zone_tokens(*zone).iter().sum(),
            _ => 0,
        }
    }

    /// Whether `player`'s fleet pool holds a token of `other`'s (Edict, T17).
    pub fn holds_token_of(&self, player: Owner, other: Owner) -> bool {
        match self.h.captured.get(player.index()) {
            Some(Some(zone)) => self.ledger.tokens(*zone, other) > 0,
            _ => false,
        }
    }

    /// The most of `player`'s own tokens their fleet pool may hold under a law (Fleet Regulations, T7),
    /// other players' tokens there counted first (T17); `None` without such a law.
    pub fn own_fleet_max(&self, player: Owner) -> Option<u32> {
        self.fleet_pool_max()
            .map(|m| u32::from(m).saturating_sub(self.captured(player)))
    }

    /// The most tokens a fleet pool may hold under the laws in play, from the start or put in play by an
    /// agenda (Fleet Regulations; T7, T20); `None` without such a law.
    pub fn fleet_pool_max(&self) -> Option<u8> {
        let mut max = self.rules.fleet_pool_max;
        let mut enacted = self.flow.enacted;
        while enacted != 0 {
            let law = enacted.trailing_zeros() as usize;
            enacted &= enacted - 1;
            if let Some(m) = self.rules.law_list.get(law).and_then(|l| l.1) {
                max = Some(max.map_or(m, |x| x.min(m)));
            }
        }
        max
    }

    /// `player`'s tokens in reinforcements.
    #[inline]
    pub fn reinforcements(&self, player: Owner) -> u32 {
        self.ledger.tokens(self.h.reinforcements, player)
    }

    /// `player`'s tokens on the command sheet (the three pools).
    #[inline]
    pub fn sheet(&self, player: Owner) -> u32 {
        self.pool(player, Pool::Tactic)
            + self.pool(player, Pool::Fleet)
            + self.pool(player, Pool::Strategy)
    }

    /// Whether `player` has a command token in `system`.
    #[inline]
    pub fn has_token(&self, player: Owner, system: usize) -> bool {
        self.ledger.tokens(self.h.systems[system], player) > 0
    }

    /// `player`'s command tokens on the board.
    pub fn board_tokens(&self, player: Owner) -> u32 {
        self.ledger.tokens_in(player, kind::SYSTEM)
    }

    /// `player`'s ships of `class` in `system`.
    #[inline]
    pub fn ships(&self, player: Owner, system: usize, class: usize) -> u32 {
        self.ledger.tokens(
            self.h.ships[system * self.rules.class_count() + class],
            player,
        )
    }

    /// `player`'s ships of `class` in reinforcements.
    #[inline]
    pub fn ship_reserve(&self, player: Owner, class: usize) -> u32 {
        self.ledger.tokens(self.h.ship_reserve[class], player)
    }

    /// `player`'s non-fighter ships (classes that count toward the fleet limit) in `system`.
    #[inline]
    pub fn fleet_ships(&self, player: Owner, system: usize) -> u32 {
        let base = system * self.rules.class_count();
        let ships: u32 = self
            .rules
            .fleet_classes
            .iter()
            .map(|&c| {
                self.ledger
                    .tokens(self.h.ships[base + usize::from(c)], player)
            })
            .sum();
        ships + self.excess_fighters(player, system)
    }

    /// T25: the ships `player`'s fighters beyond their ships' capacity in `system` count as against the
    /// fleet pool (Fighter II: one each; Hybrid Crystal Fighter II: one half each, rounded up); 0 without
    /// such a technology.
    #[inline]
    pub fn excess_fighters(&self, player: Owner, system: usize) -> u32 {
        let weight = u32::from(self.rules.excess_fighters[player.index()]);
        match self.rules.transported {
            Some(t) if weight > 0 => {
                let excess = self
                    .ships(player, system, usize::from(t))
                    .saturating_sub(self.capacity(player, system));
                (weight * excess).div_ceil(2)
            }
            _ => 0,
        }
    }

    /// The capacity of `player`'s ships in `system` (LRR 16).
    pub fn capacity(&self, player: Owner, system: usize) -> u32 {
        self.rules
            .classes
            .iter()
            .enumerate()
            .map(|(c, class)| self.ships(player, system, c) * u32::from(class.capacity))
            .sum()
    }

    /// `player`'s ships of every class in `system`, fighters included.
    pub fn all_ships(&self, player: Owner, system: usize) -> u32 {
        (0..self.rules.class_count())
            .map(|c| self.ships(player, system, c))
            .sum()
    }

    /// The combat dice `player`'s ships in `system` roll together (LRR 78.5): each ship its class's dice.
    pub fn dice(&self, player: Owner, system: usize) -> u32 {
        (0..self.rules.class_count())
            .map(|c| self.ships(player, system, c) * u32::from(self.rules.classes[c].dice))
            .sum()
    }

    /// The move value of `player`'s ships of class `class`, if they have one (T14, T19: the faction's own
    /// units may differ from the class).
    #[inline]
    pub fn move_value(&self, player: Owner, class: usize) -> Option<u8> {
        let m = self.rules.moves[player.index() * self.rules.class_count() + class];
        (m > 0).then_some(m)
    }

    /// Whether `player` may produce ships of class `class`: it is not locked, or their faction or a
    /// technology they own unlocks it (T19).
    #[inline]
    pub fn may_produce(&self, player: Owner, class: usize) -> bool {
        self.rules.producible[player.index()] & (1 << class) != 0
    }

    /// The players with ships in `system`, as a bit per player.
    pub fn ship_owners(&self, system: usize) -> u8 {
        let base = system * self.rules.class_count();
        let mut owners = 0u8;
        for c in 0..self.rules.class_count() {
            let row = self.ledger.zone_tokens(self.h.ships[base + c]);
            for (p, &count) in row.iter().enumerate().take(MAX_PLAYERS) {
                if count > 0 {
                    owners |= 1 << p;
                }
            }
        }
        owners
    }

    /// For each system, whether a player other than `player` has ships there: one pass over each other
    /// player's ship zones in the kernel's board index (K4.8), not a look-up per system, class and player
    /// (a sixth of a playout's instructions when the movement search asked system by system).
    pub(crate) fn ships_of_others(&self, player: Owner) -> [bool; MAX_SYSTEMS] {
        let mut blocked = [false; MAX_SYSTEMS];
        for q in self.owners().filter(|&q| q != player) {
            for z in self.ledger.zones_holding_in(q, kind::SHIPS) {
                if let Some(b) = blocked.get_mut(self.ships_zone(z).0) {
                    *b = true;
                }
            }
        }
        blocked
    }

    /// The system and class of a ships zone ([`Handles::ships`]): its subject is
    /// `system * classes + class`, so zones in creation order go by ascending system, then class.
    #[inline]
    pub(crate) fn ships_zone(&self, zone: ZoneId) -> (usize, usize) {
        let classes = self.rules.class_count().max(1);
        let subject = self.ledger.zones()[zone.index()].key.subject as usize;
        (subject / classes, subject % classes)
    }

    /// Whether a player other than `player` has ships in `system`.
    pub fn others_have_ships(&self, player: Owner, system: usize) -> bool {
        self.ship_owners(system) & !(1u8 << player.0) != 0
    }

    /// T7: the most non-fighter ships `player` may have in a system: fleet-pool tokens plus the faction's
    /// bonus (Letnev +2).
    #[inline]
    pub fn fleet_limit(&self, player: Owner) -> u32 {
        self.fleet_tokens(player) + u32::from(self.rules.fleet_bonus[player.index()])
    }

    /// `player`'s influence left this round.
    #[inline]
    pub fn influence(&self, player: Owner) -> u64 {
        self.ledger.value(self.h.influence[player.index()]).max(0) as u64
    }

    /// `player`'s structures.
    pub fn structures(&self, player: Owner) -> i64 {
        self.ledger.value(self.h.structures[player.index()])
    }

    /// The key of `player`'s fleet-limit demand in `system`.
    #[inline]
    pub fn limit_key(player: Owner, system: usize) -> Key {
        Key::new(player, kind::FLEET_LIMIT, system as u32)
    }

    /// T7 via K6: checks `player`'s ships in `system` against the fleet limit; an excess raises (or updates)
    /// a demand, compliance satisfies it.
    pub fn check_fleet_in(&mut self, player: Owner, system: usize, cause: Cause) {
        let (measured, max) = (
            u64::from(self.fleet_ships(player, system)),
            u64::from(self.fleet_limit(player)),
        );
        self.ledger
            .check_limit(State::limit_key(player, system), measured, max, cause);
    }

    /// T7 via K6: checks `player`'s ships against the fleet limit in every system; an excess raises (or
    /// updates) a demand the player must resolve before anything else; compliance satisfies it.
    pub fn recheck_fleet(&mut self, player: Owner, cause: Cause) {
        let max = u64::from(self.fleet_limit(player));
        for s in 0..self.rules.system_count() {
            let measured = u64::from(self.fleet_ships(player, s));
            if measured > max || !self.ledger.pending().is_empty() {
                self.ledger
                    .check_limit(State::limit_key(player, s), measured, max, cause);
            }
        }
    }

    /// Whether a round of a space combat is under way: one of its steps, or a card played at its start
    /// waiting on cancelling (T26).
    pub fn in_combat_round(&self) -> bool {
        self.flow.step.in_space_combat()
            || self.flow.step == Step::Cancel
                && self.flow.pending.is_some_and(|c| {
                    self.rules
                        .hands
                        .get(usize::from(c.card))
                        .is_some_and(|h| h.window == Window::StartOfCombatRound)
                })
    }
}

/// The fleet ships of each of `N` players in one system (`rows`: its ships zones' rows of the token
/// matrix, class after class), the classes of `fleet_classes` summed, into `ships`, and a bit per player
/// with ships of any class there (`others`: the classes outside the fleet). The players' count is checked by
/// [`State::check_shape`] (at most [`MAX_PLAYERS`]).
#[inline]
pub(crate) fn ships_in<const N: usize>(
    rows: &[u32],
    fleet_classes: &[u8],
    others: &[usize],
    ships: &mut [u32; MAX_PLAYERS],
) -> u8 {
    let row = |c: usize| {
        rows.get(c * N..(c + 1) * N)
            .and_then(|r| r.first_chunk::<N>())
    };
    let mut fleet = [0u32; N];
    for &c in fleet_classes {
        if let Some(row) = row(usize::from(c)) {
            for i in 0..N {
                fleet[i] += row[i];
            }
        }
    }
    let mut any = fleet;
    for &c in others {
        if let Some(row) = row(c) {
            for i in 0..N {
                any[i] |= row[i];
            }
        }
    }
    let mut owners = 0u8;
    for (i, &count) in any.iter().enumerate() {
        owners |= u8::from(count > 0) << i;
    }
    ships.fill(0);
    ships[..N].copy_from_slice(&fleet);
    owners
}

/// The kernel supply (K4) that holds a player's ship pieces of class `class`; supply 0 is the command tokens.
pub fn ship_supply(class: usize) -> u16 {
    u16::try_from(class + 1).unwrap_or(u16::MAX)
}

//! The state's invariants: its shape (zones, handles, stock) and the rules' (pools, fleets, the flow).

use crate::config::{AgendaOp, COMMAND_TOKENS, MAX_HAND_CARDS, MAX_PLAYERS, MIN_PLAYERS, NOBODY};
use crate::content::{MAX_CARDS, MAX_CLASSES};
use crate::ids::{kind, owner, slot};
use crate::phase::{Phase, Step};
use crate::state::{State, ship_supply, ships_in};
use coffer_core::{Owner, Violation, ZoneId};

impl State {
    /// Checks that the rules, handles and flow fit together (a restored snapshot may be damaged): every
    /// index the ruleset uses is in range, so that no later call can panic.
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_shape(&self) -> Result<(), Violation> {
        let bad = |what: &str| Err(Violation(format!("damaged state: {what}")));
        let n = usize::from(self.ledger.owners());
        let r = &self.rules;
        let (systems, classes, cards) = (r.system_count(), r.class_count(), r.cards.len());
        if !(MIN_PLAYERS..=MAX_PLAYERS).contains(&n) {
            return bad("player count");
        }
        if r.factions.len() != n
            || r.fleet_bonus.len() != n
            || r.status_tokens.len() != n
            || r.research_tokens.len() != n
            || r.faction_names.len() != n
            || r.capture.len() != n
        {
            return bad("per-player rules");
        }
        if r.system_labels.len() != systems {
            return bad("system labels");
        }
        if r.adjacent.len() != systems
            || r.adjacent
                .iter()
                .any(|a| a.iter().any(|&s| usize::from(s) >= systems))
        {
            return bad("adjacency");
        }
        if classes == 0 || classes > MAX_CLASSES || cards == 0 || cards > MAX_CARDS {
            return bad("content sizes");
        }
        if r.fleet_classes
            .iter()
            .any(|&c| usize::from(c) >= classes || !r.classes[usize::from(c)].fleet)
        {
            return bad("fleet classes");
        }
        if r.transported.is_some_and(|c| usize::from(c) >= classes) {
            return bad("transported class");
        }
        let class_ok = |c: u8| usize::from(c) < classes;
        if r.excess_fighters.len() != n
            || r.excess_fighters.iter().any(|&w| w > 2)
            || r.producible.len() != n
            || r.moves.len() != n * classes
            || r.star_forge.len() != n
            || r.star_forge.iter().flatten().any(|f| {
                !class_ok(f.with)
                    || f.place.is_empty()
                    || f.place.iter().any(|&(c, _)| !class_ok(c))
            })
        {
            return bad("per-player units");
        }
        if r.cards
            .iter()
            .any(|c| c.primary.len() > 8 || c.secondary.len() > 8)
        {
            return bad("card effects");
        }
        if usize::from(r.cards_per_player) * n > cards || r.cards_per_player == 0 {
            return bad("cards per player");
        }
        if !self.h.same_key(&self.rules) {
            return bad("handles of another setup than the rules");
        }
        let h = &self.h;
        if h.systems.len() != systems
            || h.ship_reserve.len() != classes
            || h.ships.len() != systems * classes
            || h.influence.len() != n
            || h.structures.len() != n
            || h.cards.len() != cards
            || h.influence
                .iter()
                .chain(&h.structures)
                .any(|&a| self.ledger.amount(a).is_err())
            || h.cards.iter().any(|&c| self.ledger.permanent(c).is_err())
            || h.captured.len() != n
            || h.captured
                .iter()
                .zip(&r.capture)
                .any(|(z, &c)| z.is_some() != c)
            || h.boxed.len() != classes + 1
        {
            return bad("handles");
        }
        // The zones the handles name are those setup made: with the setup's own layout (what a snapshot
        // is read on unless it carried its own), they are there by construction.
        if !self.ledger.has_layout(&h.layout) {
            self.check_zone_handles()?;
        }
        self.check_flow_shape()
    }

    /// The flow's fields fit the players, the rules and the step (after [`State::check_shape`]'s rules and handles).
    fn check_flow_shape(&self) -> Result<(), Violation> {
        let bad = |what: &str| Err(Violation(format!("damaged state: {what}")));
        let n = usize::from(self.ledger.owners());
        let r = &self.rules;
        let (systems, cards) = (r.system_count(), r.cards.len());
        let f = &self.flow;
        let player = |p: u8| usize::from(p) < n;
        if !player(f.speaker) || !player(f.turn) || !player(f.resolver) || !player(f.defender) {
            return bad("flow players");
        }
        if f.retreat != NOBODY && !player(f.retreat)
            || f.step == Step::Retreat && f.retreat == NOBODY
        {
            return bad("retreating player");
        }
        // A space combat's decisions belong to its two players, and a hit is assigned only while owed.
        let combatant = |p: u8| p == f.turn || p == f.defender;
        if (f.step.in_space_combat() || f.step == Step::Capture)
            && (f.defender == f.turn
                || !combatant(f.resolver)
                || f.retreat != NOBODY && !combatant(f.retreat))
        {
            return bad("space combat players");
        }
        if f.step == Step::Assign && f.hits[usize::from(f.resolver != f.turn)] == 0 {
            return bad("hits to assign");
        }
        if usize::from(f.cursor) > n
            || usize::from(f.others) > n.max(r.wormholes.len())
            || usize::from(f.status) > n
        {
            return bad("flow cursors");
        }
        if u16::from(f.free) >> n != 0 {
            return bad("players resolving a secondary for free");
        }
        if u16::from(f.out) >> n != 0 || f.out.count_ones() as usize >= n {
            return bad("eliminated players");
        }
        if usize::from(f.card) >= cards
            || usize::from(f.effect) > r.effects(f.card, f.secondary).len()
            || usize::from(f.target) >= systems.max(1)
            || usize::from(f.system) >= systems.max(1)
            || usize::from(f.picks) > n * usize::from(r.cards_per_player)
        {
            return bad("flow indices");
        }
        let phase_fits = match f.step {
            Step::Pick => f.phase == Phase::Strategy,
            Step::Redistribute => matches!(f.phase, Phase::Action | Phase::Status),
            Step::Gain => f.phase != Phase::Over,
            Step::StrategyWindow => f.phase == Phase::Strategy,
            Step::Riders => f.phase == Phase::Agenda,
            Step::Cancel => f.phase != Phase::Over,
            Step::EndOfStrategy => f.phase == Phase::Strategy,
            Step::Recombine | Step::Comply | Step::WormholeFallback | Step::Prerequisites => {
                f.phase == Phase::Agenda
            }
            Step::Target | Step::Fallback => matches!(f.phase, Phase::Action | Phase::Agenda),
            Step::Over => f.phase == Phase::Over,
            Step::Reveal | Step::Quash | Step::Outcome | Step::ReturnTokens => {
                f.phase == Phase::Agenda
            }
            Step::Release => matches!(f.phase, Phase::Action | Phase::Agenda),
            _ => f.phase == Phase::Action || f.pact && f.phase == Phase::Agenda,
        };
        if !phase_fits || (f.step == Step::Gain && f.left == 0) {
            return bad("step and phase");
        }
        if f.holder.iter().any(|&h| h != NOBODY && !player(h)) {
            return bad("card holders");
        }
        self.check_agenda_shape()
    }

    /// T20 to T26: the agenda being resolved, laws, wormholes, hands, the pending card, the order and the pending choices fit the rules.
    fn check_agenda_shape(&self) -> Result<(), Violation> {
        let bad = |what: &str| Err(Violation(format!("damaged state: {what}")));
        let n = usize::from(self.ledger.owners());
        let r = &self.rules;
        let systems = r.system_count();
        let h = &self.h;
        let f = &self.flow;
        let player = |p: u8| usize::from(p) < n;
        // T20: the agenda being resolved, its outcome and the laws and agendas it names.
        let agendas = r.agendas.len();
        let resolving = matches!(
            f.step,
            Step::ReturnTokens | Step::WormholeFallback | Step::Prerequisites
        ) || f.step == Step::Release && f.phase == Phase::Agenda;
        if r.law_list.len() > 16
            || agendas > 16
            || u32::from(f.enacted) >> r.law_list.len() != 0
            || u32::from(f.revealed) >> agendas != 0
            || h.agendas.len() != agendas
            || h.agendas.iter().any(|&a| self.ledger.permanent(a).is_err())
            || f.agenda != NOBODY && usize::from(f.agenda) >= agendas
            || resolving && f.agenda == NOBODY
            || f.step == Step::Outcome
                && f.agenda == NOBODY
                && f.riders.iter().all(|&r| r == NOBODY)
            || f.minister != NOBODY && !player(f.minister)
            || u16::from(f.voters) >> n != 0
            || f.pact && f.phase != Phase::Agenda
            || f.resolved > 2
            || f.phase == Phase::Agenda && f.resolved > 1
            || f.outcome > 2
            || !player(f.elected)
            || f.phase == Phase::Agenda && r.agenda_from == 0
            || r.homes.len() != n
            || r.homes.iter().flatten().any(|&s| usize::from(s) >= systems)
            || r.quash.len() != n
            || r.agendas.iter().flat_map(|a| a.outcomes.iter().flatten()).any(
                |op| matches!(op, AgendaOp::Enact(law) if usize::from(*law) >= r.law_list.len()),
            )
        {
            return bad("agendas");
        }
        if r.wormholes.iter().any(|&w| usize::from(w) >= systems)
            || r.wormhole_law
                .is_some_and(|l| usize::from(l) >= r.law_list.len())
            || f.step == Step::WormholeFallback && !r.wormholes.contains(&f.target)
        {
            return bad("wormholes");
        }
        if r.fleet_loss.len() != n
            || r.free_secondaries.len() != n
            || r.abilities.iter().any(|a| !player(a.player))
            || h.abilities.len() != r.abilities.len()
            || h.abilities
                .iter()
                .any(|&a| self.ledger.permanent(a).is_err())
        {
            return bad("component actions");
        }
        let slot_ok = |c: u8| c == NOBODY || usize::from(c) < r.hands.len();
        if r.hands.len() > MAX_HAND_CARDS
            || r.hands.iter().any(|c| !player(c.player))
            || h.hand.len() != r.hands.len()
            || h.hand.iter().any(|&c| self.ledger.permanent(c).is_err())
            || !f.riders.iter().all(|&c| slot_ok(c))
            || f.predictions.iter().any(|&v| usize::from(v) >= 2 + n)
            || usize::from(f.window) > n + 1
        {
            return bad("action cards");
        }
        if !(r.fragments.is_empty() || r.fragments.len() == n)
            || h.fragments.len() != r.fragments.len()
            || h.fragments.iter().any(|&a| self.ledger.amount(a).is_err())
        {
            return bad("relic fragments");
        }
        // T26: a card waits on cancelling only in that step, and only a card of the hands.
        let pending_ok = match f.pending {
            None => f.step != Step::Cancel,
            Some(c) => f.step == Step::Cancel && usize::from(c.card) < r.hands.len(),
        };
        if !pending_ok {
            return bad("a card waiting on cancelling");
        }
        if resolving
            && usize::from(f.op)
                > r.agendas[usize::from(f.agenda)].outcomes[usize::from(f.outcome)].len()
            || f.step == Step::ReturnTokens && (f.left == 0 || usize::from(f.status) >= n)
            || f.step == Step::Quash && r.quash[usize::from(f.resolver)] == 0
        {
            return bad("agenda step");
        }
        let mut seen = [false; MAX_PLAYERS];
        for &p in &f.order[..n] {
            if !player(p) || std::mem::replace(&mut seen[usize::from(p)], true) {
                return bad("action-phase order");
            }
        }
        if self.ledger.pending().iter().any(|d| {
            d.key.kind != kind::FLEET_LIMIT
                || usize::from(d.key.owner.0) >= n
                || d.key.subject as usize >= systems
        }) {
            return bad("pending demands");
        }
        Ok(())
    }

    /// T1: `p`'s totals of the kernel's supplies are the rules' 16 command tokens and each class's pieces.
    pub(crate) fn check_stocked(&self, p: Owner) -> Result<(), Violation> {
        let command = self.ledger.supply_of(0, p);
        if command != COMMAND_TOKENS {
            return Err(Violation(format!(
                "{p} has {command} command tokens, not {COMMAND_TOKENS}"
            )));
        }
        for c in 0..self.rules.class_count() {
            let total = self.ledger.supply_of(ship_supply(c), p);
            if total != self.rules.classes[c].reinforcements {
                return Err(Violation(format!(
                    "{p} has {total} {} pieces, not {}",
                    self.rules.classes[c].id, self.rules.classes[c].reinforcements
                )));
            }
        }
        Ok(())
    }

    /// The zones the handles name exist and are of their kind, in a ledger laid out otherwise than by
    /// this setup (see [`check_shape`](Self::check_shape)).
    pub(crate) fn check_zone_handles(&self) -> Result<(), Violation> {
        let h = &self.h;
        let zones_ok = |zs: &[ZoneId]| zs.iter().all(|&z| self.ledger.zone(z).is_ok());
        if !zones_ok(&h.systems)
            || !zones_ok(&h.ship_reserve)
            || !zones_ok(&h.ships)
            || !zones_ok(&h.pools)
            || !zones_ok(&[h.reinforcements])
            || h.captured
                .iter()
                .any(|z| z.is_some_and(|z| self.ledger.zone(z).is_err()))
            || h.boxed.iter().enumerate().any(|(supply, &z)| {
                self.ledger
                    .zone(z)
                    .map_or(true, |z| usize::from(z.supply) != supply || z.one_per_owner)
            })
        {
            return Err(Violation("damaged state: handles".to_owned()));
        }
        if h.systems
            .iter()
            .any(|&z| self.ledger.zone(z).is_ok_and(|z| !z.one_per_owner))
        {
            return Err(Violation(
                "damaged state: system zones must hold one token per player".to_owned(),
            ));
        }
        Ok(())
    }

    /// Checks the kernel's invariants, then the ruleset's ([`State::check_rules`]).
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_invariants(&self) -> Result<(), Violation> {
        self.ledger.check_invariants()?;
        self.check_rules()
    }

    /// Checks the ruleset's invariants over a ledger whose own hold: each player's 16 command tokens (T1)
    /// and ship pieces are conserved apart, a system holds at most one token per player, the fleet pool
    /// respects a law's maximum, and every ship excess over the fleet limit is a pending demand of exactly
    /// that size (T7).
    ///
    /// # Errors
    /// The first [`Violation`].
    pub fn check_rules(&self) -> Result<(), Violation> {
        self.check_shape()?;
        // The supply totals are the layout's: those setup stocked, with the setup's own layout.
        let stocked = self.ledger.has_layout(&self.h.layout);
        for p in self.owners() {
            // T1: the kernel conserves each supply (K4); its totals must be the rules' 16 command tokens
            // and each class's pieces.
            if !stocked {
                self.check_stocked(p)?;
            }
            if let Some(m) = self.fleet_pool_max() {
                // Over the law's maximum only while the player chooses the token to return: one over
                // after a capture (T17), any number when a law has just come into play (T20).
                let held = self.fleet_tokens(p);
                let releasing = self.flow.step == Step::Release && slot(p) == self.flow.resolver;
                let over = held - u32::from(m).min(held);
                if over > 0 && !(releasing && (over == 1 || self.flow.phase == Phase::Agenda)) {
                    return Err(Violation(format!(
                        "{p}'s fleet pool holds {held} over the law's {m}"
                    )));
                }
            }
        }
        // T18: an eliminated player has nothing in play but tokens in another player's fleet pool (LRR
        // 33.2, 33.10e-f), holds no strategy card, is not the speaker, decides nothing and has passed.
        for q in self.owners().filter(|&q| self.is_eliminated(q)) {
            let zones = self.ledger.zones();
            let in_play = self.ledger.zones_holding(q).any(|z| {
                let key = zones[z.index()].key;
                key.kind != kind::BOX && key.kind != kind::CAPTURED
            });
            let holds_card = self.flow.holder.contains(&slot(q));
            let passed = self.flow.phase != Phase::Action || self.flow.passed & (1 << q.0) != 0;
            if in_play
                || self.captured(q) > 0
                || self.structures(q) != 0
                || holds_card
                || self.flow.speaker == slot(q)
                || self.actor() == Some(q)
                || !passed
            {
                return Err(Violation(format!(
                    "{q} is eliminated but still takes part in the game"
                )));
            }
        }
        self.check_fleets()
    }

    /// T7 and T15: every system's fleets within their limits, two players' ships only where a combat is, and what a combat's current decision needs.
    fn check_fleets(&self) -> Result<(), Violation> {
        let n = self.players();
        // T7: system by system, every player's fleet ships at once (one row of the token matrix per zone).
        // Each player's limit is read once; with nothing pending, only an excess is a violation.
        let (n, pending) = (usize::from(n), self.ledger.pending());
        let mut limits = [0u32; MAX_PLAYERS];
        for p in self.owners() {
            limits[p.index()] = self.fleet_limit(p);
        }
        let limits = &limits[..n];
        let mut ships = [0u32; MAX_PLAYERS];
        // T15: two players' ships share a system only in the activated system, from movement until the
        // space combat there ends.
        let fighting =
            matches!(self.flow.step, Step::Move | Step::Foresight) || self.in_combat_round();
        let classes = self.rules.class_count();
        let mut others = [0usize; MAX_CLASSES];
        let mut other_count = 0;
        for c in (0..classes).filter(|&c| !self.rules.classes[c].fleet) {
            others[other_count] = c;
            other_count += 1;
        }
        let others = &others[..other_count];
        // Setup made the ships zones in one go, system by system and class by class (`Handles::ships`,
        // never read from a snapshot): their rows are one block of the token matrix, read here without
        // a look-up per zone.
        let block = match (self.h.ships.first(), self.h.ships.last()) {
            (Some(&first), Some(&last))
                if last.index().checked_sub(first.index()) == Some(self.h.ships.len() - 1) =>
            {
                self.ledger.zones_tokens(first, self.h.ships.len())
            }
            _ => &[],
        };
        if block.len() != self.h.ships.len() * n {
            return Err(Violation(
                "the ships of the galaxy's systems are not laid out as setup made them".to_owned(),
            ));
        }
        let per_system = classes * n;
        for s in 0..self.rules.system_count() {
            // A row of the token matrix per class, of a known width: no loop over players.
            let rows = block
                .get(s * per_system..(s + 1) * per_system)
                .unwrap_or(&[]);
            let owners = match n {
                3 => ships_in::<3>(rows, &self.rules.fleet_classes, others, &mut ships),
                4 => ships_in::<4>(rows, &self.rules.fleet_classes, others, &mut ships),
                5 => ships_in::<5>(rows, &self.rules.fleet_classes, others, &mut ships),
                6 => ships_in::<6>(rows, &self.rules.fleet_classes, others, &mut ships),
                7 => ships_in::<7>(rows, &self.rules.fleet_classes, others, &mut ships),
                _ => ships_in::<MAX_PLAYERS>(rows, &self.rules.fleet_classes, others, &mut ships),
            };
            let ships = &mut ships[..n];
            // T25: fighters beyond capacity count too for a player with Fighter II.
            for (p, sum) in ships.iter_mut().enumerate() {
                if self.rules.excess_fighters[p] > 0 {
                    *sum += self.excess_fighters(owner(p as u8), s);
                }
            }
            let active = fighting && s == usize::from(self.flow.system);
            let turn = 1u8 << self.flow.turn;
            if owners & owners.wrapping_sub(1) != 0
                && !(active && owners.count_ones() == 2 && owners & turn != 0)
            {
                return Err(Violation(format!(
                    "{} have ships in {} outside a space combat",
                    crate::actions::Players(owners).names(),
                    self.system_name(s as u16)
                )));
            }
            // During a combat round both of its players have ships there (else it has ended), but for
            // hits being assigned, which may leave one side without.
            let both = turn | 1u8 << self.flow.defender;
            let fits = match self.flow.step {
                Step::Move => true,
                Step::Assign => owners & !both == 0,
                _ => owners == both,
            };
            if active && !fits {
                return Err(Violation(format!(
                    "a space combat in {} without ships of both p{} and p{}",
                    self.system_name(s as u16),
                    self.flow.turn,
                    self.flow.defender
                )));
            }
            let in_combat = active && self.in_combat_round();
            for (p, (&ships, &max)) in self.owners().zip(ships.iter().zip(limits)) {
                let excess = ships.saturating_sub(max);
                if excess == 0 && pending.is_empty() {
                    continue;
                }
                // T25: fighters beyond capacity in a space combat are counted once it is over.
                if in_combat && self.rules.excess_fighters[p.index()] > 0 {
                    continue;
                }
                let key = State::limit_key(p, s);
                let owed = pending
                    .iter()
                    .find(|d| d.key == key)
                    .map_or(0, |d| d.excess);
                if excess != owed {
                    return Err(Violation(format!(
                        "{p} has {ships} ships in system {s} with a fleet limit of {max}, but {owed} pending"
                    )));
                }
            }
        }
        // What a combat's current decision needs: hits owed only against ships there, a system to retreat
        // to, a token to give.
        let (f, active) = (&self.flow, usize::from(self.flow.system));
        let short = match f.step {
            Step::Assign => {
                u32::from(f.hits[0]) > self.all_ships(owner(f.turn), active)
                    || u32::from(f.hits[1]) > self.all_ships(owner(f.defender), active)
            }
            Step::Retreat => !self.can_retreat(owner(f.retreat)),
            Step::Capture => {
                self.reinforcements(owner(f.resolver)) > 0 || self.sheet(owner(f.resolver)) == 0
            }
            _ => false,
        };
        if short {
            return Err(Violation(format!(
                "{} cannot be decided in this state",
                f.step.while_text().trim_start_matches("while ")
            )));
        }
        Ok(())
    }
}

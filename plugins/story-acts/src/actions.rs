//! Player actions: the serde `Action` enum, their validation (pure, shared by `apply` and the legal-action
//! list), their effects, and the turn structure (Ready, Income, Draw, Main, End).

use crate::content::{CardType, Deed, Effect, MAX_CP_COST, RewardTo};
use crate::refusals::{PendingChoice, Rule, Why};
use crate::scoring;
use crate::state::{AwardTo, Band, Phase, State, Zone, card_key, effect, key, kind, note};
use coffer_core::{Cause, Change, Key, Owner, Part, Refusal, Scope};
use serde::{Deserialize, Serialize};

/// A CP cost split over permanents (S8, K7): `[[card, cp], ...]`, cards in ascending order, each once, each
/// part at least 1.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(try_from = "Vec<(u16, u16)>", into = "Vec<(u16, u16)>")]
pub struct CpSplit {
    len: u8,
    parts: [(u16, u16); MAX_CP_COST as usize],
}

impl CpSplit {
    /// The parts, `(card, cp)`.
    pub fn parts(&self) -> &[(u16, u16)] {
        &self.parts[..usize::from(self.len)]
    }

    /// Whether no CP is paid.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The total CP.
    pub fn total(&self) -> u32 {
        self.parts().iter().map(|&(_, n)| u32::from(n)).sum()
    }

    fn push(&mut self, card: u16, n: u16) {
        self.parts[usize::from(self.len)] = (card, n);
        self.len += 1;
    }

    fn pop(&mut self) {
        self.len -= 1;
        self.parts[usize::from(self.len)] = (0, 0);
    }
}

impl TryFrom<Vec<(u16, u16)>> for CpSplit {
    type Error = String;
    fn try_from(v: Vec<(u16, u16)>) -> Result<CpSplit, String> {
        if v.len() > MAX_CP_COST as usize {
            return Err(format!(
                "a CP split of {} parts: it has at most {MAX_CP_COST}, one per CP of the largest CP cost",
                v.len()
            ));
        }
        let mut s = CpSplit::default();
        for (card, n) in v {
            s.push(card, n);
        }
        Ok(s)
    }
}

impl From<CpSplit> for Vec<(u16, u16)> {
    fn from(s: CpSplit) -> Vec<(u16, u16)> {
        s.parts().to_vec()
    }
}

/// One player action. JSON: `{"type":"deploy","card":3}`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// S3: deploy (or, for a Maneuver, play) a card from hand, paying its Currency cost; a Maneuver also pays
    /// its Vote cost and its CP cost split as `cp` says, and names a `target` when its effect needs one.
    Deploy {
        /// The card instance, in hand.
        card: u16,
        /// The target card of a targeted effect.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<u16>,
        /// The CP cost's split.
        #[serde(default, skip_serializing_if = "CpSplit::is_empty")]
        cp: CpSplit,
    },
    /// S5: activate a card to commit its printed Votes to the Resource Pool (a Fast action).
    CommitVotes {
        /// The card instance.
        card: u16,
    },
    /// S6: activate a permanent printing "Add N EV".
    AddEv {
        /// The card instance.
        card: u16,
    },
    /// S5: push a Galactic Factor `steps` steps up or down, paying committed Votes.
    PushFactor {
        /// Factor index.
        factor: u8,
        /// Up (`true`) or down.
        up: bool,
        /// Steps.
        steps: u8,
    },
    /// S8: use a Character's "-X CP:" ability, paid from its own CP, once per turn.
    UseAbility {
        /// The card instance.
        card: u16,
    },
    /// S15: move a ready unit to an adjacent Band (activates it).
    Move {
        /// The unit.
        card: u16,
        /// The Band.
        to: Band,
    },
    /// S14: a ready unit in a Surface Band captures a Surface Location there that another player controls
    /// and none of that player's units defends; it becomes Contested.
    Capture {
        /// The Surface Location.
        location: u16,
        /// The capturing unit.
        unit: u16,
    },
    /// S14: pay the Restore cost to make a Contested Surface Location you control uncontested.
    Restore {
        /// The Surface Location.
        location: u16,
    },
    /// Advance a Storyline one step, paying its EV per step.
    AdvanceStoryline {
        /// The Storyline.
        card: u16,
    },
    /// S12: complete a Storyline whose steps are all done: the Act ends at once.
    CompleteStoryline {
        /// The Storyline.
        card: u16,
    },
    /// S10/K6: discard a card from hand while over the hand limit at the End Phase.
    Discard {
        /// The card instance, in hand.
        card: u16,
    },
    /// End the main phase: the End Phase checks the hand limit, then the next player's turn begins.
    EndTurn {},
}

impl Action {
    /// The action's code in `Cause::Action`.
    pub fn code(&self) -> u16 {
        match self {
            Action::Deploy { .. } => 0,
            Action::CommitVotes { .. } => 1,
            Action::AddEv { .. } => 2,
            Action::PushFactor { .. } => 3,
            Action::UseAbility { .. } => 4,
            Action::Move { .. } => 5,
            Action::Capture { .. } => 6,
            Action::Restore { .. } => 7,
            Action::AdvanceStoryline { .. } => 8,
            Action::CompleteStoryline { .. } => 9,
            Action::Discard { .. } => 10,
            Action::EndTurn {} => 11,
        }
    }
}

fn rule(ok: bool, why: Rule) -> Result<(), Why> {
    if ok { Ok(()) } else { Err(Why::Rule(why)) }
}

/// K8.2: the kernel's check of spending `need` from `id`, as the refusal the rulebook words.
fn afford(s: &State, id: coffer_core::AmountId, need: u64) -> Result<(), Why> {
    s.ledger
        .can_spend(id, need)
        .map_err(|refused| match refused {
            coffer_core::Refusal::Insufficient { key, need, have } => Why::Short(key, need, have),
            _ => Why::Rule(Rule::Inconsistent),
        })
}

impl State {
    /// Card `card`, if it is in `p`'s hand (`zone` Hand) or in play under `p`'s control (`zone` Play).
    /// A card that is not in `p`'s hand is refused the same way wherever it is: the refusal must not tell
    /// where a hidden card lies.
    fn card_of(&self, card: u16, p: Owner, zone: Zone) -> Result<&crate::state::Card, Why> {
        let c = self
            .cards
            .get(usize::from(card))
            .ok_or(Why::Rule(Rule::NoSuchCard(card)))?;
        if zone == Zone::Hand {
            rule(
                c.zone == Zone::Hand && c.owner == p.0,
                Rule::NotInHand(card),
            )?;
        } else {
            rule(c.zone == Zone::Play, Rule::NotInPlay(card))?;
            rule(c.controller == p.0, Rule::NotYours(card))?;
        }
        Ok(c)
    }

    fn slow(&self, p: Owner) -> Result<(), Why> {
        if p != self.active() {
            return Err(Why::Slow);
        }
        if self.phase != Phase::Main {
            return Err(Why::NotMain);
        }
        Ok(())
    }

    fn fast(&self) -> Result<(), Why> {
        if self.phase != Phase::Main {
            return Err(Why::NotMain);
        }
        Ok(())
    }

    /// Checks an action without changing anything; `Ok` exactly when [`State::execute`] will apply it.
    ///
    /// # Errors
    /// Why it is not legal now ([`State::explain`] writes it in words).
    pub fn check(&self, p: Owner, a: &Action) -> Result<(), Why> {
        self.check_in(None, p, a)
    }

    /// [`State::check`], with the Surface Bands' occupancy already known when `occupied` is given.
    fn check_in(&self, occupied: Option<u32>, p: Owner, a: &Action) -> Result<(), Why> {
        if self.winners.is_some() {
            return Err(Why::Over);
        }
        if p.0 >= self.players() {
            return Err(Why::NoPlayer(p.0));
        }
        if let Action::Discard { card } = *a {
            let Some(d) = self.ledger.pending().first() else {
                return Err(Why::Rule(Rule::NothingToDiscard));
            };
            if d.key.owner != p {
                return Err(Why::OtherDiscards(d.key.owner));
            }
            self.card_of(card, p, Zone::Hand)?;
            return Ok(());
        }
        if let Some(d) = self.ledger.pending().first() {
            return Err(Why::Pending(PendingChoice {
                owner: d.key.owner,
                key: d.key,
                excess: d.excess,
            }));
        }
        let cfg = self.config();
        match *a {
            Action::Deploy { card, target, cp } => {
                let c = self.card_of(card, p, Zone::Hand)?;
                let d = self.rules.db.get(c.def);
                if d.fast_maneuver() {
                    self.fast()?;
                } else {
                    self.slow(p)?;
                }
                afford(self, self.seats[p.index()].treasury, u64::from(d.cost))?;
                let seat = &self.seats[p.index()];
                match d.effect.and_then(Effect::target) {
                    Some(own) => {
                        let t = target.ok_or(Why::Rule(Rule::NeedsTarget(card)))?;
                        let tc = self
                            .cards
                            .get(usize::from(t))
                            .ok_or(Why::Rule(Rule::NoSuchCard(t)))?;
                        rule(
                            tc.zone == Zone::Play && tc.cp.is_some(),
                            Rule::BadTarget { card, target: t },
                        )?;
                        rule(
                            (tc.controller == p.0) == own,
                            Rule::WrongController { card, target: t },
                        )?;
                    }
                    None => {
                        if let Some(t) = target {
                            return Err(Why::Rule(Rule::TakesNoTarget { card, target: t }));
                        }
                    }
                }
                if d.card_type == CardType::Maneuver {
                    afford(self, seat.votes, u64::from(d.vote_cost))?;
                    if d.requires_control {
                        rule(
                            self.political_control() == Some(p),
                            Rule::NeedsControl(card),
                        )?;
                    }
                }
                rule(
                    cp.total() == d.cp_cost,
                    Rule::SplitSum {
                        card,
                        total: cp.total(),
                    },
                )?;
                let mut last: Option<u16> = None;
                for &(h, n) in cp.parts() {
                    rule(n > 0, Rule::SplitZero(h))?;
                    if let Some(after) = last {
                        rule(h > after, Rule::SplitOrder { card: h, after })?;
                    }
                    last = Some(h);
                    let hc = self.card_of(h, p, Zone::Play)?;
                    let id = self.handles.cp(hc).ok_or(Why::Rule(Rule::NoCp(h)))?;
                    afford(self, id, u64::from(n))?;
                }
                Ok(())
            }
            Action::CommitVotes { card } => {
                self.fast()?;
                let c = self.card_of(card, p, Zone::Play)?;
                rule(self.rules.db.get(c.def).votes > 0, Rule::NoVotes(card))?;
                self.ready_perm(card)
            }
            Action::AddEv { card } => {
                self.slow(p)?;
                let c = self.card_of(card, p, Zone::Play)?;
                rule(self.rules.db.get(c.def).ev > 0, Rule::NoEv(card))?;
                self.ready_perm(card)
            }
            Action::PushFactor { factor, up, steps } => {
                self.slow(p)?;
                let f = usize::from(factor);
                rule(f < self.factors.len(), Rule::NoSuchFactor(factor))?;
                rule(steps > 0, Rule::ZeroSteps)?;
                let def = &cfg.factors[f];
                let v = self.factor(f);
                let room = if up { def.max - v } else { v - def.min };
                rule(i64::from(steps) <= room, Rule::NoRoom { factor, up, steps })?;
                let need = u64::from(steps) * u64::from(cfg.votes_per_factor_step);
                afford(self, self.seats[p.index()].votes, need)
            }
            Action::UseAbility { card } => {
                self.slow(p)?;
                let c = self.card_of(card, p, Zone::Play)?;
                let ab = self
                    .rules
                    .db
                    .get(c.def)
                    .ability
                    .ok_or(Why::Rule(Rule::NoAbility(card)))?;
                let track = self
                    .handles
                    .ability(c)
                    .ok_or(Why::Rule(Rule::NoAbility(card)))?;
                rule(self.ledger.active(track) > 0, Rule::AbilityUsed(card))?;
                let cp = self.handles.cp(c).ok_or(Why::Rule(Rule::NoCp(card)))?;
                afford(self, cp, u64::from(ab.cp))
            }
            Action::Move { card, to } => {
                self.slow(p)?;
                let c = self.card_of(card, p, Zone::Play)?;
                rule(
                    self.rules.db.get(c.def).card_type.is_unit(),
                    Rule::NotUnit(card),
                )?;
                self.ready_perm(card)?;
                rule(
                    to.player().is_none_or(|q| q.0 < self.players()),
                    Rule::NoSuchBand(to),
                )?;
                let from = c.band.ok_or(Why::Rule(Rule::NoBand(card)))?;
                rule(
                    self.is_adjacent_in(
                        occupied.unwrap_or_else(|| self.occupied_surfaces()),
                        from,
                        to,
                    ),
                    Rule::NotAdjacent { card, to },
                )
            }
            Action::Capture { location, unit } => {
                self.slow(p)?;
                let u = self.card_of(unit, p, Zone::Play)?;
                rule(
                    self.rules.db.get(u.def).card_type.is_unit(),
                    Rule::NotUnit(unit),
                )?;
                self.ready_perm(unit)?;
                let Some(Band::Surface(q)) = u.band else {
                    return Err(Why::Rule(Rule::NotInSurface(unit)));
                };
                let l = self
                    .cards
                    .get(usize::from(location))
                    .ok_or(Why::Rule(Rule::NoSuchCard(location)))?;
                let ld = self.rules.db.get(l.def);
                rule(
                    l.zone == Zone::Play && ld.card_type == CardType::Location,
                    Rule::NotLocation(location),
                )?;
                rule(
                    l.band == Some(Band::Surface(q)),
                    Rule::LocationElsewhere { location, unit },
                )?;
                rule(l.controller != p.0, Rule::AlreadyYours(location))?;
                let defended = self.play().any(|(_, d)| {
                    d.controller == l.controller
                        && d.band == Some(Band::Surface(q))
                        && self.rules.db.get(d.def).card_type.is_unit()
                });
                rule(!defended, Rule::Defended(location))
            }
            Action::Restore { location } => {
                self.slow(p)?;
                let l = self.card_of(location, p, Zone::Play)?;
                rule(l.contested, Rule::NotContested(location))?;
                afford(
                    self,
                    self.seats[p.index()].treasury,
                    u64::from(cfg.restore_cost),
                )
            }
            Action::AdvanceStoryline { card } => {
                self.slow(p)?;
                let c = self.card_of(card, p, Zone::Play)?;
                let d = self.rules.db.get(c.def);
                rule(d.card_type == CardType::Storyline, Rule::NotStoryline(card))?;
                rule(u32::from(c.progress) < d.steps, Rule::StepsDone(card))?;
                afford(self, self.seats[p.index()].ev, u64::from(d.ev_per_step))
            }
            Action::CompleteStoryline { card } => {
                self.slow(p)?;
                let c = self.card_of(card, p, Zone::Play)?;
                let d = self.rules.db.get(c.def);
                rule(d.card_type == CardType::Storyline, Rule::NotStoryline(card))?;
                rule(u32::from(c.progress) >= d.steps, Rule::StepsLeft(card))
            }
            Action::EndTurn {} => self.slow(p),
            Action::Discard { .. } => Ok(()),
        }
    }

    pub(crate) fn ready_perm(&self, card: u16) -> Result<(), Why> {
        let perm = self
            .perm_id(card)
            .ok_or(Why::Rule(Rule::NotPermanent(card)))?;
        rule(!self.ledger.is_exhausted(perm), Rule::Exhausted(card))
    }

    /// Applies an action that [`State::check`] accepted.
    ///
    /// # Errors
    /// A kernel refusal (never expected after a successful check; the adapter rolls the ledger back).
    pub fn execute(&mut self, p: Owner, a: &Action) -> Result<(), Refusal> {
        let from = self.ledger.events().len();
        let cause = Cause::Action {
            player: p,
            code: a.code(),
        };
        let seat = self.seats[p.index()];
        let mut act_over: Option<u16> = None;
        match *a {
            Action::Deploy { card, target, cp } => {
                let d = self.def(card).clone_costs();
                let what = if d.maneuver { note::PLAY } else { note::DEPLOY };
                self.ledger.note(card_key(p, card), what, [0; 3], cause);
                if d.maneuver {
                    self.ledger.pay_cost(
                        &[
                            Part::Spend(seat.treasury, u64::from(d.cost)),
                            Part::Spend(seat.votes, u64::from(d.vote_cost)),
                        ],
                        cause,
                    )?;
                } else {
                    self.ledger.spend(seat.treasury, u64::from(d.cost), cause)?;
                }
                if !cp.is_empty() {
                    let mut alloc = [(seat.treasury, 0u64); MAX_CP_COST as usize];
                    let parts = cp.parts();
                    for (i, &(h, n)) in parts.iter().enumerate() {
                        let id = self.cp_id(h).ok_or_else(|| {
                            Refusal::Invalid(format!("card #{h} has no CP to pay with"))
                        })?;
                        alloc[i] = (id, u64::from(n));
                    }
                    self.ledger
                        .spend_split(&alloc[..parts.len()], u64::from(cp.total()), cause)?;
                }
                let hand = &mut self.hands[p.index()];
                if let Some(i) = hand.iter().position(|&h| h == card) {
                    hand.remove(i);
                }
                let band = self.deploy_band(self.def(card), p);
                if d.maneuver {
                    self.cards[usize::from(card)].zone = Zone::Discard;
                    if let Some(e) = d.effect {
                        self.resolve(p, e, target, cause)?;
                    }
                } else {
                    self.put_in_play(card, band);
                }
            }
            Action::CommitVotes { card } => {
                self.activate(card, cause)?;
                let votes = self.def(card).votes;
                self.ledger.gain(seat.votes, u64::from(votes), cause)?;
                self.cards[usize::from(card)].committed = true;
                self.deed(card, Deed::CommitVotes)?;
            }
            Action::AddEv { card } => {
                self.activate(card, cause)?;
                let ev = self.def(card).ev;
                self.ledger.gain(seat.ev, u64::from(ev), cause)?;
                self.cards[usize::from(card)].committed = false;
                self.deed(card, Deed::AddEv)?;
            }
            Action::PushFactor { factor, up, steps } => {
                let need = u64::from(steps) * u64::from(self.config().votes_per_factor_step);
                self.ledger.spend(seat.votes, need, cause)?;
                let f = usize::from(factor);
                let v = self.factor(f);
                let after = if up {
                    v + i64::from(steps)
                } else {
                    v - i64::from(steps)
                };
                self.ledger.set(self.factors[f], after, cause)?;
            }
            Action::UseAbility { card } => {
                let ab = self.def(card).ability.ok_or_else(|| {
                    Refusal::Invalid(format!("card #{card} has no \"-X CP:\" ability"))
                })?;
                let (Some(track), Some(cp)) = (self.ability_id(card), self.cp_id(card)) else {
                    return Err(Refusal::Invalid(format!(
                        "card #{card} has no ability track or no CP"
                    )));
                };
                self.ledger.pay_cost(
                    &[Part::Charges(track, 1), Part::Spend(cp, u64::from(ab.cp))],
                    cause,
                )?;
                self.resolve(p, ab.effect, None, cause)?;
            }
            Action::Move { card, to } => {
                let (code, whose) = match to {
                    Band::Space => (note::MOVE_SPACE, 0),
                    Band::Surface(q) => (note::MOVE_SURFACE, q),
                    Band::Planetary(q) => (note::MOVE_PLANETARY, q),
                };
                let owner = self.cards[usize::from(card)].owner;
                self.ledger.note(
                    card_key(Owner(owner), card),
                    code,
                    [i32::from(whose), 0, 0],
                    cause,
                );
                self.activate(card, cause)?;
                let c = &mut self.cards[usize::from(card)];
                c.band = Some(to);
                c.committed = false;
                self.deed(card, Deed::Move)?;
            }
            Action::Capture { location, unit } => {
                let owner = self.cards[usize::from(location)].owner;
                self.ledger.note(
                    card_key(Owner(owner), location),
                    note::CAPTURE,
                    [i32::from(p.0), 0, 0],
                    cause,
                );
                self.activate(unit, cause)?;
                self.cards[usize::from(unit)].committed = false;
                let l = &mut self.cards[usize::from(location)];
                l.controller = p.0;
                l.contested = true;
                self.deed(unit, Deed::Capture)?;
            }
            Action::Restore { location } => {
                let owner = self.cards[usize::from(location)].owner;
                self.ledger.note(
                    card_key(Owner(owner), location),
                    note::RESTORE,
                    [0; 3],
                    cause,
                );
                self.ledger
                    .spend(seat.treasury, u64::from(self.config().restore_cost), cause)?;
                self.cards[usize::from(location)].contested = false;
            }
            Action::AdvanceStoryline { card } => {
                let (per, steps) = (self.def(card).ev_per_step, self.def(card).steps);
                self.ledger.spend(seat.ev, u64::from(per), cause)?;
                let c = &mut self.cards[usize::from(card)];
                c.progress += 1;
                let done = [i32::from(c.progress), steps as i32, 0];
                self.ledger
                    .note(card_key(p, card), note::ADVANCE, done, cause);
            }
            Action::CompleteStoryline { card } => {
                self.ledger
                    .note(card_key(p, card), note::COMPLETE, [0; 3], cause);
                act_over = Some(card);
            }
            Action::Discard { card } => {
                self.ledger
                    .note(card_key(p, card), note::DISCARD, [0; 3], cause);
                let hand = &mut self.hands[p.index()];
                if let Some(i) = hand.iter().position(|&h| h == card) {
                    hand.remove(i);
                }
                self.cards[usize::from(card)].zone = Zone::Discard;
                if self.check_hand(p) == 0 {
                    self.finish_turn()?;
                }
            }
            Action::EndTurn {} => {
                self.ledger
                    .note(key(p, kind::TREASURY, 0), note::END_TURN, [0; 3], cause);
                self.ledger.end_scope(Scope::Phase);
                self.phase = Phase::End;
                if self.check_hand(p) == 0 {
                    self.finish_turn()?;
                }
            }
        }
        self.settle(from)?;
        if let Some(card) = act_over {
            scoring::end_act(self, p, card)?;
        }
        Ok(())
    }

    fn activate(&mut self, card: u16, cause: Cause) -> Result<(), Refusal> {
        let perm = self.perm_id(card).ok_or_else(|| {
            Refusal::Invalid(format!(
                "card #{card} is not a permanent: it cannot be activated"
            ))
        })?;
        self.ledger.activate(perm, cause)
    }

    /// S8: a card's aligned ability raises its CP, its Penalties lower it (Morality Penalties).
    fn deed(&mut self, card: u16, deed: Deed) -> Result<(), Refusal> {
        let Some(cp) = self.cp_id(card) else {
            return Ok(());
        };
        let d = self.def(card);
        let (aligned, penalty) = (d.aligned, d.penalty);
        if let Some(t) = aligned.filter(|t| t.on == deed) {
            self.ledger
                .gain(cp, u64::from(t.cp), Cause::Effect(effect::ALIGNED))?;
        }
        if let Some(t) = penalty.filter(|t| t.on == deed) {
            self.ledger
                .pay(cp, u64::from(t.cp), Cause::Effect(effect::MORALITY))?;
        }
        Ok(())
    }

    fn resolve(
        &mut self,
        p: Owner,
        e: Effect,
        target: Option<u16>,
        cause: Cause,
    ) -> Result<(), Refusal> {
        let seat = self.seats[p.index()];
        match e {
            Effect::GainCurrency(n) => {
                self.ledger.gain(seat.treasury, u64::from(n), cause)?;
            }
            Effect::OpponentsPay(n) => {
                for q in (0..self.players()).map(Owner) {
                    if q != p {
                        self.ledger
                            .pay(self.seats[q.index()].treasury, u64::from(n), cause)?;
                    }
                }
            }
            Effect::AddVotes(n) => {
                self.ledger.gain(seat.votes, u64::from(n), cause)?;
            }
            Effect::AddEv(n) => {
                self.ledger.gain(seat.ev, u64::from(n), cause)?;
            }
            Effect::DrawCards(n) => self.draw(p, n, cause),
            Effect::DrainCp(n) | Effect::GainCp(n) => {
                let t = target
                    .ok_or_else(|| Refusal::Invalid("the effect needs a target card".into()))?;
                let cp = self
                    .cp_id(t)
                    .ok_or_else(|| Refusal::Invalid(format!("card #{t} has no CP")))?;
                if matches!(e, Effect::DrainCp(_)) {
                    self.ledger.pay(cp, u64::from(n), cause)?;
                } else {
                    self.ledger.gain(cp, u64::from(n), cause)?;
                }
            }
        }
        Ok(())
    }

    /// Draws up to `n` cards from the top of `p`'s deck (an empty deck gives nothing), each recorded twice:
    /// which card, for `p` alone, and that a card was drawn, for everyone else.
    pub fn draw(&mut self, p: Owner, n: u32, cause: Cause) {
        let hand = key(p, kind::HAND, 0);
        for _ in 0..n {
            let Some(card) = self.decks[p.index()].pop() else {
                self.ledger.note(hand, note::DECK_EMPTY, [0; 3], cause);
                return;
            };
            self.cards[usize::from(card)].zone = Zone::Hand;
            self.hands[p.index()].push(card);
            self.ledger
                .note(card_key(p, card), note::DREW, [0; 3], cause);
            self.ledger.note(hand, note::DRAW, [0; 3], cause);
        }
    }

    /// S10/K6: checks `p`'s hand against the limit; returns the excess still to discard.
    fn check_hand(&mut self, p: Owner) -> u32 {
        let n = self.hands[p.index()].len() as u64;
        let max = u64::from(self.config().hand_limit);
        self.ledger.check_limit(
            Key::new(p, kind::HAND, 0),
            n,
            max,
            Cause::Upkeep(Scope::Phase),
        )
    }

    /// Ends the End Phase and the turn, then starts the next player's turn.
    fn finish_turn(&mut self) -> Result<(), Refusal> {
        self.ledger.end_scope(Scope::Phase);
        self.ledger.end_scope(Scope::Turn);
        self.active = (self.active + 1) % self.players();
        self.start_turn()
    }

    /// Runs the Ready (S9), Income (S2) and Draw (S10) phases of the active player's turn, each closed with
    /// the kernel clock, and opens the main phase.
    pub fn start_turn(&mut self) -> Result<(), Refusal> {
        let p = self.active();
        let from = self.ledger.events().len();
        self.ledger.note(
            key(p, kind::TREASURY, 0),
            note::TURN,
            [0; 3],
            Cause::Upkeep(Scope::Turn),
        );
        self.phase = Phase::Ready;
        // K5: the permanents the active player controls ready (a captured Location with its new controller).
        for i in 0..self.in_play.len() {
            let c = self.cards[usize::from(self.in_play[i])];
            if let (true, Some(perm)) = (c.controller == p.0, self.handles.perm(&c)) {
                self.ledger.ready(perm, Cause::Effect(effect::READY))?;
            }
        }
        self.ledger.end_scope(Scope::Phase);
        self.phase = Phase::Income;
        let income = self.income(p);
        self.ledger.gain(
            self.seats[p.index()].treasury,
            income,
            Cause::Effect(effect::INCOME),
        )?;
        self.ledger.end_scope(Scope::Phase);
        self.phase = Phase::Draw;
        self.draw(p, self.config().draw_per_turn, Cause::Effect(effect::DRAW));
        self.ledger.end_scope(Scope::Phase);
        self.phase = Phase::Main;
        self.settle(from)
    }

    /// K11: reacts to what reached a floor (K1.5) since log position `from`: an empty Treasury gives the S11
    /// award; a card at 0 CP is destroyed, or Falls if Morality Penalties took a Prime Character there (S8).
    pub fn settle(&mut self, from: usize) -> Result<(), Refusal> {
        let rules = &self.rules;
        let cards = &mut self.cards;
        let handles = &self.handles;
        let in_play = &mut self.in_play;
        let seats = &mut self.seats;
        self.ledger.settle(from, 10_000, |l, ev| {
            let Change::Floor { .. } = ev.change else {
                return Ok::<(), Refusal>(());
            };
            let who = ev.key.owner;
            if ev.key.kind == kind::TREASURY {
                award(
                    l,
                    seats,
                    rules.config.award_to,
                    rules.config.award_sp,
                    who.0,
                )?;
            } else if ev.key.kind == kind::CP {
                let i = ev.key.subject as usize;
                let c = cards[i];
                // State-based: only a card in play still at 0 CP is affected.
                if c.zone != Zone::Play || handles.cp(&c).is_some_and(|cp| l.value(cp) != 0) {
                    return Ok(());
                }
                let d = rules.db.get(c.def);
                let morality = ev.cause == Cause::Effect(effect::MORALITY);
                let own = morality
                    || matches!(ev.cause, Cause::Action { player, .. } if player.0 == c.controller);
                let card = key(Owner(c.owner), kind::CARD, i as u32);
                if morality && d.prime && !c.fallen {
                    cards[i].fallen = true;
                    let fallen_cp = i32::try_from(d.fallen_cp).unwrap_or(i32::MAX);
                    l.note(card, note::FALLS, [fallen_cp, 0, 0], ev.cause);
                    if let Some(cp) = handles.cp(&c) {
                        l.set(cp, i64::from(d.fallen_cp), Cause::Effect(effect::FALL))?;
                    }
                    let seat = &mut seats[usize::from(c.owner)];
                    if rules.config.fall_flips_homeworld && seat.prime_face {
                        seat.prime_face = false;
                        let homeworld = card_key(Owner(c.owner), seat.homeworld);
                        l.note(
                            homeworld,
                            note::PRIME_LOST,
                            [0; 3],
                            Cause::Effect(effect::FALL),
                        );
                    }
                } else {
                    l.note(card, note::DESTROYED, [0; 3], Cause::StateCheck);
                    crate::state::leave_play(cards, in_play, i as u16, Zone::Discard);
                }
                if own {
                    award(
                        l,
                        seats,
                        rules.config.award_to,
                        rules.config.award_sp,
                        c.controller,
                    )?;
                }
            }
            Ok(())
        })?;
        Ok(())
    }
}

/// S11: the self-inflicted award for `who`'s empty Treasury or own Character's Fall or destruction.
fn award(
    l: &mut coffer_core::Ledger,
    seats: &[crate::state::Seat],
    to: AwardTo,
    sp: u32,
    who: u16,
) -> Result<(), Refusal> {
    let n = seats.len() as u16;
    let cause = Cause::Effect(effect::AWARD);
    match to {
        AwardTo::Nobody => {}
        AwardTo::NextPlayer => {
            l.gain(seats[usize::from((who + 1) % n)].sp, u64::from(sp), cause)?;
        }
        AwardTo::EachOpponent => {
            for q in 0..n {
                if q != who {
                    l.gain(seats[usize::from(q)].sp, u64::from(sp), cause)?;
                }
            }
        }
    }
    Ok(())
}

/// The cost-relevant part of a card definition (copied so the state can be borrowed mutably).
#[derive(Clone, Copy)]
struct Costs {
    maneuver: bool,
    cost: u32,
    vote_cost: u32,
    effect: Option<Effect>,
}

trait CloneCosts {
    fn clone_costs(&self) -> Costs;
}

impl CloneCosts for crate::content::CardDef {
    fn clone_costs(&self) -> Costs {
        Costs {
            maneuver: self.card_type == CardType::Maneuver,
            cost: self.cost,
            vote_cost: self.vote_cost,
            effect: self.effect,
        }
    }
}

/// Appends the players who may have a legal action (see [`legal`]): nobody once the game is won or outside
/// the Main phase, only the chooser while a discard is pending; else the active player, and each other
/// player holding a fast Maneuver or controlling a ready card that prints Votes (the only actions taken out
/// of turn).
pub fn to_act(s: &State, out: &mut Vec<Owner>) {
    if s.winners.is_some() {
        return;
    }
    if let Some(d) = s.ledger.pending().first() {
        if d.key.owner.0 < s.players() {
            out.push(d.key.owner);
        }
        return;
    }
    if s.phase != Phase::Main {
        return;
    }
    if s.players() > 64 {
        // More players than bits below (a game has at most 4): list everybody, which is always allowed.
        out.extend((0..s.players()).map(Owner));
        return;
    }
    // Players who may commit Votes out of turn, as bits (no allocation per action).
    let mut out_of_turn = 0u64;
    for (card, c) in s.play() {
        // The conditions `check` puts on committing Votes, but the phase (Main here).
        if c.controller != s.active && s.rules.db.get(c.def).votes > 0 && s.ready_perm(card).is_ok()
        {
            out_of_turn |= 1u64.checked_shl(u32::from(c.controller)).unwrap_or(0);
        }
    }
    for p in (0..s.players()).map(Owner) {
        let fast = || {
            s.hands[p.index()]
                .iter()
                .any(|&card| s.def(card).fast_maneuver())
        };
        let votes = out_of_turn & 1u64.checked_shl(u32::from(p.0)).unwrap_or(0) != 0;
        if p == s.active() || votes || fast() {
            out.push(p);
        }
    }
}

/// Appends every legal action of `p` to `out` (the legal-action list: candidates filtered by [`State::check`]).
pub fn legal(s: &State, p: Owner, out: &mut Vec<Action>) {
    if s.winners.is_some() || p.0 >= s.players() {
        return;
    }
    let occupied = s.occupied_surfaces();
    let mut push = |a: Action| {
        if s.check_in(Some(occupied), p, &a).is_ok() {
            out.push(a);
        }
    };
    if let Some(d) = s.ledger.pending().first() {
        if d.key.owner == p {
            for &card in &s.hands[p.index()] {
                push(Action::Discard { card });
            }
        }
        return;
    }
    if s.phase != Phase::Main {
        return;
    }
    let mine = p == s.active();
    for &card in &s.hands[p.index()] {
        let d = s.def(card);
        if !(mine || d.fast_maneuver()) {
            continue;
        }
        let mut each_target = |target: Option<u16>| {
            if d.cp_cost == 0 {
                push(Action::Deploy {
                    card,
                    target,
                    cp: CpSplit::default(),
                });
            } else {
                let mut split = CpSplit::default();
                splits(s, p, 0, d.cp_cost, &mut split, &mut |cp| {
                    push(Action::Deploy { card, target, cp })
                });
            }
        };
        match d.effect.and_then(Effect::target) {
            None => each_target(None),
            Some(_) => {
                for (t, c) in s.play() {
                    if c.cp.is_some() {
                        each_target(Some(t));
                    }
                }
            }
        }
    }
    for (card, c) in s.play() {
        if c.controller != p.0 {
            continue;
        }
        let d = s.rules.db.get(c.def);
        if d.votes > 0 {
            push(Action::CommitVotes { card });
        }
        if !mine {
            continue;
        }
        if d.ev > 0 {
            push(Action::AddEv { card });
        }
        if d.ability.is_some() {
            push(Action::UseAbility { card });
        }
        match d.card_type {
            CardType::Storyline => {
                push(Action::AdvanceStoryline { card });
                push(Action::CompleteStoryline { card });
            }
            CardType::Location if c.contested => push(Action::Restore { location: card }),
            t if t.is_unit() => {
                let ready = s
                    .handles
                    .perm(c)
                    .is_some_and(|id| !s.ledger.is_exhausted(id));
                if let Some(b) = c.band.filter(|_| ready) {
                    s.adjacent_in(occupied, b, |to| push(Action::Move { card, to }));
                    if let Band::Surface(_) = b {
                        for (l, lc) in s.play() {
                            if lc.band == Some(b) && lc.controller != p.0 {
                                push(Action::Capture {
                                    location: l,
                                    unit: card,
                                });
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if mine {
        let votes = s.pool_votes(p);
        let per = i64::from(s.config().votes_per_factor_step).max(1);
        if votes >= per {
            for (f, def) in s.config().factors.iter().enumerate() {
                let v = s.factor(f);
                for (up, room) in [(true, def.max - v), (false, v - def.min)] {
                    // Candidates up to what the track and the pool allow; `check` decides each.
                    let most = room.min(votes / per).clamp(0, 255);
                    for steps in 1..=most as u8 {
                        push(Action::PushFactor {
                            factor: f as u8,
                            up,
                            steps,
                        });
                    }
                }
            }
        }
        push(Action::EndTurn {});
    }
}

/// Enumerates every canonical CP split of `left` over `p`'s permanents with CP, from card `start` on.
fn splits(
    s: &State,
    p: Owner,
    start: usize,
    left: u32,
    split: &mut CpSplit,
    f: &mut dyn FnMut(CpSplit),
) {
    if left == 0 {
        f(*split);
        return;
    }
    for (i, c) in s.play() {
        let i = usize::from(i);
        if i < start || c.controller != p.0 {
            continue;
        }
        let Some(cp) = s.handles.cp(c) else {
            continue;
        };
        let have = u32::try_from(s.ledger.value(cp).max(0)).unwrap_or(u32::MAX);
        for n in 1..=left.min(have) {
            split.push(i as u16, n as u16);
            splits(s, p, i + 1, left - n, split, f);
            split.pop();
        }
    }
}

/// Who receives a Storyline's reward.
pub fn reward_recipients(to: RewardTo, completer: Owner, q: Owner) -> bool {
    match to {
        RewardTo::Completer => q == completer,
        RewardTo::EachOpponent => q != completer,
    }
}

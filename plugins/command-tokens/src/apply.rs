//! `apply`: an action checked against the step awaiting a decision, then dispatched to its rule.

use crate::actions::{Action, Players};
use crate::config::NOBODY;
use crate::content::AbilityKind;
use crate::ids::{Pool, arg, card_key, note, owner, system_key};
use crate::phase::{PendingCard, Phase, Step};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{ActionError, Cause, Owner};
use std::borrow::Cow;

impl State {
    /// Applies `action` for `player`. On `Err` the flow is restored here and the adapter rolls the ledger
    /// back, so a refusal changes nothing.
    ///
    /// # Errors
    /// [`ActionError`] naming why.
    pub fn apply(&mut self, player: Owner, action: &Action) -> Result<(), ActionError> {
        let saved = self.flow;
        let result = self.apply_inner(player, action);
        if result.is_err() {
            self.flow = saved;
        }
        result
    }

    pub(crate) fn apply_inner(&mut self, player: Owner, action: &Action) -> Applied {
        if player.0 >= u16::from(self.players()) {
            return Err(ActionError::NoSuchPlayer {
                player: player.0,
                players: u16::from(self.players()),
            });
        }
        let cause = Cause::Action {
            player,
            code: action.code(),
        };
        // A fleet-limit choice (K6) is resolved even after the last round ends: the game finishes once
        // nothing is pending.
        if let Action::RemoveShip { system, class } = *action {
            return self.remove_ship(player, system, class, cause);
        }
        if self.flow.phase == Phase::Over {
            return Err(ActionError::GameOver);
        }
        self.ledger.ensure_nothing_pending()?;
        let actor = self.actor().unwrap_or(owner(NOBODY));
        if player != actor {
            let why = self.why().unwrap_or(Cow::Borrowed("to act"));
            return Err(ActionError::NotYourTurn {
                player,
                reason: format!("{actor} has {why}"),
            });
        }
        let p = actor;
        let step = self.flow.step;
        if self.apply_turn(p, step, action, cause)?.is_some() {
            return Ok(());
        }
        if self.apply_strategy(p, step, action, cause)?.is_some() {
            return Ok(());
        }
        if self.apply_combat(p, step, action, cause)?.is_some() {
            return Ok(());
        }
        if self.apply_agenda(p, step, action, cause)?.is_some() {
            return Ok(());
        }
        if self.apply_cards(p, step, action, cause)?.is_some() {
            return Ok(());
        }
        Err(Refused::NotPossible(*action, step).error(self))
    }

    /// Dispatches the actions of a strategy pick and of a turn: tactical and strategic actions, production,
    /// abilities and the end of a turn. `Ok(None)`: not one of them.
    #[inline]
    fn apply_turn(
        &mut self,
        p: Owner,
        step: Step,
        action: &Action,
        cause: Cause,
    ) -> Result<Option<()>, ActionError> {
        match (step, *action) {
            (Step::Pick, Action::Pick { card }) => self.pick(p, card, cause),
            (Step::Turn, Action::Tactical { system }) => self.tactical(p, system, cause),
            (Step::Turn, Action::Strategic { card }) => self.strategic(p, card, cause),
            (Step::Turn, Action::Pass) => self.pass(p, cause),
            (Step::Turn, Action::StarForge { system, class }) => {
                self.star_forge(p, system, class, cause)
            }
            (Step::Turn, Action::ComponentAction { ability }) => {
                self.component_action(p, ability, cause)
            }
            (Step::Turn, Action::UseAbility { ability, pool, .. }) => {
                self.fabrication(p, ability, pool, cause)
            }
            (
                Step::Turn | Step::StrategyWindow | Step::CombatWindow | Step::Riders,
                Action::PlayCard {
                    card,
                    player,
                    system,
                    fallback,
                    vote,
                    elect,
                },
            ) => {
                let played = PendingCard {
                    card,
                    player,
                    system,
                    fallback,
                    vote,
                    elect,
                };
                self.play_card(p, played, true, cause)
            }
            (
                Step::Nullify,
                Action::UseAbility {
                    ability, system, ..
                },
            ) => self.nullify(p, ability, system, cause),
            (Step::Nullify, Action::NoReaction) => {
                self.flow.step = Step::Move;
                Ok(())
            }
            (
                Step::Foresight,
                Action::UseAbility {
                    ability, system, ..
                },
            ) => self.foresight(p, ability, system, cause),
            (Step::Foresight, Action::NoReaction) => {
                self.start_combat(cause);
                Ok(())
            }
            (
                Step::EndOfTurn,
                Action::Redistribute {
                    tactic,
                    fleet,
                    strategy,
                },
            ) => self.predictive_redistribution(p, [tactic, fleet, strategy], cause),
            (Step::EndOfTurn, Action::NoReaction) => {
                self.pass_turn(cause);
                Ok(())
            }
            (Step::Produce, Action::Produce { class }) => self.produce(p, class, cause),
            (Step::Produce, Action::Eliminate { player }) => {
                self.eliminate(p, Owner(player), cause)
            }
            (Step::Produce, Action::Done) => {
                // Each produced ship was checked against the fleet limit already (T7).
                let system = self.flow.system;
                self.ledger
                    .note(system_key(system), note::DONE, [arg(p), 0, 0], cause);
                self.end_turn(cause);
                Ok(())
            }
            (Step::EndOfTurn, Action::AdditionalAction { system }) => {
                self.additional_action(p, system, cause)
            }
            _ => return Ok(None),
        }
        .map(Some)
    }

    /// Dispatches the actions of strategy cards' abilities: gains, purchases, secondaries, placements.
    /// `Ok(None)`: not one of them.
    #[inline]
    fn apply_strategy(
        &mut self,
        p: Owner,
        step: Step,
        action: &Action,
        cause: Cause,
    ) -> Result<Option<()>, ActionError> {
        match (step, *action) {
            (Step::EndOfStrategy, Action::SwapCards { give, take }) => {
                self.swap_cards(p, give, take, cause)
            }
            (Step::EndOfStrategy, Action::NoReaction) => {
                self.start_action_phase(cause);
                Ok(())
            }
            (Step::Gain, Action::Gain { pool }) => self.gain(p, pool, cause),
            (Step::Buy, Action::Buy { influence }) => self.buy(p, influence, cause),
            (Step::Secondary, Action::Secondary) => self.secondary(p, cause),
            (Step::Secondary, Action::Decline) if Players(self.flow.free).contains(p) => {
                Err(Refused::MustResolve(p, self.flow.card).error(self))
            }
            (Step::Secondary, Action::Decline) => {
                let card = self.flow.card;
                self.ledger
                    .note(card_key(card), note::DECLINE, [arg(p), 0, 0], cause);
                self.flow.cursor += 1;
                self.next_secondary(cause);
                Ok(())
            }
            (Step::Target, Action::Diplomacy { system }) => self.diplomacy(p, system, cause),
            (Step::Fallback, Action::Fallback { pool }) => self.fallback(p, pool, cause),
            (Step::Remove, Action::RemoveToken { system }) => self.remove_token(p, system, cause),
            (Step::Place, Action::Place { system, fallback }) => {
                self.place(p, system, fallback, cause)
            }
            (
                Step::Redistribute,
                Action::Redistribute {
                    tactic,
                    fleet,
                    strategy,
                },
            ) => self.redistribute(p, [tactic, fleet, strategy], cause),
            (Step::FreeSecondaries, Action::FreeSecondaries { players }) => {
                self.free_secondaries(p, players, cause)
            }
            _ => return Ok(None),
        }
        .map(Some)
    }

    /// Dispatches the actions of movement and space combat. `Ok(None)`: not one of them.
    #[inline]
    fn apply_combat(
        &mut self,
        p: Owner,
        step: Step,
        action: &Action,
        cause: Cause,
    ) -> Result<Option<()>, ActionError> {
        match (step, *action) {
            (
                Step::Move,
                Action::Move {
                    from,
                    class,
                    fighters,
                },
            ) => self.move_ship(p, from, class, fighters, cause),
            (Step::Move, Action::EndMovement) => {
                self.end_movement(cause);
                Ok(())
            }
            // Production (or its end) ends movement when no space combat follows.
            (Step::Move, Action::Produce { .. } | Action::Done | Action::Eliminate { .. })
                if !self.combat_due() =>
            {
                self.flow.step = Step::Produce;
                self.apply_inner(p, action)
            }
            (Step::Move, Action::Produce { .. } | Action::Done | Action::Eliminate { .. }) => Err(
                Refused::CombatFirst(self.opponent(p).unwrap_or(p), self.flow.system).error(self),
            ),
            (Step::Announce, Action::AnnounceRetreat) => self.announce(p, true, cause),
            (Step::Announce, Action::NoRetreat) => self.announce(p, false, cause),
            (Step::Roll, Action::Roll { hits }) => self.roll(p, hits, cause),
            (Step::Assign, Action::Destroy { class }) => self.destroy(p, class, cause),
            (Step::Retreat, Action::Retreat { system, fallback }) => {
                self.retreat(p, system, fallback, cause)
            }
            (Step::Capture, Action::Fallback { pool }) => self.capture_from(p, pool, cause),
            (Step::Release, Action::Release { player }) => self.release(p, Owner(player), cause),
            _ => return Ok(None),
        }
        .map(Some)
    }

    /// Dispatches the actions of the agenda phase and of the status phase. `Ok(None)`: not one of them.
    #[inline]
    fn apply_agenda(
        &mut self,
        p: Owner,
        step: Step,
        action: &Action,
        cause: Cause,
    ) -> Result<Option<()>, ActionError> {
        match (step, *action) {
            (Step::WormholeFallback, Action::Fallback { pool }) => {
                self.wormhole_fallback(p, pool, cause)
            }
            (Step::Prerequisites, Action::Prerequisites { count }) => {
                self.prerequisites(count, cause)
            }
            (Step::Recombine, Action::Recombine { player }) => {
                self.recombine(p, Owner(player), cause)
            }
            (Step::Recombine, Action::NoReaction) => {
                self.after_votes(cause);
                Ok(())
            }
            (Step::Comply, Action::NoReaction) => {
                self.ledger
                    .note(self.agenda_key(), note::COMPLY, [arg(p), 0, 0], cause);
                self.after_votes(cause);
                Ok(())
            }
            (Step::Comply, Action::ReturnToken { pool: Pool::Fleet }) => {
                if self.pool(p, Pool::Fleet) == 0 {
                    return Err(Refused::PoolDry(p, Pool::Fleet).error(self));
                }
                self.ledger.move_tokens(
                    p,
                    self.h.pools[Pool::Fleet.index()],
                    self.h.reinforcements,
                    1,
                    cause,
                )?;
                self.ledger
                    .note(self.agenda_key(), note::RETURN, [arg(p), 0, 0], cause);
                self.recheck_fleet(p, cause);
                self.after_votes(cause);
                Ok(())
            }
            (Step::Reveal, Action::RevealAgenda { agenda }) => self.reveal(p, agenda, cause),
            (Step::Quash, Action::Quash) => self.quash(p, cause),
            (Step::Quash, Action::NoQuash) => {
                self.ledger
                    .note(self.agenda_key(), note::NO_QUASH, [arg(p), 0, 0], cause);
                self.after_reveal(cause);
                Ok(())
            }
            (
                Step::Outcome,
                Action::Outcome {
                    vote,
                    voted_against,
                },
            ) => self.outcome(vote, voted_against, cause),
            (Step::Outcome, Action::ElectCard { card }) => self.elect_card(card, cause),
            (Step::Outcome, Action::Elect { player }) => self.elect(Owner(player), cause),
            (Step::ReturnTokens, Action::ReturnToken { pool }) => self.return_token(p, pool, cause),
            _ => return Ok(None),
        }
        .map(Some)
    }

    /// Dispatches the actions of the action-card windows. `Ok(None)`: not one of them.
    #[inline]
    fn apply_cards(
        &mut self,
        p: Owner,
        step: Step,
        action: &Action,
        cause: Cause,
    ) -> Result<Option<()>, ActionError> {
        match (step, *action) {
            (
                Step::Cancel,
                Action::UseAbility {
                    ability, system, ..
                },
            ) => {
                self.usable(p, ability, AbilityKind::CancelActionCard)?;
                if system.is_some() {
                    return Err(Refused::AbilityTakesNoSystem(ability).error(self));
                }
                self.cancel_card(p, true, cause)
            }
            (Step::Cancel, Action::NoReaction) => self.cancel_card(p, false, cause),
            (Step::StrategyWindow, Action::NoCard) => {
                self.flow.window += 1;
                self.strategy_window();
                Ok(())
            }
            (Step::CombatWindow, Action::NoCard) => {
                self.flow.window += 1;
                self.combat_window();
                Ok(())
            }
            (Step::Riders, Action::NoCard) => {
                self.flow.window += 1;
                self.rider_window(cause);
                Ok(())
            }
            _ => return Ok(None),
        }
        .map(Some)
    }

    pub(crate) fn system_index(&self, system: u16) -> Result<usize, ActionError> {
        let s = usize::from(system);
        let count = self.rules.system_count();
        if s >= count {
            return Err(Refused::NoSuchSystem(system).error(self));
        }
        Ok(s)
    }

    // ----- strategy phase -----

    /// The index of strategy card `card`, or a refusal naming the cards there are.
    pub(crate) fn card_index(&self, card: u8) -> Result<usize, ActionError> {
        let c = usize::from(card);
        let count = self.rules.cards.len();
        if c >= count {
            return Err(Refused::NoSuchCard(card).error(self));
        }
        Ok(c)
    }

    /// The index of ship class `class`, or a refusal naming the classes there are.
    pub(crate) fn class_index(&self, class: u8) -> Result<usize, ActionError> {
        let c = usize::from(class);
        let count = self.rules.class_count();
        if c >= count {
            return Err(Refused::NoSuchClass(class).error(self));
        }
        Ok(c)
    }
}

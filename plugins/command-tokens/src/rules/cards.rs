//! Action cards: when each may be played, playing and cancelling them, and their windows.

use crate::actions::Action;
use crate::config::{NOBODY, Vote};
use crate::content::{AbilityKind, CardEffect, Window};
use crate::ids::{Pool, arg, kind, note, owner, slot};
use crate::phase::{PendingCard, Step};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{ActionError, Cause, Key, Owner};

impl State {
    // ----- action cards (T22) -----

    /// The unplayed cards `p` holds for `window`.
    pub(crate) fn cards_for(&self, p: Owner, window: Window) -> impl Iterator<Item = usize> + '_ {
        self.rules
            .hands
            .iter()
            .enumerate()
            .filter(move |(i, c)| {
                owner(c.player) == p
                    && c.window == window
                    && !self.ledger.is_exhausted(self.h.hand[*i])
            })
            .map(|(i, _)| i)
    }

    /// Every way `p` may play each of their cards for `window` now.
    pub(crate) fn push_cards(&self, p: Owner, window: Window, out: &mut Vec<Action>) {
        let play = |card: usize, player, system, fallback, vote, elect| Action::PlayCard {
            card: card as u8,
            player,
            system,
            fallback,
            vote,
            elect,
        };
        for card in self.cards_for(p, window) {
            match self.rules.hands[card].effect {
                CardEffect::Gain { .. } | CardEffect::OthersPlaceToken
                    if window == Window::AfterAgendaRevealed =>
                {
                    for vote in [Vote::For, Vote::Against] {
                        if self.may_predict(Some(vote), None) {
                            out.push(play(card, None, None, None, Some(vote), None));
                        }
                    }
                    for q in self.owners().filter(|&q| !self.is_eliminated(q)) {
                        if self.may_predict(None, Some(q.0)) {
                            out.push(play(card, None, None, None, None, Some(q.0)));
                        }
                    }
                }
                CardEffect::Gain { .. } | CardEffect::OthersPlaceToken => {
                    out.push(play(card, None, None, None, None, None))
                }
                CardEffect::RemoveTacticToken => {
                    for q in self.owners() {
                        if q != p && !self.is_eliminated(q) && self.pool(q, Pool::Tactic) > 0 {
                            out.push(play(card, Some(q.0), None, None, None, None));
                        }
                    }
                }
                CardEffect::RemoveBoardToken => {
                    let zones = self.ledger.zones();
                    for z in self.ledger.zones_holding_in(p, kind::SYSTEM) {
                        let s = zones[z.index()].key.subject as u16;
                        out.push(play(card, None, Some(s), None, None, None));
                    }
                }
                CardEffect::PlaceOthersToken => {
                    for s in 0..self.rules.system_count() {
                        if !self.may_jam(p, s) {
                            continue;
                        }
                        for q in self.owners() {
                            if self.may_receive(p, q, s) {
                                out.push(play(card, Some(q.0), Some(s as u16), None, None, None));
                            }
                        }
                    }
                }
                CardEffect::SkilledRetreat => {
                    let active = usize::from(self.flow.system);
                    for d in self.adjacent_to(active) {
                        if !self.others_have_ships(p, usize::from(d)) {
                            self.push_placements(p, usize::from(d), out, |fallback| {
                                play(card, None, Some(d), fallback, None, None)
                            });
                        }
                    }
                }
            }
        }
    }

    /// Signal Jamming's system: not a home system, and holding or adjacent to one of `p`'s ships.
    pub(crate) fn may_jam(&self, p: Owner, s: usize) -> bool {
        !self.rules.homes.contains(&Some(s as u16))
            && (self.all_ships(p, s) > 0
                || self
                    .adjacent_to(s)
                    .any(|a| self.all_ships(p, usize::from(a)) > 0))
    }

    /// Signal Jamming's player: another player still in the game with a token in reinforcements and none
    /// in the system yet.
    pub(crate) fn may_receive(&self, p: Owner, q: Owner, s: usize) -> bool {
        q != p && !self.is_eliminated(q) && self.reinforcements(q) > 0 && !self.has_token(q, s)
    }

    /// Whether a rider may predict this outcome of the agenda revealed: For or Against for a For/Against
    /// agenda, a player still in the game for an Elect Player one, anything for an agenda not modelled.
    pub(crate) fn may_predict(&self, vote: Option<Vote>, elect: Option<u16>) -> bool {
        let agenda = self.rules.agendas.get(usize::from(self.flow.agenda));
        match (vote, elect) {
            (Some(_), None) => agenda.is_none_or(|a| !a.elect_player),
            (None, Some(q)) => {
                q < u16::from(self.players())
                    && !self.is_eliminated(Owner(q))
                    && agenda.is_none_or(|a| a.elect_player)
            }
            _ => false,
        }
    }

    /// T22: `p` plays the card `played` names, in its window; with `cancellable`, another player may
    /// cancel it first (T26).
    pub(crate) fn play_card(
        &mut self,
        p: Owner,
        played: PendingCard,
        cancellable: bool,
        cause: Cause,
    ) -> Applied {
        let PendingCard {
            card,
            player,
            system,
            fallback,
            vote,
            elect,
        } = played;
        let i = usize::from(card);
        let Some(c) = self.rules.hands.get(i) else {
            return Err(Refused::NoSuchActionCard(card).error(self));
        };
        let (window, effect) = (c.window, c.effect);
        if owner(c.player) != p {
            return Err(Refused::NotInHand(p, card).error(self));
        }
        if self.ledger.is_exhausted(self.h.hand[i]) {
            return Err(Refused::CardPlayed(p, card).error(self));
        }
        let now = match self.flow.step {
            Step::StrategyWindow => Window::StartOfStrategyPhase,
            Step::CombatWindow => Window::StartOfCombatRound,
            Step::Riders => Window::AfterAgendaRevealed,
            _ => Window::Action,
        };
        if window != now {
            return Err(Refused::WrongWindow(card, now).error(self));
        }
        let rider = window == Window::AfterAgendaRevealed;
        let wants = |what: &'static str, given: bool, needed: bool| {
            if given == needed {
                Ok(())
            } else if needed {
                Err(Refused::CardNeeds(card, what).error(self))
            } else {
                Err(Refused::CardTakesNo(card, what).error(self))
            }
        };
        wants(
            "player",
            player.is_some(),
            matches!(
                effect,
                CardEffect::RemoveTacticToken | CardEffect::PlaceOthersToken
            ),
        )?;
        wants(
            "system",
            system.is_some(),
            matches!(
                effect,
                CardEffect::RemoveBoardToken
                    | CardEffect::PlaceOthersToken
                    | CardEffect::SkilledRetreat
            ),
        )?;
        if fallback.is_some() && effect != CardEffect::SkilledRetreat {
            wants("fallback", true, false)?;
        }
        if rider {
            if vote.is_some() == elect.is_some() || !self.may_predict(vote, elect) {
                return Err(Refused::Prediction(card).error(self));
            }
        } else if vote.is_some() || elect.is_some() {
            wants("vote", true, false)?;
        }
        self.card_effect(p, (played, cancellable), cause)
    }

    /// T22: the effect of the card an action plays (and whether it may be cancelled), the card checked
    /// already against its owner and window: its targets checked, then the card played (or left to be
    /// cancelled, T26) and its effect resolved.
    fn card_effect(&mut self, p: Owner, action: (PendingCard, bool), cause: Cause) -> Applied {
        let PendingCard {
            card,
            player,
            system,
            vote,
            elect,
            ..
        } = action.0;
        let i = usize::from(card);
        let c = &self.rules.hands[i];
        let effect = c.effect;
        let rider = c.window == Window::AfterAgendaRevealed;
        let key = Key::new(p, kind::ACTION_CARD, u32::from(card));
        match effect {
            CardEffect::RemoveTacticToken => {
                let q = Owner(player.unwrap_or_default());
                if q == p || q.0 >= u16::from(self.players()) || self.is_eliminated(q) {
                    return Err(Refused::NotTarget(card, q.0).error(self));
                }
                if self.pool(q, Pool::Tactic) == 0 {
                    return Err(Refused::PoolDry(q, Pool::Tactic).error(self));
                }
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                self.ledger.move_tokens(
                    q,
                    self.h.pools[Pool::Tactic.index()],
                    self.h.reinforcements,
                    1,
                    cause,
                )?;
                self.ledger
                    .note(key, note::TACTIC_TOKEN_REMOVED, [arg(p), arg(q), 0], cause);
                self.end_turn(cause);
            }
            CardEffect::RemoveBoardToken => {
                let s = self.system_index(system.unwrap_or_default())?;
                if !self.has_token(p, s) {
                    return Err(Refused::NoTokenOfYours(p, s as u16).error(self));
                }
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                self.ledger
                    .move_tokens(p, self.h.systems[s], self.h.reinforcements, 1, cause)?;
                self.end_turn(cause);
            }
            CardEffect::PlaceOthersToken => {
                let s = self.system_index(system.unwrap_or_default())?;
                let q = Owner(player.unwrap_or_default());
                if !self.may_jam(p, s) {
                    return Err(Refused::JamSystem(p, card, s as u16).error(self));
                }
                if q.0 >= u16::from(self.players()) || !self.may_receive(p, q, s) {
                    return Err(Refused::JamPlayer {
                        card,
                        system: s as u16,
                        seat: q.0,
                    }
                    .error(self));
                }
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                self.ledger
                    .move_tokens(q, self.h.reinforcements, self.h.systems[s], 1, cause)?;
                self.end_turn(cause);
            }
            CardEffect::SkilledRetreat => self.skilled_retreat(i, p, action, cause)?,
            CardEffect::Gain { tokens } if !rider => {
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                if !self.enter_gain(p, tokens, cause) {
                    self.after_gain(cause);
                }
            }
            CardEffect::Gain { .. } | CardEffect::OthersPlaceToken => {
                let Some(free) = self.flow.riders.iter().position(|&r| r == NOBODY) else {
                    return Err(Refused::RidersFull.error(self));
                };
                if !self.play(i, p, key, action, cause)? {
                    return Ok(());
                }
                let (code, prediction) = match (vote, elect) {
                    (Some(Vote::For), _) => (note::PREDICT_FOR, 0),
                    (Some(Vote::Against), _) => (note::PREDICT_AGAINST, 1),
                    (_, q) => (note::PREDICT_ELECT, 2 + q.unwrap_or_default() as u8),
                };
                self.ledger.note(
                    key,
                    code,
                    [arg(p), i32::from(elect.unwrap_or_default()), 0],
                    cause,
                );
                self.flow.riders[free] = card;
                self.flow.predictions[free] = prediction;
            }
        }
        Ok(())
    }

    /// Marks the card played (K5) and says so; returns `false` instead when another player may cancel it
    /// first (T26, Instinct Training), keeping `action` to resolve if they do not.
    pub(crate) fn play(
        &mut self,
        i: usize,
        p: Owner,
        key: Key,
        (played, cancellable): (PendingCard, bool),
        cause: Cause,
    ) -> Result<bool, ActionError> {
        if cancellable {
            let canceller = self.owners().find(|&q| {
                q != p
                    && !self.is_eliminated(q)
                    && self.reaction(q, AbilityKind::CancelActionCard).is_some()
            });
            if let Some(q) = canceller {
                self.flow.pending = Some(played);
                self.flow.step = Step::Cancel;
                self.flow.resolver = slot(q);
                return Ok(false);
            }
        }
        self.ledger.activate(self.h.hand[i], cause)?;
        self.ledger.note(key, note::PLAY, [arg(p), 0, 0], cause);
        Ok(true)
    }

    /// T26: the card waiting is cancelled (its player's card is played for nothing) or resolved.
    pub(crate) fn cancel_card(&mut self, q: Owner, cancel: bool, cause: Cause) -> Applied {
        let Some(played) = self.flow.pending else {
            return Err(Refused::NothingToCancel.error(self));
        };
        let card = played.card;
        let c = &self.rules.hands[usize::from(card)];
        let (p, window) = (owner(c.player), c.window);
        self.flow.pending = None;
        self.flow.resolver = slot(p);
        self.flow.step = match window {
            Window::Action => Step::Turn,
            Window::StartOfStrategyPhase => Step::StrategyWindow,
            Window::StartOfCombatRound => Step::CombatWindow,
            Window::AfterAgendaRevealed => Step::Riders,
        };
        if !cancel {
            return self.play_card(p, played, false, cause);
        }
        let Some(i) = self.reaction(q, AbilityKind::CancelActionCard) else {
            return Err(Refused::NoCancelAbility(q, card).error(self));
        };
        self.spend_ability(q, i, cause)?;
        let key = Key::new(p, kind::ACTION_CARD, u32::from(card));
        self.ledger
            .activate(self.h.hand[usize::from(card)], cause)?;
        self.ledger.note(key, note::PLAY, [arg(p), 0, 0], cause);
        self.ledger
            .note(key, note::CANCELLED, [arg(p), arg(q), 0], cause);
        match window {
            Window::Action => self.end_turn(cause),
            Window::StartOfStrategyPhase => self.strategy_window(),
            Window::StartOfCombatRound => self.combat_window(),
            Window::AfterAgendaRevealed => self.rider_window(cause),
        }
        Ok(())
    }

    /// The window at the start of a combat round: the attacker, then the defender, if they hold a card
    /// for it; then the announcements (T15).
    pub(crate) fn combat_window(&mut self) {
        while self.flow.window < 2 {
            let q = owner(if self.flow.window == 0 {
                self.flow.turn
            } else {
                self.flow.defender
            });
            if self
                .cards_for(q, Window::StartOfCombatRound)
                .next()
                .is_some()
            {
                self.flow.step = Step::CombatWindow;
                self.flow.resolver = slot(q);
                return;
            }
            self.flow.window += 1;
        }
        self.announcements();
    }

    /// The riders window: from the speaker, each player holding a rider plays one or not; then the
    /// speaker enters the outcome, unless the agenda is not modelled and no rider awaits it.
    pub(crate) fn rider_window(&mut self, cause: Cause) {
        let n = self.players();
        // A strategy card elected cannot be predicted as a player or For or Against: no rider (T24).
        let elects_card = self
            .rules
            .agendas
            .get(usize::from(self.flow.agenda))
            .is_some_and(|a| a.elect_card);
        if elects_card {
            self.flow.window = n;
        }
        if self.next_holder(Window::AfterAgendaRevealed, Step::Riders) {
            return;
        }
        // T27, Genetic Recombination: before votes are cast.
        if self.flow.window == n {
            self.flow.window = n + 1;
            let recombiner = self.owners().find(|&q| {
                !self.is_eliminated(q) && self.reaction(q, AbilityKind::VoteOrFleetToken).is_some()
            });
            if let Some(q) = recombiner {
                self.flow.step = Step::Recombine;
                self.flow.resolver = slot(q);
                return;
            }
        }
        self.after_votes(cause);
    }
}

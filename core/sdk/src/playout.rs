//! Random playouts: the one loop that every host, plugin and benchmark runs, and the choice it makes at
//! each step.
//!
//! The loop lives beside the games it drives so that a game can run it on itself
//! ([`DynGame::playout`]): a statically linked game's calls are then direct (no dynamic call per action,
//! no list of who may act copied out), and a runtime-loaded game runs a whole playout inside its library,
//! one boundary crossing instead of one per action. Hosts that watch each step (`coffer demo`,
//! `coffer simulate`'s reports) run the same loop over `dyn DynGame` with an [`Observe`]r, so the same
//! seed makes the same choices either way.

use crate::{Acting, ActionError, DynGame};
use coffer_kernel::GameRng;
use coffer_kernel::Owner;
use std::convert::Infallible;
use std::fmt;

/// Picks who acts and which of their legal actions among the players who may act (`order`, permuted in
/// place): players in a uniformly random order (a lazy Fisher-Yates shuffle), the first with a legal
/// action acts, and one of its actions is drawn uniformly. `None` when nobody has a legal action.
///
/// This is uniform over the players who can act, then uniform over that player's actions (not uniform
/// over all (player, action) pairs). Each visited player costs one draw, the action one more.
#[inline]
pub fn choose(rng: &mut GameRng, order: &mut [Acting]) -> Option<(Owner, usize)> {
    let n = order.len();
    for k in 0..n {
        let j = k + rng.below((n - k) as u64) as usize;
        // Swapping an entry with itself (always, when one player may act) changes nothing, and its
        // 16-byte reload of the entries just written stalled on store forwarding (a third of the
        // playout loop's own time in a profile).
        if j != k {
            order.swap(k, j);
        }
        let Acting { player, legal } = order[k];
        if legal > 0 {
            return Some((Owner(player), rng.below(legal as u64) as usize));
        }
    }
    None
}

/// Why a random playout stopped before the end of the game.
#[derive(Debug)]
pub enum PlayoutError<E = Infallible> {
    /// A listed legal action was refused: the ruleset's enumeration is broken (or its plugin failed).
    /// The game is as it was before that action.
    Refused {
        /// Actions applied before it.
        applied: u64,
        /// Who tried it.
        player: Owner,
        /// Its index in the player's legal actions.
        index: usize,
        /// The refusal.
        error: ActionError,
    },
    /// The observer's error, which stopped the playout.
    Observer(E),
}

impl<E: fmt::Display> fmt::Display for PlayoutError<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PlayoutError::Refused {
                applied,
                player,
                index,
                ..
            } => write!(
                f,
                "after {applied} actions, {player}'s listed legal action #{index} was refused"
            ),
            PlayoutError::Observer(e) => e.fmt(f),
        }
    }
}

impl<E: std::error::Error + 'static> std::error::Error for PlayoutError<E> {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PlayoutError::Refused { error, .. } => Some(error),
            PlayoutError::Observer(e) => e.source(),
        }
    }
}

/// What a playout shows of each step: `before` is called once the action is chosen and before it
/// applies (the game's listed actions are then still those it was chosen from), `after` once it applied;
/// an error of `after` stops the playout. `()` observes nothing and compiles away.
pub trait Observe<G: ?Sized> {
    /// The error that stops the playout.
    type Error;
    /// What `before` hands to `after` (the action's JSON, for instance).
    type Seen;
    /// Legal action `index` of `player` was chosen and is about to apply.
    fn before(&mut self, game: &mut G, player: Owner, index: usize) -> Self::Seen;
    /// It applied.
    ///
    /// # Errors
    /// Whatever should stop the playout.
    fn after(
        &mut self,
        game: &mut G,
        player: Owner,
        index: usize,
        seen: Self::Seen,
    ) -> Result<(), Self::Error>;
}

impl<G: ?Sized> Observe<G> for () {
    type Error = Infallible;
    type Seen = ();
    #[inline(always)]
    fn before(&mut self, _: &mut G, _: Owner, _: usize) {}
    #[inline(always)]
    fn after(&mut self, _: &mut G, _: Owner, _: usize, (): ()) -> Result<(), Infallible> {
        Ok(())
    }
}

/// How far a [`DynGame::playout`] got, kept up to date step by step, so that it is right even when the
/// call unwinds (a plugin rebuilds a game after a panic from it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Actions applied.
    pub applied: u64,
    /// The last action chosen (who, which legal index): the one being applied, or the one that failed.
    pub chosen: Option<(Owner, usize)>,
}

/// Keeps a [`Progress`]: two stores per step, no call.
pub(crate) struct Track<'p>(pub(crate) &'p mut Progress);

impl<G: ?Sized> Observe<G> for Track<'_> {
    type Error = Infallible;
    type Seen = ();
    #[inline(always)]
    fn before(&mut self, _: &mut G, player: Owner, index: usize) {
        self.0.chosen = Some((player, index));
    }
    #[inline(always)]
    fn after(&mut self, _: &mut G, _: Owner, _: usize, (): ()) -> Result<(), Infallible> {
        self.0.applied += 1;
        Ok(())
    }
}

/// One random playout: applies random legal actions, chosen by [`choose`] from [`DynGame::acting`], until
/// nobody can act or `max_actions` were applied, and returns how many were. Each step is one call,
/// [`DynGame::apply_legal_then_acting`] (it also answers who may act next); the last allowed action is a
/// plain [`DynGame::apply_legal`]. `game` is a concrete game (its calls are then direct) or a
/// `dyn DynGame`.
///
/// Running it again on the same game with the generator it left continues the same playout: a playout
/// of `a + b` actions makes the same choices as one of `a` followed by one of `b`.
///
/// # Errors
/// [`PlayoutError::Refused`] for a listed action that was refused (a broken enumeration), with how many
/// were applied before it; [`PlayoutError::Observer`] for an error of `observe`. The actions before
/// either stay applied.
#[inline(always)]
pub fn random_playout<G, O>(
    game: &mut G,
    rng: &mut GameRng,
    max_actions: u64,
    observe: &mut O,
) -> Result<u64, PlayoutError<O::Error>>
where
    G: DynGame + ?Sized,
    O: Observe<G>,
{
    if max_actions == 0 {
        return Ok(0);
    }
    let mut order = Vec::with_capacity(usize::from(game.players()));
    order.extend_from_slice(game.acting());
    let mut applied = 0;
    while let Some((player, index)) = choose(rng, &mut order) {
        let seen = observe.before(game, player, index);
        let refused = |error| PlayoutError::Refused {
            applied,
            player,
            index,
            error,
        };
        let last = applied + 1 == max_actions;
        if last {
            game.apply_legal(player, index).map_err(refused)?;
        } else {
            let next = game
                .apply_legal_then_acting(player, index)
                .map_err(refused)?;
            // Pushed entry by entry: `extend_from_slice` calls `memcpy` for the one or two entries a
            // step has (4% of a static wide-board playout's time in a profile).
            order.clear();
            for &acting in next {
                order.push(acting);
            }
        }
        applied += 1;
        observe
            .after(game, player, index, seen)
            .map_err(PlayoutError::Observer)?;
        if last {
            break;
        }
    }
    Ok(applied)
}

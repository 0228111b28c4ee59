//! The hot path: choosing and applying a random legal action, and the one playout loop the host's
//! games and the checked runs share.

use coffer_core::PlayoutError;
use coffer_core::abi::Acting;
use coffer_core::{ActionError, DynGame, GameRng, Observe, Owner, choose, random_playout};

/// Picks who acts and which of their legal actions, as the module docs describe: players in a random
/// order, the first with a legal action acts, an action drawn uniformly from its list. Afterwards the
/// game's listed actions are that player's ([`DynGame::legal_action_json`] reads them), so
/// [`DynGame::apply_legal`] does not enumerate again.
///
/// `order` is scratch space kept between calls for one game: start with an empty `Vec`; it then holds a
/// permutation of the players who may act. Returns `None` when nobody has a legal action.
#[inline]
pub fn pick_legal(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    order: &mut Vec<Acting>,
) -> Option<(Owner, usize)> {
    order.clear();
    order.extend_from_slice(game.acting());
    let (player, index) = choose(rng, order)?;
    // Selects the chosen player's list (cached: no enumeration) for `legal_action_json`.
    game.legal_actions(player);
    Some((player, index))
}

/// One random playout without checks: applies random legal actions (chosen as by [`pick_legal`], with
/// the same random draws) until nobody can act or `max_actions` were applied, and returns how many were.
/// This is what the benchmarks time. The game runs it on itself ([`DynGame::playout`]): a statically
/// linked game without a dynamic call per action, a runtime-loaded one inside its library, one boundary
/// crossing for the whole playout.
///
/// # Errors
/// The refusal of a listed action (a broken enumeration), with how many actions were applied before it.
pub fn playout(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    max_actions: u64,
) -> Result<u64, (u64, ActionError)> {
    let mut progress = coffer_core::Progress::default();
    game.playout(rng, max_actions, &mut progress)
        .map_err(|e| match e {
            PlayoutError::Refused { applied, error, .. } => (applied, error),
            PlayoutError::Observer(never) => match never {},
        })
}

/// One applied action of [`playout_with`], as its observer sees it.
pub struct Played<'g> {
    /// Who acted.
    pub player: Owner,
    /// The action's JSON ([`DynGame::legal_action_json`], read before it applied); `None` if the game
    /// could not write it.
    pub action: Option<String>,
    /// The game right after the action: ask it for the action's events, the views, the hash.
    pub game: &'g mut dyn DynGame,
}

/// [`playout`] that shows each applied action to `observe` (a `coffer demo` prints it): the same choices
/// from the same random draws, one loop for both. Reporting costs two more calls into the game per action
/// (listing the player's actions to read the chosen one's JSON) besides what `observe` asks.
///
/// # Errors
/// [`PlayoutError::Refused`] for a listed action that was refused, [`PlayoutError::Observer`] for an error
/// of `observe`; the actions before either stay applied.
pub fn playout_with<E>(
    game: &mut dyn DynGame,
    rng: &mut GameRng,
    max_actions: u64,
    observe: impl FnMut(Played<'_>) -> Result<(), E>,
) -> Result<u64, PlayoutError<E>> {
    random_playout(game, rng, max_actions, &mut Watch(observe))
}

/// What [`playout_with`]'s observer is shown: each chosen action's JSON, read before it applies, then the
/// game after it.
pub(crate) struct Watch<F>(F);

impl<E, F: FnMut(Played<'_>) -> Result<(), E>> Observe<dyn DynGame + '_> for Watch<F> {
    type Error = E;
    type Seen = Option<String>;

    fn before(
        &mut self,
        game: &mut (dyn DynGame + '_),
        player: Owner,
        index: usize,
    ) -> Option<String> {
        // Selects the player's list (cached by `acting`: no enumeration) for its JSON.
        game.legal_actions(player);
        game.legal_action_json(index)
    }

    fn after(
        &mut self,
        game: &mut (dyn DynGame + '_),
        player: Owner,
        _: usize,
        action: Option<String>,
    ) -> Result<(), E> {
        (self.0)(Played {
            player,
            action,
            game,
        })
    }
}

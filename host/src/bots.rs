//! Bots that play any ruleset through its legal actions, as a client would: `random`, and `search`
//! (flat Monte Carlo: every legal action tried in random playouts the game runs on itself, the one that
//! wins most chosen). [`play_bots`] plays bots against each other; `coffer bots` prints what it finds.
//!
//! Both are deterministic: a bot draws only from the generator it is given, so a seed replays a game.
//! The search bot plays out copies of the whole game ([`DynGame::clone_game`]): with hidden information
//! (a hand, a deck's order) it sees what its seat could not, so it is a yardstick and a seat-filler for
//! tests and casual games, not a fair opponent in a game with secrets.

use std::fmt;
use std::time::{Duration, Instant};

use coffer_core::{
    Acting, ActionError, DynGame, DynRuleset, GameRng, Outcome, Owner, Progress, Setup,
};

/// A bot: how a seat chooses among its legal actions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bot {
    /// Any legal action, uniformly.
    Random,
    /// Flat Monte Carlo: `playouts` random playouts per decision, dealt round-robin over the legal
    /// actions in a random order, and the action with the best average result chosen (the first of that
    /// order on a tie).
    Search {
        /// Playouts per decision: the budget of one move.
        playouts: u32,
    },
}

/// Why bots could not play.
#[derive(Debug, thiserror::Error)]
pub enum BotError {
    /// A bot's name that is neither `random` nor `search`.
    #[error("unknown bot '{0}': the bots are random and search")]
    Unknown(String),
    /// The ruleset refused to start a game.
    #[error("cannot start game {game}: {message}")]
    Setup {
        /// The game's number in the run.
        game: u64,
        /// The ruleset's words.
        message: String,
    },
    /// A listed legal action was refused: the ruleset's enumeration (or its plugin) is broken.
    #[error("game {game}: {seat}'s listed action {index} was refused: {error}")]
    Refused {
        /// The game's number in the run.
        game: u64,
        /// Who acted.
        seat: Owner,
        /// The legal action's index.
        index: usize,
        /// The refusal.
        error: ActionError,
    },
    /// A playout of the search stopped on a refused action.
    #[error("game {game}: a search playout failed: {message}")]
    Playout {
        /// The game's number in the run.
        game: u64,
        /// What failed.
        message: String,
    },
}

impl Bot {
    /// The search bot's playouts per decision when none is given.
    pub const DEFAULT_PLAYOUTS: u32 = 64;

    /// The bot called `name` (`random` or `search`; a search bot with `playouts` per decision).
    ///
    /// # Errors
    /// [`BotError::Unknown`].
    pub fn named(name: &str, playouts: u32) -> Result<Bot, BotError> {
        match name.trim() {
            "random" => Ok(Bot::Random),
            "search" => Ok(Bot::Search {
                playouts: playouts.max(1),
            }),
            other => Err(BotError::Unknown(crate::render::echo(other))),
        }
    }

    /// Its name, as `--seats` takes it.
    pub fn name(&self) -> &'static str {
        match self {
            Bot::Random => "random",
            Bot::Search { .. } => "search",
        }
    }
}

impl fmt::Display for Bot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Bot::Random => f.write_str("random"),
            Bot::Search { playouts } => write!(f, "search ({playouts} playouts a move)"),
        }
    }
}

/// What one decision cost: the playouts run and the time taken.
#[derive(Clone, Copy, Debug, Default)]
pub struct Decision {
    /// Playouts run to decide (0 for a random bot, or a single legal action).
    pub playouts: u32,
    /// Time taken.
    pub took: Duration,
}

/// Chooses one of `seat`'s `legal` (at least 1) actions in `game` for `bot`, drawing from `rng`;
/// playouts of the search last at most `max_actions` actions.
///
/// # Errors
/// [`BotError::Playout`] when a playout stops on a refused action (`game_number` names the game).
pub fn choose(
    bot: Bot,
    game: &dyn DynGame,
    seat: Owner,
    legal: usize,
    rng: &mut GameRng,
    max_actions: u64,
    game_number: u64,
) -> Result<(usize, Decision), BotError> {
    let start = Instant::now();
    let Bot::Search { playouts } = bot else {
        let index = rng.below(legal as u64) as usize;
        return Ok((index, Decision::default()));
    };
    if legal == 1 {
        return Ok((0, Decision::default()));
    }
    let failed = |message: String| BotError::Playout {
        game: game_number,
        message,
    };
    // The budget, exactly: `playouts` playouts dealt round-robin over the legal actions in a random
    // order (with fewer playouts than actions, the untried ones are not chosen).
    let mut order: Vec<usize> = (0..legal).collect();
    rng.shuffle(&mut order);
    let mut totals = vec![(0.0f64, 0u32); legal];
    for run in 0..playouts as usize {
        let index = order[run % legal];
        let mut copy = game.clone_game();
        copy.apply_legal(seat, index)
            .map_err(|e| failed(format!("{seat}'s listed action {index} was refused: {e}")))?;
        copy.playout(rng, max_actions, &mut Progress::default())
            .map_err(|e| failed(e.to_string()))?;
        let (sum, n) = &mut totals[index];
        *sum += result_for(&copy.outcome(), seat, copy.players());
        *n += 1;
    }
    let (mut best, mut best_value) = (order[0], f64::NEG_INFINITY);
    for &index in &order {
        let (sum, n) = totals[index];
        if n > 0 && sum / f64::from(n) > best_value {
            (best, best_value) = (index, sum / f64::from(n));
        }
    }
    Ok((
        best,
        Decision {
            playouts,
            took: start.elapsed(),
        },
    ))
}

/// What an outcome is worth to `seat`: 1 for a win, 1/k for a win shared by k, 0 for a loss; a draw, or
/// a game the playout did not finish, is worth what a share of everybody's win would be, 1/players.
///
/// Where the ruleset keeps score, the margin over the best other score adds up to a quarter either way:
/// most random playouts of a close game end alike, and the margin tells their actions apart.
fn result_for(outcome: &Outcome, seat: Owner, players: u16) -> f64 {
    let (result, scores) = match outcome {
        Outcome::Finished { winners, scores } if winners.contains(&seat) => {
            (1.0 / winners.len() as f64, scores.as_slice())
        }
        Outcome::Finished { winners, scores } if !winners.is_empty() => (0.0, scores.as_slice()),
        Outcome::Finished { scores, .. } => (1.0 / f64::from(players.max(1)), scores.as_slice()),
        Outcome::Ongoing => (1.0 / f64::from(players.max(1)), &[][..]),
    };
    let Some(&own) = scores.get(seat.index()) else {
        return result;
    };
    let best_other = scores
        .iter()
        .enumerate()
        .filter(|&(p, _)| p != seat.index())
        .map(|(_, &s)| s)
        .max();
    let Some(other) = best_other else {
        return result;
    };
    let scale = scores
        .iter()
        .map(|s| s.unsigned_abs())
        .max()
        .unwrap_or(0)
        .max(1) as f64;
    result + 0.25 * (own - other) as f64 / scale
}

/// Plays game number `g` of `m` (seeded with `m.seed + g`) to its end or `m.max_actions`; `on_action`
/// is told each action before it is applied: the seat, what deciding cost, and the action as JSON.
/// Returns the game and the actions applied.
///
/// # Errors
/// As [`play_bots`].
pub fn play_one(
    ruleset: &dyn DynRuleset,
    m: &Match,
    g: u64,
    mut on_action: impl FnMut(Owner, Decision, Option<String>),
) -> Result<(Box<dyn DynGame>, u64), BotError> {
    play_game(ruleset, m, g, &mut Vec::new(), true, &mut on_action)
}

/// The loop of [`play_one`] and [`play_bots`]; `on_action` gets the action's JSON only with `json` (it
/// costs calls into the ruleset).
fn play_game(
    ruleset: &dyn DynRuleset,
    m: &Match,
    g: u64,
    order: &mut Vec<Acting>,
    json: bool,
    on_action: &mut dyn FnMut(Owner, Decision, Option<String>),
) -> Result<(Box<dyn DynGame>, u64), BotError> {
    let players = u16::try_from(m.seats.len()).unwrap_or(u16::MAX);
    let seed = m.seed.wrapping_add(g);
    let setup = Setup::new(players, seed).config(m.config.clone());
    let mut game = ruleset.new_game(&setup).map_err(|e| BotError::Setup {
        game: g,
        message: e.to_string(),
    })?;
    // The bots' own generator, apart from the game's: replays of the game's log need no bot.
    let mut rng = GameRng::new(seed ^ 0xB075_B075_B075_B075);
    let mut applied = 0;
    while applied < m.max_actions {
        order.clear();
        order.extend_from_slice(game.acting());
        // Who acts when several may, and a random seat's action: the random playout's own draw.
        let Some((seat, drawn)) = coffer_core::choose(&mut rng, order) else {
            break;
        };
        let (index, decision) = match m.seats.get(seat.index()).copied().unwrap_or(Bot::Random) {
            Bot::Random => (drawn, Decision::default()),
            bot => {
                let legal = game.legal_actions(seat);
                let budget = m.max_actions - applied;
                choose(bot, &*game, seat, legal, &mut rng, budget, g)?
            }
        };
        let action = if json {
            // The list read is this seat's (the search played out copies).
            game.legal_actions(seat);
            game.legal_action_json(index)
        } else {
            None
        };
        on_action(seat, decision, action);
        game.apply_legal(seat, index)
            .map_err(|error| BotError::Refused {
                game: g,
                seat,
                index,
                error,
            })?;
        applied += 1;
    }
    Ok((game, applied))
}

/// Bots against each other: the options of [`play_bots`].
#[derive(Clone, Debug)]
pub struct Match {
    /// One bot per seat, seat 0 first.
    pub seats: Vec<Bot>,
    /// Games to play.
    pub games: u64,
    /// Game `i` is seeded with `seed + i`.
    pub seed: u64,
    /// The most actions of a game (and of a search playout).
    pub max_actions: u64,
    /// The ruleset's configuration (JSON; `null` for its defaults).
    pub config: serde_json::Value,
}

/// What the bots did.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Tally {
    /// Games played.
    pub games: u64,
    /// Wins per seat (a shared win counts for each winner).
    pub wins: Vec<u64>,
    /// Games that finished without a winner.
    pub draws: u64,
    /// Games cut at `max_actions`.
    pub unfinished: u64,
    /// Actions applied, all games.
    pub actions: u64,
    /// Decisions per seat.
    pub decisions: Vec<u64>,
    /// The most playouts any one decision ran, per seat.
    pub max_playouts: Vec<u32>,
    /// The longest decision, per seat, in milliseconds.
    pub max_decision_ms: Vec<f64>,
    /// Time per seat, in seconds.
    pub seconds: Vec<f64>,
}

/// Plays `m.games` games of `ruleset` with one bot per seat; `after` is told each finished game's
/// number (for progress).
///
/// # Errors
/// A game the ruleset will not start, or a listed action it refuses.
pub fn play_bots(
    ruleset: &dyn DynRuleset,
    m: &Match,
    mut after: impl FnMut(u64),
) -> Result<Tally, BotError> {
    let seats = m.seats.len();
    let mut tally = Tally {
        wins: vec![0; seats],
        decisions: vec![0; seats],
        max_playouts: vec![0; seats],
        max_decision_ms: vec![0.0; seats],
        seconds: vec![0.0; seats],
        ..Tally::default()
    };
    // Who may act, copied for the draw: one buffer for every action of every game.
    let mut order: Vec<Acting> = Vec::with_capacity(seats);
    for g in 0..m.games {
        let mut count = |seat: Owner, decision: Decision, _: Option<String>| {
            let s = seat.index();
            if let Some(n) = tally.decisions.get_mut(s) {
                *n += 1;
                tally.max_playouts[s] = tally.max_playouts[s].max(decision.playouts);
                let ms = decision.took.as_secs_f64() * 1e3;
                tally.max_decision_ms[s] = tally.max_decision_ms[s].max(ms);
                tally.seconds[s] += decision.took.as_secs_f64();
            }
        };
        let (game, applied) = play_game(ruleset, m, g, &mut order, false, &mut count)?;
        tally.actions += applied;
        match game.outcome() {
            Outcome::Finished { winners, .. } if winners.is_empty() => tally.draws += 1,
            Outcome::Finished { winners, .. } => {
                for w in winners {
                    if let Some(n) = tally.wins.get_mut(w.index()) {
                        *n += 1;
                    }
                }
            }
            Outcome::Ongoing => tally.unfinished += 1,
        }
        tally.games += 1;
        after(g);
    }
    Ok(tally)
}

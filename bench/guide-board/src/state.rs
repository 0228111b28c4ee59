//! The state of one game of outposts and how it is set up (the board of sites, each player's
//! reinforcements, energy, harvest and score), the questions the rules ask of it, and who has won.

use coffer_core::{
    AmountId, AmountSpec, Cause, Key, Kind, Ledger, Outcome, Owner, PermanentId, Scope, SetupError,
    Zone, ZoneId,
};
use serde::{Deserialize, Serialize};

/// A player's reinforcements: the zone their tokens start in (their reserve).
pub const REINFORCEMENTS: Kind = Kind(0);
/// A site of the ring board: a zone of the game's, holding the tokens of whoever holds it.
pub const SITE: Kind = Kind(1);
/// A player's energy: refilled to [`ENERGY`] when a round starts, emptied when it ends.
pub const ENERGY_POOL: Kind = Kind(2);
/// A player's harvest: ready once a round.
pub const HARVEST: Kind = Kind(3);
/// A player's score, capped at [`MAX_SCORE`].
pub const SCORE: Kind = Kind(4);

/// Tokens each player has.
pub const TOKENS: u32 = 12;
/// Energy each player has at the start of a round.
pub const ENERGY: u64 = 3;
/// The highest score.
pub const MAX_SCORE: i64 = 20;
/// The most players.
pub const MAX_PLAYERS: u16 = 6;
/// The most sites.
pub const MAX_SITES: u16 = 200;
/// The most rounds.
pub const MAX_ROUNDS: u16 = 100;

/// The whole state of one game. No `HashMap`/`HashSet` here: state hashes need a canonical encoding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    pub(crate) ledger: Ledger,
    /// The sites, by site number.
    pub(crate) sites: Vec<ZoneId>,
    /// Each player's reinforcements.
    pub(crate) reinforcements: Vec<ZoneId>,
    /// Each player's energy.
    pub(crate) energy: Vec<AmountId>,
    /// Each player's harvest, exhausted once used this round.
    pub(crate) harvest: Vec<PermanentId>,
    /// Each player's score.
    pub(crate) score: Vec<AmountId>,
    /// Who has passed this round.
    pub(crate) passed: Vec<bool>,
    /// Whose turn it is.
    pub(crate) active: u16,
    /// The round being played, from 0; equal to `rounds` once the game is over.
    pub(crate) round: u16,
    /// How many rounds the game lasts.
    pub(crate) rounds: u16,
}

/// Configuration; `Default` gives the documented defaults.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Sites on the ring board (1 to 200).
    pub sites: u16,
    /// Rounds the game lasts (1 to 100).
    pub rounds: u16,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            sites: 30,
            rounds: 8,
        }
    }
}

impl Config {
    /// Checks the configuration.
    ///
    /// # Errors
    /// [`SetupError::Config`] naming the value out of range.
    pub fn check(&self) -> Result<(), SetupError> {
        if !(1..=MAX_SITES).contains(&self.sites) {
            return Err(SetupError::Config(format!(
                "{} sites: choose 1 to {MAX_SITES}",
                self.sites
            )));
        }
        if !(1..=MAX_ROUNDS).contains(&self.rounds) {
            return Err(SetupError::Config(format!(
                "{} rounds: choose 1 to {MAX_ROUNDS}",
                self.rounds
            )));
        }
        Ok(())
    }
}

impl State {
    /// A new game at the start of round 1, player 0 to act: every token in reinforcements, every
    /// player's energy full and harvest ready.
    ///
    /// # Errors
    /// [`SetupError::Players`] outside 2 to 6 players; [`SetupError::Config`] naming the value out of
    /// range.
    pub fn new(players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        if !(2..=MAX_PLAYERS).contains(&players) {
            return Err(SetupError::Players {
                min: 2,
                max: MAX_PLAYERS,
                got: players,
            });
        }
        config.check()?;
        let mut ledger = Ledger::new(players, seed);
        // The board: one zone per site, the game's, in site order (the board index lists them so), then
        // each player's reinforcements; all made in one call.
        let mut sites = Vec::with_capacity(usize::from(config.sites));
        ledger.add_zones(
            (0..config.sites).map(|site| Zone::new(Key::new(Owner::GAME, SITE, u32::from(site)))),
            &mut sites,
        )?;
        let mut reinforcements = Vec::with_capacity(usize::from(players));
        ledger.add_zones(
            (0..players).map(|p| Zone::new(Key::new(Owner(p), REINFORCEMENTS, 0))),
            &mut reinforcements,
        )?;
        let mut energy = Vec::new();
        let mut harvest = Vec::new();
        let mut score = Vec::new();
        for p in (0..players).map(Owner) {
            // Reinforcements are the player's reserve: every token starts there (K4).
            ledger.stock(p, reinforcements[p.index()], TOKENS, Cause::Setup)?;
            // Energy is a pool that empties when the round (an act of the clock) ends (K2).
            energy.push(
                ledger.add_amount(
                    AmountSpec::new(Key::new(p, ENERGY_POOL, 0))
                        .start(ENERGY as i64)
                        .cap(ENERGY as i64)
                        .lasts(Scope::Act),
                )?,
            );
            // Harvest: a permanent exhausted when used, readied when the round ends (K5).
            harvest.push(ledger.add_permanent(Key::new(p, HARVEST, 0), Some(Scope::Act))?);
            score.push(ledger.add_amount(AmountSpec::new(Key::new(p, SCORE, 0)).cap(MAX_SCORE))?);
        }
        Ok(State {
            ledger,
            sites,
            reinforcements,
            energy,
            harvest,
            score,
            passed: vec![false; usize::from(players)],
            active: 0,
            round: 0,
            rounds: config.rounds,
        })
    }

    /// How many players play.
    pub fn players(&self) -> u16 {
        self.ledger.owners()
    }

    /// How many sites the board has.
    pub fn site_count(&self) -> u16 {
        self.sites.len() as u16
    }

    /// Whether the last round has ended.
    pub fn is_over(&self) -> bool {
        self.round >= self.rounds
    }

    /// Whose turn it is; `None` once the game is over.
    pub fn active(&self) -> Option<Owner> {
        (!self.is_over()).then_some(Owner(self.active))
    }

    /// The round being played, from 1.
    pub fn round(&self) -> u16 {
        self.round + 1
    }

    /// Who holds `site` (the player whose tokens are on it), if anybody.
    pub fn holder(&self, site: u16) -> Option<Owner> {
        let counts = self.ledger.zone_tokens(self.sites[usize::from(site)]);
        counts.iter().position(|&n| n > 0).map(|p| Owner(p as u16))
    }

    /// How many tokens are on `site` (all its holder's).
    pub fn tokens_on(&self, site: u16) -> u32 {
        self.ledger
            .zone_tokens(self.sites[usize::from(site)])
            .iter()
            .sum()
    }

    /// How many sites `p` holds.
    pub fn sites_held(&self, p: Owner) -> usize {
        self.ledger.zones_holding_in(p, SITE).len()
    }

    /// `p`'s energy.
    pub fn energy(&self, p: Owner) -> i64 {
        self.ledger.value(self.energy[p.index()])
    }

    /// `p`'s score.
    pub fn score(&self, p: Owner) -> i64 {
        self.ledger.value(self.score[p.index()])
    }

    /// `p`'s tokens in reinforcements.
    pub fn in_reinforcements(&self, p: Owner) -> u32 {
        self.ledger.tokens(self.reinforcements[p.index()], p)
    }

    /// Whether `p` has passed this round.
    pub fn has_passed(&self, p: Owner) -> bool {
        self.passed[p.index()]
    }

    /// Who has won, once the last round has ended: the highest score, ties sharing.
    pub fn outcome(&self) -> Outcome {
        if !self.is_over() {
            return Outcome::Ongoing;
        }
        Outcome::by_score((0..self.players()).map(|p| self.score(Owner(p))).collect())
    }
}

//! The configuration (every RULES.md assumption is an option) and a game's fixed [`Rules`] built from it.

use crate::card_db::CardDb;
use crate::content::CardDef;
use serde::{Deserialize, Serialize};

/// Who gets control when the highest standing Votes tie (S4).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoliticalTie {
    /// Nobody controls (the RULES.md assumption).
    #[default]
    Nobody,
    /// The active player, if among the tied.
    ActivePlayer,
}

/// Who receives the self-inflicted awards (S11).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AwardTo {
    /// Each opponent of the player (the RULES.md assumption).
    #[default]
    EachOpponent,
    /// The next player in turn order.
    NextPlayer,
    /// Nobody: no award.
    Nobody,
}

/// A Galactic Factor: a named integer on a bounded track (S17).
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FactorDef {
    /// Name.
    pub name: String,
    /// Lowest value.
    pub min: i64,
    /// Highest value.
    pub max: i64,
    /// Starting value.
    pub start: i64,
}

/// The default Galactic Factors.
pub fn default_factors() -> Vec<FactorDef> {
    ["order", "prosperity", "war"]
        .into_iter()
        .map(|n| FactorDef {
            name: n.to_string(),
            min: -3,
            max: 3,
            start: 0,
        })
        .collect()
}

/// The ruleset's configuration. `Default` gives the documented defaults.
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// S1: the Treasury cap.
    pub treasury_cap: u32,
    /// Currency each player starts with.
    pub starting_currency: u32,
    /// Cards each player draws before the first turn.
    pub starting_hand: u32,
    /// S10: cards drawn in each Draw Phase.
    pub draw_per_turn: u32,
    /// S10: the hand size checked at the End Phase.
    pub hand_limit: u32,
    /// S5 (assumption): committed Votes per Galactic Factor step.
    pub votes_per_factor_step: u32,
    /// S4 (assumption): who controls on a tie of standing Vote.
    pub political_tie: PoliticalTie,
    /// S11 (assumption): SP of each self-inflicted award.
    pub award_sp: u32,
    /// S11 (assumption): who receives the awards.
    pub award_to: AwardTo,
    /// S12 (assumption): with 3+ players and nobody on two wins after Act 3, the winner of Act 3 wins the
    /// game; when false, every player with the most Act wins shares the win.
    pub act3_winner_wins: bool,
    /// S16 (assumption): Currency each player who did not win an Act gains (capped by S1).
    pub catch_up_currency: u32,
    /// S17 (assumption): the Galactic Factors.
    pub factors: Vec<FactorDef>,
    /// Currency a Restore costs (S14).
    pub restore_cost: u32,
    /// Assumption: a Prime Character's Fall flips its owner's Homeworld off its Prime face.
    pub fall_flips_homeworld: bool,
    /// Whether decks are shuffled at setup (with the game's seeded RNG).
    pub shuffle_decks: bool,
    /// Homeworld card ids, given to players in turn (player i gets entry i modulo the list's length).
    pub homeworlds: Vec<String>,
    /// Card ids of each player's deck; `null`: one copy of every non-Homeworld card.
    pub deck: Option<Vec<String>>,
    /// Inline card definitions replacing the starter set; `null`: the starter set.
    pub cards: Option<Vec<CardDef>>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            treasury_cap: 20,
            starting_currency: 4,
            starting_hand: 5,
            draw_per_turn: 1,
            hand_limit: 7,
            votes_per_factor_step: 1,
            political_tie: PoliticalTie::Nobody,
            award_sp: 1,
            award_to: AwardTo::EachOpponent,
            act3_winner_wins: true,
            catch_up_currency: 3,
            factors: default_factors(),
            restore_cost: 2,
            fall_flips_homeworld: true,
            shuffle_decks: true,
            homeworlds: vec!["coruscant".to_string(), "korriban".to_string()],
            deck: None,
            cards: None,
        }
    }
}

/// A game's fixed rules: its configuration and validated cards (shared, never changed during play).
#[derive(Clone, PartialEq, Debug, Serialize, Deserialize)]
pub struct Rules {
    /// The configuration (with `cards` moved into `db`).
    pub config: Config,
    /// The cards.
    pub db: CardDb,
    /// Each player's Homeworld definition, in configuration order.
    pub homeworlds: Vec<u16>,
    /// The definitions in each player's deck, in listed order.
    pub deck: Vec<u16>,
}

//! A template Coffer ruleset, "coin race": each turn a player takes one or two coins from the bank, or
//! spends three to build a mine that yields one coin at the start of each of their turns. The first player
//! whose purse reaches the goal wins. Replace the rules with yours; keep the shape.

use coffer_core::{
    ActionError, AmountId, AmountSpec, Cause, Description, Doc, Key, Kind, Ledger, NoteTerm,
    Outcome, Owner, Ruleset, SetupError, Table, Term, Vocabulary,
};
use serde::{Deserialize, Serialize};

/// Resource kinds of this ruleset (the kernel knows no game words; kinds give them meaning).
const PURSE: Kind = Kind(0);
const MINES: Kind = Kind(1);

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Default)]
pub struct CoinRace;

/// The whole state of one game. No `HashMap`/`HashSet` here: state hashes need a canonical encoding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    ledger: Ledger,
    purse: Vec<AmountId>,
    mines: Vec<AmountId>,
    turn: u16,
    goal: u8,
}

/// A player's action, as JSON: `{"type":"take","coins":2}`, `{"type":"build"}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Take one or two coins.
    Take {
        /// 1 or 2.
        coins: u8,
    },
    /// Spend three coins on a mine.
    Build,
}

/// Configuration; `Default` gives the documented defaults.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Coins that win (2 to 100).
    pub goal: u8,
}

impl Default for Config {
    fn default() -> Config {
        Config { goal: 10 }
    }
}

/// Action codes in [`Cause::Action`], indexing [`Vocabulary::actions`].
const TAKE: u16 = 0;
const BUILD: u16 = 1;

/// The effect code of a mine's income ([`Cause::Effect`]), indexing [`Vocabulary::effects`].
const MINE_INCOME: u16 = 0;

/// The code of this ruleset's own event "the turn passes", indexing [`Vocabulary::notes`].
const NEXT_TURN: u16 = 0;

/// What a mine costs.
const MINE_COST: u64 = 3;

impl Ruleset for CoinRace {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        let mut d = Description::new("my-ruleset", "0.1.0", "coin race: first to the goal wins");
        d.min_players = 2;
        d.max_players = 4;
        d.phases = vec!["turn".to_owned()];
        d.resources = vec![
            Doc::new("purse", "a player's coins; the goal wins"),
            Doc::new(
                "mines",
                "each yields one coin at the start of its owner's turn",
            ),
        ];
        d.actions = vec![
            Doc::with(
                "take",
                "take one or two coins",
                serde_json::json!({"type": "take", "coins": 2}),
            ),
            Doc::with(
                "build",
                "spend three coins on a mine",
                serde_json::json!({"type": "build"}),
            ),
        ];
        d.options = vec![Doc::with(
            "goal",
            "coins that win (2 to 100)",
            serde_json::json!(10),
        )];
        // What this ruleset calls things: hosts name resources, causes and events with it. A ruleset
        // that declares nothing gets plain names ("resource 0", "action 1").
        d.vocabulary = Vocabulary {
            kinds: vec![Term::new("purse"), Term::new("mines")],
            phases: vec!["Turn".to_owned()],
            actions: vec!["Take".to_owned(), "Build".to_owned()],
            effects: vec!["mine income".to_owned()],
            notes: vec![NoteTerm::new("{who}'s turn begins")],
            ..Vocabulary::default()
        };
        d
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        if !(2..=100).contains(&config.goal) {
            return Err(SetupError::Config(format!(
                "goal {}: choose 2 to 100",
                config.goal
            )));
        }
        let mut ledger = Ledger::new(players, seed);
        let mut purse = Vec::new();
        let mut mines = Vec::new();
        for p in (0..players).map(Owner) {
            purse.push(
                ledger.add_amount(
                    AmountSpec::new(Key::new(p, PURSE, 0)).cap(i64::from(config.goal)),
                )?,
            );
            mines.push(ledger.add_amount(AmountSpec::new(Key::new(p, MINES, 0)))?);
        }
        Ok(State {
            ledger,
            purse,
            mines,
            turn: 0,
            goal: config.goal,
        })
    }

    fn legal_actions(&self, s: &State, player: Owner, out: &mut Vec<Action>) {
        if player.0 != s.turn || self.outcome(s) != Outcome::Ongoing {
            return;
        }
        out.push(Action::Take { coins: 1 });
        out.push(Action::Take { coins: 2 });
        if s.ledger.value(s.purse[player.index()]) >= MINE_COST as i64 {
            out.push(Action::Build);
        }
    }

    fn apply(&self, s: &mut State, player: Owner, action: &Action) -> Result<(), ActionError> {
        // Validate first: a refusal must leave the state exactly as it was.
        if self.outcome(s) != Outcome::Ongoing {
            return Err(ActionError::GameOver);
        }
        if player.0 != s.turn {
            return Err(ActionError::NotYourTurn {
                player,
                reason: format!("it is player {}'s turn", s.turn),
            });
        }
        let code = match action {
            Action::Take { .. } => TAKE,
            Action::Build => BUILD,
        };
        let cause = Cause::Action { player, code };
        let purse = s.purse[player.index()];
        match action {
            Action::Take {
                coins: coins @ 1..=2,
            } => {
                s.ledger.gain(purse, u64::from(*coins), cause)?;
            }
            Action::Take { coins } => {
                return Err(ActionError::Illegal(format!("take {coins}: take 1 or 2")));
            }
            Action::Build => {
                // The kernel refuses a spend that is short; the adapter rolls back the whole action then.
                s.ledger.spend(purse, MINE_COST, cause)?;
                s.ledger.gain(s.mines[player.index()], 1, cause)?;
            }
        }
        // The next player's turn starts with their mines' income.
        s.turn = (s.turn + 1) % s.ledger.owners();
        let next = Owner(s.turn);
        // A ruleset's own event: the turn is the ruleset's state, not the ledger's.
        s.ledger.note(Key::new(next, PURSE, 0), NEXT_TURN, [0; 3], cause);
        let income = s.ledger.value(s.mines[next.index()]);
        if income > 0 && self.outcome(s) == Outcome::Ongoing {
            s.ledger.gain(
                s.purse[next.index()],
                income as u64,
                Cause::Effect(MINE_INCOME),
            )?;
        }
        Ok(())
    }

    fn ledger<'s>(&self, s: &'s State) -> &'s Ledger {
        &s.ledger
    }

    fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger {
        &mut s.ledger
    }

    fn outcome(&self, s: &State) -> Outcome {
        let winners: Vec<Owner> = (0..s.ledger.owners())
            .map(Owner)
            .filter(|p| s.ledger.value(s.purse[p.index()]) >= i64::from(s.goal))
            .collect();
        if winners.is_empty() {
            Outcome::Ongoing
        } else {
            let scores = s.purse.iter().map(|a| s.ledger.value(*a)).collect();
            Outcome::Finished { winners, scores }
        }
    }

    /// Who plays now and why: what hosts show beside the resources. Hidden information would go into its
    /// owner's table only (`seat == Some(owner)`); this game has none.
    fn table(&self, s: &State, _seat: Option<Owner>, table: &mut Table) {
        let player = Owner(s.turn);
        table.clock(0, Some(0), None).turn(player);
        if self.outcome(s) == Outcome::Ongoing {
            table.act(player, "to take coins or build a mine");
        }
        let goal = table.section("Goal");
        goal.row(Owner::GAME, "coins that win", s.goal.to_string());
    }
}

// Registers the ruleset for hosts that link this crate, and exports it from the cdylib for
// `coffer --plugin-dir`. Once per crate.
coffer_core::plugin!(CoinRace);

#[cfg(test)]
mod tests {
    use super::*;
    use coffer_core::{Adapter, Setup};

    #[test]
    fn building_a_mine_with_too_few_coins_is_refused_and_changes_nothing() {
        let game = Adapter::shared(CoinRace);
        let mut g = game.new_game(&Setup::new(2, 1)).unwrap();
        let before = g.state_hash();
        assert!(g.apply_json(Owner(0), r#"{"type":"build"}"#).is_err());
        assert_eq!(g.state_hash(), before);
    }
}

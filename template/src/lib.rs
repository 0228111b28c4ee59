//! A template Coffer ruleset, "coin race": each turn a player takes one or two coins from the bank, or
//! pays three back to it to build a mine that yields one coin (from the bank) at the start of each of their
//! turns. The first player whose purse reaches the goal wins; if the bank runs dry first, the richest
//! player wins. Replace the rules with yours; keep the shape.
//!
//! The bank is a supply the game owns (`Owner::GAME`): coins are the game's tokens wherever they are, so
//! the kernel conserves them, and a purse is a zone of the player's holding the game's coins.

use coffer_core::{
    ActionError, AmountId, AmountSpec, Cause, Description, Doc, Key, Kind, Ledger, NoteTerm,
    Outcome, Owner, Ruleset, SetupError, Table, Term, Vocabulary, Zone, ZoneId,
};
use serde::{Deserialize, Serialize};

/// Resource kinds of this ruleset (the kernel knows no game words; kinds give them meaning).
const PURSE: Kind = Kind(0);
const MINES: Kind = Kind(1);
const BANK: Kind = Kind(2);

/// The ruleset. Holds nothing: everything of a game is in its [`State`].
#[derive(Default)]
pub struct CoinRace;

/// The whole state of one game. No `HashMap`/`HashSet` here: state hashes need a canonical encoding.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    ledger: Ledger,
    bank: ZoneId,
    purse: Vec<ZoneId>,
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
    /// Coins in the bank (the goal to 1000).
    pub bank: u32,
}

impl Default for Config {
    fn default() -> Config {
        Config { goal: 10, bank: 30 }
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
const MINE_COST: u32 = 3;

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
                "bank",
                "the coins nobody holds; taking stops when it is empty",
            ),
            Doc::new(
                "mines",
                "each yields one coin at the start of its owner's turn",
            ),
        ];
        d.actions = vec![
            Doc::with(
                "take",
                "take one or two coins from the bank (what is left, if it holds fewer)",
                serde_json::json!({"type": "take", "coins": 2}),
            ),
            Doc::with(
                "build",
                "pay three coins back to the bank for a mine",
                serde_json::json!({"type": "build"}),
            ),
        ];
        d.options = vec![
            Doc::with("goal", "coins that win (2 to 100)", serde_json::json!(10)),
            Doc::with(
                "bank",
                "coins in the bank (the goal to 1000)",
                serde_json::json!(30),
            ),
        ];
        // What this ruleset calls things: hosts name resources, causes and events with it. A ruleset
        // that declares nothing gets plain names ("resource 0", "action 1").
        d.vocabulary = Vocabulary {
            kinds: vec![Term::new("purse"), Term::new("mines"), Term::new("bank")],
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
        if !(u32::from(config.goal)..=1000).contains(&config.bank) {
            return Err(SetupError::Config(format!(
                "bank {}: choose the goal ({}) to 1000",
                config.bank, config.goal
            )));
        }
        let mut ledger = Ledger::new(players, seed);
        // The bank: the game's own supply of coins (K4.6), conserved wherever they go.
        let bank = ledger.add_zone(Zone::new(Key::new(Owner::GAME, BANK, 0)))?;
        ledger.stock(Owner::GAME, bank, config.bank, Cause::Setup)?;
        let mut purse = Vec::new();
        let mut mines = Vec::new();
        for p in (0..players).map(Owner) {
            purse.push(ledger.add_zone(Zone::new(Key::new(p, PURSE, 0)))?);
            mines.push(ledger.add_amount(AmountSpec::new(Key::new(p, MINES, 0)))?);
        }
        Ok(State {
            ledger,
            bank,
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
        if s.ledger.tokens(s.bank, Owner::GAME) > 0 {
            out.push(Action::Take { coins: 1 });
            out.push(Action::Take { coins: 2 });
        }
        // The kernel's read-only check of the payment `apply` makes (K8.2): no copy of its rule here.
        let purse = s.purse[player.index()];
        if s.ledger
            .can_move_tokens(Owner::GAME, purse, s.bank, MINE_COST)
            .is_ok()
        {
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
            Action::Take { .. } if s.ledger.tokens(s.bank, Owner::GAME) == 0 => {
                return Err(ActionError::Illegal("the bank is empty".into()));
            }
            Action::Take {
                coins: coins @ 1..=2,
            } => {
                // A draw from the bank: fewer if it holds fewer (reported in the event, K4.2).
                s.ledger
                    .gain_tokens(Owner::GAME, purse, u32::from(*coins), cause)?;
            }
            Action::Take { coins } => {
                return Err(ActionError::Illegal(format!("take {coins}: take 1 or 2")));
            }
            Action::Build => {
                // The kernel refuses a payment that is short; the adapter rolls back the whole action then.
                s.ledger
                    .move_tokens(Owner::GAME, purse, s.bank, MINE_COST, cause)?;
                s.ledger.gain(s.mines[player.index()], 1, cause)?;
            }
        }
        // The next player's turn starts with their mines' income, from the bank.
        s.turn = (s.turn + 1) % s.ledger.owners();
        let next = Owner(s.turn);
        // A ruleset's own event: the turn is the ruleset's state, not the ledger's.
        s.ledger
            .note(Key::new(next, PURSE, 0), NEXT_TURN, [0; 3], cause);
        let income = s.ledger.value(s.mines[next.index()]);
        if income > 0 && self.outcome(s) == Outcome::Ongoing {
            s.ledger.gain_tokens(
                Owner::GAME,
                s.purse[next.index()],
                u32::try_from(income).unwrap_or(u32::MAX),
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
        let coins = |p: Owner| s.ledger.tokens(s.purse[p.index()], Owner::GAME);
        let players = (0..s.ledger.owners()).map(Owner);
        let mut winners: Vec<Owner> = players
            .clone()
            .filter(|&p| coins(p) >= u32::from(s.goal))
            .collect();
        if winners.is_empty() && s.ledger.tokens(s.bank, Owner::GAME) == 0 {
            // The bank ran dry: the richest player wins (ties share the win).
            let most = players.clone().map(coins).max().unwrap_or(0);
            winners = players.clone().filter(|&p| coins(p) == most).collect();
        }
        if winners.is_empty() {
            Outcome::Ongoing
        } else {
            let scores = players.map(|p| i64::from(coins(p))).collect();
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
        let bank = s.ledger.tokens(s.bank, Owner::GAME);
        goal.row(Owner::GAME, "coins in the bank", bank.to_string());
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

    #[test]
    fn the_bank_pays_what_it_holds_and_a_dry_bank_ends_the_game() {
        let game = Adapter::shared(CoinRace);
        let setup = Setup::new(2, 1).config(serde_json::json!({"goal": 3, "bank": 3}));
        let mut g = game.new_game(&setup).unwrap();
        g.apply_json(Owner(0), r#"{"type":"take","coins":2}"#)
            .unwrap();
        // One coin is left: p1 asks for two and gets one; the bank is dry and p0 is the richest.
        g.apply_json(Owner(1), r#"{"type":"take","coins":2}"#)
            .unwrap();
        match g.outcome() {
            Outcome::Finished { winners, scores } => {
                assert_eq!(winners, [Owner(0)]);
                assert_eq!(scores, [2, 1]);
            }
            Outcome::Ongoing => panic!("a dry bank ends the game"),
        }
    }
}

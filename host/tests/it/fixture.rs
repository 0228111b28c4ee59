//! `tally`: a small test-only ruleset over every kind of kernel resource, for library-level host tests.
//!
//! Each player has coins (an amount capped at 10), stamina (a charge track of 3), a workshop (a permanent)
//! and 4 tokens in reinforcements that can be placed on the shared board. Players act in turn; the first
//! to reach `target` coins (config, default 5) wins.

use coffer_core::{
    ActionError, AmountId, AmountSpec, Cause, Description, Doc, DynRuleset, Key, Kind, Ledger,
    Outcome, Owner, PermanentId, Ruleset, Scope, SetupError, TrackId, TrackSpec, Zone, ZoneId,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The ruleset.
pub struct Tally {
    /// Its version (tests register two versions to check ambiguity).
    pub version: &'static str,
}

/// The state.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct State {
    ledger: Ledger,
    coins: Vec<AmountId>,
    stamina: Vec<TrackId>,
    workshops: Vec<PermanentId>,
    reserves: Vec<ZoneId>,
    board: ZoneId,
    turn: u16,
    target: i64,
}

/// The actions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Spend a stamina charge to gain 1 to 3 coins.
    Earn {
        /// Coins, 1 to 3.
        n: u8,
    },
    /// Exhaust the workshop to gain 1 coin.
    Work,
    /// Place a token from reinforcements on the board.
    Place,
    /// End the turn: the next player's workshop readies and they recover a stamina charge.
    Pass,
}

/// The configuration.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Coins needed to win.
    pub target: i64,
}

impl Default for Config {
    fn default() -> Config {
        Config { target: 5 }
    }
}

const COINS: Kind = Kind(0);
const STAMINA: Kind = Kind(1);
const WORKSHOP: Kind = Kind(2);
const RESERVE: Kind = Kind(3);
const BOARD: Kind = Kind(4);

fn cause(p: Owner, a: &Action) -> Cause {
    let code = match a {
        Action::Earn { .. } => 0,
        Action::Work => 1,
        Action::Place => 2,
        Action::Pass => 3,
    };
    Cause::Action { player: p, code }
}

impl Ruleset for Tally {
    type State = State;
    type Action = Action;
    type Config = Config;

    fn describe(&self) -> Description {
        let mut d = Description::new(
            "tally",
            self.version,
            "earn coins with stamina; first to the target wins",
        );
        d.max_players = 4;
        d.phases = vec!["turn".into()];
        d.vocabulary = coffer_core::Vocabulary {
            kinds: vec![
                coffer_core::Term::new("coins"),
                coffer_core::Term::new("stamina"),
                coffer_core::Term::new("workshop"),
                coffer_core::Term::new("reinforcements"),
                coffer_core::Term::new("board"),
            ],
            actions: vec!["Earn".into(), "Work".into(), "Place".into(), "Pass".into()],
            notes: vec![coffer_core::NoteTerm::new("{who} passes")],
            ..coffer_core::Vocabulary::default()
        };
        d.resources = vec![
            Doc::new("coins", "capped at 10"),
            Doc::new("stamina", "3 charges"),
        ];
        d.actions = vec![
            Doc::with(
                "earn",
                "spend a stamina charge for 1 to 3 coins",
                serde_json::json!({"type":"earn","n":2}),
            ),
            Doc::with("pass", "end the turn", serde_json::json!({"type":"pass"})),
        ];
        d.options = vec![Doc::with(
            "target",
            "coins needed to win",
            serde_json::json!(5),
        )];
        d
    }

    fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
        if !(1..=10).contains(&config.target) {
            return Err(SetupError::Config(format!(
                "target must be 1 to 10, found {}",
                config.target
            )));
        }
        let mut ledger = Ledger::new(players, seed);
        let board = ledger.add_zone(Zone::new(Key::new(Owner::GAME, BOARD, 0)))?;
        let (mut coins, mut stamina, mut workshops, mut reserves) =
            (vec![], vec![], vec![], vec![]);
        for p in 0..players {
            let o = Owner(p);
            coins.push(ledger.add_amount(AmountSpec::new(Key::new(o, COINS, 0)).cap(10))?);
            stamina.push(ledger.add_track(TrackSpec::new(Key::new(o, STAMINA, 0), 3))?);
            workshops.push(ledger.add_permanent(Key::new(o, WORKSHOP, 0), Some(Scope::Turn))?);
            let reserve = ledger.add_zone(Zone::new(Key::new(o, RESERVE, 0)))?;
            ledger.stock(o, reserve, 4, Cause::Setup)?;
            reserves.push(reserve);
        }
        Ok(State {
            ledger,
            coins,
            stamina,
            workshops,
            reserves,
            board,
            turn: 0,
            target: config.target,
        })
    }

    fn legal_actions(&self, s: &State, p: Owner, out: &mut Vec<Action>) {
        if p.0 != s.turn || self.outcome(s) != Outcome::Ongoing {
            return;
        }
        if s.ledger.active(s.stamina[p.index()]) > 0 {
            out.extend((1..=3).map(|n| Action::Earn { n }));
        }
        if !s.ledger.is_exhausted(s.workshops[p.index()]) {
            out.push(Action::Work);
        }
        if s.ledger.tokens(s.reserves[p.index()], p) > 0 {
            out.push(Action::Place);
        }
        out.push(Action::Pass);
    }

    fn apply(&self, s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
        if self.outcome(s) != Outcome::Ongoing {
            return Err(ActionError::GameOver);
        }
        if p.0 != s.turn {
            return Err(ActionError::NotYourTurn {
                player: p,
                reason: format!("it is p{}'s turn", s.turn),
            });
        }
        let i = p.index();
        match a {
            Action::Earn { n } => {
                if !(1..=3).contains(n) {
                    return Err(ActionError::Illegal(format!(
                        "earn takes 1 to 3 coins, found {n}"
                    )));
                }
                s.ledger.spend_charges(s.stamina[i], 1, cause(p, a))?;
                s.ledger.gain(s.coins[i], u64::from(*n), cause(p, a))?;
            }
            Action::Work => {
                s.ledger.activate(s.workshops[i], cause(p, a))?;
                s.ledger.gain(s.coins[i], 1, cause(p, a))?;
            }
            Action::Place => {
                s.ledger
                    .move_tokens(p, s.reserves[i], s.board, 1, cause(p, a))?;
            }
            Action::Pass => {
                s.ledger
                    .note(Key::new(p, RESERVE, 0), 0, [0; 3], cause(p, a));
                s.ledger.end_scope(Scope::Turn);
                s.turn = (s.turn + 1) % s.ledger.owners();
                let next = usize::from(s.turn);
                s.ledger.recover_charges(s.stamina[next], 1, cause(p, a))?;
            }
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
            .filter(|p| s.ledger.value(s.coins[p.index()]) >= s.target)
            .collect();
        if winners.is_empty() {
            Outcome::Ongoing
        } else {
            let scores = s.coins.iter().map(|c| s.ledger.value(*c)).collect();
            Outcome::Finished { winners, scores }
        }
    }

    fn label(&self, _: &State, key: Key) -> Option<String> {
        // The vocabulary names every kind; only the board has a label of its own.
        (key.kind == BOARD).then(|| "the board".to_owned())
    }
}

/// `tally@0.1.0`, ready for a registry.
pub fn tally() -> Arc<dyn DynRuleset> {
    coffer_core::Adapter::shared(Tally { version: "0.1.0" })
}

/// `tally` in another version.
pub fn tally_v(version: &'static str) -> Arc<dyn DynRuleset> {
    coffer_core::Adapter::shared(Tally { version })
}

/// A second ruleset id: `tally` renamed, so games of "different rulesets" can run side by side.
pub fn other() -> Arc<dyn DynRuleset> {
    struct Other(Tally);
    impl Ruleset for Other {
        type State = State;
        type Action = Action;
        type Config = Config;
        fn describe(&self) -> Description {
            let mut d = self.0.describe();
            d.id = "other".into();
            d
        }
        fn new_game(&self, players: u16, seed: u64, config: &Config) -> Result<State, SetupError> {
            self.0.new_game(players, seed, config)
        }
        fn legal_actions(&self, s: &State, p: Owner, out: &mut Vec<Action>) {
            self.0.legal_actions(s, p, out);
        }
        fn apply(&self, s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
            self.0.apply(s, p, a)
        }
        fn ledger<'s>(&self, s: &'s State) -> &'s Ledger {
            &s.ledger
        }
        fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger {
            &mut s.ledger
        }
        fn outcome(&self, s: &State) -> Outcome {
            self.0.outcome(s)
        }
    }
    coffer_core::Adapter::shared(Other(Tally { version: "0.2.0" }))
}

/// A registry with `tally@0.1.0` and `other@0.2.0`.
pub fn registry() -> coffer_host::Registry {
    let mut r = coffer_host::Registry::new();
    r.add(tally(), coffer_host::Origin::Static).unwrap();
    r.add(other(), coffer_host::Origin::Static).unwrap();
    r
}

//! L-undo in the adapter, on a toy game where a seat acts as often as it likes: the window holds
//! at most `UNDO_DEPTH` actions and the next one closes it; an action that draws closes it; an undo
//! returns the state hash from before the action and answers no events.

use coffer_core::{
    ActionError, Adapter, AmountId, AmountSpec, Cause, Description, Key, Kind, Ledger, Outcome,
    Owner, Ruleset, Setup, SetupError, UNDO, UNDO_DEPTH,
};
use serde::{Deserialize, Serialize};

struct Coins;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct State {
    ledger: Ledger,
    purse: AmountId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
enum Move {
    Take,
    Roll,
}

impl Ruleset for Coins {
    type State = State;
    type Action = Move;
    type Config = ();
    fn describe(&self) -> Description {
        Description::new("coins", "0.1.0", "take coins")
    }
    fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
        let mut ledger = Ledger::new(players, seed);
        let purse = ledger.add_amount(AmountSpec::new(Key::new(Owner(0), Kind(0), 0)))?;
        Ok(State { ledger, purse })
    }
    fn legal_actions(&self, _: &State, _: Owner, out: &mut Vec<Move>) {
        out.extend([Move::Take, Move::Roll]);
    }
    fn apply(&self, s: &mut State, p: Owner, m: &Move) -> Result<(), ActionError> {
        let n = match m {
            Move::Take => 1,
            Move::Roll => {
                1 + s
                    .ledger
                    .random_below(6, Cause::Action { player: p, code: 1 })
            }
        };
        s.ledger
            .gain(s.purse, n, Cause::Action { player: p, code: 0 })?;
        Ok(())
    }
    fn ledger<'s>(&self, s: &'s State) -> &'s Ledger {
        &s.ledger
    }
    fn ledger_mut<'s>(&self, s: &'s mut State) -> &'s mut Ledger {
        &mut s.ledger
    }
    fn outcome(&self, _: &State) -> Outcome {
        Outcome::Ongoing
    }
}

#[test]
fn l_undo_window_holds_at_most_undo_depth_actions_and_a_draw_closes_it() {
    let coins = Adapter::shared(Coins);
    let mut game = coins.new_game(&Setup::new(2, 3)).unwrap();
    let take = r#""Take""#;
    for n in 1..=UNDO_DEPTH {
        game.apply_json(Owner(0), take).unwrap();
        assert_eq!(game.table(None).undo.map(|u| u.actions), Some(n as u32));
    }
    // The next action in a row closes the window.
    game.apply_json(Owner(0), take).unwrap();
    assert_eq!(game.table(None).undo, None);
    assert!(matches!(
        game.apply_json(Owner(0), UNDO),
        Err(ActionError::CannotUndo { .. })
    ));
    // And the one after opens a new one; its undo returns the hash before it, with no events.
    let before = game.state_hash();
    game.apply_json(Owner(0), take).unwrap();
    game.apply_json(Owner(0), UNDO).unwrap();
    assert_eq!(game.state_hash(), before);
    assert!(game.events().is_empty());
    // A roll draws: nothing before it can be taken back.
    game.apply_json(Owner(0), take).unwrap();
    game.apply_json(Owner(0), r#""Roll""#).unwrap();
    assert_eq!(game.table(None).undo, None);
}

//! Test harness: a game driven through the host-facing `DynGame`, with typed peeks at the state.

use coffer_charges::actions::{Turn, turn};
use coffer_charges::state::kind;
use coffer_charges::{Charges, Phase, State};
use coffer_core::{ActionError, Adapter, DynGame, Format, Owner, Setup, TrackId};
use serde_json::{Value, json};

/// A game under test.
pub struct G {
    pub game: Box<dyn DynGame>,
}

pub fn squad(ships: &[(&str, &[&str])]) -> Value {
    Value::Array(
        ships
            .iter()
            .map(|(p, u)| json!({"pilot": p, "upgrades": u}))
            .collect(),
    )
}

impl G {
    /// A two-player game with this configuration.
    pub fn new(config: Value) -> G {
        let rs = Adapter::shared(Charges::new());
        let game = rs
            .new_game(&Setup::new(2, 7).config(config))
            .expect("game starts");
        G { game }
    }

    /// Two squads, other options default.
    pub fn squads(a: &[(&str, &[&str])], b: &[(&str, &[&str])]) -> G {
        G::new(json!({"squads": [squad(a), squad(b)]}))
    }

    pub fn try_act(&mut self, p: u16, a: Value) -> Result<(), ActionError> {
        self.game.apply_json(Owner(p), &a.to_string())
    }

    /// Applies an action that must succeed.
    pub fn ok(&mut self, p: u16, a: Value) {
        if let Err(e) = self.try_act(p, a.clone()) {
            panic!("p{p} {a} refused: {e}");
        }
    }

    /// Applies an action that must be refused, and checks the state hash is unchanged.
    pub fn refused(&mut self, p: u16, a: Value) -> ActionError {
        let before = self.game.state_hash();
        let e = self
            .try_act(p, a.clone())
            .expect_err(&format!("p{p} {a} should be refused"));
        assert_eq!(
            before,
            self.game.state_hash(),
            "refused {a} changed the state"
        );
        e
    }

    pub fn state(&self) -> State {
        serde_json::from_slice(&self.game.snapshot(Format::Json).unwrap()).unwrap()
    }

    pub fn phase(&self) -> Phase {
        self.state().phase()
    }

    pub fn track(&self, t: Option<TrackId>) -> (u32, u32) {
        let s = self.state();
        t.map_or((0, 0), |t| {
            let t = s.ledger.track(t).unwrap();
            (t.active(), t.limit())
        })
    }

    /// (active, limit) of a card's standard charges.
    pub fn card(&self, ship: usize, card: usize) -> (u32, u32) {
        self.track(self.state().ships[ship].cards[card].track)
    }

    pub fn force(&self, ship: usize) -> (u32, u32) {
        self.track(self.state().ships[ship].force)
    }

    pub fn shields(&self, ship: usize) -> (u32, u32) {
        self.track(self.state().ships[ship].shields)
    }

    pub fn energy(&self, ship: usize) -> (u32, u32) {
        self.track(self.state().ships[ship].energy)
    }

    /// Value of one of a ship's amounts, by kind.
    pub fn tokens(&self, ship: usize, k: coffer_core::Kind) -> i64 {
        let s = self.state();
        let sh = &s.ships[ship];
        let id = match k {
            kind::FOCUS => sh.focus,
            kind::EVADE => sh.evade,
            kind::DISARM => sh.disarm,
            kind::STRESS => sh.stress,
            kind::FACEDOWN => sh.facedown,
            kind::FACEUP => sh.faceup,
            _ => panic!("not an amount kind"),
        };
        s.ledger.value(id)
    }

    /// Plays the plain default (white maneuvers, execute, pass, done) until `phase` is reached.
    pub fn advance_to(&mut self, phase: Phase) {
        for _ in 0..200 {
            let s = self.state();
            if s.phase() == phase || s.winners.is_some() {
                return;
            }
            self.step_default(&s);
        }
        panic!("the {} is never reached", phase.name());
    }

    /// Finishes the current round (through the End Phase) with the plain default.
    pub fn finish_round(&mut self) {
        let round = self.state().rounds();
        for _ in 0..200 {
            let s = self.state();
            if s.rounds() > round || s.winners.is_some() {
                return;
            }
            self.step_default(&s);
        }
        panic!("round never ended");
    }

    fn step_default(&mut self, s: &State) {
        match turn(s) {
            Turn::Planning => {
                let (i, sh) = s
                    .ships
                    .iter()
                    .enumerate()
                    .find(|(i, sh)| sh.planned.is_none() && s.alive(*i))
                    .unwrap();
                self.ok(
                    sh.owner.0,
                    json!({"type":"plan","ship":i,"maneuver":"white"}),
                );
            }
            Turn::Ship(i) => {
                let sh = &s.ships[i];
                if s.phase() == Phase::Activation && !sh.stage.executed {
                    self.ok(sh.owner.0, json!({"type":"execute","ship":i}));
                } else {
                    self.ok(sh.owner.0, json!({"type":"pass","ship":i}));
                }
            }
            Turn::End => {
                let p = (0..s.done.len())
                    .find(|&p| !s.ledger.is_exhausted(s.done[p]))
                    .unwrap();
                self.ok(p as u16, json!({"type":"done"}));
            }
            t => panic!("no default step for {t:?}"),
        }
    }
}

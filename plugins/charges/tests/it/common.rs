//! Test harness: a game driven through the host-facing `DynGame`, with typed peeks at the state.

use coffer_charges::state::kind;
use coffer_charges::turn::{Turn, turn};
use coffer_charges::{Charges, Phase, State};
use coffer_core::{
    ActionError, Adapter, DynGame, Format, Names, Owner, Ruleset, Setup, TrackId, Vocabulary,
};
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

    /// Luke Skywalker with `upgrades` (p0) against a bare Darth Vader (p1).
    pub fn luke_vs_vader(upgrades: &[&str]) -> G {
        G::squads(&[("luke-skywalker", upgrades)], &[("darth-vader", &[])])
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

    /// `p`'s ship `ship` attacks `target` with `weapon`, and the attack dice come up `[hits, crits, focus]`.
    #[track_caller]
    pub fn attack(
        &mut self,
        p: u16,
        ship: u8,
        target: u8,
        weapon: u8,
        [hits, crits, focus]: [u8; 3],
    ) {
        self.ok(
            p,
            json!({"type":"attack","ship":ship,"target":target,"weapon":weapon}),
        );
        self.ok(
            p,
            json!({"type":"attack_dice","hits":hits,"crits":crits,"focus":focus}),
        );
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

    /// Player `p`'s legal actions as JSON.
    pub fn legal(&mut self, p: u16) -> Vec<String> {
        let n = self.game.legal_actions(Owner(p));
        (0..n)
            .filter_map(|i| self.game.legal_action_json(i))
            .collect()
    }

    /// Whether the last accepted action's events, in words as a spectator reads them, contain `text`.
    pub fn said(&mut self, text: &str) -> bool {
        let vocabulary = vocabulary();
        let names = names_for(&vocabulary, &*self.game, None);
        let lines: Vec<String> = self
            .game
            .events_for(None)
            .iter()
            .filter_map(|e| names.event(e, None))
            .collect();
        lines.iter().any(|l| l.contains(text))
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

    /// Takes one plain default step from the current state.
    pub fn step_default_now(&mut self) {
        let s = self.state();
        self.step_default(&s);
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

/// Everything `seat` reads of a game's table, one line per item: the clock, whose turn, who may act and
/// why, who passed, pending choices, every section row and the outcome.
pub fn table_text(game: &dyn DynGame, seat: Option<Owner>) -> String {
    let t = game.table(seat);
    let mut out = format!("{} {}", t.round_name, t.round);
    if let Some(phase) = &t.phase {
        out.push_str(&format!(", {}", phase.name));
    }
    if let Some(step) = &t.step {
        out.push_str(&format!(", {}", step.name));
    }
    out.push('\n');
    if let Some(turn) = t.turn {
        out.push_str(&format!("turn: {turn}\n"));
    }
    for m in &t.acting {
        out.push_str(&format!("{} may act {}\n", m.seat, m.why));
    }
    for p in &t.passed {
        out.push_str(&format!("{p} passed\n"));
    }
    for p in &t.pending {
        out.push_str(&format!("{}\n", p.text));
    }
    for s in &t.sections {
        out.push_str(&format!("[{}]\n", s.title));
        for r in &s.rows {
            out.push_str(&format!("{} | {}: {}\n", r.owner, r.label, r.value));
        }
    }
    out
}

/// Every resource `seat` sees, named as a host names it.
pub fn resources_text(game: &dyn DynGame, names: &Names, seat: Option<Owner>) -> String {
    game.resources(seat)
        .iter()
        .map(|r| format!("{}\n", names.key(r.key())))
        .collect()
}

/// The names of `game`'s resources as `seat` sees them, with the ruleset's vocabulary.
pub fn names_for<'v>(
    vocabulary: &'v Vocabulary,
    game: &dyn DynGame,
    seat: Option<Owner>,
) -> Names<'v> {
    Names::with_resources(vocabulary, &game.resources(seat))
}

/// The ruleset's vocabulary.
pub fn vocabulary() -> Vocabulary {
    Charges::new().describe().vocabulary
}

/// A refusal in words, as a host writes it.
pub fn refusal_text(names: &Names, e: &ActionError) -> String {
    match e {
        ActionError::Refused(r) => names.refusal(r),
        other => other.to_string(),
    }
}

/// Every audience of a game: each seat, then a spectator.
pub fn audiences(players: u16) -> Vec<Option<Owner>> {
    (0..players).map(|p| Some(Owner(p))).chain([None]).collect()
}

//! The vocabulary: refusals, events and causes in a ruleset's words; tables and per-seat events.

use coffer_core::{
    ActionError, Adapter, AmountSpec, Cause, Change, Description, Event, Key, Kind, Ledger, Names,
    NoteTerm, Outcome, Owner, Refusal, Ruleset, Scope, SetupError, Table, Term, Vocabulary, Zone,
};

fn vocabulary() -> Vocabulary {
    Vocabulary {
        round: "Act".into(),
        kinds: vec![
            Term::new("Treasury"),
            Term::new("hand").choice("discard"),
            Term::new("tactic pool"),
        ],
        phases: vec!["Planning".into(), "Activation".into()],
        steps: vec![],
        actions: vec!["Deploy".into(), "Plan".into()],
        effects: vec!["Income".into()],
        notes: vec![
            NoteTerm::new("{who} picks {name}"),
            NoteTerm::secret(
                "{who} plans {value} for {name}",
                "{who} plans a maneuver for {name}",
            )
            .values(["blue", "white", "red"]),
            NoteTerm::secret("{who} draws {0} cards", ""),
            NoteTerm::new("{player} picks {name}"),
        ],
        ..Default::default()
    }
}

fn key(owner: u16, kind: u16, subject: u32) -> Key {
    Key::new(Owner(owner), Kind(kind), subject)
}

#[test]
fn k1_2_a_refused_spend_reads_in_the_game_s_words() {
    let v = vocabulary();
    let names = Names::new(&v);
    let r = Refusal::Insufficient {
        key: key(0, 0, 0),
        need: 5,
        have: 4,
    };
    assert_eq!(names.refusal(&r), "p0's Treasury holds 4; the cost is 5");
    let pending = Refusal::AwaitingChoice {
        owner: Owner(1),
        key: key(1, 1, 0),
        excess: 2,
    };
    assert_eq!(
        names.refusal(&pending),
        "p1 must first discard 2 of p1's hand"
    );
}

#[test]
fn a_refused_token_move_names_the_owner_once_and_needs_no_verb_to_agree() {
    let names = Names::plain();
    let short = |owner: u16, zone_owner: u16, have: u32| {
        names.refusal(&Refusal::NotEnoughTokens {
            owner: Owner(owner),
            zone: key(zone_owner, 1, 0),
            need: 3,
            have,
        })
    };
    assert_eq!(short(0, 0, 0), "no tokens in p0's resource 1; 3 needed");
    assert_eq!(short(0, 0, 1), "only 1 token in p0's resource 1; 3 needed");
    assert_eq!(
        short(0, 1, 2),
        "only 2 of p0's tokens in p1's resource 1; 3 needed"
    );
    assert_eq!(
        short(1, 0, 0),
        "none of p1's tokens in p0's resource 1; 3 needed"
    );
}

#[test]
fn an_exhausted_permanent_is_refused_in_the_words_of_its_state() {
    let v = Vocabulary {
        kinds: vec![
            Term::new("treasury"),
            Term::new("harvest").states("has harvested this round", "may harvest"),
        ],
        ..Default::default()
    };
    let names = Names::new(&v);
    let r = Refusal::Exhausted { key: key(0, 1, 0) };
    assert_eq!(names.refusal(&r), "p0's harvest has harvested this round");
}

#[test]
fn undeclared_names_are_plain_words_without_debug_renderings() {
    let names = Names::plain();
    let r = Refusal::Exhausted { key: key(2, 7, 3) };
    assert_eq!(names.refusal(&r), "p2's resource 7 #3 is exhausted");
    assert_eq!(r.to_string(), names.refusal(&r));
    let cause = Cause::Upkeep(Scope::Phase);
    assert_eq!(cause.to_string(), "the end of the phase");
    assert_eq!(
        Cause::Action {
            player: Owner(0),
            code: 4
        }
        .to_string(),
        "p0's action 4"
    );
}

#[test]
fn labels_name_resources_and_the_owner_is_added_once() {
    let v = vocabulary();
    let mut names = Names::new(&v);
    names.label_key(key(0, 1, 3), "Jedi Knight");
    assert_eq!(names.key(key(0, 1, 3)), "p0's Jedi Knight");
    assert_eq!(names.key(key(0, 0, 0)), "p0's Treasury");
    assert_eq!(names.key(Key::new(Owner::GAME, Kind(2), 0)), "tactic pool");
}

#[test]
fn k9_events_say_before_after_delta_and_loss_with_their_cause() {
    let v = vocabulary();
    let mut l = Ledger::new(2, 0);
    let t = l
        .add_amount(AmountSpec::new(key(0, 0, 0)).start(4).cap(7))
        .unwrap();
    l.gain(t, 5, Cause::Effect(0)).unwrap();
    let names = Names::new(&v);
    let e = l.events()[0];
    assert_eq!(
        names.event(&e, None).unwrap(),
        "p0's Treasury: +3, 4 -> 7 (2 lost to the cap), by Income"
    );
}

#[test]
fn k4_2_a_gain_cut_short_by_empty_reinforcements_is_reported() {
    let v = vocabulary();
    let mut l = Ledger::new(1, 0);
    let reserve = l.add_zone(Zone::new(key(0, 2, 9))).unwrap();
    let pool = l.add_zone(Zone::new(key(0, 2, 0))).unwrap();
    l.stock(Owner(0), reserve, 2, Cause::Setup).unwrap();
    drop(l.take_events());
    let got = l.gain_tokens(Owner(0), pool, 3, Cause::Effect(0)).unwrap();
    assert_eq!((got.gained, got.lost), (2, 1));
    let short = l
        .events()
        .iter()
        .find(|e| matches!(e.change, Change::Short { .. }))
        .copied()
        .expect("a Short event");
    assert_eq!(
        short.change,
        Change::Short {
            owner: Owner(0),
            zone: pool,
            lost: 1
        }
    );
    let text = Names::new(&v).event(&short, None).unwrap();
    assert!(text.contains("could not gain 1 token"), "{text}");
    // Observable only: undoing the action undoes the gain and nothing more.
    l.check_invariants().unwrap();
}

#[test]
fn secret_notes_read_in_full_only_by_their_owner() {
    let v = vocabulary();
    let names = Names::new(&v);
    let plan = Event {
        key: key(0, 2, 1),
        change: Change::Note {
            code: 1,
            args: [2, 0, 0],
        },
        cause: Cause::Action {
            player: Owner(0),
            code: 1,
        },
    };
    assert_eq!(
        names.change(&plan, Some(Owner(0))).unwrap(),
        "p0 plans red for tactic pool #1"
    );
    assert_eq!(
        names.change(&plan, Some(Owner(1))).unwrap(),
        "p0 plans a maneuver for tactic pool #1"
    );
    assert_eq!(
        names.change(&plan, None).unwrap(),
        "p0 plans a maneuver for tactic pool #1"
    );
    let draw = Event {
        change: Change::Note {
            code: 2,
            args: [3, 0, 0],
        },
        ..plan
    };
    assert_eq!(
        names.change(&draw, Some(Owner(0))).unwrap(),
        "p0 draws 3 cards"
    );
    assert_eq!(names.change(&draw, Some(Owner(1))), None);
}

/// A two-player game: each player has a public Treasury and a hidden hand size; `Plan(n)` records a
/// secret note, `Pay(n)` spends from the Treasury.
pub struct Secrets;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct State {
    ledger: Ledger,
    treasury: Vec<coffer_core::AmountId>,
    hand: Vec<coffer_core::AmountId>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Action {
    Plan(i32),
    Pay(u64),
    Draw(u64),
}

impl Ruleset for Secrets {
    type State = State;
    type Action = Action;
    type Config = ();
    fn describe(&self) -> Description {
        let mut d = Description::new("secrets", "0.1.0", "hidden hands");
        d.vocabulary = vocabulary();
        d
    }
    fn new_game(&self, players: u16, seed: u64, _: &()) -> Result<State, SetupError> {
        let mut ledger = Ledger::new(players, seed);
        let mut treasury = Vec::new();
        let mut hand = Vec::new();
        for p in 0..players {
            treasury.push(ledger.add_amount(AmountSpec::new(key(p, 0, 0)).start(5))?);
            hand.push(ledger.add_amount(AmountSpec::new(key(p, 1, 0)))?);
        }
        Ok(State {
            ledger,
            treasury,
            hand,
        })
    }
    fn legal_actions(&self, _: &State, _: Owner, out: &mut Vec<Action>) {
        out.push(Action::Pay(1));
    }
    fn apply(&self, s: &mut State, p: Owner, a: &Action) -> Result<(), ActionError> {
        let cause = Cause::Action { player: p, code: 0 };
        match *a {
            Action::Plan(n) => s.ledger.note(key(p.0, 2, 1), 1, [n, 0, 0], cause),
            Action::Pay(n) => s.ledger.spend(s.treasury[p.index()], n, cause)?,
            Action::Draw(n) => {
                s.ledger.gain(s.hand[p.index()], n, cause)?;
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
    fn outcome(&self, _: &State) -> Outcome {
        Outcome::Ongoing
    }
    fn table(&self, _: &State, seat: Option<Owner>, table: &mut Table) {
        table.clock(1, Some(1), None).turn(Owner(0));
        if let Some(seat) = seat {
            table.section("Seat").row(seat, "you", "here");
        }
    }
    fn visible(&self, _: &State, key: Key, seat: Option<Owner>) -> bool {
        key.kind != Kind(1) || seat == Some(key.owner)
    }
    fn label(&self, _: &State, key: Key) -> Option<String> {
        (key.kind == Kind(2)).then(|| format!("ship {}", key.subject))
    }
}

fn two_games(draw: u64) -> Box<dyn coffer_core::DynGame> {
    let rules = Adapter::shared(Secrets);
    let mut game = rules.new_game(&coffer_core::Setup::new(2, 1)).unwrap();
    game.apply_json(Owner(0), &format!(r#"{{"Draw":{draw}}}"#))
        .unwrap();
    game
}

#[test]
fn a_seat_sees_only_its_own_hidden_resources_and_events() {
    let (mut a, mut b) = (two_games(1), two_games(3));
    for seat in [None, Some(Owner(1))] {
        assert_eq!(a.resources(seat), b.resources(seat));
        assert_eq!(a.events_for(seat), b.events_for(seat));
        assert_eq!(a.table(seat), b.table(seat));
        assert!(a.events_for(seat).is_empty());
    }
    assert_ne!(a.resources(Some(Owner(0))), b.resources(Some(Owner(0))));
    assert_ne!(a.events_for(Some(Owner(0))), b.events_for(Some(Owner(0))));
}

#[test]
fn secret_note_numbers_never_reach_another_seat() {
    let (mut a, mut b) = (two_games(1), two_games(1));
    a.apply_json(Owner(0), r#"{"Plan":2}"#).unwrap();
    b.apply_json(Owner(0), r#"{"Plan":0}"#).unwrap();
    for seat in [None, Some(Owner(1))] {
        let (ea, eb) = (a.events_for(seat), b.events_for(seat));
        assert_eq!(ea, eb);
        assert_eq!(
            ea[0].change,
            Change::Note {
                code: 1,
                args: [0; 3]
            }
        );
    }
    assert_ne!(a.events_for(Some(Owner(0))), b.events_for(Some(Owner(0))));
}

#[test]
fn the_adapter_names_the_clock_and_lists_movers_and_the_outcome() {
    let game = two_games(1);
    let table = game.table(Some(Owner(1)));
    assert_eq!(table.round, 1);
    assert_eq!(table.round_name, "Act");
    assert_eq!(table.phase.as_ref().unwrap().name, "Activation");
    assert_eq!(table.turn, Some(Owner(0)));
    assert_eq!(table.acting.len(), 2, "to_act's default lists every seat");
    assert_eq!(table.outcome, Outcome::Ongoing);
    assert_eq!(table.sections[0].rows[0].owner, Owner(1));
    assert!(game.table(None).sections.is_empty());
}

#[test]
fn a_refusal_in_a_game_names_the_resource_by_its_label() {
    let rules = Adapter::shared(Secrets);
    let mut game = rules.new_game(&coffer_core::Setup::new(2, 1)).unwrap();
    let err = game.apply_json(Owner(1), r#"{"Pay":9}"#).unwrap_err();
    let ActionError::Refused(r) = err else {
        panic!("a kernel refusal")
    };
    let names = Names::with_resources(
        &rules.description().vocabulary,
        &game.resources(Some(Owner(1))),
    );
    assert_eq!(names.refusal(&r), "p1's Treasury holds 5; the cost is 9");
}

#[test]
fn a_note_about_the_game_s_things_names_the_player_who_acted() {
    let v = vocabulary();
    let mut names = Names::new(&v);
    names.label_key(Key::new(Owner::GAME, Kind(2), 4), "Leadership");
    let pick = Event {
        key: Key::new(Owner::GAME, Kind(2), 4),
        change: Change::Note {
            code: 3,
            args: [0; 3],
        },
        cause: Cause::Action {
            player: Owner(2),
            code: 0,
        },
    };
    assert_eq!(names.change(&pick, None).unwrap(), "p2 picks Leadership");
}

#[test]
fn k6_2_a_partial_discard_reads_as_what_is_still_owed_not_as_met() {
    let v = vocabulary();
    let names = Names::new(&v);
    let mut l = Ledger::new(3, 0);
    let bank = l.add_zone(Zone::new(key(u16::MAX, 2, 9))).unwrap();
    let hand = l.add_zone(Zone::new(key(2, 1, 0))).unwrap();
    l.stock(Owner::GAME, bank, 19, Cause::Setup).unwrap();
    l.gain_tokens(Owner::GAME, hand, 10, Cause::Setup).unwrap();
    let measure = coffer_core::Measure::Tokens {
        owner: Owner::GAME,
        zone: hand,
    };
    let limit = coffer_core::Bound::AtMost(5);
    assert_eq!(l.demand(key(2, 1, 0), measure, limit, Cause::Setup), Ok(5));
    l.take_events();
    let texts = |events: &[Event]| -> Vec<String> {
        (0..events.len())
            .filter_map(|i| names.change_at(events, i, None))
            .collect()
    };
    // Two of five discarded: one line, what is still owed.
    l.move_tokens(Owner::GAME, hand, bank, 2, Cause::Setup)
        .unwrap();
    let events = l.take_events();
    let lines = texts(&events);
    assert!(
        lines.iter().all(|t| !t.contains("back within its limit")),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&"p2 must still discard 3 of p2's hand".to_owned()),
        "{lines:#?}"
    );
    // One event alone still reads as the kernel recorded it.
    let satisfied = events
        .iter()
        .find(|e| matches!(e.change, Change::Demand { raised: false, .. }))
        .unwrap();
    assert_eq!(
        names.change(satisfied, None).unwrap(),
        "p2's hand is back within its limit"
    );
    // The rest: back within the limit, once.
    l.move_tokens(Owner::GAME, hand, bank, 3, Cause::Setup)
        .unwrap();
    let lines = texts(&l.take_events());
    assert!(
        lines.contains(&"p2's hand is back within its limit".to_owned()),
        "{lines:#?}"
    );
    assert!(lines.iter().all(|t| !t.contains("must")), "{lines:#?}");
}

#[test]
fn k4_6_the_game_s_tokens_moving_into_a_player_s_zone_name_whose_zone() {
    let v = vocabulary();
    let mut names = Names::new(&v);
    let mut l = Ledger::new(3, 0);
    let bank = l.add_zone(Zone::new(key(u16::MAX, 2, 9))).unwrap();
    let hand = l.add_zone(Zone::new(key(2, 1, 0))).unwrap();
    let own = l.add_zone(Zone::new(key(1, 1, 0))).unwrap();
    for zone in [bank, hand, own] {
        names.name_zone(zone.index() as u32, l.zones()[zone.index()].key);
    }
    l.stock(Owner::GAME, bank, 19, Cause::Setup).unwrap();
    l.stock(Owner(1), own, 1, Cause::Setup).unwrap();
    l.take_events();
    l.move_tokens(Owner::GAME, bank, hand, 2, Cause::Setup)
        .unwrap();
    let events = l.take_events();
    let text = names.change(&events[0], None).unwrap();
    assert_eq!(
        text,
        "the game moved 2 tokens from tactic pool #9 to p2's hand"
    );
    // A player's own zone is not named twice.
    l.stock(Owner(2), hand, 1, Cause::Setup).unwrap();
    let events = l.take_events();
    let text = names.change(&events[0], None).unwrap();
    assert_eq!(text, "p2 starts with 1 token in hand");
}

#[test]
fn k10_the_clock_s_levels_are_named_in_the_ruleset_s_words_where_it_has_them() {
    let words = Vocabulary {
        round: "Act".to_owned(),
        phase_name: "step".to_owned(),
        step_name: "window".to_owned(),
        ..Default::default()
    };
    let names = Names::new(&words);
    let upkeep = |scope| names.cause(&Cause::Upkeep(scope));
    assert_eq!(upkeep(Scope::Act), "the end of the act");
    assert_eq!(upkeep(Scope::Turn), "the end of the turn");
    assert_eq!(upkeep(Scope::Phase), "the end of the step");
    assert_eq!(upkeep(Scope::Step), "the end of the window");
    assert_eq!(words.phase(3), "step 3");
    assert_eq!(words.step(0), "window 0");
    // Without words: the kernel's.
    let plain = Vocabulary::default();
    assert_eq!(plain.scope(Scope::Phase), "phase");
    assert_eq!(plain.phase(1), "phase 1");
}

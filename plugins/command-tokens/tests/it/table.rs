//! The table: the clock (round, phase, step), whose turn it is, who may act and why, who passed, and the
//! sections (strategy cards, the speaker, command sheets, tokens on the board, final scores) in rules
//! situations. Nothing is hidden, so every seat and spectators see the same table.

use crate::support::*;
use coffer_command_tokens::{Action, CommandTokens, Config, State};
use coffer_core::{Adapter, DynGame, Format, Outcome, Owner, Row, Table};

/// The game `s` as a host holds it.
fn hosted(s: &State) -> Box<dyn DynGame> {
    Adapter::shared(CommandTokens::new())
        .restore(Format::Json, &serde_json::to_vec(s).unwrap())
        .unwrap()
}

/// The spectator's table of `s`.
fn table(s: &State) -> Table {
    hosted(s).table(None)
}

/// The rows of the section titled `title`.
#[track_caller]
fn rows<'t>(table: &'t Table, title: &str) -> &'t [Row] {
    &table
        .sections
        .iter()
        .find(|s| s.title == title)
        .unwrap_or_else(|| panic!("no section '{title}'"))
        .rows
}

/// The row labelled `label` in section `title`: (owner, value).
#[track_caller]
fn row(table: &Table, title: &str, label: &str) -> (Owner, String) {
    let r = rows(table, title)
        .iter()
        .find(|r| r.label == label)
        .unwrap_or_else(|| panic!("no row '{label}' in '{title}'"));
    (r.owner, r.value.to_string())
}

/// (seat, why) of those who may act.
fn acting(table: &Table) -> Vec<(Owner, &str)> {
    table
        .acting
        .iter()
        .map(|m| (m.seat, m.why.as_str()))
        .collect()
}

fn names(table: &Table) -> (u32, &str, &str) {
    (
        table.round,
        table.phase.as_ref().map_or("", |p| p.name.as_str()),
        table.step.as_ref().map_or("", |s| s.name.as_str()),
    )
}

#[test]
fn the_strategy_phase_shows_the_picker_the_cards_the_speaker_and_the_command_sheets() {
    let mut s = default_game(6);
    let t = table(&s);
    assert_eq!(names(&t), (1, "strategy phase", "picking strategy cards"));
    assert_eq!(t.round_name, "Round");
    assert_eq!(t.turn, Some(Owner(0)));
    assert_eq!(acting(&t), [(Owner(0), "to pick a strategy card")]);
    assert!(t.passed.is_empty() && t.pending.is_empty());
    assert_eq!(
        row(&t, "Strategy cards", "Leadership"),
        (Owner::GAME, "available".into())
    );
    assert_eq!(
        row(&t, "Speaker", "speaker"),
        (Owner(0), "The Barony of Letnev".into())
    );
    // T1, and Letnev's fleet limit (3 fleet tokens + 2).
    assert_eq!(
        row(&t, "Command sheets", "The Barony of Letnev"),
        (
            Owner(0),
            "3 tactic, 3 fleet, 2 strategy; 8 in reinforcements; fleet limit 5".into()
        )
    );
    assert_eq!(
        row(&t, "Command sheets", "The Federation of Sol"),
        (
            Owner(1),
            "3 tactic, 3 fleet, 2 strategy; 8 in reinforcements".into()
        )
    );
    assert!(rows(&t, "Command tokens on the board").is_empty());
    ok(&mut s, 0, Action::Pick { card: LEADERSHIP });
    let t = table(&s);
    assert_eq!(t.turn, Some(Owner(1)));
    assert_eq!(acting(&t), [(Owner(1), "to pick a strategy card")]);
    assert_eq!(
        row(&t, "Strategy cards", "Leadership"),
        (Owner(0), "ready".into())
    );
}

/// Five players holding cards without token choices; p0 (Politics) acts first, then p4 (Construction).
fn quiet_five() -> State {
    let mut s = default_game(5);
    pick(
        &mut s,
        &[POLITICS, TRADE, TECHNOLOGY, IMPERIAL, CONSTRUCTION],
    );
    s
}

#[test]
fn t5_secondaries_show_the_card_being_resolved_and_who_may_resolve_it() {
    let mut s = quiet_five();
    let t = table(&s);
    assert_eq!(names(&t), (1, "action phase", "choosing an action"));
    assert_eq!(
        acting(&t),
        [(Owner(0), "to take a tactical or a strategic action")]
    );
    assert_eq!(
        row(&t, "Strategy cards", "Warfare"),
        (Owner::GAME, "not picked".into())
    );
    ok(&mut s, 0, Action::Strategic { card: POLITICS });
    let t = table(&s);
    assert_eq!(names(&t).2, "secondary abilities");
    // The turn stays p0's while the others, clockwise, resolve or decline the secondary.
    assert_eq!(t.turn, Some(Owner(0)));
    assert_eq!(
        acting(&t),
        [(
            Owner(1),
            "to resolve or decline the secondary ability of Politics"
        )]
    );
    assert_eq!(
        row(&t, "Strategy cards", "Politics"),
        (Owner(0), "being resolved".into())
    );
    decline_secondaries_until(&mut s, None);
    let t = table(&s);
    assert_eq!(t.turn, Some(Owner(4)));
    assert_eq!(
        row(&t, "Strategy cards", "Politics"),
        (Owner(0), "used".into())
    );
}

#[test]
fn passed_players_are_listed_and_a_player_with_every_card_used_may_only_act_tactically_or_pass() {
    let mut s = quiet_five();
    for _ in 0..5 {
        let p = actor(&s);
        let card = legal(&s, p)
            .into_iter()
            .find(|a| matches!(a, Action::Strategic { .. }))
            .unwrap();
        ok(&mut s, p, card);
        decline_secondaries_until(&mut s, None);
    }
    let t = table(&s);
    assert_eq!(t.turn, Some(Owner(0)));
    assert_eq!(
        acting(&t),
        [(Owner(0), "to take a tactical action or pass")]
    );
    ok(&mut s, 0, Action::Pass);
    let t = table(&s);
    assert_eq!(t.passed, [Owner(0)]);
    assert_eq!(t.turn, Some(Owner(4)));
}

#[test]
fn t4_the_activated_system_is_on_the_board_while_ships_are_produced() {
    let mut s = quiet_five();
    // The default five-player galaxy: 18, five home systems, then 19 (index 6).
    ok(&mut s, 0, Action::Tactical { system: 6 });
    assert_eq!(names(&table(&s)).2, "movement");
    ok(&mut s, 0, Action::EndMovement);
    let t = table(&s);
    assert_eq!(names(&t).2, "production");
    assert_eq!(
        acting(&t),
        [(
            Owner(0),
            "to produce ships in system 19 or end the tactical action"
        )]
    );
    assert_eq!(
        rows(&t, "Command tokens on the board")
            .iter()
            .map(|r| (r.owner, &*r.label, &*r.value))
            .collect::<Vec<_>>(),
        [(Owner(0), "system 19", "activated: 0 ships of 2 produced")]
    );
    assert_eq!(
        row(&t, "Command sheets", "The Barony of Letnev").1,
        "2 tactic, 3 fleet, 2 strategy; 8 in reinforcements; fleet limit 5"
    );
    ok(&mut s, 0, Action::Produce { class: 2 });
    assert_eq!(
        row(&table(&s), "Command tokens on the board", "system 19").1,
        "activated: 1 ship of 2 produced"
    );
    ok(&mut s, 0, Action::Done);
    assert_eq!(
        row(&table(&s), "Command tokens on the board", "system 19"),
        (Owner(0), "command token".into())
    );
}

#[test]
fn t7_a_fleet_limit_choice_is_who_acts_and_is_pending() {
    let mut s = default_game(3);
    pick(&mut s, &HACAN_FIRST);
    // p2 (Hacan: 2 carriers and a cruiser at home, 3 fleet tokens) produces a destroyer at home.
    ok(&mut s, 2, Action::Tactical { system: 3 });
    ok(&mut s, 2, Action::Produce { class: 1 });
    let t = table(&s);
    assert_eq!(names(&t).2, "production");
    assert_eq!(
        acting(&t),
        [(
            Owner(2),
            "to remove 1 ship over the fleet limit from system home-hacan"
        )]
    );
    assert_eq!(t.pending.len(), 1);
    assert_eq!(
        t.pending[0].text,
        "p2 must remove 1 of p2's fleet in system home-hacan"
    );
}

#[test]
fn t8_the_status_phase_shows_the_player_gaining_then_redistributing() {
    let mut s = quiet_five();
    ok(&mut s, 0, Action::Tactical { system: 6 });
    ok(&mut s, 0, Action::Done);
    finish_action_phase(&mut s);
    let t = table(&s);
    assert_eq!(names(&t), (1, "status phase", "gaining command tokens"));
    assert_eq!(t.turn, Some(Owner(0)));
    assert_eq!(
        acting(&t),
        [(Owner(0), "to choose the pools of 2 gained command tokens")]
    );
    assert!(t.passed.is_empty(), "passing belongs to the action phase");
    assert!(
        rows(&t, "Command tokens on the board").is_empty(),
        "T8: every token returned"
    );
    ok(
        &mut s,
        0,
        Action::Gain {
            pool: coffer_command_tokens::Pool::Tactic,
        },
    );
    assert_eq!(
        acting(&table(&s)),
        [(Owner(0), "to choose the pool of a gained command token")]
    );
    ok(
        &mut s,
        0,
        Action::Gain {
            pool: coffer_command_tokens::Pool::Tactic,
        },
    );
    let t = table(&s);
    assert_eq!(names(&t).2, "redistributing command tokens");
    assert_eq!(
        acting(&t),
        [(
            Owner(0),
            "to redistribute the command sheet's tokens among the three pools"
        )]
    );
}

#[test]
fn the_finished_game_shows_the_last_round_final_scores_and_nobody_acting() {
    let mut s = game(
        4,
        Config {
            rounds: 1,
            ..Config::default()
        },
    );
    random_playout(&mut s, 5, |_, _| {});
    let game = hosted(&s);
    let t = game.table(None);
    assert_eq!((t.round, &t.phase, &t.step), (1, &None, &None));
    assert!(t.acting.is_empty() && t.turn.is_none());
    let Outcome::Finished { winners, scores } = &t.outcome else {
        panic!("the game is over");
    };
    let final_scores = rows(&t, "Final scores");
    assert_eq!(final_scores.len(), 4);
    for (p, r) in final_scores.iter().enumerate() {
        assert_eq!(r.owner, Owner(p as u16));
        let expected = format!("{} tokens on the command sheet", scores[p]);
        let winner = winners.contains(&r.owner);
        assert_eq!(
            r.value,
            if winner {
                format!("{expected}: winner")
            } else {
                expected
            }
        );
    }
}

#[test]
fn every_seat_and_spectators_see_the_same_table_resources_and_events() {
    let mut s = quiet_five();
    ok(&mut s, 0, Action::Tactical { system: 6 });
    let mut game = hosted(&s);
    game.apply_json(Owner(0), r#"{"type":"produce","class":2}"#)
        .unwrap();
    let spectator = game.table(None);
    let resources = serde_json::to_vec(&game.resources(None)).unwrap();
    let events = serde_json::to_vec(&game.events_for(None)).unwrap();
    for p in 0..5 {
        let seat = Some(Owner(p));
        let mut t = game.table(seat);
        assert_eq!(t.seat, seat);
        t.seat = None;
        assert_eq!(t, spectator, "p{p}");
        assert_eq!(
            serde_json::to_vec(&game.resources(seat)).unwrap(),
            resources
        );
        assert_eq!(serde_json::to_vec(&game.events_for(seat)).unwrap(), events);
    }
}

#[test]
fn t15_the_table_shows_the_space_combat_and_no_card_being_resolved() {
    let mut s = default_game(3);
    pick(&mut s, &[LEADERSHIP, 1, 2, 3, 4, 5]);
    // Default three-player galaxy: 18, the homes of Letnev, Sol and Hacan (1-3), then 19-21 (4-6); 19
    // touches Letnev's and Sol's homes. Letnev's destroyer enters it, then a Sol carrier with 2 fighters.
    ok(&mut s, 0, Action::Tactical { system: 4 });
    assert_eq!(
        row(&table(&s), "Command tokens on the board", "system 19"),
        (Owner(0), "activated: ships moving in".into())
    );
    ok(
        &mut s,
        0,
        Action::Move {
            from: 1,
            class: 1,
            fighters: 0,
        },
    );
    ok(&mut s, 0, Action::Done);
    ok(&mut s, 1, Action::Tactical { system: 4 });
    ok(
        &mut s,
        1,
        Action::Move {
            from: 2,
            class: 3,
            fighters: 2,
        },
    );
    ok(&mut s, 1, Action::EndMovement);
    let t = table(&s);
    assert_eq!(
        row(&t, "Space combat", "attacker"),
        (Owner(1), "system 19".into())
    );
    assert_eq!(
        row(&t, "Space combat", "defender"),
        (Owner(0), "system 19".into())
    );
    assert!(
        rows(&t, "Strategy cards")
            .iter()
            .all(|r| r.value != "being resolved")
    );
    assert_eq!(names(&t).2, "announcing retreats");
}

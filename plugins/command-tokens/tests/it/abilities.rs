//! T21: faction abilities and technologies that spend, return or waive command tokens: Masters of Trade,
//! Neuroglaive, and the component actions Orbital Drop and Production Biomes.

use crate::support::*;
use coffer_command_tokens::{Action, CommandTokens, Config, Pool, State, Step};
use coffer_core::Ruleset;

/// Sol (p0), Hacan (p1) and Jol-Nar (p2) after the picks `cards` (p0, p1, p2, p0, p1, p2).
fn hacan_game(cards: &[u8]) -> State {
    let mut s = game(
        3,
        Config {
            factions: strings(&["sol", "hacan", "jolnar"]),
            ..Config::default()
        },
    );
    pick(&mut s, cards);
    assert_eq!(actor(&s), 0);
    s
}

#[test]
fn t21_masters_of_trade_resolves_trades_secondary_without_a_command_token() {
    // p0 Sol (Leadership and Trade: first to act), p1 Hacan, p2 Jol-Nar.
    let mut s = hacan_game(&[0, 1, 2, TRADE, 3, 5]);
    ok(&mut s, 0, Action::Strategic { card: TRADE });
    ok(
        &mut s,
        0,
        Action::FreeSecondaries {
            players: coffer_command_tokens::Players(0),
        },
    );
    // Hacan resolves it with an empty strategy pool, and spends nothing.
    let strategy = sheet(&s, 1)[2] as i32;
    shift_reserve(&mut s, 1, Pool::Strategy, -strategy);
    assert_eq!((s.flow.step, actor(&s)), (Step::Secondary, 1));
    let before = sheet(&s, 1);
    assert!(legal(&s, 1).contains(&Action::Secondary));
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(sheet(&s, 1), before);
    // Jol-Nar pays as usual (T5).
    let before = sheet(&s, 2);
    ok(&mut s, 2, Action::Secondary);
    assert_eq!(
        sheet(&s, 2),
        [before[0], before[1], before[2] - 1, before[3] + 1]
    );
}

#[test]
fn t21_masters_of_trade_is_for_trade_only() {
    // p0 holds Leadership and Diplomacy; Diplomacy's secondary costs Hacan a token as anyone.
    let mut s = hacan_game(&[0, 2, 3, 1, 4, 5]);
    ok(&mut s, 0, Action::Strategic { card: 1 });
    ok(&mut s, 0, Action::Diplomacy { system: 1 });
    let before = sheet(&s, 1);
    ok(&mut s, 1, Action::Secondary);
    assert_eq!(sheet(&s, 1)[2], before[2] - 1);
}

#[test]
fn t21_neuroglaive_returns_a_fleet_token_of_a_player_who_activates_a_system_with_the_naalu_ships() {
    let mut config = battlefield_config(
        ["sol", "naalu", "jolnar"],
        &[],
        &[(C, 1, CRUISER, 1), (A, 0, CRUISER, 3)],
    );
    config.technologies = vec![vec![], vec!["neuroglaive".into()], vec![]];
    let mut s = start(config);
    let before = sheet(&s, 0);
    // A system without Naalu ships costs nothing.
    let mut t = s.clone();
    ok(&mut t, 0, Action::Tactical { system: B });
    assert_eq!(sheet(&t, 0)[1], before[1]);
    ok(&mut s, 0, Action::Tactical { system: C });
    assert_eq!(
        sheet(&s, 0),
        [before[0] - 1, before[1] - 1, before[2], before[3] + 1]
    );
    // Three cruisers in a, two fleet tokens left: one must go before anything else (T7).
    assert_eq!(actor(&s), 0);
    assert_eq!(
        legal(&s, 0),
        [Action::RemoveShip {
            system: A,
            class: CRUISER
        }]
    );
}

#[test]
fn t21_a_faction_technology_is_owned_only_by_its_faction() {
    let mut config = battlefield_config(["sol", "naalu", "jolnar"], &[], &[]);
    config.technologies = vec![vec!["neuroglaive".into()], vec![], vec![]];
    let e = CommandTokens::new().new_game(3, 1, &config).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid configuration: technologies[0][0]: 'neuroglaive' is a faction technology of 'naalu', but player 0 plays 'sol'"
    );
}

#[test]
fn t21_orbital_drop_spends_a_strategy_token_and_takes_the_turn() {
    let mut s = start(battlefield_config(["sol", "hacan", "jolnar"], &[], &[]));
    let drop = Action::ComponentAction { ability: 0 };
    assert!(legal(&s, 0).contains(&drop));
    assert!(!legal(&s, 0).contains(&Action::ComponentAction { ability: 1 }));
    let before = sheet(&s, 0);
    ok(&mut s, 0, drop);
    assert_eq!(
        sheet(&s, 0),
        [before[0], before[1], before[2] - 1, before[3] + 1]
    );
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    // Not exhausting: usable again while strategy tokens last.
    let mut t = s.clone();
    while actor(&t) != 0 || t.flow.step != Step::Turn {
        let q = actor(&t);
        let a = simple_action(&t, q);
        ok(&mut t, q, a);
    }
    assert!(legal(&t, 0).contains(&drop));
    shift_reserve(&mut t, 0, Pool::Strategy, -1);
    assert_eq!(
        refused(&mut t, 0, drop).to_string(),
        "illegal action: Orbital Drop spends 1 token from the strategy pool, but p0 has 0"
    );
}

#[test]
fn t21_production_biomes_exhausts_until_the_rounds_end() {
    let mut config = battlefield_config(["hacan", "sol", "jolnar"], &[], &[]);
    config.technologies = vec![vec!["production-biomes".into()], vec![], vec![]];
    let mut s = start(config);
    let biomes = Action::ComponentAction { ability: 0 };
    let before = sheet(&s, 0);
    ok(&mut s, 0, biomes);
    assert_eq!(sheet(&s, 0)[2], before[2] - 1);
    while actor(&s) != 0 || s.flow.step != Step::Turn {
        let q = actor(&s);
        let a = simple_action(&s, q);
        ok(&mut s, q, a);
    }
    assert!(!legal(&s, 0).contains(&biomes));
    assert_eq!(
        refused(&mut s, 0, biomes).to_string(),
        "illegal action: p0 has already used Production Biomes this round: its card is exhausted"
    );
}

#[test]
fn t21_random_playouts_with_these_abilities_keep_every_invariant() {
    let config = playout_config(
        &["sol", "hacan", "naalu", "xxcha"],
        &[&[], &["production-biomes"], &["neuroglaive"], &[]],
        4,
    );
    let mut used = 0;
    playouts_keep_invariants(4, &config, 25, |_, a| {
        used += usize::from(matches!(a, Action::ComponentAction { .. }));
    });
    assert!(used > 0, "random play uses the component actions");
}

// ----- T27 -----

#[test]
fn t27_quantum_datahub_node_swaps_strategy_cards_at_the_end_of_the_strategy_phase() {
    let mut config = battlefield_config(["hacan", "sol", "jolnar"], &[], &[]);
    config.technologies = vec![vec!["quantum-datahub-node".into()], vec![], vec![]];
    let mut s = game(3, config);
    for card in [0, 1, 2, 3, 4] {
        let p = actor(&s);
        ok(&mut s, p, Action::Pick { card });
    }
    let p = actor(&s);
    ok(&mut s, p, Action::Pick { card: 5 });
    // p0 Hacan holds Leadership (0) and Construction (3); p1 Diplomacy (1) and Trade (4).
    assert_eq!((s.flow.step, actor(&s)), (Step::EndOfStrategy, 0));
    let swap = Action::SwapCards { give: 3, take: 4 };
    assert!(legal(&s, 0).contains(&swap));
    assert!(legal(&s, 0).contains(&Action::NoReaction));
    let before = sheet(&s, 0);
    ok(&mut s, 0, swap);
    assert_eq!(s.flow.holder[3], 1);
    assert_eq!(s.flow.holder[4], 0);
    assert_eq!(sheet(&s, 0)[2], before[2] - 1);
    assert_eq!(s.flow.step, Step::Turn);
}

#[test]
fn t27_genetic_recombination_has_the_player_named_vote_as_asked_or_return_a_fleet_token() {
    let config = Config {
        factions: strings(&["mahact", "sol", "hacan"]),
        technologies: vec![vec!["genetic-recombination".into()], vec![], vec![]],
        agenda_phase_from: 1,
        ..Config::default()
    };
    let mut s = game(3, config);
    play_to_agenda_phase(&mut s);
    ok(&mut s, 0, Action::RevealAgenda { agenda: Some(0) });
    // Before votes are cast, Mahact may name a player.
    assert_eq!((s.flow.step, actor(&s)), (Step::Recombine, 0));
    ok(&mut s, 0, Action::Recombine { player: 2 });
    assert_eq!((s.flow.step, actor(&s)), (Step::Comply, 2));
    let before = sheet(&s, 2);
    ok(&mut s, 2, Action::ReturnToken { pool: Pool::Fleet });
    assert_eq!(sheet(&s, 2)[1], before[1] - 1);
    assert_eq!(s.flow.step, Step::Outcome);
    // A smaller fleet pool may leave ships over the limit: removed first (T7).
    while !s.ledger.pending().is_empty() {
        let q = actor(&s);
        let a = legal(&s, q)[0];
        ok(&mut s, q, a);
    }
    // Exhausted: not offered on the second agenda.
    ok(
        &mut s,
        0,
        Action::Outcome {
            vote: coffer_command_tokens::Vote::For,
            voted_against: coffer_command_tokens::Players(0),
        },
    );
    ok(&mut s, 0, Action::RevealAgenda { agenda: Some(1) });
    assert_eq!(s.flow.step, Step::Outcome);
}

#[test]
fn t27_random_playouts_with_the_datahub_and_recombination_keep_every_invariant() {
    let config = Config {
        agenda_phase_from: 1,
        ..playout_config(
            &["hacan", "mahact", "sol", "xxcha"],
            &[
                &["quantum-datahub-node"],
                &["genetic-recombination"],
                &[],
                &[],
            ],
            3,
        )
    };
    let (mut swapped, mut named) = (0, 0);
    playouts_keep_invariants(4, &config, 30, |_, a| {
        swapped += usize::from(matches!(a, Action::SwapCards { .. }));
        named += usize::from(matches!(a, Action::Recombine { .. }));
    });
    assert!(swapped > 0 && named > 0, "random play uses both");
}

// ----- T28 -----

#[test]
fn t28_fabrication_purges_a_relic_fragment_for_a_command_token() {
    let mut config = battlefield_config(["naazrokha", "sol", "hacan"], &[], &[]);
    config.relic_fragments = vec![1, 0, 0];
    let mut s = start(config);
    // Fabrication is ability #0 (Sol's Orbital Drop is #1).
    let fabricate = |pool| Action::UseAbility {
        ability: 0,
        system: None,
        pool: Some(pool),
    };
    assert!(legal(&s, 0).contains(&fabricate(Pool::Fleet)));
    let before = sheet(&s, 0);
    ok(&mut s, 0, fabricate(Pool::Fleet));
    assert_eq!(
        sheet(&s, 0),
        [before[0], before[1] + 1, before[2], before[3] - 1]
    );
    assert_eq!(s.ledger.value(s.h.fragments[0]), 0);
    // A component action: the turn is over; with no fragment left, it is not offered again.
    assert_eq!((s.flow.step, actor(&s)), (Step::Turn, 1));
    until_turn_of(&mut s, 0);
    assert!(!legal(&s, 0).contains(&fabricate(Pool::Fleet)));
    assert_eq!(
        refused(&mut s, 0, fabricate(Pool::Tactic)).to_string(),
        "illegal action: Fabrication (#0) cannot be used by p0 now"
    );
}

#[test]
fn t28_without_relic_fragments_fabrication_is_never_offered() {
    let s = start(battlefield_config(["naazrokha", "sol", "hacan"], &[], &[]));
    assert!(s.h.fragments.is_empty());
    assert!(
        !legal(&s, 0)
            .iter()
            .any(|a| matches!(a, Action::UseAbility { .. }))
    );
}

#[test]
fn t28_random_playouts_with_fabrication_keep_every_invariant() {
    let config = Config {
        factions: strings(&["naazrokha", "sol", "hacan"]),
        relic_fragments: vec![3, 0, 0],
        rounds: 3,
        ..Config::default()
    };
    let mut fabricated = 0;
    playouts_keep_invariants(3, &config, 25, |_, a| {
        fabricated += usize::from(matches!(a, Action::UseAbility { pool: Some(_), .. }));
    });
    assert!(fabricated > 0, "random play fabricates");
}

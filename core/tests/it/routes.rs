//! K4.1 along a route: a move checked once answers, for every count, exactly what `can_move_tokens` and
//! `move_tokens` answer, whatever happened to the ledger's layout since the route was made.

use crate::{hash, key};
use coffer_core::{Cause, Ledger, Owner, TokenRoute, Zone, ZoneId};

/// Two players and the game's bank: each player's reserve (of supply 0) and pool, a one-per-owner system,
/// a zone of another supply with tokens placed on it but no reserve, and the bank.
fn ledger() -> Ledger {
    let mut l = Ledger::new(2, 7);
    for o in 0..2 {
        l.add_zone(Zone::new(key(o, 1, 0))).unwrap();
        l.add_zone(Zone::new(key(o, 2, 0))).unwrap();
    }
    l.add_zone(Zone::new(key(u16::MAX, 3, 0)).one_per_owner())
        .unwrap();
    l.add_zone(Zone::new(key(u16::MAX, 4, 0)).supply(1))
        .unwrap();
    let bank = l.add_zone(Zone::new(key(u16::MAX, 5, 0))).unwrap();
    for o in 0..2u16 {
        l.stock(Owner(o), zone(usize::from(o) * 2), 3, Cause::Setup)
            .unwrap();
        l.stock_on(Owner(o), zone(5), 2, Cause::Setup).unwrap();
    }
    l.stock(Owner::GAME, bank, 4, Cause::Setup).unwrap();
    l.take_events();
    l
}

fn zone(z: usize) -> ZoneId {
    serde_json::from_str(&z.to_string()).unwrap()
}

/// Every owner (the players, the bank, one that does not exist) and every pair of zones (one that does
/// not exist included).
fn moves(l: &Ledger) -> Vec<(Owner, ZoneId, ZoneId)> {
    let zones = l.zones().len() + 1;
    let owners = [Owner(0), Owner(1), Owner(2), Owner::GAME];
    let mut out = Vec::new();
    for owner in owners {
        for from in 0..zones {
            for to in 0..zones {
                out.push((owner, zone(from), zone(to)));
            }
        }
    }
    out
}

/// Asks every route of `routes` of `l` for counts 0 to 5: the same answers as the full check.
fn agree(l: &Ledger, routes: &[TokenRoute]) {
    for &route in routes {
        for n in 0..=5 {
            assert_eq!(
                l.can_move_along(&route, n),
                l.can_move_tokens(route.owner(), route.from(), route.to(), n),
                "{route:?}, {n} tokens"
            );
        }
    }
}

/// The routes `l` gives for every move it does not refuse whatever the count.
fn routes(l: &Ledger) -> Vec<TokenRoute> {
    moves(l)
        .into_iter()
        .filter_map(|(o, f, t)| l.route(o, f, t).ok())
        .collect()
}

#[test]
fn k4_1_a_route_is_refused_exactly_when_every_count_would_be() {
    let l = ledger();
    let mut made = 0;
    for (owner, from, to) in moves(&l) {
        match l.route(owner, from, to) {
            Ok(route) => {
                made += 1;
                assert_eq!((route.owner(), route.from(), route.to()), (owner, from, to));
            }
            Err(refusal) => assert_eq!(Err(refusal), l.can_move_tokens(owner, from, to, 0)),
        }
    }
    // Each player and the bank, from and to each of the 6 zones of supply 0 (not the zone of supply 1,
    // where no one has a reserve).
    assert_eq!(made, 3 * 6 * 6);
    agree(&l, &routes(&l));
}

#[test]
fn k4_1_a_route_answers_as_the_full_check_while_tokens_move() {
    let mut l = ledger();
    let routes = routes(&l);
    // Every route of the ledger made once, then asked after each move of a random walk of moves.
    let mut rng = coffer_core::GameRng::new(11);
    for _ in 0..200 {
        agree(&l, &routes);
        let route = routes[rng.below(routes.len() as u64) as usize];
        let n = rng.below(3) as u32;
        let mut other = l.clone();
        let along = l.move_along(&route, n, Cause::Setup);
        let full = other.move_tokens(route.owner(), route.from(), route.to(), n, Cause::Setup);
        assert_eq!(along, full);
        assert_eq!(hash(&l), hash(&other));
        assert_eq!(l.take_events(), other.take_events());
    }
}

#[test]
fn k4_1_a_route_asked_of_a_changed_or_another_layout_answers_as_that_layout() {
    let l = ledger();
    let before = routes(&l);
    // A clone that added a zone, one that stocked another supply, a rolled-back stock, a restored snapshot.
    let mut grown = l.clone();
    grown.add_zone(Zone::new(key(0, 6, 0))).unwrap();
    agree(&grown, &before);
    // And the other way: routes to the new zone asked of the clone's original, which has no such zone.
    agree(&l, &routes(&grown));
    let mut rolled = l.clone();
    let mark = rolled.begin();
    rolled.stock(Owner(1), zone(5), 1, Cause::Setup).unwrap();
    let inside = routes(&rolled);
    assert!(inside.len() > before.len(), "a new reserve opens routes");
    rolled.rollback(mark);
    agree(&rolled, &inside);
    // A zone made inside a transaction that is rolled back: routes to it are refused after.
    let mut undone = l.clone();
    let mark = undone.begin();
    undone.add_zone(Zone::new(key(1, 7, 0))).unwrap();
    let to_new = routes(&undone);
    assert!(to_new.len() > before.len(), "the new zone opens routes");
    undone.rollback(mark);
    agree(&undone, &to_new);
    let restored: Ledger = serde_json::from_str(&serde_json::to_string(&l).unwrap()).unwrap();
    agree(&restored, &before);
    // Another game on other tables: its cells mean other zones.
    let mut other = Ledger::new(3, 0);
    for o in 0..3 {
        let z = other.add_zone(Zone::new(key(o, 1, 0))).unwrap();
        other.stock(Owner(o), z, 1, Cause::Setup).unwrap();
    }
    agree(&other, &before);
    // A game set up again on this one's own tables (a reset), with the same zones but no tokens yet:
    // the routes' cells are in its table, and it refuses them all (no reserve).
    let mut reused = l.clone();
    reused.recycle();
    let mut again = Ledger::new(2, 0);
    for zone in l.zones() {
        again.add_zone(*zone).unwrap();
    }
    agree(&again, &before);
    agree(&l, &before);
}

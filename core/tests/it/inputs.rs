//! K1.6 hostile inputs: JSON numbers out of range, damaged snapshots, extreme values everywhere.

use crate::{assert_refused, hash, key, new_amount};
use coffer_core::{AmountSpec, Cause, Key, Ledger, Owner, Scope, TrackSpec, Zone};

#[test]
fn k1_6_json_negative_or_huge_numbers_are_clear_errors() {
    let good = r#"{"key":{"owner":0,"kind":1,"subject":2},"limit":3,"recurrence":-1,"policy":"Sum","recurs_at":"Phase","unrecoverable":false}"#;
    let spec: TrackSpec = serde_json::from_str(good).unwrap();
    assert_eq!(spec.limit, 3);
    for (bad, shows) in [
        (good.replace(r#""limit":3"#, r#""limit":-1"#), "-1"),
        (
            good.replace(r#""limit":3"#, r#""limit":4294967296"#),
            "4294967296",
        ),
        (
            good.replace(r#""limit":3"#, r#""limit":1e30"#),
            "floating point",
        ),
        (good.replace(r#""subject":2"#, r#""subject":-7"#), "-7"),
        (good.replace(r#""owner":0"#, r#""owner":65536"#), "65536"),
        (
            good.replace(r#""recurrence":-1"#, r#""recurrence":2147483648"#),
            "2147483648",
        ),
        (good.replace(r#""limit":3"#, r#""limit":"3""#), "string"),
    ] {
        let err = serde_json::from_str::<TrackSpec>(&bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains(shows), "{bad} gave {err}");
    }
    let err = serde_json::from_str::<Key>(r#"{"owner":0,"kind":-1,"subject":0}"#).unwrap_err();
    assert!(err.to_string().contains("-1"), "{err}");
    let err = serde_json::from_str::<AmountSpec>(
        r#"{"key":{"owner":0,"kind":0,"subject":0},"start":9223372036854775808,"floor":0,"cap":null,"lifetime":"Game","resets":false}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("9223372036854775808"), "{err}");
    let err = serde_json::from_str::<Zone>(
        r#"{"key":{"owner":0,"kind":0,"subject":0},"one_per_owner":false,"face":256}"#,
    )
    .unwrap_err();
    assert!(err.to_string().contains("256"), "{err}");
}

fn sample() -> Ledger {
    let mut l = Ledger::new(2, 5);
    let a = new_amount(&mut l, AmountSpec::new(key(0, 1, 0)).cap(10));
    l.gain(a, 7, Cause::Setup).unwrap();
    l.add_track(TrackSpec::new(key(0, 2, 0), 3)).unwrap();
    let z = l.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    l.stock(Owner(0), z, 4, Cause::Setup).unwrap();
    l.take_events();
    l
}

#[test]
fn k1_6_snapshots_round_trip_and_keep_the_hash() {
    let l = sample();
    let json = serde_json::to_string(&l).unwrap();
    let back: Ledger = serde_json::from_str(&json).unwrap();
    assert_eq!(hash(&back), hash(&l));
    let bytes = postcard::to_allocvec(&l).unwrap();
    let back: Ledger = postcard::from_bytes(&bytes).unwrap();
    assert_eq!(hash(&back), hash(&l));
}

#[test]
fn k1_6_damaged_snapshots_are_clear_errors_not_panics() {
    let json = serde_json::to_value(sample()).unwrap();
    let damage = |f: &dyn Fn(&mut serde_json::Value)| {
        let mut v = json.clone();
        f(&mut v);
        serde_json::from_value::<Ledger>(v)
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    // Amounts are rows: owner, kind, subject, value, floor, cap, lifetime, value on expiry.
    let e = damage(&|v| v["amounts"][0][3] = 11.into());
    assert!(e.contains("11"), "{e}");
    let e = damage(&|v| v["tracks"][0]["active"] = 4.into());
    assert!(e.contains("4 active of 3"), "{e}");
    // The token matrix is written as its cell count and the cells that hold tokens, [[cell, count]].
    assert_eq!(json["tokens"], serde_json::json!([2, [[0, 4]]]));
    let e = damage(&|v| v["tokens"][0] = 4.into());
    assert!(e.contains("4 token counts for 1 zones of 2 owners"), "{e}");
    let e = damage(&|v| v["tokens"][1][0][1] = 3.into());
    assert!(e.contains("owns 4 tokens of supply 0 but 3"), "{e}");
    for held in [
        serde_json::json!([[0, 4], [0, 1]]),
        serde_json::json!([[1, 1], [0, 4]]),
        serde_json::json!([[0, 4], [1, 0]]),
        serde_json::json!([[0, 4], [2, 1]]),
    ] {
        let e = damage(&|v| v["tokens"][1] = held.clone());
        assert!(
            e.contains("cells must be listed once, in order"),
            "{held}: {e}"
        );
    }
    let e = damage(&|v| v["supply"] = serde_json::json!([4]));
    assert!(e.contains("supply totals"), "{e}");
    let e = damage(&|v| v["reserve"][0] = 9.into());
    assert!(e.contains("reserve"), "{e}");
    let e = damage(&|v| v["contributions"][0]["track"] = 5.into());
    assert!(e.contains("missing"), "{e}");
    let e = damage(&|v| v["contributions"][0]["capacity"] = 2.into());
    assert!(e.contains("limit 3 but sources sum to 2"), "{e}");
    let e = damage(&|v| v["amounts"][0][5] = (-1).into());
    assert!(e.contains("outside"), "{e}");
    let e = damage(&|v| v["owners"] = (-1).into());
    assert!(e.contains("-1"), "{e}");
    // Zones are runs: owner, kind, first subject, face, one per owner, and each zone's supply.
    let e = damage(&|v| v["zones"][0][4] = 2.into());
    assert!(e.contains("expected a boolean"), "{e}");
    let e = damage(&|v| v["zones"][0][5] = serde_json::json!([]));
    assert!(e.contains("zone run 0: a run holds no zone"), "{e}");
    let e = damage(&|v| {
        v["zones"][0][2] = u32::MAX.into();
        v["zones"][0][5] = serde_json::json!([0, 0]);
    });
    assert!(e.contains("run past the last subject"), "{e}");
    // Truncated binary snapshots are errors too.
    let bytes = postcard::to_allocvec(&sample()).unwrap();
    for cut in 0..bytes.len() {
        assert!(postcard::from_bytes::<Ledger>(&bytes[..cut]).is_err());
    }
    // Binary tables are byte strings of fixed-width records: a flag that is neither 0 nor 1, or a table
    // whose length is not a whole number of records, is an error.
    let mut l = sample();
    let p = l.add_permanent(key(0, 9, 0), None).unwrap();
    let bytes = postcard::to_allocvec(&l).unwrap();
    let permanent_key = [0u8, 0, 9, 0, 0, 0, 0, 0]; // owner 0, kind 9, subject 0, little-endian
    let at = bytes
        .windows(permanent_key.len())
        .position(|w| w == permanent_key)
        .expect("the permanent's record is in the snapshot");
    let mut damaged = bytes.clone();
    damaged[at + 8] = 7; // its "exhausted" flag
    // (postcard keeps no message of a custom error; JSON does, tested above.)
    assert!(postcard::from_bytes::<Ledger>(&damaged).is_err());
    damaged[at + 8] = 1;
    assert!(
        postcard::from_bytes::<Ledger>(&damaged)
            .unwrap()
            .is_exhausted(p)
    );
    let mut damaged = bytes.clone();
    damaged[at - 1] -= 1; // the table's length
    assert!(postcard::from_bytes::<Ledger>(&damaged).is_err());
}

/// A two-player setup: a reserve and a one-per-owner zone of supply 0, a bank and a pot of supply 1;
/// `seed` changes only the RNG, so every call lays the ledger out alike. The zones, in that order.
fn laid_setup(seed: u64) -> (Ledger, [coffer_core::ZoneId; 4]) {
    let mut l = Ledger::new(2, seed);
    let reserve = l.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    let spot = l.add_zone(Zone::new(key(0, 4, 0)).one_per_owner()).unwrap();
    let bank = l.add_zone(Zone::new(key(0, 5, 0)).supply(1)).unwrap();
    let pot = l.add_zone(Zone::new(key(0, 5, 1)).supply(1)).unwrap();
    l.stock(Owner(0), reserve, 4, Cause::Setup).unwrap();
    l.stock(Owner(1), reserve, 2, Cause::Setup).unwrap();
    l.stock(Owner::GAME, bank, 5, Cause::Setup).unwrap();
    l.take_events();
    (l, [reserve, spot, bank, pot])
}

#[test]
fn k1_6_a_ledger_laid_on_its_setup_layout_round_trips_without_it() {
    use coffer_core::Unlaid;
    let layout = laid_setup(0).0.layout();
    let (mut l, [reserve, spot, bank, pot]) = laid_setup(9);
    assert!(!l.has_layout(&layout), "equal tables, not yet shared");
    assert!(l.adopt_layout(&layout));
    assert!(l.has_layout(&layout));
    l.move_tokens(Owner(0), reserve, spot, 1, Cause::Setup)
        .unwrap();
    l.move_tokens(Owner::GAME, bank, pot, 2, Cause::Setup)
        .unwrap();
    let whole = postcard::to_allocvec(&l).unwrap();
    let bytes = postcard::to_allocvec(&l.laid_out(&layout)).unwrap();
    assert!(
        bytes.len() < whole.len(),
        "{} >= {}",
        bytes.len(),
        whole.len()
    );
    let back = postcard::from_bytes::<Unlaid>(&bytes)
        .unwrap()
        .lay(&layout)
        .unwrap();
    assert_eq!(back, l);
    assert_eq!(hash(&back), hash(&l));
    assert!(back.has_layout(&layout));
    let json = serde_json::to_string(&l.laid_out(&layout)).unwrap();
    assert!(json.starts_with(r#"{"setup":"#), "{json}");
    let back = serde_json::from_str::<Unlaid>(&json)
        .unwrap()
        .lay(&layout)
        .unwrap();
    assert_eq!(back, l);
    // A ledger that changed its layout after sharing it (here, a zone added in play) has its own copy,
    // and is written whole.
    let mut grown = l.clone();
    grown.add_zone(Zone::new(key(1, 6, 0))).unwrap();
    assert!(!grown.has_layout(&layout) && l.has_layout(&layout));
    let json = serde_json::to_string(&grown.laid_out(&layout)).unwrap();
    assert!(json.starts_with(r#"{"own":"#), "{json}");
    let back = serde_json::from_str::<Unlaid>(&json)
        .unwrap()
        .lay(&layout)
        .unwrap();
    assert_eq!(back, grown);
    assert_eq!(back.zones().len(), 5);
}

#[test]
fn k1_6_ledgers_that_lay_out_no_tokens_share_one_empty_layout_until_they_do() {
    let a = Ledger::new(2, 1);
    let mut b = Ledger::new(2, 2);
    assert!(b.has_layout(&a.layout()), "no tables of their own");
    assert!(
        !Ledger::new(3, 1).has_layout(&a.layout()),
        "one per player count"
    );
    // A ledger that lays out its first zone gets its own tables; the others keep the empty ones.
    let zone = b.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    assert!(!b.has_layout(&a.layout()));
    b.stock(Owner(1), zone, 3, Cause::Setup).unwrap();
    assert_eq!(b.tokens(zone, Owner(1)), 3);
    assert!(Ledger::new(2, 3).has_layout(&a.layout()) && a.zones().is_empty());
    // A ledger without tokens read back from a snapshot shares it again once shrunk, as hosts do.
    let mut back: Ledger = postcard::from_bytes(&postcard::to_stdvec(&a).unwrap()).unwrap();
    assert!(!back.has_layout(&a.layout()));
    back.shrink_to_fit();
    assert!(back.has_layout(&a.layout()));
    assert_eq!(back, a);
    assert_eq!(hash(&back), hash(&a));
    // More players than the shared ones cover still get a ledger that works.
    let mut wide = Ledger::new(40, 0);
    let zone = wide.add_zone(Zone::new(key(39, 3, 0))).unwrap();
    wide.stock(Owner(39), zone, 2, Cause::Setup).unwrap();
    assert_eq!(wide.tokens(zone, Owner(39)), 2);
}

#[test]
fn k1_6_a_ledger_that_does_not_fit_its_setup_layout_is_refused() {
    use coffer_core::Unlaid;
    let (l, _) = laid_setup(0);
    let layout = l.layout();
    let json = serde_json::to_value(l.laid_out(&layout)).unwrap();
    let lay = |v: &serde_json::Value, layout: &coffer_core::Layout| {
        serde_json::from_value::<Unlaid>(v.clone())
            .and_then(|u| u.lay(layout).map_err(serde::de::Error::custom))
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    // The layout of another player count, or of other zones.
    let e = lay(&json, &Ledger::new(3, 0).layout());
    assert!(
        e.contains("a ledger of 2 owners on the layout of a game of 3"),
        "{e}"
    );
    let mut fewer = Ledger::new(2, 0);
    fewer.add_zone(Zone::new(key(0, 3, 0))).unwrap();
    let e = lay(&json, &fewer.layout());
    assert!(e.contains("for 1 zones of 2 owners"), "{e}");
    // Token counts that break conservation against the layout's totals, or a one-per-owner zone; the
    // game's column (it has a bank) written after each row of the players'.
    let body = &json["setup"];
    assert_eq!(
        body["tokens"],
        serde_json::json!([12, [[0, 4], [1, 2], [8, 5]]])
    );
    for (held, shows) in [
        (
            serde_json::json!([[0, 4], [1, 1], [8, 5]]),
            "p1 owns 2 tokens of supply 0 but 1",
        ),
        (
            serde_json::json!([[0, 2], [1, 2], [3, 2], [8, 5]]),
            "one-per-owner",
        ),
        (
            serde_json::json!([[0, 4], [1, 2], [8, 6]]),
            "the game owns 5 tokens of supply 1 but 6",
        ),
        (
            serde_json::json!([[0, 4], [1, 2], [7, 1], [8, 5]]),
            "p1 owns 0 tokens of supply 1 but 1",
        ),
    ] {
        let mut damaged = json.clone();
        damaged["setup"]["tokens"][1] = held.clone();
        let e = lay(&damaged, &layout);
        assert!(e.contains(shows), "{held}: {e}");
    }
    // A ledger written whole is checked whole, its own layout included.
    let mut whole = serde_json::json!({ "own": serde_json::to_value(&l).unwrap() });
    whole["own"]["supply"][1] = 3.into();
    let e = lay(&whole, &layout);
    assert!(e.contains("p1 owns 3 tokens of supply 0 but 2"), "{e}");
    // Truncated binary forms are errors, never panics.
    let bytes = postcard::to_allocvec(&l.laid_out(&layout)).unwrap();
    for cut in 0..bytes.len() {
        assert!(postcard::from_bytes::<Unlaid>(&bytes[..cut]).is_err());
    }
}

#[test]
fn k1_6_extreme_values_everywhere_are_ok_or_refused() {
    let mut l = Ledger::new(u16::MAX, u64::MAX);
    let a = new_amount(
        &mut l,
        AmountSpec::new(key(u16::MAX, u16::MAX, u32::MAX))
            .floor(i64::MIN)
            .start(i64::MAX),
    );
    assert_refused(&mut l, |l| l.gain(a, 1, Cause::Effect(u16::MAX)));
    l.spend(a, u64::MAX, Cause::Setup).unwrap();
    assert_eq!(l.value(a), i64::MIN);
    let t = l
        .add_track(TrackSpec::new(key(0, 0, 0), u32::MAX).recurring(i32::MIN, Scope::Step))
        .unwrap();
    l.spend_charges(t, u32::MAX, Cause::Setup).unwrap();
    assert_refused(&mut l, |l| l.spend_charges(t, 1, Cause::Setup));
    assert_eq!(l.recover_charges(t, 5, Cause::Setup).unwrap(), 5);
    l.end_scope(Scope::Step);
    assert_eq!(
        l.active(t),
        0,
        "a recurrence of i32::MIN loses everything without wrapping"
    );
    assert_eq!(
        l.recover_charges(t, u32::MAX, Cause::Setup).unwrap(),
        u32::MAX
    );
    assert!(l.random_below(u64::MAX, Cause::Setup) < u64::MAX);
    assert_eq!(l.random_below(0, Cause::Setup), 0);
    l.check_invariants().unwrap();
}

#[test]
fn k1_6_records_deserialized_on_their_own_do_not_panic() {
    let track: coffer_core::Track = serde_json::from_str(
        r#"{"key":{"owner":0,"kind":0,"subject":0},"limit":3,"active":5,"recurs_at":"Phase","recurrence":"Sum","unrecoverable":false}"#,
    )
    .unwrap();
    assert_eq!(track.inactive(), 0);
    let amount: coffer_core::Amount = serde_json::from_str(
        r#"{"key":{"owner":0,"kind":0,"subject":0},"value":-9223372036854775808,"floor":9223372036854775807,"cap":null,"lifetime":"Game","on_expiry":0}"#,
    )
    .unwrap();
    assert_eq!(amount.available(), u64::MAX);
}

#[test]
fn k1_6_zones_are_written_in_runs_and_read_back_from_any_split() {
    let mut l = Ledger::new(2, 1);
    let board: Vec<_> = (0..5)
        .map(|s| {
            l.add_zone(Zone::new(key(u16::MAX, 4, s)).one_per_owner())
                .unwrap()
        })
        .collect();
    let other = l.add_zone(Zone::new(key(u16::MAX, 5, 0))).unwrap();
    let json = serde_json::to_value(&l).unwrap();
    assert_eq!(
        json["zones"],
        serde_json::json!([
            [65535, 4, 0, 0, true, [0, 0, 0, 0, 0]],
            [65535, 5, 0, 0, false, [0]]
        ])
    );
    let back: Ledger = postcard::from_bytes(&postcard::to_allocvec(&l).unwrap()).unwrap();
    assert_eq!(hash(&back), hash(&l));
    assert_eq!(back.zone(board[4]).unwrap().key, key(u16::MAX, 4, 4));
    assert_eq!(back.zone(other).unwrap().key, key(u16::MAX, 5, 0));
    // The same zones split into shorter runs are the same ledger.
    let mut split = json.clone();
    split["zones"] = serde_json::json!([
        [65535, 4, 0, 0, true, [0, 0]],
        [65535, 4, 2, 0, true, [0, 0, 0]],
        [65535, 5, 0, 0, false, [0]]
    ]);
    let back: Ledger = serde_json::from_value(split).unwrap();
    assert_eq!(hash(&back), hash(&l));
}

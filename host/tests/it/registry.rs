//! The registry: keys, lookups by id or `id@version`, and clear errors.

use crate::fixture::{other, registry, tally, tally_v};
use coffer_host::{Origin, Registry, RegistryError};
use std::path::PathBuf;

#[test]
fn two_entries_with_the_same_key_are_refused_naming_both_origins() {
    let mut r = Registry::new();
    r.add(tally(), Origin::Static).unwrap();
    let err = r
        .add(
            tally(),
            Origin::Library(PathBuf::from("plugins/libtally.so")),
        )
        .unwrap_err();
    assert!(matches!(err, RegistryError::Duplicate { .. }));
    assert_eq!(
        err.to_string(),
        "ruleset 'tally@0.1.0' is registered twice: by statically linked and by library plugins/libtally.so"
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r.get("tally").unwrap().origin, Origin::Static);
}

#[test]
fn get_accepts_id_and_id_at_version() {
    let r = registry();
    assert_eq!(r.get("tally").unwrap().key(), "tally@0.1.0");
    assert_eq!(r.get("tally@0.1.0").unwrap().key(), "tally@0.1.0");
    assert_eq!(r.get("other").unwrap().key(), "other@0.2.0");
}

#[test]
fn unknown_ruleset_lists_the_known_ones() {
    let r = registry();
    let err = r.get("chess").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown ruleset 'chess'; known: other@0.2.0, tally@0.1.0"
    );
    let err = r.get("tally@9.9.9").unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown ruleset 'tally@9.9.9'; known: other@0.2.0, tally@0.1.0"
    );
}

#[test]
fn an_id_with_several_versions_is_ambiguous_and_lists_them() {
    let mut r = registry();
    r.add(tally_v("0.3.0"), Origin::Static).unwrap();
    let err = r.get("tally").unwrap_err();
    assert!(
        matches!(&err, RegistryError::Ambiguous { versions, .. } if versions == &["0.1.0", "0.3.0"])
    );
    assert!(err.to_string().contains("versions 0.1.0, 0.3.0"), "{err}");
    assert_eq!(r.get("tally@0.3.0").unwrap().key(), "tally@0.3.0");
}

#[test]
fn iter_is_in_key_order() {
    let mut r = Registry::new();
    r.add(tally_v("0.2.0"), Origin::Static).unwrap();
    r.add(other(), Origin::Static).unwrap();
    r.add(tally(), Origin::Static).unwrap();
    let keys: Vec<String> = r.iter().map(|e| e.key()).collect();
    assert_eq!(keys, ["other@0.2.0", "tally@0.1.0", "tally@0.2.0"]);
    assert_eq!(r.keys(), keys);
}

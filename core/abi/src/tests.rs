//! Unit tests of the declaration, version checks and the panic guard.

use crate::exports::free_buf;
use crate::guard::guard;
use crate::*;

#[test]
fn declaration_header_is_stable() {
    let d = Declaration::CURRENT;
    assert_eq!(d.header.magic, MAGIC);
    assert_eq!(d.header.abi_version, ABI_VERSION);
    assert_eq!(d.header.size as usize, std::mem::size_of::<Declaration>());
    assert_eq!(std::mem::offset_of!(Declaration, header), 0);
    assert_eq!(std::mem::size_of::<Header>(), 16);
}

#[test]
fn core_versions_are_compatible_within_a_caret_range() {
    assert!(core_compatible("0.1.0", "0.1.7"));
    assert!(core_compatible("1.2.0", "1.0.3"));
    assert!(!core_compatible("0.1.0", "0.2.0"));
    assert!(!core_compatible("0.1.0", "0.0.1-fixture"));
    assert!(!core_compatible("1.0.0", "2.0.0"));
    assert!(!core_compatible("0.1.0", "not a version"));
}

#[test]
fn panics_become_status_codes_with_the_message() {
    let mut out = Buf::EMPTY;
    let status = guard(&mut out, || panic!("boom {}", 7));
    assert_eq!(status, PANICKED);
    // SAFETY: `out` was filled by `guard` in this library.
    assert_eq!(unsafe { out.as_slice() }, b"boom 7");
    free_buf(&mut out);
    assert!(out.ptr.is_null());
}

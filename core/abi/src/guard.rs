//! Calls that never unwind into the host: every body runs under `catch_unwind`, and its reply (bytes, a
//! refusal or a panic message) is written to the caller's buffer.

use crate::{Buf, OK, PANICKED, REFUSED, Status, panic_message};
use coffer_sdk::{ActionError, DynRuleset, SetupError};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};

/// What one call produces: success with bytes, a refusal with bytes, or a panic.
pub(crate) enum Reply {
    Ok(Vec<u8>),
    Refused(Vec<u8>),
}

/// Runs `f` under `catch_unwind` and writes its bytes to `out`.
pub(crate) fn guard(out: *mut Buf, f: impl FnOnce() -> Reply) -> Status {
    let (status, bytes) = match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Reply::Ok(bytes)) => (OK, bytes),
        Ok(Reply::Refused(bytes)) => (REFUSED, bytes),
        Err(payload) => (PANICKED, panic_message(&*payload).into_bytes()),
    };
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable `Buf` (see `VTable`); a null `out` is skipped.
        unsafe {
            out.write(if bytes.is_empty() {
                Buf::EMPTY
            } else {
                Buf::from_vec(bytes)
            })
        };
    }
    status
}

/// Writes bytes to an out buffer (a null `out` is skipped).
pub(crate) fn put(out: *mut Buf, bytes: Vec<u8>) {
    if !out.is_null() {
        // SAFETY: the host passes a valid, writable `Buf` (see `VTable`).
        unsafe {
            out.write(if bytes.is_empty() {
                Buf::EMPTY
            } else {
                Buf::from_vec(bytes)
            })
        };
    }
}

/// [`guard`] for the hot path: success writes nothing (the host's `out` stays as passed, empty).
pub(crate) fn guard_hot(out: *mut Buf, f: impl FnOnce() -> Result<(), Vec<u8>>) -> Status {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => OK,
        Ok(Err(bytes)) => {
            put(out, bytes);
            REFUSED
        }
        Err(payload) => {
            put(out, panic_message(&*payload).into_bytes());
            PANICKED
        }
    }
}

/// Writes a refusal's JSON to `out`.
#[cold]
#[inline(never)]
pub(crate) fn refuse(out: *mut Buf, e: &ActionError) -> Status {
    put(out, json(e));
    REFUSED
}

pub(crate) fn json<T: serde::Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).unwrap_or_else(|e| format!("\"{e}\"").into_bytes())
}

pub(crate) fn rulesets() -> &'static [Arc<dyn DynRuleset>] {
    static RULESETS: OnceLock<Vec<Arc<dyn DynRuleset>>> = OnceLock::new();
    RULESETS.get_or_init(coffer_sdk::static_rulesets)
}

pub(crate) fn ruleset(index: usize) -> Result<&'static Arc<dyn DynRuleset>, Reply> {
    rulesets().get(index).ok_or_else(|| {
        Reply::Refused(json(&SetupError::Config(format!(
            "no ruleset #{index} in this library"
        ))))
    })
}

//! Fuzz target: any bytes as a game of a bundled ruleset and a list of actions as JSON (see
//! `coffer_fuzz::actions`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| coffer_fuzz::actions(data));

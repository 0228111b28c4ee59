//! Fuzz target: any bytes as a save file, read the ways the commands read saves (see
//! `coffer_fuzz::save_file`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| coffer_fuzz::save_file(data));

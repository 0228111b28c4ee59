//! Integration tests of the `wide-board` ruleset: its rules, and its agreement with the hand-written
//! plain version (statically linked and loaded from the cdylib).

mod agree;
mod rules;

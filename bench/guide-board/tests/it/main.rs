//! Integration tests of the `guide-board` ruleset (outposts): its rules, each a test named after it, and
//! its agreement with the hand-written plain version (statically linked and loaded from the cdylib).

mod agree;
mod rules;

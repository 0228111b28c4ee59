//! Integration tests of the `charges` ruleset: one module per topic.

mod clauses;
mod common;
mod content;
mod docs;
mod playout;
mod script;
mod secrecy;
mod table;
mod words;

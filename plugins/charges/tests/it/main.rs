//! Integration tests of the `charges` ruleset: one module per topic.

mod charge_tracks;
mod clauses;
mod common;
mod content;
mod docs;
mod playouts;
mod script;
mod secrecy;
mod table;
mod words;

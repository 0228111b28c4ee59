//! Integration tests of the `story-acts` ruleset, one module per topic; tests are named after RULES.md clauses.

mod acts;
mod characters;
mod common;
mod content;
mod docs;
mod hand;
mod playouts;
mod resources;
mod script;
mod secrecy;
mod table;
mod votes;
mod words;

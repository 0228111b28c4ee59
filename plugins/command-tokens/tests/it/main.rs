//! Integration tests of the `command-tokens` ruleset: one module per topic.

mod abilities;
mod agendas;
mod cards;
mod clauses;
mod common;
mod content;
mod elimination;
mod fighters;
mod forge;
mod modifiers;
mod movement;
mod playouts;
mod reactions;
mod rounds;
mod script;
mod table;
mod words;

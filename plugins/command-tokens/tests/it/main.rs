//! Integration tests of the `command-tokens` ruleset: one module per topic.

mod abilities;
mod agendas;
mod cards;
mod clauses;
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
mod support;
mod table;
mod words;

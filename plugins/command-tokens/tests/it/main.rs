//! Integration tests of the `command-tokens` ruleset: one module per topic.

mod abilities;
mod activation;
mod agendas;
mod cards;
mod content;
mod elimination;
mod fighters;
mod fleet_limit;
mod forge;
mod modifiers;
mod movement;
mod playouts;
mod pools;
mod reactions;
mod rounds;
mod script;
mod status;
mod support;
mod table;
mod words;

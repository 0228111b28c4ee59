//! The rules' effects by topic: each file adds the `State` methods that carry out one part of the game.

pub(crate) mod abilities;
pub(crate) mod agenda;
pub(crate) mod cards;
pub(crate) mod combat;
pub(crate) mod elimination;
pub(crate) mod movement;
pub(crate) mod status;
pub(crate) mod strategy;
pub(crate) mod tactical;
pub(crate) mod tokens;

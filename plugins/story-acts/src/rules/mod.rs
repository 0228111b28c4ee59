//! The rules of a `story-acts` game by topic: what each action does once
//! [`validate`](crate::validate) accepted it, and the turn and state-based reactions around them.

pub mod board;
pub mod cards;
pub mod settle;
pub mod turns;

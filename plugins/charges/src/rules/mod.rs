//! The rules of a `charges` game by phase and topic: what a ship may do (the parts of a check that
//! [`validate`](crate::validate::validate)(crate::validate) and the legal list share) and what doing it does (the effects
//! [`apply`](crate::apply) dispatches to).

pub mod abilities;
pub mod activation;
pub mod damage;
pub mod end;
pub mod engagement;
pub mod planning;
pub mod ships;

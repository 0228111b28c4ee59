//! The rules by topic: what each action does once validated (`coins`), and the turn around them (`turn`).

pub mod coins;
pub mod turn;

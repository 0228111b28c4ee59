//! The rules by topic: the board's sites (`sites`: placing and shifting tokens, and which sites are
//! neighbours), the harvest (`harvest`), and the round around them (`round`: passing, turns, the round's
//! end).

pub mod harvest;
pub mod round;
pub mod sites;

//! The game's own seeded, deterministic random number generator.

use rand_core::Rng as _;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// A seeded PCG generator that is part of the game state: cloned, serialized and hashed with it, so a seed
/// and an action log always replay to the same state.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRng(Pcg64Mcg);

impl GameRng {
    /// A generator from a seed. The same seed always gives the same sequence, on every platform.
    pub fn new(seed: u64) -> GameRng {
        // Spread the 64-bit seed over the 128-bit state so that nearby seeds give unrelated sequences.
        let wide = (u128::from(seed) << 64) | u128::from(seed ^ 0x9E37_79B9_7F4A_7C15);
        GameRng(Pcg64Mcg::new(wide | 1))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` (Lemire's widening multiply; the bias is below 2^-64 * n).
    /// Returns 0 when `n` is 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Shuffles a slice in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

//! The game's own seeded, deterministic random number generator.

use rand_core::Rng as _;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

/// A seeded PCG generator that is part of the game state: cloned, serialized and hashed with it, so a seed
/// and an action log always replay to the same state.
///
/// It serializes as its 128-bit state split into two `u64` halves `[high, low]`: a `u128` does not fit
/// `serde_json::Value` (nor most JSON readers), and every game state holds one of these.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "[u64; 2]", try_from = "[u64; 2]")]
pub struct GameRng(Pcg64Mcg);

impl From<GameRng> for [u64; 2] {
    fn from(rng: GameRng) -> [u64; 2] {
        // Pcg64Mcg serializes as a struct holding only its u128 state; postcard encodes such a struct
        // exactly as the bare u128, so the state can be read back without access to private fields.
        // Written on the stack: a u128 takes at most 19 bytes as a varint (an allocation per snapshot and
        // per playout crossing otherwise).
        let mut buf = [0u8; 24];
        let state = postcard::to_slice(&rng.0, &mut buf)
            .ok()
            .and_then(|bytes| postcard::from_bytes::<u128>(bytes).ok())
            .unwrap_or(1);
        [(state >> 64) as u64, state as u64]
    }
}

impl TryFrom<[u64; 2]> for GameRng {
    type Error = String;
    fn try_from([high, low]: [u64; 2]) -> Result<GameRng, String> {
        let state = (u128::from(high) << 64) | u128::from(low);
        if state & 1 == 0 {
            // A multiplicative congruential generator's state is always odd.
            return Err(format!("random generator state [{high}, {low}] is even"));
        }
        Ok(GameRng(Pcg64Mcg::new(state)))
    }
}

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

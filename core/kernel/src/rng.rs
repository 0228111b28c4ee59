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
        let state = rng.0.state();
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
        if cfg!(target_family = "wasm") {
            // WebAssembly has no 64x64->128 multiply: the generator's own `u128` step is a call to
            // `__multi3` there (with `below`'s, 10% of a WebAssembly wide-board playout's instructions).
            // The same step and output in 64-bit halves, proved equal to the generator's in the tests.
            let (state, output) = mcg_step_by_halves(self.0.state());
            self.0 = Pcg64Mcg::new(state);
            return output;
        }
        self.0.next_u64()
    }

    /// A uniform integer in `0..n` (Lemire's widening multiply; the bias is below 2^-64 * n).
    /// Returns 0 when `n` is 0.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        let x = self.next_u64();
        // WebAssembly has no 64x64->128 multiply: a `u128` product is a call to `__multi3` (10% of a
        // WebAssembly wide-board playout's instructions, two calls an action). Every count a game draws
        // from fits 32 bits, where 64-bit products give the same high half exactly.
        if cfg!(target_family = "wasm") && n <= u64::from(u32::MAX) {
            return high_u64_by_u32(x, n);
        }
        ((u128::from(x) * u128::from(n)) >> 64) as u64
    }

    /// Shuffles a slice in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// The multiplier of `Pcg64Mcg` (`rand_pcg`'s `Mcg128Xsl64`), whose step is `state * MULTIPLIER`.
const MCG_MULTIPLIER: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

/// One step of `Pcg64Mcg` computed with 64-bit multiplies only: the new state and the 64 bits it outputs
/// (XSL RR: the halves xored, rotated by the state's top 6 bits).
#[inline]
fn mcg_step_by_halves(state: u128) -> (u128, u64) {
    let (high, low) = ((state >> 64) as u64, state as u64);
    let (m_high, m_low) = ((MCG_MULTIPLIER >> 64) as u64, MCG_MULTIPLIER as u64);
    let next_low = low.wrapping_mul(m_low);
    let next_high = mul_high(low, m_low)
        .wrapping_add(low.wrapping_mul(m_high))
        .wrapping_add(high.wrapping_mul(m_low));
    let next = (u128::from(next_high) << 64) | u128::from(next_low);
    let output = (next_high ^ next_low).rotate_right((next_high >> 58) as u32);
    (next, output)
}

/// The high 64 bits of the 128-bit product `a * b`, from four 32-bit by 32-bit products.
#[inline]
fn mul_high(a: u64, b: u64) -> u64 {
    const LOW: u64 = 0xffff_ffff;
    let (a1, a0, b1, b0) = (a >> 32, a & LOW, b >> 32, b & LOW);
    let (p00, p01, p10, p11) = (a0 * b0, a0 * b1, a1 * b0, a1 * b1);
    // Below 3 * 2^32: no overflow.
    let middle = (p00 >> 32) + (p01 & LOW) + (p10 & LOW);
    p11 + (p01 >> 32) + (p10 >> 32) + (middle >> 32)
}

/// The high 64 bits of the 128-bit product `x * n`, for `n < 2^32`, with 64-bit arithmetic only.
///
/// With `x = xh * 2^32 + xl`: `x * n = xh * n * 2^32 + xl * n`, and since the first term is a multiple of
/// `2^32`, its high 64 bits are `(xh * n + ((xl * n) >> 32)) >> 32`. No step overflows: `xh * n` is at
/// most `(2^32 - 1)^2 = 2^64 - 2^33 + 1` and the carry added to it is below `2^32`.
#[inline]
fn high_u64_by_u32(x: u64, n: u64) -> u64 {
    debug_assert!(n <= u64::from(u32::MAX));
    let high = x >> 32;
    let low = x & 0xffff_ffff;
    (high * n + ((low * n) >> 32)) >> 32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wide(x: u64, n: u64) -> u64 {
        ((u128::from(x) * u128::from(n)) >> 64) as u64
    }

    #[test]
    fn high_half_by_a_32_bit_count_is_the_wide_product_exactly() {
        let edges = [0, 1, 2, 0xffff_ffff, 0x1_0000_0000, u64::MAX - 1, u64::MAX];
        let counts = [
            0,
            1,
            2,
            3,
            6,
            7,
            1000,
            0x7fff_ffff,
            0xffff_fffe,
            0xffff_ffff,
        ];
        for &x in &edges {
            for &n in &counts {
                assert_eq!(high_u64_by_u32(x, n), wide(x, n), "x = {x:#x}, n = {n:#x}");
            }
        }
        let mut rng = GameRng::new(7);
        for _ in 0..100_000 {
            let x = rng.next_u64();
            let n = rng.next_u64() >> (32 + rng.next_u64() % 32);
            assert_eq!(high_u64_by_u32(x, n), wide(x, n), "x = {x:#x}, n = {n:#x}");
        }
    }

    #[test]
    fn the_step_by_halves_is_the_generators_step() {
        for seed in [0, 1, 2, 42, u64::MAX] {
            let mut reference = Pcg64Mcg::new(GameRng::new(seed).0.state());
            let mut state = reference.state();
            for _ in 0..100_000 {
                let (next, output) = mcg_step_by_halves(state);
                assert_eq!(output, reference.next_u64(), "seed {seed}");
                assert_eq!(next, reference.state(), "seed {seed}");
                state = next;
            }
        }
        let mut rng = GameRng::new(9);
        for _ in 0..10_000 {
            let (a, b) = (rng.next_u64(), rng.next_u64());
            assert_eq!(mul_high(a, b), wide(a, b), "a = {a:#x}, b = {b:#x}");
        }
        assert_eq!(mul_high(u64::MAX, u64::MAX), u64::MAX - 1);
    }

    #[test]
    fn the_state_serializes_as_its_halves_and_back() {
        let mut rng = GameRng::new(5);
        rng.next_u64();
        let halves: [u64; 2] = rng.clone().into();
        assert_eq!(
            (u128::from(halves[0]) << 64) | u128::from(halves[1]),
            rng.0.state()
        );
        assert_eq!(GameRng::try_from(halves), Ok(rng));
        assert!(GameRng::try_from([0, 2]).is_err());
    }

    #[test]
    fn below_stays_below_its_bound_and_the_sequence_is_the_seeds() {
        let (mut a, mut b) = (GameRng::new(42), GameRng::new(42));
        for n in 1..10_000u64 {
            let drawn = a.below(n);
            assert!(drawn < n);
            assert_eq!(drawn, wide(b.next_u64(), n));
        }
        assert_eq!(GameRng::new(3).below(0), 0);
    }
}

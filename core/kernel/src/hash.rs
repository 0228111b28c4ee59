//! Stable state hashes: XXH3-64 of the state's canonical postcard encoding.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::fmt;

/// A stable hash of a whole game state: the same state gives the same hash on every run and platform, so
/// replays and refusals can be checked by comparing hashes.
///
/// The encoding is postcard (field order, no maps with unspecified order); the hash is XXH3-64. States must
/// therefore hold no `HashMap` or `HashSet` (see `ARCHITECTURE.md`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct StateHash(pub u64);

impl fmt::Debug for StateHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl fmt::Display for StateHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

impl std::str::FromStr for StateHash {
    type Err = std::num::ParseIntError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        u64::from_str_radix(s, 16).map(StateHash)
    }
}

thread_local! {
    static BUFFER: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// The stable hash of any serializable state.
///
/// ```
/// use coffer_kernel::{state_hash, Ledger};
/// let a = Ledger::new(2, 1);
/// assert_eq!(state_hash(&a), state_hash(&a.clone()));
/// assert_ne!(state_hash(&a), state_hash(&Ledger::new(2, 2)));
/// ```
pub fn state_hash<T: Serialize + ?Sized>(state: &T) -> StateHash {
    BUFFER.with(|cell| {
        let mut guard = cell.try_borrow_mut();
        let mut fresh = Vec::new();
        let buffer: &mut Vec<u8> = match guard {
            Ok(ref mut b) => b,
            Err(_) => &mut fresh,
        };
        let mut bytes = std::mem::take(buffer);
        bytes.clear();
        // The `Extend` flavor writes in place (the `io::Write` one calls `memcpy` for every varint).
        match postcard::to_extend(state, bytes) {
            Ok(bytes) => {
                let hash = StateHash(xxhash_rust::xxh3::xxh3_64(&bytes));
                *buffer = bytes;
                hash
            }
            // Serialization of kernel and ruleset states cannot fail (no maps with non-string keys, no
            // custom errors); hash the error text so a failure is still deterministic and visible.
            Err(e) => StateHash(xxhash_rust::xxh3::xxh3_64(e.to_string().as_bytes()) ^ u64::MAX),
        }
    })
}

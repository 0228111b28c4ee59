//! Serde for a [`StateHash`] as 16 hex digits (readable, and safe from JSON readers that round big numbers).

use coffer_core::StateHash;
use serde::{Deserialize, Deserializer, Serializer};

/// Writes the hash as 16 lowercase hex digits.
///
/// # Errors
/// Those of the serializer.
pub fn serialize<S: Serializer>(hash: &StateHash, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(hash)
}

/// Reads 1 to 16 hex digits.
///
/// # Errors
/// Anything else, with the text found.
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StateHash, D::Error> {
    let text = String::deserialize(d)?;
    parse(&text).map_err(serde::de::Error::custom)
}

/// Reads 1 to 16 hex digits; anything else is a message with the text found.
pub(crate) fn parse(text: &str) -> Result<StateHash, String> {
    let refused = || {
        format!(
            "expected a state hash of 16 hex digits, found '{}'",
            crate::render::cut(text, 40)
        )
    };
    if text.is_empty() || text.len() > 16 || !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refused());
    }
    text.parse().map_err(|_| refused())
}

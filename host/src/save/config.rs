//! A game's configuration as a save holds it: checked in size and shape before it is parsed.

use crate::save::format::MAX_CONFIG_BYTES;
use serde::Deserialize;
use serde_json::value::RawValue;

/// Why a configuration is not one a game may start from or a save may hold.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration's text is longer than [`MAX_CONFIG_BYTES`].
    #[error(
        "the configuration is {size} bytes of JSON, more than the limit of {MAX_CONFIG_BYTES} bytes (1 MiB)"
    )]
    TooLarge {
        /// Its size in bytes (as written on one line, or as found in a file).
        size: usize,
    },
    /// The configuration is JSON, but not an object of options (nor `null`, for the defaults).
    #[error(
        "the configuration must be a JSON object of options, such as {{\"max_rounds\": 5}}, or null for the defaults; found {found}"
    )]
    NotAnObject {
        /// What was found instead, in words: `a list`, `a number`, `a string`, `true or false`.
        found: &'static str,
    },
}

/// What kind of JSON value `text` starts with, in words, when it is not an object or `null`.
pub(crate) fn not_an_object(text: &str) -> Option<&'static str> {
    match text.trim_start().as_bytes().first() {
        Some(b'{' | b'n') | None => None,
        Some(b'[') => Some("a list"),
        Some(b'"') => Some("a string"),
        Some(b't' | b'f') => Some("true or false"),
        Some(_) => Some("a number"),
    }
}

/// Checks a configuration given as JSON text before it is parsed: no longer than [`MAX_CONFIG_BYTES`],
/// and an object or `null` (judged from its first character, so a huge list is refused unread).
///
/// # Errors
/// [`ConfigError::TooLarge`] or [`ConfigError::NotAnObject`].
pub fn check_config_text(text: &str) -> Result<(), ConfigError> {
    if text.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge { size: text.len() });
    }
    match not_an_object(text) {
        Some(found) => Err(ConfigError::NotAnObject { found }),
        None => Ok(()),
    }
}

/// Checks a parsed configuration: an object or `null` whose one-line JSON text (as a save holds it) is no
/// longer than [`MAX_CONFIG_BYTES`]. Returns that text.
///
/// # Errors
/// [`ConfigError::TooLarge`] or [`ConfigError::NotAnObject`].
pub fn check_config(config: &serde_json::Value) -> Result<String, ConfigError> {
    let text = serde_json::to_string(config).unwrap_or_default();
    check_config_text(&text)?;
    Ok(text)
}

/// Reads a save's `config` field: its text is checked ([`check_config_text`]) before a value is built.
pub(crate) fn config_field<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<serde_json::Value, D::Error> {
    let raw = <&'de RawValue>::deserialize(d)?;
    check_config_text(raw.get()).map_err(serde::de::Error::custom)?;
    serde_json::from_str(raw.get()).map_err(serde::de::Error::custom)
}

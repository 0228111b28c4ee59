//! A ruleset's content as data (JSON lists embedded at build time or given in a configuration): the one
//! error every content loader returns, and the reading and id checks every loader needs.

use serde::de::DeserializeOwned;
use std::fmt::Display;

/// Content that could not be read or is not valid. Every message names the list (its file name, or the
/// configuration key it came from), and for an invalid entry the entry (its id, or `#n` for the n-th
/// entry of a list without a usable id) and the field, so a newcomer's typo is found without a debugger.
///
/// ```
/// use coffer_sdk::ContentError;
///
/// let e = ContentError::invalid("items.json", "lamp", "weight", "a weight of 90: choose 0-50");
/// assert_eq!(e.to_string(), "items.json: entry 'lamp', field 'weight': a weight of 90: choose 0-50");
/// let e = coffer_sdk::read_content::<Vec<u32>>("items.json", "[1, -2]").unwrap_err();
/// assert!(e.to_string().starts_with("items.json: [1]: invalid value"), "{e}");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ContentError {
    /// The JSON could not be read into the list's entries.
    #[error("{file}: {message}")]
    Parse {
        /// Which content list.
        file: &'static str,
        /// Where and why: the path of the value that failed and the parser's message (line, column).
        message: String,
    },
    /// An entry was read but is not valid.
    #[error("{file}: entry '{entry}', field '{field}': {message}")]
    Invalid {
        /// Which content list.
        file: &'static str,
        /// The entry's id (or `#n`, its position, when it has no usable id).
        entry: String,
        /// The offending field.
        field: &'static str,
        /// What is wrong, with the allowed range or the known values where there are some.
        message: String,
    },
}

impl ContentError {
    /// A list that could not be read.
    pub fn parse(file: &'static str, message: impl Display) -> ContentError {
        ContentError::Parse {
            file,
            message: message.to_string(),
        }
    }

    /// An entry with a bad field.
    pub fn invalid(
        file: &'static str,
        entry: impl Into<String>,
        field: &'static str,
        message: impl Into<String>,
    ) -> ContentError {
        ContentError::Invalid {
            file,
            entry: entry.into(),
            field,
            message: message.into(),
        }
    }
}

/// Reads list `file` from JSON text; a failure names the path of the value that failed (`[3].cost`),
/// then the parser's message.
///
/// # Errors
/// [`ContentError::Parse`].
pub fn read_content<T: DeserializeOwned>(
    file: &'static str,
    text: &str,
) -> Result<T, ContentError> {
    let mut reader = serde_json::Deserializer::from_str(text);
    let value = serde_path_to_error::deserialize(&mut reader).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if path == "." {
            ContentError::parse(file, inner)
        } else {
            ContentError::parse(file, format!("{path}: {inner}"))
        }
    })?;
    reader.end().map_err(|e| ContentError::parse(file, e))?;
    Ok(value)
}

/// Checks the id of entry `index` of list `file`: not empty, not one of `seen` (the ids before it), and
/// remembers it.
///
/// # Errors
/// [`ContentError::Invalid`] on field `id`: "must not be empty" or "appears twice".
pub fn check_content_id(
    file: &'static str,
    index: usize,
    id: &str,
    seen: &mut Vec<String>,
) -> Result<(), ContentError> {
    if id.trim().is_empty() {
        return Err(ContentError::invalid(
            file,
            format!("#{index}"),
            "id",
            "must not be empty",
        ));
    }
    if seen.iter().any(|s| s == id) {
        return Err(ContentError::invalid(file, id, "id", "appears twice"));
    }
    seen.push(id.to_owned());
    Ok(())
}

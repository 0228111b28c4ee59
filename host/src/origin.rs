//! Where a registered ruleset came from ([`Origin`]) and why registering or finding one fails
//! ([`RegistryError`]): shared by the registry and the loader, below both.

use std::fmt;
use std::path::PathBuf;

/// Where a registered ruleset came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Linked into this binary and registered through `coffer_core::plugin!`.
    Static,
    /// Loaded at runtime from this library file.
    Library(PathBuf),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Static => f.write_str("statically linked"),
            Origin::Library(path) => write!(f, "library {}", path.display()),
        }
    }
}

/// Why a ruleset could not be registered or found.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// Two entries claim the same `id@version`.
    #[error("ruleset '{key}' is registered twice: by {first} and by {second}")]
    Duplicate {
        /// The contested key.
        key: String,
        /// The entry already registered.
        first: Origin,
        /// The entry refused.
        second: Origin,
    },
    /// No ruleset has that id (or `id@version`).
    #[error("unknown ruleset '{name}'; known: {}", known_list(.known))]
    Unknown {
        /// What was asked.
        name: String,
        /// Every registered key.
        known: Vec<String>,
    },
    /// Several versions of that id are registered; the caller must say which.
    #[error("ruleset '{id}' is ambiguous: versions {} are registered; ask for one as '{id}@VERSION'", .versions.join(", "))]
    Ambiguous {
        /// The id asked.
        id: String,
        /// The versions registered under it.
        versions: Vec<String>,
    },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "none (no ruleset is loaded)".to_owned()
    } else {
        known.join(", ")
    }
}

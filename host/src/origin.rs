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
    /// Loaded at runtime from this WebAssembly module, and run sandboxed.
    Module(PathBuf),
}

impl Origin {
    /// The file a runtime-loaded ruleset came from.
    pub fn file(&self) -> Option<&std::path::Path> {
        match self {
            Origin::Static => None,
            Origin::Library(path) | Origin::Module(path) => Some(path),
        }
    }

    /// The form of the ruleset, in a word: `static`, `native` or `wasm`.
    pub fn form(&self) -> &'static str {
        match self {
            Origin::Static => "static",
            Origin::Library(_) => "native",
            Origin::Module(_) => "wasm",
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Static => f.write_str("statically linked"),
            Origin::Library(path) => write!(f, "library {}", path.display()),
            Origin::Module(path) => write!(f, "WebAssembly module {}", path.display()),
        }
    }
}

/// The form of a runtime-loaded ruleset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A native library (`.so`), with the host's rights.
    Native,
    /// A WebAssembly module (`.wasm`), sandboxed.
    Wasm,
}

impl Form {
    /// The form of a runtime-loaded ruleset; `None` for a static one.
    pub fn of(origin: &Origin) -> Option<Form> {
        match origin {
            Origin::Static => None,
            Origin::Library(_) => Some(Form::Native),
            Origin::Module(_) => Some(Form::Wasm),
        }
    }
}

impl std::str::FromStr for Form {
    type Err = String;

    fn from_str(s: &str) -> Result<Form, String> {
        match s {
            "native" => Ok(Form::Native),
            "wasm" => Ok(Form::Wasm),
            other => Err(format!("'{other}' is not a form: expected native or wasm")),
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
    /// The same `id@version` as a native library and as a WebAssembly module, and no preference given.
    #[error(
        "ruleset '{key}' is loaded twice, by {first} and by {second}; pick one form with \
             `--prefer wasm` or `--prefer native`, or remove one of the files"
    )]
    BothForms {
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

//! The ruleset registry: every ruleset the host knows, keyed by `id@version`, with where it came from.
//!
//! Statically linked rulesets ([`Registry::with_static`]) and runtime-loaded ones (the loader) live side by
//! side; nothing above the registry can tell them apart except by [`Entry::origin`].

use coffer_core::DynRuleset;
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

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

/// One registered ruleset.
#[derive(Clone)]
pub struct Entry {
    /// The ruleset, as the host drives it.
    pub ruleset: Arc<dyn DynRuleset>,
    /// Where it came from.
    pub origin: Origin,
}

impl Entry {
    /// The registry key, `id@version`.
    pub fn key(&self) -> String {
        self.ruleset.description().key()
    }
}

impl fmt::Debug for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Entry")
            .field("key", &self.key())
            .field("origin", &self.origin)
            .finish()
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

/// Every ruleset the host knows, keyed by `id@version`.
///
/// ```
/// use coffer_host::Registry;
/// let registry = Registry::new();
/// let err = registry.get("chess").unwrap_err();
/// assert_eq!(err.to_string(), "unknown ruleset 'chess'; known: none (no ruleset is loaded)");
/// ```
#[derive(Default, Debug, Clone)]
pub struct Registry {
    entries: BTreeMap<String, Entry>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// A registry holding every ruleset statically linked into this binary
    /// ([`coffer_core::static_rulesets`]).
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] if two linked crates register the same `id@version`.
    pub fn with_static() -> Result<Registry, RegistryError> {
        let mut registry = Registry::new();
        for ruleset in coffer_core::static_rulesets() {
            registry.add(ruleset, Origin::Static)?;
        }
        Ok(registry)
    }

    /// Registers a ruleset.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`], naming both origins, if its `id@version` is already registered; the
    /// registry is unchanged.
    pub fn add(
        &mut self,
        ruleset: Arc<dyn DynRuleset>,
        origin: Origin,
    ) -> Result<(), RegistryError> {
        let key = ruleset.description().key();
        if let Some(existing) = self.entries.get(&key) {
            return Err(RegistryError::Duplicate {
                key,
                first: existing.origin.clone(),
                second: origin,
            });
        }
        self.entries.insert(key, Entry { ruleset, origin });
        Ok(())
    }

    /// The entry for `name`, which is either `id@version` or a bare `id` registered in one version only.
    ///
    /// # Errors
    /// [`RegistryError::Unknown`] (listing the known keys) or [`RegistryError::Ambiguous`] (listing the
    /// versions of the id).
    pub fn get(&self, name: &str) -> Result<&Entry, RegistryError> {
        if let Some(entry) = self.entries.get(name) {
            return Ok(entry);
        }
        if !name.contains('@') {
            let matching: Vec<&Entry> = self
                .entries
                .values()
                .filter(|e| e.ruleset.description().id == name)
                .collect();
            match matching.as_slice() {
                [one] => return Ok(one),
                [] => {}
                several => {
                    return Err(RegistryError::Ambiguous {
                        id: name.to_owned(),
                        versions: several
                            .iter()
                            .map(|e| e.ruleset.description().version.clone())
                            .collect(),
                    });
                }
            }
        }
        Err(RegistryError::Unknown {
            name: name.to_owned(),
            known: self.keys(),
        })
    }

    /// The ruleset registered as exactly `id` at `version`, if any.
    pub fn get_exact(&self, id: &str, version: &str) -> Option<&Entry> {
        self.entries.get(&format!("{id}@{version}"))
    }

    /// Every entry, in key order.
    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    /// Every key (`id@version`), in order.
    pub fn keys(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// How many rulesets are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no ruleset is registered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Sets the deadline of every call into a runtime-loaded plugin, clamped to
    /// [`loader::MIN_DEADLINE`](crate::loader::MIN_DEADLINE)..=[`loader::MAX_DEADLINE`](crate::loader::MAX_DEADLINE);
    /// past it the process ends with [`loader::EXIT_DEADLINE`](crate::loader::EXIT_DEADLINE), as native
    /// code cannot be interrupted. Process-wide (one watchdog watches every call) and taking precedence
    /// over [`loader::DEADLINE_ENV`](crate::loader::DEADLINE_ENV); the default is
    /// [`loader::DEFAULT_DEADLINE`](crate::loader::DEFAULT_DEADLINE).
    pub fn set_plugin_deadline(&mut self, deadline: std::time::Duration) {
        crate::loader::set_call_deadline(deadline);
    }
}

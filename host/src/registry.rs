//! The ruleset registry: every ruleset the host knows, keyed by `id@version`, with where it came from.
//!
//! Statically linked rulesets ([`Registry::with_static`]) and runtime-loaded ones (the loader) live side by
//! side; nothing above the registry can tell them apart except by [`Entry::origin`].

use crate::loader::error::LoadReport;
use crate::loader::lock::LockFile;
use crate::loader::paths::{library_files, same_file};
use crate::loader::plugin::load_plugin;
use crate::loader::watchdog::init_deadline;
use crate::wasm::WasmOptions;
use coffer_core::DynRuleset;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use crate::origin::{Form, Origin, RegistryError};

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
    /// Which form wins when a ruleset is loaded both as a native library and as a WebAssembly module.
    prefer: Option<Form>,
    /// How the WebAssembly modules loaded from now on run.
    wasm: WasmOptions,
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
            let forms = (Form::of(&existing.origin), Form::of(&origin));
            if let (Some(first), Some(second)) = forms
                && first != second
            {
                return match self.prefer {
                    // The preferred form wins; the other is left out without an error.
                    Some(prefer) if prefer == second => {
                        self.entries.insert(key, Entry { ruleset, origin });
                        Ok(())
                    }
                    Some(_) => Ok(()),
                    None => Err(RegistryError::BothForms {
                        key,
                        first: existing.origin.clone(),
                        second: origin,
                    }),
                };
            }
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

    /// Which form of a ruleset to keep when a plugin directory holds it both as a native library and as
    /// a WebAssembly module (without a preference, the second one found is refused with
    /// [`RegistryError::BothForms`]).
    pub fn prefer(&mut self, form: Option<Form>) {
        self.prefer = form;
    }

    /// How the WebAssembly modules this registry loads from now on run: each call's deadline, each
    /// instance's memory cap, how many games share an instance (see [`WasmOptions`]).
    pub fn set_wasm_options(&mut self, options: WasmOptions) {
        self.wasm = options.clamped();
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

impl Registry {
    /// Loads every plugin library in `dirs` (in order; files of a directory by name) and registers their
    /// rulesets with [`Origin::Library`]. A refused directory, library or ruleset is skipped and reported;
    /// the rest load. With `lock`, only libraries pinned in it load (see [`LockFile`]). A directory named
    /// twice (or through a link) is read once, and a file already registered from the same file (another
    /// name for it) is skipped without an error.
    ///
    /// ```no_run
    /// use coffer_host::{Registry, loader};
    /// let mut registry = Registry::with_static().unwrap();
    /// let report = registry.load_dirs(&loader::plugin_dirs_from_env(), None);
    /// for error in &report.errors {
    ///     eprintln!("skipped: {error}");
    /// }
    /// ```
    pub fn load_dirs<P: AsRef<Path>>(&mut self, dirs: &[P], lock: Option<&LockFile>) -> LoadReport {
        let mut report = LoadReport::default();
        if let Err(e) = init_deadline() {
            report.errors.push(e);
        }
        let mut seen = BTreeSet::new();
        for dir in dirs {
            let dir = dir.as_ref();
            match library_files(dir) {
                Ok((canonical, files)) => {
                    if !seen.insert(canonical) {
                        continue;
                    }
                    for file in files {
                        self.load_file_into(&file, lock, &mut report);
                    }
                }
                Err(e) => report.errors.push(e),
            }
        }
        report
    }

    /// Loads one library file into the registry, as [`Registry::load_dirs`] does for each file.
    pub fn load_file(&mut self, file: &Path, lock: Option<&LockFile>) -> LoadReport {
        let mut report = LoadReport::default();
        if let Err(e) = init_deadline() {
            report.errors.push(e);
        }
        self.load_file_into(file, lock, &mut report);
        report
    }

    fn load_file_into(&mut self, file: &Path, lock: Option<&LockFile>, report: &mut LoadReport) {
        match load_plugin(file, lock, self.wasm) {
            Ok((rulesets, origin)) => {
                for ruleset in rulesets {
                    let description = ruleset.description();
                    let key = description.key();
                    let again = self
                        .get_exact(&description.id, &description.version)
                        .is_some_and(|e| {
                            e.origin.file().is_some_and(|p| same_file(p, file))
                                && Form::of(&e.origin) == Form::of(&origin)
                        });
                    if again {
                        continue;
                    }
                    match self.add(ruleset, origin.clone()) {
                        Ok(()) => report.loaded.push((key, file.to_owned())),
                        Err(e) => report.errors.push(e.into()),
                    }
                }
            }
            Err(e) => report.errors.push(e),
        }
    }
}

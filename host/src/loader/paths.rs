//! Where plugins come from and the path policy they obey: plugin directories, candidate library files,
//! the sshd-like ownership and permission checks of every path component, and file identities.

use coffer_core::abi;
use std::path::{Path, PathBuf};

use crate::loader::error::{LoadError, PathProblem};
#[cfg(unix)]
use crate::loader::sys;

/// The environment variable listing plugin directories (`PATH` syntax).
pub const PLUGIN_PATH_ENV: &str = "COFFER_PLUGIN_PATH";

/// The plugin directories listed in [`PLUGIN_PATH_ENV`] (empty entries skipped).
pub fn plugin_dirs_from_env() -> Vec<PathBuf> {
    std::env::var_os(PLUGIN_PATH_ENV)
        .map(|v| {
            std::env::split_paths(&v)
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        })
        .unwrap_or_default()
}

/// The declaration symbol expected in a library file: `coffer_plugin_<crate name>`.
///
/// ```
/// use std::path::Path;
/// let file = format!("{}coffer_charges{}", std::env::consts::DLL_PREFIX, std::env::consts::DLL_SUFFIX);
/// assert_eq!(coffer_host::loader::declaration_symbol(Path::new(&file)).unwrap(), "coffer_plugin_coffer_charges");
/// ```
pub fn declaration_symbol(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_suffix(std::env::consts::DLL_SUFFIX)?;
    let stem = stem
        .strip_prefix(std::env::consts::DLL_PREFIX)
        .unwrap_or(stem);
    let valid = !stem.is_empty()
        && stem
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    valid.then(|| format!("{}{}", abi::SYMBOL_PREFIX, stem.replace('-', "_")))
}

pub(crate) fn is_library_name(path: &Path) -> bool {
    path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
        [std::env::consts::DLL_SUFFIX, MODULE_SUFFIX]
            .iter()
            .any(|suffix| n.ends_with(suffix) && n.len() > suffix.len())
    })
}

/// The file name suffix of a WebAssembly ruleset module.
pub const MODULE_SUFFIX: &str = ".wasm";

/// Whether a plugin file is a WebAssembly module (by its suffix) rather than a native library.
pub fn is_module_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "wasm")
}

/// What a path checked by [`check_path`] names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathKind {
    /// A directory the loader lists: nobody else may add files to it, sticky bit or not.
    PluginDir,
    /// A library or lock file.
    File,
}

/// Checks a path like sshd's `StrictModes`: resolves symbolic links, then checks the resolved file or
/// directory and every directory above it up to the root. Each must be owned by root or the current user
/// and writable by nobody else: not by everyone, nor by a group other than the user's own. A directory
/// above the file that is writable by others is accepted only with the sticky bit (as `/tmp`), which keeps
/// others from renaming or removing what they do not own; the file or plugin directory itself never is.
/// Returns the resolved path.
///
/// # Errors
/// [`LoadError::Io`] if the path cannot be resolved, [`LoadError::WorldWritable`] for a world-writable
/// file or plugin directory itself, [`LoadError::UnsafePath`] naming the first offending component.
pub fn check_path(path: &Path) -> Result<PathBuf, LoadError> {
    let kind = match std::fs::metadata(path) {
        Ok(m) if m.is_dir() => PathKind::PluginDir,
        _ => PathKind::File,
    };
    check_path_as(path, kind)
}

pub(crate) fn check_path_as(path: &Path, kind: PathKind) -> Result<PathBuf, LoadError> {
    let io = |e| LoadError::Io {
        path: path.to_owned(),
        source: e,
    };
    let canonical = std::fs::canonicalize(path).map_err(io)?;
    let meta = std::fs::metadata(&canonical).map_err(io)?;
    if kind == PathKind::File && !meta.is_file() {
        return Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: canonical,
            problem: PathProblem::NotAFile,
        });
    }
    check_target(path, &meta)?;
    let mut dir = canonical.parent();
    while let Some(d) = dir {
        let meta = std::fs::metadata(d).map_err(|e| LoadError::Io {
            path: d.to_owned(),
            source: e,
        })?;
        if let Some(problem) = ancestor_problem(&meta) {
            return Err(LoadError::UnsafePath {
                path: path.to_owned(),
                component: d.to_owned(),
                problem,
            });
        }
        dir = d.parent();
    }
    Ok(canonical)
}

/// Who owns a path component and who may write to it.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct Ownership {
    /// Permission bits (`0o7777`).
    pub(crate) mode: u32,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// The user running the host: their user and group.
#[derive(Clone, Copy, Debug)]
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) struct User {
    pub(crate) uid: u32,
    pub(crate) gid: u32,
}

/// What is wrong with one component for `me`: the file or plugin directory itself (`above` false) may be
/// written by nobody but its owner (root or `me`) and `me`'s group; a directory above it may also be
/// writable by others if it has the sticky bit.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn component_problem(c: Ownership, me: User, above: bool) -> Option<PathProblem> {
    let sticky_above = above && c.mode & 0o1000 != 0;
    if c.mode & 0o002 != 0 && !sticky_above {
        return Some(PathProblem::WorldWritable { mode: c.mode });
    }
    if c.uid != 0 && c.uid != me.uid {
        return Some(PathProblem::Owner {
            uid: c.uid,
            expected: me.uid,
        });
    }
    if c.mode & 0o020 != 0 && c.gid != me.gid && !sticky_above {
        return Some(PathProblem::GroupWritable {
            mode: c.mode,
            gid: c.gid,
            expected: me.gid,
        });
    }
    None
}

#[cfg(unix)]
pub(crate) fn ownership(meta: &std::fs::Metadata) -> Ownership {
    use std::os::unix::fs::MetadataExt;
    Ownership {
        mode: meta.mode() & 0o7777,
        uid: meta.uid(),
        gid: meta.gid(),
    }
}

#[cfg(unix)]
pub(crate) fn current_user() -> User {
    User {
        uid: sys::uid(),
        gid: sys::gid(),
    }
}

/// The file or plugin directory itself (or an open file's metadata): owned by root or the current user,
/// writable by nobody else.
#[cfg(unix)]
pub(crate) fn check_target(path: &Path, meta: &std::fs::Metadata) -> Result<(), LoadError> {
    match component_problem(ownership(meta), current_user(), false) {
        None => Ok(()),
        Some(PathProblem::WorldWritable { mode }) => Err(LoadError::WorldWritable {
            path: path.to_owned(),
            mode,
        }),
        Some(problem) => Err(LoadError::UnsafePath {
            path: path.to_owned(),
            component: path.to_owned(),
            problem,
        }),
    }
}

#[cfg(not(unix))]
pub(crate) fn check_target(_: &Path, _: &std::fs::Metadata) -> Result<(), LoadError> {
    Ok(())
}

#[cfg(unix)]
pub(crate) fn ancestor_problem(meta: &std::fs::Metadata) -> Option<PathProblem> {
    component_problem(ownership(meta), current_user(), true)
}

#[cfg(not(unix))]
pub(crate) fn ancestor_problem(_: &std::fs::Metadata) -> Option<PathProblem> {
    None
}

/// The identity of a file: device and inode (elsewhere than Unix, a hash of its resolved path, `canonical`).
#[cfg(unix)]
pub(crate) fn file_identity(meta: &std::fs::Metadata, _canonical: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

#[cfg(not(unix))]
pub(crate) fn file_identity(_: &std::fs::Metadata, canonical: &Path) -> (u64, u64) {
    use std::hash::{BuildHasher, RandomState};
    static KEYS: std::sync::OnceLock<RandomState> = std::sync::OnceLock::new();
    (KEYS.get_or_init(RandomState::new).hash_one(canonical), 0)
}

/// The identity of the file a path names (after links).
pub(crate) fn identity_of(path: &Path) -> Option<(u64, u64)> {
    let canonical = std::fs::canonicalize(path).ok()?;
    let meta = std::fs::metadata(&canonical).ok()?;
    Some(file_identity(&meta, &canonical))
}

/// Whether two paths name the same file (after links).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (identity_of(a), identity_of(b)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The resolved path of a plugin directory and its candidate library files, by name, after checking the
/// directory and every directory above it ([`check_path`]).
pub(crate) fn library_files(dir: &Path) -> Result<(PathBuf, Vec<PathBuf>), LoadError> {
    let io = |e| LoadError::Io {
        path: dir.to_owned(),
        source: e,
    };
    let meta = std::fs::metadata(dir).map_err(io)?;
    if !meta.is_dir() {
        return Err(LoadError::NotADirectory {
            path: dir.to_owned(),
        });
    }
    let canonical = check_path_as(dir, PathKind::PluginDir)?;
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io)? {
        let path = entry.map_err(io)?.path();
        if is_library_name(&path) {
            files.push(path);
        }
    }
    files.sort();
    Ok((canonical, files))
}

#[cfg(test)]
mod tests {
    use super::{Ownership, PathProblem, User, component_problem};

    const ME: User = User {
        uid: 1000,
        gid: 1000,
    };

    fn own(mode: u32, uid: u32, gid: u32) -> Ownership {
        Ownership { mode, uid, gid }
    }

    #[test]
    fn a_component_owned_by_another_user_is_refused_one_owned_by_root_or_me_is_not() {
        for above in [false, true] {
            assert_eq!(
                component_problem(own(0o755, 1001, 1001), ME, above),
                Some(PathProblem::Owner {
                    uid: 1001,
                    expected: 1000
                })
            );
            assert_eq!(component_problem(own(0o755, 0, 0), ME, above), None);
            assert_eq!(component_problem(own(0o700, 1000, 1000), ME, above), None);
        }
    }

    #[test]
    fn a_component_writable_by_another_group_is_refused_by_my_own_group_it_is_not() {
        for above in [false, true] {
            assert_eq!(
                component_problem(own(0o775, 1000, 50), ME, above),
                Some(PathProblem::GroupWritable {
                    mode: 0o775,
                    gid: 50,
                    expected: 1000
                })
            );
            assert_eq!(component_problem(own(0o775, 1000, 1000), ME, above), None);
        }
    }

    #[test]
    fn a_sticky_world_writable_directory_is_accepted_only_above_the_file() {
        // As /tmp: root's, world-writable, sticky.
        let tmp = own(0o1777, 0, 0);
        assert_eq!(component_problem(tmp, ME, true), None);
        assert_eq!(
            component_problem(tmp, ME, false),
            Some(PathProblem::WorldWritable { mode: 0o1777 }),
            "a sticky plugin directory still lets anyone add a library"
        );
        assert_eq!(
            component_problem(own(0o777, 0, 0), ME, true),
            Some(PathProblem::WorldWritable { mode: 0o777 })
        );
        // Sticky does not excuse a foreign owner.
        assert!(matches!(
            component_problem(own(0o1777, 1001, 0), ME, true),
            Some(PathProblem::Owner { .. })
        ));
    }
}

//! Coffer's project tasks as a library, so the tests can run them too: `build_wasm` builds the
//! WebAssembly module of every ruleset crate of a cargo workspace (its members whose library is a
//! `cdylib`) and copies each to `<out>/<package>.wasm`.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The target the rulesets are built for.
pub const WASM_TARGET: &str = "wasm32-unknown-unknown";

/// What to say, in one line, when the WebAssembly target is not installed.
pub const MISSING_TARGET: &str = "the wasm32-unknown-unknown target is not installed: run `rustup target add wasm32-unknown-unknown`";

/// What to build and where.
#[derive(Clone, Debug)]
pub struct WasmBuild {
    /// The `Cargo.toml` of the workspace whose rulesets are built.
    pub manifest_path: PathBuf,
    /// The cargo target directory to build in; `None` for the workspace's own (`cargo metadata`'s).
    pub target_dir: Option<PathBuf>,
    /// Where the modules are written; `None` for `wasm` in the target directory.
    pub out_dir: Option<PathBuf>,
    /// The packages to build (each must be a ruleset of the workspace); empty for every ruleset.
    pub packages: Vec<String>,
    /// The cargo to run; `None` for the one that runs this process (`CARGO`), else `cargo`.
    pub cargo: Option<OsString>,
}

impl WasmBuild {
    /// Every ruleset of the workspace whose manifest is `manifest_path`, built in its own target directory
    /// and written to its `wasm` folder.
    pub fn new(manifest_path: impl Into<PathBuf>) -> WasmBuild {
        WasmBuild {
            manifest_path: manifest_path.into(),
            target_dir: None,
            out_dir: None,
            packages: Vec::new(),
            cargo: None,
        }
    }
}

/// A module written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Built {
    /// The ruleset's package name (`coffer-charges`).
    pub package: String,
    /// The module written (`<out>/coffer-charges.wasm`).
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// What a build is doing, for a progress display.
#[derive(Debug)]
pub enum Progress<'a> {
    /// Cargo is about to build these packages.
    Building(&'a [String]),
    /// A line cargo wrote to its error stream (`Compiling ...`, warnings).
    Cargo(&'a str),
    /// A module was written.
    Wrote(&'a Built),
}

impl fmt::Display for Progress<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Progress::Building(packages) => write!(
                f,
                "building {} {} for {WASM_TARGET}...",
                packages.len(),
                if packages.len() == 1 {
                    "ruleset"
                } else {
                    "rulesets"
                }
            ),
            Progress::Cargo(line) => f.write_str(line),
            Progress::Wrote(built) => write!(
                f,
                "wrote {} ({})",
                built.path.display(),
                human_size(built.bytes)
            ),
        }
    }
}

/// A size in bytes in words a person reads: `912 bytes`, `84.2 KiB`, `1.3 MiB`.
pub fn human_size(bytes: u64) -> String {
    const KIB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KIB * KIB {
        format!("{:.1} KiB", b / KIB)
    } else {
        format!("{:.1} MiB", b / (KIB * KIB))
    }
}

/// Why a build failed, in plain words.
#[derive(Debug)]
pub enum WasmError {
    /// The wasm32-unknown-unknown target is not installed ([`MISSING_TARGET`]).
    MissingTarget,
    /// A program could not be started.
    Spawn {
        /// The program.
        program: String,
        /// Why.
        error: std::io::Error,
    },
    /// `cargo metadata` failed or answered something unreadable.
    Metadata(String),
    /// The workspace has no ruleset (no member whose library is a `cdylib`).
    NoRulesets,
    /// A package asked for is not a member of the workspace.
    UnknownPackage {
        /// The package asked for.
        package: String,
        /// The workspace's rulesets.
        rulesets: Vec<String>,
    },
    /// A package asked for is a member but not a ruleset.
    NotARuleset(String),
    /// Cargo failed to build; the end of what it wrote.
    Cargo(String),
    /// Cargo succeeded but a module is not where it should be.
    NotBuilt(PathBuf),
    /// A file or folder could not be read or written.
    Io {
        /// What was being done.
        what: String,
        /// The path.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

impl fmt::Display for WasmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WasmError::MissingTarget => f.write_str(MISSING_TARGET),
            WasmError::Spawn { program, error } => write!(f, "cannot run {program}: {error}"),
            WasmError::Metadata(why) => write!(f, "cannot read the workspace: {why}"),
            WasmError::NoRulesets => f.write_str(
                "the workspace has no ruleset (no member whose library has crate-type cdylib)",
            ),
            WasmError::UnknownPackage { package, rulesets } => write!(
                f,
                "no package {package} in the workspace; its rulesets are: {}",
                rulesets.join(", ")
            ),
            WasmError::NotARuleset(package) => write!(
                f,
                "{package} is not a ruleset: its library does not have crate-type cdylib"
            ),
            WasmError::Cargo(tail) => write!(f, "cargo could not build the rulesets:\n{tail}"),
            WasmError::NotBuilt(path) => {
                write!(f, "cargo finished but did not write {}", path.display())
            }
            WasmError::Io { what, path, error } => {
                write!(f, "cannot {what} {}: {error}", path.display())
            }
        }
    }
}

impl std::error::Error for WasmError {}

/// A ruleset of a workspace: its package name and its library's crate name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ruleset {
    /// The package name (`coffer-charges`).
    pub package: String,
    /// The library's crate name (`coffer_charges`), the stem of the module cargo writes.
    pub crate_name: String,
}

/// What `cargo metadata` says of a workspace: its rulesets, its other members and its target directory.
#[derive(Clone, Debug)]
pub struct Workspace {
    /// The members whose library has crate-type `cdylib`, by package name.
    pub rulesets: Vec<Ruleset>,
    /// The other members' package names.
    pub others: Vec<String>,
    /// The workspace's cargo target directory.
    pub target_dir: PathBuf,
}

fn cargo_program(options: &WasmBuild) -> OsString {
    options
        .cargo
        .clone()
        .or_else(|| std::env::var_os("CARGO"))
        .unwrap_or_else(|| "cargo".into())
}

/// Reads the workspace of `manifest_path` with `cargo metadata --no-deps`.
pub fn workspace(cargo: &OsString, manifest_path: &Path) -> Result<Workspace, WasmError> {
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--manifest-path",
        ])
        .arg(manifest_path)
        .stdin(Stdio::null())
        .output()
        .map_err(|error| WasmError::Spawn {
            program: cargo.to_string_lossy().into_owned(),
            error,
        })?;
    if !output.status.success() {
        return Err(WasmError::Metadata(
            String::from_utf8_lossy(&output.stderr).trim().to_owned(),
        ));
    }
    let json: serde_json::Value = serde_json::from_slice(&output.stdout)
        .map_err(|e| WasmError::Metadata(format!("cargo metadata wrote no JSON: {e}")))?;
    parse_workspace(&json)
}

/// The workspace in `cargo metadata`'s JSON (format version 1).
pub fn parse_workspace(json: &serde_json::Value) -> Result<Workspace, WasmError> {
    let unreadable = |what: &str| WasmError::Metadata(format!("cargo metadata gave no {what}"));
    let members: BTreeSet<&str> = json["workspace_members"]
        .as_array()
        .ok_or_else(|| unreadable("workspace members"))?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    let target_dir = json["target_directory"]
        .as_str()
        .ok_or_else(|| unreadable("target directory"))?;
    let packages = json["packages"]
        .as_array()
        .ok_or_else(|| unreadable("packages"))?;
    let mut rulesets = Vec::new();
    let mut others = Vec::new();
    for package in packages {
        let (Some(id), Some(name)) = (package["id"].as_str(), package["name"].as_str()) else {
            return Err(unreadable("package id or name"));
        };
        if !members.contains(id) {
            continue;
        }
        let cdylib = package["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| has(&t["crate_types"], "cdylib") && has(&t["kind"], "cdylib"));
        match cdylib.and_then(|t| t["name"].as_str()) {
            Some(lib) => rulesets.push(Ruleset {
                package: name.to_owned(),
                crate_name: lib.replace('-', "_"),
            }),
            None => others.push(name.to_owned()),
        }
    }
    rulesets.sort_by(|a, b| a.package.cmp(&b.package));
    others.sort();
    Ok(Workspace {
        rulesets,
        others,
        target_dir: PathBuf::from(target_dir),
    })
}

fn has(list: &serde_json::Value, word: &str) -> bool {
    list.as_array()
        .is_some_and(|l| l.iter().any(|v| v.as_str() == Some(word)))
}

/// The rulesets of `workspace` that `asked` names (all of them when `asked` is empty), in the
/// workspace's order, each once.
pub fn choose(workspace: &Workspace, asked: &[String]) -> Result<Vec<Ruleset>, WasmError> {
    if workspace.rulesets.is_empty() {
        return Err(WasmError::NoRulesets);
    }
    for package in asked {
        if workspace.rulesets.iter().any(|r| &r.package == package) {
            continue;
        }
        if workspace.others.contains(package) {
            return Err(WasmError::NotARuleset(package.clone()));
        }
        return Err(WasmError::UnknownPackage {
            package: package.clone(),
            rulesets: workspace
                .rulesets
                .iter()
                .map(|r| r.package.clone())
                .collect(),
        });
    }
    Ok(workspace
        .rulesets
        .iter()
        .filter(|r| asked.is_empty() || asked.contains(&r.package))
        .cloned()
        .collect())
}

/// Whether `rustup` (if there is one) says the WebAssembly target is missing from the toolchain used in
/// `dir`. No rustup, or a rustup that cannot answer, says nothing: cargo's own error is read then.
pub fn rustup_lacks_target(dir: &Path) -> bool {
    let Ok(output) = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .current_dir(dir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return false;
    };
    output.status.success() && !lists_target(&String::from_utf8_lossy(&output.stdout))
}

/// Whether the output of `rustup target list --installed` lists the WebAssembly target.
pub fn lists_target(installed: &str) -> bool {
    installed.lines().any(|l| l.trim() == WASM_TARGET)
}

/// Whether cargo's error output says the WebAssembly target's standard library is missing.
pub fn says_target_missing(cargo_stderr: &str) -> bool {
    cargo_stderr.contains("target may not be installed")
        || (cargo_stderr.contains(WASM_TARGET)
            && (cargo_stderr.contains("can't find crate for `core`")
                || cargo_stderr.contains("can't find crate for `std`")))
}

/// Builds the chosen rulesets' modules with one cargo invocation (`cargo build --profile wasm-release --target
/// wasm32-unknown-unknown --lib -p ...`) and writes each to `<out>/<package>.wasm`, telling `progress`
/// what it does. Returns the modules written, in the workspace's order.
pub fn build_wasm(
    options: &WasmBuild,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<Vec<Built>, WasmError> {
    let cargo = cargo_program(options);
    let workspace = workspace(&cargo, &options.manifest_path)?;
    let chosen = choose(&workspace, &options.packages)?;
    let manifest_dir = options
        .manifest_path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if rustup_lacks_target(manifest_dir) {
        return Err(WasmError::MissingTarget);
    }
    let target_dir = options
        .target_dir
        .clone()
        .unwrap_or_else(|| workspace.target_dir.clone());
    let out_dir = options
        .out_dir
        .clone()
        .unwrap_or_else(|| target_dir.join("wasm"));
    let names: Vec<String> = chosen.iter().map(|r| r.package.clone()).collect();
    progress(&Progress::Building(&names));
    run_cargo_build(&cargo, options, &target_dir, &names, progress)?;
    std::fs::create_dir_all(&out_dir).map_err(|error| WasmError::Io {
        what: "create the folder".into(),
        path: out_dir.clone(),
        error,
    })?;
    let release = target_dir.join(WASM_TARGET).join(WASM_PROFILE);
    let mut built = Vec::new();
    for ruleset in &chosen {
        let module = copy_module(&release, &out_dir, ruleset)?;
        progress(&Progress::Wrote(&module));
        built.push(module);
    }
    Ok(built)
}

/// The cargo profile the modules are built with: the workspace's `release` without debug information
/// (`[profile.wasm-release]` in the workspace's `Cargo.toml`), so a module is a few hundred KiB to 2 MiB, not
/// ten, and compiles in the host that much faster.
pub const WASM_PROFILE: &str = "wasm-release";

/// Runs the one cargo build, passing each line cargo writes to `progress`.
fn run_cargo_build(
    cargo: &OsString,
    options: &WasmBuild,
    target_dir: &Path,
    packages: &[String],
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Result<(), WasmError> {
    let mut command = Command::new(cargo);
    command
        .args([
            "build",
            "--profile",
            WASM_PROFILE,
            "--lib",
            "--target",
            WASM_TARGET,
        ])
        .arg("--manifest-path")
        .arg(&options.manifest_path)
        .env("CARGO_TARGET_DIR", target_dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for package in packages {
        command.args(["-p", package]);
    }
    let spawn_error = |error| WasmError::Spawn {
        program: cargo.to_string_lossy().into_owned(),
        error,
    };
    let mut child = command.spawn().map_err(spawn_error)?;
    let mut said = Vec::new();
    if let Some(stderr) = child.stderr.take() {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            progress(&Progress::Cargo(&line));
            said.push(line);
        }
    }
    let status = child.wait().map_err(spawn_error)?;
    if status.success() {
        return Ok(());
    }
    let text = said.join("\n");
    if says_target_missing(&text) {
        return Err(WasmError::MissingTarget);
    }
    let tail = said.len().saturating_sub(40);
    Err(WasmError::Cargo(said[tail..].join("\n")))
}

/// Copies one built module to `<out>/<package>.wasm` (through a temporary file, so a reader never sees
/// half a module).
fn copy_module(release: &Path, out_dir: &Path, ruleset: &Ruleset) -> Result<Built, WasmError> {
    let from = release.join(format!("{}.wasm", ruleset.crate_name));
    if !from.is_file() {
        return Err(WasmError::NotBuilt(from));
    }
    let to = out_dir.join(format!("{}.wasm", ruleset.package));
    let partial = out_dir.join(format!(
        "{}.wasm.{}.partial",
        ruleset.package,
        std::process::id()
    ));
    let io = |what: &str, path: &Path| {
        let (what, path) = (what.to_owned(), path.to_owned());
        move |error| WasmError::Io { what, path, error }
    };
    let bytes = std::fs::copy(&from, &partial).map_err(io("write", &partial))?;
    std::fs::rename(&partial, &to).map_err(io("write", &to))?;
    Ok(Built {
        package: ruleset.package.clone(),
        path: to,
        bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata() -> serde_json::Value {
        serde_json::json!({
            "workspace_members": ["id-a", "id-b", "id-c"],
            "target_directory": "/w/target",
            "packages": [
                {"id": "id-b", "name": "rules-b", "targets": [
                    {"name": "rules_b", "kind": ["cdylib", "rlib"], "crate_types": ["cdylib", "rlib"]},
                    {"name": "bench", "kind": ["bench"], "crate_types": ["bin"]}
                ]},
                {"id": "id-a", "name": "a-lib", "targets": [
                    {"name": "a_lib", "kind": ["lib"], "crate_types": ["lib"]}
                ]},
                {"id": "id-c", "name": "rules-a", "targets": [
                    {"name": "rules_a", "kind": ["cdylib"], "crate_types": ["cdylib"]}
                ]},
                {"id": "id-path-dep", "name": "outside", "targets": [
                    {"name": "outside", "kind": ["cdylib"], "crate_types": ["cdylib"]}
                ]}
            ]
        })
    }

    fn names(rulesets: &[Ruleset]) -> Vec<&str> {
        rulesets.iter().map(|r| r.package.as_str()).collect()
    }

    #[test]
    fn rulesets_are_the_members_with_a_cdylib_library() {
        let ws = parse_workspace(&metadata()).unwrap();
        assert_eq!(names(&ws.rulesets), ["rules-a", "rules-b"]);
        assert_eq!(ws.rulesets[1].crate_name, "rules_b");
        assert_eq!(ws.others, ["a-lib"]);
        assert_eq!(ws.target_dir, PathBuf::from("/w/target"));
    }

    #[test]
    fn choosing_filters_dedupes_and_refuses_what_is_no_ruleset() {
        let ws = parse_workspace(&metadata()).unwrap();
        assert_eq!(names(&choose(&ws, &[]).unwrap()), ["rules-a", "rules-b"]);
        let asked = ["rules-b".to_owned(), "rules-b".to_owned()];
        assert_eq!(names(&choose(&ws, &asked).unwrap()), ["rules-b"]);
        let err = choose(&ws, &["a-lib".to_owned()]).unwrap_err();
        assert!(matches!(err, WasmError::NotARuleset(_)), "{err}");
        let err = choose(&ws, &["outside".to_owned()]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "no package outside in the workspace; its rulesets are: rules-a, rules-b"
        );
        let empty = Workspace {
            rulesets: Vec::new(),
            ..ws
        };
        assert!(matches!(choose(&empty, &[]), Err(WasmError::NoRulesets)));
    }

    #[test]
    fn a_missing_target_is_recognised_from_rustup_and_from_cargo() {
        assert!(lists_target(
            "wasm32-unknown-unknown\nx86_64-unknown-linux-gnu\n"
        ));
        assert!(!lists_target("x86_64-unknown-linux-gnu\n"));
        let cargo = "error[E0463]: can't find crate for `core`\n  |\n  = note: the `wasm32-unknown-unknown` \
                     target may not be installed\n  = help: consider downloading the target with \
                     `rustup target add wasm32-unknown-unknown`";
        assert!(says_target_missing(cargo));
        assert!(!says_target_missing(
            "error[E0308]: mismatched types\nerror: could not compile `rules-a`"
        ));
        assert_eq!(
            WasmError::MissingTarget.to_string(),
            "the wasm32-unknown-unknown target is not installed: run `rustup target add wasm32-unknown-unknown`"
        );
    }

    #[test]
    fn sizes_read_plainly() {
        assert_eq!(human_size(912), "912 bytes");
        assert_eq!(human_size(86_221), "84.2 KiB");
        assert_eq!(human_size(3 * 1024 * 1024 / 2), "1.5 MiB");
    }
}

//! Helpers shared by the cross-crate tests: where the built plugin libraries are, building the fixture
//! plugins (an out-of-workspace cargo workspace in `tests/fixtures`), and loading rulesets at runtime.

use coffer_core::DynRuleset;
use coffer_host::{Origin, Registry};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

// Link the built-in plugin crates so their static registrations are in every test binary.
use coffer_charges as _;
use coffer_command_tokens as _;
use coffer_story_acts as _;

/// The built-in rulesets: id and crate name (the library is `lib<crate>.so`).
pub const BUILTIN: [(&str, &str); 3] = [
    ("story-acts", "coffer_story_acts"),
    ("charges", "coffer_charges"),
    ("command-tokens", "coffer_command_tokens"),
];

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

/// The cargo profile directory the running binary was built into (`target/<profile>`), found from the
/// running executable (`target/<profile>/deps/<binary>`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let deps = exe.parent().expect("the binary is in a directory");
    let dir = if deps.file_name().is_some_and(|n| n == "deps") {
        deps.parent().expect("deps has a parent")
    } else {
        deps
    };
    dir.to_owned()
}

/// The cargo target directory (`target`).
pub fn target_dir() -> PathBuf {
    profile_dir()
        .parent()
        .expect("the profile directory has a parent")
        .to_owned()
}

/// The file name of a library for a crate name on this platform (`libcoffer_charges.so`).
pub fn library_file_name(crate_name: &str) -> String {
    format!(
        "{}{crate_name}{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// Runs a cargo command to completion, panicking with its output if it fails.
pub fn run_cargo(mut command: Command, what: &str) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo to {what}: {e}"));
    assert!(
        output.status.success(),
        "cargo failed to {what}:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The target directory shared by every cargo build these tests start (fixtures, the template), so the
/// dependencies compile once: `target/fixtures`.
pub fn fixture_target_dir() -> PathBuf {
    target_dir().join("fixtures")
}

/// Builds the fixture plugin workspace (once per test binary run) and returns the directory holding its
/// libraries. Panics with cargo's output if the build fails: the tests never skip silently.
pub fn fixture_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let mut command = cargo();
        command
            .arg("build")
            .arg("--quiet")
            .arg("--manifest-path")
            .arg(repo_root().join("tests/fixtures/Cargo.toml"))
            .env("CARGO_TARGET_DIR", fixture_target_dir());
        run_cargo(command, "build the fixture plugins in tests/fixtures");
        fixture_target_dir().join("debug")
    })
}

/// The built fixture library of a fixture crate (`good`, `panicky`, `nodecl`, `badabi`, `badcore`).
pub fn fixture_library(name: &str) -> PathBuf {
    let path = fixture_dir().join(library_file_name(&format!("coffer_fixture_{name}")));
    assert!(
        path.is_file(),
        "fixture library {} was not built",
        path.display()
    );
    path
}

/// Set (CI sets it) when the WebAssembly builds must run: a missing wasm32-unknown-unknown target then
/// fails the tests that need it instead of skipping them.
pub const WASM_REQUIRED_ENV: &str = "COFFER_WASM_REQUIRED";

/// Runs one WebAssembly build through the xtask library. `None` when the wasm32-unknown-unknown target is
/// missing and not required: the one line saying how to install it is printed (once per test process)
/// and the caller skips. Panics with that line when `COFFER_WASM_REQUIRED` is set, and with the build's
/// error on any other failure.
fn build_wasm_or_skip(options: &xtask::WasmBuild, what: &str) -> Option<Vec<xtask::Built>> {
    static SAID: std::sync::Once = std::sync::Once::new();
    match xtask::build_wasm(options, &mut |_| {}) {
        Ok(built) => Some(built),
        Err(xtask::WasmError::MissingTarget) => {
            if std::env::var_os(WASM_REQUIRED_ENV).is_some_and(|v| !v.is_empty()) {
                panic!("{}", xtask::MISSING_TARGET);
            }
            SAID.call_once(|| println!("{}", xtask::MISSING_TARGET));
            None
        }
        Err(error) => panic!("cannot build {what} for WebAssembly: {error}"),
    }
}

/// Builds the WebAssembly module of every ruleset crate of the workspace (once per test process, as
/// `cargo xtask wasm` does) and returns the directory holding `<package>.wasm`, or `None` if the
/// wasm32-unknown-unknown target is missing and not required (see [`WASM_REQUIRED_ENV`]; the line saying
/// how to install it is printed, and the caller skips).
///
/// The build has a target directory of its own, `target/wasm-tests`: the `cargo test` that runs these
/// tests holds the lock on the outer one.
pub fn wasm_modules() -> Option<PathBuf> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let build_dir = target_dir().join("wasm-tests");
        let mut options = xtask::WasmBuild::new(repo_root().join("Cargo.toml"));
        options.target_dir = Some(build_dir.clone());
        options.out_dir = Some(build_dir.join("wasm"));
        build_wasm_or_skip(&options, "the workspace's rulesets")?;
        Some(build_dir.join("wasm"))
    })
    .clone()
}

/// The package names of the workspace's ruleset crates (the members whose library is a `cdylib`), read
/// with `cargo metadata` as the xtask reads them.
pub fn ruleset_packages() -> Vec<String> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    xtask::workspace(&cargo, &repo_root().join("Cargo.toml"))
        .unwrap_or_else(|e| panic!("cannot read the workspace: {e}"))
        .rulesets
        .into_iter()
        .map(|r| r.package)
        .collect()
}

/// Builds the WebAssembly module of the fixture crate `coffer-fixture-<name>` of the fixture workspace
/// `tests/fixtures` (outside this workspace) into `target/fixtures-wasm`, and returns the module's path,
/// or `None` if the wasm32-unknown-unknown target is missing and not required (as [`wasm_modules`]).
/// Panics if the crate does not build.
pub fn wasm_fixture(name: &str) -> Option<PathBuf> {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _building = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let build_dir = target_dir().join("fixtures-wasm");
    let mut options = xtask::WasmBuild::new(repo_root().join("tests/fixtures/Cargo.toml"));
    options.target_dir = Some(build_dir.clone());
    options.out_dir = Some(build_dir.join("wasm"));
    options.packages = vec![format!("coffer-fixture-{name}")];
    let built = build_wasm_or_skip(&options, &format!("the fixture {name}"))?;
    let module = built
        .into_iter()
        .next()
        .unwrap_or_else(|| panic!("building the fixture {name} wrote no module"));
    Some(module.path)
}

/// Copies library files into a fresh private directory (mode 0700), as a user's plugin directory.
pub fn plugin_dir_with(files: &[&Path]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary directory");
    for file in files {
        std::fs::copy(
            file,
            dir.path().join(file.file_name().expect("a file name")),
        )
        .expect("copy a library");
    }
    dir
}

/// The library of a built-in plugin crate built with the running test binary
/// (`target/<profile>/deps/lib<crate>.so`, rebuilt by cargo with every `cargo test`). If it is missing, it
/// is built with cargo; a failure panics.
pub fn builtin_library(crate_name: &str) -> PathBuf {
    let file = library_file_name(crate_name);
    let fresh = profile_dir().join("deps").join(&file);
    if fresh.is_file() {
        return fresh;
    }
    let package = crate_name.replace('_', "-");
    let mut command = cargo();
    command
        .arg("build")
        .arg("--quiet")
        .arg("-p")
        .arg(&package)
        .arg("--lib")
        .current_dir(repo_root());
    if profile_dir().file_name().is_some_and(|n| n == "release") {
        command.arg("--release");
    }
    command.env("CARGO_TARGET_DIR", target_dir());
    run_cargo(command, &format!("build the {package} library"));
    let uplifted = profile_dir().join(&file);
    assert!(
        fresh.is_file() || uplifted.is_file(),
        "built {package} but found neither {} nor {}",
        fresh.display(),
        uplifted.display()
    );
    if fresh.is_file() { fresh } else { uplifted }
}

/// The statically linked ruleset `id`, if registered.
pub fn static_ruleset(id: &str) -> Option<Arc<dyn DynRuleset>> {
    let registry = Registry::with_static().expect("no duplicate static rulesets");
    registry.get(id).ok().map(|e| Arc::clone(&e.ruleset))
}

/// The ruleset `id` loaded at runtime from `library`, checking that it came from that library.
///
/// # Panics
/// If the library does not load or does not provide `id`.
pub fn runtime_ruleset(library: &Path, id: &str) -> Arc<dyn DynRuleset> {
    let mut registry = Registry::new();
    let report = registry.load_file(library, None);
    assert!(
        report.errors.is_empty(),
        "loading {}: {:?}",
        library.display(),
        report.errors
    );
    let entry = registry
        .get(id)
        .unwrap_or_else(|e| panic!("{} does not provide {id}: {e}", library.display()));
    assert_eq!(entry.origin, Origin::Library(library.to_owned()));
    Arc::clone(&entry.ruleset)
}

/// The built-in ruleset `id` loaded at runtime from its library built with this test binary.
pub fn builtin_runtime_ruleset(id: &str) -> Arc<dyn DynRuleset> {
    let (_, crate_name) = BUILTIN
        .iter()
        .find(|(i, _)| *i == id)
        .unwrap_or_else(|| panic!("{id} is not built in"));
    runtime_ruleset(&builtin_library(crate_name), id)
}

/// A small deterministic random source for choosing actions the same way on both sides (SplitMix64).
#[derive(Clone, Debug)]
pub struct Chooser(u64);

impl Chooser {
    /// From a seed.
    pub fn new(seed: u64) -> Chooser {
        Chooser(seed)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z % n as u64) as usize
    }
}

/// Set in a child process started by [`run_child_test`]: the test named runs its child half.
pub const CHILD_ENV: &str = "COFFER_TEST_CHILD";

/// Runs the test `name` (its full path, `loader::some_test`) of this test binary alone in a child
/// process, with `CHILD_ENV` and `envs` set, and returns its output: for tests of what ends a process
/// (a plugin that spins past its deadline, crashes or exits). The named test does its work only when
/// `CHILD_ENV` is set.
pub fn run_child_test(name: &str, envs: &[(&str, &std::ffi::OsStr)]) -> std::process::Output {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    let mut command = Command::new(exe);
    command
        .args([name, "--exact", "--nocapture", "--test-threads=1", "-q"])
        .env(CHILD_ENV, "1")
        .stdin(std::process::Stdio::null());
    for (key, value) in envs {
        command.env(key, value);
    }
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run the child test {name}: {e}"))
}

/// Whether this process is a child started by [`run_child_test`].
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV).is_some()
}

/// The ruleset guide's examples with their hidden setup (`tests/guide.md`), compiled as doctests
/// (`cargo test -p coffer-tests --doc`); `tests/it/guide.rs` checks the guide shows exactly these.
#[cfg(doctest)]
#[doc = include_str!("guide.md")]
pub struct WritingARulesetGuide;

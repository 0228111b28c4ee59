//! Probing the libraries of a directory each in a child process ([`check_dir`]), so that one whose
//! initialisers crash the process is named instead of taking the host down, and the child's side of it.

use crate::origin::RegistryError;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};

use crate::loader::error::LoadError;
use crate::loader::lock::LockFile;
use crate::loader::paths::{library_files, same_file};
use crate::loader::plugin::load_plugin;
use crate::loader::watchdog::init_deadline;

/// The environment variable that makes a process a probe of one library ([`probe_child_main`]).
pub const PROBE_ENV: &str = "COFFER_PROBE_LIBRARY";

/// With [`PROBE_ENV`]: the lock file the probe pins the library with.
pub const PROBE_LOCK_ENV: &str = "COFFER_PROBE_LOCK";

/// What probing one library in a child process found ([`check_dir`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    /// The library (or the directory, when the directory itself was refused).
    pub path: PathBuf,
    /// What happened.
    pub verdict: Verdict,
}

/// How a probed library fared.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// It passed every check and registered these rulesets (`id@version`).
    Loads {
        /// The rulesets.
        rulesets: Vec<String>,
    },
    /// The loader refused it (or the directory); the reason, as the loader says it.
    Refused {
        /// Why.
        reason: String,
    },
    /// The process loading it died.
    Crashed {
        /// How: the signal or exit status, and the last message it wrote.
        how: String,
    },
}

impl CheckReport {
    /// Whether the library loads.
    pub fn loads(&self) -> bool {
        matches!(self.verdict, Verdict::Loads { .. })
    }
}

impl fmt::Display for CheckReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        match &self.verdict {
            Verdict::Loads { rulesets } if rulesets.is_empty() => {
                write!(f, "{path}: loads (it registers no ruleset)")
            }
            Verdict::Loads { rulesets } => write!(f, "{path}: loads: {}", rulesets.join(", ")),
            Verdict::Refused { reason } => write!(f, "{path}: refused: {reason}"),
            Verdict::Crashed { how } => {
                write!(f, "{path}: crashed the process that loaded it: {how}")
            }
        }
    }
}

/// How [`check_dir`] starts a probe: a program that calls [`probe_child_main`] first thing (the `coffer`
/// command does), with its arguments; the library to probe is passed in [`PROBE_ENV`].
#[derive(Debug, Clone)]
pub struct ProbeCommand {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
}

impl ProbeCommand {
    /// This executable again, without arguments: for a program whose `main` calls [`probe_child_main`].
    ///
    /// # Errors
    /// When the running executable cannot be found.
    pub fn current_exe() -> std::io::Result<ProbeCommand> {
        Ok(ProbeCommand::new(
            std::env::current_exe()?,
            Vec::<OsString>::new(),
        ))
    }

    /// `program` with `args`.
    pub fn new(
        program: impl Into<PathBuf>,
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> ProbeCommand {
        ProbeCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// The line a probe writes on stdout: this prefix, a tab, `loads` or `refused`, a tab, the rest.
pub(crate) const PROBE_LINE: &str = "coffer-probe";

/// Probes every library of `dir` in its own child process, so that a library that crashes the process
/// loading it (its initialisers, or a declaration no check can catch) is named instead of taking the
/// caller down. `lock` pins the libraries as [`LockFile`] does. A refused directory gives one report for
/// the directory.
pub fn check_dir(dir: &Path, lock: Option<&Path>, probe: &ProbeCommand) -> Vec<CheckReport> {
    let files = match library_files(dir) {
        Ok((_, files)) => files,
        Err(e) => {
            return vec![CheckReport {
                path: dir.to_owned(),
                verdict: Verdict::Refused {
                    reason: one_line(&e.to_string()),
                },
            }];
        }
    };
    files
        .into_iter()
        .map(|file| {
            let verdict = probe_one(&file, lock, probe);
            CheckReport {
                path: file,
                verdict,
            }
        })
        .collect()
}

pub(crate) fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(crate) fn probe_one(file: &Path, lock: Option<&Path>, probe: &ProbeCommand) -> Verdict {
    let mut command = std::process::Command::new(&probe.program);
    command
        .args(&probe.args)
        .env(PROBE_ENV, file)
        .env_remove(PROBE_LOCK_ENV)
        .stdin(std::process::Stdio::null());
    if let Some(lock) = lock {
        command.env(PROBE_LOCK_ENV, lock);
    }
    let output = match command.output() {
        Ok(output) => output,
        Err(e) => {
            return Verdict::Crashed {
                how: format!("the probe {} could not start: {e}", probe.program.display()),
            };
        }
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let answer = stdout.lines().find_map(|l| {
        l.strip_prefix(PROBE_LINE)
            .and_then(|rest| rest.strip_prefix('\t'))
    });
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last_words = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .or_else(|| stderr.lines().rev().find(|l| !l.trim().is_empty()))
        .map(|l| format!(": {}", l.trim()))
        .unwrap_or_default();
    match answer.and_then(|a| a.split_once('\t')) {
        Some(("loads", keys)) if output.status.success() => Verdict::Loads {
            rulesets: keys.split_whitespace().map(str::to_owned).collect(),
        },
        Some(("refused", reason)) => Verdict::Refused {
            reason: reason.to_owned(),
        },
        _ => Verdict::Crashed {
            how: format!("{}{last_words}", exit_description(&output.status)),
        },
    }
}

pub(crate) fn exit_description(status: &std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                6 => " (SIGABRT)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL)",
                11 => " (SIGSEGV)",
                _ => "",
            };
            return format!("killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code} without an answer"),
        None => "ended without an answer".to_owned(),
    }
}

/// The child side of [`check_dir`]: when [`PROBE_ENV`] names a library, loads it (pinned by
/// [`PROBE_LOCK_ENV`]'s lock file if set) with every check, writes one line on stdout saying whether it
/// loads, and returns the exit status to end the process with (0 loads, 1 refused). Returns `None`, doing
/// nothing, when [`PROBE_ENV`] is not set. A program that wants [`ProbeCommand::current_exe`] to work
/// calls it first thing in `main`.
pub fn probe_child_main() -> Option<i32> {
    let path = PathBuf::from(std::env::var_os(PROBE_ENV)?);
    let refused = |reason: &str| {
        println!("{PROBE_LINE}\trefused\t{}", one_line(reason));
        Some(1)
    };
    let lock = match std::env::var_os(PROBE_LOCK_ENV) {
        Some(lock) => match LockFile::read(Path::new(&lock)) {
            Ok(lock) => Some(lock),
            Err(e) => return refused(&e.to_string()),
        },
        None => None,
    };
    // Loads as `Registry::load_file` into an empty registry would (the registry is above the loader). A
    // bad deadline in the environment is not the library's fault (the default applies).
    let _ = init_deadline();
    let (rulesets, origin) =
        match load_plugin(&path, lock.as_ref(), crate::wasm::WasmOptions::default()) {
            Ok(loaded) => loaded,
            Err(e) => return refused(&e.to_string()),
        };
    let mut keys: Vec<String> = Vec::new();
    for ruleset in rulesets {
        let key = ruleset.description().key();
        if keys.contains(&key) {
            // Registered already from this very file: skipped, as the registry skips it.
            if same_file(&path, &path) {
                continue;
            }
            let duplicate = RegistryError::Duplicate {
                key,
                first: origin.clone(),
                second: origin.clone(),
            };
            return refused(&LoadError::from(duplicate).to_string());
        }
        keys.push(key);
    }
    println!("{PROBE_LINE}\tloads\t{}", keys.join(" "));
    Some(0)
}

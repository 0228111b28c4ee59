//! `cargo xtask`: Coffer's project tasks (the alias is in `.cargo/config.toml`). Exit status 0 when the
//! task is done, 1 when it failed, 2 when the command line is wrong.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use xtask::{Progress, WasmBuild, build_wasm};

const HELP: &str = "\
cargo xtask: Coffer's project tasks

Usage:
  cargo xtask wasm [--out DIR] [-p PACKAGE]...
  cargo xtask help

Tasks:
  wasm    Build the WebAssembly module of every ruleset crate of the workspace (the members whose
          library has crate-type cdylib) for wasm32-unknown-unknown (profile `wasm-release`:
          release without debug information) and write each to target/wasm/<package>.wasm.
  help    Show this text.

Options of wasm:
  --out DIR               Write the modules to DIR instead of target/wasm.
  -p, --package PACKAGE   Build only this ruleset; repeat for several.
  -h, --help              Show this text.

Needs the wasm32-unknown-unknown target: rustup target add wasm32-unknown-unknown";

/// What the command line asks for.
#[derive(Debug, PartialEq, Eq)]
enum Task {
    Help,
    Wasm {
        out: Option<PathBuf>,
        packages: Vec<String>,
    },
}

/// Reads the command line (without the program name); an error is what to tell the user.
fn parse(args: &[String]) -> Result<Task, String> {
    let Some((task, rest)) = args.split_first() else {
        return Err("no task given".into());
    };
    match task.as_str() {
        "help" | "--help" | "-h" => Ok(Task::Help),
        "wasm" => parse_wasm(rest),
        other => Err(format!("unknown task {other:?}")),
    }
}

fn parse_wasm(args: &[String]) -> Result<Task, String> {
    let mut out = None;
    let mut packages = Vec::new();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| {
            inline
                .clone()
                .or_else(|| args.next().cloned())
                .filter(|v| !v.is_empty())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match flag {
            "-h" | "--help" => return Ok(Task::Help),
            "--out" => out = Some(PathBuf::from(value("--out")?)),
            "-p" | "--package" => packages.push(value(flag)?),
            other => return Err(format!("unknown option {other:?} for wasm")),
        }
    }
    Ok(Task::Wasm { out, packages })
}

/// `path` relative to the current folder when it is under it, for shorter lines.
fn shown(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|here| path.strip_prefix(here).ok().map(Path::to_owned))
        .unwrap_or_else(|| path.to_owned())
}

fn wasm(out: Option<PathBuf>, packages: Vec<String>) -> ExitCode {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask/ is in the workspace");
    let mut options = WasmBuild::new(root.join("Cargo.toml"));
    options.out_dir = out;
    options.packages = packages;
    let started = std::time::Instant::now();
    let result = build_wasm(&options, &mut |progress| match progress {
        Progress::Wrote(built) => eprintln!(
            "wrote {} ({})",
            shown(&built.path).display(),
            xtask::human_size(built.bytes)
        ),
        other => eprintln!("{other}"),
    });
    match result {
        Ok(built) => {
            eprintln!(
                "built {} WebAssembly {} in {:.1} s",
                built.len(),
                if built.len() == 1 {
                    "module"
                } else {
                    "modules"
                },
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse(&args) {
        Ok(Task::Help) => {
            println!("{HELP}");
            ExitCode::SUCCESS
        }
        Ok(Task::Wasm { out, packages }) => wasm(out, packages),
        Err(why) => {
            eprintln!("{why}; `cargo xtask help` lists the tasks and options");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_command_line_reads_tasks_and_options() {
        assert_eq!(parse(&args("help")), Ok(Task::Help));
        assert_eq!(parse(&args("wasm --help")), Ok(Task::Help));
        assert_eq!(
            parse(&args("wasm")),
            Ok(Task::Wasm {
                out: None,
                packages: vec![]
            })
        );
        assert_eq!(
            parse(&args("wasm --out=dist -p a --package b")),
            Ok(Task::Wasm {
                out: Some("dist".into()),
                packages: vec!["a".into(), "b".into()]
            })
        );
    }

    #[test]
    fn a_wrong_command_line_says_what_is_wrong() {
        assert_eq!(parse(&[]), Err("no task given".into()));
        assert_eq!(parse(&args("build")), Err("unknown task \"build\"".into()));
        assert_eq!(parse(&args("wasm -p")), Err("-p needs a value".into()));
        assert_eq!(
            parse(&args("wasm --out")),
            Err("--out needs a value".into())
        );
        assert_eq!(
            parse(&args("wasm --release")),
            Err("unknown option \"--release\" for wasm".into())
        );
    }
}

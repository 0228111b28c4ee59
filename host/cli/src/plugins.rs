//! Plugins and rulesets: where they are loaded from, `plugins check`, `rulesets` and `describe`.

use crate::args::{Global, OutputFormat};
use crate::output::{Status, print_json};
use coffer_host::registry::Registry;
use coffer_host::render::error_chain as chain;
use serde_json::json;
use std::io::Write as _;
use std::path::{Path, PathBuf};

/// `coffer plugins check DIR`: each library probed in a child process.
pub(crate) fn plugins_check(dir: &Path, global: &Global) -> anyhow::Result<Status> {
    let probe = coffer_host::loader::ProbeCommand::new(std::env::current_exe()?, ["probe-library"]);
    let reports = coffer_host::loader::check_dir(dir, global.lock.as_deref(), &probe);
    if global.format == OutputFormat::Json {
        let list: Vec<_> = reports
            .iter()
            .map(|r| json!({"library": r.path, "loads": r.loads(), "report": r.to_string()}))
            .collect();
        print_json(&serde_json::Value::Array(list))?;
    } else {
        if reports.is_empty() {
            outln!("{}: no plugin library here", dir.display());
        }
        for report in &reports {
            outln!("{report}");
        }
    }
    Ok(
        if reports.iter().all(coffer_host::loader::CheckReport::loads) {
            Status::Success
        } else {
            Status::Failure
        },
    )
}

/// The plugin directories: `--plugin-dir` ones first, then those of `COFFER_PLUGIN_PATH`.
pub fn plugin_dirs(global: &Global) -> Vec<PathBuf> {
    let mut dirs = global.plugin_dirs.clone();
    dirs.extend(coffer_host::loader::plugin_dirs_from_env());
    dirs
}

/// Loads every plugin library of the plugin directories (pinned by `--lock` when given); each library
/// that fails is reported on stderr as a warning and skipped.
///
/// # Errors
/// Only an unreadable or invalid lock file: with pinning asked for, nothing loads unpinned.
pub fn load_registry(global: &Global) -> anyhow::Result<Registry> {
    load_registry_counting(global).map(|(registry, _)| registry)
}

/// [`load_registry`], and how many libraries were refused.
pub(crate) fn load_registry_counting(global: &Global) -> anyhow::Result<(Registry, usize)> {
    let lock = match &global.lock {
        Some(path) => Some(coffer_host::loader::LockFile::read(path)?),
        None => None,
    };
    let mut registry = Registry::new();
    if let Some(deadline) = global.plugin_deadline {
        registry.set_plugin_deadline(deadline);
    }
    registry.prefer(global.prefer);
    registry.set_wasm_options(wasm_options(global));
    let report = registry.load_dirs(&plugin_dirs(global), lock.as_ref());
    let refused = report.errors.len();
    for err in report.errors {
        eprintln!("warning: skipped: {}", chain(&err));
    }
    for (key, path) in &report.loaded {
        // The target the line had when the command lived in coffer-host, so logs and filters stay the same.
        tracing::info!(target: "coffer_host::cli", ruleset = %key, library = %path.display(), "loaded");
    }
    Ok((registry, refused))
}

/// How WebAssembly rulesets run, from the global options.
pub fn wasm_options(global: &Global) -> coffer_host::wasm::WasmOptions {
    let default = coffer_host::wasm::WasmOptions::default();
    coffer_host::wasm::WasmOptions {
        deadline: global.wasm_deadline.unwrap_or(default.deadline),
        memory_cap: global
            .wasm_memory
            .map_or(default.memory_cap, |mib| mib << 20),
        games_per_instance: global
            .wasm_games_per_instance
            .unwrap_or(default.games_per_instance),
    }
}

pub(crate) fn no_rulesets_hint(global: &Global) -> String {
    let dirs = plugin_dirs(global);
    let searched = if dirs.is_empty() {
        "no plugin directory was given".to_owned()
    } else {
        format!(
            "searched {}",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    format!(
        "no ruleset is loaded ({searched}); build the plugins with `cargo build --release --workspace` and pass \
         `--plugin-dir target/release`, or build them as WebAssembly with `cargo xtask wasm` and pass \
         `--plugin-dir target/wasm` (or set {})",
        coffer_host::loader::PLUGIN_PATH_ENV
    )
}

pub(crate) fn rulesets(registry: &Registry, global: &Global) -> anyhow::Result<Status> {
    if global.format == OutputFormat::Json {
        let list: Vec<_> = registry
            .iter()
            .map(|e| {
                let d = e.ruleset.description();
                json!({"id": d.id, "version": d.version, "summary": d.summary, "origin": e.origin.to_string(), "form": e.origin.form()})
            })
            .collect();
        print_json(&serde_json::Value::Array(list))?;
        return Ok(Status::Success);
    }
    if registry.is_empty() {
        outln!("{}", no_rulesets_hint(global));
        return Ok(Status::Success);
    }
    for e in registry.iter() {
        let d = e.ruleset.description();
        outln!("{:<28} {}  ({})", e.key(), d.summary, e.origin);
    }
    Ok(Status::Success)
}

pub(crate) fn describe(
    registry: &Registry,
    name: &str,
    format: OutputFormat,
) -> anyhow::Result<Status> {
    let entry = registry.get(name)?;
    let d = entry.ruleset.description();
    if format == OutputFormat::Json {
        print_json(&serde_json::to_value(d)?)?;
        return Ok(Status::Success);
    }
    outln!("{} — {}", d.key(), d.summary);
    outln!("players: {} to {}", d.min_players, d.max_players);
    outln!("loaded from: {}", entry.origin);
    // The vocabulary's names are the rulebook's; the older list is a fallback for rulesets without one.
    let phases = if d.vocabulary.phases.is_empty() {
        &d.phases
    } else {
        &d.vocabulary.phases
    };
    if !phases.is_empty() {
        outln!("\nphases:\n  {}", phases.join(" → "));
    }
    describe_docs("resources", &d.resources, "")?;
    describe_docs("actions", &d.actions, "e.g. ")?;
    describe_docs("configuration options", &d.options, "default: ")?;
    Ok(Status::Success)
}

/// One titled list of `describe`: each doc's name and text, and its example or default value.
pub(crate) fn describe_docs(
    title: &str,
    docs: &[coffer_core::Doc],
    value_label: &str,
) -> anyhow::Result<()> {
    if docs.is_empty() {
        return Ok(());
    }
    outln!("\n{title}:");
    for doc in docs {
        outln!("  {}: {}", doc.name, doc.doc);
        if !doc.value.is_null() {
            outln!("      {value_label}{}", doc.value);
        }
    }
    Ok(())
}

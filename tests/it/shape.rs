//! The shape of the house, checked: no import circle between the modules of any crate, the borders between
//! core's crates (the kernel never imports the SDK or the ABI, the SDK never imports the ABI), unsafe code
//! only where the plugin boundary needs it, the host library free of command-line crates, and no source
//! function over 150 lines. Anyone can run these (`cargo test -p coffer-tests shape`); each failure names
//! the file and what to do.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_owned()
}

/// Every `.rs` file under `dir`, skipping build output and hidden folders.
pub(crate) fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') && name != "node_modules" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The crates whose sources these checks read: every manifest with a `src/` of the workspace, the template
/// and the bench ruleset (the fixtures of `tests/fixtures` are broken plugins on purpose, and left out).
fn crate_dirs() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root()];
    while let Some(dir) = stack.pop() {
        if dir.join("Cargo.toml").is_file() && dir.join("src").is_dir() {
            out.push(dir.clone());
        }
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().into_owned();
            let skip = name == "target"
                || name.starts_with('.')
                || name == "node_modules"
                || name == "fixtures"
                || name == "src"
                || name == "tests"
                || name == "fuzz";
            if path.is_dir() && !skip {
                stack.push(path);
            }
        }
    }
    out.sort();
    assert!(out.len() >= 10, "found only {} crates", out.len());
    out
}

/// A source file's code without comments, string and character contents and the unit tests at its end;
/// line breaks are kept, so line numbers stay true.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => text,
    };
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    // Skips to the end of what opened at `i`, keeping only its line breaks.
    let skip_to = |out: &mut String, from: usize, end: &dyn Fn(usize) -> Option<usize>| -> usize {
        let mut k = from;
        while k < chars.len() {
            if let Some(after) = end(k) {
                return after;
            }
            if chars[k] == '\n' {
                out.push('\n');
            }
            k += 1;
        }
        k
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            i = skip_to(&mut out, i, &|k| (chars[k] == '\n').then_some(k));
        } else if c == '/' && next == Some('*') {
            i = skip_to(&mut out, i + 2, &|k| {
                (chars[k] == '*' && chars.get(k + 1) == Some(&'/')).then_some(k + 2)
            });
        } else if c == 'r' && (next == Some('"') || next == Some('#')) && !prev_ident(&chars, i) {
            let hashes = chars[i + 1..].iter().take_while(|&&h| h == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            out.push_str("\"\"");
            i = skip_to(&mut out, i + 2 + hashes, &|k| {
                (chars[k] == '"' && (1..=hashes).all(|h| chars.get(k + h) == Some(&'#')))
                    .then_some(k + 1 + hashes)
            });
        } else if c == '"' {
            out.push_str("\"\"");
            let mut k = i + 1;
            while k < chars.len() && chars[k] != '"' {
                if chars[k] == '\\' {
                    k += 1;
                } else if chars[k] == '\n' {
                    out.push('\n');
                }
                k += 1;
            }
            i = k + 1;
        } else if c == '\'' && (chars.get(i + 2) == Some(&'\'') || next == Some('\\')) {
            // A character literal ('{', '\n'), not a lifetime.
            out.push_str("' '");
            let mut k = i + 1;
            if chars[k] == '\\' {
                k += 1;
            }
            k += 1;
            while k < chars.len() && chars[k] != '\'' {
                k += 1;
            }
            i = k + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

fn prev_ident(chars: &[char], i: usize) -> bool {
    i > 0 && (chars[i - 1].is_alphanumeric() || chars[i - 1] == '_')
}

/// The module path of a source file of a crate (`src/rules/combat.rs` is `rules::combat`, `src/lib.rs` and
/// `src/main.rs` the root, `src/bin/x.rs` a root of its own and so left out).
fn module_of(src: &Path, file: &Path) -> Option<Vec<String>> {
    let rel = file.strip_prefix(src).ok()?;
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.first().is_some_and(|p| p == "bin") {
        return None;
    }
    let last = parts.pop()?;
    let stem = last.trim_end_matches(".rs");
    if !(parts.is_empty() && (stem == "lib" || stem == "main")) && stem != "mod" {
        parts.push(stem.to_owned());
    }
    Some(parts)
}

/// The names a module re-exports (`pub use child::{A, B}`, `pub use child::A`), each to the module it comes from.
fn reexports(code: &str, module: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for statement in code.split(';') {
        let s = statement.trim();
        let Some(rest) = s
            .strip_prefix("pub use ")
            .or_else(|| s.strip_prefix("pub(crate) use "))
        else {
            continue;
        };
        let rest = rest
            .trim_start_matches("self::")
            .trim_start_matches("crate::");
        let (path, names) = match rest.split_once("::{") {
            Some((path, names)) => (path, names.trim_end_matches('}').to_owned()),
            None => match rest.rsplit_once("::") {
                Some((path, name)) => (path, name.to_owned()),
                None => continue,
            },
        };
        let mut target = module.to_vec();
        target.extend(path.split("::").map(str::to_owned));
        for name in names.split(',') {
            let name = name.split(" as ").last().unwrap_or("").trim();
            if !name.is_empty() {
                out.insert(name.to_owned(), target.clone());
            }
        }
    }
    out
}

/// Which modules of a crate each module uses, by `crate::`, `super::` and `self::` paths and by the names of
/// its own child modules; a parent using its children is not an edge (a parent holds its children).
fn module_graph(krate: &Path) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let src = krate.join("src");
    let mut codes = BTreeMap::new();
    for file in rust_files(&src) {
        if let Some(module) = module_of(&src, &file) {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            codes.insert(module, code_of(&text));
        }
    }
    let modules: BTreeSet<Vec<String>> = codes.keys().cloned().collect();
    let mut names = BTreeMap::new();
    for (module, code) in &codes {
        for (name, from) in reexports(code, module) {
            names.insert((module.clone(), name), from);
        }
    }
    // The longest known module that a path names, following one re-export of an item at its end.
    let resolve = |path: Vec<String>| -> Option<Vec<String>> {
        let mut best = None;
        for n in (0..=path.len()).rev() {
            let prefix = path[..n].to_vec();
            if modules.contains(&prefix) {
                best = Some(prefix.clone());
                if let Some(item) = path.get(n)
                    && let Some(from) = names.get(&(prefix, item.clone()))
                {
                    let deeper = (0..=from.len())
                        .rev()
                        .map(|k| from[..k].to_vec())
                        .find(|m| modules.contains(m));
                    best = deeper.or(best);
                }
                break;
            }
        }
        best
    };
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for (module, code) in &codes {
        let children: Vec<String> = modules
            .iter()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
            .map(|m| m[module.len()].clone())
            .collect();
        let edges = graph.entry(module.clone()).or_default();
        for path in paths_in(code, &children) {
            let absolute = match path.first().map(String::as_str) {
                Some("crate") => path[1..].to_vec(),
                Some("super") => {
                    let mut base = module.clone();
                    let mut rest = &path[..];
                    while rest.first().is_some_and(|p| p == "super") {
                        base.pop();
                        rest = &rest[1..];
                    }
                    base.extend(rest.iter().cloned());
                    base
                }
                Some("self") => module.iter().chain(&path[1..]).cloned().collect(),
                _ => module.iter().chain(&path).cloned().collect(),
            };
            if let Some(target) = resolve(absolute)
                && &target != module
                && !(target.len() > module.len() && target.starts_with(module))
            {
                edges.insert(target);
            }
        }
    }
    graph
}

/// The paths a module's code names: `crate::a::b`, `super::x`, `self::y`, and `child::z` for its own children
/// (grouped imports `use crate::a::{b::C, d}` give `crate::a::b::C` and `crate::a::d`).
fn paths_in(code: &str, children: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let is_ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut i = 0;
    while i < bytes.len() {
        if is_ident(bytes[i]) && (i == 0 || !(is_ident(bytes[i - 1]) || bytes[i - 1] == b':')) {
            let start = i;
            while i < bytes.len() && (is_ident(bytes[i]) || bytes[i] == b':') {
                i += 1;
            }
            let word = &code[start..i];
            let parts: Vec<String> = word
                .split("::")
                .filter(|p| !p.is_empty())
                .map(str::to_owned)
                .collect();
            let head = parts.first().map(String::as_str).unwrap_or("");
            let rooted =
                matches!(head, "crate" | "super" | "self") || children.iter().any(|c| c == head);
            if rooted && parts.len() > 1 {
                if word.ends_with("::") && bytes.get(i) == Some(&b'{') {
                    let close = code[i..].find('}').map_or(code.len(), |c| i + c);
                    for item in code[i + 1..close].split(',') {
                        let item: Vec<String> = item
                            .trim()
                            .split(" as ")
                            .next()
                            .unwrap_or("")
                            .split("::")
                            .filter(|p| !p.is_empty() && *p != "{")
                            .map(str::to_owned)
                            .collect();
                        let mut full = parts.clone();
                        full.extend(item);
                        out.push(full);
                    }
                } else {
                    out.push(parts);
                }
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The circles of a graph: its strongly connected components of more than one module (Tarjan's algorithm).
fn circles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<Vec<String>, BTreeSet<Vec<String>>>,
        index: BTreeMap<&'g [String], usize>,
        low: BTreeMap<&'g [String], usize>,
        stack: Vec<&'g [String]>,
        on_stack: BTreeSet<&'g [String]>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g [String]) {
            let n = self.index.len();
            self.index.insert(v, n);
            self.low.insert(v, n);
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_slice();
                if !self.index.contains_key(w) {
                    if self.graph.contains_key(w) {
                        self.visit(w);
                        let low = self.low[v].min(self.low[w]);
                        self.low.insert(v, low);
                    }
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(if w.is_empty() {
                        "crate".to_owned()
                    } else {
                        w.join("::")
                    });
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_slice()) {
            walk.visit(v);
        }
    }
    walk.found
}

#[test]
fn no_crate_has_an_import_circle_between_its_modules() {
    let mut found = Vec::new();
    for krate in crate_dirs() {
        for circle in circles(&module_graph(&krate)) {
            found.push(format!("{}: {}", relative(&krate), circle.join(" <-> ")));
        }
    }
    assert!(
        found.is_empty(),
        "import circles (move what both sides share into a lower module):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_circle_check_finds_a_circle_and_follows_reexports() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    std::fs::write(
        src.join("lib.rs"),
        "mod a;\nmod b;\nmod c;\npub(crate) use b::Thing;\n",
    )
    .unwrap();
    std::fs::write(src.join("a.rs"), "use crate::Thing;\n").unwrap();
    std::fs::write(src.join("b.rs"), "use crate::c::{Other, more::X};\n").unwrap();
    std::fs::write(src.join("c.rs"), "fn f() { crate::a::g(); }\n").unwrap();
    let found = circles(&module_graph(dir.path()));
    assert_eq!(found, vec![vec!["a".to_owned(), "b".into(), "c".into()]]);
    std::fs::write(src.join("c.rs"), "// crate::a::g\nfn f() {}\n").unwrap();
    assert!(circles(&module_graph(dir.path())).is_empty());
}

/// The `[dependencies]` of a manifest, by name.
fn dependencies(manifest: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let Some(section) = text.split("\n[dependencies]\n").nth(1) else {
        return BTreeSet::new();
    };
    let section = section.split("\n[").next().unwrap_or("");
    section
        .lines()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .map(|k| k.trim_end_matches(".workspace").to_owned())
        .filter(|k| !k.starts_with('#') && !k.is_empty())
        .collect()
}

fn names_in_code(dir: &Path, name: &str) -> Vec<String> {
    rust_files(dir)
        .into_iter()
        .filter(|f| code_of(&std::fs::read_to_string(f).unwrap()).contains(name))
        .map(|f| relative(&f))
        .collect()
}

#[test]
fn the_kernel_never_imports_the_sdk_or_the_abi_and_the_sdk_never_the_abi() {
    let never = [
        ("core/kernel", ["coffer-sdk", "coffer-abi"].as_slice()),
        ("core/sdk", ["coffer-abi"].as_slice()),
    ];
    for (krate, forbidden) in never {
        let deps = dependencies(&root().join(krate).join("Cargo.toml"));
        assert!(deps.contains("serde"), "{krate}: read no dependencies");
        for name in forbidden {
            assert!(
                !deps.contains(*name),
                "{krate} depends on {name}: the kernel knows no SDK or ABI, the SDK no ABI"
            );
            let ident = name.replace('-', "_");
            let files = names_in_code(&root().join(krate).join("src"), &ident);
            assert!(files.is_empty(), "{krate} names {ident} in {files:?}");
        }
    }
    let host = dependencies(&root().join("host/Cargo.toml"));
    assert!(host.contains("coffer-core"), "host: read no dependencies");
    for cli in ["clap", "indicatif", "anyhow"] {
        assert!(
            !host.contains(cli),
            "the host library depends on {cli}: command-line crates belong to the `coffer` binary's crate"
        );
    }
}

/// Where unsafe code may be: the ABI crate, the host's loader and its cache of compiled WebAssembly, and
/// the tests and fixtures that exercise the boundary on purpose.
const UNSAFE_HOMES: [&str; 5] = [
    "core/abi/src/",
    "host/src/loader/",
    "host/src/wasm/cache.rs",
    "core/tests/it/",
    "tests/fixtures/",
];

#[test]
fn unsafe_code_lives_only_at_the_plugin_boundary() {
    let mut found = Vec::new();
    for dir in [
        "core", "host", "plugins", "server", "bench", "template", "tests", "xtask",
    ] {
        for file in rust_files(&root().join(dir)) {
            let rel = relative(&file);
            let code = code_of(&std::fs::read_to_string(&file).unwrap());
            let unsafe_here = [
                "unsafe {",
                "unsafe fn",
                "unsafe impl",
                "unsafe extern",
                "allow(unsafe_code)",
            ]
            .iter()
            .any(|w| code.contains(w));
            if unsafe_here && !UNSAFE_HOMES.iter().any(|home| rel.starts_with(home)) {
                found.push(rel);
            }
        }
    }
    assert!(
        found.is_empty(),
        "unsafe code outside the plugin boundary ({UNSAFE_HOMES:?}): {found:?}"
    );
}

/// Functions allowed past the limit, each with why: table-like code, where splitting would only scatter one
/// table over several functions.
const LONG_FUNCTIONS: [(&str, &str); 0] = [];

/// Every function of a source file with its first line and length (a `fn` opens a body at its first `{`;
/// braces are counted outside strings and comments).
fn functions(code: &str) -> Vec<(String, usize, usize)> {
    let lines: Vec<&str> = code.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(name) = fn_name(lines[i]) else {
            i += 1;
            continue;
        };
        let (mut depth, mut opened, mut j) = (0i32, false, i);
        while j < lines.len() {
            if !opened && lines[j].contains(';') && !lines[j].contains('{') {
                break;
            }
            for c in lines[j].chars() {
                match c {
                    '{' => {
                        depth += 1;
                        opened = true;
                    }
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            if opened && depth <= 0 {
                break;
            }
            j += 1;
        }
        if opened {
            out.push((name, i + 1, j - i + 1));
        }
        i += 1;
    }
    out
}

fn fn_name(line: &str) -> Option<String> {
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.peek() {
        if w.starts_with("pub") || ["const", "async", "unsafe", "extern", "\"C\""].contains(w) {
            words.next();
        } else {
            break;
        }
    }
    if words.next()? != "fn" {
        return None;
    }
    let name: String = words
        .next()?
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty()).then_some(name)
}

#[test]
fn no_source_function_is_over_150_lines() {
    let mut found = Vec::new();
    for krate in crate_dirs() {
        for file in rust_files(&krate.join("src")) {
            let rel = relative(&file);
            let code = code_of(&std::fs::read_to_string(&file).unwrap());
            for (name, line, length) in functions(&code) {
                let allowed = LONG_FUNCTIONS
                    .iter()
                    .any(|(at, _)| *at == format!("{rel}::{name}"));
                if length > 150 && !allowed {
                    found.push(format!("{rel}:{line} {name} ({length} lines)"));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "functions over 150 lines (cut them into named steps):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_length_check_counts_a_body_and_skips_declarations() {
    let code = "fn a() {\n    x();\n}\ntrait T {\n    fn b(&self);\n}\npub(crate) fn c(\n    y: u8,\n) -> u8 {\n    y\n}\n";
    assert_eq!(
        functions(&code_of(code)),
        vec![("a".to_owned(), 1, 3), ("c".to_owned(), 7, 5)]
    );
}

//! The ruleset guide shows exactly the examples that `tests/guide.md` compiles.

use coffer_tests::repo_root;

/// The ```rust blocks of a Markdown text, in order, each as its lines.
fn rust_blocks(text: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == "```rust" {
            blocks.push(lines.by_ref().take_while(|l| l.trim() != "```").collect());
        }
    }
    blocks
}

/// A line rustdoc compiles but does not show: `# ` and a lone `#`.
fn hidden(line: &str) -> bool {
    line == "#" || line.starts_with("# ")
}

#[test]
fn every_example_of_the_guide_is_compiled() {
    let read = |path: &str| {
        std::fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let guide = read("docs/WRITING_A_RULESET.md");
    let compiled = read("tests/guide.md");
    let shown = rust_blocks(&guide);
    let compiled: Vec<Vec<&str>> = rust_blocks(&compiled)
        .into_iter()
        .map(|block| block.into_iter().filter(|l| !hidden(l)).collect())
        .collect();
    assert!(!shown.is_empty(), "the guide has Rust examples");
    assert_eq!(
        shown.len(),
        compiled.len(),
        "the guide has {} Rust examples and tests/guide.md compiles {}: add the new one there",
        shown.len(),
        compiled.len()
    );
    for (i, (shown, compiled)) in shown.iter().zip(&compiled).enumerate() {
        assert_eq!(
            shown.join("\n"),
            compiled.join("\n"),
            "example {} of the guide differs from the one tests/guide.md compiles",
            i + 1
        );
    }
}

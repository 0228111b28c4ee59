//! The README and the `Description` agree with the code: every action with a JSON example, every option with
//! its default, every assumption; the ruleset registers itself statically.

use coffer_core::{Ruleset, static_rulesets};
use coffer_story_acts::{Action, Config, OPTIONS, StoryActs};
use std::collections::BTreeSet;

const README: &str = include_str!("../../README.md");

fn json_blocks(text: &str) -> Vec<&str> {
    text.split("```json\n")
        .skip(1)
        .map(|rest| rest.split("\n```").next().expect("closed block"))
        .collect()
}

fn section<'a>(text: &'a str, heading: &str) -> &'a str {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("README has no {heading}"));
    let rest = &text[start + heading.len()..];
    let end = rest.find("\n## ").unwrap_or(rest.len());
    &rest[..end]
}

#[test]
fn readme_documents_every_action_with_its_json_example() {
    let d = StoryActs::new().describe();
    let actions = section(README, "## Actions");
    for doc in &d.actions {
        let heading = format!("### `{}`", doc.name);
        let at = actions
            .find(&heading)
            .unwrap_or_else(|| panic!("README has no {heading}"));
        let first = json_blocks(&actions[at..])[0];
        let value: serde_json::Value = serde_json::from_str(first).expect("example is JSON");
        assert_eq!(
            value, doc.value,
            "README example of {} differs from describe()",
            doc.name
        );
    }
    for block in json_blocks(README) {
        serde_json::from_str::<Action>(block)
            .unwrap_or_else(|e| panic!("README example {block} is not an action: {e}"));
    }
}

#[test]
fn describe_has_an_example_for_every_action_variant() {
    let codes: BTreeSet<u16> = StoryActs::new()
        .describe()
        .actions
        .iter()
        .map(|doc| {
            serde_json::from_value::<Action>(doc.value.clone())
                .expect("example parses")
                .code()
        })
        .collect();
    assert_eq!(codes, (0..=11).collect());
}

#[test]
fn readme_and_describe_list_every_option_with_its_default() {
    let defaults = serde_json::to_value(Config::default()).expect("config");
    let fields: BTreeSet<&str> = defaults
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    let listed: BTreeSet<&str> = OPTIONS.iter().map(|(n, _)| *n).collect();
    assert_eq!(fields, listed, "OPTIONS must name every Config field");
    let d = StoryActs::new().describe();
    let config = section(README, "## Configuration");
    for doc in &d.options {
        assert_eq!(doc.value, defaults[&doc.name], "{}", doc.name);
        let row = format!(
            "| `{}` | `{}` |",
            doc.name,
            serde_json::to_string(&doc.value).expect("json")
        );
        assert!(config.contains(&row), "README lacks the row {row}");
        let full = format!("{row} {} |", doc.doc);
        assert!(
            config.contains(&full),
            "README's row differs from describe(): {full}"
        );
    }
}

#[test]
fn readme_lists_every_assumption_as_an_option_with_its_default() {
    let assumptions = section(README, "## Assumptions");
    let defaults = serde_json::to_value(Config::default()).expect("config");
    for (name, doc) in OPTIONS.iter().filter(|(_, doc)| doc.contains("ssumption")) {
        let v = &defaults[*name];
        let shown = if v.is_array() {
            format!("`{name}`")
        } else {
            format!("`{name}` = `{v}`")
        };
        assert!(
            assumptions.contains(&shown),
            "Assumptions lack {shown} ({doc})"
        );
    }
    for clause in ["S4", "S5", "S11", "S12", "S16", "S17"] {
        assert!(assumptions.contains(clause), "Assumptions lack {clause}");
    }
}

#[test]
fn the_ruleset_is_registered_statically() {
    let ids: Vec<String> = static_rulesets()
        .iter()
        .map(|r| r.description().id.clone())
        .collect();
    assert!(ids.iter().any(|id| id == "story-acts"), "{ids:?}");
}

#[test]
fn readme_names_the_vocabulary() {
    let v = StoryActs::new().describe().vocabulary;
    // Words wrapped over lines count as written on one.
    let vocabulary = section(README, "## Vocabulary")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for name in v.actions.iter().chain(&v.phases).chain(&v.effects) {
        assert!(
            vocabulary.contains(name.as_str()),
            "README's Vocabulary lacks {name}"
        );
    }
    for kind in &v.kinds {
        assert!(
            vocabulary.contains(kind.name.as_str()),
            "README's Vocabulary lacks {}",
            kind.name
        );
    }
    let table = section(README, "## Table");
    for title in [
        "Hands and decks",
        "Hand",
        "In play",
        "Discard piles",
        "Galactic Factors",
        "Politics",
        "Acts",
    ] {
        assert!(
            table.contains(&format!("**{title}**")),
            "README's Table lacks {title}"
        );
    }
}

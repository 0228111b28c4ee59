//! The README and the ruleset's `Description` agree: every action with its example, every option with
//! its default, every phase.

use coffer_charges::{Action, Charges, Config};
use coffer_core::Ruleset;

const README: &str = include_str!("../../README.md");

fn readme_json_lines() -> Vec<serde_json::Value> {
    README
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with('{'))
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

#[test]
fn readme_lists_every_action_with_its_example() {
    let lines = readme_json_lines();
    for doc in Charges::new().describe().actions {
        assert!(
            README.contains(&format!("### `{}`", doc.name)),
            "README lacks a section for {}",
            doc.name
        );
        assert!(
            lines.contains(&doc.value),
            "README lacks the example {} of {}",
            doc.value,
            doc.name
        );
        let action: Action = serde_json::from_value(doc.value.clone()).unwrap();
        assert_eq!(serde_json::to_value(action).unwrap(), doc.value);
    }
}

#[test]
fn readme_lists_every_option_with_its_default() {
    let d = Charges::new().describe();
    let defaults = serde_json::to_value(Config::default()).unwrap();
    assert!(
        readme_json_lines().contains(&defaults),
        "README lacks the default configuration {defaults}"
    );
    for o in &d.options {
        assert!(
            README.contains(&format!("`{}`", o.name)),
            "README lacks option {}",
            o.name
        );
        assert_eq!(defaults[&o.name], o.value, "option {} default", o.name);
    }
    for phase in &d.phases {
        assert!(
            README.to_lowercase().contains(phase.as_str()),
            "README lacks phase {phase}"
        );
    }
}

//! Coffer ruleset `command-tokens`.

//! Coffer ruleset `charges`.

//! Coffer ruleset `story-acts`.

//! Hosts Coffer games.

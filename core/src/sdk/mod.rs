//! The plugin SDK over the kernel (`kernel/`): the `Ruleset` trait a game module implements, the
//! `Adapter` that hosts drive as `DynRuleset` / `DynGame`, descriptions, vocabulary and tables, content
//! shared by key, and the helpers every ruleset would otherwise write again (winners by score, an action
//! applied atomically, the test harness). The C ABI is `abi.rs`, the one module with unsafe code.

pub(crate) mod codes;
pub(crate) mod content;
pub(crate) mod helpers;
pub(crate) mod playout;
pub(crate) mod plugin;
pub(crate) mod shared;
pub(crate) mod table;
pub(crate) mod vocab;

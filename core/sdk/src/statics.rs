//! Rulesets linked into the binary: [`StaticRuleset`], registered through `inventory` by `plugin!`, and
//! [`static_rulesets`] to find them.

use crate::DynRuleset;
use std::sync::Arc;

/// A statically linked ruleset, registered by [`plugin!`](../coffer_core/macro.plugin.html) through `inventory`.
pub struct StaticRuleset {
    build: fn() -> Arc<dyn DynRuleset>,
}

impl StaticRuleset {
    /// A registration from a constructor.
    pub const fn new(build: fn() -> Arc<dyn DynRuleset>) -> StaticRuleset {
        StaticRuleset { build }
    }

    /// Builds the ruleset.
    pub fn build(&self) -> Arc<dyn DynRuleset> {
        (self.build)()
    }
}

inventory::collect!(StaticRuleset);

/// Every ruleset registered in this binary (or, inside a plugin library, in that library).
///
/// A plugin crate that nothing names is not linked: name it (`use coffer_charges as _;`).
pub fn static_rulesets() -> Vec<Arc<dyn DynRuleset>> {
    inventory::iter::<StaticRuleset>
        .into_iter()
        .map(StaticRuleset::build)
        .collect()
}

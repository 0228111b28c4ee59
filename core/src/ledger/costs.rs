//! Atomic costs of several parts (K8).

use super::*;

impl Ledger {
    // ----- atomic costs (K8) -----

    /// K8: pays a cost of several parts whole or not at all.
    ///
    /// # Errors
    /// The first part's refusal; nothing changes.
    pub fn pay_cost(&mut self, parts: &[Part], cause: Cause) -> Result<(), Refusal> {
        self.atomically(|l| {
            for part in parts {
                match *part {
                    Part::Spend(id, n) => l.spend(id, n, cause)?,
                    Part::Charges(id, k) => l.spend_charges(id, k, cause)?,
                    Part::Recover(id, k) => l.recover_exactly(id, k, cause)?,
                    Part::Tokens { owner, from, to, n } => {
                        l.move_tokens(owner, from, to, n, cause)?;
                    }
                    Part::Exhaust(id) => l.activate(id, cause)?,
                }
            }
            Ok(())
        })
    }
}

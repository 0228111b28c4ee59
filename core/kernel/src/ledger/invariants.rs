//! The kernel's invariants, checked after restores and by tests.

use super::*;

impl Ledger {
    // ----- invariants -----

    /// The layout's tables agree with each other and with the owners (see [`Layout`]): every reserve is a
    /// zone of its supply, every zone's supply has totals. A [`Layout`] taken from a ledger passed this.
    pub(super) fn check_layout(&self) -> Result<(), Violation> {
        let o = usize::from(self.owners);
        if self.supply.len() != self.reserve.len()
            || self.supply.len() < o
            || !self.supply.len().is_multiple_of(o.max(1))
        {
            return Err(Violation(format!(
                "{} owners but {} supply totals and {} reserves",
                self.owners,
                self.supply.len(),
                self.reserve.len()
            )));
        }
        let supplies = self.supply.len() / o.max(1);
        if let Some(z) = self
            .zones
            .iter()
            .find(|z| usize::from(z.supply) >= supplies.max(1))
        {
            return Err(Violation(format!(
                "{} holds supply {} but owners have {supplies}",
                z.key, z.supply
            )));
        }
        if self.game_supply.len() != self.game_reserve.len()
            || self.game_supply.len() < supplies.max(1)
        {
            return Err(self.game_tables_violation(supplies));
        }
        for (s, (reserve, &total)) in self.game_reserve.iter().zip(&*self.game_supply).enumerate() {
            if reserve.is_some_and(|z| {
                z.index() >= self.zones.len() || usize::from(self.zones[z.index()].supply) != s
            }) || (reserve.is_some() && total == 0)
            {
                return Err(Violation(format!(
                    "the game has {total} tokens of supply {s} and reserve {}",
                    reserve.map_or_else(|| "none".to_owned(), |z| z.to_string())
                )));
            }
        }
        // Supply by supply, owner by owner (a division per slot was a tenth of a restore).
        let slots = self
            .reserve
            .chunks_exact(o.max(1))
            .zip(self.supply.chunks_exact(o.max(1)));
        for (s, (reserves, supplies)) in slots.enumerate() {
            for (owner, (reserve, supply)) in reserves.iter().zip(supplies).enumerate() {
                if reserve.is_some_and(|z| {
                    z.index() >= self.zones.len() || usize::from(self.zones[z.index()].supply) != s
                }) || (reserve.is_some() && *supply == 0)
                {
                    return Err(Violation(format!(
                        "p{owner} has {supply} tokens of supply {s} and reserve {}",
                        reserve.map_or_else(|| "none".to_owned(), |z| z.to_string())
                    )));
                }
            }
        }
        Ok(())
    }

    fn game_tables_violation(&self, supplies: usize) -> Violation {
        Violation(format!(
            "{} game token counts for {} zones, {} game supply totals and {} game reserves for {supplies} supplies",
            self.game_tokens.len(),
            self.zones.len(),
            self.game_supply.len(),
            self.game_reserve.len()
        ))
    }

    /// The tables a snapshot carries besides the layout agree with it and with each other, so that no
    /// handle stored in the ledger indexes out of bounds.
    fn check_tables(&self) -> Result<(), Violation> {
        let o = usize::from(self.owners);
        if self.game_tokens.len() != self.zones.len() {
            return Err(self.game_tables_violation(self.supply.len() / o.max(1)));
        }
        if Some(self.tokens.len()) != self.zones.len().checked_mul(o) {
            return Err(Violation(format!(
                "{} token counts for {} zones of {} owners",
                self.tokens.len(),
                self.zones.len(),
                self.owners
            )));
        }
        if let Some(c) = self
            .contributions
            .iter()
            .find(|c| c.track.index() >= self.tracks.len())
        {
            return Err(Violation(format!(
                "capacity source {} feeds missing {}",
                c.source, c.track
            )));
        }
        if let Some(a) = self.amounts.iter().find(|a| a.on_expiry < a.floor) {
            return Err(Violation(format!(
                "{} expires to {} below its floor {}",
                a.key, a.on_expiry, a.floor
            )));
        }
        Ok(())
    }

    /// Checks every kernel invariant: floors and caps (K1), `0 <= active <= limit` and limits equal to the
    /// sum of capacity sources (K3), per-owner conservation of each token supply (K4), at most one token
    /// per owner in a one-per-owner zone (K4.3).
    ///
    /// # Errors
    /// The first [`Violation`] found.
    pub fn check_invariants(&self) -> Result<(), Violation> {
        self.check_layout()?;
        self.check_state()
    }

    /// [`check_invariants`](Self::check_invariants) but for the layout's own structure
    /// ([`check_layout`](Self::check_layout)), which a ledger laid on a [`Layout`] taken from a live ledger
    /// has by construction.
    pub(super) fn check_state(&self) -> Result<(), Violation> {
        self.check_tables()?;
        for a in &self.amounts {
            if a.value < a.floor || a.cap.is_some_and(|c| a.value > c) {
                return Err(Violation(format!(
                    "{} = {} outside [{}, {}]",
                    a.key,
                    a.value,
                    a.floor,
                    cap_text(a.cap)
                )));
            }
        }
        let mut capacity = vec![0u64; self.tracks.len()];
        for c in &self.contributions {
            capacity[c.track.index()] += u64::from(c.capacity);
        }
        for (t, &sum) in self.tracks.iter().zip(&capacity) {
            if t.active > t.limit {
                return Err(Violation(format!(
                    "{}: {} active of {}",
                    t.key, t.active, t.limit
                )));
            }
            if sum != u64::from(t.limit) {
                return Err(Violation(format!(
                    "{}: limit {} but sources sum to {sum}",
                    t.key, t.limit
                )));
            }
        }
        // One pass over the token matrix (zones x owners): each zone's counts are added to their
        // (supply, owner) totals, and a one-per-owner zone's are checked on the way. The totals are kept
        // on the stack for up to `STACK` (supply, owner) slots.
        const STACK: usize = 96;
        let (mut stack, mut heap) = ([0u64; STACK], Vec::new());
        let held = if self.supply.len() <= STACK {
            &mut stack[..self.supply.len()]
        } else {
            heap.resize(self.supply.len(), 0);
            &mut heap[..]
        };
        // A row per zone of a known width (up to eight players) is summed without a loop over owners: a
        // third of the time of this check.
        match self.owners {
            1 => self.sum_rows::<1>(held)?,
            2 => self.sum_rows::<2>(held)?,
            3 => self.sum_rows::<3>(held)?,
            4 => self.sum_rows::<4>(held)?,
            5 => self.sum_rows::<5>(held)?,
            6 => self.sum_rows::<6>(held)?,
            7 => self.sum_rows::<7>(held)?,
            8 => self.sum_rows::<8>(held)?,
            _ => self.sum_rows_of(usize::from(self.owners), held)?,
        }
        let held = &*held;
        if self.game_supply.iter().all(|&n| n == 0) {
            // No bank: every game cell must be empty (one pass, no totals to keep).
            if let Some(z) = self.game_tokens.iter().position(|&n| n > 0) {
                return Err(Violation(format!(
                    "{} holds {} of the game's tokens but the game owns none",
                    self.zones[z].key, self.game_tokens[z]
                )));
            }
            return self.check_players_conserved(held);
        }
        let mut game = vec![0u64; self.game_supply.len()];
        for (zone, &count) in self.zones.iter().zip(&self.game_tokens) {
            game[usize::from(zone.supply)] += u64::from(count);
            if zone.one_per_owner && count > 1 {
                return Err(Violation(format!(
                    "one-per-owner {} holds {count} of the game's tokens",
                    zone.key
                )));
            }
        }
        if let Some(s) = (0..game.len()).find(|&s| game[s] != u64::from(self.game_supply[s])) {
            return Err(Violation(format!(
                "the game owns {} tokens of supply {s} but {} are in its zones",
                self.game_supply[s], game[s]
            )));
        }
        self.check_players_conserved(held)
    }

    /// Adds each zone's row of the token matrix (`N` players) to its supply's totals in `held`
    /// (`supply * N + owner`), checking one-per-owner zones on the way.
    #[inline]
    fn sum_rows<const N: usize>(&self, held: &mut [u64]) -> Result<(), Violation> {
        for (zone, row) in self.zones.iter().zip(self.tokens.chunks_exact(N)) {
            let (Some(counts), Some(totals)) = (
                row.first_chunk::<N>(),
                held.get_mut(usize::from(zone.supply) * N..)
                    .and_then(|t| t.first_chunk_mut::<N>()),
            ) else {
                // Not with a checked layout (every zone's supply has totals).
                return Err(Violation(format!("{} holds an unknown supply", zone.key)));
            };
            for i in 0..N {
                totals[i] += u64::from(counts[i]);
            }
            if zone.one_per_owner && counts.iter().any(|&n| n > 1) {
                return Err(one_per_owner_violation(zone, counts));
            }
        }
        Ok(())
    }

    /// [`sum_rows`](Self::sum_rows) for any number of players.
    fn sum_rows_of(&self, o: usize, held: &mut [u64]) -> Result<(), Violation> {
        for (zone, counts) in self.zones.iter().zip(self.tokens.chunks_exact(o.max(1))) {
            let totals = &mut held[usize::from(zone.supply) * o..][..o];
            for (sum, &count) in totals.iter_mut().zip(counts) {
                *sum += u64::from(count);
            }
            if zone.one_per_owner && counts.iter().any(|&n| n > 1) {
                return Err(one_per_owner_violation(zone, counts));
            }
        }
        Ok(())
    }

    /// Each player's tokens of each supply, summed over its zones (`held`), equal its total (K4).
    fn check_players_conserved(&self, held: &[u64]) -> Result<(), Violation> {
        let o = usize::from(self.owners);
        if let Some(slot) = (0..held.len()).find(|&i| held[i] != u64::from(self.supply[i])) {
            let (s, owner) = (slot / o.max(1), slot % o.max(1));
            return Err(Violation(format!(
                "p{owner} owns {} tokens of supply {s} but {} are in its zones",
                self.supply[slot], held[slot]
            )));
        }
        Ok(())
    }
}

/// A one-per-owner zone holding more than one token of a player.
#[cold]
fn one_per_owner_violation(zone: &Zone, counts: &[u32]) -> Violation {
    let owner = counts.iter().position(|&n| n > 1).unwrap_or_default();
    Violation(format!(
        "one-per-owner {} holds {} tokens of p{owner}",
        zone.key, counts[owner]
    ))
}

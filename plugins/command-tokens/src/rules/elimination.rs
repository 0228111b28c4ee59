//! Eliminating a player: their tokens and units return to the game box.

use crate::config::NOBODY;
use crate::ids::{ROUND_KEY, kind, note, play_key, slot};
use crate::refusals::{Applied, Refused};
use crate::state::State;
use coffer_core::{Cause, Owner, ZoneId};

impl State {
    // ----- elimination -----

    /// T18 (LRR 33): `q` is eliminated, as the table found. Their command tokens and units go to the
    /// game box (33.2) but for tokens in another player's fleet pool (33.10f); tokens of other players in
    /// their fleet pool return to their owners' reinforcements (33.10e); their strategy cards return to the
    /// common play area (33.6); a speaker's token passes to the left (33.8). The cards each player picks
    /// stay as set up (33.9). A player who eliminates themselves ends their turn.
    pub(crate) fn eliminate(&mut self, p: Owner, q: Owner, cause: Cause) -> Applied {
        let n = self.players();
        if !self.rules.elimination {
            return Err(Refused::EliminationOff.error(self));
        }
        if q.0 >= u16::from(n) {
            return Err(Refused::NotSeated(q.0).error(self));
        }
        if self.is_eliminated(q) {
            return Err(Refused::AlreadyEliminated(q).error(self));
        }
        if self.live_players() == 1 {
            return Err(Refused::LastPlayer(q).error(self));
        }
        self.ledger
            .note(play_key(q), note::ELIMINATED, [0; 3], cause);
        // 33.10e: other players' tokens in the eliminated player's fleet pool go back to their owners'
        // reinforcements, or to the game box for an owner eliminated before (33.10f kept it in play).
        if let Some(zone) = self.h.captured[q.index()] {
            for r in self.owners() {
                let k = self.ledger.tokens(zone, r);
                if k > 0 {
                    let to = match self.is_eliminated(r) {
                        true => self.h.boxed[0],
                        false => self.h.reinforcements,
                    };
                    self.ledger.move_tokens(r, zone, to, k, cause)?;
                }
            }
        }
        // 33.2, one zone at a time; a token in another player's fleet pool stays there (33.10f).
        let holding: Vec<ZoneId> = self.ledger.zones_holding(q).collect();
        for zone in holding {
            let z = *self.ledger.zone(zone)?;
            if z.key.kind == kind::BOX || z.key.kind == kind::CAPTURED {
                continue;
            }
            let k = self.ledger.tokens(zone, q);
            let to = self.h.boxed[usize::from(z.supply)];
            self.ledger.move_tokens(q, zone, to, k, cause)?;
        }
        self.ledger.set(self.h.structures[q.index()], 0, cause)?;
        for holder in &mut self.flow.holder {
            if *holder == slot(q) {
                *holder = NOBODY;
            }
        }
        self.flow.out |= 1 << q.0;
        self.flow.passed |= 1 << q.0;
        if self.flow.speaker == slot(q) {
            let speaker = slot(self.live_seat(self.flow.speaker, 0));
            self.flow.speaker = speaker;
            self.ledger
                .note(ROUND_KEY, note::SPEAKER, [i32::from(speaker), 0, 0], cause);
        }
        if q == p {
            self.end_turn(cause);
        }
        Ok(())
    }
}

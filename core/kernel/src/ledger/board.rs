//! Wide boards (K4.8): which zones hold whose tokens, kept as bit sets beside the token tables so that
//! "the systems without my token", "my tokens on the board" and "return every board token" cost a few
//! words of bits rather than a look-up per zone.
//!
//! A zone's *class* is its key's [`Kind`]: every zone created with the same kind (every system of a map,
//! every space of a track) is one class.

use super::*;

/// The derived index: never written to snapshots, rebuilt when a ledger is read, kept by every token
/// change (including undo and replay).
#[derive(Clone, Debug, Default)]
pub(super) struct Board {
    /// Words of 64 zones per bit set.
    words: usize,
    /// Holders: the players, then the game.
    columns: usize,
    /// Per holder, `words` words from `column * words`: the zones holding at least one of its tokens.
    held: Vec<u64>,
    /// The classes, in the order they first appeared.
    kinds: Vec<Kind>,
    /// Per class, `words` words from `class * words`: its zones.
    classes: Vec<u64>,
}

impl Board {
    #[inline]
    fn column(owner: Owner, owners: u16) -> usize {
        if owner == Owner::GAME {
            usize::from(owners)
        } else {
            owner.index()
        }
    }

    /// An empty index for `zones` zones and `owners` players (every set sized once).
    pub(super) fn with_capacity(zones: usize, owners: u16) -> Board {
        let words = zones.div_ceil(64).max(1);
        let columns = usize::from(owners) + 1;
        Board {
            words,
            columns,
            held: vec![0; words * columns],
            kinds: Vec::new(),
            classes: Vec::new(),
        }
    }

    /// Makes this the index of a ledger of `owners` players without zones (what [`Board::with_capacity`]
    /// gives for none), keeping the capacity of its tables.
    pub(super) fn empty(&mut self, owners: u16) {
        self.words = 1;
        self.columns = usize::from(owners) + 1;
        self.held.clear();
        self.held.resize(self.columns, 0);
        self.kinds.clear();
        self.classes.clear();
    }

    /// Re-lays every set out for `words` words (zones were added past the last word).
    fn widen(&mut self, words: usize, columns: usize) {
        let relaid = |sets: &[u64], count: usize, old: usize| {
            let mut out = vec![0; words * count];
            for c in 0..count {
                if old > 0 && c * old < sets.len() {
                    out[c * words..c * words + old].copy_from_slice(&sets[c * old..(c + 1) * old]);
                }
            }
            out
        };
        self.held = relaid(&self.held, columns, self.words);
        self.classes = relaid(&self.classes, self.kinds.len(), self.words);
        self.words = words;
        self.columns = columns;
    }

    /// Makes room for zone `id` of class `kind`.
    pub(super) fn add_zone(&mut self, id: ZoneId, kind: Kind, owners: u16) {
        let words = (id.index() / 64 + 1).max(self.words);
        let columns = usize::from(owners) + 1;
        if words != self.words || columns != self.columns {
            self.widen(words, columns);
        }
        // Zones of one class are usually created one after another: the last class is tried first.
        let found = match self.kinds.last() {
            Some(&k) if k == kind => Some(self.kinds.len() - 1),
            _ => self.kinds.iter().position(|&k| k == kind),
        };
        let at = found.unwrap_or_else(|| {
            self.kinds.push(kind);
            self.classes.resize(self.kinds.len() * self.words, 0);
            self.kinds.len() - 1
        });
        self.classes[at * self.words + id.index() / 64] |= 1 << (id.index() % 64);
    }

    /// Forgets zones from `zones` on (dropped by a rollback; their cells are empty by then).
    pub(super) fn truncate(&mut self, zones: usize) {
        let words = self.words.max(1);
        let clear = |set: &mut [u64]| {
            for (w, word) in set.iter_mut().enumerate() {
                let first = (w % words) * 64;
                if first + 64 <= zones {
                    continue;
                }
                let keep = zones.saturating_sub(first);
                *word &= if keep == 0 {
                    0
                } else {
                    u64::MAX >> (64 - keep)
                };
            }
        };
        clear(&mut self.held);
        clear(&mut self.classes);
        // A class whose zones are all gone is forgotten, so that the index equals a rebuilt one.
        let mut c = 0;
        while c < self.kinds.len() {
            if self.classes[c * words..(c + 1) * words]
                .iter()
                .all(|&w| w == 0)
            {
                self.kinds.remove(c);
                self.classes.drain(c * words..(c + 1) * words);
            } else {
                c += 1;
            }
        }
    }

    #[inline]
    pub(super) fn set(&mut self, zone: ZoneId, owner: Owner, owners: u16, holds: bool) {
        let at = Board::column(owner, owners) * self.words + zone.index() / 64;
        let bit = 1u64 << (zone.index() % 64);
        if let Some(w) = self.held.get_mut(at) {
            if holds {
                *w |= bit;
            } else {
                *w &= !bit;
            }
        }
    }

    #[inline]
    fn held(&self, owner: Owner, owners: u16) -> &[u64] {
        let from = Board::column(owner, owners) * self.words;
        self.held.get(from..from + self.words).unwrap_or(&[])
    }

    /// Where class `kind` is in `classes`, if any zone has that kind.
    #[inline]
    fn class_index(&self, kind: Kind) -> Option<usize> {
        self.kinds.iter().position(|&k| k == kind)
    }

    /// Word `w` of the zones of class number `class` holding `owner`'s tokens.
    #[inline]
    fn held_in_word(&self, owner: Owner, owners: u16, class: usize, w: usize) -> u64 {
        let held = self
            .held
            .get(Board::column(owner, owners) * self.words + w)
            .copied()
            .unwrap_or(0);
        held & self
            .classes
            .get(class * self.words + w)
            .copied()
            .unwrap_or(0)
    }

    #[inline]
    fn class(&self, kind: Kind) -> &[u64] {
        match self.kinds.iter().position(|&k| k == kind) {
            Some(c) => &self.classes[c * self.words..(c + 1) * self.words],
            None => &[],
        }
    }
}

/// How a [`ZoneSet`] combines its two bit sets.
#[derive(Clone, Copy, Debug)]
enum Combine {
    /// The first set.
    First,
    /// Both sets.
    Both,
    /// The second set without the first.
    SecondOnly,
    /// The first set (a class) without the zones any holder but column `column` of the second (every
    /// holder's sets, `columns` of them end to end) holds tokens in.
    OpenTo { column: usize, columns: usize },
}

/// Zones picked from the board index, in creation order, without a look-up per zone: see
/// [`Ledger::zones_holding`], [`Ledger::zones_holding_in`], [`Ledger::zones_without`] and
/// [`Ledger::zones_in`].
#[derive(Clone, Debug)]
pub struct ZoneSet<'a> {
    a: &'a [u64],
    b: &'a [u64],
    combine: Combine,
    /// The word `bits` came from, and how many words there are.
    word: usize,
    words: usize,
    bits: u64,
}

impl<'a> ZoneSet<'a> {
    #[inline]
    fn new(a: &'a [u64], b: &'a [u64], combine: Combine) -> ZoneSet<'a> {
        let words = match combine {
            Combine::First | Combine::OpenTo { .. } => a.len(),
            Combine::Both => a.len().min(b.len()),
            Combine::SecondOnly => b.len(),
        };
        let mut set = ZoneSet {
            a,
            b,
            combine,
            word: 0,
            words,
            bits: 0,
        };
        set.bits = set.word_at(0);
        set
    }

    #[inline(always)]
    fn word_at(&self, i: usize) -> u64 {
        let a = self.a.get(i).copied().unwrap_or(0);
        let b = self.b.get(i).copied().unwrap_or(0);
        match self.combine {
            Combine::First => a,
            Combine::Both => a & b,
            Combine::SecondOnly => b & !a,
            Combine::OpenTo { column, columns } => {
                let words = self.a.len();
                let others = (0..columns).filter(|&c| c != column).fold(0, |held, c| {
                    held | self.b.get(c * words + i).copied().unwrap_or(0)
                });
                a & !others
            }
        }
    }

    #[inline]
    fn words(&self) -> usize {
        self.words
    }

    /// Appends `f(zone)` for every zone left in the set, in creation order, to `out`: as
    /// `out.extend(set.map(f))`, but room is reserved once per word of 64 zones and each value is
    /// written without a capacity check of its own (a legal-action list of one action per zone spends
    /// most of its time in those checks otherwise).
    ///
    /// ```
    /// use coffer_kernel::{Cause, Key, Kind, Ledger, Owner, Zone};
    ///
    /// let mut ledger = Ledger::new(1, 1);
    /// let reserve = ledger.add_zone(Zone::new(Key::new(Owner::GAME, Kind(0), 0))).unwrap();
    /// let systems: Vec<_> = (0..4)
    ///     .map(|s| ledger.add_zone(Zone::new(Key::new(Owner::GAME, Kind(1), s))).unwrap())
    ///     .collect();
    /// ledger.stock(Owner(0), reserve, 2, Cause::Setup).unwrap();
    /// ledger.move_tokens(Owner(0), reserve, systems[1], 1, Cause::Setup).unwrap();
    /// let mut open = Vec::new();
    /// ledger.zones_without(Owner(0), Kind(1)).extend_into(&mut open, |zone| zone.index());
    /// assert_eq!(open, [systems[0].index(), systems[2].index(), systems[3].index()]);
    /// ```
    #[inline]
    pub fn extend_into<T>(mut self, out: &mut Vec<T>, mut f: impl FnMut(ZoneId) -> T) {
        loop {
            let mut bits = self.bits;
            let base = (self.word * 64) as u32;
            // `Range::map` has a trusted length: `extend` reserves once and writes in place.
            out.extend((0..bits.count_ones()).map(|_| {
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                f(ZoneId(base + bit))
            }));
            self.word += 1;
            if self.word >= self.words() {
                return;
            }
            self.bits = self.word_at(self.word);
        }
    }
}

impl Iterator for ZoneSet<'_> {
    type Item = ZoneId;

    #[inline(always)]
    fn next(&mut self) -> Option<ZoneId> {
        loop {
            if self.bits != 0 {
                let bit = self.bits.trailing_zeros();
                self.bits &= self.bits - 1;
                return Some(ZoneId((self.word * 64) as u32 + bit));
            }
            self.word += 1;
            if self.word >= self.words() {
                return None;
            }
            self.bits = self.word_at(self.word);
        }
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let rest: u32 = (self.word + 1..self.words())
            .map(|i| self.word_at(i).count_ones())
            .sum();
        let n = (self.bits.count_ones() + rest) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for ZoneSet<'_> {}

impl Ledger {
    /// The board index: a new ledger keeps it from its first zone on; a restored one builds it from the
    /// token tables on first use (a restored ledger that is never asked pays nothing for it). Every token
    /// change keeps it.
    #[inline]
    fn board(&self) -> &Board {
        self.board.get_or_init(|| self.build_board())
    }

    /// The board index as the token tables give it.
    pub(super) fn build_board(&self) -> Board {
        let mut board = Board::with_capacity(self.zones.len(), self.owners);
        for (i, zone) in self.zones.iter().enumerate() {
            board.add_zone(ZoneId(i as u32), zone.key.kind, self.owners);
        }
        // Row by row over the token matrix: one pass, no look-up per cell.
        let o = usize::from(self.owners);
        let words = board.words;
        for (z, row) in self.tokens.chunks_exact(o.max(1)).enumerate() {
            let (word, bit) = (z / 64, 1u64 << (z % 64));
            for (column, _) in row.iter().enumerate().filter(|&(_, &n)| n > 0) {
                board.held[column * words + word] |= bit;
            }
        }
        for (z, _) in self.game_tokens.iter().enumerate().filter(|&(_, &n)| n > 0) {
            board.held[o * words + z / 64] |= 1u64 << (z % 64);
        }
        board
    }

    /// Drops the board index's zones from `zones` on (a rollback removed them).
    pub(super) fn truncate_board(&mut self, zones: usize) {
        if let Some(board) = self.board.get_mut() {
            board.truncate(zones);
        }
    }

    /// K4.8: every zone holding at least one of `owner`'s tokens (a player's, or the game's), reserves
    /// included, in creation order.
    pub fn zones_holding(&self, owner: Owner) -> ZoneSet<'_> {
        ZoneSet::new(self.board().held(owner, self.owners), &[], Combine::First)
    }

    /// K4.8: the zones of class `class` (zones whose key has that kind) holding `owner`'s tokens.
    #[inline]
    pub fn zones_holding_in(&self, owner: Owner, class: Kind) -> ZoneSet<'_> {
        ZoneSet::new(
            self.board().held(owner, self.owners),
            self.board().class(class),
            Combine::Both,
        )
    }

    /// K4.8: the zones of class `class` holding none of `owner`'s tokens ("systems without my token").
    #[inline]
    pub fn zones_without(&self, owner: Owner, class: Kind) -> ZoneSet<'_> {
        ZoneSet::new(
            self.board().held(owner, self.owners),
            self.board().class(class),
            Combine::SecondOnly,
        )
    }

    /// K4.8: the zones of class `class` holding no one else's tokens: empty, or holding only `owner`'s
    /// ("the systems I may enter": no other player's, nor the game's). One pass over the index's words,
    /// no look-up per zone.
    #[inline]
    pub fn zones_open_to(&self, owner: Owner, class: Kind) -> ZoneSet<'_> {
        let board = self.board();
        ZoneSet::new(
            board.class(class),
            &board.held,
            Combine::OpenTo {
                column: Board::column(owner, self.owners),
                columns: board.columns,
            },
        )
    }

    /// K4.8: whether `zone` holds no one else's tokens: it is empty, or holds only `owner`'s (`false` for
    /// a zone that does not exist). The question of [`zones_open_to`](Self::zones_open_to) for one zone,
    /// answered from the index's bits.
    #[inline]
    pub fn is_open_to(&self, zone: ZoneId, owner: Owner) -> bool {
        if zone.index() >= self.zones.len() {
            return false;
        }
        let board = self.board();
        let (word, bit) = (zone.index() / 64, 1u64 << (zone.index() % 64));
        let column = Board::column(owner, self.owners);
        (0..board.columns)
            .filter(|&c| c != column)
            .all(|c| board.held.get(c * board.words + word).copied().unwrap_or(0) & bit == 0)
    }

    /// Every zone of class `class`.
    pub fn zones_in(&self, class: Kind) -> ZoneSet<'_> {
        ZoneSet::new(self.board().class(class), &[], Combine::First)
    }

    /// K4.8: how many of `owner`'s tokens are in zones of class `class`.
    pub fn tokens_in(&self, owner: Owner, class: Kind) -> u32 {
        self.zones_holding_in(owner, class)
            .map(|z| self.tokens(z, owner))
            .sum()
    }

    /// K4.8: returns every one of `owner`'s tokens in zones of class `class` to the owner's reserve of the
    /// zone's supply (an end-of-round clean-up), as one operation: one [`TokenOp::Return`] change per zone
    /// that held any. The reserve itself is left alone. Returns how many tokens went back.
    ///
    /// # Errors
    /// [`Refusal::Invalid`] when a zone holding the owner's tokens is of a supply the owner has no reserve
    /// of; nothing changes then.
    pub fn return_tokens(
        &mut self,
        owner: Owner,
        class: Kind,
        cause: Cause,
    ) -> Result<u32, Refusal> {
        self.holder(owner)?;
        let (owners, board) = (self.owners, self.board());
        let Some(c) = board.class_index(class) else {
            return Ok(0);
        };
        let words = board.words;
        // Checked first, so that a refusal changes nothing. A class's zones usually share one supply:
        // its reserve is looked up once, not per zone.
        let mut reserve: Option<(u16, ZoneId)> = None;
        for w in 0..words {
            let mut bits = self.board().held_in_word(owner, owners, c, w);
            while bits != 0 {
                let zone = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let supply = self.zones[zone].supply;
                if reserve.is_none_or(|(s, _)| s != supply) {
                    reserve = Some((supply, self.owner_reserve(supply, owner)?));
                }
            }
        }
        let mut returned = 0;
        for w in 0..words {
            // This word's zones as they are now; returning tokens clears bits of this word only.
            let mut bits = self.board().held_in_word(owner, owners, c, w);
            while bits != 0 {
                let zone = ZoneId((w * 64) as u32 + bits.trailing_zeros());
                bits &= bits - 1;
                let supply = self.zones[zone.index()].supply;
                let to = match reserve {
                    Some((s, r)) if s == supply => r,
                    _ => {
                        let r = self.owner_reserve(supply, owner)?;
                        reserve = Some((supply, r));
                        r
                    }
                };
                if to != zone {
                    let n = self.tokens(zone, owner);
                    self.shift(owner, TokenOp::Return, zone, to, n, cause);
                    returned += n;
                }
            }
        }
        Ok(returned)
    }

    /// K4.8: [`return_tokens`](Self::return_tokens) for every player and the game, players first.
    ///
    /// # Errors
    /// As `return_tokens`; nothing changes then.
    pub fn return_all_tokens(&mut self, class: Kind, cause: Cause) -> Result<u32, Refusal> {
        let owners = (0..self.owners).map(Owner).chain([Owner::GAME]);
        self.atomically(|l| {
            let mut returned = 0;
            for owner in owners {
                returned += l.return_tokens(owner, class, cause)?;
            }
            Ok(returned)
        })
    }
}

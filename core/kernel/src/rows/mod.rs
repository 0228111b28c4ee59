//! How the ledger's big tables are written to snapshots: as one byte string of fixed-width little-endian
//! records in binary formats (decoded by a loop instead of one serde visit per field), as arrays of
//! short tuples in human-readable ones (JSON), which keeps them readable without a field name per value.

use crate::clock::Scope;
use crate::id::{Key, Kind, Owner, ZoneId};
use crate::spec::{Amount, Permanent};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

/// A table record with a fixed-width binary encoding and a tuple form for human-readable formats.
pub(crate) trait Row: Sized {
    /// Bytes per record in binary formats.
    const WIDTH: usize;
    /// What the record is, for error messages.
    const WHAT: &'static str;
    /// The record in human-readable formats.
    type Readable: Serialize + for<'de> Deserialize<'de>;
    /// The record in human-readable formats.
    fn readable(&self) -> Self::Readable;
    /// A record from its human-readable form.
    fn from_readable(r: Self::Readable) -> Result<Self, String>;
    /// Writes exactly [`Row::WIDTH`] bytes.
    fn write(&self, out: &mut Out<'_>);
    /// Reads one record from exactly [`Row::WIDTH`] bytes.
    fn read(bytes: &mut Bytes<'_>) -> Result<Self, String>;

    /// Writes a whole table into `bytes` (cleared first).
    #[inline]
    fn write_all(rows: &[Self], bytes: &mut Vec<u8>) {
        bytes.clear();
        bytes.resize(rows.len() * Self::WIDTH, 0);
        for (row, place) in rows.iter().zip(bytes.chunks_exact_mut(Self::WIDTH)) {
            row.write(&mut Out(place));
        }
    }

    /// Reads a whole table from a whole number of records.
    ///
    /// # Errors
    /// The first bad record, by index.
    #[inline]
    fn read_all(bytes: &[u8]) -> Result<Vec<Self>, String> {
        let mut rows = Vec::with_capacity(bytes.len() / Self::WIDTH);
        for (i, record) in bytes.chunks_exact(Self::WIDTH).enumerate() {
            match Self::read(&mut Bytes(record)) {
                Ok(row) => rows.push(row),
                Err(e) => return Err(format!("{} {i}: {e}", Self::WHAT)),
            }
        }
        Ok(rows)
    }
}

/// A cursor over one record's place in the table being written, exactly [`Row::WIDTH`] bytes.
pub(crate) struct Out<'a>(&'a mut [u8]);

impl Out<'_> {
    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        let (head, rest) = std::mem::take(&mut self.0).split_at_mut(bytes.len());
        head.copy_from_slice(bytes);
        self.0 = rest;
    }
}

/// A cursor over one record's bytes; the table reader hands it exactly [`Row::WIDTH`] of them.
pub(crate) struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    #[inline]
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let (head, rest) = self.0.split_at(N);
        self.0 = rest;
        head.try_into().unwrap_or([0; N])
    }
    #[inline]
    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }
    #[inline]
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes(self.take())
    }
    #[inline]
    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    #[inline]
    fn i64(&mut self) -> i64 {
        i64::from_le_bytes(self.take())
    }
    #[inline]
    fn bool(&mut self) -> Result<bool, String> {
        match self.u8() {
            0 => Ok(false),
            1 => Ok(true),
            b => Err(format!("{b} is not a flag")),
        }
    }
    #[inline]
    fn key(&mut self) -> Key {
        Key::new(Owner(self.u16()), Kind(self.u16()), self.u32())
    }
}

#[inline]
fn write_key(key: Key, out: &mut Out<'_>) {
    out.put(&key.owner.0.to_le_bytes());
    out.put(&key.kind.0.to_le_bytes());
    out.put(&key.subject.to_le_bytes());
}

/// `0` for none, else 1 + the scope's index in [`Scope::ALL`].
#[inline]
fn scope_byte(scope: Option<Scope>) -> u8 {
    scope.map_or(0, |s| s as u8 + 1)
}

#[inline]
fn byte_scope(b: u8) -> Result<Option<Scope>, String> {
    match b {
        0 => Ok(None),
        _ => Scope::ALL
            .get(usize::from(b) - 1)
            .map(|&s| Some(s))
            .ok_or_else(|| format!("{b} is not a scope")),
    }
}

impl Row for u32 {
    const WIDTH: usize = 4;
    const WHAT: &'static str = "count";
    type Readable = u32;
    #[inline]
    fn readable(&self) -> u32 {
        *self
    }
    #[inline]
    fn from_readable(r: u32) -> Result<u32, String> {
        Ok(r)
    }
    #[inline]
    fn write(&self, out: &mut Out<'_>) {
        out.put(&self.to_le_bytes());
    }
    #[inline]
    fn read(bytes: &mut Bytes<'_>) -> Result<u32, String> {
        Ok(bytes.u32())
    }
    /// Token counts are most of a ledger's bytes: a plain loop the compiler vectorizes.
    #[inline]
    fn write_all(rows: &[u32], bytes: &mut Vec<u8>) {
        bytes.clear();
        bytes.resize(rows.len() * 4, 0);
        for (place, n) in bytes.chunks_exact_mut(4).zip(rows) {
            place.copy_from_slice(&n.to_le_bytes());
        }
    }
    #[inline]
    fn read_all(bytes: &[u8]) -> Result<Vec<u32>, String> {
        let mut rows = vec![0; bytes.len() / 4];
        for (n, b) in rows.iter_mut().zip(bytes.chunks_exact(4)) {
            *n = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        Ok(rows)
    }
}

impl Row for Option<ZoneId> {
    const WIDTH: usize = 5;
    const WHAT: &'static str = "reserve";
    type Readable = Option<ZoneId>;
    #[inline]
    fn readable(&self) -> Option<ZoneId> {
        *self
    }
    #[inline]
    fn from_readable(r: Option<ZoneId>) -> Result<Option<ZoneId>, String> {
        Ok(r)
    }
    #[inline]
    fn write(&self, out: &mut Out<'_>) {
        out.put(&[u8::from(self.is_some())]);
        out.put(&self.map_or(0, |z| z.0).to_le_bytes());
    }
    #[inline]
    fn read(bytes: &mut Bytes<'_>) -> Result<Option<ZoneId>, String> {
        let some = bytes.bool()?;
        let zone = ZoneId(bytes.u32());
        Ok(some.then_some(zone))
    }
}

impl Row for Permanent {
    const WIDTH: usize = 10;
    const WHAT: &'static str = "permanent";
    /// Owner, kind, subject, exhausted, the scope at whose end it readies.
    type Readable = (u16, u16, u32, bool, Option<Scope>);
    #[inline]
    fn readable(&self) -> Self::Readable {
        let k = self.key;
        (
            k.owner.0,
            k.kind.0,
            k.subject,
            self.exhausted,
            self.ready_at,
        )
    }
    #[inline]
    fn from_readable(
        (owner, kind, subject, exhausted, ready_at): Self::Readable,
    ) -> Result<Permanent, String> {
        Ok(Permanent {
            key: Key::new(Owner(owner), Kind(kind), subject),
            exhausted,
            ready_at,
        })
    }
    #[inline]
    fn write(&self, out: &mut Out<'_>) {
        write_key(self.key, out);
        out.put(&[u8::from(self.exhausted)]);
        out.put(&[scope_byte(self.ready_at)]);
    }
    #[inline]
    fn read(bytes: &mut Bytes<'_>) -> Result<Permanent, String> {
        Ok(Permanent {
            key: bytes.key(),
            exhausted: bytes.bool()?,
            ready_at: byte_scope(bytes.u8())?,
        })
    }
}

impl Row for Amount {
    const WIDTH: usize = 8 + 8 + 8 + 9 + 1 + 8;
    const WHAT: &'static str = "amount";
    /// Owner, kind, subject, value, floor, cap, lifetime, value on expiry.
    type Readable = (u16, u16, u32, i64, i64, Option<i64>, Scope, i64);
    #[inline]
    fn readable(&self) -> Self::Readable {
        let k = self.key;
        (
            k.owner.0,
            k.kind.0,
            k.subject,
            self.value,
            self.floor,
            self.cap,
            self.lifetime,
            self.on_expiry,
        )
    }
    #[inline]
    fn from_readable(
        (owner, kind, subject, value, floor, cap, lifetime, on_expiry): Self::Readable,
    ) -> Result<Amount, String> {
        Ok(Amount {
            key: Key::new(Owner(owner), Kind(kind), subject),
            value,
            floor,
            cap,
            lifetime,
            on_expiry,
        })
    }
    #[inline]
    fn write(&self, out: &mut Out<'_>) {
        write_key(self.key, out);
        out.put(&self.value.to_le_bytes());
        out.put(&self.floor.to_le_bytes());
        out.put(&[u8::from(self.cap.is_some())]);
        out.put(&self.cap.unwrap_or(0).to_le_bytes());
        out.put(&[scope_byte(Some(self.lifetime))]);
        out.put(&self.on_expiry.to_le_bytes());
    }
    #[inline]
    fn read(bytes: &mut Bytes<'_>) -> Result<Amount, String> {
        let key = bytes.key();
        let value = bytes.i64();
        let floor = bytes.i64();
        let capped = bytes.bool()?;
        let cap = bytes.i64();
        let lifetime = byte_scope(bytes.u8())?.ok_or("an amount's lifetime is missing")?;
        Ok(Amount {
            key,
            value,
            floor,
            cap: capped.then_some(cap),
            lifetime,
            on_expiry: bytes.i64(),
        })
    }
}

thread_local! {
    /// The bytes of the table being written, reused from one table to the next.
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Writes a table: one byte string in binary formats, an array of tuples in human-readable ones.
pub(crate) fn serialize<T: Row, S: Serializer>(rows: &[T], s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        return s.collect_seq(rows.iter().map(Row::readable));
    }
    serialize_scratch(s, |bytes| T::write_all(rows, bytes))
}

/// Serializes as one byte string the bytes `write` puts in a buffer reused from one table to the next.
fn serialize_scratch<S: Serializer>(
    s: S,
    write: impl FnOnce(&mut Vec<u8>),
) -> Result<S::Ok, S::Error> {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bytes) => {
            bytes.clear();
            write(&mut bytes);
            s.serialize_bytes(&bytes)
        }
        // Only if a `Serialize` of a row's own serializer wrote another ledger: not with these rows.
        Err(_) => {
            let mut bytes = Vec::new();
            write(&mut bytes);
            s.serialize_bytes(&bytes)
        }
    })
}

/// Reads a table written by [`serialize`].
pub(crate) fn deserialize<'de, T: Row, D: Deserializer<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    if d.is_human_readable() {
        let rows = Vec::<T::Readable>::deserialize(d)?;
        return rows
            .into_iter()
            .map(|r| T::from_readable(r).map_err(de::Error::custom))
            .collect();
    }
    d.deserialize_bytes(BytesVisitor(PhantomData::<RowTable<T>>))
}

struct RowTable<T>(PhantomData<T>);

impl<T: Row> RowTable<T> {
    fn rows<E: de::Error>(bytes: &[u8]) -> Result<Vec<T>, E> {
        if !bytes.len().is_multiple_of(T::WIDTH) {
            return Err(E::custom(format!(
                "a table of {}s is {} bytes, not a multiple of {}",
                T::WHAT,
                bytes.len(),
                T::WIDTH
            )));
        }
        T::read_all(bytes).map_err(E::custom)
    }
}

impl<T: Row> ByteString for RowTable<T> {
    type Value = Vec<T>;

    fn expecting(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a byte string of {}-byte {} records", T::WIDTH, T::WHAT)
    }

    fn read<E: de::Error>(bytes: &[u8]) -> Result<Vec<T>, E> {
        Self::rows(bytes)
    }
}

/// A value written as one byte string, read by [`BytesVisitor`].
trait ByteString {
    type Value;
    fn expecting(f: &mut fmt::Formatter<'_>) -> fmt::Result;
    fn read<E: de::Error>(bytes: &[u8]) -> Result<Self::Value, E>;
}

/// Reads a [`ByteString`] from any of the forms a format may hand it over in.
struct BytesVisitor<B>(PhantomData<B>);

impl<'de, B: ByteString> Visitor<'de> for BytesVisitor<B> {
    type Value = B::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        B::expecting(f)
    }

    fn visit_bytes<E: de::Error>(self, bytes: &[u8]) -> Result<B::Value, E> {
        B::read(bytes)
    }

    fn visit_borrowed_bytes<E: de::Error>(self, bytes: &'de [u8]) -> Result<B::Value, E> {
        B::read(bytes)
    }

    fn visit_byte_buf<E: de::Error>(self, bytes: Vec<u8>) -> Result<B::Value, E> {
        B::read(&bytes)
    }

    /// Formats that write byte strings as sequences of numbers.
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<B::Value, A::Error> {
        let mut bytes = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(b) = seq.next_element::<u8>()? {
            bytes.push(b);
        }
        B::read(&bytes)
    }
}

pub(crate) mod matrix;
pub(crate) mod zones;

#[cfg(test)]
mod tests {
    use super::matrix::{deserialize_bitmap, serialize_bitmap};
    use super::zones::{deserialize_zones, serialize_zones};
    use super::*;
    use crate::spec::Zone;

    /// Writes `row` into exactly its width, reads it back, and checks both filled and used every byte.
    fn round_trip<T: Row + PartialEq + fmt::Debug>(row: T) {
        let mut place = vec![0xAA; T::WIDTH];
        let mut out = Out(&mut place);
        row.write(&mut out);
        assert!(out.0.is_empty(), "{row:?} left bytes unwritten");
        let mut bytes = Bytes(&place);
        assert_eq!(T::read(&mut bytes).unwrap(), row);
        assert!(bytes.0.is_empty(), "{row:?} left bytes unread");
        let readable = serde_json::to_string(&row.readable()).unwrap();
        let back = T::from_readable(serde_json::from_str(&readable).unwrap()).unwrap();
        assert_eq!(back, row, "{readable}");
    }

    #[test]
    fn every_record_fills_its_width_and_reads_back() {
        let key = Key::new(Owner(u16::MAX), Kind(7), u32::MAX);
        for n in [0, 1, u32::MAX] {
            round_trip(n);
            round_trip(Some(ZoneId(n)));
        }
        round_trip(None::<ZoneId>);
        for ready_at in [None, Some(Scope::Game), Some(Scope::Step)] {
            round_trip(Permanent {
                key,
                exhausted: true,
                ready_at,
            });
        }
        for (cap, lifetime) in [(None, Scope::Game), (Some(i64::MIN), Scope::Step)] {
            round_trip(Amount {
                key,
                value: i64::MAX,
                floor: i64::MIN,
                cap,
                lifetime,
                on_expiry: -1,
            });
        }
    }

    /// Zones as the ledger writes them, for the tests.
    #[derive(Serialize, Deserialize, PartialEq, Debug)]
    struct Zones(
        #[serde(
            serialize_with = "serialize_zones",
            deserialize_with = "deserialize_zones"
        )]
        Vec<Zone>,
    );

    #[test]
    fn zones_with_extreme_fields_read_back_in_both_forms() {
        let key = Key::new(Owner(u16::MAX), Kind(7), u32::MAX - 1);
        let zone = Zone::new(key)
            .face(u8::MAX)
            .supply(u16::MAX)
            .one_per_owner();
        let next = Zone {
            key: Key::new(Owner(u16::MAX), Kind(7), u32::MAX),
            ..zone
        };
        let zones = Zones(vec![zone, next, Zone::new(Key::new(Owner(0), Kind(0), 0))]);
        let bytes = postcard::to_stdvec(&zones).unwrap();
        assert_eq!(
            bytes.len(),
            1 + 2 * 14 + 3 * 2,
            "two runs: a header each, a supply per zone"
        );
        assert_eq!(postcard::from_bytes::<Zones>(&bytes).unwrap(), zones);
        let json = serde_json::to_string(&zones).unwrap();
        assert_eq!(
            serde_json::from_str::<Zones>(&json).unwrap(),
            zones,
            "{json}"
        );
    }

    /// A token matrix as a laid ledger writes it, for the tests.
    #[derive(Serialize)]
    struct Mapped<'a>(#[serde(serialize_with = "serialize_bitmap")] &'a [u32]);

    #[test]
    fn a_token_matrix_as_bitmaps_reads_back_and_refuses_what_does_not_fit() {
        let mut cells = vec![0u32; 130];
        (cells[1], cells[4], cells[129]) = (u32::MAX, 1, 7);
        let bytes = postcard::to_stdvec(&Mapped(&cells)).unwrap();
        // The string's length, the cell count, then two runs of 64 cells (a bitmap each, and the counts
        // u32::MAX and 1) and one of 2 (a byte of bitmap, and 7).
        assert_eq!(bytes.len(), 1 + 2 + (8 + 5 + 1) + 8 + (1 + 1));
        let read = |bytes: &[u8], expected| {
            let mut de = postcard::Deserializer::from_bytes(bytes);
            deserialize_bitmap(&mut de).unwrap().cells(Some(expected))
        };
        assert_eq!(read(&bytes, cells.len()).unwrap(), cells);
        assert!(
            read(&bytes, cells.len() + 1)
                .unwrap_err()
                .contains("130 token counts")
        );
        // The string's own bytes (4 cells: a bitmap byte, then counts): a count of 0, a cell past the
        // end, bytes left over, a number past u32 or of six bytes, a number or a bitmap cut short.
        for (body, shows) in [
            (vec![4, 0b10, 0], "holds none"),
            (vec![4, 0b10000, 1], "past its 4"),
            (vec![4, 0b10, 1, 1], "1 bytes after"),
            (vec![4, 0b1, 0x80, 0x80, 0x80, 0x80, 0x10], "past u32"),
            (
                vec![4, 0b1, 0x80, 0x80, 0x80, 0x80, 0x80, 0],
                "more than five bytes",
            ),
            (vec![4, 0b1, 0x81], "ends inside a number"),
            (vec![4], "ends inside the bitmap"),
        ] {
            let mut bytes = vec![body.len() as u8];
            bytes.extend_from_slice(&body);
            let e = read(&bytes, 4).unwrap_err();
            assert!(e.contains(shows), "{body:?}: {e}");
        }
    }

    #[test]
    fn a_bad_flag_or_scope_byte_is_an_error() {
        let mut place = vec![0; Permanent::WIDTH];
        place[8] = 2;
        assert!(Permanent::read(&mut Bytes(&place)).is_err());
        place[8] = 0;
        place[9] = 6;
        assert!(Permanent::read(&mut Bytes(&place)).is_err());
        let mut place = vec![0; Amount::WIDTH];
        place[8 + 8 + 8 + 9] = 0; // no lifetime
        assert!(Amount::read(&mut Bytes(&place)).is_err());
    }
}

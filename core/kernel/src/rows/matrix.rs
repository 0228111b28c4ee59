//! The token matrix in snapshots: as its non-empty cells, or for a laid-out ledger a bitmap per 64 cells
//! of those that hold tokens, then their counts (varints).

use super::{ByteString, BytesVisitor, deserialize, serialize, serialize_scratch};
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// The token matrix (`zone * owners + owner`): dense records in binary formats; in human-readable ones
/// `[cells, [[cell, count], ...]]`, listing only the cells that hold tokens (most hold none).
pub(crate) fn serialize_matrix<S: Serializer>(cells: &[u32], s: S) -> Result<S::Ok, S::Error> {
    if !s.is_human_readable() {
        return serialize(cells, s);
    }
    let held: Vec<(usize, u32)> = cells
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n > 0)
        .map(|(i, &n)| (i, n))
        .collect();
    (cells.len(), held).serialize(s)
}

/// The token matrix of a ledger written on its setup's layout ([`crate::LaidOut`]): as
/// [`serialize_matrix`] in human-readable formats; in binary ones a byte string: the number of cells as a
/// varint (LEB128), then for each run of 64 cells a bitmap of those that hold tokens (8 bytes, fewer for
/// a last, shorter run: one bit per cell, lowest first) followed by their counts as varints. Most cells
/// are empty: a six-player command-tokens matrix of 522 cells is about 200 bytes instead of 2,088, and is
/// written and read with one branch per cell that holds tokens rather than per cell.
pub(crate) fn serialize_bitmap<S: Serializer>(cells: &[u32], s: S) -> Result<S::Ok, S::Error> {
    if s.is_human_readable() {
        return serialize_matrix(cells, s);
    }
    serialize_scratch(s, |bytes| {
        put_varint(bytes, cells.len() as u64);
        for run in cells.chunks(64) {
            let held = match run.first_chunk::<64>() {
                // A whole run, of a known length: the compiler turns the loop into vector compares.
                Some(whole) => held_bits(whole),
                None => run
                    .iter()
                    .enumerate()
                    .fold(0, |held, (i, &n)| held | u64::from(n != 0) << i),
            };
            bytes.extend_from_slice(&held.to_le_bytes()[..run.len().div_ceil(8)]);
            let mut held = held;
            while held != 0 {
                put_varint(bytes, u64::from(run[held.trailing_zeros() as usize]));
                held &= held - 1;
            }
        }
    })
}

/// A bit per cell of `run` that holds tokens, the first cell's lowest.
#[inline]
fn held_bits(run: &[u32; 64]) -> u64 {
    // Eight cells to a byte, with constant shifts: the form the compiler turns into vector compares and
    // a mask move (the loop over 64 variable shifts was not).
    let mut bits = [0u8; 8];
    for (b, o) in bits.iter_mut().zip(run.chunks_exact(8)) {
        *b = u8::from(o[0] != 0)
            | u8::from(o[1] != 0) << 1
            | u8::from(o[2] != 0) << 2
            | u8::from(o[3] != 0) << 3
            | u8::from(o[4] != 0) << 4
            | u8::from(o[5] != 0) << 5
            | u8::from(o[6] != 0) << 6
            | u8::from(o[7] != 0) << 7;
    }
    u64::from_le_bytes(bits)
}

/// Appends `n` as a LEB128 varint.
#[inline]
fn put_varint(bytes: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        bytes.push((n as u8) | 0x80);
        n >>= 7;
    }
    bytes.push(n as u8);
}

/// Reads a LEB128 varint of at most `u32::MAX` from the front of `bytes`.
#[inline]
fn take_varint(bytes: &mut &[u8]) -> Result<u32, String> {
    // Most counts are below 128: one byte.
    if let Some((&b, rest)) = bytes.split_first()
        && b < 0x80
    {
        *bytes = rest;
        return Ok(u32::from(b));
    }
    let mut n = 0u64;
    for shift in (0..35).step_by(7) {
        let Some((&b, rest)) = bytes.split_first() else {
            return Err("a token matrix ends inside a number".to_owned());
        };
        *bytes = rest;
        n |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return u32::try_from(n).map_err(|_| format!("a token matrix holds {n}, past u32"));
        }
    }
    Err("a token matrix holds a number of more than five bytes".to_owned())
}

/// Reads the token matrix [`serialize_bitmap`] wrote.
pub(crate) fn deserialize_bitmap<'de, D: Deserializer<'de>>(d: D) -> Result<Matrix, D::Error> {
    if d.is_human_readable() {
        return Matrix::deserialize(d);
    }
    d.deserialize_bytes(BytesVisitor(PhantomData::<Bitmap>))
}

struct Bitmap;

impl ByteString for Bitmap {
    type Value = Matrix;

    fn expecting(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a byte string of token counts")
    }

    /// Kept as bytes until the ledger knows how many cells it must have (an allocation the size of a
    /// count read from the bytes could be any size).
    fn read<E: de::Error>(bytes: &[u8]) -> Result<Matrix, E> {
        Ok(Matrix::Bitmap(bytes.to_vec()))
    }
}

/// The token matrix as read, expanded by the ledger once it knows how many cells it must have.
pub(crate) enum Matrix {
    /// Every cell.
    Dense(Vec<u32>),
    /// The number of cells and those that hold tokens.
    Sparse(usize, Vec<(usize, u32)>),
    /// The bytes [`serialize_bitmap`] wrote.
    Bitmap(Vec<u8>),
}

impl Matrix {
    /// How many cells the matrix says it has.
    pub(crate) fn len(&self) -> usize {
        match self {
            Matrix::Dense(cells) => cells.len(),
            Matrix::Sparse(len, _) => *len,
            Matrix::Bitmap(bytes) => take_varint(&mut &bytes[..]).map_or(0, |n| n as usize),
        }
    }

    /// Every cell, given how many there must be.
    ///
    /// # Errors
    /// The problem, when the matrix has another size or lists a cell twice, out of order, out of range
    /// or empty (a matrix has exactly one sparse form).
    pub(crate) fn cells(self, expected: Option<usize>) -> Result<Vec<u32>, String> {
        let (len, held) = match self {
            Matrix::Dense(cells) if Some(cells.len()) == expected => return Ok(cells),
            Matrix::Dense(cells) => return Err(format!("{} token counts", cells.len())),
            Matrix::Sparse(len, held) if Some(len) == expected => (len, held),
            Matrix::Sparse(len, _) => return Err(format!("{len} token counts")),
            Matrix::Bitmap(bytes) => return Matrix::expand_bitmap(&bytes, expected),
        };
        let mut cells = vec![0; len];
        let mut next = 0;
        for (cell, n) in held {
            if cell < next || cell >= len || n == 0 {
                return Err(format!(
                    "token cell [{cell}, {n}]: cells must be listed once, in order, below {len}, and hold tokens"
                ));
            }
            cells[cell] = n;
            next = cell + 1;
        }
        Ok(cells)
    }
}

impl Matrix {
    /// The cells of [`Matrix::Bitmap`]: a count of 0, a bitmap bit past the last cell or bytes left over
    /// are refused (the matrix has exactly one such form).
    fn expand_bitmap(mut bytes: &[u8], expected: Option<usize>) -> Result<Vec<u32>, String> {
        let len = take_varint(&mut bytes)? as usize;
        if Some(len) != expected {
            return Err(format!("{len} token counts"));
        }
        let mut cells = vec![0; len];
        for (r, run) in cells.chunks_mut(64).enumerate() {
            let width = run.len().div_ceil(8);
            let Some((map, rest)) = bytes.split_at_checked(width) else {
                return Err(format!(
                    "a token matrix ends inside the bitmap of cells {}",
                    r * 64
                ));
            };
            bytes = rest;
            let mut word = [0u8; 8];
            word[..width].copy_from_slice(map);
            let mut held = u64::from_le_bytes(word);
            if run.len() < 64 && held >> run.len() != 0 {
                return Err(format!("a token matrix marks cells past its {len}"));
            }
            while held != 0 {
                let i = held.trailing_zeros() as usize;
                held &= held - 1;
                let n = take_varint(&mut bytes)?;
                if n == 0 {
                    return Err(format!(
                        "token cell [{}, 0]: a cell marked as holding tokens holds none",
                        r * 64 + i
                    ));
                }
                run[i] = n;
            }
        }
        if !bytes.is_empty() {
            return Err(format!("{} bytes after a token matrix", bytes.len()));
        }
        Ok(cells)
    }
}

impl<'de> Deserialize<'de> for Matrix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Matrix, D::Error> {
        if d.is_human_readable() {
            let (len, held) = <(usize, Vec<(usize, u32)>)>::deserialize(d)?;
            Ok(Matrix::Sparse(len, held))
        } else {
            deserialize(d).map(Matrix::Dense)
        }
    }
}

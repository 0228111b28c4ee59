//! Zones in snapshots: runs of consecutive zones that differ only in a subject counting up share one
//! header, so a board of many places is a few records.

use super::{ByteString, Bytes, BytesVisitor, serialize_scratch};
use crate::id::{Key, Kind, Owner};
use crate::spec::Zone;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serializer};
use std::fmt;
use std::marker::PhantomData;

/// The zones, in runs: consecutive zones of one owner, kind, face and one-per-owner flag whose subjects
/// count up by one (a board's systems, a class's pieces in each system) are written as one run of those
/// fields, the first subject and each zone's supply. Binary: one byte string of runs, each a 14-byte
/// header (owner, kind, first subject, face, flag, zone count as u32) and 2 bytes of supply per zone.
/// Human-readable: `[[owner, kind, first subject, face, one per owner, [supply, ...]], ...]`. A
/// six-player command-tokens ledger's 87 zones are 7 runs: a sixth of the values to read.
pub(crate) fn serialize_zones<S: Serializer>(zones: &[Zone], s: S) -> Result<S::Ok, S::Error> {
    let runs = zone_runs(zones);
    if s.is_human_readable() {
        return s.collect_seq(runs.map(|run| {
            let z = &run[0];
            let supplies: Vec<u16> = run.iter().map(|z| z.supply).collect();
            (
                z.key.owner.0,
                z.key.kind.0,
                z.key.subject,
                z.face,
                z.one_per_owner,
                supplies,
            )
        }));
    }
    serialize_scratch(s, |bytes| {
        for run in runs {
            let z = &run[0];
            // A ledger holds at most `u32::MAX` zones (a `ZoneId` indexes them), so a run's count fits.
            let count = u32::try_from(run.len()).unwrap_or(u32::MAX);
            bytes.extend_from_slice(&z.key.owner.0.to_le_bytes());
            bytes.extend_from_slice(&z.key.kind.0.to_le_bytes());
            bytes.extend_from_slice(&z.key.subject.to_le_bytes());
            bytes.extend_from_slice(&[z.face, u8::from(z.one_per_owner)]);
            bytes.extend_from_slice(&count.to_le_bytes());
            for z in run {
                bytes.extend_from_slice(&z.supply.to_le_bytes());
            }
        }
    })
}

/// The zones split into the runs [`serialize_zones`] writes, each as long as it can be.
fn zone_runs(zones: &[Zone]) -> impl Iterator<Item = &[Zone]> {
    zones.chunk_by(|a, b| {
        a.key.owner == b.key.owner
            && a.key.kind == b.key.kind
            && a.face == b.face
            && a.one_per_owner == b.one_per_owner
            && a.key.subject.checked_add(1) == Some(b.key.subject)
    })
}

/// Reads the zones [`serialize_zones`] wrote (any split into runs is accepted).
pub(crate) fn deserialize_zones<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Zone>, D::Error> {
    if d.is_human_readable() {
        let runs = Vec::<(u16, u16, u32, u8, bool, Vec<u16>)>::deserialize(d)?;
        let mut zones = Vec::with_capacity(runs.iter().map(|r| r.5.len()).sum());
        for (i, (owner, kind, first, face, one_per_owner, supplies)) in runs.into_iter().enumerate()
        {
            let run = ZoneRun {
                owner,
                kind,
                first,
                face,
                one_per_owner,
            };
            run.expand(supplies.into_iter(), &mut zones)
                .map_err(|e| de::Error::custom(format!("zone run {i}: {e}")))?;
        }
        return Ok(zones);
    }
    d.deserialize_bytes(BytesVisitor(PhantomData::<ZoneRuns>))
}

/// The fields a run's zones share.
struct ZoneRun {
    owner: u16,
    kind: u16,
    first: u32,
    face: u8,
    one_per_owner: bool,
}

impl ZoneRun {
    /// Appends one zone per supply, subjects counting up from the first.
    fn expand(
        &self,
        supplies: impl ExactSizeIterator<Item = u16>,
        zones: &mut Vec<Zone>,
    ) -> Result<(), String> {
        let count = supplies.len();
        if count == 0 {
            return Err("a run holds no zone".to_owned());
        }
        // An inclusive range: `first..` would overflow stepping past a run ending at `u32::MAX`.
        let Some(last) = u32::try_from(count - 1)
            .ok()
            .and_then(|n| self.first.checked_add(n))
        else {
            return Err(format!(
                "{count} zones from subject {} run past the last subject",
                self.first
            ));
        };
        zones.extend(
            supplies
                .zip(self.first..=last)
                .map(|(supply, subject)| Zone {
                    key: Key::new(Owner(self.owner), Kind(self.kind), subject),
                    one_per_owner: self.one_per_owner,
                    face: self.face,
                    supply,
                }),
        );
        Ok(())
    }
}

struct ZoneRuns;

impl ZoneRuns {
    fn runs<E: de::Error>(mut bytes: &[u8]) -> Result<Vec<Zone>, E> {
        let mut zones = Vec::with_capacity(bytes.len() / 2);
        let mut i = 0;
        while !bytes.is_empty() {
            let bad = |e: String| E::custom(format!("zone run {i}: {e}"));
            let Some((header, rest)) = bytes.split_first_chunk::<14>() else {
                return Err(bad(format!("{} bytes, not a 14-byte header", bytes.len())));
            };
            let mut h = Bytes(header);
            // Fields are read in the order they are written (struct fields evaluate in order).
            let run = ZoneRun {
                owner: h.u16(),
                kind: h.u16(),
                first: h.u32(),
                face: h.u8(),
                one_per_owner: h.bool().map_err(bad)?,
            };
            let count = h.u32() as usize;
            let Some((supplies, rest)) =
                count.checked_mul(2).and_then(|n| rest.split_at_checked(n))
            else {
                return Err(bad(format!(
                    "{count} zones but {} bytes of supplies",
                    rest.len()
                )));
            };
            let supplies = supplies
                .chunks_exact(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]));
            run.expand(supplies, &mut zones).map_err(bad)?;
            bytes = rest;
            i += 1;
        }
        Ok(zones)
    }
}

impl ByteString for ZoneRuns {
    type Value = Vec<Zone>;

    fn expecting(f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a byte string of zone runs")
    }

    fn read<E: de::Error>(bytes: &[u8]) -> Result<Vec<Zone>, E> {
        Self::runs(bytes)
    }
}

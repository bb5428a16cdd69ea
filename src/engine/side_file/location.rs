//! Where a side record is in the side file: a segment's number and an
//! offset in it, five bytes.
//!
//! Motivation: the table of locations has a place per node number, so each
//! byte of a location is a byte a node (100 MB at 100 M nodes).
//!
//! Design: 40 bits, the offset in the low [`OFFSET_BITS`], the segment's
//! number above; the last number marks no record ([`SideLocation::NOWHERE`]).
//!
//! Consequences: a record that no location can name stays in memory
//! ([`SideLocation::new`] refuses it).

/// Bits of a [`SideLocation`]'s offset: every record starts within the
/// first 2^26 bytes (64 MiB, [`super::MAX_SEGMENT_BYTES`]) of its segment (a
/// larger record has a segment of its own, at offset 0).
const OFFSET_BITS: u32 = 26;

/// Bits of a [`SideLocation`]'s segment number: 16 383 segments alive at
/// once (the last number marks no record), 1 TiB of 64 MiB segments, or
/// 128 GiB of the 8 MiB frames a recovered snapshot's records are adopted
/// in (about 400 M nodes' records).
const SEGMENT_BITS: u32 = 40 - OFFSET_BITS;

/// The segment number no segment has.
const NO_SEGMENT: usize = (1 << SEGMENT_BITS) - 1;

/// Where one record is: its segment's number (segment numbers are reused,
/// so they stay below the count of segments alive at once) and its
/// offset, in five bytes: the table of locations has a place per node
/// number (6 bytes in three 16-bit words until issue 49's nineteenth
/// part, 8 as two `u32`s before). A record whose location does not fit
/// stays in memory ([`SideLocation::new`] refuses it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SideLocation {
    bytes: [u8; 5],
}

impl SideLocation {
    /// No record: no segment has this number, so reading it finds nothing.
    pub const NOWHERE: SideLocation = SideLocation {
        bytes: [u8::MAX; 5],
    };

    /// Offset `offset` of segment `segment`; `None` past the numbers a
    /// location holds (the record then stays in memory).
    pub fn new(segment: usize, offset: usize) -> Option<Self> {
        if segment >= NO_SEGMENT || offset >= 1 << OFFSET_BITS {
            return None;
        }
        let value = ((segment as u64) << OFFSET_BITS) | offset as u64;
        let [a, b, c, d, e, ..] = value.to_le_bytes();
        Some(SideLocation {
            bytes: [a, b, c, d, e],
        })
    }

    fn value(&self) -> u64 {
        let [a, b, c, d, e] = self.bytes;
        u64::from_le_bytes([a, b, c, d, e, 0, 0, 0])
    }

    /// Its segment's number; for [`Self::NOWHERE`] one past any number a
    /// segment may have, though the segments outnumber what a location
    /// holds (reading or releasing nowhere finds no segment).
    pub(super) fn segment(&self) -> usize {
        match (self.value() >> OFFSET_BITS) as usize {
            NO_SEGMENT => usize::MAX,
            segment => segment,
        }
    }

    pub(super) fn offset(&self) -> usize {
        (self.value() & ((1 << OFFSET_BITS) - 1)) as usize
    }
}

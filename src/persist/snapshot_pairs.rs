//! A snapshot's candidate pairs (format 9), found when the snapshot is
//! read and decoded when recovery asks for them.
//!
//! Motivation: at 100 M nodes the pairs are 4.6 GiB of the 10 GiB that
//! recovery decodes. Decoded with the nodes and keys, before anything was
//! built, their reading was about 9 s of the disk with both cores mostly
//! idle; nothing but the candidate indexes needs them, and those are not
//! what ends recovery (the forest is).
//!
//! Design: [`super::snapshot::read_snapshot`] notes each pair frame (its
//! offset and length) and what the candidate frame says of each table
//! (its mix and counts); [`SnapshotPairs::pending`] hands recovery a
//! [`PendingPairs`] that reads the frames in file order with `pread`
//! (read ahead, then dropped from the page cache: nothing reads them
//! again), checks each frame's checksum, and gives each table once its
//! last frame is decoded.
//!
//! Consequences: damage in the pairs (a checksum, a count, a pair naming
//! no node) is found during recovery, as damage in the side records is:
//! the store reports the snapshot and falls back to an older one.

use super::codec::{self, Decoder, Frame};
use crate::candidates::captured::{
    CandidatePairs, CandidateTable, CandidateTexts, PendingPairs, TablePairs,
};
use crate::engine::side_file::MappedFile;

/// Pairs of one candidate table (version 9).
pub(super) const SNAPSHOT_CANDIDATE_PAIRS: u8 = b'C';

/// Frames asked of the disk ahead of the one decoded (each at most 512
/// KiB: 65 536 pairs).
const FRAMES_READ_AHEAD: usize = 16;

/// What a snapshot's candidate frame says of one table: its mix, and
/// how many pairs the copier took and how many were copied ahead of it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(super) struct CandidateTableEnd {
    pub mix: [u32; 2],
    pub counts: (u64, u64),
}

/// A frame of a snapshot, found by its header and decoded later: where
/// it starts and its payload's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BulkFrame {
    pub offset: usize,
    pub length: usize,
}

impl BulkFrame {
    /// The frame's bytes, header included.
    fn range(self) -> std::ops::Range<usize> {
        self.offset..self.offset + 8 + self.length
    }
}

/// A snapshot's candidate pairs, not yet decoded.
#[derive(Debug, Clone)]
pub struct SnapshotPairs {
    file: MappedFile,
    /// The pair frames, in file order.
    frames: Vec<BulkFrame>,
    /// Per [`CandidateTable`].
    ends: [CandidateTableEnd; 3],
    texts: CandidateTexts,
    /// The snapshot's nodes: a pair naming a position past them is damage.
    node_count: u64,
}

impl SnapshotPairs {
    pub(super) fn new(
        file: MappedFile,
        frames: Vec<BulkFrame>,
        ends: [CandidateTableEnd; 3],
        texts: CandidateTexts,
        node_count: u64,
    ) -> Self {
        SnapshotPairs {
            file,
            frames,
            ends,
            texts,
            node_count,
        }
    }

    /// How many texts the indexes held, and whether short texts were
    /// searched (known without decoding the pairs).
    pub fn texts(&self) -> CandidateTexts {
        self.texts
    }

    /// The pairs for recovery, decoded as it reads them.
    pub fn pending(self) -> PendingPairs {
        PendingPairs::new(self.texts, Box::new(move |each| self.read_each(each)))
    }

    /// Every table's pairs, decoded.
    ///
    /// # Errors
    ///
    /// The first damage in file order, named.
    pub fn read_all(self) -> Result<CandidatePairs, String> {
        self.pending().read_all()
    }

    fn read_each(&self, each: &mut dyn FnMut(CandidateTable, TablePairs)) -> Result<(), String> {
        let mut buffer = Vec::new();
        let mut decoded = CandidatePairs::default();
        let mut given = [false; 3];
        let mut current = None;
        for (position, &frame) in self.frames.iter().enumerate() {
            if let Some(&ahead) = self.frames.get(position + FRAMES_READ_AHEAD) {
                self.file.read_ahead(ahead.range());
            }
            self.file
                .read_once(frame.range(), &mut buffer)
                .map_err(|error| error.to_string())?;
            let body = match codec::read_frame(&buffer, 0) {
                Frame::Valid(body, _) => body,
                Frame::End => return Err("a frame of candidate pairs is empty".to_string()),
                Frame::Damaged(reason) => return Err(reason.to_string()),
            };
            let table = decode_pairs(&mut Decoder::new(body), &mut decoded, self.node_count)?;
            if current != Some(table) {
                if let Some(done) = current {
                    self.give(done, &mut decoded, &mut given, each)?;
                }
                if given[table as usize] {
                    return Err("a table's candidate pairs are split".to_string());
                }
                current = Some(table);
            }
        }
        for table in current.into_iter().chain(CandidateTable::ALL) {
            if !given[table as usize] {
                self.give(table, &mut decoded, &mut given, each)?;
            }
        }
        Ok(())
    }

    /// `table`'s pairs, all decoded, given to `each` if they are as many
    /// as the candidate frame says.
    fn give(
        &self,
        table: CandidateTable,
        decoded: &mut CandidatePairs,
        given: &mut [bool; 3],
        each: &mut dyn FnMut(CandidateTable, TablePairs),
    ) -> Result<(), String> {
        let index = table as usize;
        given[index] = true;
        let mut pairs = std::mem::take(&mut decoded.tables[index]);
        let end = self.ends[index];
        if end.counts != (pairs.in_order.len() as u64, pairs.ahead.len() as u64) {
            return Err("candidate pairs do not match their count".to_string());
        }
        pairs.mix = end.mix;
        each(table, pairs);
        Ok(())
    }
}

impl PartialEq for SnapshotPairs {
    /// The same tables and the same frames' bytes, wherever they are.
    fn eq(&self, other: &Self) -> bool {
        let bytes = |pairs: &SnapshotPairs, frame: BulkFrame| {
            pairs.file.bytes().get(frame.range()).map(<[u8]>::to_vec)
        };
        self.ends == other.ends
            && self.texts == other.texts
            && self.node_count == other.node_count
            && self.frames.len() == other.frames.len()
            && self
                .frames
                .iter()
                .zip(&other.frames)
                .all(|(&ours, &theirs)| bytes(self, ours) == bytes(other, theirs))
    }
}

impl Eq for SnapshotPairs {}

/// A frame of one candidate table's pairs: its kind, the table, whether
/// the capture's copier took them, then each folded key and its node's
/// position among the snapshot's nodes. Gives the table.
fn decode_pairs(
    decoder: &mut Decoder<'_>,
    pairs: &mut CandidatePairs,
    node_count: u64,
) -> Result<CandidateTable, String> {
    let malformed = |error: codec::DecodeError| error.to_string();
    if decoder.u8().map_err(malformed)? != SNAPSHOT_CANDIDATE_PAIRS {
        return Err("a frame of candidate pairs holds something else".to_string());
    }
    let table = CandidateTable::from_number(decoder.u8().map_err(malformed)?)
        .ok_or("unknown candidate table")?;
    let in_order = decoder.u8().map_err(malformed)? != 0;
    let count = decoder.count().map_err(malformed)?;
    let bytes = decoder
        .bytes(count.checked_mul(8).ok_or("length overflow")?)
        .map_err(malformed)?;
    pairs.start_part(table, in_order, count);
    for pair in bytes.chunks_exact(8) {
        let key = u32::from_le_bytes([pair[0], pair[1], pair[2], pair[3]]);
        let position = u32::from_le_bytes([pair[4], pair[5], pair[6], pair[7]]);
        if u64::from(position) >= node_count {
            return Err("a candidate pair names no node".to_string());
        }
        pairs.push(table, in_order, key, position);
    }
    Ok(table)
}

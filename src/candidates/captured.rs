//! The candidate indexes as a snapshot keeps them: every (key, node) pair
//! of the LSH's two halves and of the sketch index, copied while writes
//! go on ([`crate::key_node_table::TableCapture`]) and built back whole
//! at recovery, where they were taken back from the side records.
//!
//! Motivation: recovery rebuilt both indexes from the side records: each
//! short text's shingles taken back from its record (from its letters, in
//! a lean record) and 16 MinHash rows computed, each long text's sketch
//! read. On a stream's real texts that was most of a lean recovery (10 M
//! nodes on one core: 14.7 s, shingles alone 44 %), and the rebuilt
//! buckets were those of the live nodes inserted in arrival order, not the
//! live buckets: a full bucket drops its oldest, and when a newer holder
//! goes first (a document deleted) the rebuild kept one the live index had
//! dropped, so a recovered sidecar could find other candidates.
//!
//! Design: three tables ([`CandidateTable`]), each pair copied as its
//! folded key and its node (8 bytes), a key's pairs side by side and
//! oldest first. The snapshot writes them with the node's position among
//! its nodes (the number recovery gives it); recovery sorts each table's
//! pairs in the new table's order (a stable radix sort, as the rebuild
//! did) and writes it front to back.
//!
//! Consequences: a snapshot is 8 bytes a pair larger (about 8 pairs a
//! short text, 4 a long one); recovery reads no record for the indexes.

use std::path::Path;

use super::buckets::{BucketEntries, KeyedNode};
use super::shingle_index::{LshShape, ShingleIndex, ShingleIndexBuilder};
use super::sketch_index::{SketchIndex, SketchIndexBuilder};
use crate::capture::{CaptureSink, Image};
use crate::units::NodeId;

/// The tables a snapshot keeps, in the order it writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateTable {
    /// The LSH's half of band keys whose top bit is 0.
    ShortLow = 0,
    /// ... whose top bit is 1.
    ShortHigh = 1,
    /// The sketch index.
    Long = 2,
}

impl CandidateTable {
    pub const ALL: [CandidateTable; 3] = [
        CandidateTable::ShortLow,
        CandidateTable::ShortHigh,
        CandidateTable::Long,
    ];

    pub fn from_number(number: u8) -> Option<Self> {
        Self::ALL.get(usize::from(number)).copied()
    }
}

/// A copy of the candidate indexes under way.
#[derive(Debug)]
pub struct CandidatesCapture {
    sinks: [CaptureSink<KeyedNode>; 3],
    texts: CandidateTexts,
}

/// How many texts each index held (the indexes count them), and whether
/// short texts were searched by their shingles (else the LSH is empty,
/// and a recovery that searches them must index them from their records).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CandidateTexts {
    pub short: usize,
    pub long: usize,
    pub short_text_search: bool,
}

/// The candidate indexes as of a capture's moment.
#[derive(Debug)]
pub struct CapturedCandidates {
    pub tables: [Image<KeyedNode>; 3],
    pub texts: CandidateTexts,
}

impl CandidatesCapture {
    /// Starts copying both indexes as they are now: call with writes
    /// locked out. Large copies go to files of `directory`.
    pub fn start(
        short: &ShingleIndex,
        long: &SketchIndex,
        short_text_search: bool,
        directory: Option<&Path>,
    ) -> Self {
        let [low, high] = short.start_capture(directory);
        CandidatesCapture {
            sinks: [low, high, long.start_capture(directory)],
            texts: CandidateTexts {
                short: short.len(),
                long: long.len(),
                short_text_search,
            },
        }
    }

    /// Moves what was copied so far into the images (between slices).
    pub fn flush(&self) {
        for sink in &self.sinks {
            sink.flush();
        }
    }

    /// The copies, once both indexes say all is copied
    /// ([`ShingleIndex::take_capture`], [`SketchIndex::take_capture`]).
    pub fn finish(
        self,
        short: Option<[Image<KeyedNode>; 2]>,
        long: Option<Image<KeyedNode>>,
    ) -> Option<CapturedCandidates> {
        let [low, high] = short?;
        Some(CapturedCandidates {
            tables: [low, high, long?],
            texts: self.texts,
        })
    }
}

/// A snapshot's pairs read back, each node as its number at recovery.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CandidatePairs {
    /// The LSH's halves, in the order they were copied.
    pub short: [BucketEntries<u64>; 2],
    /// The sketch index's.
    pub long: BucketEntries<u32>,
    pub texts: CandidateTexts,
}

impl CandidatePairs {
    /// Adds a pair of `key` (folded) and `node` to `table`.
    pub fn push(&mut self, table: CandidateTable, key: u32, node: NodeId) {
        match table {
            CandidateTable::ShortLow => self.short[0].push_folded(key, node),
            CandidateTable::ShortHigh => self.short[1].push_folded(key, node),
            CandidateTable::Long => self.long.push_folded(key, node),
        }
    }

    /// The next pairs of `table` (`capacity` of them, about) go to a part
    /// of their own: parts are joined without a copy, where one vector
    /// grown by doubling is copied at each step.
    pub fn start_part(&mut self, table: CandidateTable, capacity: usize) {
        match table {
            CandidateTable::ShortLow => self.short[0].start_part(capacity),
            CandidateTable::ShortHigh => self.short[1].start_part(capacity),
            CandidateTable::Long => self.long.start_part(capacity),
        }
    }

    /// Pairs held in `table`.
    pub fn len_of(&self, table: CandidateTable) -> usize {
        match table {
            CandidateTable::ShortLow => self.short[0].len(),
            CandidateTable::ShortHigh => self.short[1].len(),
            CandidateTable::Long => self.long.len(),
        }
    }

    /// The two indexes' builders: the LSH's halves are built apart
    /// ([`ShingleIndexBuilder::take_halves`]).
    pub fn into_builders(self, shape: LshShape) -> (ShingleIndexBuilder, SketchIndexBuilder) {
        (
            ShingleIndex::builder_of_pairs(shape, self.short, self.texts.short),
            SketchIndex::builder_of_pairs(self.long, self.texts.long),
        )
    }
}

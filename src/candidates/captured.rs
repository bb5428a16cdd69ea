//! The candidate indexes as a snapshot keeps them: every (key, node) pair
//! of the LSH's two halves and of the sketch index, copied while writes
//! go on ([`crate::table_capture::TableCapture`]) and built back whole
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
//! its nodes (the number recovery gives it), and each table's mix (the
//! seeded bijection its keys are ordered by). The copier walks the keys
//! in that order, so recovery makes each table with the same mix and
//! writes the copier's pairs front to back, with no sort; the few keys
//! copied before a change during the capture are inserted after them.
//! Pairs found out of order are sorted under a fresh mix instead.
//!
//! Consequences: a snapshot is 8 bytes a pair larger (about 8 pairs a
//! short text, 4 a long one); recovery reads no record for the indexes.
//! A recovered table keeps the mix it was written with (a process drew
//! it): whoever reads the snapshot could craft keys that pile into one
//! stretch of the table, but a snapshot holds every document's letters
//! anyway and is kept where the state is.

use std::path::Path;

use super::buckets::{BucketEntries, CapturedPairs, KeyedNode};
use super::shingle_index::{LshShape, ShingleBuckets, ShingleIndex};
use super::sketch_index::SketchIndex;
use crate::capture::CaptureSink;
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
    /// Each table's two sinks ([`crate::table_capture::TableCapture`]).
    sinks: Vec<CaptureSink<KeyedNode>>,
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

/// The candidate indexes as of a capture's moment, per [`CandidateTable`].
#[derive(Debug)]
pub struct CapturedCandidates {
    pub tables: [CapturedPairs; 3],
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
        let mut sinks: Vec<CaptureSink<KeyedNode>> = short
            .start_capture(directory)
            .into_iter()
            .flatten()
            .collect();
        sinks.extend(long.start_capture(directory));
        CandidatesCapture {
            sinks,
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
        short: Option<[CapturedPairs; 2]>,
        long: Option<CapturedPairs>,
    ) -> Option<CapturedCandidates> {
        let [low, high] = short?;
        Some(CapturedCandidates {
            tables: [low, high, long?],
            texts: self.texts,
        })
    }
}

/// One table's pairs read back from a snapshot, each node as its number
/// at recovery: the table's mix, the copier's pairs and the others.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct TablePairs {
    pub mix: [u32; 2],
    pub in_order: BucketEntries<u32>,
    pub ahead: BucketEntries<u32>,
}

impl TablePairs {
    fn part(&mut self, in_order: bool) -> &mut BucketEntries<u32> {
        if in_order {
            &mut self.in_order
        } else {
            &mut self.ahead
        }
    }

    /// Pairs held.
    pub fn len(&self) -> usize {
        self.in_order.len() + self.ahead.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// A half of the LSH, built.
    pub fn into_short_half(self) -> ShingleBuckets {
        ShingleBuckets::from_captured(self.mix, self.in_order.retyped(), self.ahead.retyped())
    }
}

/// A snapshot's pairs read back, per [`CandidateTable`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CandidatePairs {
    pub tables: [TablePairs; 3],
    pub texts: CandidateTexts,
}

impl CandidatePairs {
    /// Adds a pair of `key` (folded) and `node` to `table`: to the
    /// copier's pairs (`in_order`) or the others.
    pub fn push(&mut self, table: CandidateTable, in_order: bool, key: u32, node: NodeId) {
        self.tables[table as usize]
            .part(in_order)
            .push_folded(key, node);
    }

    /// The next pairs of `table` (`capacity` of them, about) go to a part
    /// of their own: parts are joined without a copy, where one vector
    /// grown by doubling is copied at each step.
    pub fn start_part(&mut self, table: CandidateTable, in_order: bool, capacity: usize) {
        self.tables[table as usize]
            .part(in_order)
            .start_part(capacity);
    }

    /// `more`'s pairs after these, table by table (pairs decoded apart,
    /// in file order).
    pub fn append(&mut self, more: CandidatePairs) {
        for (table, more) in self.tables.iter_mut().zip(more.tables) {
            table.in_order.append(more.in_order);
            table.ahead.append(more.ahead);
        }
    }

    /// The tables' pairs: the LSH's halves (each built apart,
    /// [`TablePairs::into_short_half`], then [`ShingleIndex::from_halves`])
    /// and the sketch index's, with the texts they hold.
    pub fn into_tables(self) -> ([TablePairs; 2], TablePairs, CandidateTexts) {
        let [low, high, long] = self.tables;
        ([low, high], long, self.texts)
    }

    /// The sketch index of `long`'s pairs.
    pub fn long_index(long: TablePairs, texts: CandidateTexts) -> SketchIndex {
        SketchIndex::from_captured(long.mix, long.in_order, long.ahead, texts.long)
    }

    /// The LSH of its two halves, built.
    pub fn short_index(halves: [ShingleBuckets; 2], texts: CandidateTexts) -> ShingleIndex {
        ShingleIndex::from_halves(LshShape::default(), halves, texts.short)
    }
}

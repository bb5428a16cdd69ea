//! The ledger as of one position of its log, copied a slice at a time
//! while writes go on ([`crate::capture`]): a snapshot's state, taken
//! without stopping writes for the whole copy.
//!
//! Motivation: at 10 M nodes a copy of the nodes, side-record locations
//! and document keys took seconds under the exclusive lock.
//!
//! Design: [`Ledger::start_capture`] (writes locked out, at the log
//! position the snapshot is named by) notes each table's length and takes
//! what is small at once (counters, unsettled placements, which node
//! slots are in use); [`Ledger::capture_some`] copies a slice under the
//! shared lock; every write meanwhile keeps the value a place had before
//! it is copied. [`Ledger::take_capture`] ends it; the snapshot is written
//! from the image without any lock ([`CapturedLedger::into_image`]).

use super::keys::KEY_COPY_WEIGHT;
use super::{DocumentKey, KeyEntry, Ledger, SentTo};
use crate::candidates::captured::{CandidateTable, CandidateTexts};
use crate::capture::{CaptureSink, Image};
use crate::engine::capture::{CapturedEngine, EngineCapture, EngineImage};
use crate::engine::commonness::CommonSentenceRecord;
use crate::forest::{ForestCounters, NodeRecord};
use crate::units::Fingerprint;

/// A capture of the ledger under way.
#[derive(Debug)]
pub struct LedgerCapture {
    engine: EngineCapture,
    keys: [CaptureSink<KeyEntry>; 2],
    pending: Vec<(Fingerprint, u32)>,
    sent: Vec<(Fingerprint, SentTo)>,
    common_sentences: Vec<CommonSentenceRecord>,
}

/// The ledger's state as of a capture's moment.
#[derive(Debug)]
pub struct CapturedLedger {
    engine: CapturedEngine,
    /// The keys with their nodes' numbers, in no order.
    keys: Image<KeyEntry>,
    pending: Vec<(Fingerprint, u32)>,
    sent: Vec<(Fingerprint, SentTo)>,
    common_sentences: Vec<CommonSentenceRecord>,
}

impl CapturedLedger {
    /// The snapshot's contents, built without any lock: the nodes and side
    /// records read from the capture's image in arrival order, the keys
    /// sorted where they were copied.
    pub fn into_image(self) -> SnapshotImage {
        let engine = self.engine.into_image();
        let positions = engine.positions();
        // A key whose node was gone at the capture's moment (no position
        // among the nodes) is left out.
        let mut keys = self.keys;
        keys.retain(|entry| position_of(&positions, entry).is_some());
        keys.sort_unstable_by_key(KeyEntry::key);
        SnapshotImage {
            engine,
            positions,
            keys,
            pending: self.pending,
            sent: self.sent,
            common_sentences: self.common_sentences,
        }
    }
}

/// What a snapshot writes, as of a capture's moment, read in the order it
/// is written: the forest's nodes and their side records in arrival order,
/// every document key sorted, the placements waiting for an answer.
///
/// Motivation: a snapshot built every node's record, side-record entry
/// and key pair into vectors of their own beside the capture's image:
/// about 90 bytes a node more than the image, so that at 100 M nodes
/// (15.5 GB of heap) a snapshot needed 9 GB more than a 24 GB machine had
/// left. Read from the image, the records cost a 4-byte node number each.
#[derive(Debug)]
pub struct SnapshotImage {
    engine: EngineImage,
    /// Each node number's position among the nodes ([`EngineImage::positions`]).
    positions: Vec<u32>,
    keys: Image<KeyEntry>,
    pub pending: Vec<(Fingerprint, u32)>,
    pub sent: Vec<(Fingerprint, SentTo)>,
    pub common_sentences: Vec<CommonSentenceRecord>,
}

impl SnapshotImage {
    pub fn counters(&self) -> ForestCounters {
        self.engine.counters()
    }

    pub fn node_count(&self) -> usize {
        self.engine.node_count()
    }

    /// The nodes, in arrival order.
    pub fn nodes(&self) -> impl Iterator<Item = NodeRecord> + '_ {
        self.engine.nodes()
    }

    pub fn side_count(&self) -> usize {
        self.engine.side_count()
    }

    /// The side records, in the arrival order of their nodes.
    pub fn for_each_side_record<'a>(&'a self, visit: impl FnMut(u32, &'a [u8])) {
        self.engine.for_each_side_record(visit);
    }

    pub fn key_count(&self) -> usize {
        self.keys.len()
    }

    /// Every document key and its node's position among [`Self::nodes`],
    /// sorted by key: what recovery numbers the node by.
    pub fn keys_by_position(&self) -> impl Iterator<Item = (DocumentKey, u32)> + '_ {
        self.keys.iter().filter_map(|entry| {
            Some((
                DocumentKey(entry.key()),
                position_of(&self.positions, entry)?,
            ))
        })
    }

    /// How many texts the candidate indexes held, and whether short texts
    /// were searched by their shingles.
    pub fn candidate_texts(&self) -> CandidateTexts {
        self.engine.candidate_texts()
    }

    /// The mix of one candidate table (its copier's pairs are in its
    /// order).
    pub fn candidate_mix(&self, table: CandidateTable) -> [u32; 2] {
        self.engine.candidate_pairs(table).mix
    }

    /// The pairs of one candidate table as (folded key, the node's
    /// position among [`Self::nodes`]), a key's side by side and oldest
    /// first: the copier's (`in_order`: keys in the mix's order) or those
    /// copied before changes. Every node a pair names was captured.
    pub fn candidate_pairs(
        &self,
        table: CandidateTable,
        in_order: bool,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        let pairs = self.engine.candidate_pairs(table);
        let pairs = if in_order {
            &pairs.in_order
        } else {
            &pairs.ahead
        };
        pairs.iter().filter_map(|pair| {
            let position = *self.positions.get(pair.node as usize)?;
            (position != u32::MAX).then_some((pair.key, position))
        })
    }

    /// Every document key and its fingerprint, sorted.
    pub fn keys(&self) -> impl Iterator<Item = (DocumentKey, Fingerprint)> + '_ {
        self.keys.iter().filter_map(|entry| {
            let fingerprint = self.engine.fingerprint_at(entry.node)?;
            Some((DocumentKey(entry.key()), fingerprint))
        })
    }
}

/// The position among the captured nodes of `entry`'s node, if it was
/// one of them.
fn position_of(positions: &[u32], entry: &KeyEntry) -> Option<u32> {
    positions
        .get(entry.node as usize)
        .copied()
        .filter(|&position| position != u32::MAX)
}

impl LedgerCapture {
    /// Moves what [`Ledger::capture_some`] copied so far into the
    /// capture's images (files the kernel may write out): call between
    /// slices, without the ledger's lock, so that writes never wait for
    /// the kernel's writing out.
    pub fn flush(&self) {
        self.engine.flush();
        for sink in &self.keys {
            sink.flush();
        }
    }
}

impl Ledger {
    /// Starts capturing the state as it is now: call with writes locked
    /// out, at the log position the snapshot will be named by. A capture
    /// already running is dropped.
    pub fn start_capture(&self) -> LedgerCapture {
        let engine = self.engine.start_capture();
        // Beside the side records: a file the kernel may write out.
        let keys = self
            .node_of_key
            .start_capture(self.engine.capture_directory());
        LedgerCapture {
            engine,
            keys,
            pending: self.pending_records(),
            sent: self.sent_records(),
            // Bounded (2^18 entries, about 8 MiB): copied at once.
            common_sentences: self.engine.common_sentence_records(),
        }
    }

    /// Copies up to about `budget_bytes` more of the capture (a little
    /// more where one table ends and the next begins); `true` once all is
    /// copied. Call with writes locked out (readers may run): each call is
    /// a pause for writes, none for readers.
    pub fn capture_some(&self, budget_bytes: usize) -> bool {
        self.engine.capture_some(budget_bytes)
            && self
                .node_of_key
                .capture_some(budget_bytes / size_of::<KeyEntry>() / KEY_COPY_WEIGHT)
    }

    /// The captured state once [`Ledger::capture_some`] said all is copied
    /// (the capture ends); `None`, the capture dropped, before.
    pub fn take_capture(&self, capture: LedgerCapture) -> Option<CapturedLedger> {
        let keys = self.node_of_key.take_capture();
        let engine = self.engine.take_capture(capture.engine);
        let (Some(engine), Some(keys)) = (engine, keys) else {
            self.stop_capture();
            return None;
        };
        Some(CapturedLedger {
            engine,
            keys,
            pending: capture.pending,
            sent: capture.sent,
            common_sentences: capture.common_sentences,
        })
    }

    /// Ends a capture without its image (a snapshot given up).
    pub fn stop_capture(&self) {
        self.engine.stop_capture();
        self.node_of_key.stop_capture();
    }
}

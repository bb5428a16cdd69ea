//! Candidate search for long texts whose reprint moved the simhash too far:
//! their bottom-k sketches ([`crate::fingerprint::sketch`]) share hashes.
//!
//! Motivation: a long reprint edited in the sentence that carries its
//! simhash is still found by the text it shares with the original.
//!
//! Design: each sketch is indexed under its `probes` smallest hashes; two
//! texts at Jaccard `J` share their single smallest hash with probability
//! `J`, so with several probes a real reprint is almost always a candidate.
//! Hashes shared by very many texts (boilerplate shingles) fill their bucket
//! and stop being indexed. Candidates come ranked, most probes shared first,
//! then the newest, so the engine can stop after a few confirmations.
//!
//! Consequences: `probes` index entries per long node. Candidates are
//! confirmed by the engine, never trusted as found.

use std::path::Path;

use super::Ranked;
use super::buckets::{BoundedBuckets, BucketEntries, CapturedPairs, KeyedNode, Overflow};
use crate::capture::CaptureSink;
use crate::units::NodeId;

/// Smallest hashes of a sketch under which it is indexed: at J = 0.7 a
/// reprint shares at least one of them with probability ≈ 1 − 0.3⁴ = 0.99
/// (DEV: the same F1 as with 8, half the index).
pub const PROBES: usize = 4;

/// A bucket holding this many sketches stops taking more: its hash is a
/// shingle of boilerplate, not of one story.
pub const MAX_BUCKET: usize = 64;

/// Smallest sketch hash → the nodes of the long texts indexed under it.
#[derive(Debug)]
pub struct SketchIndex {
    buckets: BoundedBuckets<u32>,
    texts: usize,
}

impl Default for SketchIndex {
    fn default() -> Self {
        SketchIndex {
            buckets: BoundedBuckets::new(MAX_BUCKET, Overflow::Refuse),
            texts: 0,
        }
    }
}

impl SketchIndex {
    pub fn len(&self) -> usize {
        self.texts
    }

    pub fn is_empty(&self) -> bool {
        self.texts == 0
    }

    /// The keys a text of `sketch` is stored under and looked up by: two
    /// texts can meet in this index only through a key they share.
    pub fn keys(sketch: &[u32]) -> impl Iterator<Item = u32> + '_ {
        sketch.iter().take(PROBES).copied()
    }

    /// Index `node` under the smallest hashes of `sketch`; an empty
    /// sketch is not indexed.
    pub fn insert(&mut self, node: NodeId, sketch: &[u32]) {
        if sketch.is_empty() {
            return;
        }
        for &hash in sketch.iter().take(PROBES) {
            self.buckets.insert(hash, node);
        }
        self.texts += 1;
    }

    /// An index built from many sketches at once (recovery): the same as
    /// inserting them in the order [`SketchIndexBuilder::add`] is called.
    pub fn builder() -> SketchIndexBuilder {
        SketchIndexBuilder::default()
    }

    /// An index of a snapshot's pairs ([`BoundedBuckets::from_captured`],
    /// [`crate::candidates::captured`]), holding `texts` texts.
    pub fn from_captured(
        mix: [u32; 2],
        in_order: BucketEntries<u32>,
        ahead: BucketEntries<u32>,
        texts: usize,
    ) -> Self {
        SketchIndex {
            buckets: BoundedBuckets::from_captured(
                MAX_BUCKET,
                Overflow::Refuse,
                mix,
                in_order,
                ahead,
            ),
            texts,
        }
    }

    /// Starts copying the pairs as they are now (a snapshot's capture:
    /// [`BoundedBuckets::start_capture`]).
    pub fn start_capture(&self, directory: Option<&Path>) -> [CaptureSink<KeyedNode>; 2] {
        self.buckets.start_capture(directory)
    }

    /// Copies about `budget` more pairs; `true` once all are copied.
    pub fn capture_some(&self, budget: usize) -> bool {
        self.buckets.capture_some(budget)
    }

    /// The copy once all is copied; `None` before.
    pub fn take_capture(&self) -> Option<CapturedPairs> {
        self.buckets.take_capture()
    }

    /// Ends a capture without its copy.
    pub fn stop_capture(&self) {
        self.buckets.stop_capture();
    }

    pub fn remove(&mut self, node: NodeId, sketch: &[u32]) {
        if sketch.is_empty() {
            return;
        }
        for &hash in sketch.iter().take(PROBES) {
            self.buckets.remove(hash, node);
        }
        self.texts = self.texts.saturating_sub(1);
    }

    /// Nodes indexed under any of the `PROBES` smallest hashes of `sketch`,
    /// each once (ranked as the short-text index ranks them); hashes whose
    /// bucket is full are skipped.
    pub fn candidates(&self, sketch: &[u32], order_key: impl Fn(NodeId) -> u64) -> Vec<NodeId> {
        self.ranked(sketch, order_key).collect()
    }

    /// [`SketchIndex::candidates`], ranked as they are read.
    pub fn ranked<F: Fn(NodeId) -> u64>(&self, sketch: &[u32], order_key: F) -> Ranked<F> {
        super::rank_by_hits_then_age(
            sketch.iter().take(PROBES).map(|&hash| {
                move |nodes: &mut Vec<NodeId>| {
                    // A full bucket is boilerplate: it answers nothing.
                    if self.buckets.nodes_into(hash, nodes) {
                        nodes.clear();
                    }
                }
            }),
            order_key,
        )
    }

    /// Rough heap bytes used.
    pub fn approx_heap_bytes(&self) -> usize {
        self.buckets.approx_heap_bytes()
    }
}

/// Collects sketches for [`SketchIndex::builder`].
#[derive(Debug, Default)]
pub struct SketchIndexBuilder {
    entries: BucketEntries<u32>,
    texts: usize,
}

impl SketchIndexBuilder {
    /// The sketches of `parts`, one after another (each part's entries
    /// copied once).
    pub fn concat(parts: Vec<SketchIndexBuilder>) -> SketchIndexBuilder {
        let texts = parts.iter().map(|part| part.texts).sum();
        SketchIndexBuilder {
            entries: BucketEntries::concat(parts.into_iter().map(|part| part.entries).collect()),
            texts,
        }
    }

    /// Room for `texts` more sketches' probes.
    pub fn reserve(&mut self, texts: usize) {
        self.entries.reserve(texts * PROBES);
    }

    /// Gives back the room [`Self::reserve`] took and no sketch used.
    pub fn shrink_to_fit(&mut self) {
        self.entries.shrink_to_fit();
    }

    /// As [`SketchIndex::insert`] would index it.
    pub fn add(&mut self, node: NodeId, sketch: &[u32]) {
        if sketch.is_empty() {
            return;
        }
        for &hash in sketch.iter().take(PROBES) {
            self.entries.push(hash, node);
        }
        self.texts += 1;
    }

    pub fn build(self) -> SketchIndex {
        SketchIndex {
            buckets: BoundedBuckets::from_entries(MAX_BUCKET, Overflow::Refuse, self.entries),
            texts: self.texts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_finds_shared_probes_and_forgets_removed_texts() {
        let mut index = SketchIndex::default();
        index.insert(1, &[10, 20, 30]);
        index.insert(2, &[40, 50]);
        assert_eq!(index.candidates(&[20, 99], u64::from), vec![1]);
        assert!(index.candidates(&[99], u64::from).is_empty());
        index.remove(1, &[10, 20, 30]);
        assert!(index.candidates(&[20], u64::from).is_empty());
        assert_eq!(index.len(), 1);
    }

    #[test]
    fn sketches_sharing_more_probes_come_first() {
        let mut index = SketchIndex::default();
        index.insert(1, &[10, 20, 30, 40]);
        index.insert(2, &[10, 21, 31, 41]);
        index.insert(3, &[10, 20, 32, 42]);
        assert_eq!(
            index.candidates(&[10, 20, 30, 43], u64::from),
            vec![1, 3, 2]
        );
    }

    #[test]
    fn an_index_built_at_once_answers_as_one_built_sketch_by_sketch() {
        let sketches: Vec<Vec<u32>> = (0..300u32)
            .map(|node| (0..6).map(|probe| (node * 7 + probe * 13) % 90).collect())
            .collect();
        let mut one_by_one = SketchIndex::default();
        let mut builder = SketchIndex::builder();
        for (node, sketch) in (0u32..).zip(&sketches) {
            one_by_one.insert(node, sketch);
            builder.add(node, sketch);
        }
        builder.add(999, &[]);
        let at_once = builder.build();
        assert_eq!(at_once.len(), one_by_one.len());
        for sketch in &sketches {
            assert_eq!(
                at_once.candidates(sketch, u64::from),
                one_by_one.candidates(sketch, u64::from)
            );
        }
    }

    #[test]
    fn full_buckets_stop_answering() {
        let mut index = SketchIndex::default();
        for node in 0..MAX_BUCKET as u32 {
            index.insert(node, &[7, 1000 + node]);
        }
        assert!(
            index.candidates(&[7], u64::from).is_empty(),
            "a boilerplate hash finds nothing"
        );
        assert_eq!(index.candidates(&[1003], u64::from), vec![3]);
    }
}

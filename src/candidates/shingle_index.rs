//! Candidate search for short texts: MinHash LSH over character shingles.
//!
//! Motivation: a 64-bit simhash of a 20-character headline moves far more
//! than 3 bits when one word changes or a repost adds `转发：` in front: with
//! a handful of features, every feature decides many bits. So at k = 3 the
//! multi-index finds almost none of a short text's reprints (seeds 000 and
//! 003 say the same). Short texts need a candidate search that works on set
//! overlap instead of bit distance.
//!
//! Design: each short text's shingle set gets a MinHash signature of
//! `bands × rows` values; each band is hashed to one key, and the text is
//! stored under every band key. Texts with Jaccard similarity `J` share at
//! least one band with probability `1 - (1 - J^rows)^bands`. Candidates are
//! node numbers ([`NodeId`]); the engine confirms each one by exact
//! Jaccard similarity before it can join, so a false candidate costs time,
//! never precision.
//!
//! A band key holds at most [`MAX_BUCKET`] texts and drops its oldest for a
//! new one: a story reposted all day stays findable through its newest
//! copies (the ones still touched, so the ones that stay), and a key shared
//! by many unrelated texts (a common phrase) costs a bounded scan. Candidates
//! come ranked: most bands shared first (the closest texts), then the newest,
//! so the engine can stop after a few confirmations without losing the
//! likely ones.
//!
//! Consequences: memory is about `bands` map entries per short node. Removal
//! needs the same shingle set that was inserted (the engine keeps it).

use xxhash_rust::xxh3::xxh3_64_with_seed;

use std::path::Path;

use crate::candidates::Ranked;
use crate::candidates::buckets::{
    BoundedBuckets, BucketEntries, CapturedPairs, KeyedNode, Overflow,
};
use crate::capture::CaptureSink;
use crate::units::NodeId;

/// Most texts one band key holds; see [`ShingleIndex::insert`].
pub const MAX_BUCKET: usize = 16;

/// Shape of the LSH: `bands × rows` MinHash values per text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LshShape {
    pub bands: usize,
    pub rows: usize,
}

impl Default for LshShape {
    /// 8 bands of 2 rows: a pair at Jaccard 0.5 shares a band with
    /// probability 0.90, at 0.6 with 0.97, at 0.3 with 0.54 (then rejected
    /// by the exact check).
    fn default() -> Self {
        LshShape { bands: 8, rows: 2 }
    }
}

/// Band key → the nodes of the short texts stored under it.
#[derive(Debug)]
pub struct ShingleIndex {
    shape: LshShape,
    /// Each row's seed ([`row_seed`]), computed once.
    row_seeds: Box<[u64]>,
    /// Band keys in two halves by their top bit ([`half_of`]): one map
    /// each, so recovery builds them on two threads.
    buckets: [BoundedBuckets<u64>; 2],
    texts: usize,
}

/// Which half of the buckets holds `key`.
fn half_of(key: u64) -> usize {
    (key >> 63) as usize
}

/// One half of a [`ShingleIndex`]'s buckets, built apart
/// ([`ShingleIndexBuilder::take_halves`]).
#[derive(Debug)]
pub struct ShingleBuckets(BoundedBuckets<u64>);

/// The entries of one half, to be built into [`ShingleBuckets`].
#[derive(Debug, Default)]
pub struct ShingleBucketsBuilder(BucketEntries<u64>);

impl ShingleBuckets {
    /// A half of a snapshot's pairs ([`BoundedBuckets::from_captured`]).
    pub fn from_captured(
        mix: [u32; 2],
        in_order: BucketEntries<u64>,
        ahead: BucketEntries<u64>,
    ) -> Self {
        ShingleBuckets(BoundedBuckets::from_captured(
            MAX_BUCKET,
            Overflow::DropOldest,
            mix,
            in_order,
            ahead,
        ))
    }
}

impl ShingleBucketsBuilder {
    pub fn build(self) -> ShingleBuckets {
        ShingleBuckets(BoundedBuckets::from_entries(
            MAX_BUCKET,
            Overflow::DropOldest,
            self.0,
        ))
    }
}

impl ShingleIndex {
    pub fn new(shape: LshShape) -> Self {
        let shape = LshShape {
            bands: shape.bands.max(1),
            rows: shape.rows.max(1),
        };
        ShingleIndex {
            shape,
            row_seeds: (0..shape.bands * shape.rows).map(row_seed).collect(),
            buckets: [
                BoundedBuckets::new(MAX_BUCKET, Overflow::DropOldest),
                BoundedBuckets::new(MAX_BUCKET, Overflow::DropOldest),
            ],
            texts: 0,
        }
    }

    /// Number of texts stored.
    pub fn len(&self) -> usize {
        self.texts
    }

    /// An index built from many texts at once (recovery): the same as
    /// inserting them in the order [`ShingleIndexBuilder::add`] is called.
    pub fn builder(shape: LshShape) -> ShingleIndexBuilder {
        ShingleIndexBuilder {
            index: ShingleIndex::new(shape),
            halves: Default::default(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.texts == 0
    }

    /// An index of its two halves built apart (from a snapshot's pairs,
    /// [`crate::candidates::captured`]), holding `texts` texts.
    pub fn from_halves(shape: LshShape, halves: [ShingleBuckets; 2], texts: usize) -> Self {
        ShingleIndex {
            buckets: halves.map(|half| half.0),
            texts,
            ..ShingleIndex::new(shape)
        }
    }

    /// Starts copying both halves as they are now (a snapshot's capture:
    /// [`BoundedBuckets::start_capture`]).
    pub fn start_capture(&self, directory: Option<&Path>) -> [[CaptureSink<KeyedNode>; 2]; 2] {
        [0, 1].map(|half| self.buckets[half].start_capture(directory))
    }

    /// Copies about `budget` more pairs; `true` once all are copied.
    pub fn capture_some(&self, budget: usize) -> bool {
        let [low, high] = &self.buckets;
        low.capture_some(budget) && high.capture_some(budget)
    }

    /// Both halves' copies once all is copied; `None` before.
    pub fn take_capture(&self) -> Option<[CapturedPairs; 2]> {
        let [low, high] = &self.buckets;
        Some([low.take_capture()?, high.take_capture()?])
    }

    /// Ends a capture without its copies.
    pub fn stop_capture(&self) {
        for half in &self.buckets {
            half.stop_capture();
        }
    }

    /// Store `node` under the band keys of `shingles` (sorted,
    /// de-duplicated 32-bit shingle hashes). Empty sets are not stored.
    pub fn insert(&mut self, node: NodeId, shingles: &[u32]) {
        if shingles.is_empty() {
            return;
        }
        let keys = self.band_keys(shingles);
        self.insert_keyed(node, &keys);
    }

    /// [`ShingleIndex::insert`] with the band keys already computed
    /// ([`ShingleIndex::band_keys`] of non-empty shingles).
    pub fn insert_keyed(&mut self, node: NodeId, keys: &[u64]) {
        if keys.is_empty() {
            return;
        }
        // A full bucket takes no more: candidate lists stay bounded, and the
        // text is still found through its other bands.
        for &key in keys {
            self.buckets[half_of(key)].insert(key, node);
        }
        self.texts += 1;
    }

    /// Remove what `insert(node, shingles)` stored.
    pub fn remove(&mut self, node: NodeId, shingles: &[u32]) {
        if shingles.is_empty() {
            return;
        }
        for key in self.band_keys(shingles) {
            self.buckets[half_of(key)].remove(key, node);
        }
        self.texts = self.texts.saturating_sub(1);
    }

    /// Nodes sharing at least one band with `shingles`, each once: those
    /// sharing the most bands first, then the newest, then by `order_key`.
    pub fn candidates(&self, shingles: &[u32], order_key: impl Fn(NodeId) -> u64) -> Vec<NodeId> {
        self.ranked(shingles, order_key).collect()
    }

    /// [`ShingleIndex::candidates`], ranked as they are read.
    pub fn ranked<F: Fn(NodeId) -> u64>(&self, shingles: &[u32], order_key: F) -> Ranked<F> {
        let keys = if shingles.is_empty() {
            Vec::new()
        } else {
            self.band_keys(shingles)
        };
        self.ranked_by_keys(&keys, order_key)
    }

    /// [`ShingleIndex::ranked`] with the band keys already computed.
    pub fn ranked_by_keys<F: Fn(NodeId) -> u64>(&self, keys: &[u64], order_key: F) -> Ranked<F> {
        super::rank_by_hits_then_age(
            keys.iter().map(|&key| {
                move |nodes: &mut Vec<NodeId>| {
                    self.buckets[half_of(key)].nodes_into(key, nodes);
                }
            }),
            order_key,
        )
    }

    pub fn approx_heap_bytes(&self) -> usize {
        self.buckets
            .iter()
            .map(BoundedBuckets::approx_heap_bytes)
            .sum()
    }

    /// The keys a text of `shingles` is stored under and looked up by
    /// (one per band): two texts can meet in this index only through a
    /// key they share.
    pub fn band_keys(&self, shingles: &[u32]) -> Vec<u64> {
        if shingles.is_empty() {
            return Vec::new();
        }
        let mut keys = Vec::with_capacity(self.shape.bands);
        self.band_keys_into(shingles, &mut keys);
        keys
    }

    fn band_keys_into(&self, shingles: &[u32], keys: &mut Vec<u64>) {
        let LshShape { bands, rows } = self.shape;
        keys.clear();
        keys.extend((0..bands).map(|band| {
            let mut key = band as u64;
            for &seed in &self.row_seeds[band * rows..(band + 1) * rows] {
                let minimum = row_minimum(shingles, seed);
                key = xxh3_64_with_seed(&minimum.to_le_bytes(), key);
            }
            key
        }));
    }
}

/// Collects texts for [`ShingleIndex::builder`].
#[derive(Debug)]
pub struct ShingleIndexBuilder {
    /// Empty: its shape and row seeds compute the band keys.
    index: ShingleIndex,
    halves: [ShingleBucketsBuilder; 2],
}

impl ShingleIndexBuilder {
    /// The texts of `parts`, one after another (each part's entries copied
    /// once); `None` for no parts.
    pub fn concat(parts: Vec<ShingleIndexBuilder>) -> Option<ShingleIndexBuilder> {
        let texts = parts.iter().map(|part| part.index.texts).sum();
        let mut firsts = Vec::with_capacity(parts.len());
        let mut seconds = Vec::with_capacity(parts.len());
        let mut index = None;
        for part in parts {
            let [first, second] = part.halves;
            firsts.push(first.0);
            seconds.push(second.0);
            index.get_or_insert(part.index);
        }
        let mut index = index?;
        index.texts = texts;
        Some(ShingleIndexBuilder {
            index,
            halves: [
                ShingleBucketsBuilder(BucketEntries::concat(firsts)),
                ShingleBucketsBuilder(BucketEntries::concat(seconds)),
            ],
        })
    }

    /// The two halves' entries, to be built apart (on two threads) and
    /// given back to [`Self::assemble`].
    pub fn take_halves(&mut self) -> [ShingleBucketsBuilder; 2] {
        std::mem::take(&mut self.halves)
    }

    /// The index of these texts, from the halves [`Self::take_halves`]
    /// gave, built.
    pub fn assemble(self, halves: [ShingleBuckets; 2]) -> ShingleIndex {
        ShingleIndex {
            buckets: halves.map(|half| half.0),
            ..self.index
        }
    }

    /// Room for `texts` more texts' band keys, as many in each half as
    /// they bring on average (a half that gets more grows as usual).
    pub fn reserve(&mut self, texts: usize) {
        let per_half = texts * self.index.shape.bands / 2;
        // Three standard deviations of a binomial split, so that a run
        // of short texts rarely doubles its part.
        let margin = 3 * per_half.isqrt() + 16;
        for half in &mut self.halves {
            half.0.reserve(per_half + margin);
        }
    }

    /// Gives back the room [`Self::reserve`] took and no text used.
    pub fn shrink_to_fit(&mut self) {
        for half in &mut self.halves {
            half.0.shrink_to_fit();
        }
    }

    /// As [`ShingleIndex::insert`] would store it.
    pub fn add(&mut self, node: NodeId, shingles: &[u32], keys: &mut Vec<u64>) {
        if shingles.is_empty() {
            return;
        }
        self.index.band_keys_into(shingles, keys);
        for &key in keys.iter() {
            self.halves[half_of(key)].0.push(key, node);
        }
        self.index.texts += 1;
    }

    pub fn build(mut self) -> ShingleIndex {
        let halves = self.take_halves().map(ShingleBucketsBuilder::build);
        self.assemble(halves)
    }
}

/// The seed of one MinHash row: distinct, odd, well spread.
fn row_seed(row: usize) -> u64 {
    xxh3_64_with_seed(&(row as u64).to_le_bytes(), 0x5eed) | 1
}

/// The smallest of one row's hashes of `shingles` (0 for none): the
/// same value on every machine, computed eight at a time where the CPU
/// multiplies 64-bit lanes (AVX-512DQ), which the portable build cannot
/// assume.
fn row_minimum(shingles: &[u32], seed: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512dq") {
        // SAFETY: the CPU has the features the function is compiled for.
        return unsafe { row_minimum_avx512(shingles, seed) };
    }
    row_minimum_portable(shingles, seed)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
fn row_minimum_avx512(shingles: &[u32], seed: u64) -> u64 {
    row_minimum_portable(shingles, seed)
}

#[inline(always)]
fn row_minimum_portable(shingles: &[u32], seed: u64) -> u64 {
    shingles
        .iter()
        .map(|&shingle| permuted(shingle, seed))
        .min()
        .unwrap_or(0)
}

/// One row's hash of a shingle. The shingles are already xxh3 hashes, so a
/// multiply-xorshift of the hash with the row's seed is as good a
/// permutation for MinHash as hashing again, at a fraction of the cost
/// (16 rows × every bigram of every short text).
#[inline(always)]
fn permuted(shingle: u32, seed: u64) -> u64 {
    let mixed = (u64::from(shingle) ^ seed).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    mixed ^ (mixed >> 29)
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The vector path (where the CPU has it) gives every row's
        /// minimum the portable one gives: band keys, and so the index,
        /// do not depend on the machine.
        #[test]
        fn a_rows_minimum_is_the_same_on_every_path(
            shingles in proptest::collection::vec(proptest::num::u32::ANY, 0..300),
            row in 0usize..64,
        ) {
            let seed = row_seed(row);
            proptest::prop_assert_eq!(
                row_minimum(&shingles, seed),
                row_minimum_portable(&shingles, seed)
            );
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx512dq") {
                // SAFETY: checked just above.
                let vector = unsafe { row_minimum_avx512(&shingles, seed) };
                proptest::prop_assert_eq!(vector, row_minimum_portable(&shingles, seed));
            }
        }
    }

    proptest::proptest! {
        /// A text's band keys are those of its shingle set however its
        /// hashes come: recovery takes them from lean records unsorted,
        /// a recurring shingle there each time.
        #[test]
        fn band_keys_do_not_depend_on_the_order_or_repeats_of_hashes(
            hashes in proptest::collection::vec(proptest::num::u32::ANY, 1..120),
            repeated in proptest::collection::vec(proptest::num::usize::ANY, 0..40),
        ) {
            let index = ShingleIndex::new(LshShape::default());
            let mut as_they_come = hashes.clone();
            as_they_come.extend(repeated.iter().map(|&at| hashes[at % hashes.len()]));
            as_they_come.reverse();
            let mut set = hashes;
            set.sort_unstable();
            set.dedup();
            proptest::prop_assert_eq!(index.band_keys(&as_they_come), index.band_keys(&set));
        }
    }

    fn set(range: std::ops::Range<u32>) -> Vec<u32> {
        range.collect()
    }

    #[test]
    fn identical_sets_are_candidates_and_disjoint_ones_are_not() {
        let mut index = ShingleIndex::new(LshShape::default());
        index.insert(1, &set(0..20));
        index.insert(2, &set(1000..1020));
        assert_eq!(index.candidates(&set(0..20), u64::from), vec![1]);
        assert!(index.candidates(&set(5000..5020), u64::from).is_empty());
        assert_eq!(index.len(), 2);
    }

    #[test]
    fn similar_sets_are_found_with_high_probability() {
        let mut index = ShingleIndex::new(LshShape::default());
        // 50 texts; each query shares 18 of 22 shingles (J ≈ 0.69) with its text.
        for text in 0..50u32 {
            index.insert(text, &set(text * 100..text * 100 + 20));
        }
        let found = (0..50u32)
            .filter(|&text| {
                index
                    .candidates(&set(text * 100 + 2..text * 100 + 22), u64::from)
                    .contains(&text)
            })
            .count();
        assert!(found >= 45, "found {found} of 50");
    }

    #[test]
    fn pairs_are_found_at_the_rate_the_shape_promises() {
        // Shingles are xxh3 hashes in real use; 2 000 pairs of 30 and 30
        // shingles sharing 20 (Jaccard 0.5): 8 bands of 2 rows find a pair
        // with probability 1 - (1 - 0.5²)⁸ = 0.90. (The rows' cheap
        // permutation is as good as independent hashing here.)
        let hashed = |values: std::ops::Range<u32>| -> Vec<u32> {
            let mut shingles: Vec<u32> = values
                .map(|value| xxh3_64_with_seed(&value.to_le_bytes(), 7) as u32)
                .collect();
            shingles.sort_unstable();
            shingles
        };
        let pairs = 2_000u32;
        let found = (0..pairs)
            .filter(|&pair| {
                let mut index = ShingleIndex::new(LshShape::default());
                let base = pair * 1_000;
                index.insert(1, &hashed(base..base + 30));
                !index
                    .candidates(&hashed(base + 10..base + 40), u64::from)
                    .is_empty()
            })
            .count();
        let rate = found as f64 / f64::from(pairs);
        assert!(
            (0.87..=0.93).contains(&rate),
            "found {rate:.3}, expected 0.90"
        );
    }

    #[test]
    fn remove_undoes_insert() {
        let mut index = ShingleIndex::new(LshShape::default());
        index.insert(1, &set(0..10));
        index.insert(2, &set(0..10));
        index.remove(1, &set(0..10));
        assert_eq!(index.candidates(&set(0..10), u64::from), vec![2]);
        index.remove(2, &set(0..10));
        assert!(index.candidates(&set(0..10), u64::from).is_empty());
        assert!(index.is_empty());
        assert!(index.buckets.iter().all(BoundedBuckets::is_empty));
    }

    #[test]
    fn candidates_sharing_more_bands_come_first_then_the_newest() {
        let mut index = ShingleIndex::new(LshShape::default());
        index.insert(1, &set(0..20));
        index.insert(2, &set(0..20));
        index.insert(3, &set(10..30));
        let found = index.candidates(&set(0..20), u64::from);
        // 1 and 2 share every band; 2 is newer. 3 shares some, or none.
        assert_eq!(&found[..2], &[2, 1]);
    }

    #[test]
    fn buckets_are_bounded_and_keep_the_newest() {
        let mut index = ShingleIndex::new(LshShape::default());
        for node in 0..(MAX_BUCKET as u32 + 10) {
            index.insert(node, &set(0..10));
        }
        let found = index.candidates(&set(0..10), u64::from);
        assert_eq!(found.len(), MAX_BUCKET);
        assert_eq!(found[0], MAX_BUCKET as u32 + 9);
        assert!(!found.contains(&0));
    }

    #[test]
    fn an_index_built_at_once_answers_as_one_built_text_by_text() {
        let texts: Vec<(NodeId, Vec<u32>)> = (0..400u32)
            .map(|node| (node, set(node % 37..node % 37 + 12 + node % 5)))
            .collect();
        let mut one_by_one = ShingleIndex::new(LshShape::default());
        let mut builder = ShingleIndex::builder(LshShape::default());
        let mut keys = Vec::new();
        for (node, shingles) in &texts {
            one_by_one.insert(*node, shingles);
            builder.add(*node, shingles, &mut keys);
        }
        builder.add(999, &[], &mut keys);
        let at_once = builder.build();
        assert_eq!(at_once.len(), one_by_one.len());
        for (_, shingles) in &texts {
            assert_eq!(
                at_once.candidates(shingles, u64::from),
                one_by_one.candidates(shingles, u64::from)
            );
        }
    }

    #[test]
    fn empty_sets_are_ignored() {
        let mut index = ShingleIndex::new(LshShape::default());
        index.insert(1, &[]);
        assert!(index.is_empty());
        assert!(index.candidates(&[], u64::from).is_empty());
    }
}

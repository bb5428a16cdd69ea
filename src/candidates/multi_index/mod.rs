//! All stored 64-bit fingerprints within Hamming distance `k` of a query.
//!
//! # Motivation
//!
//! Every document that goes through the sidecar asks "which known fingerprints
//! are within `k` bits of mine?" against tens of millions of stored
//! fingerprints. A linear scan is out of the question; a sorted list only helps
//! for exact matches.
//!
//! # Design
//!
//! The pigeonhole multi-index of seed 002 / Manku et al.: the 64 bits are split
//! into `k + 1` contiguous blocks whose widths differ by at most one bit (for
//! the default `k = 3`: four blocks of 16 bits). Two fingerprints that differ in
//! at most `k` bits cannot differ in all `k + 1` blocks, so they agree exactly on
//! at least one block. There is one table per block, mapping the block's value
//! to the bucket of full fingerprints that have that value; a query looks up its
//! own block values in every table and verifies each candidate with
//! `popcount(a ^ b) <= k`.
//!
//! - Narrow blocks (at most [`DIRECT_TABLE_MAX_BITS`] bits) use a direct
//!   table indexed by the block value, no hashing at all, whose entries are
//!   the fingerprint without the block's bits (6 bytes at `k = 3`), buckets
//!   packed back to back by groups, every group in one vector with room
//!   after it ([`super::packed_buckets`]): that matters at 50 M
//!   fingerprints × `k + 1` copies.
//! - Wide blocks (`k` ≤ 2) use a hash map from block value to bucket of
//!   whole fingerprints; buckets holding a single fingerprint are stored
//!   inline, without an allocation.
//! - Buckets store the fingerprint's bits, not an id, so verification is a
//!   sequential scan with no pointer chasing.
//! - A candidate that agrees with the query on several blocks is found in each
//!   of those tables. It is reported only from the first block it agrees on,
//!   which deduplicates without allocating.
//! - A query looks all its buckets up, and touches each, before scanning any,
//!   so their cache misses overlap; the scan then tests chunks of 16 candidates
//!   without branches (vectorised by the compiler) and looks closer only at
//!   the rare chunk holding a neighbour. Together this made queries 3× faster
//!   at 1 M fingerprints.
//!
//! # Consequences
//!
//! Memory is `k + 1` entries per fingerprint (about 25 bytes at `k = 3`,
//! 6.3 per entry with the groups' room); a query costs `k + 1` bucket scans whose
//! length is `n / 2^(64 / (k + 1))` on average (about 760 per table at 50 M
//! fingerprints and `k = 3`), so it is bound by memory bandwidth at that size.
//! The index is a set: inserting a present fingerprint is a no-op. It has no
//! locking; the caller serialises access.

use std::collections::hash_map::Entry;

use thiserror::Error;

use super::packed_buckets::{PackedBucket, PackedBuckets};

/// Largest supported Hamming distance. With `k = 16` the 17 blocks are 3 or 4
/// bits wide, beyond which the index stops being selective.
pub const MAX_SUPPORTED_DISTANCE: u32 = 16;

/// Default Hamming distance (seed 002: "海明距离小于等于3").
pub const DEFAULT_MAX_DISTANCE: u32 = 3;

/// Blocks up to this many bits get a direct (vector-indexed) table; wider
/// blocks get a hash map.
pub const DIRECT_TABLE_MAX_BITS: u32 = 20;

/// `k + 1` for the largest supported `k`.
const MAX_BLOCK_COUNT: usize = MAX_SUPPORTED_DISTANCE as usize + 1;

/// Candidates checked together, without branches, in a bucket scan.
const SCAN_CHUNK: usize = 16;

/// Up to this `k` the scan filter clears bits instead of counting them.
const CLEAR_BITS_MAX_DISTANCE: u32 = 5;

/// Errors when building a [`MultiIndex`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum IndexError {
    /// The requested distance is larger than [`MAX_SUPPORTED_DISTANCE`].
    #[error("max distance {requested} is out of range (supported: 0..={supported})")]
    MaxDistanceOutOfRange {
        /// What was asked for.
        requested: u32,
        /// The largest supported value.
        supported: u32,
    },
}

use crate::hashing::approx_map_heap_bytes;
pub use crate::hashing::{FingerprintBuildHasher, FingerprintHasher, FingerprintMap};

/// One contiguous block of bits of a fingerprint.
#[derive(Debug, Clone, Copy)]
struct Block {
    shift: u32,
    width: u32,
    /// The block's bits in place (not shifted down).
    mask_in_place: u64,
}

impl Block {
    fn value(self, fingerprint: u64) -> u64 {
        (fingerprint & self.mask_in_place) >> self.shift
    }
}

/// Splits 64 bits into `block_count` contiguous blocks, most significant
/// first, the first `64 % block_count` of them one bit wider.
fn split_into_blocks(block_count: u32) -> Vec<Block> {
    let base_width = 64 / block_count;
    let wider_blocks = 64 % block_count;
    let mut blocks = Vec::with_capacity(block_count as usize);
    let mut high_bit = 64;
    for block_index in 0..block_count {
        let width = base_width + u32::from(block_index < wider_blocks);
        let shift = high_bit - width;
        let unshifted_mask = u64::MAX >> (64 - width);
        blocks.push(Block {
            shift,
            width,
            mask_in_place: unshifted_mask << shift,
        });
        high_bit = shift;
    }
    blocks
}

/// The entries of a chunk of [`SCAN_CHUNK`] packed entries (`window` holds
/// them and the padding after), each masked to `rest_mask`. Entries of 6
/// bytes (the default `k = 3`) are cut out of whole 8-byte words, four
/// from every three, which the compiler vectorises; other sizes are read
/// one unaligned word each.
#[inline]
fn chunk_rests<const ENTRY_BYTES: usize>(window: &[u8], rest_mask: u64) -> [u64; SCAN_CHUNK] {
    let mut rests = [0u64; SCAN_CHUNK];
    if ENTRY_BYTES == 6
        && let Some(bytes) = window.get(..SCAN_CHUNK * 6)
    {
        let (words, _) = bytes.as_chunks::<8>();
        for (four, three) in rests.chunks_exact_mut(4).zip(words.chunks_exact(3)) {
            let [first, second, third] = [0, 1, 2].map(|index| u64::from_le_bytes(three[index]));
            four[0] = first;
            four[1] = (first >> 48) | (second << 16);
            four[2] = (second >> 32) | (third << 32);
            four[3] = third >> 16;
        }
    } else {
        for (index, rest) in rests.iter_mut().enumerate() {
            let at = index * ENTRY_BYTES;
            *rest = window
                .get(at..at + 8)
                .and_then(|bytes| bytes.try_into().ok())
                .map_or(u64::MAX, u64::from_le_bytes);
        }
    }
    rests.map(|rest| rest & rest_mask)
}

/// Appends to a bucket, growing it by about a quarter when full (instead of
/// doubling) to keep slack low across millions of buckets. `bucket_words`
/// tracks the total capacity of all buckets.
fn push_lean(bucket: &mut Vec<u64>, fingerprint: u64, bucket_words: &mut usize) {
    if bucket.len() == bucket.capacity() {
        let before = bucket.capacity();
        bucket.reserve_exact((bucket.len() / 4).max(4));
        *bucket_words += bucket.capacity() - before;
    }
    bucket.push(fingerprint);
}

/// Removes `fingerprint` from a bucket (order is not kept); gives memory back
/// when the bucket has shrunk to well under half its capacity.
fn remove_lean(bucket: &mut Vec<u64>, fingerprint: u64, bucket_words: &mut usize) -> bool {
    let Some(position) = bucket.iter().position(|&stored| stored == fingerprint) else {
        return false;
    };
    bucket.swap_remove(position);
    if bucket.capacity() > 16 && bucket.len() * 2 < bucket.capacity() {
        let before = bucket.capacity();
        bucket.shrink_to(bucket.len() + bucket.len() / 4);
        *bucket_words -= before - bucket.capacity();
    }
    true
}

/// Bucket of a hash-map table: a single fingerprint needs no allocation.
#[derive(Debug, Clone)]
enum HashedBucket {
    One(u64),
    Many(Vec<u64>),
}

impl HashedBucket {
    fn as_slice(&self) -> &[u64] {
        match self {
            Self::One(fingerprint) => std::slice::from_ref(fingerprint),
            Self::Many(fingerprints) => fingerprints,
        }
    }
}

/// One table of the multi-index.
#[derive(Debug, Clone)]
enum BlockTable {
    /// Indexed directly by the block value, entries without the block's
    /// bits ([`PackedBuckets`]).
    Packed(PackedBuckets),
    /// Keyed by the block value, entries whole.
    Hashed(FingerprintMap<HashedBucket>),
}

/// One table's bucket for a query.
#[derive(Debug, Clone, Copy)]
enum BucketView<'a> {
    Packed(PackedBucket<'a>),
    Whole(&'a [u64]),
}

impl BucketView<'_> {
    /// The bucket's first byte (to start its cache miss early).
    fn first_byte(&self) -> u8 {
        match self {
            Self::Packed(bucket) => bucket.bytes.first().copied().unwrap_or(0),
            Self::Whole(fingerprints) => fingerprints.first().map_or(0, |&word| word as u8),
        }
    }
}

impl BlockTable {
    fn for_block(block: Block) -> Self {
        if block.width <= DIRECT_TABLE_MAX_BITS {
            Self::Packed(PackedBuckets::new(block.shift, block.width))
        } else {
            Self::Hashed(FingerprintMap::default())
        }
    }

    fn bucket(&self, block_value: u64) -> BucketView<'_> {
        match self {
            Self::Packed(buckets) => BucketView::Packed(buckets.bucket(block_value)),
            Self::Hashed(buckets) => BucketView::Whole(
                buckets
                    .get(&block_value)
                    .map_or(&[][..], HashedBucket::as_slice),
            ),
        }
    }

    fn contains(&self, block_value: u64, fingerprint: u64) -> bool {
        match self {
            Self::Packed(buckets) => buckets.contains(block_value, buckets.rest_of(fingerprint)),
            Self::Hashed(buckets) => buckets
                .get(&block_value)
                .is_some_and(|bucket| bucket.as_slice().contains(&fingerprint)),
        }
    }

    fn insert(&mut self, block_value: u64, fingerprint: u64, bucket_words: &mut usize) {
        match self {
            Self::Packed(buckets) => buckets.insert(block_value, buckets.rest_of(fingerprint)),
            Self::Hashed(buckets) => match buckets.entry(block_value) {
                Entry::Vacant(vacant) => {
                    vacant.insert(HashedBucket::One(fingerprint));
                }
                Entry::Occupied(mut occupied) => {
                    let bucket = occupied.get_mut();
                    match bucket {
                        HashedBucket::One(existing) => {
                            let fingerprints = vec![*existing, fingerprint];
                            *bucket_words += fingerprints.capacity();
                            *bucket = HashedBucket::Many(fingerprints);
                        }
                        HashedBucket::Many(fingerprints) => {
                            push_lean(fingerprints, fingerprint, bucket_words);
                        }
                    }
                }
            },
        }
    }

    fn remove(&mut self, block_value: u64, fingerprint: u64, bucket_words: &mut usize) -> bool {
        match self {
            Self::Packed(buckets) => buckets.remove(block_value, buckets.rest_of(fingerprint)),
            Self::Hashed(buckets) => {
                let Entry::Occupied(mut occupied) = buckets.entry(block_value) else {
                    return false;
                };
                let bucket = occupied.get_mut();
                match bucket {
                    HashedBucket::One(existing) => {
                        if *existing != fingerprint {
                            return false;
                        }
                        occupied.remove();
                    }
                    HashedBucket::Many(fingerprints) => {
                        if !remove_lean(fingerprints, fingerprint, bucket_words) {
                            return false;
                        }
                        if let [last] = fingerprints.as_slice() {
                            *bucket_words -= fingerprints.capacity();
                            *bucket = HashedBucket::One(*last);
                        }
                    }
                }
                true
            }
        }
    }

    fn reserve(&mut self, additional: usize) {
        if let Self::Hashed(buckets) = self {
            buckets.reserve(additional);
        }
    }

    /// Total capacity of a hashed table's bucket vectors, in fingerprints (a
    /// full scan; the index keeps a running total instead).
    fn bucket_words(&self) -> usize {
        match self {
            Self::Packed(_) => 0,
            Self::Hashed(buckets) => buckets
                .values()
                .map(|bucket| match bucket {
                    HashedBucket::One(_) => 0,
                    HashedBucket::Many(fingerprints) => fingerprints.capacity(),
                })
                .sum(),
        }
    }

    /// Heap bytes of the table, not counting a hashed table's bucket
    /// vectors.
    fn approx_table_heap_bytes(&self) -> usize {
        match self {
            Self::Packed(buckets) => buckets.heap_bytes(),
            Self::Hashed(buckets) => {
                approx_map_heap_bytes(buckets.capacity(), size_of::<(u64, HashedBucket)>())
            }
        }
    }
}

/// The set of stored fingerprints, searchable by Hamming distance ≤ `k`.
///
/// ```
/// use neardup::candidates::multi_index::MultiIndex;
///
/// let mut index = MultiIndex::new(3).expect("3 is a supported distance");
/// index.insert(0b1011);
/// index.insert(u64::MAX);
/// assert_eq!(index.within(0b0011), vec![(0b1011, 1)]);
/// ```
#[derive(Debug)]
pub struct MultiIndex {
    max_distance: u32,
    blocks: Vec<Block>,
    tables: Vec<BlockTable>,
    fingerprint_count: usize,
    /// Total capacity of all bucket vectors, in fingerprints.
    bucket_words: usize,
}

impl Clone for MultiIndex {
    /// Clones the index; cloned buckets are allocated to their length, so the
    /// tracked capacity is recounted.
    fn clone(&self) -> Self {
        let tables = self.tables.clone();
        let bucket_words = tables.iter().map(BlockTable::bucket_words).sum();
        Self {
            max_distance: self.max_distance,
            blocks: self.blocks.clone(),
            tables,
            fingerprint_count: self.fingerprint_count,
            bucket_words,
        }
    }
}

impl MultiIndex {
    /// An empty index answering "within `max_distance` bits" queries.
    ///
    /// # Errors
    ///
    /// [`IndexError::MaxDistanceOutOfRange`] if `max_distance` exceeds
    /// [`MAX_SUPPORTED_DISTANCE`].
    pub fn new(max_distance: u32) -> Result<Self, IndexError> {
        if max_distance > MAX_SUPPORTED_DISTANCE {
            return Err(IndexError::MaxDistanceOutOfRange {
                requested: max_distance,
                supported: MAX_SUPPORTED_DISTANCE,
            });
        }
        let blocks = split_into_blocks(max_distance + 1);
        let tables = blocks.iter().copied().map(BlockTable::for_block).collect();
        Ok(Self {
            max_distance,
            blocks,
            tables,
            fingerprint_count: 0,
            bucket_words: 0,
        })
    }

    /// The `k` of this index.
    pub fn max_distance(&self) -> u32 {
        self.max_distance
    }

    /// Number of stored fingerprints.
    pub fn len(&self) -> usize {
        self.fingerprint_count
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.fingerprint_count == 0
    }

    /// Block widths in bits, most significant block first.
    pub fn block_widths(&self) -> Vec<u32> {
        self.blocks.iter().map(|block| block.width).collect()
    }

    /// Whether `fingerprint` is stored (one bucket scan).
    pub fn contains(&self, fingerprint: u64) -> bool {
        let (Some(block), Some(table)) = (self.blocks.first(), self.tables.first()) else {
            return false;
        };
        table.contains(block.value(fingerprint), fingerprint)
    }

    /// Stores `fingerprint`; `false` if it was already present.
    pub fn insert(&mut self, fingerprint: u64) -> bool {
        if self.contains(fingerprint) {
            return false;
        }
        self.insert_absent(fingerprint);
        true
    }

    /// Stores a fingerprint the caller knows is absent, skipping the
    /// membership scan.
    pub(crate) fn insert_absent(&mut self, fingerprint: u64) {
        debug_assert!(!self.contains(fingerprint), "fingerprint already indexed");
        for (block, table) in self.blocks.iter().zip(&mut self.tables) {
            table.insert(
                block.value(fingerprint),
                fingerprint,
                &mut self.bucket_words,
            );
        }
        self.fingerprint_count += 1;
    }

    /// Stores many fingerprints the caller knows are absent and distinct
    /// (recovery): a packed table is laid out once at its size, where one
    /// by one each insert moved half a group.
    pub(crate) fn insert_all_absent(&mut self, fingerprints: &[u64]) {
        for (block, table) in self.blocks.iter().zip(&mut self.tables) {
            if let BlockTable::Packed(buckets) = table {
                buckets.insert_all(fingerprints);
                continue;
            }
            table.reserve(fingerprints.len());
            for &fingerprint in fingerprints {
                table.insert(
                    block.value(fingerprint),
                    fingerprint,
                    &mut self.bucket_words,
                );
            }
        }
        self.fingerprint_count += fingerprints.len();
    }

    /// Removes `fingerprint`; `false` if it was not present.
    pub fn remove(&mut self, fingerprint: u64) -> bool {
        let mut removed = false;
        for (block, table) in self.blocks.iter().zip(&mut self.tables) {
            removed |= table.remove(
                block.value(fingerprint),
                fingerprint,
                &mut self.bucket_words,
            );
        }
        if removed {
            self.fingerprint_count -= 1;
        }
        removed
    }

    /// Calls `report(candidate, distance)` once for every stored fingerprint
    /// within `max_distance` of `fingerprint` (including `fingerprint` itself,
    /// at distance 0, when stored). Order is unspecified.
    pub fn for_each_within(&self, fingerprint: u64, mut report: impl FnMut(u64, u32)) {
        // Look every bucket up before scanning any, and touch the first byte of
        // each: the cache misses then overlap instead of queueing one after
        // another (they are most of a query's time at millions of entries).
        let mut buckets = [BucketView::Whole(&[]); MAX_BLOCK_COUNT];
        for ((bucket, block), table) in buckets.iter_mut().zip(&self.blocks).zip(&self.tables) {
            *bucket = table.bucket(block.value(fingerprint));
        }
        let buckets = &buckets[..self.blocks.len()];
        let first_bytes = buckets
            .iter()
            .fold(0, |folded, bucket| folded ^ bucket.first_byte());
        std::hint::black_box(first_bytes);

        for (block_index, (bucket, table)) in buckets.iter().zip(&self.tables).enumerate() {
            match (bucket, table) {
                (BucketView::Packed(bucket), BlockTable::Packed(packed)) => {
                    let block_value = self.blocks[block_index].value(fingerprint);
                    let query_rest = packed.rest_of(fingerprint);
                    let mut report_rest = |rest: u64| {
                        let candidate = packed.fingerprint_of(block_value, rest);
                        self.report_within(
                            std::slice::from_ref(&candidate),
                            fingerprint,
                            block_index,
                            &mut report,
                        );
                    };
                    match packed.entry_bytes() {
                        6 => self.scan_packed::<6>(bucket, packed, query_rest, &mut report_rest),
                        7 => self.scan_packed::<7>(bucket, packed, query_rest, &mut report_rest),
                        _ => self.scan_packed::<8>(bucket, packed, query_rest, &mut report_rest),
                    }
                }
                (BucketView::Whole(bucket), _) => {
                    // A branch-free pass over fixed-size chunks (which the
                    // compiler vectorises) finds the rare chunks that hold a
                    // neighbour.
                    let (chunks, remainder) = bucket.as_chunks::<SCAN_CHUNK>();
                    for chunk in chunks {
                        if self.chunk_has_neighbour(chunk, fingerprint) {
                            self.report_within(chunk, fingerprint, block_index, &mut report);
                        }
                    }
                    self.report_within(remainder, fingerprint, block_index, &mut report);
                }
                (BucketView::Packed(_), BlockTable::Hashed(_)) => {}
            }
        }
    }

    /// Calls `report_rest(entry)` for every entry of a packed bucket within
    /// `max_distance` of `query_rest` (and maybe for a few others of the
    /// same chunk), `ENTRY_BYTES` being the table's entry size: a chunk's
    /// words are loaded at fixed offsets and tested without branches.
    fn scan_packed<const ENTRY_BYTES: usize>(
        &self,
        bucket: &PackedBucket<'_>,
        packed: &PackedBuckets,
        query_rest: u64,
        report_rest: &mut impl FnMut(u64),
    ) {
        let rest_mask = packed.rest_mask();
        let full_chunks = bucket.count / SCAN_CHUNK;
        let chunk_bytes = SCAN_CHUNK * ENTRY_BYTES;
        for chunk_index in 0..full_chunks {
            let start = chunk_index * chunk_bytes;
            let Some(window) = bucket
                .bytes
                .get(start..start + chunk_bytes + 8 - ENTRY_BYTES)
            else {
                break;
            };
            let rests = chunk_rests::<ENTRY_BYTES>(window, rest_mask);
            if self.chunk_has_neighbour(&rests, query_rest) {
                for rest in rests {
                    report_rest(rest);
                }
            }
        }
        // The last, partial chunk: padded with entries too far to report.
        let tail = full_chunks * SCAN_CHUNK..bucket.count;
        if tail.is_empty() {
            return;
        }
        let far = query_rest ^ rest_mask;
        let mut rests = [far; SCAN_CHUNK];
        for (rest, index) in rests.iter_mut().zip(tail.clone()) {
            *rest = bucket.word(ENTRY_BYTES, index) & rest_mask;
        }
        if self.chunk_has_neighbour(&rests, query_rest) {
            for &rest in &rests[..tail.len()] {
                report_rest(rest);
            }
        }
    }

    /// Whether any candidate in `chunk` is within `max_distance`, without
    /// branching per candidate.
    #[inline]
    fn chunk_has_neighbour(&self, chunk: &[u64; SCAN_CHUNK], fingerprint: u64) -> bool {
        if self.max_distance <= CLEAR_BITS_MAX_DISTANCE {
            // Clearing the lowest set bit `k` times leaves zero exactly when at
            // most `k` bits differ: cheaper than a popcount without the
            // POPCNT instruction (not in the baseline x86-64 target).
            let mut differences = chunk.map(|candidate| candidate ^ fingerprint);
            for _ in 0..self.max_distance {
                for difference in &mut differences {
                    *difference &= difference.wrapping_sub(1);
                }
            }
            differences
                .iter()
                .fold(false, |any, &difference| any | (difference == 0))
        } else {
            chunk.iter().fold(false, |any, &candidate| {
                any | ((candidate ^ fingerprint).count_ones() <= self.max_distance)
            })
        }
    }

    /// Reports the candidates of `candidates` within `max_distance` that do
    /// not agree with the query on a block before `block_index`.
    fn report_within(
        &self,
        candidates: &[u64],
        fingerprint: u64,
        block_index: usize,
        report: &mut impl FnMut(u64, u32),
    ) {
        for &candidate in candidates {
            let difference = candidate ^ fingerprint;
            let distance = difference.count_ones();
            if distance <= self.max_distance
                && !self.agrees_on_earlier_block(difference, block_index)
            {
                report(candidate, distance);
            }
        }
    }

    /// Every stored fingerprint within `max_distance` of `fingerprint`, with its
    /// distance, in unspecified order.
    pub fn within(&self, fingerprint: u64) -> Vec<(u64, u32)> {
        let mut found = Vec::new();
        self.for_each_within(fingerprint, |candidate, distance| {
            found.push((candidate, distance));
        });
        found
    }

    /// Makes room for `additional` more fingerprints in the hash-map tables
    /// (direct tables need none), so that growing does not rehash later.
    pub fn reserve(&mut self, additional: usize) {
        for table in &mut self.tables {
            table.reserve(additional);
        }
    }

    /// Approximate heap memory held by the index, in bytes (constant time).
    pub fn approx_heap_bytes(&self) -> usize {
        let tables: usize = self
            .tables
            .iter()
            .map(BlockTable::approx_table_heap_bytes)
            .sum();
        tables
            + self.bucket_words * size_of::<u64>()
            + self.tables.capacity() * size_of::<BlockTable>()
            + self.blocks.capacity() * size_of::<Block>()
    }

    /// Whether a candidate whose XOR with the query is `difference` agrees with
    /// the query on a block before `block_index` (and so was reported there).
    fn agrees_on_earlier_block(&self, difference: u64, block_index: usize) -> bool {
        self.blocks
            .iter()
            .take(block_index)
            .any(|block| difference & block.mask_in_place == 0)
    }
}

#[cfg(test)]
mod tests;

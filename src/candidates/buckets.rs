//! A bounded multimap from hash keys to nodes, shared by the two
//! extra candidate indexes ([`super::shingle_index`], [`super::sketch_index`]).
//!
//! Motivation: both indexes store millions of keys of which most hold one
//! node, and a few (keys of boilerplate or very common text) would
//! otherwise collect thousands and make every lookup slow.
//!
//! Design: keys are folded to 32 bits (they are hashes already; two keys
//! that fold alike share their nodes, which costs a candidate, never a
//! wrong join: every candidate is confirmed). Every (key, node) pair is a
//! 5-byte entry of one [`KeyNodeTable`], which keeps the entries of a key
//! side by side in the order they were added: a key's nodes are read, and
//! counted, in one walk, oldest first, and its oldest is the first taken
//! out. A key holds at most `capacity` nodes; what a full key does with
//! one more is the index's choice ([`Overflow`]), and the caller decides
//! whether a full key still answers lookups ([`BoundedBuckets::nodes_into`]
//! reports it).
//!
//! Consequences: 5.4 to 6.1 bytes of heap per pair (82–92 % full), a key
//! of one node or of many alike. Until issue 49's eighteenth part a key of
//! two or more had a list instead: a 12-byte entry of a second table and a
//! block of 4, 8, 16, … places of 4 bytes (30 bytes for a pair), so the
//! keys two texts share, more of them as the index fills (an eighth of a
//! short text's band keys fold onto another's at 100 M nodes) and most of
//! them on a stream of reposts, cost three times as much; and a key
//! holding no node was looked up in both tables. A key of many nodes is
//! walked entry by entry (at most the capacity: 16 or 64).

use std::marker::PhantomData;
use std::path::Path;

use crate::capture::{CaptureSink, Image};
use crate::key_node_table::{KeyFormat, KeyMix, KeyNodeTable, ShortKeys};
use crate::radix::sort_stably_by;
use crate::table_capture::TableCapture;
use crate::units::NodeId;

/// What a full list does with one more node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Takes no more: the key is boilerplate, its first holders stay.
    Refuse,
    /// Drops its oldest: a story that keeps being reposted stays findable
    /// through its newest copies, and old entries do not crowd them out.
    DropOldest,
}

/// A hash key, folded to the 32 bits the buckets keep.
pub trait BucketKey: Copy {
    fn folded(self) -> u32;
}

impl BucketKey for u32 {
    fn folded(self) -> u32 {
        self
    }
}

impl BucketKey for u64 {
    fn folded(self) -> u32 {
        (self ^ (self >> 32)) as u32
    }
}

/// The pairs of one table as of a capture's start: its mix, the copier's
/// pairs (keys in the mix's order) and those copied before changes.
#[derive(Debug)]
pub struct CapturedPairs {
    pub mix: [u32; 2],
    pub in_order: Image<KeyedNode>,
    pub ahead: Image<KeyedNode>,
}

/// One (folded key, node) pair as a snapshot's capture copies it
/// ([`BoundedBuckets::start_capture`]): 8 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KeyedNode {
    pub key: u32,
    pub node: NodeId,
}

/// Key → up to `capacity` nodes, each at most once per key.
#[derive(Debug)]
pub struct BoundedBuckets<K> {
    /// Every (key, node) pair; a key's side by side, oldest first.
    pairs: KeyNodeTable,
    capacity: usize,
    overflow: Overflow,
    /// While a snapshot is taken (writers reach it through `&mut`).
    capture: TableCapture<ShortKeys, KeyedNode>,
    key: PhantomData<K>,
}

impl<K: BucketKey> BoundedBuckets<K> {
    /// Keys that take up to `capacity` nodes (1 to 65 535).
    pub fn new(capacity: usize, overflow: Overflow) -> Self {
        BoundedBuckets {
            pairs: KeyNodeTable::default(),
            capacity: capacity.clamp(1, usize::from(u16::MAX)),
            overflow,
            capture: TableCapture::default(),
            key: PhantomData,
        }
    }

    /// Buckets whose table splits its shards past `split_bytes` (tests of
    /// tables of many shards with few entries).
    #[cfg(test)]
    pub(crate) fn splitting_at(capacity: usize, overflow: Overflow, split_bytes: usize) -> Self {
        BoundedBuckets {
            pairs: KeyNodeTable::splitting_at(split_bytes),
            ..BoundedBuckets::new(capacity, overflow)
        }
    }

    /// Add `node` under `key` unless it is there or the key is full.
    pub fn insert(&mut self, key: K, node: NodeId) {
        let key = key.folded();
        self.capture.before_change(&self.pairs, key);
        let capacity = self.capacity;
        let mut held = 0;
        // One walk: it stops at `node`, or at the last entry of a full
        // key (a key holds at most `capacity`), or adds `node` after them
        // (the table shows each entry to the count once).
        let stopped_at = self.pairs.find_or_insert(
            key,
            |kept| {
                held += 1;
                kept == node || held >= capacity
            },
            node,
        );
        if stopped_at.is_some_and(|kept| kept != node) && self.overflow == Overflow::DropOldest {
            // Full: the first of a key's entries is its oldest.
            self.pairs.shift_in(key, node);
        }
    }

    /// Take `node` out of `key`.
    pub fn remove(&mut self, key: K, node: NodeId) {
        let key = key.folded();
        self.capture.before_change(&self.pairs, key);
        self.pairs.remove_if(key, |kept| kept == node);
    }

    /// Appends the nodes under `key` to `nodes`, oldest first; whether
    /// the key is full.
    pub fn nodes_into(&self, key: K, nodes: &mut Vec<NodeId>) -> bool {
        let mut held = 0;
        self.pairs.find(key.folded(), |kept| {
            nodes.push(kept);
            held += 1;
            false
        });
        held >= self.capacity
    }

    /// Buckets built from `entries` (key, node), given in insertion order:
    /// what inserting them one by one into `BoundedBuckets::new(capacity,
    /// overflow)` leaves. Recovery fills tens of millions of keys: one at
    /// a time, each was a probe of a growing table at a random place. Here
    /// the entries are sorted in the table's order of keys (a bijection: a
    /// key's entries still come together, in the order they were added),
    /// each key's nodes are settled once, and the table is written front
    /// to back from the sorted entries themselves, with no vector of their
    /// own and no second sort.
    pub fn from_entries(capacity: usize, overflow: Overflow, entries: BucketEntries<K>) -> Self {
        let mut buckets = BoundedBuckets::new(capacity, overflow);
        // The high half is the folded key, the low half the node.
        let order_of = |key: u32| buckets.pairs.order_of(key);
        let mut packed = sort_stably_by(entries.parts, |entry| order_of((entry >> 32) as u32));
        let mut kept = 0;
        let mut nodes: Vec<NodeId> = Vec::with_capacity(buckets.capacity);
        let mut run_start = 0;
        while run_start < packed.len() {
            let key = (packed[run_start] >> 32) as u32;
            let run_end = packed[run_start..]
                .iter()
                .position(|entry| (entry >> 32) as u32 != key)
                .map_or(packed.len(), |length| run_start + length);
            nodes.clear();
            for &entry in &packed[run_start..run_end] {
                let node = entry as NodeId;
                if nodes.contains(&node) {
                } else if nodes.len() < buckets.capacity {
                    nodes.push(node);
                } else if overflow == Overflow::DropOldest {
                    nodes.remove(0);
                    nodes.push(node);
                }
            }
            // Written behind the runs read: no more entries than the run.
            for &node in &nodes {
                packed[kept] = u64::from(order_of(key)) << 32 | u64::from(node);
                kept += 1;
            }
            run_start = run_end;
        }
        packed.truncate(kept);
        buckets.pairs.insert_all_in_order(packed.iter().copied());
        buckets
    }

    /// The (key, node) pairs held.
    pub fn len(&self) -> usize {
        self.pairs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// Heap bytes of the table.
    pub fn approx_heap_bytes(&self) -> usize {
        self.pairs.allocation_size()
    }

    /// Starts capturing the pairs as they are now: call with writes
    /// locked out ([`crate::table_capture::TableCapture`]). The copies go
    /// to the sink (a file of `directory` when large).
    pub fn start_capture(&self, directory: Option<&Path>) -> [CaptureSink<KeyedNode>; 2] {
        self.capture
            .start(&self.pairs, directory, |key, node| KeyedNode { key, node })
    }

    /// Copies about `budget` more pairs; `true` once all are copied (or
    /// no capture runs). Writes must be locked out meanwhile.
    pub fn capture_some(&self, budget: usize) -> bool {
        self.capture.copy_some(&self.pairs, budget)
    }

    /// The pairs as of the capture's start, a key's side by side and
    /// oldest first, once all are copied (the capture ends); `None`
    /// before.
    pub fn take_capture(&self) -> Option<CapturedPairs> {
        let [in_order, ahead] = self.capture.take()?;
        Some(CapturedPairs {
            mix: self.pairs.mix().parts(),
            in_order,
            ahead,
        })
    }

    /// Buckets of a snapshot's pairs ([`CapturedPairs`], read back): with
    /// the table's mix, its copier's pairs written front to back in their
    /// order and the others added; pairs out of that order (a damaged
    /// snapshot's) are sorted instead, as [`Self::from_entries`] does.
    pub fn from_captured(
        capacity: usize,
        overflow: Overflow,
        mix: [u32; 2],
        in_order: BucketEntries<K>,
        ahead: BucketEntries<K>,
    ) -> Self {
        let mix = KeyMix::from_parts(mix);
        let mut buckets = BoundedBuckets::new(capacity, overflow);
        buckets.pairs = KeyNodeTable::with_mix(mix);
        // Each of the copier's pairs takes its key's place in the table's
        // order where it lies, once (the table's write reads its entries
        // twice: a mix in the reading would run three times a pair).
        let mut in_order = in_order;
        if !in_order.keys_into_order(buckets.pairs.orderer()) {
            in_order.keys_into_order(|ordered| ShortKeys::unmix(mix, u64::from(ordered) << 32));
            in_order.append(ahead);
            return BoundedBuckets::from_entries(capacity, overflow, in_order);
        }
        buckets.pairs.insert_all_in_order(in_order.iter());
        for entry in ahead.iter() {
            buckets.pairs.insert((entry >> 32) as u32, entry as NodeId);
        }
        buckets
    }

    /// Ends a capture without its image.
    pub fn stop_capture(&self) {
        self.capture.stop();
    }
}

/// Entries for [`BoundedBuckets::from_entries`], in insertion order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BucketEntries<K> {
    /// Folded key in the high half, node in the low half; in parts, one
    /// after another (entries collected apart are joined without a copy).
    parts: Vec<Vec<u64>>,
    key: PhantomData<K>,
}

impl<K> Default for BucketEntries<K> {
    fn default() -> Self {
        BucketEntries {
            parts: Vec::new(),
            key: PhantomData,
        }
    }
}

impl<K: BucketKey> BucketEntries<K> {
    pub fn push(&mut self, key: K, node: NodeId) {
        self.push_folded(key.folded(), node);
    }

    /// [`Self::push`] of a key folded already (a snapshot's pairs).
    pub fn push_folded(&mut self, folded: u32, node: NodeId) {
        self.last_part()
            .push(u64::from(folded) << 32 | u64::from(node));
    }

    /// Entries of another part after these: pushes go to it from now on.
    pub fn start_part(&mut self, capacity: usize) {
        self.parts.push(Vec::with_capacity(capacity));
    }

    /// `more`'s entries after these (its parts joined without a copy).
    pub fn append(&mut self, more: BucketEntries<K>) {
        self.parts.extend(more.parts);
    }

    /// Every entry, folded key in the high half and node in the low, in
    /// the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = u64> + Clone + '_ {
        self.parts.iter().flatten().copied()
    }

    /// Each entry's key replaced by `order_of` it, where it lies; whether
    /// the new keys ascend.
    fn keys_into_order(&mut self, order_of: impl Fn(u32) -> u32) -> bool {
        let mut last = 0;
        let mut ascending = true;
        for entry in self.parts.iter_mut().flatten() {
            let order = order_of((*entry >> 32) as u32);
            ascending &= last <= order;
            last = order;
            *entry = u64::from(order) << 32 | (*entry & 0xffff_ffff);
        }
        ascending
    }

    /// The same entries for keys of another width (they are folded).
    pub fn retyped<L>(self) -> BucketEntries<L> {
        BucketEntries {
            parts: self.parts,
            key: PhantomData,
        }
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.parts.iter().map(Vec::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Room for `additional` more entries in the part being filled, so
    /// that it does not grow by doubling (each doubling copies the part
    /// into pages faulted in anew).
    pub fn reserve(&mut self, additional: usize) {
        self.last_part().reserve_exact(additional);
    }

    /// Gives back the room [`Self::reserve`] took and no entry used.
    pub fn shrink_to_fit(&mut self) {
        for part in &mut self.parts {
            part.shrink_to_fit();
        }
    }

    fn last_part(&mut self) -> &mut Vec<u64> {
        if self.parts.is_empty() {
            self.parts.push(Vec::new());
        }
        let last = self.parts.len() - 1;
        &mut self.parts[last]
    }

    /// The entries of `parts`, one after another (nothing is copied).
    pub fn concat(parts: Vec<BucketEntries<K>>) -> Self {
        BucketEntries {
            parts: parts.into_iter().flat_map(|part| part.parts).collect(),
            key: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    /// The nodes under `key` as a vector, and whether the key is full.
    fn held<K: BucketKey>(buckets: &BoundedBuckets<K>, key: K) -> (Vec<NodeId>, bool) {
        let mut nodes = Vec::new();
        let full = buckets.nodes_into(key, &mut nodes);
        (nodes, full)
    }

    #[test]
    fn one_many_and_back() {
        let mut buckets = BoundedBuckets::new(3, Overflow::Refuse);
        buckets.insert(7u32, 1);
        buckets.insert(7, 1);
        assert_eq!(held(&buckets, 7), (vec![1], false));
        buckets.insert(7, 2);
        buckets.insert(7, 3);
        buckets.insert(7, 4);
        assert_eq!(held(&buckets, 7), (vec![1, 2, 3], true));
        buckets.remove(7, 2);
        buckets.remove(7, 3);
        assert_eq!(held(&buckets, 7), (vec![1], false));
        buckets.remove(7, 1);
        assert_eq!(held(&buckets, 7), (vec![], false));
        assert!(buckets.is_empty());
    }

    /// A damaged snapshot's pairs, not in the order of the mix they came
    /// with, are sorted (as a rebuild sorts them), not written as if they
    /// were in order.
    #[test]
    fn pairs_out_of_their_tables_order_are_sorted() {
        let mix = [0x1234_5678, 0x9abc_def1];
        let order_of = KeyNodeTable::<ShortKeys>::with_mix(KeyMix::from_parts(mix)).orderer();
        assert!((0..36).any(|key| order_of(key) > order_of(key + 1)));
        let mut in_order = BucketEntries::<u32>::default();
        for node in 0..200u32 {
            in_order.push_folded(node % 37, node);
        }
        let written = BoundedBuckets::<u32>::from_captured(
            4,
            Overflow::DropOldest,
            mix,
            in_order.clone(),
            BucketEntries::default(),
        );
        let sorted = BoundedBuckets::<u32>::from_entries(4, Overflow::DropOldest, in_order);
        for key in 0..37 {
            assert_eq!(held(&written, key), held(&sorted, key), "{key}");
            assert_eq!(held(&written, key).0.len(), 4);
        }
        assert_eq!(written.len(), sorted.len());
    }

    #[test]
    fn removing_an_absent_node_changes_nothing() {
        let mut buckets = BoundedBuckets::new(4, Overflow::Refuse);
        buckets.insert(1u64, 10);
        buckets.remove(1, 11);
        buckets.remove(2, 10);
        assert_eq!(held(&buckets, 1), (vec![10], false));
    }

    #[test]
    fn a_full_list_that_drops_its_oldest_keeps_the_newest() {
        let mut buckets = BoundedBuckets::new(3, Overflow::DropOldest);
        for node in 1..=5 {
            buckets.insert(9u64, node);
        }
        assert_eq!(held(&buckets, 9), (vec![3, 4, 5], true));
        buckets.remove(9, 1);
        assert_eq!(held(&buckets, 9), (vec![3, 4, 5], true));
        let mut single = BoundedBuckets::new(1, Overflow::DropOldest);
        single.insert(1u64, 10);
        single.insert(1, 11);
        assert_eq!(held(&single, 1), (vec![11], true));
    }

    /// The lists as a plain map of vectors would keep them.
    #[derive(Default, Clone)]
    struct Model {
        lists: HashMap<u32, Vec<NodeId>>,
    }

    impl Model {
        fn insert(&mut self, key: u32, node: NodeId, capacity: usize, overflow: Overflow) {
            let stored = self.lists.entry(key).or_default();
            if stored.contains(&node) {
            } else if stored.len() < capacity {
                stored.push(node);
            } else if overflow == Overflow::DropOldest {
                stored.remove(0);
                stored.push(node);
            }
        }

        fn remove(&mut self, key: u32, node: NodeId) {
            if let Some(stored) = self.lists.get_mut(&key) {
                stored.retain(|&kept| kept != node);
                if stored.is_empty() {
                    self.lists.remove(&key);
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn buckets_built_at_once_are_those_built_one_by_one(
            capacity in 1usize..20,
            drop_oldest in proptest::bool::ANY,
            entries in proptest::collection::vec((0u64..8, 0u32..30), 0..300),
        ) {
            let overflow = if drop_oldest { Overflow::DropOldest } else { Overflow::Refuse };
            let mut one_by_one = BoundedBuckets::new(capacity, overflow);
            let mut collected = BucketEntries::default();
            for &(key, node) in &entries {
                // Keys far apart in their high bits: the sort's every byte counts.
                let key = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                one_by_one.insert(key, node);
                collected.push(key, node);
            }
            let at_once = BoundedBuckets::from_entries(capacity, overflow, collected);
            for key in 0..8u64 {
                let key = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                proptest::prop_assert_eq!(held(&at_once, key), held(&one_by_one, key));
            }
            proptest::prop_assert_eq!(at_once.len(), one_by_one.len());
        }

        /// Whatever is inserted and removed while a capture's slices are
        /// copied, the copy holds each key's nodes as they were at its
        /// start, in their order, and buckets built from it answer as the
        /// buckets did then (a key's pairs never copied twice).
        #[test]
        fn a_capture_holds_the_buckets_as_they_were_at_its_start(
            capacity in 1usize..20,
            drop_oldest in proptest::bool::ANY,
            before in proptest::collection::vec((0u32..40, 0u32..60), 0..400),
            during in proptest::collection::vec((0u8..3, 0u32..40, 0u32..60), 0..200),
        ) {
            let overflow = if drop_oldest { Overflow::DropOldest } else { Overflow::Refuse };
            // Small shards: they split while the capture runs.
            let mut buckets = BoundedBuckets::splitting_at(capacity, overflow, 64);
            let mut model = Model::default();
            // Keys spread over the mixed order, a few of them crowded.
            let key_of = |key: u32| key.wrapping_mul(0x9e37_79b9) >> (key % 3);
            for &(key, node) in &before {
                buckets.insert(key_of(key), node);
                model.insert(key_of(key), node, capacity, overflow);
            }
            let at_start = model.lists.clone();
            let _sink = buckets.start_capture(None);
            let mut done = false;
            for (operation, key, node) in during {
                match operation {
                    0 => buckets.insert(key_of(key), node),
                    1 => buckets.remove(key_of(key), node),
                    _ => done = buckets.capture_some(1 + node as usize % 7),
                }
            }
            while !done {
                done = buckets.capture_some(5);
            }
            let copied = buckets.take_capture().expect("all copied");
            let mut captured: HashMap<u32, Vec<NodeId>> = HashMap::new();
            let [mut in_order, mut ahead] = [BucketEntries::<u32>::default(), BucketEntries::default()];
            for (pairs, entries) in [(&copied.in_order, &mut in_order), (&copied.ahead, &mut ahead)] {
                for pair in pairs.iter() {
                    captured.entry(pair.key).or_default().push(pair.node);
                    entries.push_folded(pair.key, pair.node);
                }
            }
            proptest::prop_assert_eq!(&captured, &at_start);
            // Written back in the copier's order, and sorted anew (a
            // fresh mix, the copy's order not trusted): the same buckets.
            let mut fresh = in_order.clone();
            fresh.parts.extend(ahead.parts.clone());
            let sorted = BoundedBuckets::<u32>::from_entries(capacity, overflow, fresh);
            let written = BoundedBuckets::<u32>::from_captured(capacity, overflow, copied.mix, in_order, ahead);
            for (&key, nodes) in &at_start {
                let expected = (nodes.clone(), nodes.len() >= capacity);
                proptest::prop_assert_eq!(held(&written, key), expected.clone());
                proptest::prop_assert_eq!(held(&sorted, key), expected);
            }
            proptest::prop_assert_eq!(written.len(), sorted.len());
            proptest::prop_assert!(buckets.take_capture().is_none(), "the capture ended");
        }

        #[test]
        fn buckets_keep_what_a_map_of_lists_keeps(
            capacity in 1usize..20,
            drop_oldest in proptest::bool::ANY,
            operations in proptest::collection::vec((proptest::bool::weighted(0.7), 0u32..6, 0u32..24), 0..400),
        ) {
            let overflow = if drop_oldest { Overflow::DropOldest } else { Overflow::Refuse };
            let mut buckets = BoundedBuckets::new(capacity, overflow);
            let mut model = Model::default();
            for (insert, key, node) in operations {
                if insert {
                    buckets.insert(key, node);
                    model.insert(key, node, capacity, overflow);
                } else {
                    buckets.remove(key, node);
                    model.remove(key, node);
                }
                for key in 0..6u32 {
                    let expected = model.lists.get(&key).cloned().unwrap_or_default();
                    let full = expected.len() >= capacity;
                    proptest::prop_assert_eq!(held(&buckets, key), (expected, full));
                }
                proptest::prop_assert_eq!(
                    buckets.len(),
                    model.lists.values().map(Vec::len).sum::<usize>()
                );
            }
        }
    }
}

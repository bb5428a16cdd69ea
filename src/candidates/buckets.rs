//! A bounded multimap from hash keys to nodes, shared by the two
//! extra candidate indexes ([`super::shingle_index`], [`super::sketch_index`]).
//!
//! Motivation: both indexes store millions of keys of which most hold one
//! node, and a few (keys of boilerplate or very common text) would
//! otherwise collect thousands and make every lookup slow.
//!
//! Design: keys are folded to 32 bits (they are hashes already; two keys
//! that fold alike share a list, which costs a candidate, never a wrong
//! join: every candidate is confirmed). A key holding one node is a
//! 5-byte entry of a [`KeyNodeTable`] (half the key and the node number);
//! a key holding more has a list, oldest first, of at most `capacity`, in
//! blocks of a shared arena found through a
//! [`crate::compact_table::CompactTable`] (fewer keys have one). What a
//! full list does with one more is the index's choice ([`Overflow`]), and
//! the caller decides whether a full key still answers lookups
//! ([`BoundedBuckets::get`] reports it).
//!
//! Consequences: 5.4 to 6.1 bytes of heap per single key (82–92 % full;
//! 8.7 to 9.8 with 8-byte entries, 57–85 % full before issue 49; a
//! `hashbrown` map was 9 bytes a place at 44–88 %, 26 when it held 8-byte
//! fingerprints, 62 with 64-bit keys and an inline enum of list or
//! fingerprint); a list costs a 12-byte entry and its block (4, 8, 16, …
//! places of 4 bytes), with no allocation of its own.

use std::marker::PhantomData;

use crate::compact_table::{KeyedEntry, KeyedTable, TableEntry};
use crate::key_node_table::KeyNodeTable;
use crate::radix::sort_stably_by;
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

/// Smallest block of a list: most keys that hold several nodes hold a few.
const FIRST_BLOCK: usize = 4;

/// Where a key's list is: block `block` of its class's storage, of which
/// the first `len` places are used (oldest first).
#[derive(Debug, Clone, Copy)]
struct ListPlace {
    block: u32,
    len: u16,
    class: u8,
}

/// The lists' nodes in blocks of a few sizes (4, 8, 16, … up to the
/// capacity), one vector per size: a list is a 12-byte map entry and a
/// block, where a `Vec` per key took a 32-byte entry and an allocation of
/// its own. A list that outgrows its block moves to a block of the next
/// size; freed blocks are reused.
#[derive(Debug)]
struct ListArena {
    sizes: Vec<usize>,
    storage: Vec<Vec<NodeId>>,
    free: Vec<Vec<u32>>,
}

impl ListArena {
    fn new(capacity: usize) -> Self {
        let mut sizes = Vec::new();
        let mut size = FIRST_BLOCK.min(capacity);
        loop {
            sizes.push(size);
            if size >= capacity {
                break;
            }
            size = (size * 2).min(capacity);
        }
        ListArena {
            storage: vec![Vec::new(); sizes.len()],
            free: vec![Vec::new(); sizes.len()],
            sizes,
        }
    }

    fn block_range(&self, class: u8, block: u32) -> std::ops::Range<usize> {
        let size = self.sizes[usize::from(class)];
        let start = block as usize * size;
        start..start + size
    }

    fn nodes(&self, place: ListPlace) -> &[NodeId] {
        let range = self.block_range(place.class, place.block);
        &self.storage[usize::from(place.class)][range.start..range.start + usize::from(place.len)]
    }

    fn block_mut(&mut self, place: ListPlace) -> &mut [NodeId] {
        let range = self.block_range(place.class, place.block);
        &mut self.storage[usize::from(place.class)][range]
    }

    /// A free block of `class`, with `len` 0.
    fn allocate(&mut self, class: u8) -> ListPlace {
        let index = usize::from(class);
        let block = match self.free[index].pop() {
            Some(block) => block,
            None => {
                let storage = &mut self.storage[index];
                let block = storage.len() / self.sizes[index];
                storage.resize(storage.len() + self.sizes[index], 0);
                // Blocks of one size number far fewer than 2^32 in any
                // memory this runs in.
                u32::try_from(block).unwrap_or(u32::MAX)
            }
        };
        ListPlace {
            block,
            len: 0,
            class,
        }
    }

    /// A block of the smallest class that holds `nodes`, holding them.
    fn allocate_holding(&mut self, nodes: &[NodeId]) -> ListPlace {
        let class = self
            .sizes
            .iter()
            .position(|&size| size >= nodes.len())
            .unwrap_or(self.sizes.len() - 1);
        // Classes number a handful (4, 8, … up to a capacity below 2^16).
        let mut place = self.allocate(u8::try_from(class).unwrap_or(u8::MAX));
        let len = nodes.len().min(self.sizes[usize::from(place.class)]);
        self.block_mut(place)[..len].copy_from_slice(&nodes[..len]);
        place.len = u16::try_from(len).unwrap_or(u16::MAX);
        place
    }

    fn release(&mut self, place: ListPlace) {
        self.free[usize::from(place.class)].push(place.block);
    }

    /// Appends `node` to a list that is not full, moving it to a larger
    /// block when its own is full.
    fn push(&mut self, mut place: ListPlace, node: NodeId) -> ListPlace {
        if usize::from(place.len) == self.sizes[usize::from(place.class)] {
            let mut larger = self.allocate(place.class + 1);
            let len = usize::from(place.len);
            let from = self.block_range(place.class, place.block);
            let to = self.block_range(larger.class, larger.block);
            let (smaller_classes, larger_classes) =
                self.storage.split_at_mut(usize::from(larger.class));
            larger_classes[0][to][..len]
                .copy_from_slice(&smaller_classes[usize::from(place.class)][from][..len]);
            larger.len = place.len;
            self.release(place);
            place = larger;
        }
        let len = usize::from(place.len);
        self.block_mut(place)[len] = node;
        place.len += 1;
        place
    }

    fn heap_bytes(&self) -> usize {
        let stored: usize = self.storage.iter().map(Vec::len).sum();
        let free: usize = self.free.iter().map(Vec::capacity).sum();
        (stored + free) * size_of::<NodeId>()
    }
}

/// A key holding a list (of two or more): 12 bytes in its table.
#[derive(Debug, Clone, Copy)]
struct KeyList {
    key: u32,
    place: ListPlace,
}

impl TableEntry for KeyList {
    // A stored list holds two or more.
    const VACANT: Self = KeyList {
        key: 0,
        place: ListPlace {
            block: 0,
            len: 0,
            class: 0,
        },
    };
    fn is_vacant(&self) -> bool {
        self.place.len == 0
    }
}

impl KeyedEntry for KeyList {
    type Key = u32;
    fn key(&self) -> u32 {
        self.key
    }
}

/// The nodes a key holds: one, kept in the keys' table itself, or a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held<'a> {
    One(NodeId),
    List(&'a [NodeId]),
}

impl Held<'_> {
    pub fn nodes(&self) -> &[NodeId] {
        match self {
            Held::One(node) => std::slice::from_ref(node),
            Held::List(nodes) => nodes,
        }
    }
}

/// Key → up to `capacity` nodes, each at most once per key.
#[derive(Debug)]
pub struct BoundedBuckets<K> {
    /// Keys that hold exactly one node.
    singles: KeyNodeTable,
    /// Keys that hold two or more: where their list is in `arena`.
    lists: KeyedTable<KeyList>,
    arena: ListArena,
    capacity: usize,
    overflow: Overflow,
    key: PhantomData<K>,
}

impl<K: BucketKey> BoundedBuckets<K> {
    /// Keys that take up to `capacity` nodes (1 to 65 535).
    pub fn new(capacity: usize, overflow: Overflow) -> Self {
        let capacity = capacity.clamp(1, usize::from(u16::MAX));
        BoundedBuckets {
            singles: KeyNodeTable::default(),
            lists: KeyedTable::default(),
            arena: ListArena::new(capacity),
            capacity,
            overflow,
            key: PhantomData,
        }
    }

    /// Add `node` under `key` unless it is there or the key is full.
    pub fn insert(&mut self, key: K, node: NodeId) {
        let key = key.folded();
        if let Some(list) = self.lists.get_mut(key) {
            let place = &mut list.place;
            let stored = self.arena.nodes(*place);
            if stored.contains(&node) {
            } else if stored.len() < self.capacity {
                *place = self.arena.push(*place, node);
            } else if self.overflow == Overflow::DropOldest {
                let len = usize::from(place.len);
                let block = self.arena.block_mut(*place);
                block.copy_within(1..len, 0);
                block[len - 1] = node;
            }
            return;
        }
        match self.singles.find_or_insert(key, |_| true, node) {
            None => {}
            Some(first) => {
                if first == node {
                } else if self.capacity > 1 {
                    self.singles.remove(key);
                    let place = self.arena.allocate(0);
                    let place = self.arena.push(place, first);
                    let place = self.arena.push(place, node);
                    self.lists.insert(KeyList { key, place });
                } else if self.overflow == Overflow::DropOldest {
                    self.singles.replace(key, |_| true, node);
                }
            }
        }
    }

    /// Take `node` out of `key`; a key left empty is dropped.
    pub fn remove(&mut self, key: K, node: NodeId) {
        let key = key.folded();
        if let Some(list) = self.lists.get_mut(key) {
            let place = &mut list.place;
            let Some(position) = self
                .arena
                .nodes(*place)
                .iter()
                .position(|&kept| kept == node)
            else {
                return;
            };
            let len = usize::from(place.len);
            let block = self.arena.block_mut(*place);
            block.copy_within(position + 1..len, position);
            place.len -= 1;
            let place = *place;
            if place.len <= 1 {
                let only = self.arena.nodes(place).first().copied();
                self.arena.release(place);
                self.lists.remove(key);
                if let Some(only) = only {
                    self.singles.insert(key, only);
                }
            }
            return;
        }
        self.singles.remove_if(key, |single| single == node);
    }

    /// The nodes under `key`, and whether the key is full.
    pub fn get(&self, key: K) -> (Held<'_>, bool) {
        let key = key.folded();
        if let Some(single) = self.singles.get(key) {
            return (Held::One(single), self.capacity == 1);
        }
        match self.lists.get(key) {
            Some(list) => {
                let stored = self.arena.nodes(list.place);
                (Held::List(stored), stored.len() >= self.capacity)
            }
            None => (Held::List(&[]), false),
        }
    }

    /// Buckets built from `entries` (key, node), given in insertion order:
    /// what inserting them one by one into `BoundedBuckets::new(capacity,
    /// overflow)` leaves. Recovery fills tens of millions of keys: one at
    /// a time, each was two probes of a growing map at a random place. Here
    /// the entries are sorted by key, each key's list is made once, at its
    /// final size, and the single-node keys (most) go into a map reserved
    /// for them in the order of their place in it, so its memory is
    /// written front to back.
    pub fn from_entries(capacity: usize, overflow: Overflow, entries: BucketEntries<K>) -> Self {
        let mut buckets = BoundedBuckets::new(capacity, overflow);
        // The high half is the folded key, the low half the node. Sorted in
        // the single-node table's order of keys (a bijection: a key's
        // entries still come together, in the order they were added), the
        // keys of one node are that table's entries in its order: they are
        // kept in the front of the sorted entries themselves, and the table
        // is written from there, with no vector of their own and no sort.
        let order_of = |key: u32| buckets.singles.order_of(key);
        let mut packed = sort_stably_by(entries.parts, |entry| order_of((entry >> 32) as u32));
        let mut singles = 0;
        let mut list: Vec<NodeId> = Vec::with_capacity(buckets.capacity);
        // The keys that hold a list, put in their table at once at the end
        // (one at a time, tens of millions at 100 M nodes went each to a
        // random place, and the table was placed again at every growth).
        let mut lists = Vec::new();
        let mut run_start = 0;
        while run_start < packed.len() {
            let key = (packed[run_start] >> 32) as u32;
            let run_end = packed[run_start..]
                .iter()
                .position(|entry| (entry >> 32) as u32 != key)
                .map_or(packed.len(), |length| run_start + length);
            let run = &packed[run_start..run_end];
            list.clear();
            for &entry in run {
                let node = entry as NodeId;
                if list.contains(&node) {
                } else if list.len() < buckets.capacity {
                    list.push(node);
                } else if overflow == Overflow::DropOldest {
                    list.remove(0);
                    list.push(node);
                }
            }
            if let [only] = list[..] {
                // Written behind the runs read: at most one a run.
                packed[singles] = u64::from(order_of(key)) << 32 | u64::from(only);
                singles += 1;
            } else {
                let place = buckets.arena.allocate_holding(&list);
                lists.push(KeyList { key, place });
            }
            run_start = run_end;
        }
        buckets.lists.insert_all(lists);
        packed.truncate(singles);
        buckets.singles.insert_all_in_order(packed.iter().copied());
        buckets
    }

    pub fn key_count(&self) -> usize {
        self.singles.len() + self.lists.len()
    }

    /// Rough heap bytes: the two maps and the lists' blocks.
    pub fn approx_heap_bytes(&self) -> usize {
        self.singles.allocation_size() + self.lists.allocation_size() + self.arena.heap_bytes()
    }
}

/// Entries for [`BoundedBuckets::from_entries`], in insertion order.
#[derive(Debug)]
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
        self.last_part()
            .push(u64::from(key.folded()) << 32 | u64::from(node));
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
        let (held, full) = buckets.get(key);
        (held.nodes().to_vec(), full)
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
        assert_eq!(buckets.key_count(), 0);
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
    #[derive(Default)]
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
            proptest::prop_assert_eq!(at_once.key_count(), one_by_one.key_count());
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
                proptest::prop_assert_eq!(buckets.key_count(), model.lists.len());
            }
        }
    }
}

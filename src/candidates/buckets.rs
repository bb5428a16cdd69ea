//! A bounded multimap from hash keys to nodes, shared by the two
//! extra candidate indexes ([`super::shingle_index`], [`super::sketch_index`]).
//!
//! Motivation: both indexes store millions of keys of which most hold one
//! node, and a few (keys of boilerplate or very common text) would
//! otherwise collect thousands and make every lookup slow.
//!
//! Design: keys are folded to 32 bits (they are hashes already; two keys
//! that fold alike share a list, which costs a candidate, never a wrong
//! join: every candidate is confirmed). A key holding one node is an
//! entry of a flat map of 8 bytes (key, node number); a key holding more has a list, oldest
//! first, of at most `capacity`, in a second map (few keys have one). What a
//! full list does with one more is the index's choice ([`Overflow`]), and
//! the caller decides whether a full key still answers lookups
//! ([`BoundedBuckets::get`] reports it).
//!
//! Consequences: about 13 bytes of heap per key at the map's usual load
//! (26 when it held 8-byte fingerprints, 62 with 64-bit keys and an inline
//! enum of list or fingerprint).

use std::collections::HashMap;
use std::marker::PhantomData;

use super::multi_index::FingerprintBuildHasher;
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

/// Key → up to `capacity` nodes, each at most once per key.
#[derive(Debug)]
pub struct BoundedBuckets<K> {
    /// Keys that hold exactly one node.
    singles: HashMap<u32, NodeId, FingerprintBuildHasher>,
    /// Keys that hold two or more.
    lists: HashMap<u32, Vec<NodeId>, FingerprintBuildHasher>,
    capacity: usize,
    overflow: Overflow,
    key: PhantomData<K>,
}

impl<K: BucketKey> BoundedBuckets<K> {
    pub fn new(capacity: usize, overflow: Overflow) -> Self {
        BoundedBuckets {
            singles: HashMap::default(),
            lists: HashMap::default(),
            capacity: capacity.max(1),
            overflow,
            key: PhantomData,
        }
    }

    /// Add `node` under `key` unless it is there or the key is full.
    pub fn insert(&mut self, key: K, node: NodeId) {
        let key = key.folded();
        if let Some(stored) = self.lists.get_mut(&key) {
            if stored.contains(&node) {
            } else if stored.len() < self.capacity {
                stored.push(node);
            } else if self.overflow == Overflow::DropOldest {
                stored.remove(0);
                stored.push(node);
            }
            return;
        }
        match self.singles.get_mut(&key) {
            None => {
                self.singles.insert(key, node);
            }
            Some(stored) => {
                if *stored == node {
                } else if self.capacity > 1 {
                    let first = *stored;
                    self.singles.remove(&key);
                    self.lists.insert(key, vec![first, node]);
                } else if self.overflow == Overflow::DropOldest {
                    *stored = node;
                }
            }
        }
    }

    /// Take `node` out of `key`; a key left empty is dropped.
    pub fn remove(&mut self, key: K, node: NodeId) {
        let key = key.folded();
        if let Some(stored) = self.lists.get_mut(&key) {
            stored.retain(|&kept| kept != node);
            match stored[..] {
                [only] => {
                    self.lists.remove(&key);
                    self.singles.insert(key, only);
                }
                [] => {
                    self.lists.remove(&key);
                }
                _ => {}
            }
            return;
        }
        if self.singles.get(&key) == Some(&node) {
            self.singles.remove(&key);
        }
    }

    /// The nodes under `key`, and whether the key is full.
    pub fn get(&self, key: K) -> (&[NodeId], bool) {
        let key = key.folded();
        if let Some(single) = self.singles.get(&key) {
            return (std::slice::from_ref(single), self.capacity == 1);
        }
        match self.lists.get(&key) {
            Some(stored) => (stored, stored.len() >= self.capacity),
            None => (&[], false),
        }
    }

    pub fn key_count(&self) -> usize {
        self.singles.len() + self.lists.len()
    }

    /// Rough heap bytes: map entries plus overflow lists.
    pub fn approx_heap_bytes(&self) -> usize {
        let singles = self.singles.capacity() * (std::mem::size_of::<(u32, NodeId)>() + 1);
        let lists = self.lists.capacity() * (std::mem::size_of::<(u32, Vec<NodeId>)>() + 1);
        let listed: usize = self
            .lists
            .values()
            .map(|stored| stored.capacity() * std::mem::size_of::<NodeId>())
            .sum();
        singles + lists + listed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_many_and_back() {
        let mut buckets = BoundedBuckets::new(3, Overflow::Refuse);
        buckets.insert(7u32, 1);
        buckets.insert(7, 1);
        assert_eq!(buckets.get(7), (&[1][..], false));
        buckets.insert(7, 2);
        buckets.insert(7, 3);
        buckets.insert(7, 4);
        assert_eq!(buckets.get(7), (&[1, 2, 3][..], true));
        buckets.remove(7, 2);
        buckets.remove(7, 3);
        assert_eq!(buckets.get(7), (&[1][..], false));
        buckets.remove(7, 1);
        assert_eq!(buckets.get(7), (&[][..], false));
        assert_eq!(buckets.key_count(), 0);
    }

    #[test]
    fn removing_an_absent_node_changes_nothing() {
        let mut buckets = BoundedBuckets::new(4, Overflow::Refuse);
        buckets.insert(1u64, 10);
        buckets.remove(1, 11);
        buckets.remove(2, 10);
        assert_eq!(buckets.get(1), (&[10][..], false));
    }

    #[test]
    fn a_full_list_that_drops_its_oldest_keeps_the_newest() {
        let mut buckets = BoundedBuckets::new(3, Overflow::DropOldest);
        for node in 1..=5 {
            buckets.insert(9u64, node);
        }
        assert_eq!(buckets.get(9), (&[3, 4, 5][..], true));
        buckets.remove(9, 1);
        assert_eq!(buckets.get(9), (&[3, 4, 5][..], true));
        let mut single = BoundedBuckets::new(1, Overflow::DropOldest);
        single.insert(1u64, 10);
        single.insert(1, 11);
        assert_eq!(single.get(1), (&[11][..], true));
    }
}

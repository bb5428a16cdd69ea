//! A bounded multimap from hash keys to fingerprints, shared by the two
//! extra candidate indexes ([`super::shingle_index`], [`super::sketch_index`]).
//!
//! Motivation: both indexes store millions of keys of which most hold one
//! fingerprint, and a few (keys of boilerplate or very common text) would
//! otherwise collect thousands and make every lookup slow.
//!
//! Design: a key holds one fingerprint inline (no allocation) or a list of at
//! most `capacity`, oldest first. What a full list does with one more is the
//! index's choice ([`Overflow`]), and the caller decides whether a full key
//! still answers lookups ([`BoundedBuckets::get`] reports it).

use std::collections::HashMap;
use std::hash::Hash;

use super::multi_index::FingerprintBuildHasher;
use crate::units::Fingerprint;

/// What a full list does with one more fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overflow {
    /// Takes no more: the key is boilerplate, its first holders stay.
    Refuse,
    /// Drops its oldest: a story that keeps being reposted stays findable
    /// through its newest copies, and old entries do not crowd them out.
    DropOldest,
}

#[derive(Debug)]
enum Bucket {
    One(Fingerprint),
    Many(Vec<Fingerprint>),
}

impl Bucket {
    fn as_slice(&self) -> &[Fingerprint] {
        match self {
            Bucket::One(fingerprint) => std::slice::from_ref(fingerprint),
            Bucket::Many(fingerprints) => fingerprints,
        }
    }
}

/// Key → up to `capacity` fingerprints, each at most once per key.
#[derive(Debug)]
pub struct BoundedBuckets<K> {
    buckets: HashMap<K, Bucket, FingerprintBuildHasher>,
    capacity: usize,
    overflow: Overflow,
}

impl<K: Hash + Eq + Copy> BoundedBuckets<K> {
    pub fn new(capacity: usize, overflow: Overflow) -> Self {
        BoundedBuckets {
            buckets: HashMap::default(),
            capacity: capacity.max(1),
            overflow,
        }
    }

    /// Add `fingerprint` under `key` unless it is there or the key is full.
    pub fn insert(&mut self, key: K, fingerprint: Fingerprint) {
        match self.buckets.get_mut(&key) {
            None => {
                self.buckets.insert(key, Bucket::One(fingerprint));
            }
            Some(Bucket::One(stored)) => {
                if *stored == fingerprint {
                } else if self.capacity > 1 {
                    let first = *stored;
                    self.buckets
                        .insert(key, Bucket::Many(vec![first, fingerprint]));
                } else if self.overflow == Overflow::DropOldest {
                    *stored = fingerprint;
                }
            }
            Some(Bucket::Many(stored)) => {
                if stored.contains(&fingerprint) {
                } else if stored.len() < self.capacity {
                    stored.push(fingerprint);
                } else if self.overflow == Overflow::DropOldest {
                    stored.remove(0);
                    stored.push(fingerprint);
                }
            }
        }
    }

    /// Take `fingerprint` out of `key`; a key left empty is dropped.
    pub fn remove(&mut self, key: K, fingerprint: Fingerprint) {
        let now_empty = match self.buckets.get_mut(&key) {
            Some(Bucket::One(stored)) => *stored == fingerprint,
            Some(Bucket::Many(stored)) => {
                stored.retain(|&kept| kept != fingerprint);
                if let [only] = stored[..] {
                    self.buckets.insert(key, Bucket::One(only));
                    false
                } else {
                    stored.is_empty()
                }
            }
            None => false,
        };
        if now_empty {
            self.buckets.remove(&key);
        }
    }

    /// The fingerprints under `key`, and whether the key is full.
    pub fn get(&self, key: K) -> (&[Fingerprint], bool) {
        match self.buckets.get(&key) {
            Some(bucket) => {
                let stored = bucket.as_slice();
                (stored, stored.len() >= self.capacity)
            }
            None => (&[], false),
        }
    }

    pub fn key_count(&self) -> usize {
        self.buckets.len()
    }

    /// Rough heap bytes: map entries plus overflow lists.
    pub fn approx_heap_bytes(&self) -> usize {
        let entries = self.buckets.capacity() * (std::mem::size_of::<(K, Bucket)>() + 1);
        let lists: usize = self
            .buckets
            .values()
            .map(|bucket| match bucket {
                Bucket::One(_) => 0,
                Bucket::Many(stored) => stored.capacity() * std::mem::size_of::<Fingerprint>(),
            })
            .sum();
        entries + lists
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
    fn removing_an_absent_fingerprint_changes_nothing() {
        let mut buckets = BoundedBuckets::new(4, Overflow::Refuse);
        buckets.insert(1u64, 10);
        buckets.remove(1, 11);
        buckets.remove(2, 10);
        assert_eq!(buckets.get(1), (&[10][..], false));
    }

    #[test]
    fn a_full_list_that_drops_its_oldest_keeps_the_newest() {
        let mut buckets = BoundedBuckets::new(3, Overflow::DropOldest);
        for fingerprint in 1..=5 {
            buckets.insert(9u64, fingerprint);
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

//! A bounded multimap from hash keys to fingerprints, shared by the two
//! extra candidate indexes ([`super::shingle_index`], [`super::sketch_index`]).
//!
//! Motivation: both indexes store millions of keys of which most hold one
//! fingerprint, and a few (keys of boilerplate or very common text) would
//! otherwise collect thousands and make every lookup slow.
//!
//! Design: a key holds one fingerprint inline (no allocation) or a list of at
//! most `capacity`; a full list takes no more, and the caller decides whether
//! a full key still answers lookups ([`BoundedBuckets::get`] reports it).

use std::collections::HashMap;
use std::hash::Hash;

use crate::units::Fingerprint;

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
    buckets: HashMap<K, Bucket>,
    capacity: usize,
}

impl<K: Hash + Eq + Copy> BoundedBuckets<K> {
    pub fn new(capacity: usize) -> Self {
        BoundedBuckets {
            buckets: HashMap::new(),
            capacity: capacity.max(1),
        }
    }

    /// Add `fingerprint` under `key` unless it is there or the key is full.
    pub fn insert(&mut self, key: K, fingerprint: Fingerprint) {
        match self.buckets.get_mut(&key) {
            None => {
                self.buckets.insert(key, Bucket::One(fingerprint));
            }
            Some(Bucket::One(stored)) => {
                if *stored != fingerprint && self.capacity > 1 {
                    let first = *stored;
                    self.buckets
                        .insert(key, Bucket::Many(vec![first, fingerprint]));
                }
            }
            Some(Bucket::Many(stored)) => {
                if stored.len() < self.capacity && !stored.contains(&fingerprint) {
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
        let mut buckets = BoundedBuckets::new(3);
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
        let mut buckets = BoundedBuckets::new(4);
        buckets.insert(1u64, 10);
        buckets.remove(1, 11);
        buckets.remove(2, 10);
        assert_eq!(buckets.get(1), (&[10][..], false));
    }
}

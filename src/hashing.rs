//! The hasher of every table keyed by fingerprints or other hashes (the
//! forest's multi-index and slots, the candidate and exact-hash tables, the
//! ledger's keys).
//!
//! Motivation: those keys are uniform 64-bit values already; SipHash (the
//! std default) costs several times more and buys nothing for them, while
//! a per-instance seed still keeps crafted inputs from aiming at one place.

use std::collections::HashMap;
use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};

pub(crate) const FOLD_MULTIPLIER: u64 = 0x9e37_79b9_7f4a_7c15;

/// Approximate heap footprint of a std (hashbrown) map with `capacity` usable
/// slots of `entry_bytes` each: buckets are a power of two at most 7/8 full,
/// plus one control byte per bucket.
pub(crate) fn approx_map_heap_bytes(capacity: usize, entry_bytes: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = (capacity.saturating_mul(8) / 7).next_power_of_two();
    buckets.saturating_mul(entry_bytes + 1)
}

/// A hasher for keys that are already (close to) uniformly random `u64`s, such
/// as simhash fingerprints.
///
/// One folded 64 × 64 → 128-bit multiplication of the seeded key: every input
/// bit influences the low bits used for bucket selection, at the cost of a
/// single `mul`. SipHash (the std default) is several times slower and buys
/// nothing for these keys.
#[derive(Debug, Clone, Copy)]
pub struct FingerprintHasher {
    state: u64,
}

impl FingerprintHasher {
    fn mix(&mut self, word: u64) {
        let product = u128::from(self.state ^ word) * u128::from(FOLD_MULTIPLIER);
        // Truncation is the point: fold the high half onto the low half.
        self.state = (product as u64) ^ ((product >> 64) as u64);
    }
}

impl Hasher for FingerprintHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
        let remainder = chunks.remainder();
        if !remainder.is_empty() {
            let mut word = [0u8; 8];
            word[..remainder.len()].copy_from_slice(remainder);
            self.mix(u64::from_le_bytes(word) ^ ((remainder.len() as u64) << 59));
        }
    }

    fn write_u64(&mut self, word: u64) {
        self.mix(word);
    }

    fn finish(&self) -> u64 {
        self.state
    }
}

/// [`BuildHasher`] for [`FingerprintHasher`], seeded per instance from the
/// standard library's random keys so crafted inputs cannot aim at one bucket.
#[derive(Debug, Clone, Copy)]
pub struct FingerprintBuildHasher {
    pub(crate) seed: u64,
}

impl Default for FingerprintBuildHasher {
    fn default() -> Self {
        Self {
            seed: RandomState::new().hash_one(FOLD_MULTIPLIER),
        }
    }
}

impl BuildHasher for FingerprintBuildHasher {
    type Hasher = FingerprintHasher;

    fn build_hasher(&self) -> FingerprintHasher {
        FingerprintHasher { state: self.seed }
    }
}

/// A hash map keyed by fingerprints, using [`FingerprintBuildHasher`].
pub type FingerprintMap<V> = HashMap<u64, V, FingerprintBuildHasher>;

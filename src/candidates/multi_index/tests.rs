//! Unit tests of the multi-index.

use super::*;
use std::hash::BuildHasher;

use crate::hashing::FOLD_MULTIPLIER;

fn brute_force_within(stored: &[u64], query: u64, max_distance: u32) -> Vec<(u64, u32)> {
    let mut found: Vec<(u64, u32)> = stored
        .iter()
        .map(|&candidate| (candidate, (candidate ^ query).count_ones()))
        .filter(|&(_, distance)| distance <= max_distance)
        .collect();
    found.sort_unstable();
    found
}

fn sorted(mut found: Vec<(u64, u32)>) -> Vec<(u64, u32)> {
    found.sort_unstable();
    found
}

#[test]
fn rejects_distance_above_limit() {
    assert_eq!(
        MultiIndex::new(17).unwrap_err(),
        IndexError::MaxDistanceOutOfRange {
            requested: 17,
            supported: 16
        }
    );
    assert!(MultiIndex::new(16).is_ok());
    assert_eq!(
        MultiIndex::new(99).unwrap_err().to_string(),
        "max distance 99 is out of range (supported: 0..=16)"
    );
}

#[test]
fn blocks_cover_all_bits_with_widths_differing_by_at_most_one() {
    for block_count in 1..=17 {
        let blocks = split_into_blocks(block_count);
        assert_eq!(blocks.len(), block_count as usize);
        let union = blocks.iter().fold(0u64, |union, block| {
            assert_eq!(union & block.mask_in_place, 0, "blocks overlap");
            union | block.mask_in_place
        });
        assert_eq!(union, u64::MAX);
        let widest = blocks.iter().map(|block| block.width).max().unwrap();
        let narrowest = blocks.iter().map(|block| block.width).min().unwrap();
        assert!(widest - narrowest <= 1);
    }
    assert_eq!(MultiIndex::new(3).unwrap().block_widths(), vec![16; 4]);
    assert_eq!(MultiIndex::new(2).unwrap().block_widths(), vec![22, 21, 21]);
    assert_eq!(MultiIndex::new(0).unwrap().block_widths(), vec![64]);
}

#[test]
fn set_semantics() {
    for max_distance in [0, 1, 2, 3, 6] {
        let mut index = MultiIndex::new(max_distance).unwrap();
        assert!(index.is_empty());
        assert!(index.insert(42));
        assert!(!index.insert(42));
        assert_eq!(index.len(), 1);
        assert!(index.contains(42));
        assert!(!index.contains(43));
        assert!(!index.remove(43));
        assert!(index.remove(42));
        assert!(!index.remove(42));
        assert!(index.is_empty());
        assert!(index.within(42).is_empty());
    }
}

#[test]
fn reports_each_candidate_once_even_when_all_blocks_agree() {
    let mut index = MultiIndex::new(3).unwrap();
    index.insert(7);
    // The query equals the stored fingerprint: every block agrees.
    assert_eq!(index.within(7), vec![(7, 0)]);
}

#[test]
fn distance_boundary_is_inclusive() {
    let base = 0x0123_4567_89ab_cdef_u64;
    let mut index = MultiIndex::new(3).unwrap();
    let at_three = base ^ 0b111;
    let at_four = base ^ 0b1111 << 20;
    index.insert(at_three);
    index.insert(at_four);
    assert_eq!(index.within(base), vec![(at_three, 3)]);
}

#[test]
fn hashed_buckets_collapse_and_expand() {
    // k = 1: two 32-bit hashed tables. Same high half, different low half.
    let mut index = MultiIndex::new(1).unwrap();
    let high = 0xdead_beef_0000_0000_u64;
    let stored = [high | 1, high | 2, high | 4];
    for fingerprint in stored {
        assert!(index.insert(fingerprint));
    }
    assert_eq!(
        sorted(index.within(high)),
        brute_force_within(&stored, high, 1)
    );
    assert!(index.remove(high | 2));
    assert!(index.remove(high | 1));
    assert_eq!(index.within(high), vec![(high | 4, 1)]);
    assert!(index.remove(high | 4));
    assert!(index.within(high).is_empty());
    assert_eq!(index.len(), 0);
}

/// A SplitMix64 stream from `seed`.
fn splitmix(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut mixed = state;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        mixed ^ (mixed >> 31)
    }
}

#[test]
fn matches_brute_force_on_a_small_random_set() {
    let mut next = splitmix(0x9e37_79b9);
    for max_distance in [0, 2, 3, 4, 9] {
        let mut index = MultiIndex::new(max_distance).unwrap();
        let mut stored = Vec::new();
        for _ in 0..300 {
            let base = next();
            for flips in 0..=max_distance + 1 {
                let flipped_low_bits = if flips == 0 {
                    0
                } else {
                    u64::MAX >> (64 - flips)
                };
                let near = base ^ flipped_low_bits;
                if index.insert(near) {
                    stored.push(near);
                }
            }
        }
        for &query in stored.iter().step_by(7) {
            assert_eq!(
                sorted(index.within(query)),
                brute_force_within(&stored, query, max_distance)
            );
        }
    }
}

#[test]
fn bucket_capacity_is_tracked_exactly() {
    for max_distance in [1, 3] {
        let mut index = MultiIndex::new(max_distance).unwrap();
        let fingerprints: Vec<u64> = (0..3000u64)
            .map(|seed| (seed % 40).wrapping_mul(FOLD_MULTIPLIER) ^ (seed / 40))
            .collect();
        for &fingerprint in &fingerprints {
            index.insert(fingerprint);
        }
        for &fingerprint in fingerprints.iter().step_by(3) {
            index.remove(fingerprint);
        }
        let recounted: usize = index.tables.iter().map(BlockTable::bucket_words).sum();
        assert_eq!(index.bucket_words, recounted);
        for table in &index.tables {
            if let BlockTable::Packed(packed) = table {
                assert_eq!(
                    packed.tracked_capacity_bytes(),
                    packed.recount_capacity_bytes()
                );
            }
        }
        let copy = index.clone();
        let copy_recounted: usize = copy.tables.iter().map(BlockTable::bucket_words).sum();
        assert_eq!(copy.bucket_words, copy_recounted);
        assert_eq!(copy.len(), index.len());
    }
}

#[test]
fn fingerprints_stored_at_once_are_found_as_if_stored_one_by_one() {
    for max_distance in [1, 3] {
        let fingerprints: Vec<u64> = (0..3000u64)
            .map(|seed| (seed % 40).wrapping_mul(FOLD_MULTIPLIER) ^ (seed / 40))
            .collect();
        let mut one_by_one = MultiIndex::new(max_distance).unwrap();
        for &fingerprint in &fingerprints {
            one_by_one.insert(fingerprint);
        }
        let mut at_once = MultiIndex::new(max_distance).unwrap();
        at_once.insert(u64::MAX);
        at_once.insert_all_absent(&fingerprints);
        assert_eq!(at_once.len(), fingerprints.len() + 1);
        for &query in fingerprints.iter().step_by(11) {
            let mut expected = sorted(one_by_one.within(query));
            if (query ^ u64::MAX).count_ones() <= max_distance {
                expected.push((u64::MAX, (query ^ u64::MAX).count_ones()));
                expected.sort_unstable();
            }
            assert_eq!(sorted(at_once.within(query)), expected);
        }
        let recounted: usize = at_once.tables.iter().map(BlockTable::bucket_words).sum();
        assert_eq!(at_once.bucket_words, recounted);
        at_once.insert(1);
        let recounted: usize = at_once.tables.iter().map(BlockTable::bucket_words).sum();
        assert_eq!(at_once.bucket_words, recounted);
    }
}

#[test]
fn heap_bytes_grow_with_content() {
    let mut index = MultiIndex::new(1).unwrap();
    let empty = index.approx_heap_bytes();
    for fingerprint in 0..1000u64 {
        index.insert(fingerprint.wrapping_mul(FOLD_MULTIPLIER));
    }
    assert!(index.approx_heap_bytes() > empty + 1000 * 2 * 8);
}

#[test]
fn hasher_spreads_high_bits_into_low_bits() {
    let build = FingerprintBuildHasher { seed: 0 };
    let low_bits: std::collections::HashSet<u64> = (0..256u64)
        .map(|high| build.hash_one(high << 56) & 0xff)
        .collect();
    assert!(low_bits.len() > 128, "only {} distinct", low_bits.len());
}

#[test]
fn full_buckets_are_scanned_by_chunks_at_every_entry_size() {
    // Fingerprints sharing their top 24 bits: for k = 3, 4 and 9 the first
    // block is the same for all of them, so one bucket holds hundreds of
    // entries (full chunks of 6-, 7- and 8-byte entries) and neighbours
    // sit at every position of a chunk.
    let mut next = splitmix(0x5eed);
    let top = 0xabcd_ef00_0000_0000_u64;
    for max_distance in [3, 4, 9] {
        let mut index = MultiIndex::new(max_distance).unwrap();
        let mut stored = Vec::new();
        for _ in 0..150 {
            let base = top | (next() >> 24);
            for flips in 0..=max_distance + 1 {
                // Flipped low bits: 0, 1, 3, 7, ... (inside the other blocks).
                let near = base ^ ((1u64 << flips) - 1);
                if index.insert(near) {
                    stored.push(near);
                }
            }
        }
        for &query in &stored {
            let probe = query ^ (1 << (query % 20)) ^ (1 << 30);
            assert_eq!(
                sorted(index.within(probe)),
                brute_force_within(&stored, probe, max_distance),
                "k = {max_distance}"
            );
        }
    }
}

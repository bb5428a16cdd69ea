//! The multi-index must return exactly what a brute-force scan returns.
//!
//! Random fingerprints plus planted neighbours at every distance from 0 to
//! `k + 1` (the last must never be reported), for several `k` (hashed tables
//! for `k` ≤ 2, direct tables above), with inserts and removes interleaved.

use std::collections::{BTreeSet, HashMap};

use neardup::candidates::multi_index::{IndexError, MultiIndex};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};

/// `fingerprint` with `count` distinct random bits flipped.
fn flip_random_bits(rng: &mut StdRng, fingerprint: u64, count: u32) -> u64 {
    sample(rng, 64, count as usize)
        .iter()
        .fold(fingerprint, |flipped, bit| flipped ^ (1u64 << bit))
}

fn brute_force(stored: &BTreeSet<u64>, query: u64, max_distance: u32) -> Vec<(u64, u32)> {
    stored
        .iter()
        .map(|&candidate| (candidate, (candidate ^ query).count_ones()))
        .filter(|&(_, distance)| distance <= max_distance)
        .collect()
}

/// Checks `within` and `for_each_within` against brute force, including that
/// nothing is reported twice.
fn assert_exact(index: &MultiIndex, stored: &BTreeSet<u64>, query: u64) {
    let max_distance = index.max_distance();
    let mut reports: HashMap<u64, (u32, usize)> = HashMap::new();
    index.for_each_within(query, |candidate, distance| {
        reports.entry(candidate).or_insert((distance, 0)).1 += 1;
    });
    for (candidate, (_, times)) in &reports {
        assert_eq!(
            *times, 1,
            "{candidate:016x} reported {times} times (k={max_distance})"
        );
    }
    let mut found = index.within(query);
    found.sort_unstable();
    let expected = brute_force(stored, query, max_distance);
    assert_eq!(found, expected, "query {query:016x}, k={max_distance}");
    assert_eq!(reports.len(), expected.len());
}

fn exercise(max_distance: u32, seed: u64, rounds: usize) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut index = MultiIndex::new(max_distance).expect("supported distance");
    let mut stored = BTreeSet::new();
    let mut planted_queries = Vec::new();

    for _ in 0..rounds {
        // Random fingerprints, far from everything.
        for _ in 0..200 {
            let fingerprint = rng.random::<u64>();
            assert_eq!(index.insert(fingerprint), stored.insert(fingerprint));
        }
        // Planted neighbours at every distance 0..=k+1 of a query.
        for _ in 0..10 {
            let query = rng.random::<u64>();
            for distance in 0..=max_distance + 1 {
                let neighbour = flip_random_bits(&mut rng, query, distance);
                assert_eq!(index.insert(neighbour), stored.insert(neighbour));
            }
            planted_queries.push(query);
        }
        // Interleaved removes: present and absent.
        let present: Vec<u64> = stored.iter().copied().collect();
        for _ in 0..60 {
            let victim = present[rng.random_range(0..present.len())];
            assert_eq!(index.remove(victim), stored.remove(&victim));
            let absent = rng.random::<u64>();
            assert_eq!(index.remove(absent), stored.remove(&absent));
        }
        // Inserting what is stored is a no-op.
        if let Some(&existing) = stored.iter().next() {
            assert!(!index.insert(existing));
        }
        assert_eq!(index.len(), stored.len());

        for &query in planted_queries.iter().rev().take(30) {
            assert_exact(&index, &stored, query);
        }
        for _ in 0..20 {
            let base = present[rng.random_range(0..present.len())];
            let flips = rng.random_range(0..=max_distance + 2);
            let near_stored = flip_random_bits(&mut rng, base, flips);
            assert_exact(&index, &stored, near_stored);
            assert_exact(&index, &stored, rng.random::<u64>());
        }
    }
    for &fingerprint in stored.iter().take(50) {
        assert!(index.contains(fingerprint));
    }

    // Drain everything: the index ends empty.
    for fingerprint in std::mem::take(&mut stored) {
        assert!(index.remove(fingerprint));
    }
    assert!(index.is_empty());
    for &query in planted_queries.iter().take(10) {
        assert!(index.within(query).is_empty());
    }
}

#[test]
fn exact_for_k_0() {
    exercise(0, 1, 6);
}

#[test]
fn exact_for_k_1() {
    exercise(1, 2, 6);
}

#[test]
fn exact_for_k_2() {
    exercise(2, 3, 6);
}

#[test]
fn exact_for_k_3() {
    exercise(3, 4, 8);
    exercise(3, 44, 4);
}

#[test]
fn exact_for_k_5() {
    exercise(5, 5, 6);
}

#[test]
fn exact_for_k_7() {
    exercise(7, 6, 6);
}

#[test]
fn exact_for_k_16() {
    exercise(16, 7, 2);
}

#[test]
fn distance_four_is_not_a_neighbour_at_k_3() {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    let mut index = MultiIndex::new(3).expect("supported distance");
    for _ in 0..200 {
        let query = rng.random::<u64>();
        let at_four = flip_random_bits(&mut rng, query, 4);
        let at_three = flip_random_bits(&mut rng, query, 3);
        index.insert(at_four);
        index.insert(at_three);
        let found = index.within(query);
        assert!(found.contains(&(at_three, 3)));
        assert!(!found.iter().any(|&(candidate, _)| candidate == at_four));
        index.remove(at_four);
        index.remove(at_three);
    }
}

#[test]
fn neighbour_differing_in_all_but_one_block_is_found() {
    // k = 3: four 16-bit blocks. One flipped bit in each of three blocks leaves
    // exactly one block in agreement, for each choice of that block.
    let query = 0x0123_4567_89ab_cdef_u64;
    for agreeing_block in 0..4 {
        let mut index = MultiIndex::new(3).expect("supported distance");
        let neighbour = (0..4)
            .filter(|&block| block != agreeing_block)
            .fold(query, |flipped, block| flipped ^ (1u64 << (block * 16 + 5)));
        index.insert(neighbour);
        assert_eq!(index.within(query), vec![(neighbour, 3)]);
    }
}

#[test]
fn rejects_unsupported_distance() {
    assert!(matches!(
        MultiIndex::new(17),
        Err(IndexError::MaxDistanceOutOfRange { requested: 17, .. })
    ));
}

//! Stage 3 of the data path: which known nodes could be a document's
//! near duplicates.
//!
//! Motivation: the design (seed 002) finds neighbours by simhash distance
//! alone, and that finds a long reprint in microseconds. It misses two
//! kinds of copy: a short text, whose few features move many bits at one
//! changed word, and a long text edited in the sentence that carries its
//! simhash. Each has its own search here.
//!
//! Design: three indexes, all keyed by fingerprint (the node's id) and all
//! pure, with no locking (the engine serialises access):
//!
//! - [`multi_index`]: every fingerprint within Hamming distance `k` (the
//!   pigeonhole multi-index of the design); the forest owns it.
//! - [`shingle_index`]: short texts by MinHash LSH over character shingles.
//! - [`sketch_index`]: long texts by the smallest hashes of their bottom-k
//!   sketch ([`crate::fingerprint::sketch`]).
//!
//! [`buckets`] is the bounded multimap under the last two.
//!
//! Consequences: a candidate is only a candidate. Every one is confirmed
//! ([`crate::confirm`]) before the forest sees it, so a loose search costs
//! time, never precision.

pub mod buckets;
pub mod multi_index;
pub mod shingle_index;
pub mod sketch_index;

/// The fingerprints of several keys' buckets (each oldest first), each
/// once: those found under the most keys first (the closest texts), then the
/// newest (the smallest age under any key, 0 = the newest of its bucket),
/// then by fingerprint so the order is deterministic.
fn rank_by_hits_then_age<'a>(
    buckets: impl IntoIterator<Item = &'a [crate::units::Fingerprint]>,
) -> Vec<crate::units::Fingerprint> {
    // (fingerprint, keys, age)
    let mut found: Vec<(crate::units::Fingerprint, u32, usize)> = Vec::new();
    for stored in buckets {
        found.extend(
            stored
                .iter()
                .rev()
                .enumerate()
                .map(|(age, &fingerprint)| (fingerprint, 1, age)),
        );
    }
    found.sort_unstable_by_key(|&(fingerprint, _, _)| fingerprint);
    let mut merged: Vec<(crate::units::Fingerprint, u32, usize)> = Vec::with_capacity(found.len());
    for (fingerprint, hits, age) in found {
        match merged.last_mut() {
            Some(last) if last.0 == fingerprint => {
                last.1 += hits;
                last.2 = last.2.min(age);
            }
            _ => merged.push((fingerprint, hits, age)),
        }
    }
    merged.sort_unstable_by_key(|&(fingerprint, hits, age)| {
        (std::cmp::Reverse(hits), age, fingerprint)
    });
    merged
        .into_iter()
        .map(|(fingerprint, _, _)| fingerprint)
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn candidates_found_under_more_keys_come_first_then_the_newest() {
        let buckets: [&[u64]; 3] = [&[7, 5], &[9, 7], &[3, 9]];
        assert_eq!(super::rank_by_hits_then_age(buckets), vec![7, 9, 5, 3]);
        let ties: [&[u64]; 1] = [&[4, 2, 6]];
        assert_eq!(super::rank_by_hits_then_age(ties), vec![6, 2, 4]);
    }
}

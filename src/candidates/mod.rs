//! Stage 3 of the data path: which known nodes could be a document's
//! near duplicates.
//!
//! Motivation: the design (seed 002) finds neighbours by simhash distance
//! alone, and that finds a long reprint in microseconds. It misses two
//! kinds of copy: a short text, whose few features move many bits at one
//! changed word, and a long text edited in the sentence that carries its
//! simhash. Each has its own search here.
//!
//! Design: three indexes, all pure, with no locking (the engine serialises
//! access). The multi-index holds fingerprints (its scan compares them);
//! the other two hold the forest's 4-byte node numbers
//! ([`crate::units::NodeId`]), several per node:
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
mod packed_buckets;
pub mod shingle_index;
pub mod sketch_index;

use crate::units::NodeId;

/// The nodes of several keys' buckets (each oldest first), each once:
/// those found under the most keys first (the closest texts), then the
/// newest (the smallest age under any key, 0 = the newest of its bucket),
/// then by `order_key` (the engine's: the fingerprint, so the order does not
/// depend on which numbers the nodes were given).
fn rank_by_hits_then_age<'a>(
    buckets: impl IntoIterator<Item = &'a [NodeId]>,
    order_key: impl Fn(NodeId) -> u64,
) -> Vec<NodeId> {
    // (node, keys, age)
    let mut found: Vec<(NodeId, u32, usize)> = Vec::new();
    for stored in buckets {
        found.extend(
            stored
                .iter()
                .rev()
                .enumerate()
                .map(|(age, &node)| (node, 1, age)),
        );
    }
    found.sort_unstable_by_key(|&(node, _, _)| node);
    let mut merged: Vec<(NodeId, u32, usize)> = Vec::with_capacity(found.len());
    for (node, hits, age) in found {
        match merged.last_mut() {
            Some(last) if last.0 == node => {
                last.1 += hits;
                last.2 = last.2.min(age);
            }
            _ => merged.push((node, hits, age)),
        }
    }
    // The order key once per node, not once per comparison.
    let mut ranked: Vec<(std::cmp::Reverse<u32>, usize, u64, NodeId)> = merged
        .into_iter()
        .map(|(node, hits, age)| (std::cmp::Reverse(hits), age, order_key(node), node))
        .collect();
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, _, _, node)| node).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn candidates_found_under_more_keys_come_first_then_the_newest() {
        let buckets: [&[u32]; 3] = [&[7, 5], &[9, 7], &[3, 9]];
        assert_eq!(
            super::rank_by_hits_then_age(buckets, u64::from),
            vec![7, 9, 5, 3]
        );
        let ties: [&[u32]; 1] = [&[4, 2, 6]];
        assert_eq!(super::rank_by_hits_then_age(ties, u64::from), vec![6, 2, 4]);
    }
}

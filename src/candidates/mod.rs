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
pub mod captured;
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
///
/// The order key is a random read of the node table per node, and a
/// document reads only the first of its candidates (it stops after a
/// bounded number of tries): nodes are sorted by keys and age at once, and
/// each run of equal keys and age is ordered by `order_key` only when the
/// reader gets to it.
///
/// Each of `buckets` appends its bucket's nodes, oldest first, to the
/// empty vector it is given (read out of the table's entries, into one
/// vector reused for all of them).
fn rank_by_hits_then_age<F: Fn(NodeId) -> u64, B: FnOnce(&mut Vec<NodeId>)>(
    buckets: impl IntoIterator<Item = B>,
    order_key: F,
) -> Ranked<F> {
    // (node, keys, age)
    let mut found: Vec<(NodeId, u32, usize)> = Vec::new();
    let mut stored = Vec::new();
    for bucket in buckets {
        stored.clear();
        bucket(&mut stored);
        found.extend(
            stored
                .iter()
                .rev()
                .enumerate()
                .map(|(age, &node)| (node, 1, age)),
        );
    }
    found.sort_unstable_by_key(|&(node, _, _)| node);
    let mut merged: Vec<(std::cmp::Reverse<u32>, usize, NodeId)> = Vec::with_capacity(found.len());
    for (node, hits, age) in found {
        match merged.last_mut() {
            Some(last) if last.2 == node => {
                last.0.0 += hits;
                last.1 = last.1.min(age);
            }
            _ => merged.push((std::cmp::Reverse(hits), age, node)),
        }
    }
    merged.sort_unstable_by_key(|&(hits, age, _)| (hits, age));
    Ranked {
        nodes: merged,
        next: 0,
        run: Vec::new(),
        taken: 0,
        order_key,
    }
}

/// Candidates in their rank (see [`rank_by_hits_then_age`]), each run of
/// equal keys and age ordered when it is reached.
pub struct Ranked<F> {
    /// (keys, age, node), sorted by keys and age.
    nodes: Vec<(std::cmp::Reverse<u32>, usize, NodeId)>,
    /// The first of `nodes` not yet in a run.
    next: usize,
    /// The current run, as (order key, node), sorted.
    run: Vec<(u64, NodeId)>,
    /// How many of `run` were handed out.
    taken: usize,
    order_key: F,
}

impl<F: Fn(NodeId) -> u64> Iterator for Ranked<F> {
    type Item = NodeId;

    fn next(&mut self) -> Option<NodeId> {
        if self.taken == self.run.len() {
            let &(hits, age, _) = self.nodes.get(self.next)?;
            let length = self.nodes[self.next..]
                .iter()
                .take_while(|&&(other_hits, other_age, _)| (other_hits, other_age) == (hits, age))
                .count();
            let run = &self.nodes[self.next..self.next + length];
            self.run.clear();
            self.run.extend(
                run.iter()
                    .map(|&(_, _, node)| ((self.order_key)(node), node)),
            );
            self.run.sort_unstable();
            self.next += length;
            self.taken = 0;
        }
        let (_, node) = self.run[self.taken];
        self.taken += 1;
        Some(node)
    }
}

#[cfg(test)]
mod tests {
    use crate::units::NodeId;

    /// Buckets as the ranking reads them.
    fn read(nodes: &[u32]) -> impl FnOnce(&mut Vec<NodeId>) + '_ {
        move |stored: &mut Vec<NodeId>| stored.extend_from_slice(nodes)
    }

    #[test]
    fn candidates_found_under_more_keys_come_first_then_the_newest() {
        let buckets: [&[u32]; 3] = [&[7, 5], &[9, 7], &[3, 9]];
        let ranked = |buckets: &[&[u32]]| -> Vec<u32> {
            super::rank_by_hits_then_age(buckets.iter().map(|&nodes| read(nodes)), u64::from)
                .collect()
        };
        assert_eq!(ranked(&buckets), vec![7, 9, 5, 3]);
        let ties: [&[u32]; 1] = [&[4, 2, 6]];
        assert_eq!(ranked(&ties), vec![6, 2, 4]);
        // Ties of keys and age go by the order key, not the node number.
        let by_key: [&[u32]; 3] = [&[1], &[2], &[3]];
        let reversed: Vec<u32> =
            super::rank_by_hits_then_age(by_key.map(read), |node| u64::from(10 - node)).collect();
        assert_eq!(reversed, vec![3, 2, 1]);
    }
}

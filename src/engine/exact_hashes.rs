//! The exact fast path's table: the hash of a normalised text → the node
//! that holds it.
//!
//! Motivation: every distinct text leaves an entry, so the table has about
//! as many entries as the forest has nodes; a map of 64-bit hash → 64-bit
//! fingerprint costs 16 bytes an entry before its slack.
//!
//! Design: an entry is the hash's high 32 bits (its tag) and the node's
//! number ([`NodeId`]), kept in 5 bytes by a
//! [`crate::key_node_table::KeyNodeTable`] (82–92 % full, 5.4–6.1 bytes an
//! entry; 8.7–9.8 as 8-byte entries before). The table places an entry by
//! its tag (mixed with a per-instance seed), so it can grow without the
//! full hash. A
//! lookup takes an entry only when the caller confirms that the node's side
//! record lists the full hash: two texts whose hashes share a tag cost a
//! record read, never a wrong join. A hash has at most one entry; a node
//! that adds a hash another node holds takes it over (the text placed last
//! wins, as with a map).
//!
//! Consequences: a hit reads the node's side record (memory-mapped) once.

use crate::key_node_table::KeyNodeTable;
use crate::radix::sort_stably_by;
use crate::units::NodeId;

/// Exact-text hash → node number, 5 bytes an entry: the hash's high half
/// (its tag) as the key.
#[derive(Debug, Default)]
pub(super) struct ExactHashes {
    table: KeyNodeTable,
}

fn tag_of(exact_hash: u64) -> u32 {
    (exact_hash >> 32) as u32
}

impl ExactHashes {
    pub(super) fn len(&self) -> usize {
        self.table.len()
    }

    /// The node holding `exact_hash`; `holds(node)` says whether a node's
    /// record lists it.
    pub(super) fn get(&self, exact_hash: u64, holds: impl Fn(NodeId) -> bool) -> Option<NodeId> {
        self.table.find(tag_of(exact_hash), holds)
    }

    /// Makes `node` the holder of `exact_hash`, taking it from the node that
    /// held it (`holds` as for [`Self::get`]).
    pub(super) fn insert(&mut self, exact_hash: u64, node: NodeId, holds: impl Fn(NodeId) -> bool) {
        let key = tag_of(exact_hash);
        self.table
            .replace_or_insert(key, |holder| holder == node || holds(holder), node);
    }

    /// The order [`Self::insert_all_in_order`] takes hashes in: their tag
    /// as the table orders it.
    pub(super) fn order_of(&self, exact_hash: u64) -> u32 {
        self.table.order_of(tag_of(exact_hash))
    }

    /// Adds `(hash, node)` entries given in [`Self::order_of`] order, each
    /// hash once (recovery): into an empty table, written front to back
    /// where one insert at a time was a probe at a random place.
    pub(super) fn insert_all_in_order<'a>(
        &mut self,
        entries: impl Iterator<Item = &'a (u64, NodeId)> + Clone,
    ) {
        let order_of = self.table.orderer();
        self.table
            .insert_all_in_order(entries.map(move |&(exact_hash, node)| {
                (u64::from(order_of(tag_of(exact_hash))) << 32) | u64::from(node)
            }));
    }

    /// Forgets `node` as the holder of `exact_hash` (nothing when another
    /// node holds it now).
    pub(super) fn remove(&mut self, exact_hash: u64, node: NodeId) {
        self.table
            .remove_if(tag_of(exact_hash), |holder| holder == node);
    }

    /// Heap bytes of the table.
    pub(super) fn heap_bytes(&self) -> usize {
        self.table.allocation_size()
    }
}

/// Every exact hash the side records list, with the node listing it, in
/// the order the records are read (arrival order): the exact-hash table is
/// built from these, sorted in its own order, not one insert at a time.
///
/// Motivation: an insert whose 32-bit tag another hash holds asks whether
/// that node's record lists the same hash, and reads the record: about 2 %
/// of 100 M inserts, each a read out of order in a snapshot mapped for
/// reading in order, which made the kernel read 8 MiB around each (1.9 TB
/// in 23 minutes of a recovery of 100 M nodes). The hashes are all read by
/// this pass anyway: sorted by tag (in the table's order of tags), the
/// nodes that list one hash are side by side, and the last of them holds
/// it, as inserting them in turn gave.
#[derive(Default)]
pub(super) struct ListedExactHashes {
    /// (hash, node), in parts of [`LISTED_PER_PART`] (the radix sort
    /// frees each part once read).
    parts: Vec<Vec<(u64, NodeId)>>,
}

/// Entries per part of [`ListedExactHashes`].
const LISTED_PER_PART: usize = 1 << 20;

impl ListedExactHashes {
    pub(super) fn push(&mut self, exact_hash: u64, node: NodeId) {
        if self
            .parts
            .last()
            .is_none_or(|part| part.len() >= LISTED_PER_PART)
        {
            self.parts.push(Vec::with_capacity(LISTED_PER_PART));
        }
        if let Some(part) = self.parts.last_mut() {
            part.push((exact_hash, node));
        }
    }

    /// Inserts each hash once, held by the last node that lists it; no
    /// record is read. Hashes listed by the nodes `unstored` (sorted) are
    /// left out: their records are not kept.
    pub(super) fn insert_into(self, exact_hashes: &mut ExactHashes, unstored: &[NodeId]) {
        let order_of = |exact_hash: u64| exact_hashes.order_of(exact_hash);
        let mut in_order = sort_stably_by(self.parts, |(exact_hash, _)| order_of(exact_hash));
        // The same tag is the same place in the order, and a hash listed
        // again is listed later among its tag's.
        let mut kept = 0;
        for position in 0..in_order.len() {
            let (exact_hash, node) = in_order[position];
            let listed_later = in_order[position + 1..]
                .iter()
                .take_while(|(later, _)| later >> 32 == exact_hash >> 32)
                .any(|&(later, _)| later == exact_hash);
            if !listed_later && unstored.binary_search(&node).is_err() {
                in_order[kept] = (exact_hash, node);
                kept += 1;
            }
        }
        in_order.truncate(kept);
        exact_hashes.insert_all_in_order(in_order.iter());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_found_only_through_a_node_that_holds_it() {
        let mut table = ExactHashes::default();
        let first: u64 = 0x1234_5678_0000_0001;
        let same_tag: u64 = 0x1234_5678_0000_0002;
        // Node 1 holds `first`; node 2 holds `same_tag`.
        let holds =
            |node: NodeId, hash: u64| (node, hash) == (1, first) || (node, hash) == (2, same_tag);
        table.insert(first, 1, |node| holds(node, first));
        table.insert(same_tag, 2, |node| holds(node, same_tag));
        assert_eq!(table.len(), 2);
        assert_eq!(table.get(first, |node| holds(node, first)), Some(1));
        assert_eq!(table.get(same_tag, |node| holds(node, same_tag)), Some(2));
        let unknown = 0x1234_5678_0000_0003;
        assert_eq!(table.get(unknown, |node| holds(node, unknown)), None);
        table.remove(first, 1);
        assert_eq!(table.get(first, |node| holds(node, first)), None);
        assert_eq!(table.get(same_tag, |node| holds(node, same_tag)), Some(2));
    }

    #[test]
    fn the_last_node_to_add_a_hash_holds_it() {
        let mut table = ExactHashes::default();
        let hash = 0xfeed_0000_0000_0000;
        table.insert(hash, 1, |node| node == 1);
        table.insert(hash, 2, |node| node == 1 || node == 2);
        assert_eq!(table.len(), 1);
        assert_eq!(table.get(hash, |node| node == 1 || node == 2), Some(2));
        // The old holder going does not take the hash from the new one.
        table.remove(hash, 1);
        assert_eq!(table.get(hash, |node| node == 2), Some(2));
        table.remove(hash, 2);
        assert_eq!(table.len(), 0);
    }
}

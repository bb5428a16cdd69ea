//! The forest as records: what a snapshot writes and what recovery
//! rebuilds it from, and the nodes captured as of one moment while writes
//! go on ([`crate::capture`]).

use super::{
    Arrival, Forest, ForestConfig, ForestCounters, ForestError, Indexing, NO_PARENT, NO_TREE, Node,
    NodeRecord, Word48,
};
use std::path::Path;

use crate::candidates::multi_index::MultiIndex;
use crate::radix::sort_stably_by;
use crate::slots::{Slot, SlotsImage, SlotsSinks, TaggedNumbers};
use crate::units::{Fingerprint, NodeId};

/// A leaf on its way into its root's tree ([`Forest::join_leaves`]).
#[derive(Debug, Clone, Copy, Default)]
struct LeafToJoin {
    root_fingerprint: Fingerprint,
    leaf: NodeId,
    documents: u32,
    /// Its root's number, once found.
    root: NodeId,
    /// Its root's place in the number table's order (computed once, where
    /// each pass of the sort computed it anew), then its place in the tree.
    place: u32,
}

/// A capture of the forest's nodes under way ([`Forest::start_capture`]).
#[derive(Debug)]
pub struct NodesCapture {
    counters: ForestCounters,
    sinks: SlotsSinks<Node>,
}

impl NodesCapture {
    /// Moves the slots copied so far into the image (outside the lock).
    pub fn flush(&self) {
        self.sinks.flush();
    }
}

/// The forest's nodes as of a capture's moment.
#[derive(Debug)]
pub struct CapturedNodes {
    image: SlotsImage<Node>,
    pub counters: ForestCounters,
}

impl CapturedNodes {
    /// Every node with its number, in number order.
    pub fn records(&self) -> impl Iterator<Item = (NodeId, NodeRecord)> + '_ {
        self.image
            .iter()
            .map(|(number, fingerprint, node)| (number, self.record_of(fingerprint, node)))
    }

    /// The fingerprint of node `number`, if it was in use.
    pub fn fingerprint_at(&self, number: NodeId) -> Option<Fingerprint> {
        self.image.fingerprint_at(number)
    }

    /// The record of node `number`, if it was in use.
    pub fn record_at(&self, number: NodeId) -> Option<NodeRecord> {
        let (fingerprint, node) = self.image.get(number)?;
        Some(self.record_of(fingerprint, node))
    }

    fn record_of(&self, fingerprint: Fingerprint, node: &Node) -> NodeRecord {
        // A leaf's root was in use at the capture's moment too.
        let root = if node.is_root() {
            fingerprint
        } else {
            self.image
                .fingerprint_at(node.parent)
                .unwrap_or(fingerprint)
        };
        node.record(fingerprint, root)
    }

    /// The numbers of the nodes, in the order they arrived (the order a
    /// snapshot writes them in), without a copy of their records: 4 bytes
    /// a node, where records sorted by arrival took 48 (and a snapshot of
    /// 100 M nodes outgrew a 24 GB machine).
    pub fn arrival_order(&self) -> Vec<NodeId> {
        let arrival_of = |number: NodeId| {
            self.image
                .get(number)
                .map_or(u64::MAX, |(_, node)| node.arrival())
        };
        let mut order: Vec<NodeId> = self.image.iter().map(|(number, _, _)| number).collect();
        // Numbers are handed out in arrival order until some are reused.
        if order
            .windows(2)
            .all(|pair| arrival_of(pair[0]) < arrival_of(pair[1]))
        {
            return order;
        }
        let earliest = order.iter().map(|&number| arrival_of(number)).min();
        let latest = order.iter().map(|&number| arrival_of(number)).max();
        match (earliest, latest) {
            (Some(earliest), Some(latest)) if latest - earliest <= u64::from(u32::MAX) => {
                // Arrivals are unique: the arrival since the earliest, a
                // 32-bit digit, orders them completely.
                let pairs: Vec<(u32, NodeId)> = order
                    .iter()
                    .map(|&number| ((arrival_of(number) - earliest) as u32, number))
                    .collect();
                drop(order);
                sort_stably_by(vec![pairs], |(since_earliest, _)| since_earliest)
                    .into_iter()
                    .map(|(_, number)| number)
                    .collect()
            }
            _ => {
                order.sort_unstable_by_key(|&number| (arrival_of(number), number));
                order
            }
        }
    }
}

impl Forest {
    /// Starts capturing the nodes as they are now (call with writes locked
    /// out): the counters and which slots are in use are taken at once,
    /// the nodes by [`Forest::capture_some`].
    pub fn start_capture(&self, directory: Option<&Path>) -> NodesCapture {
        NodesCapture {
            counters: self.counters(),
            sinks: self.nodes.start_capture(directory),
        }
    }

    /// Copies up to `budget` more node slots; `true` once all are copied.
    pub fn capture_some(&self, budget: usize) -> bool {
        self.nodes.capture_some(budget)
    }

    /// The captured nodes, once all are copied (the capture ends).
    pub fn take_capture(&self, capture: NodesCapture) -> Option<CapturedNodes> {
        let image = self.nodes.take_capture()?;
        let counters = capture.counters;
        Some(CapturedNodes { image, counters })
    }

    /// Ends a capture without its image.
    pub fn stop_capture(&self) {
        self.nodes.stop_capture();
    }

    /// Every node, in no particular order (sort by arrival later, outside
    /// any lock).
    pub fn node_records_unsorted(&self) -> Vec<NodeRecord> {
        self.nodes
            .iter()
            .map(|(_, fingerprint, node)| {
                node.record(fingerprint, self.root_fingerprint(fingerprint, node))
            })
            .collect()
    }

    /// Every node, in arrival order, for a snapshot.
    pub fn node_records(&self) -> Vec<NodeRecord> {
        let mut records = self.node_records_unsorted();
        records.sort_unstable_by_key(|record| record.arrival);
        records
    }

    /// Counters a snapshot keeps besides the nodes.
    pub fn counters(&self) -> ForestCounters {
        ForestCounters {
            next_arrival: self.next_arrival,
            expired_nodes: self.expired_node_count,
        }
    }

    /// A forest with exactly these nodes (from a snapshot). Roots may come
    /// in any order relative to their leaves.
    ///
    /// The block tables ("within `k`") need only the fingerprints, so they
    /// are built on a thread of their own while this one numbers the nodes
    /// and joins the trees: at 100 M nodes this function is the longest
    /// task of recovery, and the tables were a sixth of it.
    ///
    /// # Errors
    ///
    /// [`ForestError::Damaged`] when a leaf's root is not a root among the
    /// records or a fingerprint appears twice; the config errors of
    /// [`Forest::new`].
    pub fn restore(
        config: ForestConfig,
        records: &[NodeRecord],
        counters: ForestCounters,
    ) -> Result<Self, ForestError> {
        let mut forest = Forest::new(config)?;
        let mut index = std::mem::replace(&mut forest.index, MultiIndex::new(config.max_distance)?);
        std::thread::scope(|scope| {
            let indexing = scope.spawn(move || {
                let fingerprints: Vec<Fingerprint> = records
                    .iter()
                    .filter(|record| record.indexing == Indexing::WithinK)
                    .map(|record| record.fingerprint)
                    .collect();
                index.reserve(records.len());
                index.insert_all_absent(&fingerprints);
                index
            });
            let numbered = forest.number_and_join(records);
            forest.index = indexing
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            numbered
        })?;
        forest.next_arrival = counters.next_arrival.max(
            records
                .iter()
                .map(|record| record.arrival)
                .max()
                .unwrap_or(0),
        );
        forest.expired_node_count = counters.expired_nodes;
        Ok(forest)
    }

    /// The nodes of `records` numbered in the node table, each leaf in its
    /// root's tree ([`Forest::restore`] without the block tables).
    pub(super) fn number_and_join(&mut self, records: &[NodeRecord]) -> Result<(), ForestError> {
        let forest = self;
        forest.nodes.reserve(records.len());
        if forest.config.retention.is_some() {
            forest.expiry_queue.reserve_exact(records.len());
        }
        let mut nodes = Vec::with_capacity(records.len());
        for record in records {
            if record.root == record.fingerprint {
                forest.root_count += 1;
            }
            // Leaves get their root's number and their place in its tree
            // once every node has a number.
            let node = Node {
                parent: NO_PARENT,
                born: Word48::time(record.born),
                arrival: Arrival::new(record.arrival, record.indexing),
                touched: Word48::time(record.touched),
                documents: record.documents,
                place: NO_TREE,
            };
            nodes.push(Slot::new(record.fingerprint, node));
            forest.document_count += u64::from(record.documents);
            if forest.config.retention.is_some() {
                forest.queue_expiry(record.touched, record.fingerprint);
            }
        }
        // All at once: the node table written in its own order.
        let numbers = forest
            .nodes
            .number_all(nodes)
            .map_err(|error| ForestError::Damaged(error.to_string()))?;
        if forest.nodes.len() != records.len() {
            let mut seen = vec![false; records.len()];
            for (record, &number) in records.iter().zip(&numbers) {
                if std::mem::replace(&mut seen[number as usize], true) {
                    return Err(ForestError::Damaged(format!(
                        "fingerprint {:016x} appears twice",
                        record.fingerprint
                    )));
                }
            }
        }
        // A fresh table numbers the records by their positions, and a
        // fingerprint given twice was refused above.
        debug_assert!(
            (0u32..)
                .zip(&numbers)
                .all(|(position, &number)| number == position)
        );
        forest.join_leaves(records)
    }

    /// Each leaf of `records` (numbered by their positions) in its root's
    /// tree, its leaves in the records' order.
    ///
    /// At 100 M nodes, each of the millions of leaves looked up its root
    /// and joined its tree where they lay in tables of gigabytes: some
    /// misses of the processor's page tables a leaf, 16.5 s of CPU of the
    /// thread that ended recovery's build. Here the leaves are sorted
    /// instead, so that every pass reads its tables front to back: by their
    /// root's place in the number table to find the root's number (a tag
    /// that one number holds is taken without reading its slot), by that
    /// number to check it and build each tree whole, and by their own
    /// number to write them.
    fn join_leaves(&mut self, records: &[NodeRecord]) -> Result<(), ForestError> {
        let forest = self;
        let not_a_root = |leaf: &LeafToJoin| {
            ForestError::Damaged(format!(
                "leaf {:016x} names {:016x}, which is not a root",
                records[leaf.leaf as usize].fingerprint, leaf.root_fingerprint
            ))
        };
        let nodes = &forest.nodes;
        let leaves: Vec<LeafToJoin> = (0u32..)
            .zip(records)
            .filter(|(_, record)| record.root != record.fingerprint)
            .map(|(leaf, record)| LeafToJoin {
                root_fingerprint: record.root,
                leaf,
                documents: record.documents,
                root: NO_PARENT,
                place: nodes.table_order(record.root),
            })
            .collect();
        let mut leaves = sort_stably_by(vec![leaves], |leaf| leaf.place);
        for leaf in &mut leaves {
            leaf.root = match nodes.numbers_tagged_like(leaf.root_fingerprint) {
                TaggedNumbers::One(number) => number,
                TaggedNumbers::Several => nodes
                    .number(leaf.root_fingerprint)
                    .ok_or_else(|| not_a_root(leaf))?,
                TaggedNumbers::None => return Err(not_a_root(leaf)),
            };
        }
        let mut leaves = sort_stably_by(vec![leaves], |leaf| leaf.root);
        let mut tree_leaves = Vec::new();
        for group in leaves.chunk_by_mut(|a, b| a.root == b.root) {
            // The number found is a root's, and every leaf of the group
            // names its fingerprint (not only its tag).
            let root_record = records
                .get(group[0].root as usize)
                .filter(|root| root.root == root.fingerprint);
            let orphan = group.iter().find(|leaf| {
                root_record.is_none_or(|root| root.fingerprint != leaf.root_fingerprint)
            });
            let (Some(root_record), None) = (root_record, orphan) else {
                return Err(not_a_root(orphan.unwrap_or(&group[0])));
            };
            tree_leaves.clear();
            let mut class_documents = u64::from(root_record.documents);
            for (place, leaf) in (0u32..).zip(group.iter_mut()) {
                tree_leaves.push(leaf.leaf);
                class_documents += u64::from(leaf.documents);
                leaf.place = place;
            }
            let tree = forest.trees.add_with_leaves(&tree_leaves, class_documents);
            if let Some((_, root_node)) = forest.nodes.at_mut(group[0].root) {
                root_node.place = tree;
            }
        }
        let leaves = sort_stably_by(vec![leaves], |leaf| leaf.leaf);
        for leaf in leaves {
            if let Some((_, leaf_node)) = forest.nodes.at_mut(leaf.leaf) {
                leaf_node.parent = leaf.root;
                leaf_node.place = leaf.place;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "records_tests.rs"]
mod tests;

//! Removal and expiry: nodes leave by retention (a root with its whole
//! tree, once the root's touch, the tree's newest, is older than the
//! retention), by replay of a logged expiry, or when no document is left
//! under a node (rejected or deleted); memory follows the live node count.
//!
//! Every removal reports the fingerprints and the numbers it freed
//! ([`RemovedNodes`]): other structures keyed by either drop their entries
//! before a number is handed out again.

use std::cmp::Reverse;

use super::{Due, EXPIRY_QUEUE_SLACK, Forest, Indexing, NO_TREE, Node, UNKNOWN_LEAF_SLOT};
use crate::units::{Fingerprint, Millis, NodeId};

/// Nodes a removal took out: their fingerprints and, in the same order,
/// the numbers they had (free for another node from now on), so the caller
/// can drop what it keeps under either.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RemovedNodes {
    pub fingerprints: Vec<Fingerprint>,
    pub ids: Vec<NodeId>,
}

impl RemovedNodes {
    fn push(&mut self, fingerprint: Fingerprint, id: NodeId) {
        self.fingerprints.push(fingerprint);
        self.ids.push(id);
    }

    pub fn len(&self) -> usize {
        self.fingerprints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fingerprints.is_empty()
    }
}

/// The result of one [`Forest::expire`] call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ExpiryProgress {
    /// Nodes removed by this call, so the caller can drop side data.
    pub removed: RemovedNodes,
    /// Whether expired nodes may remain (the budget ran out): call again.
    pub more_pending: bool,
}

impl Forest {
    /// Removes the given nodes (replay of an expiry): a root with its whole
    /// tree, a leaf alone. Returns what was removed.
    pub fn remove_nodes(&mut self, fingerprints: &[Fingerprint]) -> RemovedNodes {
        let mut removed = RemovedNodes::default();
        for &fingerprint in fingerprints {
            let Some(node) = self.nodes.get(fingerprint).copied() else {
                continue;
            };
            if node.is_root() {
                self.remove_tree(fingerprint, &mut removed);
            } else {
                self.remove_leaf(fingerprint, node, &mut removed);
            }
        }
        removed
    }

    /// [`Forest::remove_nodes`] for nodes that expired (replay of an
    /// expiry): counted as expired.
    pub fn apply_expiry(&mut self, fingerprints: &[Fingerprint]) -> RemovedNodes {
        let removed = self.remove_nodes(fingerprints);
        self.expired_node_count += removed.len() as u64;
        removed
    }

    /// Removes `fingerprint` when no document stands for it any more and
    /// nothing hangs under it: a leaf with no documents, or a root with no
    /// documents and no leaves. A leaf's removal can leave its root in that
    /// state, so the root is tried too. Used when the cluster rejected the
    /// only document of a node, or all its documents were deleted: such a
    /// node would otherwise name a class that nothing in the index belongs
    /// to. Returns the nodes removed (zero, one or two).
    pub fn remove_if_unused(&mut self, fingerprint: Fingerprint) -> RemovedNodes {
        let mut removed = RemovedNodes::default();
        let Some(node) = self.nodes.get(fingerprint).copied() else {
            return removed;
        };
        if node.documents != 0 {
            return removed;
        }
        if node.is_root() {
            if !self.trees.contains(node.place) {
                self.remove_tree(fingerprint, &mut removed);
            }
            return removed;
        }
        let root = self.root_fingerprint(fingerprint, &node);
        self.remove_leaf(fingerprint, node, &mut removed);
        if let Some(root_node) = self.nodes.get(root)
            && root_node.documents == 0
            && !self.trees.contains(root_node.place)
        {
            self.remove_tree(root, &mut removed);
        }
        removed
    }

    /// Removes nodes whose touched time is before `now - retention`, at most
    /// about `max_removals` of them (a root goes with its whole tree, which may
    /// overshoot the budget by the tree's size). Does nothing when retention is
    /// `None`. Call again while [`ExpiryProgress::more_pending`] is set.
    ///
    /// Work per call is bounded by the budget, not by the forest's size, apart
    /// from two rare O(live nodes) clean-ups after mass expiry: rebuilding the
    /// queue once stale entries outnumber twice the live nodes, and shrinking a
    /// map that has fallen below a quarter of its capacity.
    pub fn expire(&mut self, now: Millis, max_removals: usize) -> ExpiryProgress {
        let Some(retention) = self.config.retention else {
            return ExpiryProgress::default();
        };
        let cutoff = now.saturating_sub(retention);
        let mut removed = RemovedNodes::default();
        // Stale queue entries cost work without removing anything; bound them too.
        let mut queue_pops_left = max_removals.saturating_mul(4).saturating_add(64);
        let more_pending = loop {
            let Some(&Reverse(due)) = self.expiry_queue.peek() else {
                break false;
            };
            let (queued_time, fingerprint) = (due.time(), due.fingerprint());
            if queued_time >= cutoff {
                break false;
            }
            if queue_pops_left == 0 {
                break true;
            }
            queue_pops_left -= 1;
            match self.nodes.get(fingerprint).copied() {
                Some(node) if node.touched() == queued_time => {
                    if removed.len() >= max_removals {
                        break true;
                    }
                    self.expiry_queue.pop();
                    if node.is_root() {
                        self.remove_tree(fingerprint, &mut removed);
                    } else {
                        self.remove_leaf(fingerprint, node, &mut removed);
                    }
                }
                Some(node) if node.touched() > queued_time => {
                    // Touched since it was queued: requeue at its current time.
                    if let Some(mut entry) = self.expiry_queue.peek_mut() {
                        *entry = Reverse(Due::new(node.touched(), fingerprint));
                    }
                }
                // Gone with its tree, or an entry of an earlier life of this
                // fingerprint (whose current life has its own entry).
                _ => {
                    self.expiry_queue.pop();
                }
            }
        };
        self.expired_node_count += removed.len() as u64;
        if !removed.is_empty() {
            self.release_spare_memory();
        }
        ExpiryProgress {
            removed,
            more_pending,
        }
    }

    /// Removes a root and all of its leaves.
    fn remove_tree(&mut self, root: Fingerprint, removed: &mut RemovedNodes) {
        let Some((root_id, root_node)) = self.nodes.remove(root) else {
            return;
        };
        self.leave_index(root, &root_node);
        self.root_count -= 1;
        removed.push(root, root_id);
        let mut class_documents = u64::from(root_node.documents);
        if let Some((leaves, tree_documents)) = self.trees.remove(root_node.place) {
            class_documents = tree_documents;
            for leaf_id in leaves {
                let Some((leaf, _)) = self.nodes.at(leaf_id) else {
                    continue;
                };
                if let Some((_, leaf_node)) = self.nodes.remove(leaf) {
                    self.leave_index(leaf, &leaf_node);
                    removed.push(leaf, leaf_id);
                }
            }
        }
        self.document_count -= class_documents;
    }

    /// Removes one leaf; its root stays.
    fn remove_leaf(&mut self, leaf: Fingerprint, node: Node, removed: &mut RemovedNodes) {
        // The root stays while its leaves go: its number is live.
        let tree_number = self.tree_number(&node);
        let Some((leaf_id, _)) = self.nodes.remove(leaf) else {
            return;
        };
        self.leave_index(leaf, &node);
        removed.push(leaf, leaf_id);
        self.document_count -= u64::from(node.documents);
        let leaves = self.trees.leaves(tree_number);
        let recorded_slot = node.place as usize;
        let slot = if leaves.get(recorded_slot) == Some(&leaf_id) {
            Some(recorded_slot)
        } else {
            // Only a tree of more than u32::MAX leaves loses track of slots.
            debug_assert_eq!({ node.place }, UNKNOWN_LEAF_SLOT, "stale leaf slot");
            leaves.iter().position(|&member| member == leaf_id)
        };
        let Some(slot) = slot else {
            self.trees
                .take_documents(tree_number, u64::from(node.documents));
            return;
        };
        let Some(taken) = self
            .trees
            .take_leaf_at(tree_number, slot, u64::from(node.documents))
        else {
            return;
        };
        if let Some((place, moved)) = taken.moved
            && let Some((_, moved_node)) = self.nodes.at_mut(moved)
        {
            moved_node.place = u32::try_from(place).unwrap_or(UNKNOWN_LEAF_SLOT);
        }
        if taken.tree_released
            && let Some((_, root_node)) = self.nodes.at_mut(node.parent)
        {
            root_node.place = NO_TREE;
        }
    }

    /// Takes a removed node out of the "within `k`" index, if it was in.
    fn leave_index(&mut self, fingerprint: Fingerprint, node: &Node) {
        if node.indexing() == Indexing::WithinK {
            self.index.remove(fingerprint);
        }
    }

    /// After removals: rebuilds the expiry queue when stale entries dominate,
    /// and shrinks maps that have become mostly empty, so memory follows the
    /// live node count.
    fn release_spare_memory(&mut self) {
        let live = self.nodes.len();
        if self.expiry_queue.len() > live.saturating_mul(2).saturating_add(EXPIRY_QUEUE_SLACK) {
            self.expiry_queue = self
                .nodes
                .iter()
                .map(|(_, fingerprint, node)| Reverse(Due::new(node.touched(), fingerprint)))
                .collect();
        }
        if self.nodes.capacity() > 4096 && live < self.nodes.capacity() / 4 {
            // Numbers stay: others hold them.
            self.nodes.release_spare(live * 2);
        }
        self.trees.release_spare();
    }
}

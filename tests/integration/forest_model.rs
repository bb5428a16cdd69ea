//! The reference the forest's property tests (`forest_props`) run
//! against: the forest of SPEC §3 written as plainly as possible, a vector
//! of nodes, every question answered by a full scan.

use std::collections::BTreeSet;

use neardup::forest::{Assignment, Indexing, Placement};
use neardup::units::{Fingerprint, Millis};

pub(super) fn distance(left: Fingerprint, right: Fingerprint) -> u32 {
    (left ^ right).count_ones()
}

#[derive(Debug, Clone)]
pub(super) struct ModelNode {
    pub(super) fingerprint: Fingerprint,
    pub(super) root: Fingerprint,
    pub(super) born: Millis,
    pub(super) arrival: u64,
    pub(super) touched: Millis,
    pub(super) documents: u64,
    /// Found by "within k" queries (placed [`Indexing::WithinK`]).
    pub(super) within_k: bool,
}

/// The obviously correct reference: linear scans over a vector.
#[derive(Debug, Clone)]
pub(super) struct ModelForest {
    pub(super) max_distance: u32,
    pub(super) nodes: Vec<ModelNode>,
    pub(super) arrivals: u64,
}

impl ModelForest {
    pub(super) fn new(max_distance: u32) -> Self {
        Self {
            max_distance,
            nodes: Vec::new(),
            arrivals: 0,
        }
    }

    pub(super) fn position(&self, fingerprint: Fingerprint) -> Option<usize> {
        self.nodes
            .iter()
            .position(|node| node.fingerprint == fingerprint)
    }

    pub(super) fn get(&self, fingerprint: Fingerprint) -> Option<&ModelNode> {
        self.position(fingerprint)
            .map(|position| &self.nodes[position])
    }

    pub(super) fn touch(&mut self, fingerprint: Fingerprint, now: Millis) {
        let position = self.position(fingerprint).expect("touching a model node");
        let node = &mut self.nodes[position];
        node.touched = node.touched.max(now);
    }

    pub(super) fn roots(&self) -> Vec<Fingerprint> {
        self.nodes
            .iter()
            .filter(|node| node.root == node.fingerprint)
            .map(|node| node.fingerprint)
            .collect()
    }

    pub(super) fn leaves_of(&self, root: Fingerprint) -> Vec<Fingerprint> {
        self.nodes
            .iter()
            .filter(|node| node.root == root && node.fingerprint != root)
            .map(|node| node.fingerprint)
            .collect()
    }

    pub(super) fn class_documents(&self, root: Fingerprint) -> u64 {
        self.nodes
            .iter()
            .filter(|node| node.root == root)
            .map(|node| node.documents)
            .sum()
    }

    /// Roots of every node within k that `confirm` accepts.
    pub(super) fn confirmed_roots(
        &self,
        fingerprint: Fingerprint,
        confirm: &dyn Fn(Fingerprint) -> bool,
    ) -> BTreeSet<Fingerprint> {
        self.nodes
            .iter()
            .filter(|node| node.within_k)
            .filter(|node| distance(node.fingerprint, fingerprint) <= self.max_distance)
            .filter(|node| confirm(node.fingerprint))
            .map(|node| node.root)
            .collect()
    }

    /// Roots of the extra neighbours that are nodes.
    pub(super) fn extra_roots(&self, extra_candidates: &[Fingerprint]) -> BTreeSet<Fingerprint> {
        extra_candidates
            .iter()
            .filter_map(|&extra| self.get(extra))
            .map(|node| node.root)
            .collect()
    }

    pub(super) fn assign(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
        extra_candidates: &[Fingerprint],
        indexing: Indexing,
        confirm: &dyn Fn(Fingerprint) -> bool,
    ) -> Assignment {
        if let Some(position) = self.position(fingerprint) {
            self.nodes[position].documents += 1;
            let root = self.nodes[position].root;
            self.touch(fingerprint, now);
            self.touch(root, now);
            return Assignment {
                root,
                placement: Placement::ExistingNode,
                class_documents: self.class_documents(root),
            };
        }
        let mut roots = self.confirmed_roots(fingerprint, confirm);
        roots.extend(self.extra_roots(extra_candidates));
        let (root, placement) = match roots.len() {
            0 => (fingerprint, Placement::NewRoot),
            1 => (*roots.first().expect("one root"), Placement::JoinedRoot),
            competing_roots => {
                // Most leaves, then earliest born (time, then arrival), then
                // smaller fingerprint.
                let best = roots
                    .iter()
                    .copied()
                    .min_by_key(|&root| {
                        let node = self.get(root).expect("root is a node");
                        (
                            std::cmp::Reverse(self.leaves_of(root).len()),
                            node.born,
                            node.arrival,
                            root,
                        )
                    })
                    .expect("several roots");
                (best, Placement::ResolvedConflict { competing_roots })
            }
        };
        self.arrivals += 1;
        self.nodes.push(ModelNode {
            fingerprint,
            root,
            born: now,
            arrival: self.arrivals,
            touched: now,
            documents: 1,
            within_k: indexing == Indexing::WithinK,
        });
        self.touch(root, now);
        Assignment {
            root,
            placement,
            class_documents: self.class_documents(root),
        }
    }

    pub(super) fn reach_root(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
    ) -> Option<Fingerprint> {
        let root = self.get(fingerprint)?.root;
        self.touch(fingerprint, now);
        self.touch(root, now);
        Some(root)
    }

    pub(super) fn forget_document(&mut self, fingerprint: Fingerprint) -> bool {
        match self.position(fingerprint) {
            Some(position) if self.nodes[position].documents > 0 => {
                self.nodes[position].documents -= 1;
                true
            }
            _ => false,
        }
    }

    /// A node with no documents and nothing under it goes; then its root, if
    /// that left the root in the same state.
    pub(super) fn remove_if_unused(&mut self, fingerprint: Fingerprint) -> BTreeSet<Fingerprint> {
        let mut removed = BTreeSet::new();
        let unused = |model: &Self, candidate: Fingerprint| {
            model.get(candidate).is_some_and(|node| {
                node.documents == 0
                    && (node.root != candidate || model.leaves_of(candidate).is_empty())
            })
        };
        let Some(root) = self.get(fingerprint).map(|node| node.root) else {
            return removed;
        };
        if !unused(self, fingerprint) {
            return removed;
        }
        self.remove(fingerprint);
        removed.insert(fingerprint);
        if root != fingerprint && unused(self, root) {
            self.remove(root);
            removed.insert(root);
        }
        removed
    }

    pub(super) fn expired(&self, cutoff: Millis) -> BTreeSet<Fingerprint> {
        self.nodes
            .iter()
            .filter(|node| node.touched < cutoff)
            .map(|node| node.fingerprint)
            .collect()
    }

    pub(super) fn remove(&mut self, fingerprint: Fingerprint) {
        let position = self.position(fingerprint).expect("removing a model node");
        self.nodes.swap_remove(position);
    }
}

//! Placing a fingerprint (SPEC §3 rules 1–4): counted on its node, a new
//! root, a leaf of the one root its confirmed neighbours lead to, or of the
//! root rule 4 prefers among several. Split in two for batches: the roots
//! a new node may join ([`Forest::candidate_roots`], read-only) and the
//! placement itself ([`Forest::assign_to_roots`]).

use std::cmp::Reverse;

use super::numbers::NodeNumbers;
use super::{
    Arrival, Assignment, Forest, Indexing, NO_PARENT, NO_TREE, Node, Placement, UNKNOWN_LEAF_SLOT,
    Word48, kept_time,
};
use crate::units::{Fingerprint, Millis, NodeId};

impl Forest {
    /// Applies a placement decided earlier (replay of a journal): counts one
    /// more document of `fingerprint` if it is a node, else adds it as a
    /// root (`root == fingerprint`) or as a leaf of `root`, born `now`, with
    /// the same effects as the [`Forest::assign`] that decided it. A leaf
    /// whose root is gone (a damaged journal) becomes a root. A new node is
    /// indexed as `indexing` says.
    pub fn apply_placement(
        &mut self,
        fingerprint: Fingerprint,
        root: Fingerprint,
        now: Millis,
        indexing: Indexing,
    ) -> Assignment {
        if let Some(assignment) = self.count_existing(fingerprint, now) {
            return assignment;
        }
        let root_is_a_root = self.nodes.get(root).is_some_and(|node| node.is_root());
        if root == fingerprint || !root_is_a_root {
            self.add_root(fingerprint, now, indexing)
        } else {
            self.add_leaf(fingerprint, root, now, Placement::JoinedRoot, indexing)
        }
    }

    /// Places one document's fingerprint (SPEC §3 rules 1–4) with every
    /// candidate accepted.
    pub fn assign(&mut self, fingerprint: Fingerprint, now: Millis) -> Assignment {
        self.assign_confirmed(fingerprint, now, |_candidate| true)
    }

    /// Places one document's fingerprint; `confirm(candidate)` may veto a node
    /// within `k` (for example when the Jaccard similarity of short texts is too
    /// low). Vetoed nodes play no part in the decision.
    ///
    /// `confirm` is not called when `fingerprint` is already a node (rule 1),
    /// nor for a candidate whose root is already confirmed through another
    /// candidate, since it could not change the outcome.
    pub fn assign_confirmed(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
        confirm: impl FnMut(Fingerprint) -> bool,
    ) -> Assignment {
        self.assign_with_candidates(fingerprint, now, &[], Indexing::WithinK, confirm)
    }

    /// [`Forest::assign_confirmed`] with extra neighbours found by other means
    /// (for example shingle overlap of short texts, whose simhashes drift
    /// further than `k`). The caller has already confirmed them: `confirm` is
    /// not called for them, they count as neighbours whatever their distance,
    /// and those that are not (or no longer) nodes, or equal `fingerprint`, are
    /// ignored. Their roots compete with the roots of the confirmed nodes within
    /// `k` under rules 3 and 4.
    ///
    /// A leaf placed through an extra neighbour may be more than `k` away from
    /// every other member of its class. Extra neighbours never create roots, so
    /// roots stay more than `k` apart whenever `confirm` accepts every
    /// candidate (and every node is placed [`Indexing::WithinK`]). A new
    /// node is indexed as `indexing` says.
    pub fn assign_with_candidates(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
        extra_candidates: &[Fingerprint],
        indexing: Indexing,
        mut confirm: impl FnMut(Fingerprint) -> bool,
    ) -> Assignment {
        self.assign_with_numbered_candidates(
            fingerprint,
            now,
            extra_candidates,
            indexing,
            |candidate, _, _| confirm(candidate),
        )
    }

    /// [`Forest::assign_with_candidates`] whose `confirm` is also given the
    /// candidate's node number and read access to every node's number (the
    /// forest being borrowed for the assignment), for a caller that keeps
    /// data by node number.
    pub fn assign_with_numbered_candidates(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
        extra_candidates: &[Fingerprint],
        indexing: Indexing,
        confirm: impl FnMut(Fingerprint, NodeId, NodeNumbers<'_>) -> bool,
    ) -> Assignment {
        if let Some(assignment) = self.count_existing(fingerprint, now) {
            return assignment;
        }
        let roots = self.candidate_roots(fingerprint, extra_candidates, confirm);
        self.assign_to_roots(fingerprint, now, &roots, indexing)
    }

    /// The first half of [`Forest::assign_with_numbered_candidates`], which
    /// changes nothing: the roots a new node at `fingerprint` would choose
    /// among (the roots of `extra_candidates`, then those of the confirmed
    /// nodes within `k`, each once). Taking `&self`, it can run for many
    /// documents at once against one state; [`Forest::assign_to_roots`]
    /// then places each in turn. Which roots a set of nodes leads to does
    /// not depend on the order they are read in, and the choice among them
    /// (rule 4, by leaf count) is made when placing.
    pub fn candidate_roots(
        &self,
        fingerprint: Fingerprint,
        extra_candidates: &[Fingerprint],
        mut confirm: impl FnMut(Fingerprint, NodeId, NodeNumbers<'_>) -> bool,
    ) -> Vec<Fingerprint> {
        let mut roots: Vec<Fingerprint> = Vec::new();
        for &extra in extra_candidates {
            if let Some(extra_node) = self.nodes.get(extra)
                && extra != fingerprint
            {
                let root = self.root_fingerprint(extra, extra_node);
                if !roots.contains(&root) {
                    roots.push(root);
                }
            }
        }
        let nodes = &self.nodes;
        let numbers = NodeNumbers { nodes };
        self.index
            .for_each_within(fingerprint, |candidate, _distance| {
                let Some(id) = nodes.number(candidate) else {
                    return;
                };
                let Some((_, candidate_node)) = nodes.at(id) else {
                    return;
                };
                let root = self.root_fingerprint(candidate, candidate_node);
                if !roots.contains(&root) && confirm(candidate, id, numbers) {
                    roots.push(root);
                }
            });
        roots
    }

    /// The second half: places `fingerprint` (counted on its node if it is
    /// one; else a new root when `roots` is empty, a leaf of the one root,
    /// or of the one rule 4 prefers among several). `roots` are those
    /// [`Forest::candidate_roots`] found, on this state or on an earlier one
    /// that differs from it only in ways that cannot change them (the
    /// caller's to know; see `Engine::place_batch`). A new node is indexed
    /// as `indexing` says.
    pub fn assign_to_roots(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
        roots: &[Fingerprint],
        indexing: Indexing,
    ) -> Assignment {
        if let Some(assignment) = self.count_existing(fingerprint, now) {
            return assignment;
        }
        match roots {
            [] => self.add_root(fingerprint, now, indexing),
            [root] => self.add_leaf(fingerprint, *root, now, Placement::JoinedRoot, indexing),
            competing => {
                let root = self.preferred_root(competing);
                self.add_leaf(
                    fingerprint,
                    root,
                    now,
                    Placement::ResolvedConflict {
                        competing_roots: competing.len(),
                    },
                    indexing,
                )
            }
        }
    }

    /// Rule 1: counts one more document on an existing node; `None` if
    /// `fingerprint` is not a node.
    fn count_existing(&mut self, fingerprint: Fingerprint, now: Millis) -> Option<Assignment> {
        let node = self.nodes.get_mut(fingerprint)?;
        node.touch(now);
        let counted = node.documents < u32::MAX;
        if counted {
            node.documents += 1;
            self.document_count += 1;
        }
        let own_documents = u64::from(node.documents);
        let (parent, own_place) = (node.parent, node.place);
        let (root, tree_number) = if parent == NO_PARENT {
            (fingerprint, own_place)
        } else {
            self.nodes
                .at_mut(parent)
                .map_or((fingerprint, NO_TREE), |(root, root_node)| {
                    root_node.touch(now);
                    (root, root_node.place)
                })
        };
        let class_documents = self
            .trees
            .add_documents(tree_number, u64::from(counted))
            .unwrap_or(own_documents);
        Some(Assignment {
            root,
            placement: Placement::ExistingNode,
            class_documents,
        })
    }

    /// Rule 4: among `candidate_roots`, the root with most leaves, then the
    /// earliest born (by time, then by arrival order within one millisecond),
    /// then the smaller fingerprint.
    fn preferred_root(&self, candidate_roots: &[Fingerprint]) -> Fingerprint {
        let ranking = |&root: &Fingerprint| {
            let (leaf_count, born, arrival) =
                self.nodes
                    .get(root)
                    .map_or((0, Millis::MAX, u64::MAX), |node| {
                        let leaves = self.trees.leaf_count(node.place);
                        (leaves, node.born(), node.arrival())
                    });
            (Reverse(leaf_count), born, arrival, root)
        };
        candidate_roots
            .iter()
            .min_by_key(|root| ranking(root))
            .copied()
            .unwrap_or_default()
    }

    /// Stores a new node and gives its number. Numbers would run out only
    /// past 2^32 nodes, some 200 GB of forest: beyond any memory this runs
    /// in (`None` then, and the node is not stored).
    fn put_node(&mut self, fingerprint: Fingerprint, node: Node) -> Option<NodeId> {
        self.nodes.number_or_insert(fingerprint, || node).ok()
    }

    fn take_arrival(&mut self) -> u64 {
        self.next_arrival += 1;
        self.next_arrival
    }

    fn add_root(
        &mut self,
        fingerprint: Fingerprint,
        now: Millis,
        indexing: Indexing,
    ) -> Assignment {
        let arrival = self.take_arrival();
        let now = kept_time(now);
        self.put_node(
            fingerprint,
            Node {
                parent: NO_PARENT,
                born: Word48::time(now),
                arrival: Arrival::new(arrival, indexing),
                touched: Word48::time(now),
                documents: 1,
                place: NO_TREE,
            },
        );
        self.root_count += 1;
        self.after_node_added(fingerprint, now, indexing);
        Assignment {
            root: fingerprint,
            placement: Placement::NewRoot,
            class_documents: 1,
        }
    }

    fn add_leaf(
        &mut self,
        fingerprint: Fingerprint,
        root: Fingerprint,
        now: Millis,
        placement: Placement,
        indexing: Indexing,
    ) -> Assignment {
        let now = kept_time(now);
        let root_node = self
            .nodes
            .number(root)
            .and_then(|number| Some((number, self.nodes.at_mut(number)?.1)))
            .filter(|(_, root_node)| root_node.is_root());
        let Some((parent, root_node)) = root_node else {
            // Callers name a live root; a leaf must not hang under anything else.
            return self.add_root(fingerprint, now, indexing);
        };
        root_node.touch(now);
        let (root_documents, tree_number) = (u64::from(root_node.documents), root_node.place);
        let leaf_slot =
            u32::try_from(self.trees.leaf_count(tree_number)).unwrap_or(UNKNOWN_LEAF_SLOT);
        let arrival = self.take_arrival();
        let node = Node {
            parent,
            born: Word48::time(now),
            arrival: Arrival::new(arrival, indexing),
            touched: Word48::time(now),
            documents: 1,
            place: leaf_slot,
        };
        let Some(number) = self.put_node(fingerprint, node) else {
            return Assignment {
                root,
                placement,
                class_documents: root_documents,
            };
        };
        let class_documents = match self.trees.push_leaf(tree_number, number, 1) {
            Some((_, class_documents)) => class_documents,
            None => {
                let class_documents = root_documents + 1;
                let tree_number = self.trees.add(number, class_documents);
                if let Some((_, root_node)) = self.nodes.at_mut(parent) {
                    root_node.place = tree_number;
                }
                class_documents
            }
        };
        self.after_node_added(fingerprint, now, indexing);
        Assignment {
            root,
            placement,
            class_documents,
        }
    }

    fn after_node_added(&mut self, fingerprint: Fingerprint, now: Millis, indexing: Indexing) {
        if indexing == Indexing::WithinK {
            self.index.insert_absent(fingerprint);
        }
        self.document_count += 1;
        if self.config.retention.is_some() {
            self.queue_expiry(now, fingerprint);
        }
    }
}

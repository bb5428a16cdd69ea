//! The parent forest (双亲森林) of seed 002: near-duplicate equivalence classes.
//!
//! # Motivation
//!
//! Simhash gives near-duplicates *close* fingerprints, not *equal* ones, and a
//! search engine can only group by equal values. The forest turns "within `k`
//! bits" into a class id: every distinct fingerprint is one node of a tree of
//! height ≤ 2 and the root's fingerprint names the class (`cluster_root`).
//! Because trees never merge, a document's class id never changes after it has
//! been stamped into the search index.
//!
//! # Design
//!
//! - Nodes live in one table `fingerprint → Node` (32 bytes: the root's node
//!   number, born, touched and arrival in 48 bits each, document count, and
//!   a place: a leaf's position in its root's leaf list, a root's tree
//!   number; 40 with the fingerprint), slots in a vector found through
//!   4-byte numbers ([`crate::slots`]). Only roots that have leaves get a
//!   tree (leaf numbers and class document total, [`trees`]), so the many
//!   singleton classes cost nothing extra. The position makes removing a
//!   single expired leaf O(1) even in a class of 100 000 leaves.
//! - "Within `k`" queries go to a [`MultiIndex`] that the forest owns and keeps
//!   in step with the node set, but for nodes placed [`Indexing::TextOnly`]:
//!   a caller that finds such nodes by their text alone (short texts, by
//!   shingle overlap) leaves them out and saves their k + 1 block entries.
//! - Assignment follows SPEC §3 in order: existing node → its root; no
//!   (confirmed) neighbour → new root; neighbours under one root → leaf of it;
//!   several roots → the one with most leaves, then earliest `born` (time, then
//!   arrival order), then the
//!   smaller fingerprint. The caller can veto candidates (short-text Jaccard
//!   confirmation) through [`Forest::assign_confirmed`], and add neighbours
//!   found by other means through [`Forest::assign_with_candidates`].
//! - Touching a node also touches its root with `max(touched, now)`, so touched
//!   times never decrease, even when a replay delivers times out of order, and a
//!   root is never older than its leaves. Expiring a root therefore removes a
//!   tree whose leaves were all expired anyway.
//! - Expiry uses a min-heap of `(touched, fingerprint)` with lazy updates:
//!   touching a node does not push; when an entry pops whose node has since been
//!   touched, it is pushed again with its current time, and entries of removed
//!   nodes are dropped. Every live node has an entry whose time is ≤ its
//!   touched time, so the heap minimum bounds every node's touched time: expiry
//!   is exact and never scans the node map. Each call does a bounded amount of
//!   work. (Arrival times are mostly increasing, so a push rarely sifts.)
//!
//! # Consequences
//!
//! - All methods take `&mut self` or `&self` and never block: the caller holds
//!   one lock around the forest, in arrival order (SPEC §3).
//! - A class never splits or merges while it lives; it only gains leaves and
//!   loses expired ones.
//! - Per-node document counts saturate at `u32::MAX` (a count stops rising
//!   rather than wrapping); class and total counts stay equal to their sums.
//! - The expiry budget may be exceeded by the size of one tree, since a root
//!   leaves together with all of its leaves.
//! - Memory is about 95 bytes per node at 10 M nodes with the expiry queue
//!   (`benches/forest_scale.rs`; 117 with 48-byte slots, 159 with a std map
//!   of nodes), a quarter of it the index. A lookup reads the node table,
//!   then the slot, and for a leaf its root's slot: `root_of` p50 671 ns
//!   (721 with the root's fingerprint in the slot, 591 with the std map). The tables grow by rehashing at once,
//!   and the node table's rehash reads every slot (a pause of about 0.3 s at
//!   10 M nodes); [`Forest::reserve`] avoids it when the size is known.
//!
//! ```
//! use neardup::forest::{Forest, ForestConfig, Placement};
//!
//! let mut forest = Forest::new(ForestConfig::default()).expect("default config is valid");
//! let first = forest.assign(0xf0f0_0000_0000_0000, 1_000);
//! assert_eq!(first.placement, Placement::NewRoot);
//! let near = forest.assign(0xf0f0_0000_0000_0003, 2_000); // two bits away
//! assert_eq!(near.root, first.root);
//! assert_eq!(near.placement, Placement::JoinedRoot);
//! assert_eq!(near.class_documents, 2);
//! ```

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use thiserror::Error;

use crate::candidates::multi_index::{DEFAULT_MAX_DISTANCE, IndexError, MultiIndex};
use crate::slots::FingerprintSlots;
use crate::units::{Fingerprint, FingerprintWords, Millis, NodeId};
use trees::{NO_TREE, Trees};

/// Default retention: 48 hours.
pub const DEFAULT_RETENTION: Millis = 48 * 60 * 60 * 1000;

/// Extra stale expiry-queue entries tolerated before the queue is rebuilt.
const EXPIRY_QUEUE_SLACK: usize = 1024;

/// `place` of a leaf whose position in its root's list is past `u32`.
const UNKNOWN_LEAF_SLOT: u32 = u32::MAX;

/// How a [`Forest`] groups fingerprints and when it forgets them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ForestConfig {
    /// Largest Hamming distance at which two fingerprints are near-duplicates
    /// (`k`, default 3, at most 16).
    pub max_distance: u32,
    /// Nodes not touched for this long are removed by [`Forest::expire`];
    /// `None` keeps everything (default 48 hours).
    pub retention: Option<Millis>,
}

impl Default for ForestConfig {
    fn default() -> Self {
        Self {
            max_distance: DEFAULT_MAX_DISTANCE,
            retention: Some(DEFAULT_RETENTION),
        }
    }
}

/// Errors when building a [`Forest`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ForestError {
    /// The distance is not supported by the index.
    #[error(transparent)]
    Index(#[from] IndexError),
    /// A negative retention makes no sense.
    #[error("retention must not be negative, got {0} ms")]
    NegativeRetention(Millis),
    /// Stored nodes that cannot form a forest.
    #[error("damaged forest state: {0}")]
    Damaged(String),
}

/// Which rule of SPEC §3 placed a fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Placement {
    /// Rule 1: the fingerprint was already a node.
    ExistingNode,
    /// Rule 2: no (confirmed) node within `k`; the fingerprint is a new root.
    NewRoot,
    /// Rule 3: all confirmed neighbours were under one root; joined it as a leaf.
    JoinedRoot,
    /// Rule 4: confirmed neighbours were under several roots; joined the one
    /// with most leaves (then earliest born, then smaller fingerprint).
    ResolvedConflict {
        /// How many distinct roots were in the running (≥ 2).
        competing_roots: usize,
    },
}

/// The result of [`Forest::assign`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Assignment {
    /// The class id: the root's fingerprint.
    pub root: Fingerprint,
    /// Which rule decided.
    pub placement: Placement,
    /// Documents in the class after this one was counted.
    pub class_documents: u64,
}

/// A read-only copy of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeView {
    /// The node's own fingerprint.
    pub fingerprint: Fingerprint,
    /// Its root (itself for a root).
    pub root: Fingerprint,
    /// When the node was added.
    pub born: Millis,
    /// Latest time the node (or, for a root, any node of its tree) was added or
    /// reached.
    pub touched: Millis,
    /// Documents this node stands for.
    pub documents: u64,
    /// Whether the node is a root.
    pub is_root: bool,
}

/// One equivalence class.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClassView {
    /// The class id.
    pub root: Fingerprint,
    /// Every node of the class, the root first, then its leaves in no
    /// particular order.
    pub members: Vec<Fingerprint>,
    /// Number of nodes (`members.len()`).
    pub nodes: usize,
    /// Documents in the class.
    pub documents: u64,
}

/// Counters for monitoring.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ForestStats {
    /// Live nodes (distinct fingerprints).
    pub nodes: usize,
    /// Live roots (classes).
    pub roots: usize,
    /// Documents counted in live nodes.
    pub documents: u64,
    /// Nodes removed by expiry since the forest was created.
    pub expired_nodes: u64,
    /// Approximate heap memory, in bytes.
    pub approx_heap_bytes: usize,
}

/// One node as a snapshot stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct NodeRecord {
    pub fingerprint: Fingerprint,
    pub root: Fingerprint,
    pub born: Millis,
    pub arrival: u64,
    pub touched: Millis,
    pub documents: u32,
    pub indexing: Indexing,
}

/// Whether "within `k`" queries find a node.
///
/// Motivation: a short text's simhash moves more than `k` bits with one
/// word, and two short texts within `k` that a caller confirms share most
/// of their shingles, so a caller that finds short texts by shingle overlap
/// never needs them found by distance (on DEV, `natural.jsonl`, every
/// negative and swap set and 200 000 overlap documents, leaving them out
/// changed no stamp). Their k + 1 block entries are a sixth of a node's heap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Indexing {
    /// In the index: found within `k` (SPEC §3).
    #[default]
    WithinK,
    /// Left out of the index: found only by its own fingerprint and by
    /// candidates its caller finds by other means.
    TextOnly,
}

/// Counters a snapshot stores besides the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ForestCounters {
    /// Arrival number of the last node ever added.
    pub next_arrival: u64,
    /// Nodes removed by expiry so far.
    pub expired_nodes: u64,
}

/// A node's slot value: 30 bytes of alignment 2, so that a slot with its
/// fingerprint is 38 (it was 48 with the root's fingerprint and three
/// 64-bit fields, 40 with `u32` alignment and the indexing in a byte of
/// its own until issue 49's nineteenth part; the node table is the
/// forest's largest structure, and 2 bytes a node is 200 MB at 100 M
/// nodes). The `u32` fields are read and written by value (a packed
/// field lends no reference).
#[derive(Debug, Clone, Copy)]
#[repr(C, packed(2))]
struct Node {
    /// The number of the root's node; [`NO_PARENT`] for a root. A root
    /// leaves only with its whole tree, so a leaf's number never dangles.
    parent: NodeId,
    documents: u32,
    /// A leaf's position in its root's leaf list; a root's tree number
    /// ([`NO_TREE`] while it has no leaves).
    place: u32,
    born: Word48,
    touched: Word48,
    arrival: Arrival,
}

/// A node's arrival order among all nodes ever added ("added earliest"
/// when two roots were born in the same millisecond) in the low 47 bits
/// of a [`Word48`], and its [`Indexing`] in the top bit: both are set
/// when the node is made. Past 2^47 − 1 arrivals (4.4 years at a million
/// nodes a second) the count stays there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Arrival(Word48);

impl Arrival {
    const TEXT_ONLY_BIT: u64 = 1 << 47;

    fn new(arrival: u64, indexing: Indexing) -> Self {
        let flag = match indexing {
            Indexing::WithinK => 0,
            Indexing::TextOnly => Self::TEXT_ONLY_BIT,
        };
        Arrival(Word48::bits(arrival.min(Self::TEXT_ONLY_BIT - 1) | flag))
    }

    fn count(self) -> u64 {
        self.0.raw() & (Self::TEXT_ONLY_BIT - 1)
    }

    fn indexing(self) -> Indexing {
        if self.0.raw() & Self::TEXT_ONLY_BIT == 0 {
            Indexing::WithinK
        } else {
            Indexing::TextOnly
        }
    }
}

/// `parent` of a root (no node has the last number: see [`crate::slots`]).
const NO_PARENT: NodeId = NodeId::MAX;

/// Times the forest keeps: within 2^47 ms (4 462 years) of 1970, in
/// 48 bits. Times outside are taken as the nearest end of this range.
pub const EARLIEST_TIME: Millis = -(1 << 47);
/// See [`EARLIEST_TIME`].
pub const LATEST_TIME: Millis = (1 << 47) - 1;

/// `time` within [`EARLIEST_TIME`]..=[`LATEST_TIME`].
pub fn kept_time(time: Millis) -> Millis {
    time.clamp(EARLIEST_TIME, LATEST_TIME)
}

/// A 48-bit value in three 16-bit words (alignment 2, so three of them and
/// three `u32`s make 32 bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Word48([u16; 3]);

impl Word48 {
    /// A time, taken into the kept range first.
    fn time(time: Millis) -> Self {
        Self::bits(kept_time(time) as u64)
    }

    fn bits(bits: u64) -> Self {
        Word48([bits as u16, (bits >> 16) as u16, (bits >> 32) as u16])
    }

    fn raw(self) -> u64 {
        u64::from(self.0[0]) | (u64::from(self.0[1]) << 16) | (u64::from(self.0[2]) << 32)
    }

    /// The time it holds (sign-extended from 48 bits).
    fn as_time(self) -> Millis {
        ((self.raw() << 16) as i64) >> 16
    }
}

/// An entry of the expiry queue: a time no later than the node's touched
/// time, and the node's fingerprint, in 14 bytes (16 with a 64-bit time;
/// the queue holds an entry per node whenever nodes expire). Ordered by
/// time, then fingerprint, as `(Millis, Fingerprint)` is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Due {
    time: Word48,
    fingerprint: FingerprintWords,
}

impl Due {
    fn new(time: Millis, fingerprint: Fingerprint) -> Self {
        Due {
            time: Word48::time(time),
            fingerprint: FingerprintWords::new(fingerprint),
        }
    }

    fn time(&self) -> Millis {
        self.time.as_time()
    }

    fn fingerprint(&self) -> Fingerprint {
        self.fingerprint.get()
    }
}

impl Ord for Due {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.time(), self.fingerprint()).cmp(&(other.time(), other.fingerprint()))
    }
}

impl PartialOrd for Due {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Forest {
    /// Queues `fingerprint` to be looked at once `time` is past retention.
    /// The queue grows by a quarter (a heap of millions of entries is a
    /// mapping of its own, which grows without a copy), where a vector
    /// doubles.
    fn queue_expiry(&mut self, time: Millis, fingerprint: Fingerprint) {
        let queue = &mut self.expiry_queue;
        if queue.len() == queue.capacity() {
            queue.reserve_exact((queue.len() / 4).max(64));
        }
        queue.push(Reverse(Due::new(time, fingerprint)));
    }
}

impl Node {
    fn is_root(&self) -> bool {
        self.parent == NO_PARENT
    }

    fn born(&self) -> Millis {
        self.born.as_time()
    }

    fn touched(&self) -> Millis {
        self.touched.as_time()
    }

    fn arrival(&self) -> u64 {
        self.arrival.count()
    }

    fn indexing(&self) -> Indexing {
        self.arrival.indexing()
    }

    /// The node as a snapshot stores it, `root` being its root's
    /// fingerprint.
    fn record(&self, fingerprint: Fingerprint, root: Fingerprint) -> NodeRecord {
        NodeRecord {
            fingerprint,
            root,
            born: self.born(),
            arrival: self.arrival(),
            touched: self.touched(),
            documents: self.documents,
            indexing: self.indexing(),
        }
    }

    fn view(&self, fingerprint: Fingerprint, root: Fingerprint) -> NodeView {
        NodeView {
            fingerprint,
            root,
            born: self.born(),
            touched: self.touched(),
            documents: u64::from(self.documents),
            is_root: self.is_root(),
        }
    }

    fn touch(&mut self, now: Millis) {
        if now > self.touched() {
            self.touched = Word48::time(now);
        }
    }
}

/// The parent forest: see the module documentation.
#[derive(Debug, Clone)]
pub struct Forest {
    config: ForestConfig,
    nodes: FingerprintSlots<Node>,
    trees: Trees,
    index: MultiIndex,
    /// Min-heap of `(time ≤ touched, fingerprint)`, lazily updated; empty when
    /// retention is `None`.
    expiry_queue: BinaryHeap<Reverse<Due>>,
    root_count: usize,
    document_count: u64,
    expired_node_count: u64,
    /// Arrival number of the last node added.
    next_arrival: u64,
}

impl Forest {
    /// An empty forest.
    ///
    /// # Errors
    ///
    /// [`ForestError::Index`] for an unsupported distance,
    /// [`ForestError::NegativeRetention`] for a negative retention.
    pub fn new(config: ForestConfig) -> Result<Self, ForestError> {
        if let Some(retention) = config.retention.filter(|retention| *retention < 0) {
            return Err(ForestError::NegativeRetention(retention));
        }
        Ok(Self {
            config,
            nodes: FingerprintSlots::default(),
            trees: Trees::default(),
            index: MultiIndex::new(config.max_distance)?,
            expiry_queue: BinaryHeap::new(),
            root_count: 0,
            document_count: 0,
            expired_node_count: 0,
            next_arrival: 0,
        })
    }

    /// The configuration the forest was built with.
    pub fn config(&self) -> ForestConfig {
        self.config
    }

    /// `k`: the largest distance of near-duplicates.
    pub fn max_distance(&self) -> u32 {
        self.config.max_distance
    }

    /// Number of nodes (distinct live fingerprints).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the forest has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Whether `fingerprint` is a node.
    pub fn contains(&self, fingerprint: Fingerprint) -> bool {
        self.nodes.contains(fingerprint)
    }

    /// The number of `fingerprint`'s node: dense, from 0, kept from the
    /// node's insertion to its removal (never renumbered) and then free for
    /// another node. Other structures key what they keep per node by it.
    pub fn number(&self, fingerprint: Fingerprint) -> Option<NodeId> {
        self.nodes.number(fingerprint)
    }

    /// The fingerprint of node number `id`, if a node has it.
    pub fn fingerprint_at(&self, id: NodeId) -> Option<Fingerprint> {
        self.nodes.at(id).map(|(fingerprint, _)| fingerprint)
    }

    /// Whether node number `id` is in use (a bit test: no slot read).
    pub fn holds_number(&self, id: NodeId) -> bool {
        self.nodes.is_used(id)
    }

    /// The fingerprint of node number `id` and the root of its class, read
    /// from its slot (no lookup by fingerprint).
    pub fn fingerprint_and_root_at(&self, id: NodeId) -> Option<(Fingerprint, Fingerprint)> {
        self.nodes
            .at(id)
            .map(|(fingerprint, node)| (fingerprint, self.root_fingerprint(fingerprint, node)))
    }

    /// The fingerprint of the root of `node`, whose own is `fingerprint`.
    fn root_fingerprint(&self, fingerprint: Fingerprint, node: &Node) -> Fingerprint {
        if node.is_root() {
            return fingerprint;
        }
        // A root leaves only with its tree: its number is in use.
        self.nodes
            .at(node.parent)
            .map_or(fingerprint, |(root, _)| root)
    }

    /// One more than the largest node number in use (or waiting for
    /// reuse): a table by node number needs this many places.
    pub fn number_bound(&self) -> usize {
        self.nodes.number_bound()
    }

    /// The index of all node fingerprints (for "within `k`" queries).
    pub fn index(&self) -> &MultiIndex {
        &self.index
    }

    /// Every node within `k` of `fingerprint`, with its distance.
    pub fn within(&self, fingerprint: Fingerprint) -> Vec<(Fingerprint, u32)> {
        self.index.within(fingerprint)
    }

    /// The root of `fingerprint`'s class, if it is a node.
    pub fn root_of(&self, fingerprint: Fingerprint) -> Option<Fingerprint> {
        self.nodes
            .get(fingerprint)
            .map(|node| self.root_fingerprint(fingerprint, node))
    }

    /// The root of `fingerprint`'s class, touching the node and its root (a
    /// lookup through a node keeps its class alive).
    pub fn reach_root(&mut self, fingerprint: Fingerprint, now: Millis) -> Option<Fingerprint> {
        let node = self.nodes.get_mut(fingerprint)?;
        node.touch(now);
        let parent = node.parent;
        if parent == NO_PARENT {
            return Some(fingerprint);
        }
        Some(
            self.nodes
                .at_mut(parent)
                .map_or(fingerprint, |(root, root_node)| {
                    root_node.touch(now);
                    root
                }),
        )
    }

    /// A copy of one node.
    pub fn node(&self, fingerprint: Fingerprint) -> Option<NodeView> {
        self.nodes
            .get(fingerprint)
            .map(|node| node.view(fingerprint, self.root_fingerprint(fingerprint, node)))
    }

    /// The class named by `root`; `None` if `root` is not a root (use
    /// [`Forest::root_of`] first to go from any member to its class).
    pub fn class(&self, root: Fingerprint) -> Option<ClassView> {
        let documents = self.class_documents(root)?;
        let leaves = self
            .tree_of(root)
            .map_or(&[][..], |tree| self.trees.leaves(tree));
        let mut members = Vec::with_capacity(1 + leaves.len());
        members.push(root);
        members.extend(
            leaves
                .iter()
                .filter_map(|&leaf| self.nodes.at(leaf).map(|(fingerprint, _)| fingerprint)),
        );
        Some(ClassView {
            root,
            nodes: members.len(),
            members,
            documents,
        })
    }

    /// Documents in the class named by `root`; `None` if `root` is not a root.
    pub fn class_documents(&self, root: Fingerprint) -> Option<u64> {
        let root_node = self.nodes.get(root).filter(|node| node.is_root())?;
        Some(
            self.trees
                .class_documents(root_node.place)
                .unwrap_or(u64::from(root_node.documents)),
        )
    }

    /// The tree of the class named by `root`: `None` if `root` is not a
    /// root or has no leaves.
    fn tree_of(&self, root: Fingerprint) -> Option<u32> {
        let root_node = self.nodes.get(root).filter(|node| node.is_root())?;
        Some(root_node.place).filter(|&tree| self.trees.contains(tree))
    }

    /// The tree of the class `node` belongs to (its own if a root).
    fn tree_number(&self, node: &Node) -> u32 {
        if node.is_root() {
            return node.place;
        }
        self.nodes
            .at(node.parent)
            .map_or(NO_TREE, |(_, root)| root.place)
    }

    /// Number of leaves under `root`; `None` if `root` is not a root.
    pub fn leaf_count(&self, root: Fingerprint) -> Option<usize> {
        self.nodes.get(root).filter(|node| node.is_root())?;
        Some(
            self.tree_of(root)
                .map_or(0, |tree| self.trees.leaf_count(tree)),
        )
    }

    /// Every node, in no particular order (for snapshots).
    pub fn iter_nodes(&self) -> impl Iterator<Item = NodeView> + '_ {
        self.nodes.iter().map(|(_, fingerprint, node)| {
            node.view(fingerprint, self.root_fingerprint(fingerprint, node))
        })
    }

    /// The nodes whose numbers are in `numbers` (up to
    /// [`Forest::number_bound`]): a walk of every node taken in parts, a
    /// lock released between them (numbers stay with their
    /// nodes, so each node is seen once if it stays).
    pub fn iter_nodes_numbered(
        &self,
        numbers: std::ops::Range<u32>,
    ) -> impl Iterator<Item = NodeView> + '_ {
        self.nodes
            .iter_numbers(numbers)
            .map(|(_, fingerprint, node)| {
                node.view(fingerprint, self.root_fingerprint(fingerprint, node))
            })
    }

    /// Counters for monitoring.
    pub fn stats(&self) -> ForestStats {
        ForestStats {
            nodes: self.nodes.len(),
            roots: self.root_count,
            documents: self.document_count,
            expired_nodes: self.expired_node_count,
            approx_heap_bytes: self.approx_heap_bytes(),
        }
    }

    /// Approximate heap memory held by the forest and its index, in bytes
    /// (constant time: capacities are tracked as they change).
    pub fn approx_heap_bytes(&self) -> usize {
        let nodes = self.nodes.heap_bytes();
        let trees = self.trees.heap_bytes();
        let leaves = self.trees.list_heap_bytes();
        let queue = self.expiry_queue.capacity() * size_of::<Reverse<Due>>();
        nodes + trees + leaves + queue + self.index.approx_heap_bytes()
    }

    /// [`Forest::approx_heap_bytes`] by structure (capacity bench).
    pub fn heap_by_structure(&self) -> Vec<(&'static str, usize)> {
        vec![
            ("forest: node table", self.nodes.heap_bytes()),
            ("forest: trees (root → class)", self.trees.heap_bytes()),
            ("forest: leaves", self.trees.list_heap_bytes()),
            (
                "forest: expiry queue",
                self.expiry_queue.capacity() * size_of::<Reverse<Due>>(),
            ),
            (
                "forest: block tables (k+1 multi-index)",
                self.index.approx_heap_bytes(),
            ),
        ]
    }

    /// Makes room for `additional` more nodes, so the maps do not rehash while
    /// they fill. A std hash map grows by rehashing everything at once, a pause
    /// of about a second at 50 M nodes; a caller that knows its size (from a
    /// snapshot, or the expected volume over the retention) reserves it up
    /// front.
    pub fn reserve(&mut self, additional: usize) {
        self.nodes.reserve(additional);
        self.index.reserve(additional);
        if self.config.retention.is_some() {
            self.expiry_queue.reserve_exact(additional);
        }
    }

    /// Takes back one document of `fingerprint` (a deleted document): the node's
    /// and its class's counts drop by one. The node itself stays until it
    /// expires. `false` if there is no such node or its count is already zero.
    pub fn forget_document(&mut self, fingerprint: Fingerprint) -> bool {
        let Some(node) = self.nodes.get_mut(fingerprint) else {
            return false;
        };
        if node.documents == 0 {
            return false;
        }
        node.documents -= 1;
        let node = *node;
        let tree_number = self.tree_number(&node);
        self.trees.take_documents(tree_number, 1);
        self.document_count -= 1;
        true
    }
}

mod assign;
pub mod expiry;
pub mod numbers;
pub mod records;
#[cfg(test)]
mod tests;
mod trees;
